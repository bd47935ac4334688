// A locked database must not freeze the process (issue 10, item 9): while a REAL second connection on
// the same file holds the write lock (BEGIN IMMEDIATE, as a CLI or another server would), a write
// route gives up quickly with 503 service_unavailable, /healthz and the sandbox keep answering, and
// the in-server worker backs off and carries on once the lock is released. Real startServer, real
// SQLite; only the CRM is a double (MemoryCrm).
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import Database from '../../core/storage/better-sqlite3.ts';
import { Kysely, SqliteDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, issueToken } from '../../core/accounts/admin.ts';
import { PERSONAS } from '../../core/sandbox/personas.ts';
import { loadSnapshot } from '../../core/snapshot/storage/loader.ts';
import { KyselyJobQueue } from '../../bridge/kysely-job-queue.ts';
import type { PipelineDatabase as Tables } from '../../bridge/schema.ts';
import { SERVER_BUSY_TIMEOUT_MS, SQLITE_FILE_NAME } from '../../core/storage/sqlite.ts';
import { HUBSPOT_PROVIDER } from '../../connectors/hubspot/connector.ts';
import { HUBSPOT_WEBHOOK_ROUTE } from '../../connectors/hubspot/paths.ts';
import type { Installation } from '../../bridge/model.ts';
import { SALESFORCE_PROVIDER } from '../../connectors/salesforce/connector.ts';
import { salesforceOutboundMessagePath } from '../../connectors/salesforce/paths.ts';
import { enrichJob } from '../../bridge/enrich-job.ts';
import { loadConfig } from '../../server/config.ts';
import { createLogger } from '../../server/logger.ts';
import { type RunningServer, defaultConnectors, openRuntime, snapshotsDir, startServer } from '../../server/runtime.ts';
import { hubspotV3Signature } from '../support/fake-hubspot.ts';
import { tempDir } from '../support/harness.ts';
import { MemoryCrm, MemoryCrmConnector } from '../support/memory-crm.ts';
import { startPipeline } from '../support/pipeline-harness.ts';
import { household, person, writeSnapshot } from '../support/snapshot-fixture.ts';

interface LogLine {
  readonly level: number;
  readonly msg?: string;
}

const PROVIDER = 'memcrm';
const PUBLIC_URL = 'https://enrich.example.com';
const HUBSPOT_SECRET = 'a9e4c1d2-0b7f-4e3a-9c8d-1f2e3d4c5b6a';
const PORTAL_ID = '62515';
/** The org of test/fixtures/salesforce/outbound-contact.xml. */
const ORG_ID = '00D8a000001FkQzEAK';
const OUTBOUND_CONTACT = readFileSync(path.join(import.meta.dirname, '..', 'fixtures', 'salesforce', 'outbound-contact.xml'));
const CONTACT = 'contact';
const lines: LogLine[] = [];
const crm = new MemoryCrm();
const tokens = { production: '', sandbox: '' };
let dataDir: string;
let server: RunningServer;
let installation: Installation;
/** The Salesforce org's outbound-message path, its secret included. */
let outboundPath: string;

beforeAll(async () => {
  dataDir = tempDir('enrichbridge-lock-');
  const connectors = defaultConnectors().register(PROVIDER, () => Promise.resolve(new MemoryCrmConnector(crm, 100)));
  const config = loadConfig({ DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'info', WORKER_CONCURRENCY: '1', PUBLIC_URL });
  const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) });
  // The data folder as an operator leaves it: an account, a sandbox installation, a data snapshot.
  const setup = await openRuntime(config, createLogger('silent'), connectors);
  await createAccount(setup.opened.store, 'locked', { careerIntelligence: true, rateLimit: 1000, quotaLimit: 1000 });
  tokens.production = (await issueToken(setup.opened.store, 'locked', 'production')).token;
  tokens.sandbox = (await issueToken(setup.opened.store, 'locked', 'sandbox')).token;
  installation = await setup.bridge.installations.create({
    provider: PROVIDER,
    externalAccountId: 'portal-lock',
    environment: 'sandbox',
    target: { kind: 'local', accountName: 'locked' },
    settings: {},
  });
  // A HubSpot portal and a Salesforce org whose webhooks are accepted (their jobs are never run here).
  await setup.bridge.installations.create({
    provider: HUBSPOT_PROVIDER,
    externalAccountId: PORTAL_ID,
    environment: 'sandbox',
    target: { kind: 'local', accountName: 'locked' },
    crmCredentials: { kind: 'static', accessToken: 't', clientSecret: HUBSPOT_SECRET, appId: '1160452', apiBaseUrl: 'http://127.0.0.1:9' },
  });
  const org = await setup.bridge.installations.create({
    provider: SALESFORCE_PROVIDER,
    externalAccountId: ORG_ID,
    environment: 'sandbox',
    target: { kind: 'local', accountName: 'locked' },
    crmCredentials: { kind: 'static', instanceUrl: 'https://example.my.salesforce.com', accessToken: 't', orgId: ORG_ID },
  });
  outboundPath = salesforceOutboundMessagePath(await setup.bridge.installations.outboundSecret(org.id));
  const home = household([{ address: '1 Elm Street', zipcode: '30301' }]);
  await loadSnapshot(
    setup.opened.store,
    snapshotsDir(dataDir),
    writeSnapshot(path.join(dataDir, 'source'), { version: 'v1', households: [home], people: [person('p-1', 'Ann', 'Lee', home)] }),
  );
  await setup.close();
  server = await startServer(config, logger, connectors);
});

afterAll(async () => {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

async function call(route: string, token: string, body: unknown): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${server.url}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-wf-auth-token': token },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

/** A contact.creation batch, signed (v3) as HubSpot signs it. */
async function hubspotWebhook(): Promise<number> {
  const body = JSON.stringify([
    {
      eventId: 1,
      subscriptionId: 4001,
      portalId: Number(PORTAL_ID),
      appId: 1160452,
      occurredAt: Date.now(),
      subscriptionType: 'contact.creation',
      attemptNumber: 0,
      objectId: 501,
      changeSource: 'CRM',
    },
  ]);
  const timestamp = Date.now();
  const response = await fetch(`${server.url}${HUBSPOT_WEBHOOK_ROUTE}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-hubspot-signature-v3': hubspotV3Signature(HUBSPOT_SECRET, 'POST', `${PUBLIC_URL}${HUBSPOT_WEBHOOK_ROUTE}`, body, timestamp),
      'x-hubspot-request-timestamp': String(timestamp),
    },
    body,
  });
  await response.arrayBuffer();
  return response.status;
}

async function outboundMessage(): Promise<{ status: number; text: string }> {
  const response = await fetch(`${server.url}${outboundPath}`, {
    method: 'POST',
    headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: '""' },
    body: OUTBOUND_CONTACT,
  });
  return { status: response.status, text: await response.text() };
}

const persona = PERSONAS[0];
if (persona === undefined) throw new Error('the sandbox has personas');

describe('a database locked by another connection', () => {
  it('answers writes 503 service_unavailable while reads, /healthz and the worker go on; the worker proceeds after the lock is released', async () => {
    // The second connection: holds the write lock, and queues a job the worker can only see after COMMIT.
    const locker = new Database(path.join(dataDir, SQLITE_FILE_NAME));
    const lockerDb = new Kysely<Tables>({ dialect: new SqliteDialect({ database: locker }) });
    crm.create(CONTACT, 'c-1', { first_name: persona.first_name, last_name: persona.last_name, email: persona.email });
    locker.exec('BEGIN IMMEDIATE');
    try {
      await new KyselyJobQueue(lockerDb).enqueue(enrichJob(installation.id, { object: CONTACT, recordId: 'c-1' }));
      const before = lines.length;

      const write = await call('/v1', tokens.production, { first_name: 'Ann', last_name: 'Lee', address: '1 Elm Street', zipcode: '30301' });
      const health = await fetch(`${server.url}/healthz`);
      const sandbox = await call('/sandbox/v1', tokens.sandbox, { first_name: persona.first_name, last_name: persona.last_name, email: persona.email });

      expect(write).toEqual({ status: 503, body: { error: 'service_unavailable', message: expect.any(String) } });
      expect(health.status).toBe(200);
      expect(sandbox.status).toBe(200);
      // The webhooks answer what makes their CRM deliver again: HubSpot any 5xx, Salesforce any non-2xx.
      expect(await hubspotWebhook()).toBe(503);
      const outbound = await outboundMessage();
      expect(outbound.status).toBeGreaterThanOrEqual(500);
      expect(outbound.text).toContain('soapenv:Server');
      // The worker meets the lock too (it looks every half second), and says so at warn level, not error.
      while (!lines.slice(before).some((line) => line.msg === 'pipeline worker: database busy, backing off')) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // Nothing fell through to the last-resort 500 handler.
      expect(lines.slice(before).filter((line) => line.msg === 'unhandled error')).toEqual([]);
      expect(lines.slice(before).filter((line) => line.msg === 'pipeline worker error')).toEqual([]);
      expect(crm.writes).toEqual([]);
    } finally {
      locker.exec('COMMIT');
    }

    // Released: the worker that backed off enriches the contact queued under the lock.
    while (crm.writes.length === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(crm.writes[0]).toMatchObject({ object: CONTACT, id: 'c-1' });
    expect((await call('/v1', tokens.production, { first_name: 'Ann', last_name: 'Lee', address: '1 Elm Street', zipcode: '30301' })).status).toBe(200);
    await lockerDb.destroy();
  });
});

describe('a batch whose results meet a locked database', () => {
  it('records its outcomes and settles its jobs once the lock is released, instead of leaving them to the lease', async () => {
    const h = await startPipeline({ busyTimeoutMs: SERVER_BUSY_TIMEOUT_MS });
    try {
      const inst = await h.install();
      h.crm.create(CONTACT, 'c-2', { first_name: persona.first_name, last_name: persona.last_name, email: persona.email });
      await h.enqueue(inst, { object: CONTACT, recordId: 'c-2' });
      // Another process takes the write lock while the batch writes to the CRM, and lets go a moment later.
      const locker = new Database(path.join(h.dataDir, SQLITE_FILE_NAME));
      const write = h.crm.write.bind(h.crm);
      let released: Promise<void> | undefined;
      h.crm.write = (object, updates) => {
        if (released === undefined) {
          locker.exec('BEGIN IMMEDIATE');
          released = new Promise((resolve) => {
            setTimeout(() => {
              locker.exec('COMMIT');
              resolve();
            }, 200);
          });
        }
        return write(object, updates);
      };

      const batches = await h.drain();

      expect(batches).toBe(1);
      expect(released).toBeDefined();
      expect(h.crm.writes.map((w) => w.id)).toEqual(['c-2']);
      expect((await h.opened.queue.list()).map((job) => job.state)).toEqual(['done']);
      expect((await h.bridge.pipelineStore.listLog({ installationId: inst.id, recordId: 'c-2' })).map((entry) => entry.outcome)).toHaveLength(1);
      locker.close();
    } finally {
      await h.close();
      rmSync(h.dataDir, { recursive: true, force: true });
    }
  });
});
