// The spec's Limits section and docs/reference/contract.md's quota and rate decisions over real HTTP: 5 requests per
// second per token with RateLimit headers, usage quotas with X-Quota headers, 402, atomic consumption.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateAccount } from '../../core/accounts/admin.ts';
import { type TestServer, post, startTestServer } from '../support/harness.ts';
import { PersonaProductionMatcher } from '../support/persona-matcher.ts';
import { UNTHROTTLED, byEmail, persona, sleep } from '../support/requests.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ productionMatcher: new PersonaProductionMatcher() });
});
afterAll(async () => {
  await server.close();
});

const amanda = persona('Amanda Taylor');
const sandboxUrl = () => `${server.url}/sandbox/v1`;
const prodUrl = () => `${server.url}/v1/`;

describe('Limits: more than 5 requests per second gives 429 with error rate_limit', () => {
  it('admits a burst of 5 and refuses what comes on top, with Retry-After and RateLimit headers', async () => {
    const token = await server.account('limits-burst', {}, 'production');
    // Twelve at once, all inside 950 ms: exactly five pass.
    const replies = await Promise.all(Array.from({ length: 12 }, () => post(prodUrl(), byEmail(amanda), { 'X-WF-Auth-Token': token })));
    const admitted = replies.filter((r) => r.status === 200);
    const refused = replies.filter((r) => r.status === 429);
    expect(admitted).toHaveLength(5);
    expect(refused).toHaveLength(7);
    const first = refused[0];
    expect(first?.body).toEqual({ error: 'rate_limit', message: expect.any(String) });
    expect(Number(first?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(first?.headers.get('ratelimit-limit')).toBe('5');
    expect(first?.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(first?.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1);
    const remaining = admitted.map((r) => Number(r.headers.get('ratelimit-remaining')));
    expect(Math.max(...remaining)).toBe(4);
  });

  it('applies in the sandbox too, with a {message} body', async () => {
    const token = await server.account('limits-sandbox', {}, 'sandbox');
    const statuses = await Promise.all(Array.from({ length: 8 }, () => post(sandboxUrl(), {}, { 'X-WF-Auth-Token': token })));
    expect(statuses.filter((r) => r.status === 429)).toHaveLength(3);
    expect(statuses.find((r) => r.status === 429)?.body).toEqual({ message: expect.any(String) });
  });
});

describe('Errors rule 2: sequential calls with a delay of about 0.2 seconds stay under the limit', () => {
  it('never refuses a client pacing its calls 200 ms apart', async () => {
    const token = await server.account('limits-paced', {}, 'sandbox');
    for (let i = 0; i < 15; i += 1) {
      const reply = await post(sandboxUrl(), byEmail(amanda), { 'X-WF-Auth-Token': token });
      expect(reply.status, `call ${i}`).toBe(200);
      await sleep(200);
    }
  });
});

describe('Limits: the rate limit is per token, and an operator may raise it', () => {
  it('gives each token of an account its own 5 per second', async () => {
    const first = await server.account('limits-per-token', {}, 'sandbox');
    const second = await server.token('limits-per-token', 'sandbox');
    for (const token of [first, second]) {
      const replies = await Promise.all(Array.from({ length: 5 }, () => post(sandboxUrl(), {}, { 'X-WF-Auth-Token': token })));
      expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    }
  });

  it('honours a raised rate', async () => {
    const token = await server.account('limits-raised', { rateLimit: 20 }, 'sandbox');
    const replies = await Promise.all(Array.from({ length: 20 }, () => post(sandboxUrl(), {}, { 'X-WF-Auth-Token': token })));
    expect(replies.every((r) => r.status === 200)).toBe(true);
    expect(replies[0]?.headers.get('ratelimit-limit')).toBe('20');
  });
});

describe('Limits: token quota, one usage token per production request answered 200', () => {
  it('counts matches and no-matches, reports X-Quota headers, and answers 402 quota_exhausted when used up', async () => {
    const token = await server.account('limits-quota', { quotaLimit: 2, quotaPeriod: 'month', ...UNTHROTTLED }, 'production');
    const first = await post(prodUrl(), byEmail(amanda), { 'X-WF-Auth-Token': token });
    expect(first.status).toBe(200);
    expect(first.headers.get('x-quota-limit')).toBe('2');
    expect(first.headers.get('x-quota-remaining')).toBe('1');
    expect(first.headers.get('x-quota-reset')).toMatch(/^\d{4}-\d{2}-01T00:00:00\.000Z$/);
    const noMatch = await post(prodUrl(), { emails: ['nobody@example.com'] }, { 'X-WF-Auth-Token': token });
    expect(noMatch.status).toBe(200);
    expect(noMatch.headers.get('x-quota-remaining')).toBe('0');
    const refused = await post(prodUrl(), byEmail(amanda), { 'X-WF-Auth-Token': token });
    expect(refused.status).toBe(402);
    expect(refused.body).toEqual({ error: 'quota_exhausted', message: expect.stringContaining('refreshes at') });
    expect(refused.headers.get('x-quota-remaining')).toBe('0');
  });

  it('consumes nothing for errors and rate-limited calls', async () => {
    const token = await server.account('limits-free-errors', { quotaLimit: 10 }, 'production');
    await post(prodUrl(), '{bad json', { 'X-WF-Auth-Token': token });
    await Promise.all(Array.from({ length: 8 }, () => post(prodUrl(), '{bad json', { 'X-WF-Auth-Token': token })));
    await sleep(1100);
    const reply = await post(prodUrl(), byEmail(amanda), { 'X-WF-Auth-Token': token });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('x-quota-remaining')).toBe('9');
  });

  it('never lets two concurrent requests both take the last unit', async () => {
    const token = await server.account('limits-race', { quotaLimit: 3, ...UNTHROTTLED }, 'production');
    const replies = await Promise.all(Array.from({ length: 25 }, () => post(prodUrl(), byEmail(amanda), { 'X-WF-Auth-Token': token })));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(3);
    expect(replies.filter((r) => r.status === 402)).toHaveLength(22);
  });

  it('gives each production token the allocation set on its account, and a raised allocation applies', async () => {
    const first = await server.account('limits-alloc', { quotaLimit: 1, ...UNTHROTTLED }, 'production');
    const second = await server.token('limits-alloc', 'production');
    expect((await post(prodUrl(), {}, { 'X-WF-Auth-Token': first })).status).toBe(200);
    expect((await post(prodUrl(), {}, { 'X-WF-Auth-Token': first })).status).toBe(402);
    expect((await post(prodUrl(), {}, { 'X-WF-Auth-Token': second })).status).toBe(200);
    await updateAccount(server.store, 'limits-alloc', { quotaLimit: 2 });
    await sleep(300); // the credential cache holds account settings for up to 250 ms
    expect((await post(prodUrl(), {}, { 'X-WF-Auth-Token': first })).status).toBe(200);
  });
});

describe('Limits: quota periods refresh on schedule', () => {
  it('starts a fresh allocation when the period turns, and never refreshes a quota with period none', async () => {
    await server.account('limits-period', { quotaLimit: 1, quotaPeriod: 'day', ...UNTHROTTLED }, 'production');
    const token = await server.token('limits-period', 'production');
    const call = (now: Date) => server.service.enrichRecord({ environment: 'production', token, readBody: () => ({}), now });
    const day1 = new Date('2026-11-21T23:59:59Z');
    const day2 = new Date('2026-11-22T00:00:00Z');
    expect((await call(day1)).ok).toBe(true);
    const refused = await call(day1);
    expect(refused.ok ? 'ok' : refused.error.code).toBe('quota_exhausted');
    expect(refused.quota?.resetsAt?.toISOString()).toBe('2026-11-22T00:00:00.000Z');
    expect((await call(day2)).ok).toBe(true);

    await server.account('limits-lifetime', { quotaLimit: 1, quotaPeriod: 'none', ...UNTHROTTLED }, 'production');
    const lifetime = await server.token('limits-lifetime', 'production');
    const once = (now: Date) => server.service.enrichRecord({ environment: 'production', token: lifetime, readBody: () => ({}), now });
    expect((await once(new Date('2026-01-01T00:00:00Z'))).ok).toBe(true);
    const later = await once(new Date('2030-01-01T00:00:00Z'));
    expect(later.ok ? 'ok' : later.error.code).toBe('quota_exhausted');
    expect(later.quota?.resetsAt).toBeNull();
  });
});
