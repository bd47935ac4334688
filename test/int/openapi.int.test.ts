// The generated OpenAPI document against the running service: it is valid OpenAPI 3.1, documents every
// status of both endpoints, and real responses of every status, produced over HTTP, validate against it.
import { Validator } from '@seriousme/openapi-schema-validator';
// The named export: under NodeNext the default import of this CommonJS module types as its namespace.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { EnrichmentRequest } from '../../core/contract/schemas.ts';
import type { ProductionMatch, ProductionMatcher } from '../../core/enrich/production-matcher.ts';
import { PERSONAS } from '../../core/sandbox/personas.ts';
import { type Reply, type TestServer, post, startTestServer } from '../support/harness.ts';

const SANDBOX = '/sandbox/v1';
const PRODUCTION = '/v1/';
type DocumentedPath = typeof SANDBOX | typeof PRODUCTION;

const DOCUMENTED_STATUSES: Record<DocumentedPath, readonly string[]> = {
  [PRODUCTION]: ['200', '400', '401', '402', '403', '429', '500', '503'],
  [SANDBOX]: ['200', '400', '401', '403', '429', '500', '503'],
};

const AMANDA_EMAIL = 'amanda.taylor@sandbox.windfall.com';
const RATE_HEADERS = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'] as const;
const QUOTA_HEADERS = ['X-Quota-Limit', 'X-Quota-Remaining', 'X-Quota-Reset'] as const;

// Only the parts of the document these tests navigate; the validators get the document as served.
const JsonObject = z.record(z.string(), z.unknown());
const ResponseDoc = z.object({
  headers: z.record(z.string(), z.object({ schema: JsonObject })).optional(),
  content: z.object({ 'application/json': z.object({ schema: JsonObject }) }),
});
const OpenApiDoc = z.object({
  openapi: z.string(),
  info: z.object({
    version: z.string(),
    license: z.object({ name: z.string() }).optional(),
    contact: z.object({ name: z.string() }).optional(),
  }),
  tags: z.array(z.object({ name: z.string(), description: z.string().optional() })).optional(),
  paths: z.record(z.string(), z.object({ post: z.object({ tags: z.array(z.string()).optional(), responses: z.record(z.string(), ResponseDoc) }) })),
  components: z.object({ schemas: z.record(z.string(), JsonObject) }),
});
type OpenApiDoc = z.infer<typeof OpenApiDoc>;

/** Picks the one persona whose household and career stand in for production data below. */
function amanda(): ProductionMatch & { household: NonNullable<ProductionMatch['household']> } {
  const persona = PERSONAS.find((p) => p.email === AMANDA_EMAIL);
  if (persona?.household === undefined || persona.career === undefined) {
    throw new Error('sandbox persona Amanda Taylor must have household and career data');
  }
  return { household: persona.household, career: persona.career };
}

/**
 * Stands in for the data-snapshot matcher of the next issue. It exists only to get real production
 * 200 (and 500) bodies through the real pipeline (token, rate, quota, entitlements, HTTP): Amanda
 * Taylor's e-mail gets her sandbox persona's household and career, `id: "explode"` fails the way an
 * unexpected fault would, anything else matches nothing.
 */
class PersonaStandInMatcher implements ProductionMatcher {
  readonly dataVersion = 'stand-in';
  private readonly amandaMatch = amanda();

  match(request: EnrichmentRequest, options: { readonly career: boolean }): Promise<ProductionMatch> {
    if (request.id === 'explode') return Promise.reject(new Error('stand-in matcher: simulated unexpected fault'));
    if (!(request.emails ?? []).includes(AMANDA_EMAIL)) return Promise.resolve({ household: null, career: null });
    return Promise.resolve({ household: this.amandaMatch.household, career: options.career ? this.amandaMatch.career : null });
  }
}

let noSnapshot: TestServer;
let withData: TestServer;
let rawDocument: string;
let doc: OpenApiDoc;
let ajv: Ajv2020;

/**
 * The document as an Ajv 2020-12 schema (OpenAPI 3.1's default dialect), so `#/components/schemas/X`
 * references inside it resolve. `strict: false` lets OpenAPI-only keywords (`example`) through.
 * ajv-formats is not a dependency: the two formats the document uses are checked here directly (its
 * dates also carry zod's exact calendar `pattern`, so a shape check suffices for `date`).
 */
function documentValidator(raw: string): Ajv2020 {
  const validator = new Ajv2020({ strict: false, allErrors: true });
  validator.addFormat('date', /^\d{4}-\d{2}-\d{2}$/);
  validator.addFormat(
    'date-time',
    (value: string) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/i.test(value) && !Number.isNaN(Date.parse(value)),
  );
  validator.addSchema(JsonObject.parse(JSON.parse(raw)), 'openapi.json');
  return validator;
}

/** JSON Pointer escaping (RFC 6901) of one path segment, then URI-fragment encoding. */
function pointer(...segments: string[]): string {
  return segments.map((s) => encodeURIComponent(s.replaceAll('~', '~0').replaceAll('/', '~1'))).join('/');
}

function responseSchemaRef(path: DocumentedPath, status: number): string {
  return `openapi.json#/${pointer('paths', path, 'post', 'responses', String(status), 'content', 'application/json', 'schema')}`;
}

function validateBody(path: DocumentedPath, status: number, body: unknown): { valid: boolean; errors: string } {
  const validate = ajv.compile({ $ref: responseSchemaRef(path, status) });
  const valid = validate(body);
  return { valid, errors: ajv.errorsText(validate.errors) };
}

function documentedResponse(path: DocumentedPath, status: number): z.infer<typeof ResponseDoc> {
  const response = doc.paths[path]?.post.responses[String(status)];
  if (response === undefined) throw new Error(`${path} does not document ${status}`);
  return response;
}

/** Every header the document promises for this response is there and its value fits the header's schema. */
function expectDocumentedHeaders(path: DocumentedPath, status: number, reply: Reply): void {
  for (const [name, header] of Object.entries(documentedResponse(path, status).headers ?? {})) {
    const raw = reply.headers.get(name);
    expect(raw, `${path} ${status} header ${name}`).not.toBeNull();
    if (raw === null) continue;
    const value = header.schema['type'] === 'integer' && /^-?\d+$/.test(raw) ? Number(raw) : raw;
    const validate = ajv.compile({ $ref: `openapi.json#/${pointer('paths', path, 'post', 'responses', String(status), 'headers', name, 'schema')}` });
    expect(validate(value), `${path} ${status} header ${name}: ${raw} (${ajv.errorsText(validate.errors)})`).toBe(true);
  }
}

interface Sample {
  readonly path: DocumentedPath;
  readonly status: number;
  readonly what: string;
  readonly produce: () => Promise<Reply>;
  /**
   * The answer reports the token's rate-limit state (RateLimit-*): every request that got past the
   * token and environment checks to the rate limiter.
   */
  readonly reportsRateLimit: boolean;
}

const auth = (token: string, extra: Record<string, string> = {}) => ({ 'X-WF-Auth-Token': token, ...extra });

async function sandboxToken(): Promise<string> {
  return noSnapshot.token('sandbox-ci', 'sandbox');
}

/** Fires a burst well over the default 5 per second and returns the first refusal. */
async function burst(url: string, token: string): Promise<Reply> {
  const replies = await Promise.all(Array.from({ length: 8 }, () => post(url, { emails: [AMANDA_EMAIL] }, auth(token))));
  const refused = replies.find((reply) => reply.status === 429);
  if (refused === undefined) throw new Error(`no 429 in a burst of 8: ${replies.map((r) => r.status).join(', ')}`);
  return refused;
}

const SAMPLES: readonly Sample[] = [
  {
    path: SANDBOX,
    status: 200,
    what: 'persona matched by e-mail',
    reportsRateLimit: true,
    produce: async () => post(`${noSnapshot.url}${SANDBOX}`, { id: 's-1', emails: [AMANDA_EMAIL] }, auth(await sandboxToken())),
  },
  {
    path: SANDBOX,
    status: 200,
    what: 'no persona matched',
    reportsRateLimit: true,
    produce: async () => post(`${noSnapshot.url}${SANDBOX}`, { id: null, emails: ['nobody@example.com'] }, auth(await sandboxToken())),
  },
  {
    path: SANDBOX,
    status: 400,
    what: 'invalid JSON',
    reportsRateLimit: true,
    produce: async () => post(`${noSnapshot.url}${SANDBOX}`, '{"emails": [', auth(await sandboxToken())),
  },
  {
    path: SANDBOX,
    status: 401,
    what: 'unknown token',
    reportsRateLimit: false,
    produce: () => post(`${noSnapshot.url}${SANDBOX}`, { emails: [AMANDA_EMAIL] }, auth('sandbox_not-a-real-token')),
  },
  {
    path: SANDBOX,
    status: 403,
    what: 'production token on the sandbox',
    reportsRateLimit: true,
    produce: async () => post(`${noSnapshot.url}${SANDBOX}`, { emails: [AMANDA_EMAIL] }, auth(await noSnapshot.token('prod', 'production'))),
  },
  {
    path: SANDBOX,
    status: 429,
    what: 'burst over the rate limit',
    reportsRateLimit: true,
    produce: async () => burst(`${noSnapshot.url}${SANDBOX}`, await sandboxToken()),
  },
  {
    path: SANDBOX,
    status: 500,
    what: 'simulated unhandled error',
    reportsRateLimit: true,
    produce: async () => post(`${noSnapshot.url}${SANDBOX}`, { emails: [AMANDA_EMAIL] }, auth(await sandboxToken(), { 'X-Service-Sandbox-Error': '500' })),
  },
  {
    path: SANDBOX,
    status: 503,
    what: 'simulated downstream outage',
    reportsRateLimit: true,
    produce: async () => post(`${noSnapshot.url}${SANDBOX}`, { emails: [AMANDA_EMAIL] }, auth(await sandboxToken(), { 'X-Service-Sandbox-Error': '503' })),
  },
  {
    path: PRODUCTION,
    status: 200,
    what: 'household and career matched (stand-in matcher)',
    reportsRateLimit: true,
    produce: async () =>
      post(
        `${withData.url}${PRODUCTION}`,
        { id: 'p-1', first_name: 'Amanda', last_name: 'Taylor', emails: [AMANDA_EMAIL] },
        auth(await withData.token('prod-ci', 'production')),
      ),
  },
  {
    path: PRODUCTION,
    status: 200,
    what: 'nothing matched (stand-in matcher)',
    reportsRateLimit: true,
    produce: async () =>
      post(`${withData.url}${PRODUCTION}`, { id: 'p-2', emails: ['nobody@example.com'] }, auth(await withData.token('prod-ci', 'production'))),
  },
  {
    path: PRODUCTION,
    status: 400,
    what: 'invalid JSON',
    reportsRateLimit: true,
    produce: async () => post(`${noSnapshot.url}${PRODUCTION}`, '{"emails": [', auth(await noSnapshot.token('prod', 'production'))),
  },
  {
    path: PRODUCTION,
    status: 401,
    what: 'unknown token',
    reportsRateLimit: false,
    produce: () => post(`${noSnapshot.url}${PRODUCTION}`, { emails: [AMANDA_EMAIL] }, auth('not-a-real-token')),
  },
  {
    path: PRODUCTION,
    status: 402,
    what: 'quota of zero',
    reportsRateLimit: true,
    produce: async () => post(`${withData.url}${PRODUCTION}`, { emails: [AMANDA_EMAIL] }, auth(await withData.token('broke', 'production'))),
  },
  {
    path: PRODUCTION,
    status: 403,
    what: 'sandbox token on production',
    reportsRateLimit: true,
    produce: async () => post(`${noSnapshot.url}${PRODUCTION}`, { emails: [AMANDA_EMAIL] }, auth(await sandboxToken())),
  },
  {
    path: PRODUCTION,
    status: 429,
    what: 'burst over the rate limit',
    reportsRateLimit: true,
    produce: async () => burst(`${noSnapshot.url}${PRODUCTION}`, await noSnapshot.token('prod', 'production')),
  },
  {
    path: PRODUCTION,
    status: 500,
    what: 'unexpected fault in matching (stand-in matcher)',
    // Past the rate limiter: the pipeline turns the fault into internal_error with its limit headers.
    reportsRateLimit: true,
    produce: async () => post(`${withData.url}${PRODUCTION}`, { id: 'explode' }, auth(await withData.token('prod-ci', 'production'))),
  },
  {
    path: PRODUCTION,
    status: 503,
    what: 'no data snapshot loaded',
    reportsRateLimit: true,
    produce: async () => post(`${noSnapshot.url}${PRODUCTION}`, { emails: [AMANDA_EMAIL] }, auth(await noSnapshot.token('prod', 'production'))),
  },
];

beforeAll(async () => {
  noSnapshot = await startTestServer();
  withData = await startTestServer({ productionMatcher: new PersonaStandInMatcher() });
  await noSnapshot.account('sandbox-ci', { careerIntelligence: true }, 'sandbox');
  await noSnapshot.account('prod', {}, 'production');
  await withData.account('broke', { quotaLimit: 0 }, 'production');
  await withData.account('prod-ci', { careerIntelligence: true, politicalData: true }, 'production');

  const response = await fetch(`${noSnapshot.url}/openapi.json`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  rawDocument = await response.text();
  doc = OpenApiDoc.parse(JSON.parse(rawDocument));
  ajv = documentValidator(rawDocument);
});

afterAll(async () => {
  await noSnapshot.close();
  await withData.close();
});

describe('GET /openapi.json', () => {
  it('is OpenAPI 3.1 describing version 1.0.0 of the interface', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info.version).toBe('1.0.0');
  });

  it('documents a POST on each endpoint with every status it can answer', () => {
    expect(Object.keys(doc.paths).sort()).toEqual([PRODUCTION, SANDBOX].sort());
    for (const [path, statuses] of Object.entries(DOCUMENTED_STATUSES)) {
      expect(Object.keys(doc.paths[path]?.post.responses ?? {}).sort(), path).toEqual([...statuses].sort());
    }
  });

  it('declares every tag its operations use, each with a description, and a license and a contact', () => {
    const declared = new Map((doc.tags ?? []).map((tag) => [tag.name, tag.description]));
    const used = Object.values(doc.paths).flatMap((item) => item.post.tags ?? []);
    expect(used.length).toBeGreaterThan(0);
    for (const tag of used) expect(declared.get(tag), tag).toMatch(/\w/);
    expect(doc.info.license?.name).toMatch(/\w/);
    expect(doc.info.contact?.name).toMatch(/\w/);
  });

  it('validates against the OpenAPI 3.1 schema', async () => {
    expect(Validator.supportedVersions.has('3.1')).toBe(true);
    const validator = new Validator();
    // An object, not the raw text: the validator takes a string without line breaks for a file name.
    const result = await validator.validate(JsonObject.parse(JSON.parse(rawDocument)));
    expect(result.errors, JSON.stringify(result.errors, null, 2)).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('has a real sample below for every documented status', () => {
    for (const [path, statuses] of Object.entries(DOCUMENTED_STATUSES)) {
      const sampled = new Set(SAMPLES.filter((s) => s.path === path).map((s) => String(s.status)));
      expect([...sampled].sort(), path).toEqual([...statuses].sort());
    }
  });
});

describe('real responses validate against the document', () => {
  it.each(SAMPLES.map((sample) => [`${sample.path} ${sample.status}: ${sample.what}`, sample] as const))('%s', async (_name, sample) => {
    const reply = await sample.produce();
    expect(reply.status, reply.text).toBe(sample.status);
    const { valid, errors } = validateBody(sample.path, sample.status, reply.body);
    expect(valid, `${errors}\n${reply.text}`).toBe(true);

    expectDocumentedHeaders(sample.path, sample.status, reply);
    if (sample.reportsRateLimit) {
      for (const name of RATE_HEADERS) expect(reply.headers.get(name), name).toMatch(/^\d+$/);
    }
    if (sample.path === PRODUCTION && [200, 402, 503].includes(sample.status)) {
      const [limit, remaining, reset] = QUOTA_HEADERS.map((name) => reply.headers.get(name));
      expect(limit).toMatch(/^\d+$/);
      expect(remaining).toMatch(/^\d+$/);
      // The default quota period is a month, so a reset time is always there.
      expect(Date.parse(reset ?? '')).toBeGreaterThan(Date.now());
    }
    if (sample.status === 429) expect(reply.headers.get('Retry-After')).toMatch(/^[1-9]\d*$/);
  });

  it('a production match carries the stand-in data through entitlements, and quota is billed', async () => {
    const token = await withData.token('prod-ci', 'production');
    const reply = await post(`${withData.url}${PRODUCTION}`, { id: 'p-3', emails: [AMANDA_EMAIL] }, auth(token));
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ id: 'p-3', household_matched: true, career_matched: true, ...amanda() });
    expect(reply.headers.get('X-Quota-Remaining')).toBe(String(1000 - 1));
  });

  it('sandbox and production bodies of the same status use their own error shapes', async () => {
    const sandbox = await post(`${noSnapshot.url}${SANDBOX}`, '{', auth(await sandboxToken()));
    const production = await post(`${noSnapshot.url}${PRODUCTION}`, '{', auth(await noSnapshot.token('prod', 'production')));
    expect(validateBody(SANDBOX, 400, sandbox.body).valid).toBe(true);
    expect(validateBody(PRODUCTION, 400, production.body).valid).toBe(true);
    // Crossed over, neither validates: the two error schemas are distinct and closed.
    expect(validateBody(PRODUCTION, 400, sandbox.body).valid).toBe(false);
    expect(validateBody(SANDBOX, 400, production.body).valid).toBe(false);
  });

  it('rejects a body that breaks the contract, so the checks above can fail', () => {
    const body = { household_matched: true, career_matched: false, ...amanda(), career: null };
    expect(validateBody(PRODUCTION, 200, body).valid).toBe(true);
    const missingFlag = Object.fromEntries(Object.entries(body).filter(([key]) => key !== 'household_matched'));
    const result = validateBody(PRODUCTION, 200, missingFlag);
    expect(result.valid).toBe(false);
    expect(result.errors).toContain('household_matched');
    expect(validateBody(PRODUCTION, 200, { ...body, household: { ...body.household, net_worth_last_calculated: '2026-13-40' } }).valid).toBe(false);
    expect(validateBody(PRODUCTION, 200, { ...body, household: { ...body.household, confidence: 1.5 } }).valid).toBe(false);
    expect(validateBody(PRODUCTION, 429, { error: 'slow_down', message: 'x' }).valid).toBe(false);
    // Each environment's own shape: production always sends both objects, the sandbox never a null.
    const withoutHousehold = Object.fromEntries(Object.entries(body).filter(([key]) => key !== 'household'));
    expect(validateBody(PRODUCTION, 200, withoutHousehold).valid).toBe(false);
    expect(validateBody(SANDBOX, 200, { household_matched: false, career_matched: false }).valid).toBe(true);
    expect(validateBody(SANDBOX, 200, { household_matched: false, career_matched: false, career: null }).valid).toBe(false);
  });
});
