// The spec's Endpoints rules for enrichRecord, over real HTTP against the real app and SQLite file:
// id echo, the four match outcomes in production, name-only requests, one record per request, paths.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, post, startTestServer } from '../support/harness.ts';
import { PersonaProductionMatcher } from '../support/persona-matcher.ts';
import { UNTHROTTLED, byEmail, persona } from '../support/requests.ts';

let server: TestServer;
let prod: string;
let sandbox: string;

beforeAll(async () => {
  server = await startTestServer({ productionMatcher: new PersonaProductionMatcher() });
  prod = await server.account('endpoints', { careerIntelligence: true, ...UNTHROTTLED }, 'production');
  sandbox = await server.token('endpoints', 'sandbox');
});
afterAll(async () => {
  await server.close();
});

const amanda = persona('Amanda Taylor');
const jane = persona('Jane Doe'); // household only
const david = persona('David Wilson'); // career only

describe('Endpoints rule 1: the id, when sent, is echoed in the response', () => {
  it('echoes the id on a production match and on a sandbox no-match', async () => {
    const matched = await post(`${server.url}/v1/`, byEmail(amanda, { id: 'crm-42' }), { 'X-WF-Auth-Token': prod });
    expect(matched.status).toBe(200);
    expect(matched.body).toMatchObject({ id: 'crm-42', household_matched: true });
    const unmatched = await post(`${server.url}/sandbox/v1`, { id: 'crm-43', emails: ['nobody@example.com'] }, { 'X-WF-Auth-Token': sandbox });
    expect(unmatched.body).toEqual({ id: 'crm-43', household_matched: false, career_matched: false });
  });

  it('echoes an id of null as null, and sends no id when the request had none', async () => {
    const withNull = await post(`${server.url}/v1/`, { id: null, emails: ['nobody@example.com'] }, { 'X-WF-Auth-Token': prod });
    expect(withNull.body).toEqual({ id: null, household_matched: false, career_matched: false, household: null, career: null });
    const without = await post(`${server.url}/sandbox/v1`, byEmail(amanda), { 'X-WF-Auth-Token': sandbox });
    expect(without.body).not.toHaveProperty('id');
  });
});

describe('Endpoints rule 2: production no-match is 200 with both flags false, both objects null, id echoed', () => {
  it('answers a record that matches nothing', async () => {
    const reply = await post(
      `${server.url}/v1/`,
      { id: 'x1', first_name: 'Nobody', last_name: 'Known', emails: ['nobody@example.com'] },
      { 'X-WF-Auth-Token': prod },
    );
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ id: 'x1', household_matched: false, career_matched: false, household: null, career: null });
  });
});

describe('Endpoints rule 3: when only one of the two matches, the other flag is false and the other object null', () => {
  it('household only', async () => {
    const reply = await post(`${server.url}/v1/`, byEmail(jane), { 'X-WF-Auth-Token': prod });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ household_matched: true, career_matched: false, career: null });
    expect(reply.body).toHaveProperty('household.windfall_id', jane.household?.windfall_id);
  });

  it('career only', async () => {
    const reply = await post(`${server.url}/v1/`, byEmail(david), { 'X-WF-Auth-Token': prod });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ household_matched: false, career_matched: true, household: null });
    expect(reply.body).toHaveProperty('career.job_title', david.career?.job_title);
  });

  it('both', async () => {
    const reply = await post(`${server.url}/v1/`, byEmail(amanda), { 'X-WF-Auth-Token': prod });
    expect(reply.body).toMatchObject({ household_matched: true, career_matched: true });
    expect(reply.body).toHaveProperty('household.net_worth', amanda.household?.net_worth);
    expect(reply.body).toHaveProperty('career.linkedin_url', 'linkedin.com/in/amanda-taylor');
  });
});

describe('Endpoints rule 4: a request with only first_name and last_name is valid but matches rarely', () => {
  it('is answered 200, and in the sandbox never matches', async () => {
    for (const url of [`${server.url}/sandbox/v1`, `${server.url}/v1/`]) {
      const token = url.includes('sandbox') ? sandbox : prod;
      const reply = await post(url, { first_name: 'Amanda', last_name: 'Taylor' }, { 'X-WF-Auth-Token': token });
      expect(reply.status).toBe(200);
      expect(reply.body).toMatchObject({ household_matched: false, career_matched: false });
    }
  });
});

describe('Endpoints rule 5: one record is processed per request', () => {
  it('refuses an array of records with 400', async () => {
    const reply = await post(`${server.url}/sandbox/v1`, [byEmail(amanda), byEmail(jane)], { 'X-WF-Auth-Token': sandbox });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ message: expect.stringContaining('JSON object') });
  });
});

describe('Endpoints: paths', () => {
  it('serves production at /v1/ and /v1, the sandbox at /sandbox/v1 and /sandbox/v1/', async () => {
    for (const [path, token] of [
      ['/v1/', prod],
      ['/v1', prod],
      ['/sandbox/v1', sandbox],
      ['/sandbox/v1/', sandbox],
    ] as const) {
      const reply = await post(`${server.url}${path}`, byEmail(amanda), { 'X-WF-Auth-Token': token });
      expect(reply.status, path).toBe(200);
      expect(reply.body, path).toMatchObject({ household_matched: true, career_matched: true });
    }
  });

  it('answers other methods on the endpoints with 405 and Allow: POST', async () => {
    const reply = await fetch(`${server.url}/sandbox/v1`, { headers: { 'X-WF-Auth-Token': sandbox } });
    expect(reply.status).toBe(405);
    expect(reply.headers.get('allow')).toBe('POST');
    expect(await reply.json()).toEqual({ message: 'Method not allowed; use POST.' });
    const production = await fetch(`${server.url}/v1/`, { method: 'PUT' });
    expect(await production.json()).toEqual({ error: 'method_not_allowed', message: 'Method not allowed; use POST.' });
  });

  it('answers unknown paths with 404 in the shape of the environment they fall under', async () => {
    const production = await fetch(`${server.url}/v1/people`, { method: 'POST' });
    expect(production.status).toBe(404);
    expect(await production.json()).toEqual({ error: 'not_found', message: 'Not found.' });
    const sandboxReply = await fetch(`${server.url}/sandbox/v2`, { method: 'POST' });
    expect(await sandboxReply.json()).toEqual({ message: 'Not found.' });
  });

  it('serves GET /healthz', async () => {
    const reply = await fetch(`${server.url}/healthz`);
    expect(reply.status).toBe(200);
    expect(await reply.json()).toEqual({ status: 'ok' });
  });
});

describe('Endpoints: production responses carry the data version that answered', () => {
  it('sets X-Data-Version', async () => {
    const reply = await post(`${server.url}/v1/`, byEmail(amanda), { 'X-WF-Auth-Token': prod });
    expect(reply.headers.get('x-data-version')).toBe('test-personas');
  });
});

describe('Every JSON answer is marked not to be cached, and each header is sent once', () => {
  it('marks an answer, a refusal, a wrong method and an unknown path no-store, with the limit headers once on the answer', async () => {
    const answered = await post(`${server.url}/sandbox/v1`, byEmail(amanda), { 'X-WF-Auth-Token': sandbox });
    expect(answered.status).toBe(200);
    expect(answered.headers.get('cache-control')).toBe('no-store');
    expect(answered.headers.get('ratelimit-remaining')).toMatch(/^\d+$/);
    expect(answered.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(answered.headers.get('content-length')).toBe(String(Buffer.byteLength(answered.text)));
    const refused = await post(`${server.url}/v1/`, byEmail(amanda), { 'X-WF-Auth-Token': 'prod_not-a-token' });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('cache-control')).toBe('no-store');
    const wrongMethod = await fetch(`${server.url}/v1/`, { method: 'GET' });
    expect(wrongMethod.status).toBe(405);
    expect([wrongMethod.headers.get('allow'), wrongMethod.headers.get('cache-control')]).toEqual(['POST', 'no-store']);
    const unknown = await fetch(`${server.url}/v2/`, { method: 'POST' });
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('cache-control')).toBe('no-store');
  });
});
