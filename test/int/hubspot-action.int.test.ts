// POST /webhooks/hubspot/actions/enrich (the "Enrich contact" workflow action) over real HTTP, on the real
// runtime (SQLite store, job queue, pipeline, sandbox enrichment) with a stateful fake HubSpot as the only
// double: the v2 signature rules, what the route answers (SUCCESS with outputs, BLOCK, FAIL_CONTINUE,
// 4xx/5xx), and the callback completion HubSpot receives once a BLOCKed contact is settled.
import { createHash, createHmac, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAccount } from '../../core/accounts/admin.ts';
import {
  ACTION_EXPIRATION,
  ActionRequestSchema,
  HUBSPOT_CALLBACK_JOB,
  acceptAction,
  completeHubSpotCallbacks,
  retryHubSpotCallbacks,
} from '../../connectors/hubspot/action.ts';
import type { Job } from '../../bridge/job-queue.ts';
import type { HubSpotCredentials } from '../../connectors/hubspot/auth.ts';
import { CONTACT, HUBSPOT_PROVIDER, hubspotConnectorFor } from '../../connectors/hubspot/connector.ts';
import { connectPortal } from '../../connectors/hubspot/install.ts';
import type { ConnectorFactory, ConnectorRegistry } from '../../bridge/bridge.ts';
import type { CrmConnector } from '../../bridge/connector.ts';
import type { Installation } from '../../bridge/model.ts';
import { enrichJob } from '../../bridge/enrich-job.ts';
import type { Worker } from '../../bridge/worker.ts';
import { createApp } from '../../server/http/app.ts';
import { type Config, loadConfig } from '../../server/config.ts';
import { crmRouter } from '../../server/http/crm-routes.ts';
import { createLogger } from '../../server/logger.ts';
import { type Runtime, crmModules, routeContext, defaultConnectors, openRuntime, startServer, startWorker } from '../../server/runtime.ts';
import { type FakeContact, type FakeHubSpot, startFakeHubSpot, staticCredentials } from '../support/fake-hubspot.ts';
import { tempDir } from '../support/harness.ts';
import { until as untilDone } from '../support/processes.ts';
import { persona } from '../support/requests.ts';
import { HUBSPOT_PATHS } from '../../connectors/hubspot/version.ts';

const CLIENT_SECRET = '7d0c9b8a-1e2f-4a3b-9c4d-5e6f7a8b9c0d';
const APP_ID = '1160452';
const PORTAL_ID = '62515';
const PUBLIC_URL = 'https://enrich.example.com';
const ACTION_ROUTE = '/webhooks/hubspot/actions/enrich';
const CALLBACK_PATH = new RegExp(`^${HUBSPOT_PATHS.callbacksComplete}$`);
const logger = createLogger('silent');

const amanda = persona('Amanda Taylor');
const daniel = persona('Daniel Garcia');

interface Rig {
  readonly origin: string;
  /** Where HubSpot's requests are sent (always the loopback address). */
  readonly target: string;
  readonly config: Config;
  readonly runtime: Runtime;
  /** Starts the in-process worker (once); the route's wake also starts it in `on-wake` mode. */
  startWorker(): Worker;
  /** Stops the worker, if running, after its in-flight batch is settled (hook included). */
  stopWorker(): Promise<void>;
  close(): Promise<void>;
}

interface RigOptions {
  /** `loopback` (default): the server's own address; null: PUBLIC_URL unset. */
  readonly publicUrl?: string | null | 'loopback';
  /** null: HUBSPOT_CLIENT_SECRET unset. */
  readonly clientSecret?: string | null;
  /**
   * `on-wake` (default): a worker starts when the route first wakes the workers, so every job queued
   * before that is still pending then; `manual`: only `startWorker()` starts one.
   */
  readonly worker?: 'on-wake' | 'manual';
  /** The connectors the runtime runs (default: the shipped ones). */
  readonly connectors?: ConnectorRegistry;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The action route as startServer mounts it, on a real data folder, listening on a loopback port. */
async function startRig(options: RigOptions = {}): Promise<Rig> {
  const dataDir = tempDir('enrichbridge-hubspot-action-');
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
    HUBSPOT_APP_ID: APP_ID,
    ...(publicUrl === null ? {} : { PUBLIC_URL: publicUrl }),
    ...(clientSecret === null ? {} : { HUBSPOT_CLIENT_SECRET: clientSecret }),
  });
  const runtime = await openRuntime(config, logger, options.connectors);
  let worker: Worker | null = null;
  const ensureWorker = (): Worker => {
    worker ??= startWorker(runtime, logger, 1);
    return worker;
  };
  const router = crmRouter(
    crmModules(config),
    routeContext(runtime, config, logger, {
      wake: () => {
        if (options.worker === 'manual') worker?.wake();
        else ensureWorker().wake();
      },
    }),
  );
  server.on('request', createApp({ service: runtime.service, logger, trustProxy: false, requireHttps: false, routers: [router] }));
  const stopWorker = async () => {
    const running = worker;
    worker = null;
    await running?.stop();
  };
  const rig: Rig = {
    origin,
    target: `${origin}${ACTION_ROUTE}`,
    config,
    runtime,
    startWorker: ensureWorker,
    stopWorker,
    async close() {
      await stopWorker();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await runtime.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  cleanups.push(() => rig.close());
  return rig;
}

async function startFake(): Promise<FakeHubSpot> {
  const fake = await startFakeHubSpot({ portalId: PORTAL_ID, appId: APP_ID, clientSecret: CLIENT_SECRET, webhookUrl: null });
  cleanups.push(() => fake.close());
  return fake;
}

let accounts = 0;

/**
 * The fake's portal connected as `hubspot connect` does it (static token, properties provisioned), for a
 * local sandbox account with Career Intelligence.
 */
async function install(rig: Rig, fake: FakeHubSpot, options: { clientSecret?: string } = {}): Promise<Installation> {
  accounts += 1;
  const name = `action-${accounts}`;
  await createAccount(rig.runtime.opened.store, name, { careerIntelligence: true });
  const credentials: HubSpotCredentials = staticCredentials(fake, options.clientSecret ?? CLIENT_SECRET, APP_ID);
  const { installation } = await connectPortal({
    installations: rig.runtime.bridge.installations,
    portalId: fake.portalId,
    credentials,
    target: { kind: 'local', accountName: name },
    environment: 'sandbox',
  });
  return installation;
}

/** A contact in the fake with a persona's identity (no webhook: the action is what asks for it). */
function createPersonaContact(fake: FakeHubSpot, p: ReturnType<typeof persona>): Promise<FakeContact> {
  return fake.createContact({ firstname: p.first_name, lastname: p.last_name, email: p.email }, { notify: false });
}

function contact(fake: FakeHubSpot, id: string): FakeContact {
  const found = fake.contacts.get(id);
  if (found === undefined) throw new Error(`the fake has no contact ${id}`);
  return found;
}

/** An action request as HubSpot posts it for one enrolled object. */
function actionRequest(objectId: string | number, options: { portalId?: string; objectType?: string; callbackId?: string } = {}) {
  return {
    callbackId: options.callbackId ?? `ap-${APP_ID}-${randomUUID()}`,
    origin: {
      portalId: Number(options.portalId ?? PORTAL_ID),
      actionDefinitionId: 3_021_554,
      actionDefinitionVersion: 1,
      actionExecutionIndexIdentifier: { enrollmentId: 771_004_293, actionExecutionIndex: 0 },
      extensionDefinitionId: 3_021_554,
      extensionDefinitionVersionId: 1,
    },
    context: { source: 'WORKFLOWS', workflowId: 1_593_280_031, actionId: 1 },
    object: { objectId: Number(objectId), objectType: options.objectType ?? 'CONTACT', properties: {} },
    inputFields: {},
    fields: {},
  };
}

/** v2: hex SHA-256 of client secret + method + URL + raw body (computed here, independently of the code). */
function v2Signature(secret: string, method: string, url: string, body: string): string {
  return createHash('sha256').update(`${secret}${method}${url}${body}`, 'utf8').digest('hex');
}

const OutputFieldsSchema = z.object({ outputFields: z.record(z.string(), z.string()) });

interface Reply {
  readonly status: number;
  readonly json: unknown;
}

async function postRaw(target: string, body: string, headers: Record<string, string>): Promise<Reply> {
  const response = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const text = await response.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { status: response.status, json };
}

/**
 * Posts `body` to the rig's route, signed v2 as HubSpot signs a request to `sign.url` carrying
 * `sign.body` (both default to what is actually sent), with `X-HubSpot-Signature-Version: v2`.
 */
function callAction(rig: Rig, body: unknown, sign: { secret?: string; url?: string; body?: string; version?: string | null } = {}): Promise<Reply> {
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  const signature = v2Signature(sign.secret ?? CLIENT_SECRET, 'POST', sign.url ?? rig.target, sign.body ?? raw);
  const version = sign.version === undefined ? 'v2' : sign.version;
  return postRaw(rig.target, raw, { 'x-hubspot-signature': signature, ...(version === null ? {} : { 'x-hubspot-signature-version': version }) });
}

function outputFieldsOf(reply: Reply): Record<string, string> {
  expect(reply.status).toBe(200);
  return OutputFieldsSchema.parse(reply.json).outputFields;
}

/** The output fields and the contact properties they carry (manifests/hubspot names both). */
const OUTPUT_PROPERTIES = {
  household_matched: 'wf_household_matched',
  career_matched: 'wf_career_matched',
  net_worth: 'wf_hh_net_worth',
  job_level: 'wf_career_job_level',
  job_title: 'wf_career_job_title',
  windfall_id: 'wf_hh_windfall_id',
  confidence: 'wf_hh_confidence',
  enrichment_status: 'wf_enrichment_status',
} as const;

/** SUCCESS and the contact's values as they stand in the fake now. */
function successOutputsOf(found: FakeContact): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, property] of Object.entries(OUTPUT_PROPERTIES)) {
    const value = found.properties[property];
    if (value !== undefined && value !== null && value !== '') out[name] = value;
  }
  return { ...out, hs_execution_state: 'SUCCESS' };
}

/** What Amanda Taylor's sandbox persona yields, independently of the fake's copy. */
const AMANDA_OUTPUTS = {
  hs_execution_state: 'SUCCESS',
  household_matched: 'true',
  career_matched: 'true',
  net_worth: String(amanda.household?.net_worth),
  job_level: amanda.career?.job_level,
  job_title: amanda.career?.job_title,
  windfall_id: amanda.household?.windfall_id,
  confidence: String(amanda.household?.confidence),
  enrichment_status: 'enriched',
};

const JobPayloadSchema = z.object({ object: z.string(), recordId: z.string(), trigger: z.string(), callbackId: z.string().optional() });

interface JobRow {
  readonly state: string;
  readonly recordId: string;
  readonly trigger: string;
  readonly callbackId: string | null;
}

/** The enrichment jobs on disk, the action's before the creation's. */
async function jobsOf(rig: Rig): Promise<JobRow[]> {
  const rows = await rig.runtime.opened.db.selectFrom('jobs').select(['state', 'payload']).where('kind', '=', 'enrich').execute();
  return rows
    .map((row) => {
      const payload = JobPayloadSchema.parse(JSON.parse(row.payload));
      return { state: row.state, recordId: payload.recordId, trigger: payload.trigger, callbackId: payload.callbackId ?? null };
    })
    .sort((a, b) => a.trigger.localeCompare(b.trigger));
}

async function outcomesOf(rig: Rig, inst: Installation, recordId: string): Promise<string[]> {
  const entries = await rig.runtime.bridge.pipelineStore.listLog({ installationId: inst.id, recordId });
  return entries.map((entry) => entry.outcome).sort();
}

const updateWrites = (fake: FakeHubSpot) => fake.requests.filter((r) => r.method === 'POST' && r.path === HUBSPOT_PATHS.contactsBatchUpdate);
const callbackRequests = (fake: FakeHubSpot) => fake.requests.filter((r) => CALLBACK_PATH.test(r.path));

function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  return untilDone(what, probe, { timeoutMs, intervalMs: 25 });
}

describe('POST /webhooks/hubspot/actions/enrich: the v2 signature', () => {
  it('accepts a v2 signature made with HUBSPOT_CLIENT_SECRET, or with the installation’s own client secret', async () => {
    const portalSecret = 'portal-own-secret-2b3c4d5e';
    const rig = await startRig();
    const fake = await startFake();
    await install(rig, fake, { clientSecret: portalSecret });
    const created = await createPersonaContact(fake, amanda);

    const withServerSecret = await callAction(rig, actionRequest(created.id));
    const withPortalSecret = await callAction(rig, actionRequest(created.id), { secret: portalSecret });

    expect(outputFieldsOf(withServerSecret)).toMatchObject({ hs_execution_state: 'SUCCESS' });
    expect(outputFieldsOf(withPortalSecret)).toMatchObject({ hs_execution_state: 'SUCCESS' });
  });

  it('refuses a wrong secret, an altered body, a missing signature and a v1 signature with 401, and queues nothing', async () => {
    const rig = await startRig();
    const fake = await startFake();
    await install(rig, fake);
    const created = await createPersonaContact(fake, amanda);
    const body = JSON.stringify(actionRequest(created.id));

    const wrongSecret = await callAction(rig, body, { secret: 'not-the-client-secret' });
    const altered = await callAction(rig, body, { body: JSON.stringify(actionRequest(Number(created.id) + 1)) });
    const unsigned = await postRaw(rig.target, body, {});
    // A valid v1 signature (secret + body), which signs neither method nor URL: not enough here.
    const v1 = await postRaw(rig.target, body, {
      'x-hubspot-signature': createHash('sha256').update(`${CLIENT_SECRET}${body}`, 'utf8').digest('hex'),
      'x-hubspot-signature-version': 'v1',
    });
    // A correct v2 signature without the version header is read as v1, and fails.
    const unversioned = await callAction(rig, body, { version: null });

    expect([wrongSecret, altered, unsigned, v1, unversioned].map((r) => r.status)).toEqual([401, 401, 401, 401, 401]);
    expect(await jobsOf(rig)).toEqual([]);
  });

  it('verifies v3 when HubSpot sends it beside v2: a correct v3 is taken, a stale or wrong one refused even with a good v2', async () => {
    const rig = await startRig({ worker: 'manual' });
    const fake = await startFake();
    await install(rig, fake);
    const created = await createPersonaContact(fake, amanda);
    const v3 = (body: string, timestamp: number, secret = CLIENT_SECRET) => ({
      'x-hubspot-signature-v3': createHmac('sha256', secret).update(`POST${rig.target}${body}${timestamp}`, 'utf8').digest('base64'),
      'x-hubspot-request-timestamp': String(timestamp),
      // The older signature HubSpot sends beside it: a v3 that fails is not rescued by it.
      'x-hubspot-signature': v2Signature(CLIENT_SECRET, 'POST', rig.target, body),
      'x-hubspot-signature-version': 'v2',
    });
    const fresh = JSON.stringify(actionRequest(created.id));
    const stale = JSON.stringify(actionRequest(created.id));
    const wrong = JSON.stringify(actionRequest(created.id));

    const good = await postRaw(rig.target, fresh, v3(fresh, Date.now()));
    const tooOld = await postRaw(rig.target, stale, v3(stale, Date.now() - 6 * 60_000));
    const badV3 = await postRaw(rig.target, wrong, v3(wrong, Date.now(), 'another-secret'));

    expect(good.status).toBe(200);
    expect(tooOld.status).toBe(401);
    expect(badV3.status).toBe(401);
    expect((await jobsOf(rig)).map((j) => j.callbackId)).toEqual([(JSON.parse(fresh) as { callbackId: string }).callbackId]);
  });

  it('verifies against PUBLIC_URL, not the address a proxy forwarded to', async () => {
    const rig = await startRig({ publicUrl: PUBLIC_URL });
    // No installation for the portal: a verified request is answered FAIL_CONTINUE without any work.
    const signedForPublic = await callAction(rig, actionRequest(501), { url: `${PUBLIC_URL}${ACTION_ROUTE}` });
    const signedForLoopback = await callAction(rig, actionRequest(502));

    expect(outputFieldsOf(signedForPublic)).toEqual({ hs_execution_state: 'FAIL_CONTINUE' });
    expect(signedForLoopback.status).toBe(401);
  });

  it('answers 503 while PUBLIC_URL is unset (a signature cannot be checked), and queues nothing', async () => {
    const rig = await startRig({ publicUrl: null });
    const fake = await startFake();
    await install(rig, fake);
    const created = await createPersonaContact(fake, amanda);

    const reply = await callAction(rig, actionRequest(created.id));

    expect(reply.status).toBe(503);
    expect(await jobsOf(rig)).toEqual([]);
  });
});

describe('POST /webhooks/hubspot/actions/enrich: a replayed callbackId', () => {
  it('is answered from what is stored (BLOCK, the enrollment completed by callback), without a new job or a second callback', async () => {
    const rig = await startRig({ worker: 'manual' });
    const fake = await startFake();
    await install(rig, fake);
    const created = await createPersonaContact(fake, amanda);
    const request = actionRequest(created.id);

    const first = outputFieldsOf(await callAction(rig, request));
    rig.startWorker().wake();
    await until('the callback completion', () => (fake.callbacks.length > 0 ? true : undefined));
    // The same bytes, signed the same way (v2 has no timestamp): a replay, or HubSpot retrying, after the job is done.
    const replays = await Promise.all([callAction(rig, request), callAction(rig, request)]);
    await rig.stopWorker();

    expect(first).toEqual({ hs_execution_state: 'BLOCK', hs_expiration_duration: ACTION_EXPIRATION });
    for (const replay of replays) expect(outputFieldsOf(replay)).toEqual(first);
    expect(await jobsOf(rig)).toEqual([{ state: 'done', recordId: created.id, trigger: 'action', callbackId: request.callbackId }]);
    expect(fake.callbacks).toHaveLength(1);
  });

  it('is answered with the outputs the first request was answered with, and queues nothing more', async () => {
    const rig = await startRig();
    const fake = await startFake();
    await install(rig, fake);
    const created = await createPersonaContact(fake, amanda);
    const request = actionRequest(created.id);

    const first = outputFieldsOf(await callAction(rig, request));
    await rig.stopWorker();
    const replay = outputFieldsOf(await callAction(rig, request));

    expect(first).toEqual(AMANDA_OUTPUTS);
    expect(replay).toEqual(first);
    expect(await jobsOf(rig)).toHaveLength(1);
    expect(updateWrites(fake)).toHaveLength(1);
  });
});

describe('POST /webhooks/hubspot/actions/enrich: requests that are not enriched', () => {
  it('answers 400 for a signed body that is not JSON or not an action request', async () => {
    const rig = await startRig();
    const fake = await startFake();
    await install(rig, fake);
    const valid = actionRequest(501);

    const bodies = [
      '{"callbackId": "ap-1", "origin": ',
      '[]',
      JSON.stringify({ ...valid, callbackId: undefined }),
      JSON.stringify({ ...valid, origin: {} }),
      JSON.stringify({ ...valid, object: { objectType: 'CONTACT' } }),
      JSON.stringify({ ...valid, object: { objectId: 'abc', objectType: 'CONTACT' } }),
    ];
    const replies = [];
    for (const body of bodies) replies.push(await callAction(rig, body));

    expect(replies.map((r) => r.status)).toEqual(bodies.map(() => 400));
    expect(await jobsOf(rig)).toEqual([]);
  });

  it('answers FAIL_CONTINUE for a portal without an installation, and for a disabled installation', async () => {
    const rig = await startRig();
    const fake = await startFake();
    const inst = await install(rig, fake);
    const created = await createPersonaContact(fake, amanda);

    const unknownPortal = await callAction(rig, actionRequest(created.id, { portalId: '99999' }));
    await rig.runtime.bridge.installations.disable(inst.id);
    const disabled = await callAction(rig, actionRequest(created.id));

    expect(outputFieldsOf(unknownPortal)).toEqual({ hs_execution_state: 'FAIL_CONTINUE' });
    expect(outputFieldsOf(disabled)).toEqual({ hs_execution_state: 'FAIL_CONTINUE' });
    expect(await jobsOf(rig)).toEqual([]);
  });

  it('answers FAIL_CONTINUE for an object that is not a contact, and queues nothing', async () => {
    const rig = await startRig();
    const fake = await startFake();
    await install(rig, fake);

    const company = await callAction(rig, actionRequest(9_001, { objectType: 'COMPANY' }));
    const deal = await callAction(rig, actionRequest(9_002, { objectType: '0-3' }));

    expect(outputFieldsOf(company)).toEqual({ hs_execution_state: 'FAIL_CONTINUE' });
    expect(outputFieldsOf(deal)).toEqual({ hs_execution_state: 'FAIL_CONTINUE' });
    expect(await jobsOf(rig)).toEqual([]);
    expect(callbackRequests(fake)).toEqual([]);
  });
});

describe('POST /webhooks/hubspot/actions/enrich: settled in time, the answer carries the outputs', () => {
  it('answers SUCCESS with the values written to the contact, and sends no callback', async () => {
    const rig = await startRig();
    const fake = await startFake();
    const inst = await install(rig, fake);
    const created = await createPersonaContact(fake, amanda);
    const request = actionRequest(created.id);

    const outputs = outputFieldsOf(await callAction(rig, request));
    await rig.stopWorker();

    const enriched = contact(fake, created.id);
    expect(outputs).toEqual(successOutputsOf(enriched));
    expect(outputs).toEqual(AMANDA_OUTPUTS);
    expect(updateWrites(fake)).toHaveLength(1);
    expect(await jobsOf(rig)).toEqual([{ state: 'done', recordId: created.id, trigger: 'action', callbackId: request.callbackId }]);
    expect(await outcomesOf(rig, inst, created.id)).toEqual(['enriched']);
    expect(fake.callbacks).toEqual([]);
    expect(callbackRequests(fake)).toEqual([]);
  });

  it('answers FAIL_CONTINUE for a contact HubSpot does not have (settled as record_deleted), with no callback', async () => {
    const rig = await startRig();
    const fake = await startFake();
    const inst = await install(rig, fake);
    const request = actionRequest(4_040_404);

    const outputs = outputFieldsOf(await callAction(rig, request));
    await rig.stopWorker();

    expect(outputs).toEqual({ hs_execution_state: 'FAIL_CONTINUE' });
    expect(await jobsOf(rig)).toEqual([{ state: 'done', recordId: '4040404', trigger: 'action', callbackId: request.callbackId }]);
    expect(await outcomesOf(rig, inst, '4040404')).toEqual(['skipped:record_deleted']);
    expect(updateWrites(fake)).toEqual([]);
    expect(callbackRequests(fake)).toEqual([]);
  });

  it('answers SUCCESS with the existing values for an enriched, unchanged contact (skipped:unchanged)', async () => {
    const rig = await startRig();
    const fake = await startFake();
    const inst = await install(rig, fake);
    const created = await createPersonaContact(fake, daniel);
    // Enriched once already, by its creation.
    await rig.runtime.opened.queue.enqueue(enrichJob(inst.id, { object: CONTACT, recordId: created.id, trigger: 'create' }));
    rig.startWorker().wake();
    await until('the creation job done', async () => ((await jobsOf(rig))[0]?.state === 'done' ? true : undefined));
    const before = structuredClone(contact(fake, created.id).properties);
    expect(before.wf_enrichment_status).toBe('enriched');

    const outputs = outputFieldsOf(await callAction(rig, actionRequest(created.id)));
    await rig.stopWorker();

    expect(outputs).toEqual(successOutputsOf(contact(fake, created.id)));
    expect(outputs).toMatchObject({ hs_execution_state: 'SUCCESS', net_worth: String(daniel.household?.net_worth), enrichment_status: 'enriched' });
    expect(contact(fake, created.id).properties).toEqual(before);
    expect(updateWrites(fake)).toHaveLength(1);
    expect(await outcomesOf(rig, inst, created.id)).toEqual(['enriched', 'skipped:unchanged']);
    expect(callbackRequests(fake)).toEqual([]);
  });

  it('is not swallowed by a pending creation job for the same contact: both settle, and the action is answered', async () => {
    const rig = await startRig();
    const fake = await startFake();
    const inst = await install(rig, fake);
    const created = await createPersonaContact(fake, amanda);
    // Queued by the contact's creation webhook; no worker has run yet (the rig's starts on the action's wake).
    const creation = await rig.runtime.opened.queue.enqueue(enrichJob(inst.id, { object: CONTACT, recordId: created.id, trigger: 'create' }));
    expect(creation.created).toBe(true);
    const request = actionRequest(created.id);

    const outputs = outputFieldsOf(await callAction(rig, request));
    await rig.stopWorker();

    expect(outputs).toEqual(successOutputsOf(contact(fake, created.id)));
    expect(outputs).toEqual(AMANDA_OUTPUTS);
    expect(await jobsOf(rig)).toEqual([
      { state: 'done', recordId: created.id, trigger: 'action', callbackId: request.callbackId },
      { state: 'done', recordId: created.id, trigger: 'create', callbackId: null },
    ]);
    // One enrichment and one write for the two jobs.
    expect(updateWrites(fake)).toHaveLength(1);
    expect(callbackRequests(fake)).toEqual([]);
  });
});

describe('POST /webhooks/hubspot/actions/enrich: not settled in time, BLOCK and a callback', () => {
  it('answers BLOCK without a worker, then completes the callback exactly once with the SUCCESS outputs', async () => {
    const rig = await startRig({ worker: 'manual' });
    const fake = await startFake();
    const inst = await install(rig, fake);
    const created = await createPersonaContact(fake, amanda);
    const request = actionRequest(created.id);

    // The route waits its full 2.5 s for a worker that is not there.
    const outputs = outputFieldsOf(await callAction(rig, request));

    expect(outputs).toEqual({ hs_execution_state: 'BLOCK', hs_expiration_duration: ACTION_EXPIRATION });
    expect(ACTION_EXPIRATION).toBe('PT15M');
    expect(await jobsOf(rig)).toEqual([{ state: 'queued', recordId: created.id, trigger: 'action', callbackId: request.callbackId }]);
    expect(fake.callbacks).toEqual([]);

    rig.startWorker().wake();
    await until('the callback completion', () => (fake.callbacks.length > 0 ? true : undefined));
    await rig.stopWorker();

    expect(fake.callbacks).toEqual([{ callbackId: request.callbackId, body: { outputFields: successOutputsOf(contact(fake, created.id)) } }]);
    expect(fake.callbacks[0]?.body).toEqual({ outputFields: AMANDA_OUTPUTS });
    expect(callbackRequests(fake).map((r) => [r.method, r.path, r.status])).toEqual([['POST', HUBSPOT_PATHS.callbacksComplete, 204]]);
    expect(await jobsOf(rig)).toEqual([{ state: 'done', recordId: created.id, trigger: 'action', callbackId: request.callbackId }]);
    expect(await outcomesOf(rig, inst, created.id)).toEqual(['enriched']);
  });

  it('completes the callback with FAIL_CONTINUE for a contact HubSpot does not have', async () => {
    const rig = await startRig({ worker: 'manual' });
    const fake = await startFake();
    const inst = await install(rig, fake);
    const request = ActionRequestSchema.parse(actionRequest(4_040_404));

    // acceptAction itself, with a short wait: the route's 2.5 s is covered above.
    const answer = await acceptAction(request, inst, rig.runtime.opened.queue, { waitMs: 20 });
    expect(answer).toEqual({ outputFields: { hs_execution_state: 'BLOCK', hs_expiration_duration: 'PT15M' } });

    rig.startWorker().wake();
    await until('the callback completion', () => (fake.callbacks.length > 0 ? true : undefined));
    await rig.stopWorker();

    expect(fake.callbacks).toEqual([{ callbackId: request.callbackId, body: { outputFields: { hs_execution_state: 'FAIL_CONTINUE' } } }]);
    expect(await outcomesOf(rig, inst, '4040404')).toEqual(['skipped:record_deleted']);
    expect(await jobsOf(rig)).toEqual([{ state: 'done', recordId: '4040404', trigger: 'action', callbackId: request.callbackId }]);
  });
});

/** The shipped HubSpot connector, except that `beforeWrite` runs (in HubSpot) just before each write. */
function connectorsWith(beforeWrite: () => void): ConnectorRegistry {
  const factory: ConnectorFactory = async (installation, installations) => {
    const real = await hubspotConnectorFor(installation, installations);
    const connector: CrmConnector = {
      maxBatch: real.maxBatch,
      defaultObjects: real.defaultObjects,
      read: (object, ids) => real.read(object, ids),
      write: (object, updates) => {
        beforeWrite();
        return real.write(object, updates);
      },
      toRequest: (object, record) => real.toRequest(object, record),
      propertyFor: (object, key) => real.propertyFor(object, key),
      formatValue: (key, value) => real.formatValue(key, value),
    };
    return connector;
  };
  return defaultConnectors().register(HUBSPOT_PROVIDER, factory, completeHubSpotCallbacks);
}

describe('POST /webhooks/hubspot/actions/enrich: what HubSpot hears when the completion is not simple', () => {
  it('completes with FAIL_CONTINUE when the contact is deleted in HubSpot between our read and our write', async () => {
    const fake = await startFake();
    let deleteBeforeWrite: string | null = null;
    const rig = await startRig({
      worker: 'manual',
      connectors: connectorsWith(() => {
        // Changing the fake's map directly raises no webhook, as a deletion we have not heard of yet.
        if (deleteBeforeWrite !== null) fake.contacts.delete(deleteBeforeWrite);
      }),
    });
    const inst = await install(rig, fake);
    const created = await createPersonaContact(fake, amanda);
    deleteBeforeWrite = created.id;
    const request = ActionRequestSchema.parse(actionRequest(created.id));

    const answer = await acceptAction(request, inst, rig.runtime.opened.queue, { waitMs: 20 });
    rig.startWorker().wake();
    await until('the callback completion', () => (fake.callbacks.length > 0 ? true : undefined));
    await rig.stopWorker();

    expect(answer.outputFields).toMatchObject({ hs_execution_state: 'BLOCK' });
    expect(await outcomesOf(rig, inst, created.id)).toEqual(['skipped:record_deleted']);
    expect(fake.callbacks).toEqual([{ callbackId: request.callbackId, body: { outputFields: { hs_execution_state: 'FAIL_CONTINUE' } } }]);
  });

  it('completes a batch of callbacks in one call, and still completes the others when HubSpot refuses one of them', async () => {
    const rig = await startRig({ worker: 'manual' });
    const fake = await startFake();
    const inst = await install(rig, fake);
    const contacts = [await createPersonaContact(fake, amanda), await createPersonaContact(fake, daniel), await createPersonaContact(fake, amanda)];
    const requests = contacts.map((c) => ActionRequestSchema.parse(actionRequest(c.id)));
    for (const request of requests) {
      const answer = await acceptAction(request, inst, rig.runtime.opened.queue, { waitMs: 20 });
      expect(answer.outputFields).toMatchObject({ hs_execution_state: 'BLOCK' });
    }
    // The first enrollment expired in HubSpot: a batch naming it is refused whole (400).
    const [expired] = requests;
    if (expired === undefined) throw new Error('no request');
    fake.expireCallback(expired.callbackId);

    rig.startWorker().wake();
    await until('every job done', async () => ((await jobsOf(rig)).every((job) => job.state === 'done') ? true : undefined));
    // Stopping waits for the batch in flight, its callback hook included.
    await rig.stopWorker();

    // One batch call for the three, refused; then each alone: the expired one refused, the others completed.
    const calls = callbackRequests(fake);
    expect(calls[0]).toMatchObject({
      status: 400,
      body: { inputs: expect.arrayContaining(requests.map((r) => expect.objectContaining({ callbackId: r.callbackId, typedOutputs: {} }))) },
    });
    expect(
      calls
        .slice(1)
        .map((r) => r.status)
        .sort(),
    ).toEqual([204, 204, 400]);
    expect(fake.callbacks.map((c) => c.callbackId).sort()).toEqual(
      requests
        .slice(1)
        .map((r) => r.callbackId)
        .sort(),
    );
    for (const completed of fake.callbacks) {
      const index = requests.findIndex((r) => r.callbackId === completed.callbackId);
      const completedContact = contacts[index];
      if (completedContact !== undefined) expect(completed.body).toEqual({ outputFields: successOutputsOf(contact(fake, completedContact.id)) });
    }
  });
});

describe('POST /webhooks/hubspot/actions/enrich: a completion HubSpot refuses at that moment', () => {
  it('is tried again with backoff, by a job of its own, and completed once HubSpot takes it', async () => {
    const rig = await startRig({ worker: 'manual' });
    const fake = await startFake();
    const inst = await install(rig, fake);
    const created = await createPersonaContact(fake, amanda);
    const request = ActionRequestSchema.parse(actionRequest(created.id));
    expect((await acceptAction(request, inst, rig.runtime.opened.queue, { waitMs: 20 })).outputFields).toMatchObject({ hs_execution_state: 'BLOCK' });
    fake.failNext(1, 'DAILY', { path: CALLBACK_PATH });

    rig.startWorker().wake();
    const retry = await until('the retry job', async () => {
      const rows = await rig.runtime.opened.db.selectFrom('jobs').select(['id', 'run_at', 'state']).where('kind', '=', HUBSPOT_CALLBACK_JOB).execute();
      return rows.length > 0 ? rows[0] : undefined;
    });
    expect(retry?.state).toBe('queued');
    expect(new Date(retry?.run_at ?? 0).getTime()).toBeGreaterThan(Date.now());
    expect(fake.callbacks).toEqual([]);
    // Its backoff, passed: the retry is due now.
    await rig.runtime.opened.db.updateTable('jobs').set({ run_at: new Date().toISOString() }).where('kind', '=', HUBSPOT_CALLBACK_JOB).execute();
    rig.startWorker().wake();
    await until('the callback completion', () => (fake.callbacks.length > 0 ? true : undefined));
    await rig.stopWorker();

    expect(callbackRequests(fake).map((r) => r.status)).toEqual([429, 204]);
    expect(fake.callbacks).toEqual([{ callbackId: request.callbackId, body: { outputFields: AMANDA_OUTPUTS } }]);
  });

  it('is not sent again once the enrollment has expired in HubSpot', async () => {
    const rig = await startRig({ worker: 'manual' });
    const fake = await startFake();
    const inst = await install(rig, fake);
    const job = { id: 'j1', installationId: inst.id, kind: HUBSPOT_CALLBACK_JOB, attempts: 1, maxAttempts: 1, runAt: new Date().toISOString() };
    const payload = {
      callbackId: 'ap-expired',
      outputFields: { hs_execution_state: 'SUCCESS' },
      deadline: new Date(Date.now() - 1000).toISOString(),
      attempt: 2,
    };

    await retryHubSpotCallbacks(inst, rig.runtime.bridge.installations, [{ ...job, payload } as unknown as Job], rig.runtime.opened.queue);

    expect(callbackRequests(fake)).toEqual([]);
  });
});

describe('POST /webhooks/hubspot/actions/enrich on the real server', () => {
  it('is mounted by startServer, whose own worker settles the contact in time: SUCCESS and no callback', async () => {
    const dataDir = tempDir('enrichbridge-hubspot-action-server-');
    cleanups.push(() => Promise.resolve(rmSync(dataDir, { recursive: true, force: true })));
    const env = {
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      WORKER_CONCURRENCY: '1',
      PUBLIC_URL,
      HUBSPOT_CLIENT_SECRET: CLIENT_SECRET,
      HUBSPOT_APP_ID: APP_ID,
    };
    const fake = await startFake();
    const setup = await openRuntime(loadConfig({ ...env, WORKER_CONCURRENCY: '0' }), logger);
    await createAccount(setup.opened.store, 'acme', { careerIntelligence: true });
    await connectPortal({
      installations: setup.bridge.installations,
      portalId: fake.portalId,
      credentials: staticCredentials(fake, CLIENT_SECRET, APP_ID),
      target: { kind: 'local', accountName: 'acme' },
      environment: 'sandbox',
    });
    await setup.close();
    const created = await createPersonaContact(fake, amanda);
    const server = await startServer(loadConfig(env), logger);
    let stopped = false;
    cleanups.push(async () => {
      if (!stopped) await server.stop();
    });
    const body = JSON.stringify(actionRequest(created.id));

    const reply = await postRaw(`${server.url}${ACTION_ROUTE}`, body, {
      'x-hubspot-signature': v2Signature(CLIENT_SECRET, 'POST', `${PUBLIC_URL}${ACTION_ROUTE}`, body),
      'x-hubspot-signature-version': 'v2',
    });
    await server.stop();
    stopped = true;

    expect(outputFieldsOf(reply)).toEqual(successOutputsOf(contact(fake, created.id)));
    expect(outputFieldsOf(reply)).toEqual(AMANDA_OUTPUTS);
    expect(callbackRequests(fake)).toEqual([]);
  });
});
