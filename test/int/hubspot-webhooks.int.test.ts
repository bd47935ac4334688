// POST /webhooks/hubspot over real HTTP, on the real runtime (SQLite store, job queue, sealed
// installations) with a stateful fake HubSpot as the only double: the v3 signature rules (PUBLIC_URL,
// raw bytes, query string, window, per-installation secret), batch validation, what each event does
// to the jobs table and the stored record state, and 5xx when the batch cannot be queued.
import { rmSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAccount } from '../../core/accounts/admin.ts';
import { SQLITE_FILE_NAME } from '../../core/storage/sqlite.ts';
import { openStorage } from '../../bridge/storage.ts';
import type { HubSpotCredentials } from '../../connectors/hubspot/auth.ts';
import { CONTACT, HUBSPOT_PROVIDER } from '../../connectors/hubspot/connector.ts';
import { HUBSPOT_EVENTS_JOB, type IntakeSummary, expandHubSpotEventJobs } from '../../connectors/hubspot/intake.ts';
import { pullHubSpotJournal } from '../../connectors/hubspot/journal.ts';
import { recoveredEventsLedger } from '../../bridge/deliveries.ts';
import { eventsRecovered } from '../../core/observe/metrics.ts';
import type { Installation, InstallationSettings, LogEntry, RecordState } from '../../bridge/model.ts';
import { enrichJob } from '../../bridge/enrich-job.ts';
import { newLogId } from '../../bridge/store.ts';
import { createApp } from '../../server/http/app.ts';
import { type Config, loadConfig } from '../../server/config.ts';
import { crmRouter } from '../../server/http/crm-routes.ts';
import { createLogger } from '../../server/logger.ts';
import { type Runtime, crmModules, routeContext, openRuntime, startServer } from '../../server/runtime.ts';
import { type FakeHubSpot, type WebhookEvent, hubspotV1Signature, hubspotV3Signature, startFakeHubSpot, staticCredentials } from '../support/fake-hubspot.ts';
import { tempDir } from '../support/harness.ts';

const CLIENT_SECRET = 'f3a1c2d4-5b6e-4f70-8a9b-0c1d2e3f4a5b';
const APP_ID = '1160452';
const PORTAL_ID = '62515';
const PUBLIC_URL = 'https://enrich.example.com';
const WEBHOOK_ROUTE = '/webhooks/hubspot';
const logger = createLogger('silent');

interface Rig {
  /** The loopback origin the server listens on. */
  readonly origin: string;
  /** Where deliveries are sent (always the loopback address). */
  readonly target: string;
  readonly config: Config;
  readonly runtime: Runtime;
  /** Times the route nudged the workers. */
  readonly wakes: { count: number };
  /** Closes the store under the running server (a database that went away). */
  closeStore(): Promise<void>;
  close(): Promise<void>;
}

interface RigOptions {
  /** `loopback`: the server's own address (the default, so the fake signs what it sends); null: unset. */
  readonly publicUrl?: string | null | 'loopback';
  /** null: HUBSPOT_CLIENT_SECRET unset. */
  readonly clientSecret?: string | null;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The route as startServer mounts it, on a real data folder, listening on a loopback port. */
async function startRig(options: RigOptions = {}): Promise<Rig> {
  const dataDir = tempDir('enrichbridge-hubspot-webhooks-');
  // Listen first: the default PUBLIC_URL is the address we got.
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo; // a TCP listener always reports an AddressInfo
  const origin = `http://127.0.0.1:${port}`;
  const publicUrl = options.publicUrl === undefined || options.publicUrl === 'loopback' ? origin : options.publicUrl;
  const clientSecret = options.clientSecret === undefined ? CLIENT_SECRET : options.clientSecret;
  const config = loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    WORKER_CONCURRENCY: '0',
    HUBSPOT_CLIENT_ID: 'client-id-webhooks',
    HUBSPOT_APP_ID: APP_ID,
    ...(publicUrl === null ? {} : { PUBLIC_URL: publicUrl }),
    ...(clientSecret === null ? {} : { HUBSPOT_CLIENT_SECRET: clientSecret }),
  });
  const runtime = await openRuntime(config, logger);
  const wakes = { count: 0 };
  const router = crmRouter(
    crmModules(config),
    routeContext(runtime, config, logger, {
      wake: () => {
        wakes.count += 1;
      },
    }),
  );
  server.on('request', createApp({ service: runtime.service, logger, trustProxy: false, requireHttps: false, routers: [router] }));
  let storeOpen = true;
  const closeStore = async () => {
    if (!storeOpen) return;
    storeOpen = false;
    await runtime.close();
  };
  const rig: Rig = {
    origin,
    target: `${origin}${WEBHOOK_ROUTE}`,
    config,
    runtime,
    wakes,
    closeStore,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await closeStore();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  cleanups.push(() => rig.close());
  return rig;
}

async function startFake(rig: Rig | null, clientSecret = CLIENT_SECRET): Promise<FakeHubSpot> {
  const fake = await startFakeHubSpot({ portalId: PORTAL_ID, appId: APP_ID, clientSecret, webhookUrl: rig?.target ?? null });
  cleanups.push(() => fake.close());
  return fake;
}

let accounts = 0;

/** An installation for the fake's portal, as `hubspot connect` or the OAuth callback leaves it. */
async function install(
  rig: Rig,
  fake: FakeHubSpot,
  options: { settings?: Partial<InstallationSettings>; clientSecret?: string; portalId?: string } = {},
): Promise<Installation> {
  accounts += 1;
  const name = `acme-${accounts}`;
  await createAccount(rig.runtime.opened.store, name, { careerIntelligence: true });
  const credentials: HubSpotCredentials = staticCredentials(fake, options.clientSecret ?? CLIENT_SECRET, APP_ID);
  return rig.runtime.bridge.installations.create({
    provider: HUBSPOT_PROVIDER,
    externalAccountId: options.portalId ?? fake.portalId,
    environment: 'sandbox',
    target: { kind: 'local', accountName: name },
    crmCredentials: credentials,
    settings: options.settings ?? {},
  });
}

const JobPayloadSchema = z.object({ object: z.string(), recordId: z.string(), trigger: z.string() });

interface QueuedJob {
  readonly installationId: string;
  readonly kind: string;
  readonly state: string;
  readonly object: string;
  readonly recordId: string;
  readonly trigger: string;
}

/**
 * Runs the stored webhook batches as a worker would (the events jobs only), returning what they did.
 * Expansion is the worker's half of intake; the route's half is the durable store of the batch.
 */
async function expand(rig: Rig): Promise<IntakeSummary> {
  const { queue } = rig.runtime.opened;
  const total: IntakeSummary = { enqueued: 0, duplicates: 0, ignored: 0, merged: 0, erased: 0 };
  for (;;) {
    const jobs = await queue.claimBatch({ workerId: 'expander', limit: 100, leaseMs: 60_000, kinds: [HUBSPOT_EVENTS_JOB] });
    if (jobs.length === 0) return total;
    const summary = await expandHubSpotEventJobs(jobs, {
      store: rig.runtime.bridge.pipelineStore,
      queue,
      deliveries: rig.runtime.bridge.deliveries,
      appIdOf: async () => Promise.resolve(APP_ID),
    });
    for (const key of Object.keys(total) as (keyof IntakeSummary)[]) total[key] += summary[key];
    for (const job of jobs) await queue.complete(job.id, 'expander');
  }
}

/** The enrichment jobs on disk, by record id, once the stored batches are expanded. */
async function jobsTable(rig: Rig): Promise<QueuedJob[]> {
  await expand(rig);
  const rows = await rig.runtime.opened.db.selectFrom('jobs').select(['installation_id', 'kind', 'state', 'payload']).where('kind', '=', 'enrich').execute();
  return rows
    .map((row) => ({ installationId: row.installation_id, kind: row.kind, state: row.state, ...JobPayloadSchema.parse(JSON.parse(row.payload)) }))
    .sort((a, b) => a.recordId.localeCompare(b.recordId));
}

const recordIdsOf = (jobs: readonly QueuedJob[]) => jobs.map((j) => j.recordId).sort();

let eventIds = 1000;

/** A legacy `contact.*` event from the fake's portal, shaped as HubSpot sends it. */
function event(subscriptionType: string, objectId: number, extra: Partial<WebhookEvent> = {}): WebhookEvent {
  eventIds += 1;
  return {
    eventId: eventIds,
    subscriptionId: 4001,
    portalId: Number(PORTAL_ID),
    appId: Number(APP_ID),
    occurredAt: Date.now(),
    subscriptionType,
    attemptNumber: 0,
    objectId,
    changeSource: 'CRM',
    sourceId: 'userId:9012345',
    ...extra,
  };
}

/** What the route answers: the batch is stored, one job per known portal. */
const AckSchema = z.object({ received: z.number(), queued: z.number(), ignored: z.number() });

interface Reply {
  readonly status: number;
  readonly json: unknown;
}

/**
 * Sends `body` to `target`, signed (v3, with the test's own signer) as HubSpot would sign a delivery to
 * `sign.url` carrying `sign.body`; both default to what is actually sent.
 */
async function deliver(target: string, body: string, sign: { url?: string; body?: string; secret?: string; timestamp?: number } = {}): Promise<Reply> {
  const timestamp = sign.timestamp ?? Date.now();
  const response = await fetch(target, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-hubspot-signature-v3': hubspotV3Signature(sign.secret ?? CLIENT_SECRET, 'POST', sign.url ?? target, sign.body ?? body, timestamp),
      'x-hubspot-request-timestamp': String(timestamp),
    },
    body,
  });
  const text = await response.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { status: response.status, json };
}

function state(installation: Installation, recordId: string, windfallId: string): RecordState {
  return {
    installationId: installation.id,
    object: CONTACT,
    recordId,
    householdMatched: true,
    careerMatched: false,
    windfallId,
    confidence: 0.92,
    enrichedAt: '2025-01-02T03:04:05.000Z',
    inputHash: `hash-${recordId}`,
    written: { wf_hh_net_worth: 1_250_000 },
  };
}

function logEntry(installation: Installation, recordId: string): LogEntry {
  return {
    id: newLogId(),
    installationId: installation.id,
    object: CONTACT,
    recordId,
    at: '2025-01-02T03:04:05.000Z',
    outcome: 'enriched',
    fieldsWritten: ['wf_hh_net_worth'],
    changes: { wf_hh_net_worth: { value: 1_250_000, replaced: null } },
    quotaConsumed: 1,
    latencyMs: 12,
    detail: null,
  };
}

describe('POST /webhooks/hubspot: the v3 signature', () => {
  it('accepts a correctly signed batch and queues its creations (jobs table)', async () => {
    const rig = await startRig();
    const fake = await startFake(rig);
    const inst = await install(rig, fake);

    const delivery = await fake.sendEvents([event('contact.creation', 501), event('contact.creation', 502)]);

    expect(delivery.status).toBe(200);
    const jobs = await jobsTable(rig);
    expect(jobs).toEqual([
      { installationId: inst.id, kind: 'enrich', state: 'queued', object: CONTACT, recordId: '501', trigger: 'create' },
      { installationId: inst.id, kind: 'enrich', state: 'queued', object: CONTACT, recordId: '502', trigger: 'create' },
    ]);
    expect(rig.wakes.count).toBe(1);
  });

  it('queues a contact the fake HubSpot creates, through its own signed delivery', async () => {
    const rig = await startRig();
    const fake = await startFake(rig);
    await install(rig, fake);

    const contact = await fake.createContact({ email: 'amanda.taylor@sandbox.windfall.com', firstname: 'Amanda' });

    expect(fake.deliveries.map((d) => d.status)).toEqual([200]);
    expect(recordIdsOf(await jobsTable(rig))).toEqual([contact.id]);
  });

  it('refuses a bad signature with 401 and queues nothing', async () => {
    const rig = await startRig();
    const fake = await startFake(rig);
    await install(rig, fake);

    const wrongSecret = await fake.sendEvents([event('contact.creation', 501)], { secret: 'not-the-client-secret' });
    const unsigned = await fetch(rig.target, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([event('contact.creation', 502)]),
    });
    // The fake also sends a valid v1 signature: alone, that weaker scheme must not be enough.
    const body = JSON.stringify([event('contact.creation', 503)]);
    const v1Only = await fetch(rig.target, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...v1Headers(body) },
      body,
    });

    expect(wrongSecret.status).toBe(401);
    expect(unsigned.status).toBe(401);
    expect(v1Only.status).toBe(401);
    expect(await jobsTable(rig)).toEqual([]);
  });

  it('refuses a timestamp older than 5 minutes (a replay) with 401, and takes one inside the window', async () => {
    const rig = await startRig();
    const fake = await startFake(rig);
    await install(rig, fake);

    const stale = await fake.sendEvents([event('contact.creation', 501)], { timestamp: Date.now() - 5 * 60_000 - 30_000 });
    const future = await fake.sendEvents([event('contact.creation', 502)], { timestamp: Date.now() + 5 * 60_000 + 30_000 });
    const recent = await fake.sendEvents([event('contact.creation', 503)], { timestamp: Date.now() - 4 * 60_000 });

    expect(stale.status).toBe(401);
    expect(future.status).toBe(401);
    expect(recent.status).toBe(200);
    expect(recordIdsOf(await jobsTable(rig))).toEqual(['503']);
  });

  it('checks the signature against PUBLIC_URL, not the address a proxy forwarded to', async () => {
    const rig = await startRig({ publicUrl: PUBLIC_URL });
    const fake = await startFake(null);
    await install(rig, fake);
    const body = JSON.stringify([event('contact.creation', 501)]);

    // HubSpot called the public URL; the proxy delivered to our loopback address.
    const signedForPublic = await deliver(rig.target, body, { url: `${PUBLIC_URL}${WEBHOOK_ROUTE}` });
    // Signed for the address the request arrived at: what a server rebuilding the URL from Host would accept.
    const signedForLoopback = await deliver(rig.target, JSON.stringify([event('contact.creation', 502)]));

    expect(signedForPublic.status).toBe(200);
    expect(signedForLoopback.status).toBe(401);
    expect(recordIdsOf(await jobsTable(rig))).toEqual(['501']);
  });

  it('keeps a path prefix of PUBLIC_URL in the signed URI', async () => {
    const rig = await startRig({ publicUrl: `${PUBLIC_URL}/enrich` });
    const fake = await startFake(null);
    await install(rig, fake);

    const withPrefix = await deliver(rig.target, JSON.stringify([event('contact.creation', 501)]), { url: `${PUBLIC_URL}/enrich${WEBHOOK_ROUTE}` });
    const withoutPrefix = await deliver(rig.target, JSON.stringify([event('contact.creation', 502)]), { url: `${PUBLIC_URL}${WEBHOOK_ROUTE}` });

    expect(withPrefix.status).toBe(200);
    expect(withoutPrefix.status).toBe(401);
  });

  it('signs the raw body bytes: the same JSON re-serialized (whitespace, escapes) does not verify', async () => {
    const rig = await startRig();
    const fake = await startFake(null);
    await install(rig, fake);
    // As HubSpot might send it: spaces after separators and a \u00e4 escape a re-serializer turns into "ä".
    const rawOf = (objectId: number) =>
      `[ {"eventId": ${objectId}, "subscriptionId": 4002, "portalId": ${PORTAL_ID}, "appId": ${APP_ID}, "occurredAt": ${Date.now()}, ` +
      `"subscriptionType": "contact.propertyChange", "attemptNumber": 0, "objectId": ${objectId}, "changeSource": "CRM", ` +
      `"propertyName": "lastname", "propertyValue": "M\\u00e4rz"} ]`;
    const raw = rawOf(501);
    const reserialized = JSON.stringify(JSON.parse(raw));
    expect(reserialized).not.toBe(raw);
    expect(reserialized).toContain('März');

    const exact = await deliver(rig.target, raw);
    // Signed over the re-serialized text, sent as HubSpot sent it.
    const signedReserialized = await deliver(rig.target, rawOf(502), { body: JSON.stringify(JSON.parse(rawOf(502))) });
    // Signed as HubSpot sent it, the body re-serialized on the way (a proxy or middleware that parses JSON).
    const sentReserialized = await deliver(rig.target, JSON.stringify(JSON.parse(rawOf(503))), { body: rawOf(503) });

    expect(exact.status).toBe(200);
    expect(signedReserialized.status).toBe(401);
    expect(sentReserialized.status).toBe(401);
    expect(recordIdsOf(await jobsTable(rig))).toEqual(['501']);
  });

  it('signs the query string of the target URL as part of the URI', async () => {
    const rig = await startRig();
    const fake = await startFake(rig);
    await install(rig, fake);
    const withQuery = `${rig.target}?tenant=north%20east&next=a%3Ab`;

    // The fake signs as HubSpot does (decoding %3A, keeping %20) for the URL it posts to.
    const signedWithQuery = await fake.sendEvents([event('contact.creation', 501)], { url: withQuery });
    const signedWithoutQuery = await deliver(withQuery, JSON.stringify([event('contact.creation', 502)]), { url: rig.target });
    const otherQuery = await deliver(withQuery, JSON.stringify([event('contact.creation', 503)]), { url: `${rig.target}?tenant=south&next=a%3Ab` });

    expect(signedWithQuery.status).toBe(200);
    expect(signedWithoutQuery.status).toBe(401);
    expect(otherQuery.status).toBe(401);
    expect(recordIdsOf(await jobsTable(rig))).toEqual(['501']);
  });

  it("verifies with the installation's stored client secret when HUBSPOT_CLIENT_SECRET is unset", async () => {
    const portalSecret = 'portal-own-secret-8c7d6e5f';
    const rig = await startRig({ clientSecret: null });
    const fake = await startFake(rig, portalSecret);
    await install(rig, fake, { clientSecret: portalSecret });

    const good = await fake.sendEvents([event('contact.creation', 501)]);
    const otherSecret = await fake.sendEvents([event('contact.creation', 502)], { secret: CLIENT_SECRET });
    // No installation for this portal, and no server-wide secret: nothing can verify it.
    const unknownPortal = await fake.sendEvents([event('contact.creation', 503, { portalId: 99_999 })]);

    expect(good.status).toBe(200);
    expect(otherSecret.status).toBe(401);
    expect(unknownPortal.status).toBe(401);
    expect(recordIdsOf(await jobsTable(rig))).toEqual(['501']);
  });

  it('answers 503 when PUBLIC_URL is unset: the signature cannot be checked', async () => {
    const rig = await startRig({ publicUrl: null });
    const fake = await startFake(rig);
    await install(rig, fake);

    const delivery = await fake.sendEvents([event('contact.creation', 501)]);

    expect(delivery.status).toBe(503);
    expect(await jobsTable(rig)).toEqual([]);
  });
});

/** The v1 headers HubSpot also sends (`X-HubSpot-Signature`, version v1), without the v3 ones. */
function v1Headers(body: string): Record<string, string> {
  return { 'x-hubspot-signature': hubspotV1Signature(CLIENT_SECRET, body), 'x-hubspot-signature-version': 'v1' };
}

describe('POST /webhooks/hubspot: the batch', () => {
  it('refuses with 400 a signed body that is not JSON, not an array, empty, or over 100 events', async () => {
    const rig = await startRig();
    const fake = await startFake(null);
    await install(rig, fake);

    const notJson = await deliver(rig.target, '[{"eventId": 1,');
    const object = await deliver(rig.target, JSON.stringify(event('contact.creation', 501)));
    const empty = await deliver(rig.target, '[]');
    const tooMany = await deliver(rig.target, JSON.stringify(Array.from({ length: 101 }, (_, i) => event('contact.creation', 1000 + i))));
    const malformedEvent = await deliver(rig.target, JSON.stringify([{ eventId: 1, subscriptionType: 'contact.creation' }]));

    expect([notJson.status, object.status, empty.status, tooMany.status, malformedEvent.status]).toEqual([400, 400, 400, 400, 400]);
    expect(await jobsTable(rig)).toEqual([]);
  });

  it('takes a full batch of 100 events and answers with a summary', async () => {
    const rig = await startRig();
    const fake = await startFake(null);
    await install(rig, fake);

    const reply = await deliver(rig.target, JSON.stringify(Array.from({ length: 100 }, (_, i) => event('contact.creation', 1000 + i))));

    expect(reply.status).toBe(200);
    expect(AckSchema.parse(reply.json)).toEqual({ received: 100, queued: 1, ignored: 0 });
    expect(await expand(rig)).toEqual({ enqueued: 100, duplicates: 0, ignored: 0, merged: 0, erased: 0 });
    expect(await jobsTable(rig)).toHaveLength(100);
  });

  it('stores a batch of one portal as the body it verified, not written out again, and expands it as any other', async () => {
    const rig = await startRig();
    const fake = await startFake(null);
    await install(rig, fake);
    // Spaces and a field HubSpot may add later: the stored job holds the bytes as they came.
    const body = ` [ ${JSON.stringify({ ...event('contact.creation', 7001), futureField: 'kept' })} ] `;

    const reply = await deliver(rig.target, body);

    expect(reply.status).toBe(200);
    const stored = await rig.runtime.opened.db.selectFrom('jobs').select('payload').where('kind', '=', HUBSPOT_EVENTS_JOB).execute();
    expect(stored.map((row) => row.payload)).toEqual([`{"events":${body}}`]);
    expect(recordIdsOf(await jobsTable(rig))).toEqual(['7001']);
  });

  it('ignores a portal it has no installation for, with 200', async () => {
    const rig = await startRig();
    const fake = await startFake(rig);
    await install(rig, fake);

    const reply = await deliver(rig.target, JSON.stringify([event('contact.creation', 501, { portalId: 99_999 })]));

    expect(reply.status).toBe(200);
    expect(AckSchema.parse(reply.json)).toEqual({ received: 1, queued: 0, ignored: 1 });
    expect(await jobsTable(rig)).toEqual([]);
  });

  it('ignores creations when automatic enrichment is off, and every event of a disabled installation', async () => {
    const rig = await startRig();
    const fake = await startFake(rig);
    await install(rig, fake, { settings: { enrichOnCreate: false } });

    const creation = await fake.sendEvents([event('contact.creation', 501)]);
    const change = await fake.sendEvents([event('contact.propertyChange', 501, { propertyName: 'email', propertyValue: 'a@example.com' })]);

    expect(creation.status).toBe(200);
    expect(change.status).toBe(200);
    expect(recordIdsOf(await jobsTable(rig))).toEqual(['501']);

    const other = await startRig();
    const otherFake = await startFake(other);
    const disabled = await install(other, otherFake);
    await other.runtime.bridge.installations.disable(disabled.id);
    expect((await otherFake.sendEvents([event('contact.creation', 601)])).status).toBe(200);
    expect(await jobsTable(other)).toEqual([]);
  });
});

describe('POST /webhooks/hubspot: what each event does', () => {
  it('queues identity changes, drops our own writes, and queues another integration’s writes', async () => {
    const rig = await startRig();
    const fake = await startFake(rig);
    await install(rig, fake);
    const user = await fake.createContact({ email: 'a@example.com' }, { notify: false });
    const ours = await fake.createContact({ email: 'b@example.com' }, { notify: false });
    const theirs = await fake.createContact({ email: 'c@example.com' }, { notify: false });
    const nonIdentity = await fake.createContact({ email: 'd@example.com' }, { notify: false });

    await fake.updateContact(user.id, { lastname: 'Taylor' });
    // Our write-back: HubSpot reports it as INTEGRATION with our app id as sourceId.
    await fake.updateContact(ours.id, { firstname: 'Bea' }, { source: 'INTEGRATION' });
    await fake.updateContact(theirs.id, { phone: '+1 415 555 0100' }, { source: 'INTEGRATION', sourceId: '777001' });
    await fake.updateContact(nonIdentity.id, { jobtitle: 'CFO' });

    expect(fake.deliveries.map((d) => d.status)).toEqual([200, 200, 200, 200]);
    expect(fake.deliveries[1]?.events[0]).toMatchObject({ changeSource: 'INTEGRATION', sourceId: APP_ID });
    const jobs = await jobsTable(rig);
    expect(recordIdsOf(jobs)).toEqual([theirs.id, user.id].sort());
    expect(jobs.every((j) => j.trigger === 'update')).toBe(true);
  });

  it('queues every identity property and none of the others', async () => {
    const rig = await startRig();
    const fake = await startFake(rig);
    await install(rig, fake);
    const identity = ['firstname', 'lastname', 'email', 'hs_additional_emails', 'phone', 'mobilephone', 'address', 'city', 'state', 'zip', 'company'];
    const others = ['jobtitle', 'country', 'wf_hh_net_worth', 'lifecyclestage'];

    const reply = await deliver(
      rig.target,
      JSON.stringify([
        ...identity.map((propertyName, i) => event('contact.propertyChange', 700 + i, { propertyName, propertyValue: 'x' })),
        ...others.map((propertyName, i) => event('contact.propertyChange', 800 + i, { propertyName, propertyValue: 'x' })),
      ]),
    );

    expect(reply.status).toBe(200);
    expect(AckSchema.parse(reply.json)).toMatchObject({ queued: 1 });
    expect(await expand(rig)).toMatchObject({ enqueued: identity.length, ignored: others.length });
    expect(recordIdsOf(await jobsTable(rig))).toEqual(identity.map((_, i) => String(700 + i)).sort());
  });

  it('adds nothing when HubSpot delivers the same batch again', async () => {
    const rig = await startRig();
    const fake = await startFake(rig);
    await install(rig, fake);

    const first = await fake.sendEvents([
      event('contact.creation', 501),
      event('contact.propertyChange', 502, { propertyName: 'email', propertyValue: 'x@example.com' }),
    ]);
    const before = await jobsTable(rig);
    const again = await fake.redeliver(first);

    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(before).toHaveLength(2);
    expect(await jobsTable(rig)).toEqual(before);
  });

  it('takes a batch in occurredAt order, not in the order it arrived', async () => {
    const rig = await startRig();
    const fake = await startFake(null);
    await install(rig, fake);
    const t = Date.now() - 60_000;

    // Created after it was deleted (an id reused by a restore): still queued.
    const restored = await deliver(
      rig.target,
      JSON.stringify([event('contact.creation', 501, { occurredAt: t + 2 }), event('contact.deletion', 501, { occurredAt: t + 1 })]),
    );
    // Deleted after it was created, delivered in the other order: nothing to enrich.
    const deleted = await deliver(
      rig.target,
      JSON.stringify([event('contact.deletion', 502, { occurredAt: t + 2 }), event('contact.creation', 502, { occurredAt: t + 1 })]),
    );

    expect(restored.status).toBe(200);
    expect(deleted.status).toBe(200);
    expect(recordIdsOf(await jobsTable(rig))).toEqual(['501']);
  });

  it('moves the merged contact’s state to the survivor and cancels its queued job', async () => {
    const rig = await startRig();
    const fake = await startFake(rig);
    const inst = await install(rig, fake);
    const primary = await fake.createContact({ email: 'p@example.com' }, { notify: false });
    const merged = await fake.createContact({ email: 'm@example.com' }, { notify: false });
    const store = rig.runtime.bridge.pipelineStore;
    await store.saveOutcomes([state(inst, merged.id, 'wf-merged')], []);
    await rig.runtime.opened.queue.enqueue(enrichJob(inst.id, { object: CONTACT, recordId: merged.id, trigger: 'update' }));

    await fake.mergeContacts(primary.id, merged.id);

    expect(fake.deliveries.map((d) => d.status)).toEqual([200]);
    expect(await expand(rig)).toMatchObject({ merged: 1 });
    const states = await store.recordStates(inst.id, CONTACT, [primary.id, merged.id]);
    expect([...states.keys()]).toEqual([primary.id]);
    expect(states.get(primary.id)).toMatchObject({ windfallId: 'wf-merged', householdMatched: true, written: { wf_hh_net_worth: 1_250_000 } });
    expect(await jobsTable(rig)).toEqual([]);
  });

  it("follows a merge into a new record (newObjectId): the primary's state moves to the new record, and neither old id keeps one", async () => {
    const rig = await startRig();
    const fake = await startFake(rig);
    const inst = await install(rig, fake);
    const store = rig.runtime.bridge.pipelineStore;
    await store.saveOutcomes([state(inst, '7001', 'wf-primary'), state(inst, '7002', 'wf-merged')], []);
    await rig.runtime.opened.queue.enqueue(enrichJob(inst.id, { object: CONTACT, recordId: '7001', trigger: 'update' }));

    const reply = await deliver(
      rig.target,
      JSON.stringify([event('contact.merge', 7001, { primaryObjectId: 7001, mergedObjectIds: [7002], newObjectId: 7003, numberOfPropertiesMoved: 12 })]),
    );

    expect(reply.status).toBe(200);
    expect(await expand(rig)).toMatchObject({ merged: 1 });
    const states = await store.recordStates(inst.id, CONTACT, ['7001', '7002', '7003']);
    expect([...states.keys()]).toEqual(['7003']);
    expect(states.get('7003')).toMatchObject({ windfallId: 'wf-primary' });
    expect(await jobsTable(rig)).toEqual([]);
  });

  it.each([
    ['contact.deletion', false],
    ['contact.privacyDeletion', true],
  ] as const)('%s erases the record’s state and log and cancels its queued job', async (subscriptionType, privacy) => {
    const rig = await startRig();
    const fake = await startFake(rig);
    const inst = await install(rig, fake);
    const gone = await fake.createContact({ email: 'gone@example.com' }, { notify: false });
    const kept = await fake.createContact({ email: 'kept@example.com' }, { notify: false });
    const store = rig.runtime.bridge.pipelineStore;
    await store.saveOutcomes([state(inst, gone.id, 'wf-gone'), state(inst, kept.id, 'wf-kept')], [logEntry(inst, gone.id), logEntry(inst, kept.id)]);
    await rig.runtime.opened.queue.enqueue(enrichJob(inst.id, { object: CONTACT, recordId: gone.id, trigger: 'update' }));
    await rig.runtime.opened.queue.enqueue(enrichJob(inst.id, { object: CONTACT, recordId: kept.id, trigger: 'update' }));

    const reply = await deliver(rig.target, JSON.stringify([event(subscriptionType, Number(gone.id), { changeFlag: 'DELETED' })]));

    expect(reply.status).toBe(200);
    expect(AckSchema.parse(reply.json)).toMatchObject({ queued: 1 });
    expect(await expand(rig)).toMatchObject({ erased: 1 });
    expect([...(await store.recordStates(inst.id, CONTACT, [gone.id, kept.id])).keys()]).toEqual([kept.id]);
    expect(await store.listLog({ installationId: inst.id, recordId: gone.id })).toEqual([]);
    expect(await store.listLog({ installationId: inst.id, recordId: kept.id })).toHaveLength(1);
    expect(recordIdsOf(await jobsTable(rig))).toEqual([kept.id]);

    // The fake's own deletion raises the same events; a second erase finds nothing and is harmless.
    await fake.deleteContact(gone.id, { privacy });
    expect(fake.deliveries.map((d) => d.status)).toEqual([200]);
  });
});

describe('POST /webhooks/hubspot: a batch acts only on the portals its secret verifies', () => {
  // Two static-token portals with secrets of their own, and two installed through the public app
  // (whose stored secret is the app's): whoever holds one portal's secret signs for that portal only.
  const SECRET_A = 'portal-a-secret-1111';
  const SECRET_B = 'portal-b-secret-2222';
  const A = '70001';
  const B = '70002';
  const Q = '70003';

  async function tenants() {
    const rig = await startRig();
    const fake = await startFake(rig);
    const a = await install(rig, fake, { portalId: A, clientSecret: SECRET_A });
    const b = await install(rig, fake, { portalId: B, clientSecret: SECRET_B });
    const p = await install(rig, fake); // the fake's portal, through the public app
    const q = await install(rig, fake, { portalId: Q });
    const store = rig.runtime.bridge.pipelineStore;
    await store.saveOutcomes([state(b, '900', 'wf-b-900'), state(b, '901', 'wf-b-901'), state(p, '800', 'wf-p-800')], []);
    return { rig, store, a, b, p, q };
  }
  const on = (portal: string, type: string, objectId: number, extra: Partial<WebhookEvent> = {}) =>
    event(type, objectId, { portalId: Number(portal), ...extra });

  it("a batch signed with one static-token portal's secret does not erase, merge or queue anything of another portal", async () => {
    const { rig, store, a, b, p } = await tenants();
    const batch = [
      on(A, 'contact.creation', 1),
      on(B, 'contact.creation', 2),
      on(B, 'contact.privacyDeletion', 900, { changeFlag: 'DELETED' }),
      on(B, 'contact.merge', 901, { primaryObjectId: 555, mergedObjectIds: [901] }),
      on(B, 'contact.propertyChange', 3, { propertyName: 'email', propertyValue: 'x@example.com', changeSource: 'CRM' }),
      on(PORTAL_ID, 'contact.privacyDeletion', 800, { changeFlag: 'DELETED' }),
    ];

    const reply = await deliver(rig.target, JSON.stringify(batch), { secret: SECRET_A });

    expect(reply.status).toBe(200);
    expect(AckSchema.parse(reply.json)).toEqual({ received: 6, queued: 1, ignored: 5 });
    const jobs = await jobsTable(rig);
    expect(jobs.map((j) => [j.installationId, j.recordId])).toEqual([[a.id, '1']]);
    expect([...(await store.recordStates(b.id, CONTACT, ['900', '901'])).keys()].sort()).toEqual(['900', '901']);
    expect([...(await store.recordStates(p.id, CONTACT, ['800'])).keys()]).toEqual(['800']);
  });

  it("a batch signed with the public app's secret does not act on a static-token portal, whatever portal comes first", async () => {
    const { rig, store, b, p } = await tenants();
    const batch = [on(PORTAL_ID, 'contact.creation', 10), on(B, 'contact.privacyDeletion', 900, { changeFlag: 'DELETED' }), on(A, 'contact.creation', 11)];

    const reply = await deliver(rig.target, JSON.stringify(batch), { secret: CLIENT_SECRET });

    expect(reply.status).toBe(200);
    expect(AckSchema.parse(reply.json)).toEqual({ received: 3, queued: 1, ignored: 2 });
    expect((await jobsTable(rig)).map((j) => [j.installationId, j.recordId])).toEqual([[p.id, '10']]);
    expect([...(await store.recordStates(b.id, CONTACT, ['900'])).keys()]).toEqual(['900']);
  });

  it("a batch of several public-app portals, signed with the app's secret, acts on each of them", async () => {
    const { rig, p, q } = await tenants();
    const batch = [on(PORTAL_ID, 'contact.creation', 20), on(Q, 'contact.creation', 21)];

    const reply = await deliver(rig.target, JSON.stringify(batch), { secret: CLIENT_SECRET });

    expect(AckSchema.parse(reply.json)).toEqual({ received: 2, queued: 2, ignored: 0 });
    expect((await jobsTable(rig)).map((j) => [j.installationId, j.recordId])).toEqual([
      [p.id, '20'],
      [q.id, '21'],
    ]);
  });
});

describe('POST /webhooks/hubspot: answers 5xx when the batch is not durably queued', () => {
  it('answers 503 while the database refuses writes, and queues the batch when HubSpot retries', async () => {
    const rig = await startRig();
    const fake = await startFake(rig);
    await install(rig, fake);
    const { db } = rig.runtime.opened;

    await sql`PRAGMA query_only = ON`.execute(db);
    const refused = await fake.sendEvents([event('contact.creation', 501), event('contact.creation', 502)]);
    await sql`PRAGMA query_only = OFF`.execute(db);
    const retried = await fake.redeliver(refused);

    expect(refused.status).toBe(503);
    expect(retried.status).toBe(200);
    expect(recordIdsOf(await jobsTable(rig))).toEqual(['501', '502']);
  });

  it('queues a batch as a whole or not at all', async () => {
    const rig = await startRig();
    const fake = await startFake(rig);
    await install(rig, fake);
    const { db } = rig.runtime.opened;
    // The insert of the batch's second event fails (as a full disk would, part-way through), whether
    // the event is stored in the batch's body as received or written out again.
    await sql`CREATE TRIGGER fail_second_job BEFORE INSERT ON jobs
      WHEN NEW.payload LIKE '%"objectId":502%' OR NEW.payload LIKE '%"objectId":"502"%' BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END`.execute(db);

    const refused = await fake.sendEvents([event('contact.creation', 501), event('contact.creation', 502), event('contact.creation', 503)]);

    expect(refused.status).toBe(503);
    expect(await jobsTable(rig)).toEqual([]);
  });

  it('answers 5xx when the store is gone', async () => {
    const rig = await startRig();
    const fake = await startFake(rig);
    await install(rig, fake);
    await rig.closeStore();

    const delivery = await fake.sendEvents([event('contact.creation', 501)]);

    expect(delivery.status).toBeGreaterThanOrEqual(500);
    expect(delivery.status).toBeLessThan(600);
  });
});

describe('POST /webhooks/hubspot on the real server', () => {
  it('is mounted by startServer and queues a batch signed for PUBLIC_URL', async () => {
    const dataDir = tempDir('enrichbridge-hubspot-server-');
    cleanups.push(() => Promise.resolve(rmSync(dataDir, { recursive: true, force: true })));
    const env = {
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      WORKER_CONCURRENCY: '0',
      PUBLIC_URL,
      HUBSPOT_CLIENT_SECRET: CLIENT_SECRET,
      HUBSPOT_APP_ID: APP_ID,
    };
    const fake = await startFake(null);
    // The installation, made through the same data folder before the server starts.
    const setup = await openRuntime(loadConfig(env), logger);
    await createAccount(setup.opened.store, 'acme', {});
    const inst = await setup.bridge.installations.create({
      provider: HUBSPOT_PROVIDER,
      externalAccountId: fake.portalId,
      environment: 'sandbox',
      target: { kind: 'local', accountName: 'acme' },
      crmCredentials: { kind: 'static', accessToken: fake.tokens.staticToken, clientSecret: CLIENT_SECRET, appId: APP_ID, apiBaseUrl: fake.url },
    });
    await setup.close();
    const server = await startServer(loadConfig(env), logger);
    let stopped = false;
    cleanups.push(async () => {
      if (!stopped) await server.stop();
    });

    const accepted = await deliver(`${server.url}${WEBHOOK_ROUTE}`, JSON.stringify([event('contact.creation', 501)]), { url: `${PUBLIC_URL}${WEBHOOK_ROUTE}` });
    const refused = await deliver(`${server.url}${WEBHOOK_ROUTE}`, JSON.stringify([event('contact.creation', 502)]));
    await server.stop();
    stopped = true;

    expect(accepted.status).toBe(200);
    expect(refused.status).toBe(401);
    const { store, queue } = await openStorage(path.join(dataDir, SQLITE_FILE_NAME));
    try {
      // The batch is on disk as one stored batch of the installation, holding the signed event only.
      const queued = await queue.list({ state: 'queued' });
      expect(queued.map((j) => [j.installationId, j.kind])).toEqual([[inst.id, HUBSPOT_EVENTS_JOB]]);
      const objectIds = z
        .object({ events: z.array(z.object({ objectId: z.union([z.number(), z.string()]) })) })
        .parse(queued[0]?.payload)
        .events.map((e) => String(e.objectId));
      expect(objectIds).toEqual(['501']);
    } finally {
      await store.close();
    }
  });
});

describe('missed events recovered from the Webhooks Journal', () => {
  /** An installation through the public app (OAuth): the journal is read with the app's own token. */
  async function installOAuth(rig: Rig, fake: FakeHubSpot): Promise<Installation> {
    accounts += 1;
    const name = `journal-${accounts}`;
    await createAccount(rig.runtime.opened.store, name, { careerIntelligence: true });
    const issued = fake.tokens.issue();
    const credentials: HubSpotCredentials = {
      kind: 'oauth',
      accessToken: issued.accessToken,
      refreshToken: issued.refreshToken,
      expiresAt: issued.expiresAt?.toISOString() ?? null,
      clientId: fake.clientId,
      clientSecret: CLIENT_SECRET,
      appId: APP_ID,
      apiBaseUrl: fake.url,
    };
    return rig.runtime.bridge.installations.create({
      provider: HUBSPOT_PROVIDER,
      externalAccountId: fake.portalId,
      environment: 'sandbox',
      target: { kind: 'local', accountName: name },
      crmCredentials: credentials,
    });
  }

  /** A loopback address nothing listens on: our server, down. */
  async function downUrl(): Promise<string> {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const { port } = probe.address() as AddressInfo; // a TCP listener always reports an AddressInfo
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    return `http://127.0.0.1:${port}${WEBHOOK_ROUTE}`;
  }

  async function recoveredTotal(): Promise<number> {
    return (await eventsRecovered.get()).values.find((v) => v.labels.provider === 'hubspot')?.value ?? 0;
  }

  const HOUR = 3_600_000;
  /** A pull as the job makes it, at `hours` from now (the journal is read up to HubSpot's 24-hour retry window). */
  function puller(rig: Rig, installation: Installation) {
    const t0 = Date.now();
    return (hours: number) =>
      pullHubSpotJournal(installation, {
        installations: rig.runtime.bridge.installations,
        queue: rig.runtime.opened.queue,
        deliveries: rig.runtime.bridge.deliveries,
        requestsPer10s: 100_000,
        now: () => new Date(t0 + hours * HOUR),
      });
  }

  it('enqueues the creations HubSpot failed to deliver while our server was down exactly once when it is back, and ignores those it delivered', async () => {
    const rig = await startRig();
    const fake = await startFake(rig);
    const installation = await installOAuth(rig, fake);
    const pullAt = puller(rig, installation);

    // The first pull makes the portal's journal subscription (with the app's client-credentials token); nothing was kept before it.
    expect(await pullAt(0)).toEqual({ read: 0, recovered: 0, skipped: null });
    expect(fake.journalSubscriptions).toEqual([
      expect.objectContaining({
        subscriptionType: 'OBJECT',
        portalId: Number(fake.portalId),
        objectTypeId: '0-1',
        actions: expect.arrayContaining(['CREATE', 'UPDATE', 'DELETE']),
      }),
    ]);
    expect(fake.tokens.grants).toContain('client_credentials');

    const delivered = await fake.createContact({ email: 'delivered@example.com' });
    expect(fake.deliveries.at(-1)?.status).toBe(200);
    await expand(rig);

    // Our server down: every delivery fails, and HubSpot's retries run out over the next 24 hours.
    fake.setWebhookUrl(await downUrl());
    const missed = [await fake.createContact({ email: 'missed-1@example.com' }), await fake.createContact({ email: 'missed-2@example.com' })];
    expect(fake.deliveries.slice(-2).map((d) => d.status)).toEqual([null, null]);
    fake.setWebhookUrl(rig.target);

    // Within the hour of the last pull (another worker's, another instance's): not pulled again.
    expect(await pullAt(0.5)).toMatchObject({ read: 0, recovered: 0, skipped: expect.stringContaining('less than an hour') });

    const before = await recoveredTotal();
    expect(await pullAt(25)).toEqual({ read: 3, recovered: 2, skipped: null });
    expect(await recoveredTotal()).toBe(before + 2);
    expect(recordIdsOf(await jobsTable(rig))).toEqual([delivered.id, ...missed.map((c) => c.id)].sort());
    expect(await rig.runtime.bridge.deliveries.count(recoveredEventsLedger(installation.id), new Date(Date.now() - 60_000))).toBe(2);

    // The next hour's pull goes on from the offset saved in the database: nothing more.
    expect(await pullAt(26)).toEqual({ read: 0, recovered: 0, skipped: null });
    expect(
      (await jobsTable(rig))
        .filter((job) => job.recordId !== delivered.id)
        .map((job) => job.recordId)
        .sort(),
    ).toEqual(missed.map((c) => c.id).sort());
  });

  it('leaves what HubSpot may still deliver as a webhook (the last 24 hours) for a later pull, and recovers it then', async () => {
    const rig = await startRig();
    const fake = await startFake(rig);
    const installation = await installOAuth(rig, fake);
    const pullAt = puller(rig, installation);
    expect(await pullAt(0)).toMatchObject({ recovered: 0, skipped: null });
    fake.setWebhookUrl(await downUrl());
    const missed = await fake.createContact({ email: 'late@example.com' });

    expect(await pullAt(1)).toEqual({ read: 0, recovered: 0, skipped: null });
    expect(await jobsTable(rig)).toEqual([]);
    expect(await pullAt(25)).toEqual({ read: 1, recovered: 1, skipped: null });
    expect(recordIdsOf(await jobsTable(rig))).toEqual([missed.id]);
  });

  it('reads nothing for a static-token portal, which has no public app to read a journal with', async () => {
    const rig = await startRig();
    const fake = await startFake(rig);
    const installation = await install(rig, fake);
    const pull = await pullHubSpotJournal(installation, {
      installations: rig.runtime.bridge.installations,
      queue: rig.runtime.opened.queue,
      deliveries: rig.runtime.bridge.deliveries,
    });
    expect(pull).toMatchObject({ read: 0, recovered: 0, skipped: expect.stringContaining('static-token') });
    expect(fake.requests.filter((r) => r.path.startsWith('/webhooks-journal'))).toEqual([]);
  });
});
