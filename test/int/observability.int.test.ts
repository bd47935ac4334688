// What an operator of several instances watches: GET /metrics (Prometheus text, for allowed peers or a
// bearer token) with requests by route and status, 429s given and received, quota units, the queue by
// state, jobs by kind and result and CRM calls by provider and status; and GET /readyz, which checks the
// database and Redis.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import nock from 'nock';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccount, issueToken } from '../../core/accounts/admin.ts';
import { metricsText } from '../../core/observe/metrics.ts';
import { HubSpotApi } from '../../connectors/hubspot/api.ts';
import { loadConfig } from '../../server/config.ts';
import { createLogger } from '../../server/logger.ts';
import { type RunningServer, startServer } from '../../server/runtime.ts';
import { post, tempDir } from '../support/harness.ts';
import { startPipeline } from '../support/pipeline-harness.ts';
import { RedisOutage, TEST_REDIS_URL, freshPrefix } from '../support/redis.ts';
import { byEmail, persona } from '../support/requests.ts';
import { openStorage } from '../../bridge/storage.ts';
import { HUBSPOT_PATHS } from '../../connectors/hubspot/version.ts';

const logger = createLogger('silent');
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  nock.cleanAll();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';

async function serve(env: Record<string, string> = {}): Promise<RunningServer> {
  const server = await startServer(loadConfig({ DATA_DIR: tempDir(), LOG_LEVEL: 'silent', PORT: '0', WORKER_CONCURRENCY: '0', ...env }), logger);
  cleanups.push(() => server.stop());
  return server;
}

/** A metric's value in Prometheus text, 0 when the series is not there. */
function valueOf(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

describe('GET /metrics', () => {
  it('counts requests by route and status and reads the queue by state, for a loopback scraper', async () => {
    const dataDir = tempDir();
    const server = await serve({ DATA_DIR: dataDir });
    const { store, queue } = await openStorage(path.join(dataDir, 'enrichbridge.db'));
    await queue.enqueueMany([1, 2].map((n) => ({ installationId: 'i', kind: 'enrich', payload: { n } })));
    await store.close();
    const before = await metricsText();
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    const text = await (await fetch(`${server.url}/metrics`)).text();
    expect(valueOf(text, 'enrichbridge_queue_jobs{state="queued"}')).toBe(2);
    expect(valueOf(text, 'enrichbridge_http_requests_total{route="/healthz",status="200"}')).toBe(
      valueOf(before, 'enrichbridge_http_requests_total{route="/healthz",status="200"}') + 1,
    );
    expect(text).toContain('# TYPE enrichbridge_queue_jobs gauge');
    expect(text).toContain('# TYPE enrichbridge_enrichment_duration_seconds histogram');
  });

  it('counts 429s given and the enrichment latency by environment and status', async () => {
    const dataDir = tempDir();
    const server = await serve({ DATA_DIR: dataDir });
    const { store } = await openStorage(path.join(dataDir, 'enrichbridge.db'));
    await createAccount(store, 'acme', {});
    const { token } = await issueToken(store, 'acme', 'sandbox');
    await store.close();
    const before = await metricsText();
    const replies = await Promise.all(
      Array.from({ length: 7 }, () => post(`${server.url}/sandbox/v1`, byEmail(persona('Amanda Taylor')), { 'X-WF-Auth-Token': token })),
    );
    expect(replies.filter((r) => r.status === 429)).toHaveLength(2);
    const text = await (await fetch(`${server.url}/metrics`)).text();
    const given = 'enrichbridge_rate_limited_total{direction="given",peer="client"}';
    expect(valueOf(text, given)).toBe(valueOf(before, given) + 2);
    const latency = 'enrichbridge_enrichment_duration_seconds_count{environment="sandbox",status="200"}';
    expect(valueOf(text, latency)).toBe(valueOf(before, latency) + 5);
  });

  it('is refused (404) to a peer outside METRICS_ALLOW and to a forwarded request, and opened from anywhere by METRICS_TOKEN', async () => {
    const server = await serve({ METRICS_ALLOW: '10.0.0.0/8', METRICS_TOKEN });
    expect((await fetch(`${server.url}/metrics`)).status).toBe(404);
    expect((await fetch(`${server.url}/metrics`, { headers: { authorization: 'Bearer not-the-token-at-all-0000' } })).status).toBe(404);
    // A request a proxy on this host forwarded comes from loopback too: only the token opens it.
    const local = await serve({ METRICS_TOKEN });
    expect((await fetch(`${local.url}/metrics`)).status).toBe(200);
    expect((await fetch(`${local.url}/metrics`, { headers: { 'x-forwarded-for': '203.0.113.5' } })).status).toBe(404);
    expect((await fetch(`${local.url}/metrics`, { headers: { forwarded: 'for=203.0.113.5' } })).status).toBe(404);
    expect((await fetch(`${local.url}/metrics`, { headers: { 'x-forwarded-for': '203.0.113.5', authorization: `Bearer ${METRICS_TOKEN}` } })).status).toBe(200);
    const opened = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(opened.status).toBe(200);
    expect(opened.headers.get('content-type')).toContain('text/plain');
  });

  it('counts jobs by kind and result after the workers ran them', async () => {
    const h = await startPipeline();
    cleanups.push(() => h.close());
    const inst = await h.install();
    h.crm.create('contact', 'c1', { first_name: 'Amanda', last_name: 'Taylor', email: persona('Amanda Taylor').email });
    const series = 'enrichbridge_jobs_total{kind="enrich",result="completed"}';
    const before = valueOf(await metricsText(), series);
    await h.enqueue(inst, { object: 'contact', recordId: 'c1' });
    await h.drain();
    expect(valueOf(await metricsText(), series)).toBe(before + 1);
  });

  it('counts CRM calls by provider and status, and the 429s a CRM gives', async () => {
    const api = new HubSpotApi({ portalId: 'metrics-portal', accessToken: () => Promise.resolve('tok'), sleep: () => Promise.resolve() });
    const fixture = JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../fixtures/hubspot/batch-read-200.json'), 'utf8')) as { body: unknown };
    const tenSecondly = JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../fixtures/hubspot/429-ten-secondly.json'), 'utf8')) as {
      body: unknown;
      headers: Record<string, string>;
    };
    nock('https://api.hubapi.com').post(HUBSPOT_PATHS.contactsBatchRead).query(true).reply(429, JSON.stringify(tenSecondly.body), tenSecondly.headers);
    nock('https://api.hubapi.com')
      .post(HUBSPOT_PATHS.contactsBatchRead)
      .query(true)
      .reply(200, JSON.stringify(fixture.body), { 'content-type': 'application/json' });
    const before = await metricsText();
    await api.readContacts(['1'], ['email']);
    const text = await metricsText();
    for (const series of [
      'enrichbridge_crm_calls_total{provider="hubspot",status="2xx"}',
      'enrichbridge_crm_calls_total{provider="hubspot",status="429"}',
      'enrichbridge_rate_limited_total{direction="received",peer="hubspot"}',
    ]) {
      expect(valueOf(text, series), series).toBe(valueOf(before, series) + 1);
    }
  });
});

describe('GET /readyz', () => {
  it('is ready when the database answers', async () => {
    const server = await serve();
    const reply = await fetch(`${server.url}/readyz`);
    expect(reply.status).toBe(200);
    expect(await reply.json()).toEqual({ status: 'ready', checks: { database: 'ok' } });
  });

  // Skipped only where no Redis was given (a quick local run); CI always gives one.
  it.skipIf(TEST_REDIS_URL === undefined)('is not ready (503, naming redis) while Redis is unreachable, and ready again when it returns', async () => {
    const outage = await RedisOutage.start(TEST_REDIS_URL ?? '');
    cleanups.push(() => outage.close());
    const server = await serve({ REDIS_URL: outage.url, REDIS_KEY_PREFIX: freshPrefix() });
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    outage.cut();
    const down = await fetch(`${server.url}/readyz`);
    expect(down.status).toBe(503);
    expect(await down.json()).toEqual({ status: 'not_ready', checks: { database: 'ok', redis: 'unavailable' } });
    outage.restore();
    for (let i = 0; i < 50 && (await fetch(`${server.url}/readyz`)).status !== 200; i += 1) await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  });
});
