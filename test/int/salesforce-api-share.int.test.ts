// enrichbridge's share of a Salesforce org's daily API allowance (connectors/salesforce/api-budget.ts), on
// the server's runtime with a worker against the stateful fake org: a backlog of records (as a backfill
// queues them) stops at the share, counting the calls the org received, and waits paused for the CRM's
// limit with its jobs queued; a share of 1 holds nothing back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrichJob } from '../../bridge/enrich-job.ts';
import { orgUsage } from '../../connectors/salesforce/api-budget.ts';
import { PERSONAS } from '../../core/sandbox/personas.ts';
import { type FakeSalesforce, personaContact, startFakeSalesforce } from '../support/fake-salesforce.ts';
import { until } from '../support/processes.ts';
import { type SalesforceRig, startSalesforceRig } from '../support/salesforce-rig.ts';

const RECORDS = 1000;

let fake: FakeSalesforce;
let rig: SalesforceRig;

beforeAll(async () => {
  orgUsage.clear();
  // 40 calls a day; other integrations have used 14 of them. At 50 %, enrichbridge stops at 20: 6 calls are ours.
  fake = await startFakeSalesforce({ apiLimit: 40 });
  fake.apiUsage.used = 14;
  rig = await startSalesforceRig('share', { careerIntelligence: true, rateLimit: 1000 });
});

afterAll(async () => {
  await rig?.close();
  await fake?.close();
});

describe("the installation's share of the org's daily API allowance", () => {
  it('a backlog stops at the share: the calls the org received stay within it, and the installation waits paused for the CRM limit with its jobs queued', async () => {
    const installationId = await rig.connect(fake, { settings: { crmApiShare: 0.5 }, outbound: false });
    const { runtime, worker } = rig;
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
