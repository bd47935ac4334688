// The spec's Errors section and docs/reference/contract.md's malformed cases and order of checks, over real HTTP:
// every 400 case, error body shapes per environment, 500 without internals, 503 without billing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, post, startTestServer } from '../support/harness.ts';
import { PersonaProductionMatcher } from '../support/persona-matcher.ts';
import { UNTHROTTLED, byEmail, persona } from '../support/requests.ts';

let server: TestServer;
let sandbox: string;
let prod: string;

beforeAll(async () => {
  server = await startTestServer({ productionMatcher: new PersonaProductionMatcher() });
  sandbox = await server.account('errors', { careerIntelligence: true, ...UNTHROTTLED }, 'sandbox');
  prod = await server.token('errors', 'production');
});
afterAll(async () => {
  await server.close();
});

const amanda = persona('Amanda Taylor');
const eleven = Array.from({ length: 11 }, (_, i) => `person${i}@example.com`);

describe('Errors: 400 for a malformed body, malformed headers, or more than 10 entries', () => {
  const cases: [string, unknown, Record<string, string>?][] = [
    ['invalid JSON', '{"emails": ['],
    ['an empty body', ''],
    ['a JSON array', '[]'],
    ['a JSON string', '"amanda"'],
    ['JSON null', 'null'],
    ['a field of the wrong type (first_name: number)', { first_name: 5 }],
    ['a field of the wrong type (emails: string)', { emails: 'a@example.com' }],
    ['a field of the wrong type (zipcode: number)', { addresses: [{ address: '100 Demo St', zipcode: 30301 }] }],
    ['an e-mail that is not a string', { emails: [42] }],
    ['11 emails', { emails: eleven }],
    ['11 phones', { phones: Array.from({ length: 11 }, (_, i) => `555300${String(i).padStart(4, '0')}`) }],
    ['11 addresses', { addresses: Array.from({ length: 11 }, (_, i) => ({ address: `${i} Main St`, zipcode: '30301' })) }],
    ['a Content-Type that is not JSON', JSON.stringify(byEmail(amanda)), { 'content-type': 'text/plain' }],
    ['a body over 64 KiB', JSON.stringify({ id: 'x'.repeat(70_000) })],
    ['a string over its length limit', { first_name: 'a'.repeat(300) }],
  ];

  it.each(cases)('production refuses %s with {error: invalid_request, message}', async (_what, body, headers = {}) => {
    const reply = await post(`${server.url}/v1/`, body, { 'X-WF-Auth-Token': prod, ...headers });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ error: 'invalid_request', message: expect.any(String) });
  });

  it.each(cases)('the sandbox refuses %s with {message}', async (_what, body, headers = {}) => {
    const reply = await post(`${server.url}/sandbox/v1`, body, { 'X-WF-Auth-Token': sandbox, ...headers });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ message: expect.any(String) });
  });

  it('says which field is wrong', async () => {
    const reply = await post(`${server.url}/sandbox/v1`, { emails: eleven }, { 'X-WF-Auth-Token': sandbox });
    expect(reply.body).toEqual({ message: 'Invalid request: emails: at most 10 entries are allowed.' });
    const typed = await post(`${server.url}/sandbox/v1`, { addresses: [{ zipcode: 30301 }] }, { 'X-WF-Auth-Token': sandbox });
    expect(typed.body).toEqual({ message: 'Invalid request: addresses[0].zipcode: expected string.' });
  });

  it('accepts exactly 10 entries of each, an empty object, nulls for absent lists, and JSON with a charset', async () => {
    const ten = {
      emails: eleven.slice(0, 10),
      phones: Array.from({ length: 10 }, () => '5553000001'),
      addresses: Array.from({ length: 10 }, () => ({ address: '1 Main St' })),
    };
    for (const body of [ten, {}, { emails: null, phones: null, addresses: null, id: null }]) {
      expect((await post(`${server.url}/sandbox/v1`, body, { 'X-WF-Auth-Token': sandbox })).status).toBe(200);
    }
    const charset = await post(`${server.url}/sandbox/v1`, byEmail(amanda), { 'X-WF-Auth-Token': sandbox, 'content-type': 'application/json; charset=utf-8' });
    expect(charset.status).toBe(200);
  });

  it('ignores unknown fields (forward compatibility)', async () => {
    const reply = await post(`${server.url}/sandbox/v1`, { ...byEmail(amanda), middle_name: 'Q', extra: { nested: true } }, { 'X-WF-Auth-Token': sandbox });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ household_matched: true });
  });
});

describe('Errors: checks run in the order token → environment → rate limit → request → quota', () => {
  it('a bad token with a malformed body is 401, not 400', async () => {
    expect((await post(`${server.url}/v1/`, '{oops', { 'X-WF-Auth-Token': 'prod_unknown' })).status).toBe(401);
    expect((await post(`${server.url}/v1/`, JSON.stringify({ id: 'x'.repeat(70_000) }), { 'X-WF-Auth-Token': 'prod_unknown' })).status).toBe(401);
  });

  it('a token of the other environment with a malformed body is 403, not 400', async () => {
    const reply = await post(`${server.url}/v1/`, '{oops', { 'X-WF-Auth-Token': sandbox });
    expect(reply.status).toBe(403);
    expect(reply.body).toMatchObject({ error: 'forbidden_environment' });
  });

  it('a rate-limited token with a malformed body is 429, not 400', async () => {
    const token = await server.account('errors-slow', { rateLimit: 1 }, 'sandbox');
    expect((await post(`${server.url}/sandbox/v1`, {}, { 'X-WF-Auth-Token': token })).status).toBe(200);
    expect((await post(`${server.url}/sandbox/v1`, '{oops', { 'X-WF-Auth-Token': token })).status).toBe(429);
  });

  it('a malformed body on an exhausted quota is 400, not 402', async () => {
    const token = await server.account('errors-broke', { quotaLimit: 0, ...UNTHROTTLED }, 'production');
    expect((await post(`${server.url}/v1/`, '{oops', { 'X-WF-Auth-Token': token })).status).toBe(400);
    expect((await post(`${server.url}/v1/`, {}, { 'X-WF-Auth-Token': token })).status).toBe(402);
  });
});

describe('Errors rule 1: production bodies are {error, message}; sandbox bodies are {message}', () => {
  it('shapes 401 and 403 per environment', async () => {
    expect((await post(`${server.url}/v1/`, {}, {})).body).toEqual({ error: 'unauthorized', message: 'Missing X-WF-Auth-Token header.' });
    expect((await post(`${server.url}/sandbox/v1`, {}, {})).body).toEqual({ message: 'Missing X-WF-Auth-Token header.' });
    expect((await post(`${server.url}/sandbox/v1`, {}, { 'X-WF-Auth-Token': prod })).body).toEqual({ message: expect.stringContaining('production token') });
  });
});

describe('Errors: 503 downstream service unavailable', () => {
  it('production answers 503 service_unavailable while no data snapshot is loaded, and consumes nothing', async () => {
    const bare = await startTestServer();
    const token = await bare.account('errors-503', { quotaLimit: 1, ...UNTHROTTLED }, 'production');
    const replies = await Promise.all(Array.from({ length: 10 }, () => post(`${bare.url}/v1/`, byEmail(amanda), { 'X-WF-Auth-Token': token })));
    for (const reply of replies) {
      expect(reply.status).toBe(503);
      expect(reply.body).toEqual({ error: 'service_unavailable', message: expect.stringContaining('snapshot') });
      expect(reply.headers.get('x-quota-remaining')).toBe('1');
    }
    const broke = await bare.account('errors-503-broke', { quotaLimit: 0, ...UNTHROTTLED }, 'production');
    expect((await post(`${bare.url}/v1/`, {}, { 'X-WF-Auth-Token': broke })).status).toBe(503);
    await bare.close();
  });
});

describe('Errors: 500 unhandled server error', () => {
  it('answers 500 internal_error with no stack trace or internals in the body', async () => {
    const broken = await startTestServer();
    const token = await broken.account('errors-500', {}, 'production');
    // The database going away under a running server is a real unhandled failure.
    await broken.store.close();
    const reply = await post(`${broken.url}/v1/`, {}, { 'X-WF-Auth-Token': token });
    expect(reply.status).toBe(500);
    expect(reply.body).toEqual({ error: 'internal_error', message: 'Internal server error.' });
    expect(reply.text).not.toMatch(/at |\.ts|Error:|sqlite|kysely/i);
    const sandboxReply = await post(`${broken.url}/sandbox/v1`, {}, { 'X-WF-Auth-Token': 'sandbox_x' });
    expect(sandboxReply.body).toEqual({ message: 'Internal server error.' });
    await broken.close().catch(() => undefined);
  });
});
