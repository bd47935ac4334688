// The HubSpot connector across processes: the real server (`node server/main.ts`) and the CLI against a
// stateful fake HubSpot on loopback. Signed webhook batches in, `wf_*` properties out, and what must not
// happen: loops on our own writes, double work on duplicate deliveries, a human's edit overwritten.
// The portal is connected with `enrichbridge hubspot connect`; the account before it, and the log, jobs
// and settings read back while the server runs, are done in-process on the same data folder (what
// `log`, `jobs list` and `installations show` print is pipeline-cli's and jobs-cli's to test): each CLI
// start costs seconds of CPU.
import { randomBytes, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HUBSPOT_EVENTS_JOB } from '../../connectors/hubspot/intake.ts';
import { createAccount } from '../../core/accounts/admin.ts';
import type { Runtime } from '../../server/runtime.ts';
import { asJson, openFolderRuntime, withFolderRuntime } from '../support/folder-runtime.ts';
import { type FakeContact, type FakeHubSpot, type WebhookDelivery, startFakeHubSpot } from '../support/fake-hubspot.ts';
import { tempDir } from '../support/harness.ts';
import { type Proc, cli, freePort, startProcess, killProcess, until as untilDone } from '../support/processes.ts';
import { persona } from '../support/requests.ts';
import { HUBSPOT_PATHS } from '../../connectors/hubspot/version.ts';

const APP_ID = '1160452';
const PORTAL_ID = '62515';
const UPDATE_PATH = HUBSPOT_PATHS.contactsBatchUpdate;

const LogSchema = z.array(z.object({ recordId: z.string(), outcome: z.string(), fieldsWritten: z.array(z.string()) }));
type LogEntries = z.infer<typeof LogSchema>;
// Enrichment jobs carry a record id; the stored webhook batches (kind hubspot.events) are left out.
const JobsSchema = z.array(z.object({ kind: z.string(), state: z.string(), payload: z.object({ recordId: z.string().optional() }).loose() }));
const UpdateBodySchema = z.object({ inputs: z.array(z.object({ id: z.string(), properties: z.record(z.string(), z.string()) })) });

let fake: FakeHubSpot;
let server: Proc;
let dataDir: string;
let env: Record<string, string>;
let installationId: string;
/** The data folder opened in-process beside the server, for reading back. */
let folder: Runtime | undefined;

beforeAll(async () => {
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const clientSecret = randomUUID();
  fake = await startFakeHubSpot({ webhookUrl: `${publicUrl}/webhooks/hubspot`, appId: APP_ID, portalId: PORTAL_ID, clientSecret });
  dataDir = tempDir('enrichbridge-hubspot-e2e-');
  env = { DATA_DIR: dataDir, ENRICHBRIDGE_SECRET_KEY: randomBytes(32).toString('hex'), LOG_LEVEL: 'info' };
  // As `accounts create e2e --career-intelligence` would.
  await withFolderRuntime(env, ({ opened }) => createAccount(opened.store, 'e2e', { careerIntelligence: true }));
  const connect = [
    ...['hubspot', 'connect', '--portal-id', PORTAL_ID, '--access-token', fake.tokens.staticToken, '--client-secret', clientSecret],
    ...['--app-id', APP_ID, '--account', 'e2e', '--env', 'sandbox', '--api-base-url', fake.url],
  ];
  installationId = (await cli(connect, env)).stdout.trim();
  expect(installationId).toMatch(/^\S+$/);
  folder = await openFolderRuntime(env);
  server = startProcess(process.execPath, ['bin/server.js'], {
    ...env,
    PORT: String(port),
    PUBLIC_URL: publicUrl,
    HUBSPOT_CLIENT_ID: fake.clientId,
    HUBSPOT_CLIENT_SECRET: clientSecret,
    HUBSPOT_APP_ID: APP_ID,
    HUBSPOT_API_BASE_URL: fake.url,
  });
  await server.waitFor(/"msg":"listening"/);
});

afterAll(async () => {
  if (server !== undefined) await killProcess(server);
  await folder?.close();
  await fake?.close();
  if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
});

function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  return untilDone(what, probe, { timeoutMs, context: () => server.output().slice(-4_000) });
}

function contact(id: string): FakeContact {
  const found = fake.contacts.get(id);
  if (found === undefined) throw new Error(`the fake has no contact ${id}`);
  return found;
}

/** Resolves once the contact's `wf_*` property holds `value`. */
function propertyReaches(id: string, property: string, value: string, timeoutMs?: number): Promise<FakeContact> {
  return until(`${property} = ${value} on contact ${id}`, () => (contact(id).properties[property] === value ? contact(id) : undefined), timeoutMs);
}

/** The write-back requests (answered or not) that carried this contact, with what they sent it. */
function updatesOf(id: string): { status: number; properties: Record<string, string> }[] {
  return fake.requests
    .filter((r) => r.method === 'POST' && r.path === UPDATE_PATH)
    .flatMap((r) => {
      const input = UpdateBodySchema.parse(r.body).inputs.find((i) => i.id === id);
      return input === undefined ? [] : [{ status: r.status, properties: input.properties }];
    });
}

function opened(): Runtime {
  if (folder === undefined) throw new Error('the data folder is not open');
  return folder;
}

/** What `log --installation ID --record RECORD --json --limit 1000` prints, read in-process. */
async function logOf(recordId: string): Promise<LogEntries> {
  return LogSchema.parse(asJson(await opened().bridge.pipelineStore.listLog({ installationId, recordId, limit: 1000 })));
}

/** The queue as `jobs list --json` shows it (its oldest 1,000), read in-process. */
async function jobs(): Promise<z.infer<typeof JobsSchema>> {
  return JobsSchema.parse(asJson(await opened().opened.queue.list({ limit: 1000 })));
}

const finished = (state: string) => state === 'done' || state === 'dead';

/**
 * Whether every webhook batch acknowledged so far has been worked: a batch is stored as a job of its
 * own (hubspot.events), and only working it enqueues enrichments or erases a record.
 */
async function batchesWorked(): Promise<boolean> {
  return (await jobs()).filter((job) => job.kind === HUBSPOT_EVENTS_JOB).every((job) => finished(job.state));
}

/** Polls the log until `done` holds for it. */
function logUntil(recordId: string, what: string, done: (entries: LogEntries) => boolean, timeoutMs = 15_000): Promise<LogEntries> {
  return until(
    what,
    async () => {
      const entries = await logOf(recordId);
      return done(entries) ? entries : undefined;
    },
    timeoutMs,
  );
}

/**
 * The record's enrichment job states once every webhook batch acknowledged so far has been worked (so
 * each has enqueued what it would) and none of the record's jobs is queued or running.
 */
function settled(recordId: string): Promise<string[]> {
  return until(`every job of ${recordId} settled`, async () => {
    if (!(await batchesWorked())) return undefined;
    const states = (await jobs()).filter((job) => job.kind === 'enrich' && job.payload.recordId === recordId).map((job) => job.state);
    return states.length > 0 && states.every(finished) ? states : undefined;
  });
}

/** Once every webhook batch acknowledged so far has been worked. */
function allBatchesWorked(): Promise<true> {
  return until('every webhook batch worked', async () => ((await batchesWorked()) ? true : undefined));
}

/** The first delivery that carried a `type` event for the contact. */
function deliveryOf(type: string, id: string): WebhookDelivery {
  const found = fake.deliveries.find((d) => d.events.some((e) => e.subscriptionType === type && String(e.objectId) === id));
  if (found === undefined) throw new Error(`no ${type} delivery for ${id}`);
  return found;
}

const amanda = persona('Amanda Taylor');
const identity = (p: ReturnType<typeof persona>) => ({ firstname: p.first_name, lastname: p.last_name, email: p.email });

describe('HubSpot end to end: the server process and a fake HubSpot', () => {
  it('writes wf_* properties to a new contact, and its own write-back events enrich nothing', { timeout: 30_000 }, async () => {
    const created = await fake.createContact(identity(amanda));
    expect(deliveryOf('contact.creation', created.id).status).toBe(200);

    const enriched = await propertyReaches(created.id, 'wf_enrichment_status', 'enriched');
    expect(enriched.properties).toMatchObject({
      wf_hh_net_worth: String(amanda.household?.net_worth),
      wf_hh_windfall_id: amanda.household?.windfall_id,
      wf_career_job_title: amanda.career?.job_title,
      wf_household_matched: 'true',
      wf_career_matched: 'true',
    });
    expect(enriched.properties.wf_enriched_at).toMatch(/^\d{4}-\d\d-\d\dT/);

    // Our write raised one propertyChange per property, as HubSpot does; the server heard them all.
    await fake.webhooksIdle();
    const echoes = fake.deliveries.filter((d) =>
      d.events.some((e) => String(e.objectId) === created.id && e.subscriptionType === 'contact.propertyChange' && e.changeSource === 'INTEGRATION'),
    );
    expect(echoes.length).toBeGreaterThan(0);
    expect(echoes.every((d) => d.status === 200 && d.events.every((e) => e.sourceId === APP_ID))).toBe(true);

    // An identity property changed by our own app (INTEGRATION, our app id) is dropped as well.
    await fake.updateContact(created.id, { phone: '+1 404 555 0100' }, { source: 'INTEGRATION' });
    await fake.webhooksIdle();

    // Acknowledged means queued: had any echo enqueued work, a second job would exist now.
    expect(await settled(created.id)).toEqual(['done']);
    expect(updatesOf(created.id)).toHaveLength(1);
    const log = await logOf(created.id);
    expect(log.map((e) => e.outcome)).toEqual(['enriched']);
    expect(log[0]?.fieldsWritten).toEqual(expect.arrayContaining(['wf_hh_net_worth', 'wf_career_job_title', 'wf_enrichment_status']));
  });

  it('treats a duplicate delivery of the creation batch as harmless', { timeout: 30_000 }, async () => {
    const daniel = persona('Daniel Garcia');
    const created = await fake.createContact(identity(daniel));
    const first = deliveryOf('contact.creation', created.id);
    // HubSpot's retry of a batch it thinks failed: at once, and again after the work is done.
    expect((await fake.redeliver(first)).status).toBe(200);
    await propertyReaches(created.id, 'wf_enrichment_status', 'enriched');
    expect((await fake.redeliver(first)).status).toBe(200);

    // A duplicate lands as a no-op (its twin still waits), a rerun of the running twin, or a job of its
    // own once the twin is done; acknowledged means queued, so once every job of the record is done,
    // all of them have run. Each must end without a second enrichment.
    await settled(created.id);
    const outcomes = (await logOf(created.id)).map((e) => e.outcome);
    expect(outcomes[0]).toBe('enriched');
    // The late duplicate always runs (after the enrichment was written), and finds nothing changed.
    expect(outcomes.length).toBeGreaterThanOrEqual(2);
    expect(outcomes.slice(1).every((o) => o === 'skipped:unchanged')).toBe(true);
    expect(updatesOf(created.id)).toHaveLength(1);
    expect(contact(created.id).properties.wf_career_job_title).toBe(daniel.career?.job_title);
  });

  it('re-enriches after a human changes the e-mail, overwriting our values but not a wf_ value a human set', { timeout: 30_000 }, async () => {
    // As `installations show ID --json` prints it, read in-process.
    const shown = z.object({ settings: z.object({ overwriteMode: z.string() }) }).loose();
    expect(shown.parse(asJson(await opened().bridge.installations.require(installationId))).settings.overwriteMode).toBe('tracked');
    const michelle = persona('Michelle Robinson');
    const created = await fake.createContact(identity(amanda));
    await propertyReaches(created.id, 'wf_enrichment_status', 'enriched');
    expect(contact(created.id).properties.wf_career_job_title).toBe(amanda.career?.job_title);

    // A user edits one of our properties, then the contact's e-mail (both as CRM changes).
    await fake.updateContact(created.id, { wf_hh_net_worth: '12345' });
    await fake.updateContact(created.id, { email: michelle.email });

    const after = await propertyReaches(created.id, 'wf_career_job_title', michelle.career?.job_title ?? '');
    expect(after.properties).toMatchObject({
      wf_hh_windfall_id: michelle.household?.windfall_id,
      wf_hh_net_worth: '12345',
      wf_enrichment_status: 'enriched',
    });
    const updates = updatesOf(created.id);
    expect(updates).toHaveLength(2);
    expect(Object.keys(updates[1]?.properties ?? {})).not.toContain('wf_hh_net_worth');
    await settled(created.id);
    expect((await logOf(created.id)).map((e) => e.outcome)).toEqual(['enriched', 'enriched']);
  });

  it('logs a contact with only a name as skipped:no_match_key and writes only its status, saying why', { timeout: 30_000 }, async () => {
    const created = await fake.createContact({ firstname: 'Name', lastname: 'Only' });
    const log = await logUntil(created.id, 'a log entry', (l) => l.length > 0);
    expect(log.map((e) => e.outcome)).toEqual(['skipped:no_match_key']);
    expect(updatesOf(created.id)).toEqual([{ status: 200, properties: { wf_enrichment_status: 'no_match_key' } }]);
    expect(Object.keys(contact(created.id).properties).filter((name) => name.startsWith('wf_'))).toEqual(['wf_enrichment_status']);
  });

  it('erases what it keeps about a contact deleted in HubSpot', { timeout: 30_000 }, async () => {
    const catherine = persona('Catherine White');
    const created = await fake.createContact(identity(catherine));
    await propertyReaches(created.id, 'wf_enrichment_status', 'enriched');
    await logUntil(created.id, 'the enrichment logged', (l) => l.length === 1);

    await fake.deleteContact(created.id, { privacy: true });
    expect(deliveryOf('contact.privacyDeletion', created.id).status).toBe(200);
    await allBatchesWorked();
    expect(await logOf(created.id)).toEqual([]);
  });

  // The batch working on the record when the deletion comes must not save anything about it afterwards
  // (the erasure leaves a tombstone the save checks). A 429 with Retry-After holds the write, so the
  // deletion lands while the enrichment is in flight.
  it('keeps nothing about a contact deleted while its enrichment is in flight', { timeout: 30_000 }, async () => {
    const robert = persona('Robert Smith');
    fake.failNext(1, 'TEN_SECONDLY_ROLLING', { path: UPDATE_PATH, retryAfterSeconds: 2 });
    const created = await fake.createContact(identity(robert));
    await until('the write refused with a 429', () => (updatesOf(created.id).some((u) => u.status === 429) ? true : undefined));
    await fake.deleteContact(created.id, { privacy: true });
    expect(deliveryOf('contact.privacyDeletion', created.id).status).toBe(200);
    await allBatchesWorked();
    expect(await logOf(created.id)).toEqual([]);

    await until('the write tried again', () => (updatesOf(created.id).length === 2 ? true : undefined));
    expect(await settled(created.id)).toEqual(['done']);
    expect(await logOf(created.id)).toEqual([]);
  });

  it('waits out a TEN_SECONDLY_ROLLING 429 on the write, and the write lands', { timeout: 40_000 }, async () => {
    const james = persona('James Thompson');
    // HubSpot sends no Retry-After with its 429s: the server waits the rolling window out (10 s).
    fake.failNext(1, 'TEN_SECONDLY_ROLLING', { path: UPDATE_PATH });
    const created = await fake.createContact(identity(james));
    await propertyReaches(created.id, 'wf_enrichment_status', 'enriched', 30_000);
    expect(updatesOf(created.id).map((u) => u.status)).toEqual([429, 200]);
    expect(contact(created.id).properties.wf_hh_net_worth).toBe(String(james.household?.net_worth));
    expect(await settled(created.id)).toEqual(['done']);
    expect((await logOf(created.id)).map((e) => e.outcome)).toEqual(['enriched']);
  });
});
