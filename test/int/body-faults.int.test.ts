// Bad bytes before authentication (issue 10, item 5): on every POST route, a body that cannot be read
// (a Content-Encoding that is garbage or unknown, a body far over the route's cap, bytes that are not
// UTF-8) is a 4xx in that route's own error format, before any credential is looked at, and never an
// error-level log line. Real startServer, real HTTP, the log captured from the real pino logger.
import { rmSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, issueToken } from '../../core/accounts/admin.ts';
import { SQLITE_FILE_NAME } from '../../core/storage/sqlite.ts';
import { openStorage } from '../../bridge/storage.ts';
import { HUBSPOT_ENRICH_ACTION_ROUTE, HUBSPOT_WEBHOOK_ROUTE } from '../../connectors/hubspot/paths.ts';
import { SALESFORCE_EVENTS_ROUTE, salesforceOutboundMessagePath } from '../../connectors/salesforce/paths.ts';
import { loadConfig } from '../../server/config.ts';
import { createLogger } from '../../server/logger.ts';
import { type RunningServer, startServer } from '../../server/runtime.ts';
import { tempDir } from '../support/harness.ts';

interface LogLine {
  readonly level: number;
  readonly msg?: string;
}
/** pino's numeric level for `error`. */
const ERROR_LEVEL = 50;

const lines: LogLine[] = [];
let server: RunningServer;
let dataDir: string;
const tokens = { production: '', sandbox: '' };

beforeAll(async () => {
  dataDir = tempDir('enrichbridge-body-faults-');
  const opened = await openStorage(path.join(dataDir, SQLITE_FILE_NAME));
  await createAccount(opened.store, 'bodies', { quotaLimit: 1000, rateLimit: 1000 });
  tokens.production = (await issueToken(opened.store, 'bodies', 'production')).token;
  tokens.sandbox = (await issueToken(opened.store, 'bodies', 'sandbox')).token;
  await opened.store.close();
  const config = loadConfig({ DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'info', WORKER_CONCURRENCY: '0', PUBLIC_URL: 'http://127.0.0.1' });
  const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
  server = await startServer(config, logger);
});

afterAll(async () => {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

interface Answer {
  readonly status: number;
  readonly contentType: string;
  readonly text: string;
}

/** A POST with exactly these bytes and headers (fetch would not send a Content-Encoding it did not apply). */
function send(route: string, body: Buffer, headers: Record<string, string>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${server.url}${route}`, { method: 'POST', headers: { 'content-length': String(body.length), ...headers } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, contentType: response.headers['content-type'] ?? '', text: Buffer.concat(chunks).toString('utf8') }),
      );
      response.on('error', reject);
    });
    // The server may answer (413) before it has read everything: that is not a failure of the test.
    request.on('error', reject);
    request.end(body);
  });
}

const json = { 'content-type': 'application/json' };
const xml = { 'content-type': 'text/xml; charset=utf-8', soapaction: '""' };

interface Route {
  readonly name: string;
  readonly route: string;
  readonly headers: () => Record<string, string>;
  /** The route's own error format, checked on a refusal. */
  readonly expectFormat: (answer: Answer) => void;
  /** The enrichment endpoints answer every unreadable body 400 invalid_request (docs/reference/contract.md). */
  readonly enrichModel: boolean;
}

const expectMessageJson = (answer: Answer) => {
  expect(answer.contentType).toMatch(/^application\/json/);
  expect(JSON.parse(answer.text)).toEqual({ message: expect.any(String) });
};

const ROUTES: readonly Route[] = [
  {
    name: 'POST /v1',
    route: '/v1',
    headers: () => ({ ...json, 'x-wf-auth-token': tokens.production }),
    expectFormat: (answer) => expect(JSON.parse(answer.text)).toEqual({ error: 'invalid_request', message: expect.any(String) }),
    enrichModel: true,
  },
  {
    name: 'POST /sandbox/v1',
    route: '/sandbox/v1',
    headers: () => ({ ...json, 'x-wf-auth-token': tokens.sandbox }),
    expectFormat: (answer) => expect(JSON.parse(answer.text)).toEqual({ message: expect.any(String) }),
    enrichModel: true,
  },
  { name: 'the HubSpot webhook', route: HUBSPOT_WEBHOOK_ROUTE, headers: () => json, expectFormat: expectMessageJson, enrichModel: false },
  { name: 'the HubSpot workflow action', route: HUBSPOT_ENRICH_ACTION_ROUTE, headers: () => json, expectFormat: expectMessageJson, enrichModel: false },
  {
    name: 'the HubSpot record card action',
    route: '/hubspot/card/contacts/1/enrich',
    headers: () => json,
    // The card's own format: `ok`, a reason code and a message.
    expectFormat: (answer) => {
      expect(answer.contentType).toMatch(/^application\/json/);
      expect(JSON.parse(answer.text)).toEqual({ ok: false, reason: 'body_unreadable', message: expect.any(String) });
    },
    enrichModel: false,
  },
  {
    name: 'the Salesforce outbound message',
    // Any secret: the body is refused before the URL's secret is looked at.
    route: salesforceOutboundMessagePath('any-secret'),
    headers: () => xml,
    expectFormat: (answer) => {
      expect(answer.contentType).toMatch(/^text\/xml/);
      expect(answer.text).toContain('<faultcode>soapenv:Client</faultcode>');
    },
    enrichModel: false,
  },
  { name: 'the Salesforce events', route: SALESFORCE_EVENTS_ROUTE, headers: () => json, expectFormat: expectMessageJson, enrichModel: false },
];

interface Fault {
  readonly rule: string;
  readonly body: Buffer;
  readonly headers: Record<string, string>;
  /** The status of a webhook route; the enrichment endpoints answer 400 for every fault. */
  readonly status: number;
}

// A gzip header (magic, deflate, no flags) followed by bytes no inflater accepts.
const GZIP_GARBAGE = Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0x03]), Buffer.from('this is not deflate data at all')]);
// Far over every route's cap, whatever each cap is tuned to.
const HUGE = Buffer.alloc(4 * 1024 * 1024, 0x20);
// `{"firstName":"J<ff><fe>"}`: JSON-shaped, but not UTF-8.
const NOT_UTF8 = Buffer.concat([Buffer.from('{"firstName":"J'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);

const FAULTS: readonly Fault[] = [
  { rule: 'a gzip body that does not inflate is a 400', body: GZIP_GARBAGE, headers: { 'content-encoding': 'gzip' }, status: 400 },
  { rule: 'an unknown Content-Encoding is a 415', body: Buffer.from('{}'), headers: { 'content-encoding': 'x-enrichbridge-unknown' }, status: 415 },
  { rule: 'a body over the route cap is a 413', body: HUGE, headers: {}, status: 413 },
  { rule: 'a body that is not UTF-8 is a 400', body: NOT_UTF8, headers: {}, status: 400 },
];

describe('bad bytes before authentication', () => {
  for (const route of ROUTES) {
    for (const fault of FAULTS) {
      it(`${route.name}: ${fault.rule}, in the route's error format, with no error log line`, async () => {
        const before = lines.length;

        const answer = await send(route.route, fault.body, { ...route.headers(), ...fault.headers });

        expect(answer.status).toBe(route.enrichModel ? 400 : fault.status);
        route.expectFormat(answer);
        // The request line is written when the answer finishes; by the next turn it is in `lines`.
        await new Promise((resolve) => setImmediate(resolve));
        expect(lines.slice(before).filter((line) => line.level >= ERROR_LEVEL)).toEqual([]);
        expect(lines.slice(before).some((line) => line.msg === 'request')).toBe(true);
      });
    }
  }

  it('the server still answers a good request after every fault', async () => {
    const answer = await send('/sandbox/v1', Buffer.from('{"firstName":"Jane","lastName":"Doe"}'), { ...json, 'x-wf-auth-token': tokens.sandbox });
    expect(answer.status).toBe(200);
  });
});
