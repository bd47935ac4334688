// Person Accounts (connectors/salesforce/person-accounts.ts), on the server's runtime with a worker against
// the stateful fake org with Person Accounts on: a person Account is enriched through the Contact fields'
// `__pc` names and its Name is never written; a business Account is left alone; a person Account's
// Individual is honoured; and an installation that does not name Account enriches none.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrichDedupeKey, enrichJob } from '../../bridge/enrich-job.ts';
import type { Worker } from '../../bridge/worker.ts';
import { privacySweepJob } from '../../connectors/salesforce/privacy.ts';
import type { Persona } from '../../core/sandbox/personas.ts';
import type { Runtime } from '../../server/runtime.ts';
import { type FakeRecord, type FakeSalesforce, personaPersonAccount, startFakeSalesforce } from '../support/fake-salesforce.ts';
import { until } from '../support/processes.ts';
import { persona } from '../support/requests.ts';
import { type SalesforceRig, salesforceCli, startSalesforceRig } from '../support/salesforce-rig.ts';

let fake: FakeSalesforce;
let rig: SalesforceRig;
let runtime: Runtime;
let worker: Worker;
/** Names Account among its objects. */
let withAccounts: string;
/** Names none: the connector's defaults, Contacts and Leads. */
let byDefault: string;

beforeAll(async () => {
  fake = await startFakeSalesforce({ personAccounts: true });
  rig = await startSalesforceRig('person');
  ({ runtime, worker } = rig);
  withAccounts = await rig.connect(fake, { settings: { objects: ['Contact', 'Lead', 'Account'] }, outbound: false });
  byDefault = await rig.connect(fake, { orgId: '00D000000000002AAA' });
});

afterAll(async () => {
  await rig?.close();
  await fake?.close();
});

const personFields = (p: Persona) => personaPersonAccount(p);

async function enrichAccount(installationId: string, account: FakeRecord): Promise<string[]> {
  await runtime.opened.queue.enqueueMany([enrichJob(installationId, { object: 'Account', recordId: account.id, trigger: 'manual' })]);
  worker.wake();
  await until(
    'the job settled',
    async () => ((await runtime.opened.queue.findPending([enrichDedupeKey(installationId, 'Account', account.id)])) === undefined ? true : undefined),
    { timeoutMs: 30_000 },
  );
  return (await runtime.bridge.pipelineStore.listLog({ installationId, recordId: account.id })).map((e) => e.outcome);
}

describe('person Accounts', () => {
  it('a person Account is enriched through the __pc fields, and its Name is never written', async () => {
    const amanda = persona('Amanda Taylor');
    const account = fake.createPersonAccount(personFields(amanda));
    expect(await enrichAccount(withAccounts, account)).toEqual(['enriched']);
    const fields = fake.record(account.id).fields;
    expect(fields).toMatchObject({
      WF_Enrichment_Status__pc: 'enriched',
      WF_HH_Net_Worth__pc: amanda.household?.net_worth,
      WF_Career_Job_Title__pc: amanda.career?.job_title,
      Name: 'Amanda Taylor',
    });
    const sent = fake.updatesOf(account.id).flatMap((u) => Object.keys(u.fields));
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.filter((name) => !name.endsWith('__pc'))).toEqual([]);
  });

  it('a business Account is left alone: skipped:not_a_person, nothing written', async () => {
    const business = fake.createAccount('Magnolia Crossing Logistics');
    expect(await enrichAccount(withAccounts, business)).toEqual(['skipped:not_a_person']);
    expect(fake.updatesOf(business.id)).toEqual([]);
  });

  it('a person Account whose PersonIndividual says Forget this Individual is forgotten, not enriched', async () => {
    const daniel = persona('Daniel Garcia');
    const account = fake.createPersonAccount(personFields(daniel));
    fake.setIndividual(account.id, { ShouldForget: true });
    await enrichAccount(withAccounts, account);
    expect(fake.updatesOf(account.id)).toEqual([]);
    const read = fake.requests.map((r) => r.query['q'] ?? '').find((q) => q.includes(account.id));
    expect(read).toMatch(/^SELECT Id, IsPersonAccount, FirstName, .*PersonIndividual\.ShouldForget.* FROM Account WHERE Id IN/);
  });

  it('the privacy sweep forgets a person Account enriched before its PersonIndividual said Forget this Individual: its __pc fields blanked', async () => {
    const jennifer = persona('Jennifer Davis');
    const account = fake.createPersonAccount(personFields(jennifer));
    expect(await enrichAccount(withAccounts, account)).toEqual(['enriched']);
    fake.setIndividual(account.id, { ShouldForget: true });
    const job = privacySweepJob(withAccounts);
    await runtime.opened.queue.enqueueMany([job]);
    worker.wake();
    await until('the sweep done', async () => ((await runtime.opened.queue.findPending([job.dedupeKey ?? ''])) === undefined ? true : undefined), {
      timeoutMs: 30_000,
    });
    const ours = Object.entries(fake.record(account.id).fields).filter(([name, value]) => name.endsWith('__pc') && value !== null && value !== false);
    expect(ours).toEqual([]);
    expect(await runtime.bridge.pipelineStore.recordStates(withAccounts, 'Account', [account.id])).toEqual(new Map());
    const sweep = fake.requests.map((r) => r.query['q'] ?? '').find((q) => q.includes(' FROM Account WHERE PersonIndividual.ShouldForget = true'));
    expect(sweep).toMatch(/^SELECT Id, PersonIndividual\.LastModifiedDate, IsPersonAccount, /);
  });

  it('an installation that does not name Account enriches no Account: skipped:object_not_enabled', async () => {
    const account = fake.createPersonAccount(personFields(persona('Robert Smith')));
    expect(await enrichAccount(byDefault, account)).toEqual(['skipped:object_not_enabled']);
    expect(fake.updatesOf(account.id)).toEqual([]);
  });
});

describe('enrichbridge salesforce person-accounts', () => {
  const cli = () => salesforceCli(rig);

  it("says whether the org has Person Accounts (its Account describes IsPersonAccount), and --enable adds Account to the installation's objects", async () => {
    const id = await rig.connect(fake, { orgId: '00D000000000003AAA' });
    const { run, printed } = cli();
    await run('person-accounts', id);
    expect(printed).toEqual(['person accounts in the org: yes', `enriched by ${id}: no`]);
    await run('person-accounts', id, '--enable');
    expect(printed.slice(2)).toEqual(['person accounts in the org: yes', `enriched by ${id}: yes (Account among its objects)`]);
    expect((await rig.runtime.bridge.installations.require(id)).settings.objects).toEqual(['Contact', 'Lead', 'Account']);
    await run('person-accounts', id, '--disable');
    expect((await rig.runtime.bridge.installations.require(id)).settings.objects).toEqual(['Contact', 'Lead']);
  });

  it('refuses --enable for an org without Person Accounts, and changes nothing', async () => {
    const plain = await startFakeSalesforce();
    try {
      const id = await rig.connect(plain, { outbound: false });
      const { run } = cli();
      await expect(run('person-accounts', id, '--enable')).rejects.toThrow(`org ${plain.orgId} has no Person Accounts`);
      expect((await rig.runtime.bridge.installations.require(id)).settings.objects).toEqual([]);
    } finally {
      await plain.close();
    }
  });
});
