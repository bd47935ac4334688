// POST /webhooks/salesforce/trigger, the packaged Apex trigger's callout, over real HTTP on the server's
// app and runtime with a worker, against the stateful fake org. Records are created in the fake without
// their outbound message, then posted as EnrichbridgeRecordSender posts them: `{deliveryId, orgId, object,
// ids}` with the org's record credential in X-Enrichbridge-Org-Secret, as the Named Credential adds it.
// Each test is named after the rule it checks, and looks at the jobs table to see what was queued. Person
// Accounts (the optional person-Account trigger's callouts, object Account) are checked against a second
// fake org that has Person Accounts.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SalesforceRig, startSalesforceRig } from '../support/salesforce-rig.ts';
import { z } from 'zod';
import { ENRICH_JOB } from '../../bridge/enrich-job.ts';
import { SALESFORCE_RECORD_SECRET_HEADER, SALESFORCE_TRIGGER_ROUTE } from '../../connectors/salesforce/paths.ts';
import { recordCredential } from '../../connectors/salesforce/record-routes.ts';
import type { Runtime } from '../../server/runtime.ts';
import { type FakeRecord, type FakeSalesforce, fakeId18, personaContact, personaPersonAccount, startFakeSalesforce } from '../support/fake-salesforce.ts';
import { until } from '../support/processes.ts';
import { persona } from '../support/requests.ts';

/** A connected org other than the fake's. */
const OTHER_ORG_ID = fakeId18('00D3t000004WbXy');

let fake: FakeSalesforce;
let rig: SalesforceRig;
let runtime: Runtime;
let origin: string;
let installationId: string;
let credential: string;
let otherCredential: string;

beforeAll(async () => {
  fake = await startFakeSalesforce();
  rig = await startSalesforceRig('trigger');
  ({ runtime, origin } = rig);
  const { installations } = runtime.bridge;
  installationId = await rig.connect(fake, { outbound: false });
  const other = await rig.connect(fake, { orgId: OTHER_ORG_ID });
  credential = recordCredential(installationId, await installations.recordSecret(installationId));
  otherCredential = recordCredential(other, await installations.recordSecret(other));
});

afterAll(async () => {
  await rig?.close();
  await fake?.close();
});

interface Callout {
  readonly deliveryId: string;
  readonly orgId: string;
  readonly object: string;
  readonly ids: readonly string[];
}

/** The trigger's callout as EnrichbridgeRecordSender sends it; `secret` as the External Credential adds it (none: no header). */
async function send(body: Callout | string, secret: string | null = credential): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${origin}${SALESFORCE_TRIGGER_ROUTE}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...(secret === null ? {} : { [SALESFORCE_RECORD_SECRET_HEADER]: secret }) },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  expect(response.headers.get('content-type')).toMatch(/^application\/json/);
  return { status: response.status, body: z.record(z.string(), z.unknown()).parse(await response.json()) };
}

const callout = (object: 'Contact' | 'Lead' | 'Account', ids: readonly string[], overrides: Partial<Callout> = {}): Callout => ({
  deliveryId: randomUUID(),
  orgId: fake.orgId,
  object,
  ids,
  ...overrides,
});

const JobRow = z.object({ installation_id: z.string(), state: z.string(), payload: z.string() });
const Payload = z.object({ recordId: z.string(), trigger: z.string() });

/** The enrichment jobs on disk, whatever their state (a finished one keeps its payload), of these records. */
async function jobsOf(recordIds: readonly string[]): Promise<{ installationId: string; state: string; recordId: string; trigger: string }[]> {
  const rows = await runtime.opened.db.selectFrom('jobs').select(['installation_id', 'state', 'payload']).where('kind', '=', ENRICH_JOB).execute();
  const wanted = new Set(recordIds);
  return rows
    .map((row) => JobRow.parse(row))
    .map((row) => ({ installationId: row.installation_id, state: row.state, ...Payload.parse(JSON.parse(row.payload)) }))
    .filter((job) => wanted.has(job.recordId));
}

/** A Contact the fake holds without having sent its outbound message: only our callout can queue it. */
const quietContact = (name = 'Amanda Taylor'): Promise<FakeRecord> => fake.createContact(personaContact(persona(name)), { notify: false });

const enriched = (id: string): true | undefined => (fake.record(id).fields['WF_Enrichment_Status__c'] === 'enriched' ? true : undefined);

describe('POST /webhooks/salesforce/trigger', () => {
  it("accepts the org's callout and enriches each record it names, queued once with the trigger create", async () => {
    const first = await quietContact();
    const second = await quietContact('Amanda Taylor');
    expect(await jobsOf([first.id, second.id])).toEqual([]);
    const reply = await send(callout('Contact', [first.id, second.id]));
    expect(reply).toEqual({ status: 200, body: { ok: true, queued: 2, duplicates: 0 } });
    await until('both contacts enriched', () => (enriched(first.id) && enriched(second.id) ? true : undefined), { timeoutMs: 30_000 });
    const jobs = await jobsOf([first.id, second.id]);
    expect(jobs.map((job) => [job.recordId, job.trigger, job.installationId]).sort()).toEqual(
      [
        [first.id, 'create', installationId],
        [second.id, 'create', installationId],
      ].sort(),
    );
    expect(fake.deliveriesOf(first.id)).toEqual([]);
  });

  it('refuses a missing, malformed or wrong credential with 401, before reading the body, and queues nothing', async () => {
    const contact = await quietContact();
    const secretPart = credential.slice(credential.lastIndexOf('.') + 1);
    for (const secret of [null, '', 'no-dot-here', `${installationId}.wrong`, `inst_nobody.${secretPart}`, `${installationId}.${secretPart}x`]) {
      const reply = await send(callout('Contact', [contact.id]), secret);
      expect(reply, String(secret)).toMatchObject({ status: 401, body: { ok: false, reason: 'unauthorised' } });
    }
    // The credential comes first: an unreadable body without it is a 401 too, not a 400.
    expect(await send('not json', null)).toMatchObject({ status: 401, body: { reason: 'unauthorised' } });
    expect(await jobsOf([contact.id])).toEqual([]);
    // The same callout with the org's credential is taken: the refusals were the credential's.
    expect(await send(callout('Contact', [contact.id]))).toMatchObject({ status: 200, body: { ok: true, queued: 1 } });
    expect(await jobsOf([contact.id])).toHaveLength(1);
  });

  it("refuses another org's credential for this org's records (403), and queues nothing for either", async () => {
    const contact = await quietContact();
    expect(await send(callout('Contact', [contact.id]), otherCredential)).toMatchObject({ status: 403, body: { ok: false, reason: 'other_org' } });
    // Nor does this org's credential speak for the other org.
    expect(await send(callout('Contact', [contact.id], { orgId: OTHER_ORG_ID }))).toMatchObject({ status: 403, body: { reason: 'other_org' } });
    expect(await jobsOf([contact.id])).toEqual([]);
  });

  it('queues nothing for a repeated delivery id, even once the first job has finished; a new delivery id queues again', async () => {
    const contact = await quietContact();
    const first = callout('Contact', [contact.id]);
    expect(await send(first)).toMatchObject({ status: 200, body: { queued: 1 } });
    await until('the contact enriched', () => enriched(contact.id), { timeoutMs: 30_000 });
    await until('its job finished', async () =>
      (await jobsOf([contact.id])).every((job) => job.state !== 'queued' && job.state !== 'running') ? true : undefined,
    );
    // The Queueable's retry of the same callout (same id, any case), after the queue's own dedupe of a waiting job no longer applies.
    expect(await send(first)).toEqual({ status: 200, body: { ok: true, queued: 0, duplicates: 1, repeated: true } });
    expect(await send({ ...first, deliveryId: first.deliveryId.toUpperCase() })).toMatchObject({ status: 200, body: { queued: 0, repeated: true } });
    expect(await jobsOf([contact.id])).toHaveLength(1);
    // What stopped it was the delivery id: another callout for the same record is queued.
    expect(await send(callout('Contact', [contact.id]))).toMatchObject({ status: 200, body: { queued: 1 } });
    expect(await jobsOf([contact.id])).toHaveLength(2);
  });

  it('refuses more than 200 ids in one callout (400) and queues none of them', async () => {
    const contact = await quietContact();
    const ids = [contact.id, ...Array.from({ length: 200 }, (_, i) => fakeId18(`0033t${String(i).padStart(10, '0')}`))];
    const reply = await send(callout('Contact', ids));
    expect(reply).toMatchObject({ status: 400, body: { ok: false, reason: 'invalid_body' } });
    expect(String(reply.body['message'])).toContain('ids');
    expect(await jobsOf(ids)).toEqual([]);
    // 200 is the limit, not 199.
    expect(await send(callout('Contact', ids.slice(0, 200)))).toMatchObject({ status: 200, body: { queued: 200 } });
  });

  it('refuses a Lead id under the object Contact (400), and the callout that carries it queues nothing', async () => {
    const contact = await quietContact();
    const lead = await fake.createLead({ FirstName: 'Amanda', LastName: 'Taylor', Company: 'Acme' }, { notify: false });
    const reply = await send(callout('Contact', [contact.id, lead.id]));
    expect(reply).toMatchObject({ status: 400, body: { ok: false, reason: 'invalid_body' } });
    expect(String(reply.body['message'])).toContain('key prefix');
    expect(await jobsOf([contact.id, lead.id])).toEqual([]);
    expect(await send(callout('Lead', [lead.id]))).toMatchObject({ status: 200, body: { queued: 1 } });
  });

  it('queues nothing for an installation that does not enrich on create, as outbound messages are not', async () => {
    const contact = await quietContact();
    const { installations } = runtime.bridge;
    await installations.updateSettings(installationId, { enrichOnCreate: false });
    try {
      const off = callout('Contact', [contact.id]);
      expect(await send(off)).toEqual({ status: 200, body: { ok: true, queued: 0, duplicates: 0, skipped: 'enrich_on_create_off' } });
      expect(await jobsOf([contact.id])).toEqual([]);
    } finally {
      await installations.updateSettings(installationId, { enrichOnCreate: true });
    }
    expect(await send(callout('Contact', [contact.id]))).toMatchObject({ status: 200, body: { queued: 1 } });
  });
});

describe('POST /webhooks/salesforce/trigger: person Accounts, from the optional trigger', () => {
  /** A second org, with Person Accounts, connected to its own installation. */
  let people: FakeSalesforce;
  let peopleInstallation: string;
  let peopleCredential: string;

  beforeAll(async () => {
    people = await startFakeSalesforce({ personAccounts: true });
    const { installations } = runtime.bridge;
    peopleInstallation = await rig.connect(people, { settings: { objects: ['Contact', 'Lead', 'Account'] }, outbound: false });
    peopleCredential = recordCredential(peopleInstallation, await installations.recordSecret(peopleInstallation));
  });

  afterAll(async () => {
    await people?.close();
  });

  const amanda = () => people.createPersonAccount(personaPersonAccount(persona('Amanda Taylor')));
  const accountCallout = (ids: readonly string[]) => callout('Account', ids, { orgId: people.orgId });

  it('queues an Account callout for an installation that names Account, and the person Account is enriched through its __pc fields, Name unwritten', async () => {
    const account = amanda();
    const reply = await send(accountCallout([account.id]), peopleCredential);
    expect(reply).toEqual({ status: 200, body: { ok: true, queued: 1, duplicates: 0 } });
    await until('the person Account enriched', () => (people.record(account.id).fields['WF_Enrichment_Status__pc'] === 'enriched' ? true : undefined), {
      timeoutMs: 30_000,
    });
    expect((await jobsOf([account.id])).map((job) => [job.installationId, job.trigger])).toEqual([[peopleInstallation, 'create']]);
    const p = persona('Amanda Taylor');
    expect(people.record(account.id).fields).toMatchObject({
      WF_HH_Net_Worth__pc: p.household?.net_worth,
      WF_Enriched_At__pc: expect.any(String),
      Name: 'Amanda Taylor',
    });
    const written = people.updatesOf(account.id).flatMap((update) => Object.keys(update.fields));
    expect(written.length).toBeGreaterThan(0);
    expect(written.filter((name) => !name.endsWith('__pc'))).toEqual([]);
  });

  it('leaves a business Account named in a callout alone: queued, then skipped:not_a_person, nothing written', async () => {
    const business = people.createAccount('Magnolia Crossing Logistics');
    expect(await send(accountCallout([business.id]), peopleCredential)).toMatchObject({ status: 200, body: { queued: 1 } });
    await until(
      'the business Account skipped',
      async () => ((await runtime.bridge.pipelineStore.listLog({ installationId: peopleInstallation, recordId: business.id })).length > 0 ? true : undefined),
      { timeoutMs: 30_000 },
    );
    const outcomes = (await runtime.bridge.pipelineStore.listLog({ installationId: peopleInstallation, recordId: business.id })).map((e) => e.outcome);
    expect(outcomes).toEqual(['skipped:not_a_person']);
    expect(people.updatesOf(business.id)).toEqual([]);
  });

  it('queues nothing for an Account callout when the installation does not name Account (none named, or Contact and Lead): 200, skipped object_not_enabled', async () => {
    const account = amanda();
    const { installations } = runtime.bridge;
    const pending = accountCallout([account.id]);
    try {
      for (const objects of [[], ['Contact', 'Lead']]) {
        await installations.updateSettings(peopleInstallation, { objects });
        expect(await send(pending, peopleCredential), JSON.stringify(objects)).toEqual({
          status: 200,
          body: { ok: true, queued: 0, duplicates: 0, skipped: 'object_not_enabled' },
        });
      }
      expect(await jobsOf([account.id])).toEqual([]);
      // The default still takes Contacts: the rule is the object's.
      const contact = await people.createContact(personaContact(persona('Amanda Taylor')), { notify: false });
      expect(await send(callout('Contact', [contact.id], { orgId: people.orgId }), peopleCredential)).toMatchObject({ status: 200, body: { queued: 1 } });
    } finally {
      await installations.updateSettings(peopleInstallation, { objects: ['Contact', 'Lead', 'Account'] });
    }
    // Skipped, not remembered: the same delivery is queued once the installation names Account.
    expect(await send(pending, peopleCredential)).toMatchObject({ status: 200, body: { ok: true, queued: 1 } });
    expect(await jobsOf([account.id])).toHaveLength(1);
  });

  it('refuses a Contact id under the object Account (400), and queues nothing', async () => {
    const contact = await people.createContact(personaContact(persona('Amanda Taylor')), { notify: false });
    const reply = await send(accountCallout([contact.id]), peopleCredential);
    expect(reply).toMatchObject({ status: 400, body: { ok: false, reason: 'invalid_body' } });
    expect(String(reply.body['message'])).toContain('Account 001');
    expect(await jobsOf([contact.id])).toEqual([]);
  });
});
