// Salesforce's privacy requests (connectors/salesforce/privacy.ts), on the server's app and runtime with a
// worker, against the stateful fake org: a record whose Individual says "Forget this Individual" is
// forgotten (never enriched, remembered for the installation so a re-created one is skipped as
// suppressed), the hourly sweep forgets a record enriched before its person asked (our fields blanked
// in the org, our state erased), "Don't Process" / "Don't Profile" exclude a record, and an org without
// Data Protection and Privacy is enriched as before, its flags tried once a day.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrichDedupeKey } from '../../bridge/enrich-job.ts';
import type { Worker } from '../../bridge/worker.ts';
import { privacySweepJob } from '../../connectors/salesforce/privacy.ts';
import type { Runtime } from '../../server/runtime.ts';
import { type FakeRecord, type FakeSalesforce, personaContact, startFakeSalesforce } from '../support/fake-salesforce.ts';
import { until } from '../support/processes.ts';
import { persona } from '../support/requests.ts';
import { type SalesforceRig, startSalesforceRig } from '../support/salesforce-rig.ts';

let fake: FakeSalesforce;
/** An org without Data Protection and Privacy. */
let plain: FakeSalesforce;
let rig: SalesforceRig;
let runtime: Runtime;
let worker: Worker;
let installationId: string;
let plainInstallationId: string;

beforeAll(async () => {
  fake = await startFakeSalesforce();
  plain = await startFakeSalesforce({ dataProtection: false });
  rig = await startSalesforceRig('privacy');
  ({ runtime, worker } = rig);
  installationId = await rig.connect(fake);
  plainInstallationId = await rig.connect(plain);
});

afterAll(async () => {
  await rig?.close();
  await fake?.close();
  await plain?.close();
});

const status = (org: FakeSalesforce, record: FakeRecord) => org.record(record.id).fields['WF_Enrichment_Status__c'];

async function outcomesOf(id: string, recordId: string, count = 1): Promise<string[]> {
  return until(
    `${count} log entries for ${recordId}`,
    async () => {
      const entries = await runtime.bridge.pipelineStore.listLog({ installationId: id, recordId });
      return entries.length >= count ? entries.map((e) => e.outcome) : undefined;
    },
    { timeoutMs: 30_000 },
  );
}

/** Waits until the record's enrichment job, queued before its outbound message was acknowledged, is no longer queued or running. */
async function settled(id: string, object: string, recordId: string): Promise<void> {
  await until(
    'the record settled',
    async () => ((await runtime.opened.queue.findPending([enrichDedupeKey(id, object, recordId)])) === undefined ? true : undefined),
    {
      timeoutMs: 30_000,
    },
  );
}

async function sweep(id: string): Promise<void> {
  const job = privacySweepJob(id);
  const { created } = await runtime.opened.queue.enqueueMany([job]);
  expect(created).toBe(1);
  worker.wake();
  await until('the sweep done', async () => ((await runtime.opened.queue.findPending([job.dedupeKey ?? ''])) === undefined ? true : undefined), {
    timeoutMs: 30_000,
  });
  const failed = (await runtime.opened.queue.list({ state: 'dead' })).filter((j) => j.kind === job.kind);
  expect(failed.map((j) => j.lastError)).toEqual([]);
}

describe("Salesforce's Individual: Forget this Individual", () => {
  it('forgets a record whose Individual says Forget this Individual: not enriched, skipped:suppressed, and a Contact re-created with its e-mail is skipped as suppressed', async () => {
    const amanda = persona('Amanda Taylor');
    const contact = await fake.createContact(personaContact(amanda), { notify: false });
    fake.setIndividual(contact.id, { ShouldForget: true });
    await fake.fire([contact]);
    await settled(installationId, 'Contact', contact.id);
    expect(fake.updatesOf(contact.id)).toEqual([]);
    // Erased means no trace: not even the log entry of its skip is kept.
    expect(await runtime.bridge.pipelineStore.listLog({ installationId, recordId: contact.id })).toEqual([]);
    expect(await runtime.bridge.pipelineStore.recordStates(installationId, 'Contact', [contact.id])).toEqual(new Map());

    // The same person entered again, with no Individual of its own: remembered for this installation.
    const again = await fake.createContact({ LastName: 'Taylor', Email: amanda.email });
    expect(await outcomesOf(installationId, again.id)).toEqual(['skipped:suppressed']);
    expect(fake.updatesOf(again.id)).toEqual([]);
  });

  it('the privacy sweep forgets a record enriched before its person asked: our fields blanked in the org, our state erased, a second sweep sends nothing', async () => {
    const daniel = persona('Daniel Garcia');
    const contact = await fake.createContact(personaContact(daniel));
    await until('the contact enriched', () => (status(fake, contact) === 'enriched' ? true : undefined), { timeoutMs: 30_000 });
    expect(fake.record(contact.id).fields['WF_HH_Net_Worth__c']).not.toBeNull();

    fake.setIndividual(contact.id, { ShouldForget: true });
    const updatesBefore = fake.updatesOf(contact.id).length;
    await sweep(installationId);
    const fields = fake.record(contact.id).fields;
    expect(Object.entries(fields).filter(([name, value]) => name.startsWith('WF_') && value !== null && value !== false)).toEqual([]);
    expect(fake.updatesOf(contact.id)).toHaveLength(updatesBefore + 1);
    expect(await runtime.bridge.pipelineStore.recordStates(installationId, 'Contact', [contact.id])).toEqual(new Map());
    expect(await runtime.bridge.pipelineStore.listLog({ installationId, recordId: contact.id })).toEqual([]);
    const sweepQueries = fake.requests.map((r) => r.query['q'] ?? '').filter((q) => q.includes(' FROM Contact WHERE Individual.ShouldForget = true'));
    expect(sweepQueries.at(-1)).toMatch(/^SELECT Id, Individual\.LastModifiedDate, FirstName, .* ORDER BY Individual\.LastModifiedDate ASC$/);

    // Run again: the watermark moved past it, and nothing of ours is left to blank either way.
    await sweep(installationId);
    expect(fake.updatesOf(contact.id)).toHaveLength(updatesBefore + 1);
    expect(
      fake.requests
        .map((r) => r.query['q'] ?? '')
        .filter((q) => q.includes(' FROM Contact WHERE Individual.ShouldForget = true'))
        .at(-1),
    ).toMatch(/AND Individual\.LastModifiedDate >= \d{4}-\d\d-\d\dT/);

    // Re-created by a rep with the same phone: not enriched in this installation again.
    const again = await fake.createContact({ LastName: daniel.last_name, Phone: daniel.phone });
    expect(await outcomesOf(installationId, again.id)).toEqual(['skipped:suppressed']);
  });
});

describe("Salesforce's Individual: Don't Process, Don't Profile", () => {
  it("excludes a record whose Individual says Don't Process or Don't Profile, with the status written and nothing else", async () => {
    for (const [name, flag] of [
      ['Robert Smith', 'HasOptedOutProcessing'],
      ['Jennifer Davis', 'HasOptedOutProfiling'],
    ] as const) {
      const p = persona(name);
      const lead = await fake.createLead({ FirstName: p.first_name, LastName: p.last_name, Email: p.email, Company: 'Acme' }, { notify: false });
      fake.setIndividual(lead.id, { [flag]: true });
      await fake.fire([lead]);
      expect(await outcomesOf(installationId, lead.id), flag).toEqual(['skipped:excluded']);
      expect(status(fake, lead)).toBe('excluded');
      expect(fake.record(lead.id).fields['WF_HH_Net_Worth__c'], flag).toBeNull();
    }
  });
});

describe('an org without Data Protection and Privacy', () => {
  it('is read without the flags after one INVALID_FIELD and enriched as before; the next read and the sweep do not try them again', async () => {
    const first = await plain.createContact(personaContact(persona('Amanda Taylor')));
    await until('enriched', () => (status(plain, first) === 'enriched' ? true : undefined), { timeoutMs: 30_000 });
    const refused = plain.requests.filter((r) => r.status === 400);
    expect(refused).toHaveLength(1);
    expect(refused[0]?.query['q']).toContain('Individual.ShouldForget');

    const second = await plain.createContact(personaContact(persona('Daniel Garcia')));
    await until('enriched', () => (status(plain, second) === 'enriched' ? true : undefined), { timeoutMs: 30_000 });
    const queriesBefore = plain.requests.length;
    await sweep(plainInstallationId);
    expect(plain.requests.filter((r) => r.status === 400)).toHaveLength(1);
    expect(plain.requests.slice(queriesBefore).filter((r) => (r.query['q'] ?? '').includes('Individual'))).toEqual([]);
  });
});
