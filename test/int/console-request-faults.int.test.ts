// What a caller gets wrong before any handler runs is answered with its own 4xx, never a 500 and never
// an error-level log line: on every console form post, a form over 16 KB (413), with more than 200
// fields (413), in a charset other than UTF-8 (415), with a Content-Encoding the server does not read
// (415) or one its bytes do not decode with (400); and on every route with a part of its path taken
// as a value (the console's, the CRM modules'), percent-encoding that does not decode (400). The
// console answers with a page of its own. Real startServer, real HTTP, the log captured from the real
// pino logger; the routes are read from the routers themselves, so a route added later is covered.
import http from 'node:http';
import type { Router } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.ts';
import { crmRouter } from '../../server/http/crm-routes.ts';
import { consoleRouter } from '../../server/http/console/routes.ts';
import { createLogger } from '../../server/logger.ts';
import { type RunningServer, openRuntime, routeContext, startServer } from '../../server/runtime.ts';
import { tempDir } from '../support/harness.ts';
import { freePort } from '../support/processes.ts';

interface LogLine {
  readonly level: number;
  readonly msg?: string;
}
/** pino's numeric level for `error`. */
const ERROR_LEVEL = 50;

interface RouteEntry {
  readonly method: 'GET' | 'POST';
  readonly path: string;
}

const lines: LogLine[] = [];
let server: RunningServer;
const routes = { console: [] as RouteEntry[], crm: [] as RouteEntry[] };

/** Each route of a router, by method and express pattern. */
function routesOf(router: Router): RouteEntry[] {
  const found: RouteEntry[] = [];
  for (const layer of router.stack) {
    const route = layer.route;
    if (route === undefined) continue;
    for (const method of new Set(route.stack.map((handler) => handler.method.toUpperCase()))) {
      if (method === 'GET' || method === 'POST') found.push({ method, path: route.path });
    }
  }
  return found;
}

beforeAll(async () => {
  const port = await freePort();
  const env = {
    DATA_DIR: tempDir('enrichbridge-console-faults-'),
    PORT: String(port),
    LOG_LEVEL: 'info',
    WORKER_CONCURRENCY: '0',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
  };
  // The route tables, from routers built on a runtime of their own (what they hold does not matter).
  const config = loadConfig({ ...env, DATA_DIR: tempDir('enrichbridge-console-faults-routes-') });
  const silent = createLogger('silent');
  const runtime = await openRuntime(config, silent, undefined, 'command');
  try {
    const context = {
      publicUrl: config.publicUrl,
      box: runtime.box,
      bridge: runtime.bridge,
      store: runtime.opened.store,
      service: runtime.service,
      queue: runtime.opened.queue,
      modules: runtime.modules,
      log: silent,
    };
    routes.console = routesOf(consoleRouter(context));
    routes.crm = routesOf(crmRouter(runtime.modules, routeContext(runtime, config, silent, { wake: () => undefined })));
  } finally {
    await runtime.close();
  }
  const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
  server = await startServer(loadConfig(env), logger);
});

afterAll(async () => {
  await server?.stop();
});

interface Answer {
  readonly status: number;
  readonly contentType: string;
  readonly text: string;
}

/** A request with exactly these bytes and headers (fetch would not send a Content-Encoding it did not apply). */
function send(method: 'GET' | 'POST', route: string, body: Buffer, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${server.url}${route}`,
      { method, headers: method === 'GET' ? headers : { 'content-length': String(body.length), ...headers } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, contentType: response.headers['content-type'] ?? '', text: Buffer.concat(chunks).toString('utf8') }),
        );
        response.on('error', reject);
      },
    );
    // The server may answer (413) before it has read everything: that is not a failure of the test.
    request.on('error', reject);
    request.end(method === 'GET' ? undefined : body);
  });
}

/** The error-level lines written since `before`, once the request's own line is out (the next turn). */
async function errorLinesSince(before: number): Promise<LogLine[]> {
  await new Promise((resolve) => setImmediate(resolve));
  return lines.slice(before).filter((line) => line.level >= ERROR_LEVEL || line.msg === 'unhandled error');
}

/** The route's pattern with every `:name` filled in with `value` (already encoded). */
function fill(pattern: string, value: string): string {
  return pattern.replace(/:\w+/g, value);
}

const expectConsolePage = (answer: Answer) => {
  expect(answer.contentType).toMatch(/^text\/html/);
  expect(answer.text).toContain('role="alert"');
  expect(answer.text).not.toMatch(/Internal server error|at \w+ \(/);
};

const FORM = 'application/x-www-form-urlencoded';
// A gzip header (magic, deflate, no flags) followed by bytes no inflater accepts.
const GZIP_GARBAGE = Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0x03]), Buffer.from('this is not deflate data at all')]);

interface FormFault {
  readonly rule: string;
  readonly body: Buffer;
  readonly headers: Record<string, string>;
  readonly status: number;
}

const FORM_FAULTS: readonly FormFault[] = [
  { rule: 'a form over 16 KB is a 413', body: Buffer.from(`csrf=x&note=${'a'.repeat(17 * 1024)}`), headers: { 'content-type': FORM }, status: 413 },
  {
    rule: 'a form with more than 200 fields is a 413',
    body: Buffer.from(Array.from({ length: 201 }, (_, i) => `f${i}=1`).join('&')),
    headers: { 'content-type': FORM },
    status: 413,
  },
  { rule: 'a form in another charset than UTF-8 is a 415', body: Buffer.from('csrf=x'), headers: { 'content-type': `${FORM}; charset=utf-16` }, status: 415 },
  {
    rule: 'a form with a Content-Encoding the server does not read is a 415',
    body: Buffer.from('csrf=x'),
    headers: { 'content-type': FORM, 'content-encoding': 'x-unknown' },
    status: 415,
  },
  {
    rule: 'a form that does not decode with its Content-Encoding is a 400',
    body: GZIP_GARBAGE,
    headers: { 'content-type': FORM, 'content-encoding': 'gzip' },
    status: 400,
  },
];

/** `/`, URL-encoded as one byte too long (an overlong form no decoder accepts). */
const UNDECODABLE = '%C0%AF';

describe('the console, before any handler runs', () => {
  it('has form posts and routes with values in their paths to check (the route tables were read)', () => {
    expect(routes.console.filter((route) => route.method === 'POST').length).toBeGreaterThan(10);
    expect(routes.console.filter((route) => route.path.includes(':')).length).toBeGreaterThan(10);
    // Every pattern is plain `:name` parts, which fill() knows how to fill.
    for (const route of [...routes.console, ...routes.crm]) expect(route.path).toMatch(/^[\w/:.-]+$/);
  });

  for (const fault of FORM_FAULTS) {
    it(`on every console form post, ${fault.rule}, on a console page, with no error log line`, async () => {
      const posts = routes.console.filter((route) => route.method === 'POST');
      for (const route of posts) {
        const before = lines.length;
        const path = fill(route.path, 'x');
        const answer = await send('POST', path, fault.body, fault.headers);
        expect({ path, status: answer.status }).toEqual({ path, status: fault.status });
        expectConsolePage(answer);
        expect(await errorLinesSince(before)).toEqual([]);
      }
    });
  }

  it('on every console route with a value in its path, percent-encoding that does not decode is a 400, on a console page, with no error log line', async () => {
    const withValues = routes.console.filter((route) => route.path.includes(':'));
    for (const route of withValues) {
      const before = lines.length;
      const path = fill(route.path, UNDECODABLE);
      const answer = await send(route.method, path, Buffer.from('csrf=x'), route.method === 'POST' ? { 'content-type': FORM } : {});
      expect({ path, method: route.method, status: answer.status }).toEqual({ path, method: route.method, status: 400 });
      expectConsolePage(answer);
      expect(await errorLinesSince(before)).toEqual([]);
    }
  });
});

describe('the CRM and API routes, before any handler runs', () => {
  it('on every CRM route with a value in its path, percent-encoding that does not decode is a 400, with no error log line', async () => {
    const withValues = routes.crm.filter((route) => route.path.includes(':'));
    expect(withValues.length).toBeGreaterThan(0);
    for (const route of withValues) {
      const before = lines.length;
      const path = fill(route.path, UNDECODABLE);
      const answer = await send(route.method, path, Buffer.from('{}'), route.method === 'POST' ? { 'content-type': 'application/json' } : {});
      expect({ path, status: answer.status }).toEqual({ path, status: 400 });
      expect(answer.contentType).toMatch(/^application\/json/);
      expect(await errorLinesSince(before)).toEqual([]);
    }
  });

  it('an API or unknown path with percent-encoding that does not decode is a 404, with no error log line', async () => {
    for (const [method, path] of [
      ['POST', `/v1/${UNDECODABLE}`],
      ['POST', `/sandbox/v1/${UNDECODABLE}`],
      ['GET', `/${UNDECODABLE}`],
      ['GET', `/console/${UNDECODABLE}`],
      ['GET', `/webhooks/${UNDECODABLE}`],
    ] as const) {
      const before = lines.length;
      const answer = await send(method, path, Buffer.from('{}'), method === 'POST' ? { 'content-type': 'application/json' } : {});
      expect({ path, status: answer.status }).toEqual({ path, status: 404 });
      expect(await errorLinesSince(before)).toEqual([]);
    }
  });

  it('the server still answers a good request after every fault', async () => {
    const answer = await send('GET', '/healthz', Buffer.alloc(0), {});
    expect(answer.status).toBe(200);
  });
});
