// The Salesforce record component's API (connectors/salesforce/record-routes.ts) over real HTTP, on the
// server's app and runtime with a worker, against the stateful fake org: a Contact created in the fake is
// enriched through its outbound message, then read and acted on as the component's Apex controller calls
// (the org's credential in X-Enrichbridge-Org-Secret, the org, user and e-mail from UserInfo). A missing
// or wrong credential is refused, another org's id with this org's credential is refused, and an action
// is logged with its actor.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SalesforceRig, startSalesforceRig } from '../support/salesforce-rig.ts';
import { ActionResultSchema } from '../../bridge/record-actions.ts';
import { RecordViewSchema } from '../../bridge/record-view.ts';
import { SALESFORCE_RECORD_ROUTE, SALESFORCE_RECORD_SECRET_HEADER } from '../../connectors/salesforce/paths.ts';
import { recordCredential } from '../../connectors/salesforce/record-routes.ts';
import type { Runtime } from '../../server/runtime.ts';
import { type FakeRecord, type FakeSalesforce, fakeId18, personaContact, startFakeSalesforce } from '../support/fake-salesforce.ts';
import { until } from '../support/processes.ts';
import { persona } from '../support/requests.ts';

/** A connected org other than the fake's. */
const OTHER_ORG_ID = fakeId18('00D3t000004WbXy');
const USER = { userId: '005000000000001AAA', userEmail: 'rep@acme.example' };

let fake: FakeSalesforce;
let rig: SalesforceRig;
let runtime: Runtime;
let origin: string;
let installationId: string;
let credential: string;
let otherCredential: string;
let contact: FakeRecord;

beforeAll(async () => {
  fake = await startFakeSalesforce();
  rig = await startSalesforceRig('record');
  ({ runtime, origin } = rig);
  const { installations } = runtime.bridge;
  installationId = await rig.connect(fake);
  const other = await rig.connect(fake, { orgId: OTHER_ORG_ID });
  credential = recordCredential(installationId, await installations.recordSecret(installationId));
  otherCredential = recordCredential(other, await installations.recordSecret(other));

  contact = await fake.createContact(personaContact(persona('Amanda Taylor')));
  await until('the contact enriched', () => (fake.record(contact.id).fields['WF_Enrichment_Status__c'] === 'enriched' ? true : undefined), {
    timeoutMs: 30_000,
  });
});

afterAll(async () => {
  await rig?.close();
  await fake?.close();
});

const viewUrl = (recordId: string, orgId: string, object = 'Contact'): string =>
  `${origin}${SALESFORCE_RECORD_ROUTE}/${object}/${recordId}?${new URLSearchParams({ orgId, ...USER }).toString()}`;

async function getView(recordId: string, headers: Record<string, string>, orgId = fake.orgId): Promise<{ status: number; body: unknown }> {
  const response = await fetch(viewUrl(recordId, orgId), { headers });
  return { status: response.status, body: await response.json() };
}

async function act(action: string, recordId: string, headers: Record<string, string>, orgId = fake.orgId): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${origin}${SALESFORCE_RECORD_ROUTE}/Contact/${recordId}/${action}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify({ orgId, ...USER }),
  });
  return { status: response.status, body: await response.json() };
}

describe('the record component API', () => {
  it('refuses a request without the credential, or with a wrong one, and says nothing of the record', async () => {
    for (const headers of [
      {},
      { [SALESFORCE_RECORD_SECRET_HEADER]: '' },
      { [SALESFORCE_RECORD_SECRET_HEADER]: 'no-dot-here' },
      { [SALESFORCE_RECORD_SECRET_HEADER]: `${installationId}.wrong` },
      { [SALESFORCE_RECORD_SECRET_HEADER]: `inst_nobody.${credential.split('.')[1] ?? ''}` },
    ]) {
      const view = await getView(contact.id, headers);
      expect(view, JSON.stringify(headers)).toMatchObject({ status: 401, body: { ok: false, reason: 'unauthorised' } });
      expect(JSON.stringify(view.body)).not.toContain('WF_');
      expect(await act('exclude', contact.id, headers)).toMatchObject({ status: 401 });
    }
    expect(fake.record(contact.id).fields['WF_Do_Not_Enrich__c']).not.toBe(true);
  });

  it("refuses another org's credential for this org, and this org's credential for another org", async () => {
    expect(await getView(contact.id, { [SALESFORCE_RECORD_SECRET_HEADER]: otherCredential })).toMatchObject({
      status: 403,
      body: { ok: false, reason: 'other_org' },
    });
    expect(await getView(contact.id, { [SALESFORCE_RECORD_SECRET_HEADER]: credential }, OTHER_ORG_ID)).toMatchObject({
      status: 403,
      body: { reason: 'other_org' },
    });
    expect(await act('undo', contact.id, { [SALESFORCE_RECORD_SECRET_HEADER]: otherCredential })).toMatchObject({ status: 403 });
  });

  it('shows an enriched record: its status, match and the fields written with their provenance', async () => {
    const { status, body } = await getView(contact.id, { [SALESFORCE_RECORD_SECRET_HEADER]: credential });
    expect(status).toBe(200);
    const view = RecordViewSchema.parse(body);
    expect(view).toMatchObject({ installationId, provider: 'salesforce', object: 'Contact', recordId: contact.id, status: { value: 'enriched' } });
    expect(view.household.matched || view.career.matched).toBe(true);
    expect(view.lastEnrichedAt).not.toBeNull();
    const jobTitle = view.fields.find((field) => field.property === 'WF_Career_Job_Title__c');
    expect(jobTitle).toMatchObject({ state: 'ours', replaced: null, value: fake.record(contact.id).fields['WF_Career_Job_Title__c'] });
    expect(view.actions.undo.allowed).toBe(true);
    expect(view.actions.include).toMatchObject({ allowed: false, reason: 'not_excluded' });
  });

  it('refuses a malformed record id or object, and an unknown action', async () => {
    const headers = { [SALESFORCE_RECORD_SECRET_HEADER]: credential };
    expect((await fetch(viewUrl(contact.id, fake.orgId, 'Account'), { headers })).status).toBe(400);
    expect((await getView('00Q000000000001EAA', headers)).status).toBe(400);
    expect(await act('delete', contact.id, headers)).toMatchObject({ status: 404, body: { reason: 'unknown_action' } });
  });

  it('excludes the record, logged with the Salesforce user who asked, and refuses a second Exclude', async () => {
    const headers = { [SALESFORCE_RECORD_SECRET_HEADER]: credential };
    const excluded = await act('exclude', contact.id, headers);
    expect(excluded.status).toBe(200);
    expect(ActionResultSchema.parse(excluded.body)).toEqual({ ok: true, action: 'exclude' });
    expect(fake.record(contact.id).fields['WF_Do_Not_Enrich__c']).toBe(true);
    const log = await runtime.bridge.pipelineStore.listLog({ installationId, recordId: contact.id, limit: 10 });
    expect(log.find((entry) => entry.outcome === 'action:exclude')).toMatchObject({ actor: { userId: USER.userId, email: USER.userEmail } });

    const again = await act('exclude', contact.id, headers);
    expect(again).toMatchObject({ status: 409, body: { ok: false, action: 'exclude', reason: 'already_excluded' } });
    const view = RecordViewSchema.parse((await getView(contact.id, headers)).body);
    expect(view.status.value).toBe('excluded');
    expect(view.excluded).toMatchObject({ by: 'user', actor: { userId: USER.userId, email: USER.userEmail } });

    expect(await act('include', contact.id, headers)).toMatchObject({ status: 200, body: { ok: true, action: 'include' } });
  });
  it('undoes the enrichment, leaving alone and naming a field a person changed since; then Enrich now queues it again, each logged with the user', async () => {
    const headers = { [SALESFORCE_RECORD_SECRET_HEADER]: credential };
    // An unchecked box we wrote reads back empty from Salesforce: still ours, not a person's edit.
    const before = RecordViewSchema.parse((await getView(contact.id, headers)).body);
    expect(before.fields.filter((field) => field.written === false).length).toBeGreaterThan(0);
    expect(before.fields.filter((field) => field.state === 'edited')).toEqual([]);
    // A colleague's edit, as Salesforce would hold it.
    fake.record(contact.id).fields['WF_Career_Job_Title__c'] = 'Chief Giving Officer';
    const undone = await act('undo', contact.id, headers);
    expect(undone.status).toBe(200);
    const result = ActionResultSchema.parse(undone.body);
    expect(result).toMatchObject({ ok: true, action: 'undo' });
    expect(result.ok && result.leftAlone).toEqual(['WF_Career_Job_Title__c']);
    expect(result.ok && result.fields?.find((field) => field.property === 'WF_Career_Job_Title__c')).toMatchObject({
      result: 'left_alone',
      value: 'Chief Giving Officer',
    });
    expect(fake.record(contact.id).fields['WF_Career_Job_Title__c']).toBe('Chief Giving Officer');
    expect(fake.record(contact.id).fields['WF_Enrichment_Status__c']).toBe('undone');
    const view = RecordViewSchema.parse((await getView(contact.id, headers)).body);
    expect(view.status.value).toBe('undone');
    expect(view.undone?.actor).toEqual({ userId: USER.userId, email: USER.userEmail });

    const queued = await act('enrich', contact.id, headers);
    expect(queued).toMatchObject({ status: 200, body: { ok: true, action: 'enrich_now' } });
    const log = await runtime.bridge.pipelineStore.listLog({ installationId, recordId: contact.id, limit: 20 });
    for (const outcome of ['action:undo', 'action:enrich_now']) {
      expect(
        log.find((entry) => entry.outcome === outcome),
        outcome,
      ).toMatchObject({ actor: { userId: USER.userId, email: USER.userEmail } });
    }
  });
  it('refuses the old credential once the secret is rotated, and takes the new one', async () => {
    const { installations } = runtime.bridge;
    const rotated = recordCredential(installationId, await installations.rotateRecordSecret(installationId));
    expect(rotated).not.toBe(credential);
    expect(await installations.recordSecret(installationId)).toBe(rotated.split('.')[1]);
    expect((await getView(contact.id, { [SALESFORCE_RECORD_SECRET_HEADER]: credential })).status).toBe(401);
    expect((await getView(contact.id, { [SALESFORCE_RECORD_SECRET_HEADER]: rotated })).status).toBe(200);
    credential = rotated;
  });
});
