// `npm run bench:salesforce [-- --messages N --records N]`: the Salesforce connector's two figures, on the real
// server process (the `npm start` command line, its log at info level going to a file) connected with the CLI
// (token, sandbox, in-process enrichment for an account at 1,000 requests/s) to the fake org of test/support.
// (a) Acknowledgement: N (100) outbound messages of 100 notifications each (persona Contacts with Accounts and
//     Leads in turn, new records in the fake), one after another as Salesforce sends them to one endpoint,
//     timed from the POST to the whole Ack: against WORKER_CONCURRENCY=0 (the ack alone; then 5 in flight,
//     for comparison), then against the default workers draining what the messages queue (warmed up on the
//     warm-up messages' records, and left to drain the rest after the last Ack). Every answer must be the exact
//     Ack; every notification the quiet server acknowledged must be a queued job in its data folder.
// (b) REST calls per enriched record: N (2,000) records, half Contacts with Accounts and half Leads, created in
//     the fake org, whose flows post them 100 to a message; every REST call the org receives until all of them
//     are enriched is counted (the probe `connect` makes comes before). With the default workers running as
//     the messages arrive; as a backlog (queued with the workers off, drained by the default workers of the
//     same data folder's next server), where every claim is 200 jobs; and that backlog with every Contact's
//     message before any Lead's, where every claim of 200 is of one object. Then person Accounts, and
//     Contacts two to an NPSP household Account with household fields on the Account only (each household
//     Account must be written exactly once).
// (c) A flood of unauthenticated envelopes of the largest size the route reads, 16 in flight for 5 s, naming
//     an org nobody connected, then the connected org with a wrong secret in the URL, while one client asks
//     /healthz: its p99 must stay under 50 ms. Once with the default per-address rate, once with it lifted.
// Fails (exit 1) when an answer is not the Ack or a record is lost (not enriched, a job not done).
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { z } from 'zod';
import { PERSONAS, type Persona } from '../../core/sandbox/personas.ts';
import { openDataFolder } from '../../server/runtime.ts';
import {
  type FakeRecord,
  type FakeSalesforce,
  type FakeValue,
  type OutboundDelivery,
  personaContact,
  personaPersonAccount,
  readOutboundAnswer,
  startFakeSalesforce,
} from '../support/fake-salesforce.ts';
import { OUTBOUND_MESSAGE_MAX_BYTES } from '../../connectors/salesforce/outbound-xml.ts';
import { ROOT, freePort, latencyStats, machine, stopChild, timedInFlight, verdict, waitHealthy } from './bench-support.ts';

/** The Ack Salesforce waits for, byte for byte (docs/reference/crm-platforms.md, section 7), not the code's constant. */
const EXPECTED_ACK =
  '<soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/"><soapenv:Body>\n' +
  '<notificationsResponse xmlns="http://soap.sforce.com/2005/09/outbound"><Ack>true</Ack></notificationsResponse>\n' +
  '</soapenv:Body></soapenv:Envelope>';
const ROUTE = '/webhooks/salesforce/outbound-message';
const API = '/services/data/v62.0';
const NOTIFICATIONS_PER_MESSAGE = 100;
const WARM_UP_MESSAGES = 10;
const PARALLEL_IN_FLIGHT = 5;
/** Enrichment itself is not what is measured: the account's rate limit is set far above what a drain needs. */
const ACCOUNT_RATE_LIMIT = 1_000;
const TARGETS = { ackP99Ms: 100, callsPerRecord: 0.02, healthzUnderFloodP99Ms: 50 } as const;
/** (c): how long each flood lasts, and how many requests it keeps in flight. */
const FLOOD_SECONDS = 5;
const FLOOD_IN_FLIGHT = 16;
const DRAIN_TIMEOUT_MS = 120_000;

const { values } = parseArgs({ options: { messages: { type: 'string', default: '100' }, records: { type: 'string', default: '2000' } } });
const MESSAGES = z.coerce.number().int().min(1).max(1_000).parse(values.messages);
const RECORDS = z.coerce.number().int().min(2).max(20_000).parse(values.records);

const LogLineSchema = z.object({ msg: z.string() }).loose();
const RequestLineSchema = z.object({ msg: z.literal('request'), route: z.string().optional(), ms: z.number() });
const BatchLineSchema = z.object({
  msg: z.literal('pipeline batch'),
  jobs: z.number(),
  crm_calls: z.number(),
  released: z.number(),
  outcomes: z.record(z.string(), z.number()),
});
const LogEntriesSchema = z.array(z.object({ recordId: z.string(), outcome: z.string() }));
const JobListSchema = z.array(z.object({ state: z.string(), kind: z.string().optional() }).loose());
/** The hourly privacy sweep's job: queued by every server start, not one of the records' (a stopped drain may leave it waiting). */
const SWEEP_JOB = 'salesforce.privacy';

const execFileAsync = promisify(execFile);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Problems that make the bench fail: an answer that is not the Ack, a record lost. */
const failures: string[] = [];

// ---------------------------------------------------------------------------------------------------
// The server and the CLI

/** The CLI and the server see this bench's settings only, not the shell's Salesforce or HubSpot ones. */
function baseEnv(): Record<string, string> {
  const inherited = Object.entries(process.env).filter(
    (e): e is [string, string] =>
      e[1] !== undefined &&
      !e[0].startsWith('SALESFORCE_') &&
      !e[0].startsWith('HUBSPOT_') &&
      !['PUBLIC_URL', 'NODE_ENV', 'WORKER_CONCURRENCY', 'DATA_DIR', 'PORT'].includes(e[0]),
  );
  return Object.fromEntries(inherited);
}

async function cli(args: string[], env: Record<string, string>): Promise<string> {
  const { stdout } = await execFileAsync(process.execPath, [path.join(ROOT, 'bin/enrichbridge.js'), ...args], {
    cwd: ROOT,
    env: { ...baseEnv(), ...env },
    maxBuffer: 256 * 1024 * 1024,
  });
  return stdout;
}

/** A data folder with an account and the fake org connected, as an operator sets it up. */
interface DataFolder {
  readonly dir: string;
  readonly env: Record<string, string>;
  readonly installationId: string;
  /** The org's outbound-message path, its secret included, as `salesforce outbound-url` prints it. */
  readonly outboundPath: string;
}

async function connectedDataFolder(fake: FakeSalesforce, name: string): Promise<DataFolder> {
  const dir = mkdtempSync(path.join(os.tmpdir(), `enrichbridge-bench-salesforce-${name}-`));
  const env = { DATA_DIR: dir, ENRICHBRIDGE_SECRET_KEY: randomBytes(32).toString('hex'), SALESFORCE_ALLOW_ANY_HOST: 'true' };
  await cli(['accounts', 'create', 'bench', '--career-intelligence', '--rate-limit', String(ACCOUNT_RATE_LIMIT)], env);
  const installationId = (
    await cli(
      [
        ...['salesforce', 'connect', '--org-id', fake.orgId, '--instance-url', fake.url, '--access-token', fake.accessToken],
        ...['--account', 'bench', '--env', 'sandbox'],
      ],
      env,
    )
  ).trim();
  if (!/^\S+$/.test(installationId)) throw new Error(`salesforce connect printed no installation id: ${JSON.stringify(installationId)}`);
  const outboundPath = new URL((await cli(['salesforce', 'outbound-url', installationId], env)).trim()).pathname;
  return { dir, env, installationId, outboundPath };
}

interface Server {
  readonly child: ChildProcess;
  readonly url: string;
  readonly outboundUrl: string;
  readonly logFile: string;
  stop(): Promise<void>;
}

/** `npm start`'s command line on a data folder; `workers` null leaves WORKER_CONCURRENCY at its default. */
async function startServer(folder: DataFolder, name: string, workers: number | null, logDir: string, extraEnv: Record<string, string> = {}): Promise<Server> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const logFile = path.join(logDir, `server-${name}.log`);
  const log = openSync(logFile, 'a');
  const child = spawn(process.execPath, ['--max-semi-space-size=32', 'bin/server.js'], {
    cwd: ROOT,
    env: {
      ...baseEnv(),
      ...folder.env,
      PORT: String(port),
      LOG_LEVEL: 'info',
      ...(workers === null ? {} : { WORKER_CONCURRENCY: String(workers) }),
      ...extraEnv,
    },
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  await waitHealthy(`server (${name})`, child, `${url}/healthz`);
  return { child, url, outboundUrl: `${url}${folder.outboundPath}`, logFile, stop: () => stopChild(child) };
}

function logLines(file: string): Record<string, unknown>[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .flatMap((line) => {
      if (!line.startsWith('{')) return [];
      const parsed = LogLineSchema.safeParse(JSON.parse(line));
      return parsed.success ? [parsed.data] : [];
    });
}

/** The server's own handling time of each outbound message (its request log's `ms`), in order. */
function handlingMs(file: string): number[] {
  return logLines(file).flatMap((line) => {
    const parsed = RequestLineSchema.safeParse(line);
    // The route pattern as the request log names it (the secret is a parameter, never logged).
    return parsed.success && parsed.data.route === `${ROUTE}/:secret` ? [parsed.data.ms] : [];
  });
}

function batchLines(file: string): z.infer<typeof BatchLineSchema>[] {
  return logLines(file).flatMap((line) => {
    const parsed = BatchLineSchema.safeParse(line);
    return parsed.success ? [parsed.data] : [];
  });
}

// ---------------------------------------------------------------------------------------------------
// Records: the sandbox personas, cycled, as Contacts (with an Account per company) and Leads

function persona(i: number): Persona {
  const p = PERSONAS[i % PERSONAS.length];
  if (p === undefined) throw new Error('no sandbox personas');
  return p;
}

const companyOf = (p: Persona): string => p.career?.company_name ?? 'Independent';

class Org {
  private readonly accounts = new Map<string, string>();
  private next = 0;

  constructor(readonly fake: FakeSalesforce) {}

  private accountId(company: string): string {
    let id = this.accounts.get(company);
    if (id === undefined) {
      id = this.fake.createAccount(company).id;
      this.accounts.set(company, id);
    }
    return id;
  }

  contactFields(count: number): Record<string, FakeValue>[] {
    return Array.from({ length: count }, () => {
      const p = persona(this.next++);
      return personaContact(p, { AccountId: this.accountId(companyOf(p)) });
    });
  }

  leadFields(count: number): Record<string, FakeValue>[] {
    return Array.from({ length: count }, () => {
      const p = persona(this.next++);
      return {
        FirstName: p.first_name,
        LastName: p.last_name,
        Email: p.email,
        Phone: p.phone,
        Street: p.address,
        City: p.city,
        State: p.state,
        PostalCode: p.zipcode,
        Company: companyOf(p),
      };
    });
  }

  /** New person Accounts (no message of their own: the bench posts them). */
  personAccounts(count: number): FakeRecord[] {
    return Array.from({ length: count }, () => {
      const p = persona(this.next++);
      return this.fake.createPersonAccount(personaPersonAccount(p));
    });
  }

  /**
   * New Contacts two to an NPSP household Account (a persona and a spouse at the same address, matched by
   * it), without a message of their own: the bench posts them. Gives the Contacts and the households.
   */
  async householdContacts(count: number): Promise<{ contacts: FakeRecord[]; households: FakeRecord[]; answered: Set<string> }> {
    const households: FakeRecord[] = [];
    // The household Accounts whose persona the sandbox answers with a household (a third of them has none).
    const answered = new Set<string>();
    const fields: Record<string, FakeValue>[] = [];
    for (let i = 0; i < count; i += 2) {
      const p = persona(this.next++);
      const home = this.fake.createAccount(`${p.last_name} Household ${i / 2}`, { npe01__SYSTEM_AccountType__c: 'Household Account' });
      households.push(home);
      if (p.household !== null && p.household !== undefined) answered.add(home.id);
      fields.push(personaContact(p, { AccountId: home.id }));
      const spouse = {
        FirstName: 'Sam',
        LastName: p.last_name,
        MailingStreet: p.address,
        MailingCity: p.city,
        MailingState: p.state,
        MailingPostalCode: p.zipcode,
      };
      if (i + 1 < count) fields.push({ ...spouse, AccountId: home.id });
    }
    return { contacts: await this.fake.createRecords('Contact', fields, { notify: false }), households, answered };
  }

  /** One message's records, new in the org without a message of their own: Contacts and Leads in turn. */
  async messageRecords(index: number): Promise<FakeRecord[]> {
    return index % 2 === 0
      ? this.fake.createRecords('Contact', this.contactFields(NOTIFICATIONS_PER_MESSAGE), { notify: false })
      : this.fake.createRecords('Lead', this.leadFields(NOTIFICATIONS_PER_MESSAGE), { notify: false });
  }
}

// ---------------------------------------------------------------------------------------------------
// (a) Acknowledgement

interface Message {
  readonly body: string;
  readonly recordIds: readonly string[];
}

async function messages(org: Org, count: number): Promise<Message[]> {
  const out: Message[] = [];
  for (let i = 0; i < count; i += 1) {
    const records = await org.messageRecords(i);
    out.push({ body: org.fake.envelope(records).body, recordIds: records.map((r) => r.id) });
  }
  return out;
}

interface AckRun {
  readonly latencies: number[];
  readonly seconds: number;
  readonly notAcked: number;
}

/** Posts the messages, `inFlight` at a time, as Salesforce does; every answer must be the exact Ack. */
async function post(url: string, list: readonly Message[], label: string, inFlight = 1): Promise<AckRun> {
  let notAcked = 0;
  const { latencies, seconds } = await timedInFlight(list.length, inFlight, async (i) => {
    const message = list[i];
    if (message === undefined) return;
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: '""', 'user-agent': 'Jakarta Commons-HttpClient/3.1' },
      body: message.body,
      signal: AbortSignal.timeout(60_000),
    });
    const text = await response.text();
    const contentType = response.headers.get('content-type') ?? '';
    const exact = response.status === 200 && /^text\/xml\b/.test(contentType) && text === EXPECTED_ACK && readOutboundAnswer(text).acked;
    if (!exact) {
      notAcked += 1;
      failures.push(`${label}: message ${i} answered ${response.status} ${contentType}: ${text.slice(0, 300)}`);
    }
  });
  return { latencies, seconds, notAcked };
}

function ackLines(label: string, run: AckRun, handling: readonly number[], serial = true): string {
  const s = latencyStats(run.latencies);
  const h = latencyStats(handling);
  const n = run.latencies.length;
  const notifications = n * NOTIFICATIONS_PER_MESSAGE;
  return [
    `  ${label}`,
    `    ${n} messages, ${notifications} notifications in ${run.seconds.toFixed(2)} s (${(notifications / run.seconds).toFixed(0)} notifications/s); exact Ack: ${n - run.notAcked}/${n}`,
    `    POST to Ack  p50 ${s.p50.toFixed(1)} ms   p99 ${s.p99.toFixed(1)} ms   max ${s.max.toFixed(1)} ms   ${
      serial ? `target p99 <= ${TARGETS.ackP99Ms} ms: ${verdict(s.p99 <= TARGETS.ackP99Ms)}` : `(the target is for one message at a time, as Salesforce sends)`
    }`,
    `    the server's own handling time (its request log): p50 ${h.p50.toFixed(1)} ms   p99 ${h.p99.toFixed(1)} ms   max ${h.max.toFixed(1)} ms`,
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------------
// (c) A flood of unauthenticated envelopes

/**
 * Floods the outbound-message route with envelopes of the largest size it reads (OUTBOUND_MESSAGE_MAX_BYTES),
 * `FLOOD_IN_FLIGHT` at a time for FLOOD_SECONDS, while a health checker in its own process asks /healthz
 * over and over (test/bench/healthz-probe.ts): what an unauthenticated request costs, seen from a health check. Returns the /healthz latencies and the flood's statuses.
 */
async function flood(server: Server, url: string, body: Buffer): Promise<{ healthz: number[]; statuses: Map<string, number>; sent: number }> {
  const statuses = new Map<string, number>();
  let sent = 0;
  // fetch's body types take bytes over an ArrayBuffer; a Buffer may sit on a SharedArrayBuffer.
  const bytes = new Uint8Array(body);
  const flooder = async (until: number) => {
    while (performance.now() < until) {
      try {
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: '""' },
          body: bytes,
          signal: AbortSignal.timeout(30_000),
        });
        await response.arrayBuffer();
        statuses.set(String(response.status), (statuses.get(String(response.status)) ?? 0) + 1);
      } catch (error) {
        const key = error instanceof Error ? error.name : 'error';
        statuses.set(key, (statuses.get(key) ?? 0) + 1);
      }
      sent += 1;
    }
  };
  // The health check runs in a process of its own, as a load balancer's would: timed from the bench's
  // own process, it would time the flood's client too (16 senders keep that event loop busy).
  const probe = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'test/bench/healthz-probe.ts'), `${server.url}/healthz`], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  probe.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  while (!out.includes('ready\n')) await new Promise((resolve) => setTimeout(resolve, 20));
  const until = performance.now() + FLOOD_SECONDS * 1000;
  await Promise.all(Array.from({ length: FLOOD_IN_FLIGHT }, () => flooder(until)));
  const exited = new Promise((resolve) => probe.once('exit', resolve));
  probe.stdin.end();
  await exited;
  const healthz = z.array(z.number()).parse(JSON.parse(out.slice(out.indexOf('ready\n') + 'ready\n'.length)));
  return { healthz, statuses, sent };
}

function floodLines(label: string, run: Awaited<ReturnType<typeof flood>>): string {
  const h = latencyStats(run.healthz);
  const statuses = [...run.statuses].map(([status, n]) => `${status}: ${n}`).join(', ');
  return [
    `  ${label}`,
    `    ${run.sent} envelopes of ${(OUTBOUND_MESSAGE_MAX_BYTES / 1024).toFixed(0)} KiB in ${FLOOD_SECONDS} s, ${FLOOD_IN_FLIGHT} in flight (answers ${statuses})`,
    `    /healthz meanwhile (${run.healthz.length} asks)  p50 ${h.p50.toFixed(1)} ms   p99 ${h.p99.toFixed(1)} ms   max ${h.max.toFixed(1)} ms   target p99 < ${TARGETS.healthzUnderFloodP99Ms} ms: ${verdict(h.p99 < TARGETS.healthzUnderFloodP99Ms)}`,
  ].join('\n');
}

/** After the quiet server stopped: every notification it acknowledged is a queued job in its data folder. */
async function queuedRecordIds(folder: DataFolder): Promise<Set<string>> {
  const opened = await openDataFolder(folder.dir);
  try {
    const jobs = await opened.queue.list({ state: 'queued', limit: 1_000_000 });
    return new Set(
      jobs.flatMap((job) =>
        typeof job.payload === 'object' && job.payload !== null && 'recordId' in job.payload && typeof job.payload.recordId === 'string'
          ? [job.payload.recordId]
          : [],
      ),
    );
  } finally {
    await opened.store.close();
  }
}

// ---------------------------------------------------------------------------------------------------
// (b) REST calls per enriched record

const STATUS_FIELD = 'WF_Enrichment_Status__c';
/** A record carries an enrichment status (a person Account under the Contact field's `__pc` name). */
const isSettled = (record: FakeRecord): boolean => (record.fields[record.object === 'Account' ? 'WF_Enrichment_Status__pc' : STATUS_FIELD] ?? null) !== null;

/** Waits until every record carries an enrichment status, or nothing moved for 30 s, or the drain timeout. */
async function drained(records: readonly FakeRecord[], startedAt: number): Promise<number> {
  const deadline = startedAt + DRAIN_TIMEOUT_MS;
  let settled = 0;
  let movedAt = Date.now();
  for (;;) {
    const now = records.filter(isSettled).length;
    if (now !== settled) movedAt = Date.now();
    settled = now;
    if (settled === records.length || Date.now() > deadline || Date.now() - movedAt > 30_000) break;
    await sleep(50);
  }
  return settled;
}

function countBy<T>(items: readonly T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

const listed = (counts: ReadonlyMap<string, number>): string =>
  [...counts]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ${n}`)
    .join(', ') || 'none';

/** The privacy sweep's query (hourly per installation, whatever the volume): counted apart from the calls per record. */
const isSweep = (c: { readonly query: Readonly<Record<string, string>> }): boolean => /WHERE (Person)?Individual\.ShouldForget = true/.test(c.query['q'] ?? '');

function callKind(method: string, pathname: string, soql = ''): string {
  if (method === 'GET' && pathname === `${API}/query`) {
    if (/WHERE (Person)?Individual\.ShouldForget = true/.test(soql)) return 'query (hourly privacy sweep)';
    return `query (${/ FROM (\w+) /.exec(soql)?.[1] ?? 'other'} reads)`;
  }
  if (method === 'POST' && pathname.startsWith(`${API}/composite/sobjects/`)) return 'collections retrieve';
  if (method === 'PATCH' && pathname === `${API}/composite/sobjects`) return 'collections update';
  return `${method} ${pathname}`;
}

interface RestRun {
  readonly label: string;
  readonly records: readonly FakeRecord[];
  /** When the drain started (ms epoch), and what that moment was. */
  readonly startedAt: number;
  readonly drainFrom: string;
  /** fake.requests.length before the first message. */
  readonly requestsBefore: number;
  readonly folder: DataFolder;
  readonly logFile: string;
}

/** Counts, checks and prints one run of (b); the server has been stopped (its log is complete). */
async function reportRest(fake: FakeSalesforce, run: RestRun, settled: number): Promise<void> {
  const ids = new Set(run.records.map((r) => r.id));
  const calls = fake.requests.slice(run.requestsBefore);
  const writes = fake.updates.filter((u) => ids.has(u.id));
  const lastUpdate = Math.max(run.startedAt, ...writes.filter((u) => u.success).map((u) => Date.parse(u.at)));
  const drainSeconds = (lastUpdate - run.startedAt) / 1000;
  const perRecord = calls.filter((c) => !isSweep(c)).length / Math.max(1, settled);
  const batches = batchLines(run.logFile);
  const pipelineCalls = batches.reduce((sum, b) => sum + b.crm_calls, 0);

  const log = LogEntriesSchema.parse(
    JSON.parse(await cli(['log', '--installation', run.folder.installationId, '--json', '--limit', String(run.records.length * 3)], run.folder.env)),
  );
  const outcomes = countBy(log, (e) => e.outcome);
  const unlogged = [...ids].filter((id) => !log.some((e) => e.recordId === id)).length;
  const jobStates = new Map<string, number>();
  for (const state of ['queued', 'running', 'dead'] as const) {
    const listed = JobListSchema.parse(JSON.parse(await cli(['jobs', 'list', '--state', state, '--json'], run.folder.env)));
    jobStates.set(state, listed.filter((job) => job.kind !== SWEEP_JOB).length);
  }
  const opened = await openDataFolder(run.folder.dir);
  try {
    jobStates.set('done', (await opened.queue.list({ state: 'done', limit: 1_000_000 })).length);
  } finally {
    await opened.store.close();
  }
  const lost = run.records.length - settled;
  const pending = (jobStates.get('queued') ?? 0) + (jobStates.get('running') ?? 0) + (jobStates.get('dead') ?? 0);
  if (lost > 0) failures.push(`${run.label}: ${lost} of ${run.records.length} records without an enrichment status`);
  if (pending > 0) failures.push(`${run.label}: ${pending} jobs not done (${listed(jobStates)})`);
  const byStatus = countBy(calls, (c) => String(c.status));
  const claims = countBy(batches, (b) => `${b.jobs} jobs with ${b.crm_calls} calls`);

  console.log(
    [
      `  ${run.label}`,
      `    records enriched (status written in the fake): ${settled}/${run.records.length}; drain ${drainSeconds.toFixed(1)} s from ${run.drainFrom} to the last write (${(settled / drainSeconds).toFixed(0)} records/s)`,
      `    REST calls received by the org: ${calls.length} (${listed(countBy(calls, (c) => callKind(c.method, c.path, c.query['q'])))}; HTTP ${listed(byStatus)}); the pipeline counted ${pipelineCalls}`,
      `    REST calls per enriched record (the hourly privacy sweep apart): ${perRecord.toFixed(4)}   target <= ${TARGETS.callsPerRecord}: ${verdict(perRecord <= TARGETS.callsPerRecord)}`,
      `    record writes: ${writes.filter((u) => u.success).length} succeeded, ${writes.filter((u) => !u.success).length} refused${
        writes.some((u) => !u.success)
          ? ` (${listed(
              countBy(
                writes.filter((u) => !u.success),
                (u) => u.statusCode ?? '?',
              ),
            )})`
          : ''
      }`,
      `    worker claims (the pipeline's batch log): ${listed(claims)}`,
      `    log outcomes: ${listed(outcomes)}${unlogged > 0 ? `; ${unlogged} records not logged` : ''}`,
      `    jobs: ${listed(jobStates)} (queued/running/dead from \`enrichbridge jobs list --state … --json\`, done from the data folder)`,
    ].join('\n'),
  );
}

/** How the org's two flows (Contact, Lead) send: their messages in turn, or every Contact's before any Lead's. */
type Order = 'interleaved' | 'grouped';

/** Creates Contacts (with Accounts) and Leads in the org; its flows post them to the server 100 a message, one message after another. */
async function createThroughFlows(org: Org, count: number, order: Order, label: string): Promise<FakeRecord[]> {
  const contacts = Math.ceil(count / 2);
  const deliveriesBefore = org.fake.deliveries.length;
  const created: FakeRecord[] = [];
  if (order === 'grouped') {
    created.push(...(await org.fake.createRecords('Contact', org.contactFields(contacts))));
    created.push(...(await org.fake.createRecords('Lead', org.leadFields(count - contacts))));
  } else {
    // A message of each flow in turn, each one's records created (and sent) together.
    for (let made = { contacts: 0, leads: 0 }; made.contacts + made.leads < count;) {
      const c = Math.min(NOTIFICATIONS_PER_MESSAGE, contacts - made.contacts);
      const l = Math.min(NOTIFICATIONS_PER_MESSAGE, count - contacts - made.leads);
      if (c > 0) created.push(...(await org.fake.createRecords('Contact', org.contactFields(c))));
      if (l > 0) created.push(...(await org.fake.createRecords('Lead', org.leadFields(l))));
      made = { contacts: made.contacts + c, leads: made.leads + l };
    }
  }
  const sent = org.fake.deliveries.slice(deliveriesBefore);
  const notAcked = sent.filter((d) => !d.acked || d.response !== EXPECTED_ACK);
  for (const d of notAcked) failures.push(`${label}: an outbound message answered ${d.status ?? d.error ?? '?'}: ${d.response.slice(0, 300)}`);
  const carried = new Set(sent.flatMap((d) => d.notifications.map((n) => n.recordId)));
  if (created.some((r) => !carried.has(r.id))) throw new Error(`${label}: the fake's flows did not send every new record`);
  console.log(
    `    ${sent.length} outbound messages from the org's flows for ${created.length} new records; exact Ack: ${sent.length - notAcked.length}/${sent.length}`,
  );
  return created;
}

type Serve = (folder: DataFolder, name: string, workers: number | null) => Promise<Server>;

/** (b) with the default workers running while the org's messages arrive. */
async function liveRun(org: Org, serve: Serve, folder: DataFolder, order: Order): Promise<void> {
  const { fake } = org;
  const server = await serve(folder, `live-${order}`, null);
  fake.setOutboundUrl(server.outboundUrl);
  const requestsBefore = fake.requests.length;
  const startedAt = Date.now();
  const records = await createThroughFlows(org, RECORDS, order, `(b) live, ${order}`);
  fake.setOutboundUrl(null);
  const settled = await drained(records, startedAt);
  await server.stop();
  await reportRest(fake, { label: 'result', records, startedAt, drainFrom: 'the first message', requestsBefore, folder, logFile: server.logFile }, settled);
}

/** (b) person Accounts: an installation that names Account, its org's (admin-made) flow posting new person Accounts 100 a message. */
async function personAccountRun(org: Org, serve: Serve, folder: DataFolder): Promise<void> {
  const { fake } = org;
  await cli(['installations', 'settings', folder.installationId, '--objects', 'Contact,Lead,Account'], folder.env);
  const server = await serve(folder, 'live-person-accounts', null);
  fake.setOutboundUrl(server.outboundUrl);
  const requestsBefore = fake.requests.length;
  const startedAt = Date.now();
  const records = org.personAccounts(RECORDS);
  const sent: OutboundDelivery[] = [];
  for (let i = 0; i < records.length; i += NOTIFICATIONS_PER_MESSAGE) sent.push(await fake.fire(records.slice(i, i + NOTIFICATIONS_PER_MESSAGE)));
  const notAcked = sent.filter((d) => !d.acked);
  for (const d of notAcked) failures.push(`(b) person Accounts: an outbound message answered ${d.status ?? d.error ?? '?'}: ${d.response.slice(0, 300)}`);
  console.log(`    ${sent.length} outbound messages for ${records.length} new person Accounts; exact Ack: ${sent.length - notAcked.length}/${sent.length}`);
  fake.setOutboundUrl(null);
  const settled = await drained(records, startedAt);
  await server.stop();
  const written = new Set(fake.updates.filter((u) => u.success && u.object === 'Account').flatMap((u) => Object.keys(u.fields)));
  const stray = [...written].filter((name) => !name.endsWith('__pc'));
  if (stray.length > 0) failures.push(`(b) person Accounts: fields written that are not __pc: ${stray.join(', ')}`);
  await reportRest(fake, { label: 'result', records, startedAt, drainFrom: 'the first message', requestsBefore, folder, logFile: server.logFile }, settled);
}

/**
 * (b) NPSP households: an installation putting household fields on the household Account only, Contacts
 * two to a household posted 100 a message; each household Account must be written once.
 */
async function householdRun(org: Org, serve: Serve, folder: DataFolder): Promise<void> {
  const { fake } = org;
  await cli(['salesforce', 'households', folder.installationId, '--on', 'household'], folder.env);
  const server = await serve(folder, 'live-households', null);
  fake.setOutboundUrl(server.outboundUrl);
  const { contacts, households, answered } = await org.householdContacts(RECORDS);
  const requestsBefore = fake.requests.length;
  const startedAt = Date.now();
  const sent: OutboundDelivery[] = [];
  for (let i = 0; i < contacts.length; i += NOTIFICATIONS_PER_MESSAGE) sent.push(await fake.fire(contacts.slice(i, i + NOTIFICATIONS_PER_MESSAGE)));
  const notAcked = sent.filter((d) => !d.acked);
  for (const d of notAcked) failures.push(`(b) households: an outbound message answered ${d.status ?? d.error ?? '?'}: ${d.response.slice(0, 300)}`);
  console.log(
    `    ${sent.length} outbound messages for ${contacts.length} new Contacts in ${households.length} household Accounts; exact Ack: ${sent.length - notAcked.length}/${sent.length}`,
  );
  fake.setOutboundUrl(null);
  const settled = await drained(contacts, startedAt);
  await server.stop();
  // A household the sandbox answers is written once; one it answers with no household (a third of the personas) never.
  const wrong = households.filter((h) => fake.updatesOf(h.id).length !== (answered.has(h.id) ? 1 : 0));
  console.log(
    `    household Accounts written exactly once: ${answered.size - wrong.filter((h) => answered.has(h.id)).length}/${answered.size} (the other ${households.length - answered.size}, whose persona has no household, never written: ${wrong.every((h) => answered.has(h.id)) ? 'yes' : 'NO'})`,
  );
  if (wrong.length > 0)
    failures.push(`(b) households: ${wrong.length} household Accounts not written as often as they should be (once, or never without a household)`);
  await reportRest(
    fake,
    { label: 'result', records: contacts, startedAt, drainFrom: 'the first message', requestsBefore, folder, logFile: server.logFile },
    settled,
  );
}

/** (b) as a backlog: queued by a server with its workers off, drained by the same data folder's server with the default workers. */
async function backlogRun(org: Org, serve: Serve, folder: DataFolder, order: Order): Promise<void> {
  const { fake } = org;
  const intake = await serve(folder, `backlog-${order}-intake`, 0);
  fake.setOutboundUrl(intake.outboundUrl);
  const records = await createThroughFlows(org, RECORDS, order, `(b) backlog, ${order}`);
  fake.setOutboundUrl(null);
  await intake.stop();
  // Counted from before the spawn: the workers start as soon as the server listens.
  const requestsBefore = fake.requests.length;
  const drainer = await serve(folder, `backlog-${order}-drain`, null);
  const settled = await drained(records, Date.now());
  await drainer.stop();
  const firstRead = fake.requests[requestsBefore];
  await reportRest(
    fake,
    {
      label: 'result',
      records,
      startedAt: firstRead === undefined ? Date.now() : Date.parse(firstRead.at),
      drainFrom: 'the first read',
      requestsBefore,
      folder,
      logFile: drainer.logFile,
    },
    settled,
  );
}

// ---------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const fake = await startFakeSalesforce({ apiLimit: 1_000_000, personAccounts: true, npsp: true });
  const org = new Org(fake);
  const logDir = mkdtempSync(path.join(os.tmpdir(), 'enrichbridge-bench-salesforce-logs-'));
  const folders: DataFolder[] = [];
  const servers: Server[] = [];
  const benchStarted = performance.now();
  const serve = async (folder: DataFolder, name: string, workers: number | null) => {
    const server = await startServer(folder, name, workers, logDir);
    servers.push(server);
    return server;
  };
  const folder = async (name: string) => {
    const f = await connectedDataFolder(fake, name);
    folders.push(f);
    return f;
  };
  try {
    console.log('bench:salesforce: the server process (`npm start` command line, LOG_LEVEL=info to a file) and the fake Salesforce org on loopback');
    console.log(
      `  connected with \`enrichbridge salesforce connect … --env sandbox\`, enriching in process for an account at --rate-limit ${ACCOUNT_RATE_LIMIT}/s (the default is 5/s),`,
    );
    console.log('  so that the enrichment rate limit is not the bottleneck (1 ms between requests); records are the 15 sandbox personas, cycled');
    console.log(machine());
    console.log('');

    // (a) the ack alone
    console.log(
      `(a) acknowledgement: outbound messages of ${NOTIFICATIONS_PER_MESSAGE} notifications (new Contacts and Leads in turn), timed from the POST to the whole Ack`,
    );
    const quietFolder = await folder('ack');
    const quiet = await serve(quietFolder, 'ack', 0);
    const warmUp = await messages(org, WARM_UP_MESSAGES);
    const serial = await messages(org, MESSAGES);
    const parallel = await messages(org, MESSAGES);
    await post(quiet.outboundUrl, warmUp, 'warm-up');
    const alone = await post(quiet.outboundUrl, serial, 'WORKER_CONCURRENCY=0, one at a time');
    const five = await post(quiet.outboundUrl, parallel, `WORKER_CONCURRENCY=0, ${PARALLEL_IN_FLIGHT} in flight`, PARALLEL_IN_FLIGHT);
    await quiet.stop();
    const quietHandling = handlingMs(quiet.logFile);
    console.log(
      ackLines(
        `WORKER_CONCURRENCY=0 (the ack alone), one message after another as Salesforce sends them, after ${WARM_UP_MESSAGES} warm-up messages`,
        alone,
        quietHandling.slice(WARM_UP_MESSAGES, WARM_UP_MESSAGES + MESSAGES),
      ),
    );
    console.log(
      ackLines(
        `WORKER_CONCURRENCY=0, ${PARALLEL_IN_FLIGHT} messages in flight (more than Salesforce sends to one endpoint)`,
        five,
        quietHandling.slice(WARM_UP_MESSAGES + MESSAGES),
        false,
      ),
    );
    const acked = [...warmUp, ...serial, ...parallel].flatMap((m) => m.recordIds);
    const queued = await queuedRecordIds(quietFolder);
    const missing = acked.filter((id) => !queued.has(id)).length;
    if (missing > 0) failures.push(`(a) ${missing} acknowledged notifications have no queued job`);
    console.log(`    durably queued: ${acked.length - missing}/${acked.length} acknowledged notifications are queued jobs in the stopped server's data folder`);

    // (a) with the default workers draining what the messages queue: warmed up by draining the warm-up
    // messages' records first, so the workers are past their first batch when the measured messages come.
    const busyFolder = await folder('ack-draining');
    const busy = await serve(busyFolder, 'ack-draining', null);
    const busyWarmUp = await messages(org, WARM_UP_MESSAGES);
    const busySerial = await messages(org, MESSAGES);
    await post(busy.outboundUrl, busyWarmUp, 'warm-up (draining)');
    const warmUpRecords = busyWarmUp.flatMap((m) => m.recordIds.map((id) => fake.record(id)));
    const warmUpSettled = await drained(warmUpRecords, Date.now());
    const requestsBefore = fake.requests.length;
    const writesBefore = fake.updates.length;
    const draining = await post(busy.outboundUrl, busySerial, 'default workers, one at a time');
    const writtenDuring = new Set(
      fake.updates
        .slice(writesBefore)
        .filter((u) => u.success)
        .map((u) => u.id),
    ).size;
    // Then the rest of what the measured messages queued, so nothing they acknowledged goes unchecked.
    const lastAck = Date.now();
    const serialRecords = busySerial.flatMap((m) => m.recordIds.map((id) => fake.record(id)));
    const serialSettled = await drained(serialRecords, lastAck);
    const drainSeconds = (Date.now() - lastAck) / 1000;
    await busy.stop();
    const busyCalls = fake.requests.length - requestsBefore;
    if (serialSettled < serialRecords.length)
      failures.push(`(a) ${serialRecords.length - serialSettled} acknowledged records of the draining server were not enriched`);
    console.log(
      ackLines(
        `WORKER_CONCURRENCY=2 (the default), one message after another, the workers enriching and writing back what the messages queue`,
        draining,
        handlingMs(busy.logFile).slice(WARM_UP_MESSAGES),
      ),
    );
    console.log(
      [
        `    the workers had drained the ${warmUpRecords.length} records of the warm-up messages first (${warmUpSettled} enriched); while the ${MESSAGES} messages came in`,
        `    they had batches in flight and wrote back ${writtenDuring} records (a batch writes when its enrichments are done); after the last Ack they enriched the`,
        `    rest: ${serialSettled}/${serialRecords.length} in ${drainSeconds.toFixed(1)} s, ${busyCalls} REST calls in all (${(busyCalls / Math.max(1, serialSettled)).toFixed(4)} per record)`,
      ].join('\n'),
    );
    console.log('');

    // (b) the default workers, with the org's two flows sending in turn (as they do when Contacts and Leads are
    // created together), then as a backlog in claims of 200, then a backlog with every Contact's message first.
    console.log(
      `(b) REST calls per enriched record: ${RECORDS} new records (${Math.ceil(RECORDS / 2)} Contacts with Accounts, ${RECORDS - Math.ceil(RECORDS / 2)} Leads), posted by the org's flows`,
    );
    console.log(`  default workers running while the messages arrive, the Contact and Lead flows' messages in turn:`);
    await liveRun(org, serve, await folder('live'), 'interleaved');
    console.log(
      `  a backlog (queued by a server with WORKER_CONCURRENCY=0, drained by the same data folder's server restarted with the default workers), messages in turn:`,
    );
    await backlogRun(org, serve, await folder('backlog'), 'interleaved');
    console.log(`  the same backlog, but every Contact's message before any Lead's, so that each claim of 200 holds one object:`);
    await backlogRun(org, serve, await folder('backlog-grouped'), 'grouped');
    console.log(`  ${RECORDS} person Accounts (an installation naming Account; written through the Contact fields' __pc names), default workers:`);
    await personAccountRun(org, serve, await folder('person-accounts'));
    console.log(
      `  ${RECORDS} Contacts two to an NPSP household Account, household fields on the household Account only (\`salesforce households --on household\`), default workers:`,
    );
    await householdRun(org, serve, await folder('households'));
    console.log('');
    // (c) the flood the hardening issue measured: envelopes as large as the route reads, naming an org
    // nobody connected or carrying a wrong secret, no credentials; the default server, then the same
    // with the per-address rate limit lifted, so the pre-parse refusal alone is measured.
    console.log(`(c) a flood of unauthenticated outbound messages, and /healthz during it (the default server: WORKER_CONCURRENCY=2)`);
    const floodFolder = await folder('flood');
    const padTo = (xml: string) => Buffer.from(xml.replace('?>\n', `?>\n${' '.repeat(OUTBOUND_MESSAGE_MAX_BYTES - Buffer.byteLength(xml) - 16)}`));
    const [sample] = await messages(org, 1);
    if (sample === undefined) throw new Error('no sample message');
    const unknownOrg = padTo(sample.body.replace(/<OrganizationId>[^<]+</, '<OrganizationId>00D3t000004WbXyEAK<'));
    const known = padTo(sample.body);
    for (const [label, env] of [
      ['the default limit on refusals per source address (SALESFORCE_OUTBOUND_RATE=20)', {}],
      ['the limit lifted (SALESFORCE_OUTBOUND_RATE=100000): the org and secret checks before the parse alone', { SALESFORCE_OUTBOUND_RATE: '100000' }],
    ] as const) {
      const floodServer = await startServer(floodFolder, 'flood', null, logDir, env);
      servers.push(floodServer);
      const base = `${floodServer.url}${ROUTE}`;
      console.log(floodLines(`${label}, an org nobody connected:`, await flood(floodServer, `${base}/not-a-secret`, unknownOrg)));
      console.log(floodLines(`${label}, the connected org with a wrong secret:`, await flood(floodServer, `${base}/not-the-secret`, known)));
      await floodServer.stop();
    }
    console.log('');

    console.log(`total ${((performance.now() - benchStarted) / 1000).toFixed(0)} s; server logs (LOG_LEVEL=info): ${logDir}`);
    if (failures.length > 0) {
      console.error(`bench:salesforce: ${failures.length} problem(s):`);
      for (const failure of failures.slice(0, 20)) console.error(`  ${failure}`);
      process.exitCode = 1;
    }
  } finally {
    for (const server of servers) await server.stop();
    await fake.close();
    for (const f of folders) rmSync(f.dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
