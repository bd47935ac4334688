// HubSpot webhooks across several instances, as an operator runs them: two `npm start` processes and
// one `enrichbridge worker` on one PostgreSQL and one Redis, a fake HubSpot on loopback, and the test
// spreading the signed batches over both instances itself (no proxy). Every contact is enriched and
// written exactly once; an instance SIGKILLed mid-drain loses nothing. Runs when the run has both
// servers (TEST_DATABASE_URL, TEST_REDIS_URL; .ci/run sets them).
import { randomBytes, randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type FakeHubSpot, type WebhookEvent, startFakeHubSpot } from '../support/fake-hubspot.ts';
import { TEST_DATABASE_URL, freshPostgresSchema } from '../support/databases.ts';
import { tempDir } from '../support/harness.ts';
import { type Proc, cli, freePort, killProcess, startProcess, until } from '../support/processes.ts';
import { TEST_REDIS_URL, freshPrefix } from '../support/redis.ts';
import { openStorage } from '../../bridge/storage.ts';
import { workerProcess } from '../../bridge/worker.ts';
import { HUBSPOT_PATHS } from '../../connectors/hubspot/version.ts';

const APP_ID = '1160452';
const PORTAL_ID = '62515';
const UPDATE_PATH = HUBSPOT_PATHS.contactsBatchUpdate;
const UpdateBodySchema = z.object({ inputs: z.array(z.object({ id: z.string() })) });

const running: Proc[] = [];
const fakes: FakeHubSpot[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((proc) => killProcess(proc)));
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

/** How many successful batch updates carried each contact. */
function writesPerContact(fake: FakeHubSpot): Map<string, number> {
  const writes = new Map<string, number>();
  for (const request of fake.requests) {
    if (request.method !== 'POST' || request.path !== UPDATE_PATH || request.status !== 200) continue;
    for (const input of UpdateBodySchema.parse(request.body).inputs) writes.set(input.id, (writes.get(input.id) ?? 0) + 1);
  }
  return writes;
}

/**
 * Two instances (each its own PUBLIC_URL, which webhook signatures cover) and a worker on one database
 * and one Redis, a HubSpot portal connected with a static token, and `count` contacts created in the
 * fake without a delivery yet.
 */
async function deployment(count: number, ratePerSecond = 1000) {
  const clientSecret = randomUUID();
  const fake = await startFakeHubSpot({ webhookUrl: null, appId: APP_ID, portalId: PORTAL_ID, clientSecret, subscribedProperties: [] });
  fakes.push(fake);
  const env = {
    DATA_DIR: tempDir(),
    DATABASE_URL: await freshPostgresSchema(TEST_DATABASE_URL ?? ''),
    REDIS_URL: TEST_REDIS_URL ?? '',
    REDIS_KEY_PREFIX: freshPrefix(),
    ENRICHBRIDGE_SECRET_KEY: randomBytes(32).toString('hex'),
    // A dead instance's leases run out in 5 s instead of 30.
    WORKER_LEASE_MS: '5000',
    LOG_LEVEL: 'info',
  };
  await cli(['accounts', 'create', 'e2e', '--career-intelligence', '--rate-limit', String(ratePerSecond)], env);
  await cli(
    [
      ...['hubspot', 'connect', '--portal-id', PORTAL_ID, '--access-token', fake.tokens.staticToken, '--client-secret', clientSecret],
      ...['--app-id', APP_ID, '--account', 'e2e', '--env', 'sandbox', '--api-base-url', fake.url],
    ],
    env,
  );
  const ports = [await freePort(), await freePort()];
  const instances = ports.map((port) =>
    startProcess(process.execPath, ['bin/server.js'], { ...env, PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, HUBSPOT_API_BASE_URL: fake.url }),
  );
  const worker = startProcess(process.execPath, ['bin/enrichbridge.js', 'worker', '--concurrency', '2'], env);
  running.push(...instances, worker);
  await Promise.all([...instances.map((proc) => proc.waitFor(/"msg":"listening"/)), worker.waitFor(/"msg":"worker started"/)]);
  for (let i = 0; i < count; i += 1) {
    await fake.createContact({ firstname: `Person${i}`, lastname: 'Example', email: `person${i}@example.com` });
  }
  const creations = fake.events.filter((event) => event.subscriptionType === 'contact.creation');
  expect(creations).toHaveLength(count);
  return { fake, env, instances, worker, urls: ports.map((port) => `http://127.0.0.1:${port}/webhooks/hubspot`), creations };
}

/** Sends the events in signed batches of 50, alternating between the instances; every batch must be taken. */
async function deliver(fake: FakeHubSpot, events: readonly WebhookEvent[], urls: readonly string[]): Promise<void> {
  for (let i = 0; i * 50 < events.length; i += 1) {
    const answer = await fake.sendEvents(events.slice(i * 50, (i + 1) * 50), { url: urls[i % urls.length] ?? '' });
    expect(answer.status).toBe(200);
  }
}

// Skipped only where the run has no PostgreSQL or no Redis (a quick local run); CI always has both.
describe.skipIf(TEST_DATABASE_URL === undefined || TEST_DATABASE_URL === '' || TEST_REDIS_URL === undefined)('webhooks across instances', () => {
  it('500 contacts whose creation reaches one instance or the other are each enriched and written exactly once', async () => {
    const { fake, urls, creations } = await deployment(500);
    await deliver(fake, creations, urls);
    const writes = await until('every contact written', () => (writesPerContact(fake).size === 500 ? writesPerContact(fake) : undefined), {
      timeoutMs: 90_000,
      intervalMs: 250,
    });
    expect([...writes.values()].every((times) => times === 1)).toBe(true);
  }, 150_000);

  it('an instance SIGKILLed mid-drain loses nothing: the other and the worker finish the jobs it held once its leases run out', async () => {
    // 50 a second: the drain lasts about 6 s, long enough to kill an instance in the middle of it.
    const { fake, env, urls, creations, instances } = await deployment(300, 50);
    const [doomed] = instances;
    const pid = doomed?.child.pid;
    const storage = await openStorage(env.DATABASE_URL);
    try {
      await deliver(fake, creations, urls);
      // The moment the doomed instance's workers hold a batch.
      const held = await until(
        'a batch leased by the doomed instance',
        async () => {
          const mine = (await storage.queue.list({ state: 'running' })).filter((job) => job.leaseOwner !== null && workerProcess(job.leaseOwner)?.pid === pid);
          return mine.length > 0 ? mine.map((job) => job.id) : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 20 },
      );
      if (doomed !== undefined) await killProcess(doomed);
      let seen = '';
      await until(
        'every contact written',
        async () => {
          const states = (await storage.queue.list({ limit: 10_000 })).reduce<Record<string, number>>(
            (acc, job) => ({ ...acc, [`${job.kind}:${job.state}`]: (acc[`${job.kind}:${job.state}`] ?? 0) + 1 }),
            {},
          );
          const owners = [
            ...new Set(
              (await storage.queue.list({ state: 'running', limit: 10_000 })).map(
                (job) => `${job.leaseOwner} until ${job.leaseExpiresAt} attempts ${job.attempts}`,
              ),
            ),
          ];
          seen = `written ${writesPerContact(fake).size}; jobs ${JSON.stringify(states)}; owners ${JSON.stringify(owners)}; pids ${instances.map((p) => p.child.pid).join(',')} doomed ${pid} now ${new Date().toISOString()}`;
          // Written, and every job settled (a worker completes its jobs just after its write lands). A
          // webhook batch expanded by the killed instance may be expanded again: more jobs, no more writes.
          const unsettled = Object.entries(states).filter(([key]) => !key.endsWith(':done')).length;
          return writesPerContact(fake).size === 300 && unsettled === 0 ? true : undefined;
        },
        { timeoutMs: 60_000, intervalMs: 250, context: () => `${seen}\n${instances[1]?.output().slice(-3000) ?? ''}` },
      );
      const jobs = await storage.queue.list({ limit: 10_000 });
      expect(jobs.filter((job) => held.includes(job.id)).map((job) => job.state)).toEqual(held.map(() => 'done'));
      expect(jobs.filter((job) => job.state !== 'done')).toEqual([]);
    } finally {
      await storage.store.close();
    }
  }, 150_000);
});
