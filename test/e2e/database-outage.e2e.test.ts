// An instance on PostgreSQL whose database goes away under webhook load (a restart, a failover, a
// network blip), through a TCP relay the test cuts for a few seconds: the server keeps running, a
// webhook it cannot store is answered 503 (so HubSpot delivers it again), /readyz says the database is
// unavailable, and once the database is back every event it acknowledged, and every one HubSpot
// delivered again, is enriched and written. Runs when the run has PostgreSQL and Redis (.ci/run).
import { randomBytes, randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HUBSPOT_PATHS } from '../../connectors/hubspot/version.ts';
import { type FakeHubSpot, startFakeHubSpot } from '../support/fake-hubspot.ts';
import { TEST_DATABASE_URL, freshPostgresSchema } from '../support/databases.ts';
import { tempDir } from '../support/harness.ts';
import { type Proc, cli, freePort, killProcess, startProcess, until } from '../support/processes.ts';
import { TEST_REDIS_URL, freshPrefix } from '../support/redis.ts';
import { TcpOutage } from '../support/tcp-outage.ts';

const APP_ID = '1160452';
const PORTAL_ID = '62515';
const UpdateBodySchema = z.object({ inputs: z.array(z.object({ id: z.string() })) });
const ReadySchema = z.object({ status: z.string(), checks: z.record(z.string(), z.string()) });

const running: Proc[] = [];
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((proc) => killProcess(proc)));
  for (const close of closers.splice(0)) await close().catch(() => undefined);
});

function written(fake: FakeHubSpot): Set<string> {
  const ids = new Set<string>();
  for (const request of fake.requests) {
    if (request.method !== 'POST' || request.path !== HUBSPOT_PATHS.contactsBatchUpdate || request.status !== 200) continue;
    for (const input of UpdateBodySchema.parse(request.body).inputs) ids.add(input.id);
  }
  return ids;
}

async function ready(url: string): Promise<{ status: number; body: z.infer<typeof ReadySchema> }> {
  const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5_000) });
  return { status: response.status, body: ReadySchema.parse(await response.json()) };
}

describe.skipIf(TEST_DATABASE_URL === undefined || TEST_DATABASE_URL === '' || TEST_REDIS_URL === undefined)('a database outage under webhook load', () => {
  it('the instance outlives it: webhooks it cannot store get 503, /readyz says so, and nothing acknowledged is lost', async () => {
    const clientSecret = randomUUID();
    const fake = await startFakeHubSpot({ webhookUrl: null, appId: APP_ID, portalId: PORTAL_ID, clientSecret, subscribedProperties: [] });
    closers.push(() => fake.close());
    const database = await freshPostgresSchema(TEST_DATABASE_URL ?? '');
    const relay = await TcpOutage.start(database);
    closers.push(() => relay.close());
    const env = {
      DATA_DIR: tempDir(),
      DATABASE_URL: database,
      REDIS_URL: TEST_REDIS_URL ?? '',
      REDIS_KEY_PREFIX: freshPrefix(),
      ENRICHBRIDGE_SECRET_KEY: randomBytes(32).toString('hex'),
      // Jobs a dropped connection left leased go back to the queue within 3 s.
      WORKER_LEASE_MS: '3000',
      LOG_LEVEL: 'info',
    };
    // 40 lookups a second: the drain of 200 contacts spans the outage.
    await cli(['accounts', 'create', 'e2e', '--career-intelligence', '--rate-limit', '40'], env);
    await cli(
      [
        ...['hubspot', 'connect', '--portal-id', PORTAL_ID, '--access-token', fake.tokens.staticToken, '--client-secret', clientSecret],
        ...['--app-id', APP_ID, '--account', 'e2e', '--env', 'sandbox', '--api-base-url', fake.url],
      ],
      env,
    );
    const token = (await cli(['tokens', 'create', 'e2e', '--env', 'sandbox'], env)).stdout.trim();
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    // The server reaches PostgreSQL only through the relay.
    const server = startProcess(process.execPath, ['bin/server.js'], {
      ...env,
      DATABASE_URL: relay.url,
      PORT: String(port),
      PUBLIC_URL: url,
      HUBSPOT_API_BASE_URL: fake.url,
    });
    running.push(server);
    await server.waitFor(/"msg":"listening"/);
    for (let i = 0; i < 200; i += 1) await fake.createContact({ firstname: `Person${i}`, lastname: 'Example', email: `person${i}@example.com` });
    const creations = fake.events.filter((event) => event.subscriptionType === 'contact.creation');
    const batches = Array.from({ length: 10 }, (_, i) => creations.slice(i * 20, (i + 1) * 20));

    // Half before the outage, all acknowledged.
    for (const batch of batches.slice(0, 5)) expect((await fake.sendEvents(batch, { url: `${url}/webhooks/hubspot` })).status).toBe(200);
    relay.cut();
    // During it: each batch is either stored (200) or refused with 503, never anything else.
    const refused: (typeof batches)[number][] = [];
    for (const batch of batches.slice(5)) {
      const answer = await fake.sendEvents(batch, { url: `${url}/webhooks/hubspot` });
      expect([200, 503]).toContain(answer.status);
      if (answer.status !== 200) refused.push(batch);
    }
    expect(refused.length).toBeGreaterThan(0);
    const during = await ready(url);
    expect(during.status).toBe(503);
    expect(during.body.checks.database).toBe('unavailable');
    // An API call, whose token is read from the database: 503, retry later, not a 500.
    const api = await fetch(`${url}/sandbox/v1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-wf-auth-token': token },
      body: JSON.stringify({ emails: ['amanda.taylor@sandbox.windfall.com'] }),
      signal: AbortSignal.timeout(10_000),
    });
    expect(api.status).toBe(503);
    expect(api.headers.get('retry-after')).toBe('1');
    expect(await api.json()).toEqual({ message: expect.stringMatching(/database/) });
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    relay.restore();

    expect(server.child.exitCode).toBeNull();
    await until('/readyz ready again', async () => ((await ready(url)).status === 200 ? true : undefined), { timeoutMs: 15_000, intervalMs: 100 });
    // HubSpot delivers what was refused again.
    for (const batch of refused) {
      await until('a redelivery taken', async () => ((await fake.sendEvents(batch, { url: `${url}/webhooks/hubspot` })).status === 200 ? true : undefined), {
        timeoutMs: 15_000,
        intervalMs: 250,
      });
    }
    await until('every contact written', () => (written(fake).size === 200 ? true : undefined), {
      timeoutMs: 90_000,
      intervalMs: 250,
      context: () => server.output().slice(-4000),
    });
    expect(server.child.exitCode).toBeNull();
    expect(server.output()).not.toMatch(/Unhandled 'error' event|uncaughtException/);
  }, 150_000);
});
