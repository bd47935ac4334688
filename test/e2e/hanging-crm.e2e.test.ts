// SIGTERM of the real server (`node server/main.ts`, default settings) while its worker waits on a
// HubSpot API call that never answers: the call is aborted once the shutdown grace is over, its job
// goes back to the queue uncounted, and the process exits 0, well before the call's own timeout.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccount } from '../../core/accounts/admin.ts';
import { NoSnapshotMatcher } from '../../core/enrich/production-matcher.ts';
import { EnrichService } from '../../core/enrich/service.ts';
import { MemoryRateLimiter } from '../../core/limits/rate-limiter.ts';
import { loadSecretBox } from '../../core/secrets/secret-box.ts';
import { HUBSPOT_PROVIDER } from '../../connectors/hubspot/connector.ts';
import { ConnectorRegistry, createBridge } from '../../bridge/bridge.ts';
import { enrichJob } from '../../bridge/enrich-job.ts';
import { openDataFolder } from '../../server/runtime.ts';
import { startHangingServer } from '../support/hanging-server.ts';
import { tempDir } from '../support/harness.ts';
import { type Proc, killProcess, startServerProcess, until } from '../support/processes.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('a server whose CRM hangs', () => {
  it('SIGTERM with a hanging HubSpot call in flight: the call is aborted, its job released, and the server exits 0', { timeout: 60_000 }, async () => {
    for (const name of ['HUBSPOT_TIMEOUT_MS', 'SHUTDOWN_TIMEOUT_MS']) expect(process.env[name], `${name}: this test is about the defaults`).toBeUndefined();
    const hanging = await startHangingServer();
    cleanups.push(() => hanging.close());
    const dataDir = tempDir('enrichbridge-hanging-e2e-');
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const key = randomBytes(32).toString('hex');
    const env = { DATA_DIR: dataDir, ENRICHBRIDGE_SECRET_KEY: key, LOG_LEVEL: 'info' };

    const opened = await openDataFolder(dataDir);
    const { store, queue, db } = opened;
    const bridge = createBridge({
      db,
      store,
      queue,
      box: loadSecretBox({ dataDir, env: { ENRICHBRIDGE_SECRET_KEY: key } }),
      service: new EnrichService({ store, rateLimiter: new MemoryRateLimiter(), productionMatcher: new NoSnapshotMatcher() }),
      connectors: new ConnectorRegistry(),
    });
    await createAccount(store, 'acme', { careerIntelligence: true });
    const installation = await bridge.installations.create({
      provider: HUBSPOT_PROVIDER,
      externalAccountId: '99999',
      environment: 'sandbox',
      target: { kind: 'local', accountName: 'acme' },
      crmCredentials: { kind: 'static', accessToken: 'pat-na1-hanging', clientSecret: 'hanging-secret', appId: '1160452', apiBaseUrl: hanging.url },
    });
    await queue.enqueue(enrichJob(installation.id, { object: 'contact', recordId: '1001' }));
    await store.close();

    const { proc } = await startServerProcess(env, 'node');
    let server: Proc | null = proc;
    cleanups.push(() => (server === null ? undefined : killProcess(proc)));
    await until("the worker's HubSpot call in flight", () => (hanging.pending() > 0 ? true : undefined), { timeoutMs: 20_000, context: () => proc.output() });

    // A hang limit, not a speed measure: short of the call's own 30 s timeout, so only the abort ends it.
    const exit = proc.stop();
    const code = await Promise.race([exit, new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 25_000))]);
    expect(code, proc.output()).toBe(0);
    server = null;
    expect(proc.output()).toContain('"msg":"stopped"');
    await until("the aborted call's connection closed", () => (hanging.pending() === 0 ? true : undefined));

    const after = await openDataFolder(dataDir);
    try {
      // Given back, not failed: the abort was ours, not the CRM's, and does not count as an attempt.
      // (The worker also queued the portal's journal pull at start: the enrichment is the job in question.)
      expect((await after.queue.list()).filter((job) => job.kind === 'enrich')).toMatchObject([
        { state: 'queued', attempts: 0, leaseOwner: null, lastError: null },
      ]);
    } finally {
      await after.store.close();
    }
  });
});
