// enrichbridge's share of a Salesforce org's daily API allowance (connectors/salesforce/api-budget.ts), on
// the server's runtime with a worker against the stateful fake org: a backlog of records (as a backfill
// queues them) stops at the share, counting the calls the org received, and waits paused for the CRM's
// limit with its jobs queued; a share of 1 holds nothing back.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../core/accounts/admin.ts';
import { enrichJob } from '../../bridge/enrich-job.ts';
import type { Worker } from '../../bridge/worker.ts';
import { SALESFORCE_PROVIDER } from '../../connectors/salesforce/connector.ts';
import { orgUsage } from '../../connectors/salesforce/api-budget.ts';
import { loadConfig } from '../../server/config.ts';
import { createLogger } from '../../server/logger.ts';
import { type Runtime, openRuntime, startWorker } from '../../server/runtime.ts';
import { type FakeSalesforce, personaContact, startFakeSalesforce } from '../support/fake-salesforce.ts';
import { tempDir } from '../support/harness.ts';
import { until } from '../support/processes.ts';
import { PERSONAS } from '../../core/sandbox/personas.ts';

const logger = createLogger('silent');
const RECORDS = 1000;

let fake: FakeSalesforce;
let runtime: Runtime;
let worker: Worker;
let dataDir: string;

beforeAll(async () => {
  orgUsage.clear();
  // 40 calls a day; other integrations have used 14 of them. At 50 %, enrichbridge stops at 20: 6 calls are ours.
  fake = await startFakeSalesforce({ apiLimit: 40 });
  fake.apiUsage.used = 14;
  dataDir = tempDir('enrichbridge-salesforce-share-');
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', WORKER_CONCURRENCY: '2', SALESFORCE_ALLOW_ANY_HOST: 'true' });
  runtime = await openRuntime(config, logger);
  worker = startWorker(runtime, logger, 2);
  await createAccount(runtime.opened.store, 'share', { careerIntelligence: true, rateLimit: 1000 });
});

afterAll(async () => {
  await worker?.stop();
  await runtime?.close();
  await fake?.close();
  if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
});

async function connect(share: number): Promise<string> {
  const installation = await runtime.bridge.installations.create({
    provider: SALESFORCE_PROVIDER,
    externalAccountId: fake.orgId,
    environment: 'sandbox',
    target: { kind: 'local', accountName: 'share' },
    crmCredentials: {
      kind: 'static',
      instanceUrl: fake.url,
      accessToken: fake.accessToken,
      refreshToken: null,
      issuedAt: null,
      expiresAt: null,
      clientId: null,
      clientSecret: null,
      loginUrl: 'https://test.salesforce.com',
      orgId: fake.orgId,
      userId: null,
      jwt: null,
    },
  });
  await runtime.bridge.installations.updateSettings(installation.id, { crmApiShare: share });
  return installation.id;
}

describe("the installation's share of the org's daily API allowance", () => {
  it('a backlog stops at the share: the calls the org received stay within it, and the installation waits paused for the CRM limit with its jobs queued', async () => {
    const installationId = await connect(0.5);
    const contacts = await fake.createRecords(
      'Contact',
      Array.from({ length: RECORDS }, (_, i) => {
        const p = PERSONAS.at(i % PERSONAS.length) ?? PERSONAS[0];
        if (p === undefined) throw new Error('no sandbox personas');
        return personaContact(p, { LastName: `${p.last_name}${i}` });
      }),
      { notify: false },
    );
    const before = fake.requests.length;
    await runtime.opened.queue.enqueueMany(contacts.map((c) => enrichJob(installationId, { object: 'Contact', recordId: c.id, trigger: 'backfill' })));
    worker.wake();

    const installation = await until(
      'the installation paused',
      async () => {
        const found = await runtime.bridge.installations.require(installationId);
        return found.status === 'paused' ? found : undefined;
      },
      { timeoutMs: 60_000 },
    );
    expect(installation).toMatchObject({ pauseReason: 'crm_limit', pausedUntil: expect.any(String) });
    const pausedFor = Date.parse(installation.pausedUntil ?? '') - Date.now();
    expect(pausedFor).toBeGreaterThan(50 * 60_000);
    await until('no batch running', async () => ((await runtime.opened.queue.countByState()).running ?? 0) === 0 || undefined, { timeoutMs: 30_000 });

    // Ours: at most the 6 calls between 14 and 20 of 40.
    const ours = fake.requests.slice(before);
    expect(ours.length).toBeGreaterThan(0);
    expect(ours.length).toBeLessThanOrEqual(6);
    expect(fake.apiUsage.used).toBeLessThanOrEqual(20);
    const written = contacts.filter((c) => fake.record(c.id).fields['WF_Enrichment_Status__c'] !== null).length;
    expect(written).toBeGreaterThan(0);
    expect(written).toBeLessThan(RECORDS);
    // Nothing lost: the rest wait, queued.
    expect((await runtime.opened.queue.countByState()).queued).toBe(RECORDS - written);
    const paused = (await runtime.bridge.pipelineStore.listLog({ installationId, limit: 2000 })).filter((e) => e.outcome === 'skipped:crm_limit_paused');
    expect(paused.length).toBeGreaterThan(0);
    expect(paused[0]?.detail).toContain("enrichbridge's share of the org's daily API allowance is used");
    expect(paused[0]?.detail).toContain('stops at 20, 50 %');
  });
});
