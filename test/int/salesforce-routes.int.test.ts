// POST /webhooks/salesforce/outbound-message and POST /webhooks/salesforce/events over real HTTP, on
// the real runtime (SQLite store, job queue, sealed installations): the recorded SOAP envelopes in
// test/fixtures/salesforce, the exact Ack, SOAP faults for what we refuse or cannot take, the org
// check, notification dedupe (across restarts), the signed JSON variant, and the real startServer.
import { createHmac } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAccount } from '../../core/accounts/admin.ts';
import type { Installation, InstallationSettings } from '../../bridge/model.ts';
import { ENRICH_JOB } from '../../bridge/enrich-job.ts';
import { SALESFORCE_PROVIDER } from '../../connectors/salesforce/connector.ts';
import { OUTBOUND_MESSAGE_MAX_BYTES } from '../../connectors/salesforce/outbound-xml.ts';
import { toSalesforceId18 } from '../../connectors/salesforce/ids.ts';
import { SALESFORCE_EVENTS_ROUTE, SALESFORCE_OUTBOUND_MESSAGE_ROUTE, salesforceOutboundMessagePath } from '../../connectors/salesforce/paths.ts';
import { createApp } from '../../server/http/app.ts';
import { type Config, loadConfig } from '../../server/config.ts';
import { createLogger } from '../../server/logger.ts';
import { type Runtime, openRuntime, startServer } from '../../server/runtime.ts';
import { crmRouter } from '../../server/http/crm-routes.ts';
import { salesforceModule } from '../../connectors/salesforce/index.ts';
import { tempDir } from '../support/harness.ts';

const logger = createLogger('silent');
const FIXTURES = path.join(import.meta.dirname, '..', 'fixtures', 'salesforce');
const fixture = (name: string): Buffer => readFileSync(path.join(FIXTURES, name));
const fixtureText = (name: string): string => fixture(name).toString('utf8');

/** The org every fixture but the unknown-org one comes from, as its `OrganizationId` says. */
const ORG_ID = '00D8a000001FkQzEAK';
/** The org of outbound-unknown-org.xml: a real-shaped org nobody connected. */
const OTHER_ORG_ID = '00D3t000004WbXyEAK';

/** The acknowledgement Salesforce waits for, written out from docs/reference/crm-platforms.md section 7, not imported. */
const ACK =
  '<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>\n' +
  '<notificationsResponse xmlns="http://soap.sforce.com/2005/09/outbound"><Ack>true</Ack></notificationsResponse>\n' +
  '</soapenv:Body></soapenv:Envelope>';
const SOAP_ENVELOPE_NS = 'http://schemas.xmlsoap.org/soap/envelope/';

/** The 18-character form of a 15-character id (written by hand here, checked by toSalesforceId18). */
function id18(id15: string): string {
  const id = toSalesforceId18(id15);
  if (id === null || id15.length !== 15) throw new Error(`not a 15-character Salesforce id: ${id15}`);
  return id;
}

/** The record ids (`<sf:Id>`) of a fixture, read with a regular expression rather than the parser under test. */
function recordIdsIn(xml: string): string[] {
  return [...xml.matchAll(/<sf:Id>([^<]+)<\/sf:Id>/g)].map((m) => m[1] ?? '');
}

// ---------------------------------------------------------------------------------------------------
// The rig

interface Rig {
  readonly origin: string;
  readonly config: Config;
  /** The runtime the server currently uses (a new one after restart()). */
  readonly runtime: Runtime;
  /** Times the routes nudged the workers. */
  readonly wakes: { count: number };
  /** Closes the runtime and opens a new one on the same data folder, as a process restart would. */
  restart(): Promise<void>;
  /** Closes the store under the running server (a database that went away). */
  closeStore(): Promise<void>;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * The routes as startServer mounts them, on a real data folder, listening on a loopback port. The
 * envelope tests below post to the bare path, as an operator who enabled SALESFORCE_OUTBOUND_LEGACY_PATH
 * lets them (what they check does not depend on the URL); the secret in the URL has tests of its own.
 */
async function startRig(options: { legacyPath?: boolean; ratePerAddress?: number } = {}): Promise<Rig> {
  const dataDir = tempDir('enrichbridge-salesforce-routes-');
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', WORKER_CONCURRENCY: '0' });
  const wakes = { count: 0 };
  const build = (runtime: Runtime) =>
    createApp({
      service: runtime.service,
      logger,
      trustProxy: false,
      requireHttps: false,
      routers: [
        crmRouter(
          [
            salesforceModule({
              outbound: { legacyPath: options.legacyPath ?? true, ...(options.ratePerAddress === undefined ? {} : { ratePerAddress: options.ratePerAddress }) },
            }),
          ],
          {
            publicUrl: config.publicUrl,
            bridge: runtime.bridge,
            queue: runtime.opened.queue,
            box: runtime.box,
            log: logger,
            wake: () => {
              wakes.count += 1;
            },
          },
        ),
      ],
    });
  let runtime = await openRuntime(config, logger);
  let app = build(runtime);
  let storeOpen = true;
  const server: Server = createServer((req, res) => {
    app(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo; // a TCP listener always reports an AddressInfo
  const closeStore = async () => {
    if (!storeOpen) return;
    storeOpen = false;
    await runtime.close();
  };
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await closeStore();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return {
    origin: `http://127.0.0.1:${port}`,
    config,
    get runtime() {
      return runtime;
    },
    wakes,
    async restart() {
      await closeStore();
      runtime = await openRuntime(config, logger);
      storeOpen = true;
      app = build(runtime);
    },
    closeStore,
  };
}

let accounts = 0;

/** A Salesforce installation for `orgId` (18 characters), as `salesforce connect` leaves it. */
async function install(runtime: Runtime, options: { orgId?: string; settings?: Partial<InstallationSettings> } = {}): Promise<Installation> {
  accounts += 1;
  const accountName = `acme-${accounts}`;
  const orgId = options.orgId ?? ORG_ID;
  await createAccount(runtime.opened.store, accountName, {});
  return runtime.bridge.installations.create({
    provider: SALESFORCE_PROVIDER,
    externalAccountId: orgId,
    environment: 'sandbox',
    target: { kind: 'local', accountName },
    crmCredentials: { kind: 'static', instanceUrl: 'https://example.my.salesforce.com', accessToken: 't', orgId },
    settings: options.settings ?? {},
  });
}

const JobPayloadSchema = z.object({ object: z.string(), recordId: z.string(), trigger: z.string() });

interface QueuedJob {
  readonly installationId: string;
  readonly state: string;
  readonly object: string;
  readonly recordId: string;
  readonly trigger: string;
}

/** Ids differ by case alone (`…Jd5aq…`, `…Jd5Zp…`): sorted by code point, as Array.prototype.sort does. */
const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Every enrichment job on disk, whatever its state, by record id. */
async function jobsTable(runtime: Runtime): Promise<QueuedJob[]> {
  const rows = await runtime.opened.db.selectFrom('jobs').select(['installation_id', 'state', 'payload']).where('kind', '=', ENRICH_JOB).execute();
  return rows
    .map((row) => ({ installationId: row.installation_id, state: row.state, ...JobPayloadSchema.parse(JSON.parse(row.payload)) }))
    .sort((a, b) => byCodePoint(a.recordId, b.recordId) || byCodePoint(a.state, b.state));
}

const recordIdsOf = (jobs: readonly QueuedJob[]): string[] => jobs.map((j) => j.recordId).sort();

/**
 * Runs the queued jobs to completion as a worker would (without enriching), so the queue's own dedupe
 * of pending jobs cannot hide a second job: what stops a redelivery then is the route alone.
 */
async function finishJobs(runtime: Runtime): Promise<void> {
  const { queue } = runtime.opened;
  const jobs = await queue.claimBatch({ workerId: 'test-worker', limit: 1000, leaseMs: 60_000, kinds: [ENRICH_JOB] });
  for (const job of jobs) await queue.complete(job.id, 'test-worker');
}

interface Reply {
  readonly status: number;
  readonly contentType: string;
  readonly bytes: Buffer;
  readonly text: string;
}

async function post(url: string, body: string | Buffer, headers: Record<string, string>): Promise<Reply> {
  // fetch's body types take bytes over an ArrayBuffer; a Buffer may sit on a SharedArrayBuffer.
  const response = await fetch(url, { method: 'POST', headers, body: typeof body === 'string' ? body : new Uint8Array(body) });
  const bytes = Buffer.from(await response.arrayBuffer());
  return { status: response.status, contentType: response.headers.get('content-type') ?? '', bytes, text: bytes.toString('utf8') };
}

/** Posts an envelope as Salesforce does: text/xml and an empty SOAPAction; to the bare path unless given another. */
function deliver(origin: string, body: string | Buffer, route: string = SALESFORCE_OUTBOUND_MESSAGE_ROUTE): Promise<Reply> {
  return post(`${origin}${route}`, body, { 'content-type': 'text/xml; charset=utf-8', soapaction: '""' });
}

function expectAck(reply: Reply): void {
  expect(reply.status).toBe(200);
  expect(reply.contentType).toMatch(/^text\/xml\b/);
  expect(reply.bytes.equals(Buffer.from(ACK, 'utf8'))).toBe(true);
}

const faultParser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@_', parseTagValue: false });
const FaultSchema = z.object({
  'soapenv:Envelope': z.object({
    '@_xmlns:soapenv': z.literal(SOAP_ENVELOPE_NS),
    'soapenv:Body': z.object({ 'soapenv:Fault': z.object({ faultcode: z.string(), faultstring: z.string() }) }),
  }),
});

/** A SOAP 1.1 fault with HTTP 500 (or the 4xx of a body never read) and text/xml; its faultcode without the prefix. */
function faultCodeOf(reply: Reply, status = 500): string {
  expect(reply.status).toBe(status);
  expect(reply.contentType).toMatch(/^text\/xml\b/);
  const fault = FaultSchema.parse(faultParser.parse(reply.text))['soapenv:Envelope']['soapenv:Body']['soapenv:Fault'];
  expect(fault.faultcode).toMatch(/^soapenv:/);
  expect(fault.faultstring).not.toBe('');
  return fault.faultcode.slice('soapenv:'.length);
}

interface Note {
  /** The notification id (04l…). */
  readonly id: string;
  readonly object: string;
  readonly recordId: string;
}

/** An envelope shaped like the recorded ones, with these notifications. */
function envelope(orgId: string, notes: readonly Note[]): string {
  const org15 = orgId.slice(0, 15);
  const notifications = notes
    .map(
      (n) =>
        `   <Notification>\n    <Id>${n.id}</Id>\n    <sObject xsi:type="sf:${n.object}" xmlns:sf="urn:sobject.enterprise.soap.sforce.com">\n` +
        `     <sf:Id>${n.recordId}</sf:Id>\n     <sf:Name>Someone</sf:Name>\n    </sObject>\n   </Notification>\n`,
    )
    .join('');
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    '<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n' +
    ' <soapenv:Body>\n  <notifications xmlns="http://soap.sforce.com/2005/09/outbound">\n' +
    `   <OrganizationId>${orgId}</OrganizationId>\n   <ActionId>04k8a000000PNcLAAW</ActionId>\n   <SessionId xsi:nil="true"/>\n` +
    `   <EnterpriseUrl>https://enrichbridge-demo.my.salesforce.com/services/Soap/c/62.0/${org15}</EnterpriseUrl>\n` +
    `   <PartnerUrl>https://enrichbridge-demo.my.salesforce.com/services/Soap/u/62.0/${org15}</PartnerUrl>\n` +
    notifications +
    '  </notifications>\n </soapenv:Body>\n</soapenv:Envelope>\n'
  );
}

// The single-Contact fixture's ids.
const CONTACT_NOTIFICATION = '04l8a00000Bq1aZAAR';
const CONTACT_RECORD = '0038a00000Rk4TzAAJ';

// ---------------------------------------------------------------------------------------------------
// Outbound messages

describe('POST /webhooks/salesforce/outbound-message: each recorded envelope', () => {
  it('queues one Contact (recordId 18 characters, trigger create) and answers the exact Ack as text/xml', async () => {
    const rig = await startRig();
    const inst = await install(rig.runtime);

    const reply = await deliver(rig.origin, fixture('outbound-contact.xml'));

    expectAck(reply);
    expect(await jobsTable(rig.runtime)).toEqual([
      { installationId: inst.id, state: 'queued', object: 'Contact', recordId: CONTACT_RECORD, trigger: 'create' },
    ]);
    expect(rig.wakes.count).toBe(1);
  });

  it('queues one Lead', async () => {
    const rig = await startRig();
    const inst = await install(rig.runtime);

    const reply = await deliver(rig.origin, fixture('outbound-lead.xml'));

    expectAck(reply);
    expect(await jobsTable(rig.runtime)).toEqual([
      { installationId: inst.id, state: 'queued', object: 'Lead', recordId: '00Q8a00000Jd5WmEAJ', trigger: 'create' },
    ]);
  });

  it('queues all 100 notifications of a full message', async () => {
    const rig = await startRig();
    const inst = await install(rig.runtime);
    const xml = fixtureText('outbound-contact-100.xml');
    const expected = recordIdsIn(xml).sort();
    expect(new Set(expected).size).toBe(100);

    const reply = await deliver(rig.origin, xml);

    expectAck(reply);
    const jobs = await jobsTable(rig.runtime);
    expect(recordIdsOf(jobs)).toEqual(expected);
    expect(jobs.every((j) => j.installationId === inst.id && j.object === 'Contact' && j.trigger === 'create' && j.state === 'queued')).toBe(true);
  });

  it('accepts a nil SessionId, and a sent session id without keeping it', async () => {
    const rig = await startRig();
    await install(rig.runtime);

    const nil = await deliver(rig.origin, fixture('outbound-session-nil.xml'));
    await finishJobs(rig.runtime);
    const withSession = await deliver(rig.origin, envelopeWithSession());

    expectAck(nil);
    expectAck(withSession);
    expect(recordIdsOf(await jobsTable(rig.runtime))).toEqual(['0038a00000Rk4UaAAJ', '0038a00000Rk4UbAAJ']);
    // Nothing on disk carries the session token.
    const payloads = await rig.runtime.opened.db.selectFrom('jobs').select('payload').execute();
    expect(payloads.some((row) => row.payload.includes('Scrubbed.session'))).toBe(false);
  });

  it('queues both Leads of an envelope full of entities and non-ASCII text', async () => {
    const rig = await startRig();
    await install(rig.runtime);

    const reply = await deliver(rig.origin, fixture('outbound-entities.xml'));

    expectAck(reply);
    expect((await jobsTable(rig.runtime)).map((j) => [j.object, j.recordId])).toEqual([
      ['Lead', '00Q8a00000Jd5XnEAJ'],
      ['Lead', '00Q8a00000Jd5YoEAJ'],
    ]);
  });

  it('queues a record sent by its 15-character id under its 18-character id', async () => {
    const rig = await startRig();
    await install(rig.runtime);

    const reply = await deliver(
      rig.origin,
      fixtureText('outbound-contact.xml').replace(`<sf:Id>${CONTACT_RECORD}</sf:Id>`, `<sf:Id>${CONTACT_RECORD.slice(0, 15)}</sf:Id>`),
    );

    expectAck(reply);
    expect(recordIdsOf(await jobsTable(rig.runtime))).toEqual([CONTACT_RECORD]);
  });
});

/** The session-id fixture, with a notification and record of its own so it is not a redelivery of the nil one. */
function envelopeWithSession(): string {
  return fixtureText('outbound-session-id.xml')
    .replace('<Id>04l8a00000Bq1cQAAR</Id>', `<Id>${id18('04l8a00000Bq1cR')}</Id>`)
    .replace('0038a00000Rk4UaAAJ', id18('0038a00000Rk4Ub'));
}

describe('POST /webhooks/salesforce/outbound-message: what it refuses', () => {
  it.each([
    ['a truncated envelope', 'outbound-malformed.xml'],
    ['billion laughs', 'outbound-billion-laughs.xml'],
    ['a DOCTYPE with an external entity', 'outbound-doctype-xxe.xml'],
  ])('answers %s with a Client fault, queues nothing, remembers nothing, and keeps serving', async (_what, file) => {
    const rig = await startRig();
    await install(rig.runtime);

    const reply = await deliver(rig.origin, fixture(file));

    expect(faultCodeOf(reply)).toBe('Client');
    expect(reply.text).not.toContain('root:');
    expect(await jobsTable(rig.runtime)).toEqual([]);
    // The same notification id, delivered properly, is still new.
    expectAck(await deliver(rig.origin, fixture('outbound-contact.xml')));
    expect(recordIdsOf(await jobsTable(rig.runtime))).toEqual([CONTACT_RECORD]);
  });

  it('answers an organization that is not connected with a fault, and queues nothing', async () => {
    const rig = await startRig();
    await install(rig.runtime);
    // Another CRM's installation with the same account id does not make the org a connected one.
    await createAccount(rig.runtime.opened.store, 'other-crm', {});
    await rig.runtime.bridge.installations.create({
      provider: 'hubspot',
      externalAccountId: OTHER_ORG_ID,
      environment: 'sandbox',
      target: { kind: 'local', accountName: 'other-crm' },
      crmCredentials: { kind: 'static', accessToken: 't' },
    });

    const reply = await deliver(rig.origin, fixture('outbound-unknown-org.xml'));

    expect(faultCodeOf(reply)).toBe('Client');
    expect(await jobsTable(rig.runtime)).toEqual([]);
    expect(rig.wakes.count).toBe(0);
  });

  it('answers a body over the size cap with a Client fault, just over it and far over it, and keeps serving', async () => {
    const rig = await startRig();
    await install(rig.runtime);
    const contact = fixtureText('outbound-contact.xml');
    const padded = (size: number) => contact.replace('?>\n', `?>\n${' '.repeat(size - Buffer.byteLength(contact))}`);

    const justOver = await deliver(rig.origin, padded(OUTBOUND_MESSAGE_MAX_BYTES + 1));
    const farOver = await deliver(rig.origin, padded(3 * OUTBOUND_MESSAGE_MAX_BYTES));

    expect(faultCodeOf(justOver)).toBe('Client');
    // Far over, the body is not even read: the fault comes with 413, as every route answers an unreadable body.
    expect(faultCodeOf(farOver, 413)).toBe('Client');
    expect(await jobsTable(rig.runtime)).toEqual([]);
    expectAck(await deliver(rig.origin, contact));
  });

  it('answers an empty body and a JSON body with Client faults', async () => {
    const rig = await startRig();
    await install(rig.runtime);

    const empty = await post(`${rig.origin}${SALESFORCE_OUTBOUND_MESSAGE_ROUTE}`, '', { 'content-type': 'text/xml' });
    const json = await post(`${rig.origin}${SALESFORCE_OUTBOUND_MESSAGE_ROUTE}`, JSON.stringify({ orgId: ORG_ID }), { 'content-type': 'application/json' });

    expect(faultCodeOf(empty)).toBe('Client');
    expect(faultCodeOf(json)).toBe('Client');
    expect(await jobsTable(rig.runtime)).toEqual([]);
  });
});

describe('POST /webhooks/salesforce/outbound-message/<secret>: the secret in the URL, checked before parsing', () => {
  /** The recorded contact envelope with everything after the org id made unparseable: only a parse would notice. */
  const unparseableAfterOrg = (orgId: string) => {
    const contact = fixtureText('outbound-contact.xml').replace(ORG_ID, orgId);
    const cut = contact.indexOf('</OrganizationId>') + '</OrganizationId>'.length;
    return `${contact.slice(0, cut)}<<<not xml &&& ${'x'.repeat(1000)}`;
  };

  it("queues a message posted to the installation's own secret URL", async () => {
    const rig = await startRig({ legacyPath: false });
    const inst = await install(rig.runtime);
    const secret = await rig.runtime.bridge.installations.outboundSecret(inst.id);

    expectAck(await deliver(rig.origin, fixture('outbound-contact.xml'), salesforceOutboundMessagePath(secret)));
    expect(recordIdsOf(await jobsTable(rig.runtime))).toEqual([CONTACT_RECORD]);
  });

  it("refuses a wrong secret, another org's secret and the bare path before the body is parsed, and queues nothing", async () => {
    const rig = await startRig({ legacyPath: false });
    const inst = await install(rig.runtime);
    const other = await install(rig.runtime, { orgId: OTHER_ORG_ID });
    await rig.runtime.bridge.installations.outboundSecret(inst.id);
    const othersSecret = await rig.runtime.bridge.installations.outboundSecret(other.id);
    const body = unparseableAfterOrg(ORG_ID);

    const wrong = await deliver(rig.origin, body, salesforceOutboundMessagePath('not-the-secret'));
    const others = await deliver(rig.origin, body, salesforceOutboundMessagePath(othersSecret));
    const bare = await deliver(rig.origin, body);

    // Not "malformed": the body after the org id was never parsed.
    for (const reply of [wrong, others]) {
      expect(faultCodeOf(reply)).toBe('Client');
      expect(reply.text).toContain('not connected to enrichbridge at this address');
    }
    expect(faultCodeOf(bare, 404)).toBe('Client');
    expect(bare.text).toContain('outbound-url');
    expect(await jobsTable(rig.runtime)).toEqual([]);
  });

  it('refuses an organization that is not connected before the body is parsed', async () => {
    const rig = await startRig({ legacyPath: false });
    await install(rig.runtime);

    const reply = await deliver(rig.origin, unparseableAfterOrg(OTHER_ORG_ID), salesforceOutboundMessagePath('anything'));

    expect(faultCodeOf(reply)).toBe('Client');
    expect(reply.text).toContain('not connected to enrichbridge at this address');
  });

  it('refuses an installation that has no outbound secret yet, and does not make one', async () => {
    const rig = await startRig({ legacyPath: false });
    const inst = await install(rig.runtime);

    const reply = await deliver(rig.origin, fixture('outbound-contact.xml'), salesforceOutboundMessagePath('guess'));

    expect(faultCodeOf(reply)).toBe('Client');
    expect((await rig.runtime.bridge.installations.secrets(inst.id)).outboundSecret).toBeUndefined();
  });

  it('caps the body near what 100 notifications need: a full recorded message fits, a body over the cap gets 413 unread', async () => {
    const rig = await startRig({ legacyPath: false });
    const inst = await install(rig.runtime);
    const path100 = salesforceOutboundMessagePath(await rig.runtime.bridge.installations.outboundSecret(inst.id));
    const full = fixture('outbound-contact-100.xml');
    // Near the ~350 KB of a 100-notification message with every field at full length, not 1 MiB.
    expect(OUTBOUND_MESSAGE_MAX_BYTES).toBeLessThanOrEqual(400 * 1024);

    expectAck(await deliver(rig.origin, full, path100));
    const over = await deliver(rig.origin, Buffer.concat([full, Buffer.alloc(OUTBOUND_MESSAGE_MAX_BYTES + 4096, 0x20)]), path100);
    expect(faultCodeOf(over, 413)).toBe('Client');
  });

  it("never rate-limits an org's genuine messages, however many come from one address", async () => {
    const rig = await startRig({ legacyPath: false, ratePerAddress: 5 });
    const inst = await install(rig.runtime);
    const path = salesforceOutboundMessagePath(await rig.runtime.bridge.installations.outboundSecret(inst.id));

    const replies = await Promise.all(Array.from({ length: 12 }, () => deliver(rig.origin, fixture('outbound-contact.xml'), path)));

    for (const reply of replies) expectAck(reply);
  });

  it('turns away unread an address whose messages were refused too often: past the rate of refusals, 429 with a Server fault', async () => {
    const rig = await startRig({ legacyPath: false, ratePerAddress: 5 });
    await install(rig.runtime);
    const body = unparseableAfterOrg(OTHER_ORG_ID);

    const replies: Reply[] = [];
    for (let i = 0; i < 8; i += 1) replies.push(await deliver(rig.origin, body, salesforceOutboundMessagePath('x')));

    expect(replies.map((r) => r.status).sort()).toEqual([429, 429, 429, 500, 500, 500, 500, 500]);
    const limited = replies.find((r) => r.status === 429);
    expect(limited).toBeDefined();
    if (limited !== undefined) expect(faultCodeOf(limited, 429)).toBe('Server');
  });
});

describe('POST /webhooks/salesforce/outbound-message: the organization', () => {
  it('finds the installation from the 15-character, 18-character and case-folded 18-character org id', async () => {
    const rig = await startRig();
    const inst = await install(rig.runtime);
    const contact = fixtureText('outbound-contact.xml');
    const org15 = ORG_ID.slice(0, 15);
    const records = [id18('0038a00000Rk5Aa'), id18('0038a00000Rk5Bb'), id18('0038a00000Rk5Cc')];
    const forms = [org15, ORG_ID, ORG_ID.toUpperCase()];

    const replies = [];
    for (const [i, org] of forms.entries()) {
      const note: Note = { id: id18(`04l8a00000Bz${i}Aa`), object: 'Contact', recordId: records[i] ?? '' };
      replies.push(await deliver(rig.origin, envelope(org, [note])));
    }

    for (const reply of replies) expectAck(reply);
    const jobs = await jobsTable(rig.runtime);
    expect(recordIdsOf(jobs)).toEqual([...records].sort());
    expect(jobs.every((j) => j.installationId === inst.id)).toBe(true);
    // A redelivery under the other form of the org id is the same notification.
    await finishJobs(rig.runtime);
    expectAck(await deliver(rig.origin, contact));
    await finishJobs(rig.runtime);
    expectAck(await deliver(rig.origin, contact.replace(`<OrganizationId>${ORG_ID}</OrganizationId>`, `<OrganizationId>${org15}</OrganizationId>`)));
    expect((await jobsTable(rig.runtime)).filter((j) => j.recordId === CONTACT_RECORD)).toHaveLength(1);
  });

  it('queues for the installation of the org that sent the message, not another connected org', async () => {
    const rig = await startRig();
    await install(rig.runtime);
    const other = await install(rig.runtime, { orgId: OTHER_ORG_ID });

    expectAck(await deliver(rig.origin, fixture('outbound-unknown-org.xml')));

    expect(await jobsTable(rig.runtime)).toEqual([
      { installationId: other.id, state: 'queued', object: 'Contact', recordId: '0033t00000Lm8NpAAJ', trigger: 'create' },
    ]);
  });
});

describe('POST /webhooks/salesforce/outbound-message: redeliveries', () => {
  it('acknowledges a redelivered message without queueing its notifications again', async () => {
    const rig = await startRig();
    await install(rig.runtime);

    expectAck(await deliver(rig.origin, fixture('outbound-contact.xml')));
    // The first job has run: only the route's memory of the notification id can stop a second one.
    await finishJobs(rig.runtime);
    const wakes = rig.wakes.count;
    const again = await deliver(rig.origin, fixture('outbound-contact.xml'));

    expectAck(again);
    expect(await jobsTable(rig.runtime)).toMatchObject([{ recordId: CONTACT_RECORD, state: 'done' }]);
    expect(rig.wakes.count).toBe(wakes);
  });

  it('remembers delivered notification ids across a restart', async () => {
    const rig = await startRig();
    await install(rig.runtime);

    expectAck(await deliver(rig.origin, fixture('outbound-contact-100.xml')));
    await finishJobs(rig.runtime);
    await rig.restart();
    const again = await deliver(rig.origin, fixture('outbound-contact-100.xml'));

    expectAck(again);
    const jobs = await jobsTable(rig.runtime);
    expect(jobs).toHaveLength(100);
    expect(jobs.every((j) => j.state === 'done')).toBe(true);
  });

  it('queues only the new notification of a redelivered message that gained one', async () => {
    const rig = await startRig();
    const inst = await install(rig.runtime);
    const first: Note = { id: CONTACT_NOTIFICATION, object: 'Contact', recordId: CONTACT_RECORD };
    const added: Note = { id: id18('04l8a00000Bq9Zz'), object: 'Lead', recordId: id18('00Q8a00000Jd9Zz') };

    expectAck(await deliver(rig.origin, envelope(ORG_ID, [first])));
    await finishJobs(rig.runtime);
    const reply = await deliver(rig.origin, envelope(ORG_ID, [first, added]));

    expectAck(reply);
    expect(await jobsTable(rig.runtime)).toEqual([
      { installationId: inst.id, state: 'done', object: 'Contact', recordId: CONTACT_RECORD, trigger: 'create' },
      { installationId: inst.id, state: 'queued', object: 'Lead', recordId: added.recordId, trigger: 'create' },
    ]);
  });
});

describe('POST /webhooks/salesforce/outbound-message: what it acknowledges without queueing', () => {
  it('acknowledges a disabled installation without queueing', async () => {
    const rig = await startRig();
    const inst = await install(rig.runtime);
    await rig.runtime.bridge.installations.disable(inst.id);

    expectAck(await deliver(rig.origin, fixture('outbound-contact.xml')));

    expect(await jobsTable(rig.runtime)).toEqual([]);
    expect(rig.wakes.count).toBe(0);
  });

  it('acknowledges without queueing when enrichment on create is off', async () => {
    const rig = await startRig();
    await install(rig.runtime, { settings: { enrichOnCreate: false } });

    expectAck(await deliver(rig.origin, fixture('outbound-lead.xml')));

    expect(await jobsTable(rig.runtime)).toEqual([]);
  });

  it('queues for a paused installation: its jobs wait rather than being dropped', async () => {
    const rig = await startRig();
    const inst = await install(rig.runtime);
    await rig.runtime.bridge.installations.pause(inst.id);

    expectAck(await deliver(rig.origin, fixture('outbound-contact.xml')));

    expect(recordIdsOf(await jobsTable(rig.runtime))).toEqual([CONTACT_RECORD]);
  });

  it('skips an sObject the installation does not enrich (an Account, where it names none) and queues the rest of the message', async () => {
    const rig = await startRig();
    await install(rig.runtime);
    const account: Note = { id: id18('04l8a00000Bq7Ac'), object: 'Account', recordId: id18('0018a00000Ab1Cd') };
    const contact: Note = { id: id18('04l8a00000Bq7Co'), object: 'Contact', recordId: id18('0038a00000Ab1Cd') };

    const reply = await deliver(rig.origin, envelope(ORG_ID, [account, contact]));

    expectAck(reply);
    expect((await jobsTable(rig.runtime)).map((j) => [j.object, j.recordId])).toEqual([['Contact', contact.recordId]]);
  });
});

describe('POST /webhooks/salesforce/outbound-message: when the notifications cannot be queued', () => {
  it('answers a Server fault while the database refuses writes, and queues the retry', async () => {
    const rig = await startRig();
    await install(rig.runtime);
    const { db } = rig.runtime.opened;

    await sql`PRAGMA query_only = ON`.execute(db);
    const refused = await deliver(rig.origin, fixture('outbound-contact.xml'));
    await sql`PRAGMA query_only = OFF`.execute(db);
    const retried = await deliver(rig.origin, fixture('outbound-contact.xml'));

    expect(faultCodeOf(refused)).toBe('Server');
    expectAck(retried);
    expect(recordIdsOf(await jobsTable(rig.runtime))).toEqual([CONTACT_RECORD]);
  });

  it('does not remember a notification whose job could not be queued', async () => {
    const rig = await startRig();
    await install(rig.runtime);
    const { db } = rig.runtime.opened;
    // Only the jobs table fails (as a full disk would): the route must not remember first.
    await sql`CREATE TRIGGER fail_jobs BEFORE INSERT ON jobs BEGIN SELECT RAISE(ABORT, 'disk I/O error'); END`.execute(db);

    const refused = await deliver(rig.origin, fixture('outbound-contact.xml'));
    await sql`DROP TRIGGER fail_jobs`.execute(db);
    const retried = await deliver(rig.origin, fixture('outbound-contact.xml'));

    expect(faultCodeOf(refused)).toBe('Server');
    expectAck(retried);
    expect(recordIdsOf(await jobsTable(rig.runtime))).toEqual([CONTACT_RECORD]);
  });

  it('answers a Server fault when the store is gone', async () => {
    const rig = await startRig();
    await install(rig.runtime);
    await rig.closeStore();

    expect(faultCodeOf(await deliver(rig.origin, fixture('outbound-contact.xml')))).toBe('Server');
  });
});

// ---------------------------------------------------------------------------------------------------
// The signed JSON variant

const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/** The headers the Apex callout sends, computed here from the documented scheme, not with the module's signer. */
function signed(secret: string, body: string, timestamp: number = nowSeconds()): Record<string, string> {
  const mac = createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex');
  return { 'content-type': 'application/json', 'x-enrichbridge-timestamp': String(timestamp), 'x-enrichbridge-signature': `v1=${mac}` };
}

interface EventsReply {
  readonly status: number;
  readonly json: unknown;
}

async function sendEvents(origin: string, body: string, headers: Record<string, string>): Promise<EventsReply> {
  const reply = await post(`${origin}${SALESFORCE_EVENTS_ROUTE}`, body, headers);
  let json: unknown = null;
  try {
    json = JSON.parse(reply.text);
  } catch {
    json = null;
  }
  return { status: reply.status, json };
}

const CountsSchema = z.strictObject({ queued: z.number(), duplicates: z.number() });

async function eventsRig(): Promise<{ rig: Rig; inst: Installation; secret: string }> {
  const rig = await startRig();
  const inst = await install(rig.runtime);
  const secret = await rig.runtime.bridge.installations.webhookSecret(inst.id);
  return { rig, inst, secret };
}

describe('POST /webhooks/salesforce/events: signed callouts', () => {
  it('queues the Contacts and Leads of correctly signed bodies', async () => {
    const { rig, inst, secret } = await eventsRig();
    const contacts = fixtureText('events-contact.json');
    const leads = fixtureText('events-lead.json');

    const contactReply = await sendEvents(rig.origin, contacts, signed(secret, contacts));
    const leadReply = await sendEvents(rig.origin, leads, signed(secret, leads));

    expect(contactReply.status).toBe(200);
    expect(CountsSchema.parse(contactReply.json)).toEqual({ queued: 3, duplicates: 0 });
    expect(CountsSchema.parse(leadReply.json)).toEqual({ queued: 2, duplicates: 0 });
    expect((await jobsTable(rig.runtime)).map((j) => [j.installationId, j.object, j.recordId, j.trigger])).toEqual([
      [inst.id, 'Contact', '0038a00000Rk4VbAAJ', 'create'],
      [inst.id, 'Contact', '0038a00000Rk4WcAAJ', 'create'],
      [inst.id, 'Contact', '0038a00000Rk4XdAAJ', 'create'],
      [inst.id, 'Lead', '00Q8a00000Jd5ZpEAJ', 'create'],
      [inst.id, 'Lead', '00Q8a00000Jd5aqEAB', 'create'],
    ]);
    expect(rig.wakes.count).toBe(2);
  });

  it('queues a record sent several times, in either id form, once', async () => {
    const { rig, secret } = await eventsRig();
    const id = '0038a00000Rk4VbAAJ';
    const body = JSON.stringify({ orgId: ORG_ID.slice(0, 15), object: 'Contact', ids: [id, id, id.slice(0, 15)] });

    const first = await sendEvents(rig.origin, body, signed(secret, body));
    const second = await sendEvents(rig.origin, body, signed(secret, body));

    expect(CountsSchema.parse(first.json)).toEqual({ queued: 1, duplicates: 0 });
    expect(CountsSchema.parse(second.json)).toEqual({ queued: 0, duplicates: 1 });
    expect(recordIdsOf(await jobsTable(rig.runtime))).toEqual([id]);
  });

  it('answers a disabled installation with 200 and queues nothing', async () => {
    const { rig, inst, secret } = await eventsRig();
    await rig.runtime.bridge.installations.disable(inst.id);
    const body = fixtureText('events-contact.json');

    const reply = await sendEvents(rig.origin, body, signed(secret, body));

    expect(reply.status).toBe(200);
    expect(CountsSchema.parse(reply.json)).toEqual({ queued: 0, duplicates: 0 });
    expect(await jobsTable(rig.runtime)).toEqual([]);
  });
});

describe('POST /webhooks/salesforce/events: signatures', () => {
  it('refuses with 401 a wrong secret, a stale or future timestamp, a tampered body and missing headers', async () => {
    const { rig, secret } = await eventsRig();
    const body = fixtureText('events-contact.json');
    const tampered = JSON.stringify({ orgId: ORG_ID, object: 'Contact', ids: ['0038a00000Rk4VbAAJ', '0038a00000Rk4ZzAAJ'] });
    const good = signed(secret, body);
    const noSignature = { 'content-type': 'application/json', 'x-enrichbridge-timestamp': good['x-enrichbridge-timestamp'] ?? '' };
    const noTimestamp = { 'content-type': 'application/json', 'x-enrichbridge-signature': good['x-enrichbridge-signature'] ?? '' };

    const replies = {
      wrongSecret: await sendEvents(rig.origin, body, signed('not-the-secret', body)),
      stale: await sendEvents(rig.origin, body, signed(secret, body, nowSeconds() - 10 * 60)),
      future: await sendEvents(rig.origin, body, signed(secret, body, nowSeconds() + 10 * 60)),
      tampered: await sendEvents(rig.origin, tampered, good),
      reserialised: await sendEvents(rig.origin, JSON.stringify(JSON.parse(body), null, 2), good),
      noSignature: await sendEvents(rig.origin, body, noSignature),
      noTimestamp: await sendEvents(rig.origin, body, noTimestamp),
      noHeaders: await sendEvents(rig.origin, body, { 'content-type': 'application/json' }),
    };

    for (const reply of Object.values(replies)) expect(reply.status).toBe(401);
    expect(await jobsTable(rig.runtime)).toEqual([]);
    // The same body, signed properly, goes through: the refusals were the signature's.
    expect((await sendEvents(rig.origin, body, signed(secret, body))).status).toBe(200);
  });

  it("refuses a body signed with another connected org's secret, and an org that is not connected", async () => {
    const { rig, secret } = await eventsRig();
    const other = await install(rig.runtime, { orgId: OTHER_ORG_ID });
    const otherSecret = await rig.runtime.bridge.installations.webhookSecret(other.id);
    const ours = fixtureText('events-contact.json');
    const theirs = JSON.stringify({ orgId: OTHER_ORG_ID, object: 'Contact', ids: ['0033t00000Lm8NpAAJ'] });
    const unknown = JSON.stringify({ orgId: id18('00D5e000000AbCd'), object: 'Contact', ids: ['0033t00000Lm8NpAAJ'] });

    const crossed = await sendEvents(rig.origin, ours, signed(otherSecret, ours));
    const notConnected = await sendEvents(rig.origin, unknown, signed(secret, unknown));
    const theirsProperly = await sendEvents(rig.origin, theirs, signed(otherSecret, theirs));

    expect(crossed.status).toBe(401);
    expect(notConnected.status).toBe(401);
    expect(theirsProperly.status).toBe(200);
    expect((await jobsTable(rig.runtime)).map((j) => [j.installationId, j.recordId])).toEqual([[other.id, '0033t00000Lm8NpAAJ']]);
  });

  it('refuses every request for an installation that has no signing secret yet, and does not make one', async () => {
    const rig = await startRig();
    const inst = await install(rig.runtime);
    const body = fixtureText('events-contact.json');

    const reply = await sendEvents(rig.origin, body, signed('', body));

    expect(reply.status).toBe(401);
    expect((await rig.runtime.bridge.installations.secrets(inst.id)).webhookSecret).toBeUndefined();
    expect(await jobsTable(rig.runtime)).toEqual([]);
  });
});

describe('POST /webhooks/salesforce/events: bodies', () => {
  it('answers 400 to a correctly signed body that is not a valid request', async () => {
    const { rig, secret } = await eventsRig();
    const bodies = [
      { orgId: ORG_ID, object: 'Account', ids: ['0018a00000Ab1CdAAJ'] },
      // The org by its 15-character id still picks the installation whose secret signed it.
      { orgId: ORG_ID.slice(0, 15), object: 'Account', ids: ['0018a00000Ab1CdAAJ'] },
      { orgId: ORG_ID, object: 'Contact', ids: [] },
      { orgId: ORG_ID, object: 'Contact', ids: ['00Q8a00000Jd5ZpEAJ'] },
      { orgId: ORG_ID, object: 'Contact', ids: ['not-an-id'] },
      { orgId: ORG_ID, object: 'Contact', ids: '0038a00000Rk4VbAAJ' },
      { orgId: ORG_ID, object: 'Contact', ids: ['0038a00000Rk4VbAAJ'], extra: true },
      { orgId: ORG_ID, object: 'Contact', ids: Array.from({ length: 201 }, (_, i) => id18(`0038a00000R${String(i).padStart(4, '0')}`)) },
    ].map((b) => JSON.stringify(b));

    const statuses = [];
    for (const body of bodies) statuses.push((await sendEvents(rig.origin, body, signed(secret, body))).status);

    expect(statuses).toEqual(bodies.map(() => 400));
    expect(await jobsTable(rig.runtime)).toEqual([]);
  });

  it('answers 401, not 400, to an invalid body without a valid signature, and to a body naming no org', async () => {
    const { rig, secret } = await eventsRig();
    const invalid = JSON.stringify({ orgId: ORG_ID, object: 'Account', ids: ['0018a00000Ab1CdAAJ'] });
    const notJson = '{"orgId": "00D8a000001FkQzEAK", "object": ';

    expect((await sendEvents(rig.origin, invalid, signed('not-the-secret', invalid))).status).toBe(401);
    // Without a readable org there is no secret to check the signature against.
    expect((await sendEvents(rig.origin, notJson, signed(secret, notJson))).status).toBe(401);
  });

  it('answers 413 to a body far over the cap, and keeps serving', async () => {
    const { rig, secret } = await eventsRig();
    const huge = JSON.stringify({ orgId: ORG_ID, object: 'Contact', ids: ['0038a00000Rk4VbAAJ'], pad: 'x'.repeat(200 * 1024) });
    const body = fixtureText('events-contact.json');

    const reply = await sendEvents(rig.origin, huge, signed(secret, huge));

    expect(reply.status).toBe(413);
    expect((await sendEvents(rig.origin, body, signed(secret, body))).status).toBe(200);
  });
});

describe('POST /webhooks/salesforce/events: when the records cannot be queued', () => {
  it('answers 503 while the database refuses writes, and queues the retry', async () => {
    const { rig, secret } = await eventsRig();
    const { db } = rig.runtime.opened;
    const body = fixtureText('events-lead.json');

    await sql`PRAGMA query_only = ON`.execute(db);
    const refused = await sendEvents(rig.origin, body, signed(secret, body));
    await sql`PRAGMA query_only = OFF`.execute(db);
    const retried = await sendEvents(rig.origin, body, signed(secret, body));

    expect(refused.status).toBe(503);
    expect(retried.status).toBe(200);
    expect(recordIdsOf(await jobsTable(rig.runtime))).toEqual(['00Q8a00000Jd5ZpEAJ', '00Q8a00000Jd5aqEAB']);
  });

  it('answers 503 when the store is gone', async () => {
    const { rig, secret } = await eventsRig();
    await rig.closeStore();
    const body = fixtureText('events-lead.json');

    expect((await sendEvents(rig.origin, body, signed(secret, body))).status).toBe(503);
  });
});

// ---------------------------------------------------------------------------------------------------
// The real server

describe('the Salesforce routes on the real server', () => {
  it('are mounted by startServer: an outbound message is acknowledged and a signed callout queued', async () => {
    const dataDir = tempDir('enrichbridge-salesforce-server-');
    cleanups.push(() => Promise.resolve(rmSync(dataDir, { recursive: true, force: true })));
    const env = { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', WORKER_CONCURRENCY: '0' };
    // The installation, made through the same data folder before the server starts.
    const setup = await openRuntime(loadConfig(env), logger);
    const inst = await install(setup);
    const secret = await setup.bridge.installations.webhookSecret(inst.id);
    const outboundSecret = await setup.bridge.installations.outboundSecret(inst.id);
    await setup.close();
    const server = await startServer(loadConfig(env), logger);
    let stopped = false;
    cleanups.push(async () => {
      if (!stopped) await server.stop();
    });
    const leads = fixtureText('events-lead.json');

    const outbound = await deliver(server.url, fixture('outbound-contact.xml'), salesforceOutboundMessagePath(outboundSecret));
    const malformed = await deliver(server.url, fixture('outbound-malformed.xml'), salesforceOutboundMessagePath(outboundSecret));
    // The bare path is off unless an operator turns it on.
    const bare = await deliver(server.url, fixture('outbound-contact.xml'));
    const events = await sendEvents(server.url, leads, signed(secret, leads));
    stopped = true;
    await server.stop();

    expectAck(outbound);
    expect(faultCodeOf(malformed)).toBe('Client');
    expect(faultCodeOf(bare, 404)).toBe('Client');
    expect(CountsSchema.parse(events.json)).toEqual({ queued: 2, duplicates: 0 });
    const after = await openRuntime(loadConfig(env), logger);
    cleanups.push(() => after.close());
    expect((await jobsTable(after)).map((j) => [j.installationId, j.object, j.recordId])).toEqual([
      [inst.id, 'Contact', CONTACT_RECORD],
      [inst.id, 'Lead', '00Q8a00000Jd5ZpEAJ'],
      [inst.id, 'Lead', '00Q8a00000Jd5aqEAB'],
    ]);
  });
});
