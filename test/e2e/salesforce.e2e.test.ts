// The Salesforce connector across processes: the real server (`node server/main.ts`) and the CLI against a
// stateful fake org on loopback. Outbound messages (SOAP) and signed JSON callouts in, WF_* fields out on the
// fake's records, and what must not happen: double work on a redelivered notification, a loop on our own
// write, a crash on a malformed envelope, work queued for an org that is not connected.
// `salesforce connect` and `salesforce outbound-url` run as commands; the account before them, the log,
// jobs and installation read back while the server runs, and the operator's resume, are done in-process
// on the same data folder (those commands are pipeline-cli's and jobs-cli's to test): each CLI start
// costs seconds of CPU.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { signEvents } from '../../connectors/salesforce/events.ts';
import { createAccount } from '../../core/accounts/admin.ts';
import type { Runtime } from '../../server/runtime.ts';
import { asJson, openFolderRuntime, withFolderRuntime } from '../support/folder-runtime.ts';
import type { Persona } from '../../core/sandbox/personas.ts';
import { type FakeRecord, type FakeSalesforce, type FakeValue, fakeId18, personaContact, startFakeSalesforce } from '../support/fake-salesforce.ts';
import { tempDir } from '../support/harness.ts';
import { type Proc, REPO, freePort, startProcess, killProcess, until as untilDone } from '../support/processes.ts';
import { persona } from '../support/requests.ts';

const execFileAsync = promisify(execFile);
const V = '/services/data/v62.0';

const LogSchema = z.array(z.object({ recordId: z.string(), outcome: z.string(), fieldsWritten: z.array(z.string()), detail: z.string().nullable() }));
type LogEntries = z.infer<typeof LogSchema>;
const JobsSchema = z.array(z.object({ kind: z.string(), state: z.string(), payload: z.object({ recordId: z.string().optional() }).loose() }));

let fake: FakeSalesforce;
let server: Proc;
let serverUrl: string;
let dataDir: string;
let env: Record<string, string>;
let installationId: string;
let signingSecret: string;
/** The data folder opened in-process beside the server, for reading back. */
let folder: Runtime | undefined;

/** `enrichbridge …` on this suite's data folder; nothing the shell running the tests set decides what it sees. */
async function run(args: readonly string[]): Promise<{ stdout: string; stderr: string }> {
  const inherited = Object.entries(process.env).filter(
    (e): e is [string, string] => e[1] !== undefined && !e[0].startsWith('SALESFORCE_') && !e[0].startsWith('HUBSPOT_') && e[0] !== 'PUBLIC_URL',
  );
  return execFileAsync(process.execPath, [path.join(REPO, 'bin/enrichbridge.js'), ...args], {
    cwd: REPO,
    env: { ...Object.fromEntries(inherited), ...env },
    timeout: 20_000,
  });
}

beforeAll(async () => {
  const port = await freePort();
  serverUrl = `http://127.0.0.1:${port}`;
  fake = await startFakeSalesforce();
  dataDir = tempDir('enrichbridge-salesforce-e2e-');
  env = { DATA_DIR: dataDir, ENRICHBRIDGE_SECRET_KEY: randomBytes(32).toString('hex'), SALESFORCE_ALLOW_ANY_HOST: 'true', LOG_LEVEL: 'info' };
  // As `accounts create e2e --career-intelligence` would.
  await withFolderRuntime(env, ({ opened }) => createAccount(opened.store, 'e2e', { careerIntelligence: true }));
  const connected = await run([
    ...['salesforce', 'connect', '--org-id', fake.orgId, '--instance-url', fake.url, '--access-token', fake.accessToken],
    ...['--account', 'e2e', '--env', 'sandbox'],
  ]);
  installationId = connected.stdout.trim();
  expect(installationId).toMatch(/^\S+$/);
  signingSecret = /signing secret[^:]*: (\S+)/.exec(connected.stderr)?.[1] ?? '';
  expect(signingSecret).not.toBe('');
  // The outbound-message URL, as `connect` tells the admin (no PUBLIC_URL here: a placeholder host), and as outbound-url prints it.
  const told = /outbound messages go to: https:\/\/YOUR_PUBLIC_HOST(\/webhooks\/salesforce\/outbound-message\/\S+)/.exec(connected.stderr)?.[1] ?? '';
  expect(told).not.toBe('');
  fake.setOutboundUrl(`${serverUrl}${told}`);
  server = startProcess(process.execPath, ['--max-semi-space-size=32', 'bin/server.js'], { ...env, PORT: String(port), WORKER_CONCURRENCY: '2' });
  // `outbound-url` only reads: it runs while the server starts.
  const [outboundUrl] = await Promise.all([run(['salesforce', 'outbound-url', installationId]), server.waitFor(/"msg":"listening"/)]);
  expect(outboundUrl.stdout.trim()).toBe(`https://YOUR_PUBLIC_HOST${told}`);
  folder = await openFolderRuntime(env);
});

afterAll(async () => {
  if (server !== undefined) await killProcess(server);
  await folder?.close();
  await fake?.close();
  if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
});

function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  return untilDone(what, probe, { timeoutMs, context: () => server.output().slice(-4_000) });
}

/** Resolves once the fake record's WF_Enrichment_Status__c holds `status`. */
function enriched(record: FakeRecord, status = 'enriched'): Promise<FakeRecord> {
  return until(`${record.object} ${record.id} ${status}`, () =>
    fake.record(record.id).fields['WF_Enrichment_Status__c'] === status ? fake.record(record.id) : undefined,
  );
}

function opened(): Runtime {
  if (folder === undefined) throw new Error('the data folder is not open');
  return folder;
}

/** What `log --installation ID --record RECORD --json --limit 1000` prints, read in-process. */
async function logOf(recordId: string): Promise<LogEntries> {
  return LogSchema.parse(asJson(await opened().bridge.pipelineStore.listLog({ installationId, recordId, limit: 1000 })));
}

function logUntil(recordId: string, what: string, done: (entries: LogEntries) => boolean): Promise<LogEntries> {
  return until(what, async () => {
    const entries = await logOf(recordId);
    return done(entries) ? entries : undefined;
  });
}

/** The record's jobs' states, as `jobs list --json` shows them, read in-process. */
async function jobStatesOf(recordId: string): Promise<string[]> {
  return JobsSchema.parse(asJson(await opened().opened.queue.list({ limit: 1000 })))
    .filter((job) => job.payload.recordId === recordId)
    .map((job) => job.state);
}

/** The record's job states once none is queued or running. */
function settled(recordId: string): Promise<string[]> {
  return until(`every job of ${recordId} settled`, async () => {
    const states = await jobStatesOf(recordId);
    return states.every((s) => s === 'done' || s === 'dead') ? states : undefined;
  });
}

function leadOf(p: Persona): Record<string, FakeValue> {
  return {
    FirstName: p.first_name,
    LastName: p.last_name,
    Email: p.email,
    Phone: p.phone,
    Street: p.address,
    City: p.city,
    State: p.state,
    PostalCode: p.zipcode,
    Company: p.career?.company_name ?? 'Independent',
  };
}

const DATE_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+0000$/;

describe('Salesforce end to end: the server process and a fake org', () => {
  it('writes WF_* fields to a new Contact (with an Account) and a new Lead; our own write carries client=enrichbridge and fires no message', async () => {
    const amanda = persona('Amanda Taylor');
    const daniel = persona('Daniel Garcia');
    const account = fake.createAccount(amanda.career?.company_name ?? '');
    const contact = await fake.createContact(personaContact(amanda, { AccountId: account.id }));
    const lead = await fake.createLead(leadOf(daniel));

    for (const record of [contact, lead]) {
      const [delivery, ...more] = fake.deliveriesOf(record.id);
      expect(more).toEqual([]);
      expect(delivery).toMatchObject({ trigger: 'create', status: 200, acked: true, fault: null });
      expect(delivery?.contentType).toMatch(/^text\/xml\b/);
    }

    const c = await enriched(contact);
    expect(c.fields).toMatchObject({
      WF_HH_Net_Worth__c: amanda.household?.net_worth,
      WF_HH_Windfall_Id__c: amanda.household?.windfall_id,
      WF_HH_Philanthropic_Cause__c: amanda.household?.philanthropic_cause?.join('; '),
      WF_Career_Job_Title__c: amanda.career?.job_title,
      WF_Household_Matched__c: true,
      WF_Career_Matched__c: true,
    });
    expect(c.fields['WF_Enriched_At__c']).toMatch(DATE_TIME);
    const l = await enriched(lead);
    expect(l.fields).toMatchObject({
      WF_HH_Net_Worth__c: daniel.household?.net_worth,
      WF_Career_Job_Title__c: daniel.career?.job_title,
      WF_Career_Matched__c: true,
    });

    // The Contact was read with its Account's name, both with their Individual's privacy flags: SOQL, one call each.
    const contactRead = fake.requests.find((r) => r.path === `${V}/query` && (r.query['q'] ?? '').includes(contact.id));
    expect(contactRead?.query['q']).toMatch(/^SELECT Id, .*\bAccount\.Name\b.*\bIndividual\.ShouldForget\b.* FROM Contact WHERE Id IN \(/);
    expect(contactRead?.status).toBe(200);
    const leadRead = fake.requests.find((r) => r.path === `${V}/query` && (r.query['q'] ?? '').includes(lead.id));
    expect(leadRead?.query['q']).toMatch(/^SELECT Id, .*\bIndividual\.HasOptedOutProcessing\b.* FROM Lead WHERE Id IN \(/);

    // Every call the server made (and the connect probe) was ours: our token and Sforce-Call-Options.
    expect(fake.requests.length).toBeGreaterThanOrEqual(5);
    for (const request of fake.requests) {
      expect(request.headers['sforce-call-options']).toBe('client=enrichbridge');
      expect(request.token).toBe(fake.accessToken);
    }
    // One write each, tagged as ours; the flows fire on creation only, so it sent no outbound message.
    for (const record of [contact, lead]) {
      expect(fake.updatesOf(record.id).map((u) => u.callOptions)).toEqual(['client=enrichbridge']);
      expect(fake.record(record.id).lastModifiedBy).toBe('enrichbridge');
      expect(fake.deliveriesOf(record.id).map((d) => d.trigger)).toEqual(['create']);
    }
    const log = await logUntil(contact.id, 'the contact logged', (entries) => entries.length > 0);
    expect(log.map((e) => e.outcome)).toEqual(['enriched']);
    expect(log[0]?.fieldsWritten).toEqual(expect.arrayContaining(['WF_HH_Net_Worth__c', 'WF_Career_Job_Title__c', 'WF_Enrichment_Status__c']));
  });

  it('treats a redelivered notification as done, and a new notification for the unchanged record as skipped:unchanged', async () => {
    const michelle = persona('Michelle Robinson');
    const contact = await fake.createContact(personaContact(michelle));
    const [first] = fake.deliveriesOf(contact.id);
    if (first === undefined) throw new Error('no outbound message for the new contact');
    await enriched(contact);

    // Salesforce's retry of the same message (same notification id): acknowledged, nothing queued.
    const again = await fake.redeliver(first);
    expect(again).toMatchObject({ status: 200, acked: true });
    expect(again.notifications.map((n) => n.id)).toEqual(first.notifications.map((n) => n.id));
    // Acknowledged means queued: had the redelivery queued work, a job would be pending or have run now.
    await settled(contact.id);
    expect((await logOf(contact.id)).map((e) => e.outcome)).toEqual(['enriched']);

    // A new notification (a fresh id) for the same record, nothing changed in it.
    const fresh = await fake.fire([fake.record(contact.id)]);
    expect(fresh).toMatchObject({ status: 200, acked: true });
    expect(fresh.notifications[0]?.id).not.toBe(first.notifications[0]?.id);
    const log = await logUntil(contact.id, 'the second notification logged', (entries) => entries.length >= 2);
    expect(log.map((e) => e.outcome)).toEqual(['enriched', 'skipped:unchanged']);
    expect(fake.updatesOf(contact.id)).toHaveLength(1);
    expect(fake.record(contact.id).fields['WF_Career_Job_Title__c']).toBe(michelle.career?.job_title);
  });

  it('answers a malformed envelope and an unknown org with a SOAP fault, queues nothing, and keeps running', async () => {
    const malformed = await fake.post(readFileSync(path.join(REPO, 'test/fixtures/salesforce/outbound-malformed.xml'), 'utf8'));
    expect(malformed).toMatchObject({ status: 500, acked: false });
    expect(malformed.contentType).toMatch(/^text\/xml\b/);
    expect(malformed.fault).toEqual(expect.any(String));
    const garbage = await fake.post('not xml at all');
    expect(garbage).toMatchObject({ status: 500, acked: false, fault: expect.any(String) });

    const james = persona('James Thompson');
    const contact = await fake.createContact(personaContact(james), { notify: false });
    const otherOrg = fakeId18(`00D8a00000${fake.orgId.slice(10, 15) === 'ZZZZZ' ? 'YYYYY' : 'ZZZZZ'}`);
    const unknown = await fake.fire([contact], { organizationId: otherOrg });
    expect(unknown).toMatchObject({ status: 500, acked: false, fault: expect.stringContaining('not connected') });
    expect(await jobStatesOf(contact.id)).toEqual([]);
    expect(server.child.exitCode).toBeNull();

    // The same record from the org that is connected: acknowledged and enriched.
    expect(await fake.fire([contact])).toMatchObject({ status: 200, acked: true });
    await enriched(contact);
  });

  it('enriches from the signed JSON callout, and refuses a bad signature with 401', async () => {
    const post = (body: string, headers: Record<string, string>) =>
      fetch(`${serverUrl}/webhooks/salesforce/events`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    const now = () => Math.floor(Date.now() / 1000);

    const catherine = persona('Catherine White');
    const lead = await fake.createLead(leadOf(catherine), { notify: false });
    const body = JSON.stringify({ orgId: fake.orgId, object: 'Lead', ids: [lead.id] });
    const ts = now();
    const ok = await post(body, { 'x-enrichbridge-timestamp': String(ts), 'x-enrichbridge-signature': signEvents(signingSecret, ts, body) });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ queued: 1 });
    const l = await enriched(lead);
    expect(l.fields['WF_Career_Job_Title__c']).toBe(catherine.career?.job_title);

    const jane = persona('Jane Doe');
    const other = await fake.createLead(leadOf(jane), { notify: false });
    const otherBody = JSON.stringify({ orgId: fake.orgId, object: 'Lead', ids: [other.id] });
    const later = now();
    const wrong = await post(otherBody, {
      'x-enrichbridge-timestamp': String(later),
      'x-enrichbridge-signature': signEvents('not-the-secret', later, otherBody),
    });
    expect(wrong.status).toBe(401);
    // Signed for another body: the body sent is not the one signed.
    const swapped = await post(otherBody, { 'x-enrichbridge-timestamp': String(ts), 'x-enrichbridge-signature': signEvents(signingSecret, ts, body) });
    expect(swapped.status).toBe(401);
    const unsigned = await post(otherBody, {});
    expect(unsigned.status).toBe(401);
    expect(await jobStatesOf(other.id)).toEqual([]);
    expect(fake.updatesOf(other.id)).toEqual([]);
    expect(fake.record(other.id).fields['WF_Enrichment_Status__c']).toBeNull();
  });

  // Last: it pauses the installation (and resumes it).
  it("pauses the installation on REQUEST_LIMIT_EXCEEDED, reporting the org's API usage, and enriches once resumed", async () => {
    const robert = persona('Robert Smith');
    // The whole allowance is the installation's to use (no share held back): Salesforce's own refusal is the limit.
    await opened().bridge.installations.updateSettings(installationId, { crmApiShare: 1 });
    fake.failNext(1, 'REQUEST_LIMIT_EXCEEDED', { path: `${V}/query`, soql: / FROM Lead WHERE Id IN / });
    const lead = await fake.createLead(leadOf(robert));
    expect(fake.deliveriesOf(lead.id)[0]).toMatchObject({ status: 200, acked: true });

    const log = await logUntil(lead.id, 'the limit logged', (entries) => entries.length > 0);
    expect(log.map((e) => e.outcome)).toEqual(['skipped:crm_limit_paused']);
    // The usage Salesforce reported with the refusal (Sforce-Limit-Info), for the operator.
    expect(log[0]?.detail).toContain(`${fake.apiUsage.max}/${fake.apiUsage.max} calls in 24 h`);
    const ShownSchema = z.object({ status: z.string(), pauseReason: z.string().nullable(), pausedUntil: z.string().nullable() }).loose();
    // As `installations show ID --json` prints it, read in-process.
    const shown = ShownSchema.parse(asJson(await opened().bridge.installations.require(installationId)));
    expect(shown).toMatchObject({ status: 'paused', pauseReason: 'crm_limit', pausedUntil: expect.any(String) });
    expect(fake.updatesOf(lead.id)).toEqual([]);

    // The allowance comes back (the 24-hour window rolls); an operator lifts the pause.
    fake.apiUsage.used = 0;
    // As `installations resume ID` does.
    await opened().bridge.installations.resume(installationId);
    const l = await enriched(lead);
    expect(l.fields['WF_HH_Net_Worth__c']).toBe(robert.household?.net_worth);
    expect(fake.updatesOf(lead.id)).toHaveLength(1);
  });
});
