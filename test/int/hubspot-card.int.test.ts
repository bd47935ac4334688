// The HubSpot record card's routes (GET /hubspot/card/contacts/:objectId, POST …/:action) over real
// HTTP, on the real runtime (SQLite store, job queue, pipeline, sandbox enrichment) with a stateful fake
// HubSpot as the only double. Requests are signed here as hubspot.fetch sends them: v3 over the full URL
// with the query HubSpot appends (portalId, userId, userEmail, appId), the raw body and the timestamp.
import { rmSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAccount } from '../../core/accounts/admin.ts';
import type { HubSpotCredentials } from '../../connectors/hubspot/auth.ts';
import { connectPortal } from '../../connectors/hubspot/install.ts';
import type { Installation } from '../../bridge/model.ts';
import { ActionResultSchema } from '../../bridge/record-actions.ts';
import { RecordViewSchema } from '../../bridge/record-view.ts';
import type { Worker } from '../../bridge/worker.ts';
import { createApp } from '../../server/http/app.ts';
import { loadConfig } from '../../server/config.ts';
import { crmRouter } from '../../server/http/crm-routes.ts';
import { createLogger } from '../../server/logger.ts';
import { type Runtime, crmModules, routeContext, openRuntime, startWorker } from '../../server/runtime.ts';
import { type FakeHubSpot, hubspotV3Signature, startFakeHubSpot, staticCredentials } from '../support/fake-hubspot.ts';
import { tempDir } from '../support/harness.ts';
import { until } from '../support/processes.ts';
import { persona } from '../support/requests.ts';

const CLIENT_SECRET = '0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d';
const APP_ID = '1160452';
const PORTAL_ID = '62515';
const OTHER_PORTAL_ID = '70001';
const USER = { userId: '4242', email: 'fundraiser@example.org' };
const CARD_ROUTE = '/hubspot/card/contacts';
const logger = createLogger('silent');

const amanda = persona('Amanda Taylor');

interface Rig {
  readonly origin: string;
  readonly runtime: Runtime;
  close(): Promise<void>;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The card routes as startServer mounts them, PUBLIC_URL the loopback address; a worker starts on the first wake. */
async function startRig(): Promise<Rig> {
  const dataDir = tempDir('enrichbridge-hubspot-card-');
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo; // a TCP listener always reports an AddressInfo
  const origin = `http://127.0.0.1:${port}`;
  const config = loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    WORKER_CONCURRENCY: '0',
    HUBSPOT_APP_ID: APP_ID,
    HUBSPOT_CLIENT_SECRET: CLIENT_SECRET,
    PUBLIC_URL: origin,
  });
  const runtime = await openRuntime(config, logger);
  let worker: Worker | null = null;
  const router = crmRouter(
    crmModules(config),
    routeContext(runtime, config, logger, {
      wake: () => {
        worker ??= startWorker(runtime, logger, 1);
        worker.wake();
      },
    }),
  );
  server.on('request', createApp({ service: runtime.service, logger, trustProxy: false, requireHttps: false, routers: [router] }));
  const rig: Rig = {
    origin,
    runtime,
    async close() {
      await worker?.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await runtime.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  cleanups.push(() => rig.close());
  return rig;
}

async function startFake(portalId = PORTAL_ID): Promise<FakeHubSpot> {
  const fake = await startFakeHubSpot({ portalId, appId: APP_ID, clientSecret: CLIENT_SECRET, webhookUrl: null });
  cleanups.push(() => fake.close());
  return fake;
}

let accounts = 0;

/** The fake's portal connected with its static token, for a local sandbox account with Career Intelligence. */
async function install(rig: Rig, fake: FakeHubSpot): Promise<Installation> {
  accounts += 1;
  const name = `card-${accounts}`;
  await createAccount(rig.runtime.opened.store, name, { careerIntelligence: true });
  const credentials: HubSpotCredentials = staticCredentials(fake, CLIENT_SECRET, APP_ID);
  const { installation } = await connectPortal({
    installations: rig.runtime.bridge.installations,
    portalId: fake.portalId,
    credentials,
    target: { kind: 'local', accountName: name },
    environment: 'sandbox',
  });
  return installation;
}

/** What hubspot.fetch appends to the card's URL: the user, the app and the portal HubSpot vouches for. */
function appended(portalId = PORTAL_ID, appId = APP_ID): string {
  return new URLSearchParams({ userId: USER.userId, userEmail: USER.email, appId, portalId }).toString();
}

interface CallOptions {
  readonly method?: 'GET' | 'POST';
  /** The query after `?`; default: what HubSpot appends for the user of PORTAL_ID. */
  readonly query?: string;
  /** Sign with this secret; null: unsigned. */
  readonly secret?: string | null;
  /** The signature's timestamp (ms); default now. */
  readonly timestamp?: number;
  /** A JSON body (hubspot.fetch serialises the card's `body` option). */
  readonly body?: unknown;
}

/** A card request as HubSpot sends it: the path the card asked for, HubSpot's query, v3-signed. */
async function call(rig: Rig, path: string, options: CallOptions = {}): Promise<{ status: number; body: unknown }> {
  const method = options.method ?? 'GET';
  const url = `${rig.origin}${CARD_ROUTE}${path}?${options.query ?? appended()}`;
  const timestamp = options.timestamp ?? Date.now();
  const secret = options.secret === undefined ? CLIENT_SECRET : options.secret;
  const body = options.body === undefined ? '' : JSON.stringify(options.body);
  const headers: Record<string, string> =
    secret === null
      ? {}
      : { 'X-HubSpot-Signature-v3': hubspotV3Signature(secret, method, url, body, timestamp), 'X-HubSpot-Request-Timestamp': String(timestamp) };
  if (body !== '') headers['Content-Type'] = 'application/json';
  const response = await fetch(url, { method, headers, ...(body === '' ? {} : { body }) });
  const text = await response.text();
  return { status: response.status, body: text === '' ? null : JSON.parse(text) };
}

// Strict: a refusal carries no view and nothing of the record.
const RefusalSchema = z.object({ ok: z.literal(false), action: z.string().optional(), reason: z.string(), message: z.string() }).strict();
const ViewAnswerSchema = z.object({ ok: z.literal(true), view: RecordViewSchema }).strict();

function refusalOf(reply: { status: number; body: unknown }) {
  return { status: reply.status, ...RefusalSchema.parse(reply.body) };
}

describe('the HubSpot card routes refuse what HubSpot did not sign for', () => {
  it('refuses an unsigned request with 401 and no view', async () => {
    const rig = await startRig();
    const fake = await startFake();
    await install(rig, fake);
    const created = await fake.createContact({ firstname: amanda.first_name, lastname: amanda.last_name, email: amanda.email }, { notify: false });

    const reply = await call(rig, `/${created.id}`, { secret: null });

    expect(refusalOf(reply)).toMatchObject({ status: 401, reason: 'unauthorised' });
  });

  it('refuses a request signed with another secret with 401, and an action it asks for is not run', async () => {
    const rig = await startRig();
    const fake = await startFake();
    const installation = await install(rig, fake);
    const created = await fake.createContact({ firstname: amanda.first_name, lastname: amanda.last_name, email: amanda.email }, { notify: false });

    const view = await call(rig, `/${created.id}`, { secret: 'not-the-app-secret' });
    const exclude = await call(rig, `/${created.id}/exclude`, { method: 'POST', secret: 'not-the-app-secret' });

    expect(refusalOf(view)).toMatchObject({ status: 401, reason: 'unauthorised' });
    expect(refusalOf(exclude)).toMatchObject({ status: 401, reason: 'unauthorised' });
    expect(await rig.runtime.bridge.pipelineStore.listLog({ installationId: installation.id, recordId: created.id })).toEqual([]);
  });

  it('refuses a request signed more than 5 minutes ago with 401', async () => {
    const rig = await startRig();
    const fake = await startFake();
    await install(rig, fake);
    const created = await fake.createContact({ firstname: amanda.first_name, lastname: amanda.last_name, email: amanda.email }, { notify: false });

    const reply = await call(rig, `/${created.id}`, { timestamp: Date.now() - 6 * 60_000 });

    expect(refusalOf(reply)).toMatchObject({ status: 401, reason: 'unauthorised' });
  });

  it('shows nothing to a signed portal that has no installation', async () => {
    const rig = await startRig();
    const fake = await startFake();
    await install(rig, fake);
    const created = await fake.createContact({ firstname: amanda.first_name, lastname: amanda.last_name, email: amanda.email }, { notify: false });

    const reply = await call(rig, `/${created.id}`, { query: appended(OTHER_PORTAL_ID) });

    expect(refusalOf(reply)).toMatchObject({ status: 200, reason: 'installation_not_found' });
  });

  it("reads a contact through the signed portal's installation only: another portal's contact is not found", async () => {
    const rig = await startRig();
    const fake = await startFake();
    const other = await startFake(OTHER_PORTAL_ID);
    await install(rig, fake);
    await install(rig, other);
    await fake.createContact({ firstname: 'Ours', email: 'ours@example.org' }, { notify: false });
    // Contacts in the other portal until its newest id is one this portal does not have.
    let theirs = await other.createContact({ firstname: amanda.first_name, lastname: amanda.last_name, email: amanda.email }, { notify: false });
    while (fake.contacts.has(theirs.id)) theirs = await other.createContact({ firstname: 'Filler', email: `f${theirs.id}@example.org` }, { notify: false });

    const view = await call(rig, `/${theirs.id}`);
    const exclude = await call(rig, `/${theirs.id}/exclude`, { method: 'POST' });

    expect(refusalOf(view)).toMatchObject({ status: 200, reason: 'record_not_found' });
    expect(refusalOf(exclude)).toMatchObject({ status: 200, reason: 'record_not_found' });
    expect(other.contacts.get(theirs.id)?.properties.wf_do_not_enrich ?? null).toBeNull();
  });

  it('refuses a portal the card put in the URL itself: HubSpot appends its own and two portalIds are ambiguous', async () => {
    const rig = await startRig();
    const fake = await startFake();
    const other = await startFake(OTHER_PORTAL_ID);
    await install(rig, fake);
    await install(rig, other);
    const theirs = await other.createContact({ firstname: amanda.first_name, lastname: amanda.last_name, email: amanda.email }, { notify: false });

    const reply = await call(rig, `/${theirs.id}`, { query: `portalId=${OTHER_PORTAL_ID}&${appended()}` });
    const empty = await call(rig, `/${theirs.id}`, { query: `userId=${USER.userId}&appId=${APP_ID}&portalId=` });

    expect(refusalOf(reply)).toMatchObject({ status: 200, reason: 'ambiguous_request_identity' });
    expect(refusalOf(empty)).toMatchObject({ status: 200, reason: 'ambiguous_request_identity' });
  });

  it("refuses a request from another app's card", async () => {
    const rig = await startRig();
    const fake = await startFake();
    await install(rig, fake);
    const created = await fake.createContact({ firstname: amanda.first_name, lastname: amanda.last_name, email: amanda.email }, { notify: false });

    const reply = await call(rig, `/${created.id}`, { query: appended(PORTAL_ID, '999') });

    expect(refusalOf(reply)).toMatchObject({ status: 200, reason: 'other_app' });
  });
});

describe('the HubSpot card routes for a signed request', () => {
  it('enrich queues Enrich now, logged with the HubSpot user who asked; the view then shows the enriched contact with its provenance', async () => {
    const rig = await startRig();
    const fake = await startFake();
    const installation = await install(rig, fake);
    const created = await fake.createContact({ firstname: amanda.first_name, lastname: amanda.last_name, email: amanda.email }, { notify: false });

    const before = ViewAnswerSchema.parse((await call(rig, `/${created.id}`)).body).view;
    const enrich = await call(rig, `/${created.id}/enrich`, { method: 'POST' });
    await until('the contact enriched', () => (fake.contacts.get(created.id)?.properties.wf_enrichment_status === 'enriched' ? true : undefined), {
      timeoutMs: 15_000,
      intervalMs: 25,
    });
    const after = ViewAnswerSchema.parse((await call(rig, `/${created.id}`)).body).view;

    expect(before.status.value).toBe('never');
    expect(enrich.status).toBe(200);
    expect(ActionResultSchema.parse(enrich.body)).toEqual({ ok: true, action: 'enrich_now', queued: true });
    const log = await rig.runtime.bridge.pipelineStore.listLog({ installationId: installation.id, recordId: created.id });
    expect(log.find((entry) => entry.outcome === 'action:enrich_now')?.actor).toEqual(USER);
    expect(after.status.value).toBe('enriched');
    expect(after.household.matched).toBe(true);
    const netWorth = after.fields.find((field) => field.property === 'wf_hh_net_worth');
    expect(netWorth).toMatchObject({ state: 'ours', replaced: null });
    expect(netWorth?.value).toBe(fake.contacts.get(created.id)?.properties.wf_hh_net_worth);
    expect(after.actions.undo.allowed).toBe(true);
  });

  it('exclude checks the do-not-enrich box, is logged with its actor, and the view says excluded', async () => {
    const rig = await startRig();
    const fake = await startFake();
    const installation = await install(rig, fake);
    const created = await fake.createContact({ firstname: amanda.first_name, lastname: amanda.last_name, email: amanda.email }, { notify: false });

    const exclude = await call(rig, `/${created.id}/exclude`, { method: 'POST' });
    const view = ViewAnswerSchema.parse((await call(rig, `/${created.id}`)).body).view;
    const again = await call(rig, `/${created.id}/exclude`, { method: 'POST' });

    expect(ActionResultSchema.parse(exclude.body)).toEqual({ ok: true, action: 'exclude' });
    expect(fake.contacts.get(created.id)?.properties.wf_do_not_enrich).toBe('true');
    const log = await rig.runtime.bridge.pipelineStore.listLog({ installationId: installation.id, recordId: created.id });
    expect(log.map((entry) => [entry.outcome, entry.actor])).toEqual([['action:exclude', USER]]);
    expect(view.status.value).toBe('excluded');
    expect(view.excluded?.actor).toEqual(USER);
    // Refused, with its reason, as a 200 the card can read.
    expect(again.status).toBe(200);
    expect(ActionResultSchema.parse(again.body)).toMatchObject({ ok: false, reason: 'already_excluded' });
  });

  it('undo restores what enrichment replaced and names the field a person changed since, left alone', async () => {
    const rig = await startRig();
    const fake = await startFake();
    await install(rig, fake);
    const created = await fake.createContact({ firstname: amanda.first_name, lastname: amanda.last_name, email: amanda.email }, { notify: false });
    await call(rig, `/${created.id}/enrich`, { method: 'POST' });
    await until('the contact enriched', () => (fake.contacts.get(created.id)?.properties.wf_enrichment_status === 'enriched' ? true : undefined), {
      timeoutMs: 15_000,
      intervalMs: 25,
    });
    await fake.updateContact(created.id, { wf_career_job_title: 'Typed by a colleague' }, { notify: false });

    const undo = ActionResultSchema.parse((await call(rig, `/${created.id}/undo`, { method: 'POST' })).body);
    const view = ViewAnswerSchema.parse((await call(rig, `/${created.id}`)).body).view;

    expect(undo).toMatchObject({ ok: true, action: 'undo', leftAlone: ['wf_career_job_title'] });
    const properties = fake.contacts.get(created.id)?.properties ?? {};
    expect(properties.wf_career_job_title).toBe('Typed by a colleague');
    expect(properties.wf_hh_net_worth ?? null).toBeNull();
    expect(view.status.value).toBe('undone');
    expect(view.undone?.actor).toEqual(USER);
  });

  it("shows the view from the card's own read of our properties, with no HubSpot call of ours (the portal's API budget is the pipeline's)", async () => {
    const rig = await startRig();
    const fake = await startFake();
    await install(rig, fake);
    const created = await fake.createContact({ firstname: amanda.first_name, lastname: amanda.last_name, email: amanda.email }, { notify: false });
    await call(rig, `/${created.id}/enrich`, { method: 'POST' });
    // Enriched in HubSpot and saved on our side: the write lands before the batch's outcomes are saved.
    await until(
      'the contact enriched and its outcome saved',
      async () => (ViewAnswerSchema.parse((await call(rig, `/${created.id}`)).body).view.status.value === 'enriched' ? true : undefined),
      { timeoutMs: 15_000, intervalMs: 25 },
    );
    // What the card read with fetchCrmObjectProperties: ours as HubSpot holds them, one edited since
    // by a colleague on the page, and a property that is not ours (ignored).
    const seen = { ...fake.contacts.get(created.id)?.properties, wf_career_job_title: 'Typed by a colleague', firstname: 'Not ours' };
    const callsBefore = fake.requests.length;

    const answer = await call(rig, `/${created.id}/view`, { method: 'POST', body: { properties: seen } });
    const unsigned = await call(rig, `/${created.id}/view`, { method: 'POST', body: { properties: seen }, secret: 'another secret' });

    expect(fake.requests.length).toBe(callsBefore);
    const view = ViewAnswerSchema.parse(answer.body).view;
    expect(view.status.value).toBe('enriched');
    expect(view.fields.find((field) => field.property === 'wf_career_job_title')).toMatchObject({ state: 'edited', value: 'Typed by a colleague' });
    expect(view.fields.filter((field) => field.state === 'edited').map((field) => field.property)).toEqual(['wf_career_job_title']);
    expect(unsigned.status).toBe(401);
    expect(refusalOf(await call(rig, `/${created.id}/view`, { method: 'POST', body: { properties: 'none' } }))).toMatchObject({ reason: 'body_invalid' });
  });

  it('answers an unknown action with its reason', async () => {
    const rig = await startRig();
    const fake = await startFake();
    await install(rig, fake);

    const reply = await call(rig, `/1/erase`, { method: 'POST' });

    expect(refusalOf(reply)).toMatchObject({ reason: 'unknown_action' });
  });
});
