// The Enricher port's adapters against the real server on loopback (HTTP) and the real service
// (in-process): outcomes by status, 429s honoured, 503s retried, 401/403/400 never retried, 402 pauses.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Enricher } from '../../core/client/enricher.ts';
import { HttpEnricher } from '../../core/client/http-enricher.ts';
import { InProcessEnricher } from '../../core/client/in-process-enricher.ts';
import { type TestServer, startTestServer } from '../support/harness.ts';
import { PersonaProductionMatcher } from '../support/persona-matcher.ts';
import { UNTHROTTLED, byEmail, persona } from '../support/requests.ts';

let server: TestServer;
let noData: TestServer;

beforeAll(async () => {
  server = await startTestServer({ productionMatcher: new PersonaProductionMatcher() });
  noData = await startTestServer();
});
afterAll(async () => {
  await server.close();
  await noData.close();
});

const amanda = persona('Amanda Taylor');
const fast = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2000 };

const http = (url: string, token: string, extra: Partial<ConstructorParameters<typeof HttpEnricher>[0]> = {}): Enricher =>
  new HttpEnricher({ url, token, retry: fast, ...extra });

describe('HTTP enricher against the real server', () => {
  it('returns a match, a no-match and a household-only answer as ok, with unmatched objects as null', async () => {
    const token = await server.account('enr-ok', { careerIntelligence: true, ...UNTHROTTLED }, 'sandbox');
    const enricher = http(`${server.url}/sandbox/v1`, token);
    const matched = await enricher.enrich(byEmail(amanda));
    expect(matched).toMatchObject({ kind: 'ok', attempts: 1, response: { household_matched: true, career_matched: true } });
    expect(await enricher.enrich({ emails: ['nobody@example.com'] })).toMatchObject({
      kind: 'ok',
      response: { household_matched: false, career_matched: false, household: null, career: null },
    });
    expect(await enricher.enrich(byEmail(persona('Jane Doe')))).toMatchObject({ kind: 'ok', response: { career: null } });
  });

  it('does not retry 401, 403 or 400', async () => {
    const production = await server.account('enr-refused', { ...UNTHROTTLED }, 'production');
    expect(await http(`${server.url}/sandbox/v1`, 'sandbox_unknown').enrich({})).toMatchObject({ kind: 'rejected', status: 401, attempts: 1 });
    expect(await http(`${server.url}/sandbox/v1`, production).enrich({})).toMatchObject({ kind: 'rejected', status: 403, attempts: 1 });
    const tooMany = { emails: Array.from({ length: 11 }, (_, i) => `a${i}@example.com`) };
    expect(await http(`${server.url}/v1/`, production).enrich(tooMany)).toMatchObject({ kind: 'rejected', status: 400, attempts: 1 });
  });

  it('reports an exhausted quota with its reset time instead of retrying', async () => {
    const token = await server.account('enr-402', { quotaLimit: 0, quotaPeriod: 'month', ...UNTHROTTLED }, 'production');
    const outcome = await http(`${server.url}/v1/`, token).enrich(byEmail(amanda));
    expect(outcome).toMatchObject({ kind: 'quota_exhausted', attempts: 1 });
    expect(outcome.kind === 'quota_exhausted' ? outcome.resetsAt?.getUTCDate() : null).toBe(1);
  });

  it('honours 429 and Retry-After: a client faster than its account is slowed, and every call succeeds', async () => {
    const token = await server.account('enr-429', { rateLimit: 1 }, 'sandbox');
    const waits: number[] = [];
    const enricher = http(`${server.url}/sandbox/v1`, token, {
      ratePerSecond: 50,
      retry: { maxAttempts: 6, baseDelayMs: 1, maxDelayMs: 5000 },
      sleep: (ms) => {
        waits.push(ms);
        return new Promise((resolve) => setTimeout(resolve, ms));
      },
    });
    const outcomes = await Promise.all([1, 2, 3].map(() => enricher.enrich(byEmail(amanda))));
    expect(outcomes.map((o) => o.kind)).toEqual(['ok', 'ok', 'ok']);
    expect(outcomes.reduce((n, o) => n + o.attempts, 0)).toBeGreaterThan(3);
    // Retry-After from the server (whole seconds), not the 1 ms backoff.
    expect(waits.length).toBeGreaterThan(0);
    expect(waits.every((ms) => ms >= 1000)).toBe(true);
  });

  it('never meets a 429 when it paces at the account rate', async () => {
    const token = await server.account('enr-paced', { rateLimit: 5 }, 'sandbox');
    const enricher = http(`${server.url}/sandbox/v1`, token, { ratePerSecond: 5 });
    const outcomes = await Promise.all(Array.from({ length: 8 }, () => enricher.enrich(byEmail(amanda))));
    expect(outcomes.every((o) => o.kind === 'ok' && o.attempts === 1)).toBe(true);
  });

  it('retries 503 until the service is back', async () => {
    const token = await noData.account('enr-503', { ...UNTHROTTLED }, 'production');
    let retries = 0;
    const enricher = http(`${noData.url}/v1/`, token, {
      sleep: () => {
        retries += 1;
        // The snapshot arrives while the client waits.
        if (retries === 2) noData.service.productionMatcher = new PersonaProductionMatcher();
        return Promise.resolve();
      },
    });
    const outcome = await enricher.enrich(byEmail(amanda));
    expect(outcome).toMatchObject({ kind: 'ok', attempts: 3, response: { household_matched: true } });
  });

  it('gives up after the last attempt on a lasting 503 or a network error', async () => {
    const bare = await startTestServer();
    const token = await bare.account('enr-down', { ...UNTHROTTLED }, 'production');
    const sleepless = { sleep: () => Promise.resolve() };
    expect(await http(`${bare.url}/v1/`, token, sleepless).enrich({})).toMatchObject({ kind: 'failed', status: 503, attempts: 3 });
    const url = `${bare.url}/v1/`;
    await bare.close();
    expect(await http(url, token, sleepless).enrich({})).toMatchObject({ kind: 'failed', status: null, attempts: 3 });
  });
});

describe('In-process enricher', () => {
  it('classifies like the HTTP one, through the same pipeline', async () => {
    const token = await server.account('enr-local', { careerIntelligence: true, quotaLimit: 1, ...UNTHROTTLED }, 'production');
    const enricher = new InProcessEnricher({ service: server.service, token, environment: 'production', retry: fast });
    expect(await enricher.enrich(byEmail(amanda))).toMatchObject({ kind: 'ok', dataVersion: 'test-personas', response: { household_matched: true } });
    expect(await enricher.enrich(byEmail(amanda))).toMatchObject({ kind: 'quota_exhausted' });
    const wrong = new InProcessEnricher({ service: server.service, token: 'prod_nope', environment: 'production', retry: fast });
    expect(await wrong.enrich({})).toMatchObject({ kind: 'rejected', status: 401, attempts: 1 });
  });
});
