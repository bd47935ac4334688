// The OpenAPI 3.1 document of the enrichRecord contract, generated from the zod schemas so the
// description and the validation can never disagree. Served at GET /openapi.json.
import { z } from 'zod';
import { createDocument, type ZodOpenApiResponseObject, type ZodOpenApiResponsesObject } from 'zod-openapi';
import { SANDBOX_ERROR_HEADERS } from '../enrich/sandbox-errors.ts';
import { EnrichmentRequestSchema, ProductionErrorSchema, ProductionResponseSchema, SandboxErrorSchema, SandboxResponseSchema } from './schemas.ts';

const rateLimitHeaders = {
  'RateLimit-Limit': { description: 'Requests per second allowed for this token.', schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Requests that could be made at once right now.', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the full allowance is available again.', schema: { type: 'integer' } },
} as const;

const quotaHeaders = {
  'X-Quota-Limit': { description: 'Usage tokens per quota period for this token.', schema: { type: 'integer' } },
  'X-Quota-Remaining': { description: 'Usage tokens left in the current period.', schema: { type: 'integer' } },
  'X-Quota-Reset': {
    description: 'ISO 8601 time of the next refresh; absent when the quota never refreshes.',
    schema: { type: 'string', format: 'date-time' },
  },
} as const;

const retryAfter = {
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } },
} as const;

type Environment = 'production' | 'sandbox';

function errorResponse(environment: Environment, description: string, headers: ZodOpenApiResponseObject['headers'] = {}): ZodOpenApiResponseObject {
  return {
    description,
    headers,
    content: { 'application/json': { schema: environment === 'production' ? ProductionErrorSchema : SandboxErrorSchema } },
  };
}

function responses(environment: Environment): ZodOpenApiResponsesObject {
  const limits = environment === 'production' ? { ...rateLimitHeaders, ...quotaHeaders } : rateLimitHeaders;
  const billed = environment === 'production' ? ' Consumes one usage token, match or not.' : ' Not billed.';
  return {
    '200': {
      description: `Enrichment response. Check household_matched and career_matched before reading the objects.${billed}`,
      headers: limits,
      content: { 'application/json': { schema: environment === 'production' ? ProductionResponseSchema : SandboxResponseSchema } },
    },
    '400': errorResponse(
      environment,
      'Malformed request: invalid JSON, a non-JSON Content-Type, a body over 64 KiB, a field of the wrong type, or more than 10 emails, phones or addresses.',
      limits,
    ),
    '401': errorResponse(environment, 'Missing, invalid or revoked X-WF-Auth-Token.'),
    ...(environment === 'production'
      ? { '402': errorResponse(environment, "The token's usage quota is exhausted until the next refresh (error quota_exhausted).", limits) }
      : {}),
    '403': errorResponse(
      environment,
      `A ${environment === 'production' ? 'sandbox' : 'production'} token on the ${environment} endpoint (forbidden_environment), or plain HTTP where HTTPS is required (https_required, which carries no limit headers).`,
      rateLimitHeaders,
    ),
    '429': errorResponse(environment, "More requests per second than the token's rate limit (5 by default); error rate_limit.", { ...limits, ...retryAfter }),
    '500': errorResponse(environment, 'Unhandled server error. Limit headers are present when the token was read before the fault.', limits),
    '503': errorResponse(
      environment,
      environment === 'production' ? 'Downstream service unavailable, or no data snapshot loaded.' : 'Downstream service unavailable (simulated only).',
      limits,
    ),
  };
}

function operation(environment: Environment) {
  const sandbox = environment === 'sandbox';
  return {
    operationId: sandbox ? 'enrichRecordSandbox' : 'enrichRecord',
    summary: sandbox ? 'Enrich a person record against the 15 sandbox personas' : 'Enrich a person record',
    description: sandbox
      ? 'Same contract as production, answered deterministically from 15 fictitious personas; unmatched objects are omitted, nothing is billed.'
      : 'Matches one person record against the weekly household and career data snapshot; unmatched objects are null.',
    tags: [sandbox ? 'sandbox' : 'production'],
    ...(sandbox
      ? {
          requestParams: {
            header: z.object(
              Object.fromEntries(
                SANDBOX_ERROR_HEADERS.map((name) => [
                  name,
                  z
                    .enum(['400', '429', '500', '503'])
                    .optional()
                    .meta({ description: 'Error simulation: the sandbox answers with this status instead of enriching.' }),
                ]),
              ),
            ),
          },
        }
      : {}),
    requestBody: { required: true, content: { 'application/json': { schema: EnrichmentRequestSchema } } },
    responses: responses(environment),
  };
}

export function buildOpenApiDocument() {
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'enrichbridge enrichRecord API',
      version: '1.0.0',
      description: 'One person record in, household wealth data and career data out, in real time.',
      // The service is hosted by an operator for its customers: terms and support come from them.
      license: { name: 'Proprietary: use under your agreement with the operator of this service' },
      contact: { name: 'API support of the operator of this service (see your account agreement)' },
    },
    tags: [
      {
        name: 'production',
        description: 'Matching against the weekly household and career data snapshot; billed against the account quota.',
      },
      {
        name: 'sandbox',
        description: "Deterministic answers from 15 fictitious personas (and the maker's own sandbox example); never billed.",
      },
    ],
    servers: [{ url: '/' }],
    security: [{ apiToken: [] }],
    components: {
      securitySchemes: { apiToken: { type: 'apiKey', in: 'header', name: 'X-WF-Auth-Token' } },
    },
    paths: {
      '/v1/': { post: operation('production') },
      '/sandbox/v1': { post: operation('sandbox') },
    },
  });
}
