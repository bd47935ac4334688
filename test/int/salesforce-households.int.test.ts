// NPSP household Accounts (connectors/salesforce/npsp-households.ts, bridge/pipeline/households.ts), on
// the server's runtime with a worker against the fake org with NPSP on: per installation, household
// fields go on the Contact (record), its household Account (household) or both; two contacts of one
// household write the household once; a contact moved to another household is enriched again; with no
// career field written, a second member of a household takes the household's answer without a lookup.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CAREER_FIELDS } from '../../core/contract/schemas.ts';
import { enrichDedupeKey, enrichJob } from '../../bridge/enrich-job.ts';
import type { InstallationSettings, LogEntry } from '../../bridge/model.ts';
import type { Worker } from '../../bridge/worker.ts';
import { erasePerson } from '../../bridge/person-erasure.ts';
import { privacySweepJob } from '../../connectors/salesforce/privacy.ts';
import type { Runtime } from '../../server/runtime.ts';
import { type FakeRecord, type FakeSalesforce, personaContact, startFakeSalesforce } from '../support/fake-salesforce.ts';
import { until } from '../support/processes.ts';
import { persona } from '../support/requests.ts';
import { type SalesforceRig, salesforceCli, startSalesforceRig } from '../support/salesforce-rig.ts';

const HOUSEHOLD = { npe01__SYSTEM_AccountType__c: 'Household Account' };
const NO_CAREER = CAREER_FIELDS.map((field) => `career.${field}`);

let fake: FakeSalesforce;
let rig: SalesforceRig;
let runtime: Runtime;
let worker: Worker;
let orgs = 0;

beforeAll(async () => {
  fake = await startFakeSalesforce({ npsp: true });
  rig = await startSalesforceRig('households');
  ({ runtime, worker } = rig);
});

afterAll(async () => {
  await rig?.close();
  await fake?.close();
});

/** An installation of its own on the fake org (another org id each), with these settings. */
async function install(settings: Partial<InstallationSettings>): Promise<string> {
  orgs += 1;
  return rig.connect(fake, { orgId: `00D0000000000${String(orgs).padStart(2, '0')}AAA`, settings, outbound: false });
}

/** Enriches the contacts in one batch and gives each one's log (oldest first). */
async function enrich(installationId: string, contacts: readonly FakeRecord[], force = false): Promise<LogEntry[][]> {
  await runtime.opened.queue.enqueueMany(contacts.map((c) => enrichJob(installationId, { object: 'Contact', recordId: c.id, trigger: 'manual', force })));
  worker.wake();
  await until(
    'the jobs settled',
    async () =>
      (await runtime.opened.queue.findPending(contacts.map((c) => enrichDedupeKey(installationId, 'Contact', c.id)))) === undefined ? true : undefined,
    { timeoutMs: 30_000 },
  );
  return Promise.all(contacts.map(async (c) => runtime.bridge.pipelineStore.listLog({ installationId, recordId: c.id })));
}

/** A spouse at the persona's address: matched by the address, so the same household. */
function spouse(name: string, of: ReturnType<typeof persona>, accountId: string): Record<string, string> {
  return {
    FirstName: name,
    LastName: of.last_name,
    MailingStreet: of.address,
    MailingCity: of.city,
    MailingState: of.state,
    MailingPostalCode: of.zipcode,
    AccountId: accountId,
  };
}

/** Runs the installation's privacy sweep (Forget this Individual) once, through the worker. */
async function sweep(installationId: string): Promise<void> {
  const job = privacySweepJob(installationId);
  await runtime.opened.queue.enqueueMany([job]);
  worker.wake();
  await until('the sweep done', async () => ((await runtime.opened.queue.findPending([job.dedupeKey ?? ''])) === undefined ? true : undefined), {
    timeoutMs: 30_000,
  });
}

/** A new installation writing household fields on household Accounts, and Amanda Taylor and her spouse as Contacts of one. */
async function taylorHousehold(spouseName: string) {
  const id = await install({ householdFieldsOn: 'household' });
  const amanda = persona('Amanda Taylor');
  const home = fake.createAccount('Taylor Household', HOUSEHOLD);
  const first = await fake.createContact(personaContact(amanda, { AccountId: home.id }), { notify: false });
  const second = await fake.createContact(spouse(spouseName, amanda, home.id), { notify: false });
  return { id, amanda, home, first, second };
}

const householdValues = (record: FakeRecord) =>
  Object.entries(fake.record(record.id).fields).filter(([name, value]) => name.startsWith('WF_HH_') && value !== null && value !== false);

describe('NPSP household Accounts', () => {
  it('two contacts of one household Account write one household answer, once, to the Account', async () => {
    const { id, amanda, home, first, second } = await taylorHousehold('Sam');
    const logs = await enrich(id, [first, second]);
    expect(logs.map((log) => log.at(-1)?.outcome)).toEqual(['enriched', 'enriched']);
    // The Account got the household once; the contacts keep none of it, but their career and status.
    expect(fake.updatesOf(home.id)).toHaveLength(1);
    expect(fake.record(home.id).fields).toMatchObject({ WF_HH_Net_Worth__c: amanda.household?.net_worth, WF_HH_Windfall_Id__c: amanda.household?.windfall_id });
    expect(householdValues(first)).toEqual([]);
    expect(householdValues(second)).toEqual([]);
    expect(fake.record(first.id).fields).toMatchObject({ WF_Enrichment_Status__c: 'enriched', WF_Career_Job_Title__c: amanda.career?.job_title });
    // Enriched again later (forced), the same household changes nothing on the Account.
    await enrich(id, [second], true);
    expect(fake.updatesOf(home.id)).toHaveLength(1);
    const state = (await runtime.bridge.pipelineStore.recordStates(id, 'Account', [home.id])).get(home.id);
    expect(state).toMatchObject({ householdSource: `Contact/${first.id}`, windfallId: amanda.household?.windfall_id });
  });

  it('household fields on both: the Contact and its household Account each hold them', async () => {
    const id = await install({ householdFieldsOn: 'both' });
    const daniel = persona('Daniel Garcia');
    const home = fake.createAccount('Garcia Household', HOUSEHOLD);
    const contact = await fake.createContact(personaContact(daniel, { AccountId: home.id }), { notify: false });
    expect((await enrich(id, [contact]))[0]?.at(-1)?.outcome).toBe('enriched');
    expect(fake.record(home.id).fields).toMatchObject({ WF_HH_Net_Worth__c: daniel.household?.net_worth });
    expect(fake.record(contact.id).fields).toMatchObject({ WF_HH_Net_Worth__c: daniel.household?.net_worth });
  });

  it('a contact moved to another household is enriched again and writes its new household Account', async () => {
    const id = await install({ householdFieldsOn: 'household' });
    const michelle = persona('Michelle Robinson');
    const before = fake.createAccount('Robinson Household', HOUSEHOLD);
    const after = fake.createAccount('Robinson-Lee Household', HOUSEHOLD);
    const contact = await fake.createContact(personaContact(michelle, { AccountId: before.id }), { notify: false });
    await enrich(id, [contact]);
    // Unchanged, the next message is skipped; moved (the households flow sends it), it is enriched.
    expect((await enrich(id, [contact]))[0]?.at(-1)?.outcome).toBe('skipped:unchanged');
    fake.record(contact.id).fields['AccountId'] = after.id;
    expect((await enrich(id, [contact]))[0]?.at(-1)?.outcome).toBe('enriched');
    expect(fake.record(after.id).fields).toMatchObject({ WF_HH_Net_Worth__c: michelle.household?.net_worth });
  });

  it('with no career field written, a second member of a household takes its answer without a lookup', async () => {
    const id = await install({ householdFieldsOn: 'household', excludedFields: NO_CAREER });
    const james = persona('James Thompson');
    const home = fake.createAccount('Thompson Household', HOUSEHOLD);
    const first = await fake.createContact(personaContact(james, { AccountId: home.id }), { notify: false });
    const firstLog = await enrich(id, [first]);
    expect(firstLog[0]?.at(-1)).toMatchObject({ outcome: 'enriched' });
    expect(firstLog[0]?.at(-1)?.reusedFrom).toBeUndefined();
    const second = await fake.createContact(spouse('Alex', james, home.id), { notify: false });
    const [secondLog] = await enrich(id, [second]);
    expect(secondLog?.at(-1)).toMatchObject({ outcome: 'enriched', reusedFrom: `Contact/${first.id}`, latencyMs: null, quotaConsumed: 0 });
    expect(fake.updatesOf(home.id)).toHaveLength(1);
    // Its career is not the first member's: none written, and the status says so.
    expect(fake.record(second.id).fields).toMatchObject({ WF_Career_Matched__c: false, WF_Household_Matched__c: true });
    // Two members arriving together follow one lookup.
    const other = fake.createAccount('Catherine White Household', HOUSEHOLD);
    const catherine = persona('Catherine White');
    const a = await fake.createContact(personaContact(catherine, { AccountId: other.id }), { notify: false });
    const b = await fake.createContact(spouse('Jo', catherine, other.id), { notify: false });
    const together = await enrich(id, [a, b]);
    expect(together.map((log) => log.at(-1)?.reusedFrom)).toEqual([undefined, `Contact/${a.id}`]);
  });

  it('erasing the person whose answer a household Account holds blanks the Account too', async () => {
    const id = await install({ householdFieldsOn: 'household' });
    const elizabeth = persona('Elizabeth Brown');
    const home = fake.createAccount('Brown Household', HOUSEHOLD);
    const contact = await fake.createContact(personaContact(elizabeth, { AccountId: home.id }), { notify: false });
    await enrich(id, [contact]);
    expect(householdValues(home)).not.toEqual([]);
    const done = await erasePerson(
      {
        store: runtime.bridge.pipelineStore,
        connectorFor: runtime.bridge.connectorFor,
        suppressor: { store: runtime.opened.store.suppressions, list: runtime.bridge.suppressions, findSubjects: null },
      },
      { emails: [elizabeth.email] },
      { blankCrm: true, actor: 'test' },
    );
    expect(done.installations.find((i) => i.installation.id === id)).toMatchObject({ records: 2, blanked: 2, notBlanked: 0 });
    expect(householdValues(home)).toEqual([]);
    expect(await runtime.bridge.pipelineStore.recordStates(id, 'Account', [home.id])).toEqual(new Map());
  });

  it('forgetting the person whose answer a household Account holds blanks the Account too, by the privacy sweep and by a job alike', async () => {
    // The sweep reads the flagged Contacts' identity fields only (no AccountId): the Account is found by its row's mark.
    for (const [name, by] of [
      ['Jane Doe', 'sweep'],
      ['Michael Williams', 'job'],
    ] as const) {
      const id = await install({ householdFieldsOn: 'household' });
      const person = persona(name);
      const home = fake.createAccount(`${person.last_name} Household`, HOUSEHOLD);
      const contact = await fake.createContact(personaContact(person, { AccountId: home.id }), { notify: false });
      await enrich(id, [contact]);
      expect({ by, held: householdValues(home).length > 0 }).toEqual({ by, held: true });

      fake.setIndividual(contact.id, { ShouldForget: true });
      if (by === 'sweep') await sweep(id);
      else await enrich(id, [contact], true);
      expect({ by, left: householdValues(home) }).toEqual({ by, left: [] });
      expect(await runtime.bridge.pipelineStore.recordStates(id, 'Account', [home.id])).toEqual(new Map());
      expect(await runtime.bridge.pipelineStore.recordStates(id, 'Contact', [contact.id])).toEqual(new Map());
    }
  });

  it('forgetting a person leaves a household Account that holds another member’s answer', async () => {
    const { id, home, first, second } = await taylorHousehold('Robert');
    await enrich(id, [first, second]);
    const held = householdValues(home);
    expect(held).not.toEqual([]);
    const [state] = (await runtime.bridge.pipelineStore.recordStates(id, 'Account', [home.id])).values();
    // The spouse is forgotten: the Account holds the first contact's answer, and keeps it.
    expect(state?.householdSource).toBe(`Contact/${first.id}`);
    fake.setIndividual(second.id, { ShouldForget: true });
    await sweep(id);
    expect(await runtime.bridge.pipelineStore.recordStates(id, 'Contact', [second.id])).toEqual(new Map());
    expect(householdValues(home)).toEqual(held);
    expect((await runtime.bridge.pipelineStore.recordStates(id, 'Account', [home.id])).size).toBe(1);
  });

  it('a contact of an organization Account keeps household fields on the Contact', async () => {
    const id = await install({ householdFieldsOn: 'household' });
    const robert = persona('Robert Smith');
    const company = fake.createAccount('Smith Hardware');
    const contact = await fake.createContact(personaContact(robert, { AccountId: company.id }), { notify: false });
    await enrich(id, [contact]);
    expect(fake.record(contact.id).fields).toMatchObject({ WF_HH_Net_Worth__c: robert.household?.net_worth });
    expect(fake.updatesOf(company.id)).toEqual([]);
  });

  it('on the record (the default), a Contact is read as before and its Account is never written', async () => {
    const id = await install({});
    const sarah = persona('Sarah Johnson');
    const home = fake.createAccount('Johnson Household', HOUSEHOLD);
    const contact = await fake.createContact(personaContact(sarah, { AccountId: home.id }), { notify: false });
    await enrich(id, [contact]);
    expect(fake.record(contact.id).fields).toMatchObject({ WF_HH_Net_Worth__c: sarah.household?.net_worth });
    expect(fake.updatesOf(home.id)).toEqual([]);
    const read = fake.requests.map((r) => r.query['q'] ?? '').find((q) => q.includes(contact.id));
    expect(read).not.toContain('npe01__SYSTEM_AccountType__c');
  });
});

describe('enrichbridge salesforce households', () => {
  const cli = () => salesforceCli(rig);

  it('puts household fields on the household Account when the org has NPSP and our Account fields', async () => {
    const id = await install({});
    const { printed, run } = cli();
    await run('households', id, '--on', 'both');
    expect(printed).toEqual([
      'NPSP household Accounts in the org: yes',
      'household fields on Account deployed: yes',
      `household fields of ${id}: on the person's record and on their household record (an NPSP household Account)`,
    ]);
    expect((await runtime.bridge.installations.require(id)).settings.householdFieldsOn).toBe('both');
  });

  it('refuses household or both in an org without NPSP, and names what is missing', async () => {
    const plain = await startFakeSalesforce({});
    try {
      const id = await rig.connect(plain, { orgId: '00D0000000000ZZAAA', outbound: false });
      await expect(cli().run('households', id, '--on', 'household')).rejects.toThrow(/no npe01__SYSTEM_AccountType__c/);
      await expect(cli().run('households', id, '--on', 'somewhere')).rejects.toThrow(/--on takes record, household, both/);
      expect((await runtime.bridge.installations.require(id)).settings.householdFieldsOn).toBe('record');
    } finally {
      await plain.close();
    }
  });
});
