// The HTTP face of the enrichment service: translates between HTTP and EnrichService.enrichRecord and
// nothing more. Also serves /healthz, the generated /openapi.json, and the root page and favicon (home.ts).
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Environment } from '../../core/accounts/model.ts';
import { EnrichError, errorBody } from '../../core/contract/errors.ts';
import { buildOpenApiDocument } from '../../core/contract/openapi.ts';
import { answerJson } from '../../core/enrich/answer-json.ts';
import { SANDBOX_ERROR_HEADERS } from '../../core/enrich/sandbox-errors.ts';
import type { EnrichResult, EnrichService } from '../../core/enrich/service.ts';
import { readBody } from './body.ts';
import { requestFaultOf } from './faults.ts';
import { homeRouter } from './home.ts';
import proxyaddr from 'proxy-addr';
import { METRICS_CONTENT_TYPE, enrichDuration, httpRequests, metricsText, rateLimited } from '../../core/observe/metrics.ts';
import { constantTimeEqual } from '../../core/secrets/constant-time.ts';
import { isDatabaseUnavailable } from '../../core/storage/errors.ts';
import { type Logger, requestLogger } from '../logger.ts';

/** How long a readiness check may take before the instance counts as not ready. */
const READY_CHECK_TIMEOUT_MS = 2_000;

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

/** docs/reference/contract.md: a body over 64 KiB is malformed (400). */
export const BODY_LIMIT_BYTES = 64 * 1024;

export interface AppOptions {
  readonly service: EnrichService;
  readonly logger: Logger;
  readonly trustProxy: string | false;
  readonly requireHttps: boolean;
  /** GET /metrics: the peers allowed without a token (default loopback), and the bearer token that opens it from anywhere. */
  readonly metrics?: { readonly allow: readonly string[]; readonly token: string | null };
  /** GET /readyz: each dependency's check (the database, Redis); a check that throws makes the instance not ready. */
  readonly readiness?: Readonly<Record<string, () => Promise<unknown>>>;
  /** The CRM routes (OAuth, webhooks), mounted before the 404 answer. */
  readonly routers?: readonly express.Router[];
}

interface BodyParserError {
  readonly type: string;
}

function isBodyParserError(error: unknown): error is BodyParserError {
  return typeof error === 'object' && error !== null && 'type' in error && typeof error.type === 'string' && 'status' in error;
}

const BODY_ERROR_MESSAGES: Readonly<Record<string, string>> = {
  'entity.too.large': `Request body is larger than ${BODY_LIMIT_BYTES / 1024} KiB.`,
  'encoding.unsupported': 'Request body has an unsupported Content-Encoding.',
  'charset.unsupported': 'Request body must be UTF-8.',
  'request.size.invalid': 'Request body length does not match Content-Length.',
  'encoding.invalid': 'Request body does not decode with its Content-Encoding.',
  'utf8.invalid': 'Request body must be UTF-8.',
};

/** Whether the request says it has a body (type-is's test): a Content-Length, or a Transfer-Encoding. */
function hasBody(req: Request): boolean {
  return req.headers['transfer-encoding'] !== undefined || req.headers['content-length'] !== undefined;
}

/**
 * Whether a Content-Type is JSON: application/json or application/<anything>+json, in any case, its
 * parameters aside (what `req.is(['application/json', 'application/*+json'])` accepts, without
 * type-is's parse of the whole header on every request).
 */
export function isJsonType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const semicolon = contentType.indexOf(';');
  const type = (semicolon === -1 ? contentType : contentType.slice(0, semicolon)).trim().toLowerCase();
  if (type === 'application/json') return true;
  return type.startsWith('application/') && type.endsWith('+json') && type.length > 'application/+json'.length && !/[\s/]/.test(type.slice(12, -5));
}

function readJsonBody(req: Request, bodyError: string | undefined): unknown {
  if (bodyError !== undefined) throw new EnrichError('invalid_request', bodyError);
  const contentType = req.headers['content-type'];
  if (hasBody(req) && !isJsonType(contentType)) {
    throw new EnrichError('invalid_request', 'Content-Type must be application/json.');
  }
  const charset = /charset=([^;]+)/i
    .exec(contentType ?? '')?.[1]
    ?.trim()
    .toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    throw new EnrichError('invalid_request', 'Request body must be UTF-8.');
  }
  const raw: unknown = req.body;
  if (!Buffer.isBuffer(raw) || raw.length === 0) {
    throw new EnrichError('invalid_request', 'Request body is empty; send a JSON object (all fields optional).');
  }
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw new EnrichError('invalid_request', 'Request body is not valid JSON.');
  }
}

/** A fault's words as a sentence: `the body …` becomes `The body ….` */
function sentence(words: string): string {
  return `${words.charAt(0).toUpperCase()}${words.slice(1)}.`;
}

/** Whose error shape an answer outside the two endpoints takes: the sandbox's under /sandbox. */
function environmentOf(req: Request): Environment {
  return req.path.startsWith('/sandbox') ? 'sandbox' : 'production';
}

function routeOf(req: Request): string {
  const route: unknown = req.route?.path;
  return typeof route === 'string' ? route : 'unmatched';
}

function sandboxErrorHeader(req: Request): string | undefined {
  for (const name of SANDBOX_ERROR_HEADERS) {
    const value = req.get(name);
    if (value !== undefined) return value;
  }
  return undefined;
}

/** The limit headers an enrichment answer carries (the console's playground shows the same). */
export function limitHeaders(result: EnrichResult): Record<string, string> {
  const headers: Record<string, string> = {};
  if (result.rate !== undefined) {
    headers['RateLimit-Limit'] = String(result.rate.limit);
    headers['RateLimit-Remaining'] = String(result.rate.remaining);
    headers['RateLimit-Reset'] = String(result.rate.resetSeconds);
  }
  if (result.quota !== undefined) {
    headers['X-Quota-Limit'] = String(result.quota.limit);
    headers['X-Quota-Remaining'] = String(result.quota.remaining);
    if (result.quota.resetsAt !== null) headers['X-Quota-Reset'] = result.quota.resetsAt.toISOString();
  }
  if (result.dataVersion !== undefined) headers['X-Data-Version'] = result.dataVersion;
  if (!result.ok && result.error.code === 'rate_limit') {
    headers['Retry-After'] = String(Math.max(1, result.rate?.retryAfterSeconds ?? 1));
  }
  return headers;
}

/**
 * A JSON answer, never to be cached, without res.json's freshness and ETag work (which never applies to
 * a POST). Its headers go to writeHead in one list: when no header was set before (the enrichment
 * endpoints set none), Node writes the list as it is instead of building its header map one setHeader
 * at a time; a header set before (Allow, Retry-After) is merged, as Node does. On that fast path
 * res.getHeader() knows none of them afterwards: nothing may read an answer's headers back.
 */
function sendJson(res: Response, status: number, body: object, headers: Readonly<Record<string, string>> = {}): void {
  const text = answerJson(body);
  const list = ['Cache-Control', 'no-store'];
  for (const name in headers) list.push(name, headers[name] ?? '');
  list.push('Content-Type', 'application/json; charset=utf-8', 'Content-Length', String(Buffer.byteLength(text)));
  res.writeHead(status, list);
  res.end(text);
}

export function createApp(options: AppOptions): express.Express {
  const { service, logger } = options;
  const requestLog = requestLogger(logger);
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', options.trustProxy);

  // One log line per request: no headers, no body, no query string, and the route pattern rather
  // than the path, which a caller could fill with a token or an e-mail; the token by its public id.
  app.use((req, res, next) => {
    const started = performance.now();
    // One listener a request: the log line, the request counter and, for the two enrichment endpoints,
    // their duration from the request's arrival.
    res.once('finish', () => {
      const route = routeOf(req);
      const environment: unknown = res.locals.environment;
      if (environment === 'production' || environment === 'sandbox') {
        enrichDuration.observe({ environment, status: res.statusCode }, (performance.now() - started) / 1000);
      }
      httpRequests.inc({ route, status: res.statusCode });
      if (res.statusCode === 429) rateLimited.inc({ direction: 'given', peer: 'client' });
      const { tokenId, account } = res.locals;
      requestLog.info(
        {
          method: req.method,
          route,
          status: res.statusCode,
          ms: Math.round((performance.now() - started) * 100) / 100,
          ...(typeof tokenId === 'string' ? { token_id: tokenId } : {}),
          ...(typeof account === 'string' ? { account } : {}),
        },
        'request',
      );
    });
    next();
  });

  // The two enrichment endpoints first: every request to them passes the routes before them.
  const enrich = async (environment: Environment, req: Request, res: Response, bodyError?: string): Promise<void> => {
    res.locals.environment = environment;
    if (options.requireHttps && !req.secure) {
      const error = new EnrichError('https_required', 'HTTPS is required.');
      sendJson(res, error.status, errorBody(environment, error));
      return;
    }
    const result = await service.enrichRecord({
      environment,
      token: req.get('x-wf-auth-token'),
      simulateError: sandboxErrorHeader(req),
      readBody: () => readJsonBody(req, bodyError),
    });
    if (result.credential !== undefined) {
      res.locals.tokenId = result.credential.token.id;
      res.locals.account = result.credential.account.name;
    }
    const headers = limitHeaders(result);
    if (result.ok) {
      sendJson(res, 200, result.response, headers);
    } else {
      if (result.cause !== undefined) logger.error({ err: result.cause, route: routeOf(req) }, 'unhandled error');
      sendJson(res, result.error.status, errorBody(environment, result.error), headers);
    }
  };

  for (const [path, environment] of [
    ['/v1', 'production'],
    ['/sandbox/v1', 'sandbox'],
  ] as const) {
    app.post(
      path,
      // Unreadable bodies (too large, bad encoding, not UTF-8) still go through the pipeline, so a bad
      // token gets its 401 before anyone is told the body was malformed: docs/reference/contract.md's order of checks.
      readBody({
        limit: BODY_LIMIT_BYTES,
        refuse: (res, fault, req, next) => void enrich(environment, req, res, BODY_ERROR_MESSAGES[fault.type] ?? fault.message).catch(next),
      }),
      (req: Request, res: Response) => enrich(environment, req, res),
    );
    app.all(path, (_req, res) => {
      res.setHeader('Allow', 'POST');
      const error = new EnrichError('method_not_allowed', 'Method not allowed; use POST.');
      sendJson(res, error.status, errorBody(environment, error));
    });
  }

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });

  // Ready to take traffic: every dependency answers (a load balancer stops sending to an instance that
  // is not). Each check is bounded, so a hung dependency makes /readyz answer 503, not hang.
  app.get('/readyz', async (_req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    const checks = Object.entries(options.readiness ?? {});
    const results = await Promise.all(
      checks.map(async ([name, check]) => {
        try {
          await withTimeout(check(), READY_CHECK_TIMEOUT_MS);
          return [name, 'ok'] as const;
        } catch {
          return [name, 'unavailable'] as const;
        }
      }),
    );
    const ready = results.every(([, state]) => state === 'ok');
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready', checks: Object.fromEntries(results) });
  });

  // Prometheus text, for the peers METRICS_ALLOW names (the socket's address: a forwarded one could be
  // forged) or a caller with METRICS_TOKEN. Anyone else is told nothing exists here.
  const metricsAllowed = proxyaddr.compile([...(options.metrics?.allow ?? ['loopback'])]);
  const metricsToken = options.metrics?.token ?? null;
  app.get('/metrics', async (req, res) => {
    const peer = req.socket.remoteAddress ?? '';
    const bearer = /^Bearer (.+)$/.exec(req.get('authorization') ?? '')?.[1];
    const byToken = metricsToken !== null && bearer !== undefined && constantTimeEqual(bearer, metricsToken);
    // A request a proxy forwarded comes from the proxy's address (often loopback) on behalf of anyone:
    // only the token opens /metrics to it.
    const forwarded = req.get('x-forwarded-for') !== undefined || req.get('forwarded') !== undefined;
    if (!byToken && (forwarded || peer === '' || !metricsAllowed(peer, 0))) {
      sendJson(res, 404, errorBody('production', new EnrichError('not_found', 'Not found.')));
      return;
    }
    res.setHeader('Cache-Control', 'no-store');
    res.type(METRICS_CONTENT_TYPE).send(await metricsText());
  });

  const openApiDocument = JSON.stringify(buildOpenApiDocument());
  app.get('/openapi.json', (_req, res) => {
    res.type('application/json').send(openApiDocument);
  });

  // The root for a browser (a page pointing to the console and this document) and the favicon.
  app.use(homeRouter());

  for (const router of options.routers ?? []) app.use(router);

  app.use((req, res) => {
    sendJson(res, 404, errorBody(environmentOf(req), new EnrichError('not_found', 'Not found.')));
  });

  // Last resort: log the cause, answer 500 with no stack trace or internals in the body. A database
  // that is away (a restart, a failover) is not the caller's fault and passes: 503, retry in a moment.
  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (isBodyParserError(error) && error.type === 'request.aborted') return;
    // A caller's fault that no route answered in its own format (a path that does not percent-decode,
    // a body a parser refused): its own 4xx, and the request line is all the log it earns.
    const fault = requestFaultOf(error);
    if (fault !== undefined) {
      if (res.headersSent) return;
      sendJson(res, fault.status, errorBody(environmentOf(req), new EnrichError('invalid_request', sentence(fault.message))));
      return;
    }
    if (isDatabaseUnavailable(error)) {
      logger.warn({ err: error, route: routeOf(req) }, 'database unavailable');
      if (res.headersSent) return;
      res.setHeader('Retry-After', '1');
      sendJson(res, 503, errorBody(environmentOf(req), new EnrichError('service_unavailable', 'The service cannot reach its database; retry in a moment.')));
      return;
    }
    logger.error({ err: error, route: routeOf(req) }, 'unhandled error');
    if (res.headersSent) return;
    sendJson(res, 500, errorBody(environmentOf(req), new EnrichError('internal_error', 'Internal server error.')));
  });

  return app;
}
