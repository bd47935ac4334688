// One tenant cannot stall the others: a HubSpot portal whose API accepts connections and never
// answers, beside a healthy one (the fake HubSpot), both worked by the server's own worker on a real
// data folder. The healthy portal's contacts are enriched and written while the hanging portal's
// requests are still pending; the hanging portal's jobs time out and wait for a retry with backoff.
import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccount } from '../../core/accounts/admin.ts';
import type { Job } from '../../bridge/job-queue.ts';
import { HUBSPOT_PROVIDER } from '../../connectors/hubspot/connector.ts';
import { connectPortal } from '../../connectors/hubspot/install.ts';
import { hubspotPropertyFor } from '../../connectors/hubspot/fields.ts';
import { enrichJob } from '../../bridge/enrich-job.ts';
import type { Worker } from '../../bridge/worker.ts';
import { loadConfig } from '../../server/config.ts';
import { createLogger } from '../../server/logger.ts';
import { openRuntime, startWorker } from '../../server/runtime.ts';
import { type FakeContact, startFakeHubSpot, staticCredentials } from '../support/fake-hubspot.ts';
import { startHangingServer } from '../support/hanging-server.ts';
import { tempDir } from '../support/harness.ts';
import { until } from '../support/processes.ts';
import { persona } from '../support/requests.ts';

const APP_ID = '1160452';
const STATUS = hubspotPropertyFor('status.enrichment_status') ?? '';
const CLIENT_SECRET = 'hanging-crm-client-secret';
const logger = createLogger('silent');

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('one tenant cannot stall the others', () => {
  it(
    "a HubSpot portal that never answers: another portal's contacts are enriched and written meanwhile, and the hanging portal's jobs time out and wait for a retry with backoff",
    { timeout: 60_000 },
    async () => {
      const hanging = await startHangingServer();
      cleanups.push(() => hanging.close());
      const fake = await startFakeHubSpot({ appId: APP_ID, clientSecret: CLIENT_SECRET, webhookUrl: null });
      cleanups.push(() => fake.close());
      const dataDir = tempDir('enrichbridge-hanging-crm-');
      cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
      // Default settings but a short HubSpot timeout, so the test sees it run out.
      const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', WORKER_CONCURRENCY: '0', HUBSPOT_TIMEOUT_MS: '3000' });
      const runtime = await openRuntime(config, logger);
      cleanups.push(() => runtime.close());
      const { store, queue } = runtime.opened;
      await createAccount(store, 'acme', { careerIntelligence: true });
      const { installation: healthy } = await connectPortal({
        installations: runtime.bridge.installations,
        portalId: fake.portalId,
        credentials: staticCredentials(fake, CLIENT_SECRET, APP_ID),
        target: { kind: 'local', accountName: 'acme' },
        environment: 'sandbox',
      });
      const stuck = await runtime.bridge.installations.create({
        provider: HUBSPOT_PROVIDER,
        externalAccountId: '99999',
        environment: 'sandbox',
        target: { kind: 'local', accountName: 'acme' },
        crmCredentials: { kind: 'static', accessToken: 'pat-na1-hanging', clientSecret: CLIENT_SECRET, appId: APP_ID, apiBaseUrl: hanging.url },
      });
      // The hanging portal's backlog is older and larger than a batch: both of the worker's lanes could take it.
      for (let i = 1; i <= 250; i += 1) await queue.enqueue(enrichJob(stuck.id, { object: 'contact', recordId: String(1000 + i) }));
      const people = ['Amanda Taylor', 'Jane Doe'].map((name) => persona(name));
      const contacts: FakeContact[] = [];
      for (const p of people) contacts.push(await fake.createContact({ firstname: p.first_name, lastname: p.last_name, email: p.email }, { notify: false }));
      for (const contact of contacts) await queue.enqueue(enrichJob(healthy.id, { object: 'contact', recordId: contact.id }));

      const worker: Worker = startWorker(runtime, logger, 2);
      cleanups.push(() => worker.stop());
      await until(
        "the healthy portal's contacts enriched",
        () => (contacts.every((c) => fake.contacts.get(c.id)?.properties[STATUS] === 'enriched') ? true : undefined),
        { timeoutMs: 20_000 },
      );
      // ...while the hanging portal's call is still waiting for its answer.
      expect(hanging.pending()).toBeGreaterThan(0);

      // Its enrichments (the worker also queued each portal's journal pull when it started).
      const ofStuck = async (): Promise<Job[]> =>
        (await queue.list({ limit: 10_000 })).filter((job) => job.installationId === stuck.id && job.kind === 'enrich');
      await until("the hanging portal's jobs back in the queue", async () => ((await ofStuck()).every((job) => job.state === 'queued') ? true : undefined), {
        timeoutMs: 30_000,
      });
      const settled = await ofStuck();
      const timedOut = settled.filter((job) => job.lastError !== null);
      // The slice whose read timed out failed once, with the reason; the queue retries it after its backoff.
      expect(timedOut.length).toBeGreaterThanOrEqual(100);
      for (const job of timedOut) {
        expect(job).toMatchObject({ attempts: 1, leaseOwner: null, lastError: expect.stringMatching(/HubSpot batch read contacts: no answer within 3000 ms/) });
      }
      // The rest of its batch was not tried against a CRM that does not answer: it waits as long, uncounted.
      for (const job of settled.filter((j) => j.lastError === null)) expect(job).toMatchObject({ attempts: 0, leaseOwner: null });
      const soonest = Math.min(...settled.map((job) => Date.parse(job.runAt)));
      expect(soonest).toBeGreaterThan(Date.now() + 10_000);
      expect(hanging.pending()).toBe(0); // the timed-out calls' connections are closed
    },
  );
});
