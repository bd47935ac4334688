// `npm run bench:hubspot [-- --batches N --contacts N]`: the HubSpot connector's two figures, on the real
// server process connected (static token, sandbox) to the fake HubSpot of test/support, its log at info
// level going to a file.
// (a) Webhook acknowledgement: N (200) v3-signed batches of 100 `contact.creation` events for new
//     contacts, 10 deliveries in flight (HubSpot's default), against a server with WORKER_CONCURRENCY=0
//     so no enrichment competes (with one in flight first, for what a batch costs alone); then the same
//     load against a server with the default two workers draining what it queues.
// (b) Creation to write-back with no backlog: persona contacts created one at a time in the fake, each
//     delivered at once as its own webhook (no batching window); from the webhook POST to the write-back
//     request reaching the fake. With 50 contacts, p99 is the slowest one.
// Fails (exit 1) when a batch is not answered 200 or a write-back does not arrive within 30 s.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { z } from 'zod';
import { PERSONAS } from '../../core/sandbox/personas.ts';
import { type FakeHubSpot, startFakeHubSpot } from '../support/fake-hubspot.ts';
import { ROOT, freePort, latencyStats, machine, signedCreationBatch, stopChild, timedInFlight, verdict, waitHealthy } from './bench-support.ts';
import { HUBSPOT_PATHS } from '../../connectors/hubspot/version.ts';

const APP_ID = '1160452';
const PORTAL_ID = '62515';
const EVENTS_PER_BATCH = 100;
const CONCURRENT_DELIVERIES = 10;
const WARM_UP_BATCHES = 20;
const BASELINE_BATCHES = 50;
const UPDATE_PATH = HUBSPOT_PATHS.contactsBatchUpdate;
const TARGETS = { ackP99Ms: 50, writeBackP50Ms: 2_000 } as const;
/** The account's default enrichment rate (5/s per token): creations are spaced to stay under it. */
const CREATION_SPACING_MS = 250;

const { values } = parseArgs({ options: { batches: { type: 'string', default: '200' }, contacts: { type: 'string', default: '50' } } });
const BATCHES = z.coerce.number().int().min(1).max(100_000).parse(values.batches);
const CONTACTS = z.coerce.number().int().min(1).max(10_000).parse(values.contacts);

/** The route's answer: the batch stored durably, one job per known portal (expanded by a worker). */
const AckSchema = z.object({ received: z.number(), queued: z.number(), ignored: z.number() });
const RequestLineSchema = z.object({ msg: z.string(), route: z.string().optional(), ms: z.number() }).loose();
const UpdateBodySchema = z.object({ inputs: z.array(z.object({ id: z.string() }).loose()) });

const execFileAsync = promisify(execFile);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function quietCli(args: string[], env: Record<string, string>): Promise<string> {
  const { stdout } = await execFileAsync(process.execPath, [path.join(ROOT, 'bin/enrichbridge.js'), ...args], { cwd: ROOT, env: { ...process.env, ...env } });
  return stdout;
}

interface Server {
  readonly child: ChildProcess;
  readonly url: string;
  readonly webhookUrl: string;
  /** The server's own handling time (its request log's `ms`) of every webhook batch, in order; read after stop. */
  webhookHandlingMs(): number[];
  stop(): Promise<void>;
}

/** A data folder with an account and the fake's portal connected, and the server on it. */
async function startServer(fake: FakeHubSpot, name: string, workerConcurrency: number, logDir: string): Promise<Server> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `enrichbridge-bench-hubspot-${name}-`));
  const env = { DATA_DIR: dataDir, ENRICHBRIDGE_SECRET_KEY: randomBytes(32).toString('hex') };
  // The account's defaults (5 requests/s per token among them), as an operator creates it.
  await quietCli(['accounts', 'create', 'bench', '--career-intelligence'], env);
  await quietCli(
    [
      ...['hubspot', 'connect', '--portal-id', PORTAL_ID, '--access-token', fake.tokens.staticToken, '--client-secret', fake.clientSecret],
      ...['--app-id', APP_ID, '--account', 'bench', '--env', 'sandbox', '--api-base-url', fake.url],
    ],
    env,
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const logFile = path.join(logDir, `server-${name}.log`);
  const log = openSync(logFile, 'a');
  // NODE_ENV=production would demand HTTPS on this plain-HTTP loopback bench.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => key !== 'NODE_ENV'));
  // The same command line as `npm start` (its larger young generation included); BENCH_CPU_PROF=folder
  // writes each server's CPU profile there (.cpuprofile, for Chrome's DevTools or speedscope).
  const profile = process.env.BENCH_CPU_PROF === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`];
  const child = spawn(process.execPath, ['--max-semi-space-size=32', ...profile, 'bin/server.js'], {
    cwd: ROOT,
    env: {
      ...inherited,
      ...env,
      PORT: String(port),
      LOG_LEVEL: 'info',
      WORKER_CONCURRENCY: String(workerConcurrency),
      PUBLIC_URL: url,
      HUBSPOT_CLIENT_ID: fake.clientId,
      HUBSPOT_CLIENT_SECRET: fake.clientSecret,
      HUBSPOT_APP_ID: APP_ID,
      HUBSPOT_API_BASE_URL: fake.url,
    },
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  await waitHealthy(`server (${name})`, child, `${url}/healthz`);
  return {
    child,
    url,
    webhookUrl: `${url}/webhooks/hubspot`,
    webhookHandlingMs: () =>
      readFileSync(logFile, 'utf8')
        .split('\n')
        .flatMap((line) => {
          if (!line.startsWith('{')) return [];
          const parsed = RequestLineSchema.safeParse(JSON.parse(line));
          return parsed.success && parsed.data.msg === 'request' && parsed.data.route === '/webhooks/hubspot' ? [parsed.data.ms] : [];
        }),
    stop: async () => {
      await stopChild(child);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

interface AckRun {
  readonly latencies: number[];
  readonly seconds: number;
  readonly enqueued: number;
}

/** `count` signed batches, `inFlight` at a time; every answer must be a 200 that queued them. */
async function deliver(server: Server, secret: string, count: number, inFlight = CONCURRENT_DELIVERIES): Promise<AckRun> {
  const batches = Array.from({ length: count }, () => signedCreationBatch(server.webhookUrl, secret, { portalId: PORTAL_ID, appId: APP_ID }, EVENTS_PER_BATCH));
  let enqueued = 0;
  const { latencies, seconds } = await timedInFlight(batches.length, inFlight, async (i) => {
    const batch = batches[i];
    if (batch === undefined) return;
    const response = await fetch(server.webhookUrl, { method: 'POST', headers: batch.headers, body: batch.body, signal: AbortSignal.timeout(5_000) });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`batch ${i} answered ${response.status}: ${text}`);
    const ack = AckSchema.parse(JSON.parse(text));
    if (ack.queued !== 1 || ack.ignored !== 0) throw new Error(`batch ${i} was not stored whole: ${text}`);
    enqueued += ack.received;
  });
  return { latencies, seconds, enqueued };
}

function ackLine(label: string, run: AckRun, handlingMs: readonly number[]): string {
  const s = latencyStats(run.latencies);
  const h = latencyStats(handlingMs);
  const events = run.latencies.length * EVENTS_PER_BATCH;
  return [
    `  ${label}`,
    `    ${run.latencies.length} batches, ${events} events in ${run.seconds.toFixed(2)} s: ${(events / run.seconds).toFixed(0)} events/s, ${run.enqueued} events stored`,
    `    ack p50 ${s.p50.toFixed(1)} ms   p99 ${s.p99.toFixed(1)} ms   max ${s.max.toFixed(1)} ms   target p99 <= ${TARGETS.ackP99Ms} ms: ${verdict(s.p99 <= TARGETS.ackP99Ms)}`,
    `    the server's own handling time (its request log): p50 ${h.p50.toFixed(1)} ms   p99 ${h.p99.toFixed(1)} ms`,
  ].join('\n');
}

/** When the first write-back request carrying this contact reached the fake (ms epoch), or null. */
function writeBackAt(fake: FakeHubSpot, id: string): number | null {
  for (const request of fake.requests) {
    if (request.method !== 'POST' || request.path !== UPDATE_PATH) continue;
    const parsed = UpdateBodySchema.safeParse(request.body);
    if (parsed.success && parsed.data.inputs.some((input) => input.id === id)) return Date.parse(request.at);
  }
  return null;
}

/** Persona contacts created one at a time, each write-back awaited before the next: no backlog. */
async function creationToWriteBack(fake: FakeHubSpot, count: number): Promise<number[]> {
  const latencies: number[] = [];
  let lastCreation = 0;
  for (let i = 0; i < count; i += 1) {
    const persona = PERSONAS[i % PERSONAS.length];
    if (persona === undefined) throw new Error('no sandbox personas');
    await sleep(Math.max(0, lastCreation + CREATION_SPACING_MS - Date.now()));
    // The fake posts the creation webhook on the next tick (no batching window): this is its start.
    lastCreation = Date.now();
    const contact = await fake.createContact({ firstname: persona.first_name, lastname: persona.last_name, email: persona.email });
    const deadline = Date.now() + 30_000;
    let at = writeBackAt(fake, contact.id);
    while (at === null) {
      if (Date.now() > deadline) throw new Error(`no write-back for contact ${contact.id} within 30 s`);
      await sleep(5);
      at = writeBackAt(fake, contact.id);
    }
    latencies.push(at - lastCreation);
    // Our write's own echo events are delivered (and dropped) before the next contact.
    await fake.webhooksIdle();
  }
  return latencies;
}

async function main(): Promise<void> {
  const clientSecret = randomUUID();
  const fake = await startFakeHubSpot({ appId: APP_ID, portalId: PORTAL_ID, clientSecret });
  const servers: Server[] = [];
  // The data folders go when the bench ends; the server logs stay for a look.
  const logDir = mkdtempSync(path.join(os.tmpdir(), 'enrichbridge-bench-hubspot-logs-'));
  try {
    console.log(`bench:hubspot: the server process (LOG_LEVEL=info to a file) and the fake HubSpot on loopback, sandbox installation`);
    console.log(machine());
    console.log('');

    console.log(`(a) webhook acknowledgement: ${EVENTS_PER_BATCH}-event contact.creation batches, v3-signed, ${CONCURRENT_DELIVERIES} in flight`);
    const quiet = await startServer(fake, 'ack', 0, logDir);
    servers.push(quiet);
    await deliver(quiet, clientSecret, WARM_UP_BATCHES);
    const single = await deliver(quiet, clientSecret, BASELINE_BATCHES, 1);
    const alone = await deliver(quiet, clientSecret, BATCHES);
    await quiet.stop();
    const quietHandling = quiet.webhookHandlingMs();
    console.log(
      ackLine(
        `WORKER_CONCURRENCY=0 (no enrichment competes), 1 in flight (what one batch costs)`,
        single,
        quietHandling.slice(-BATCHES - BASELINE_BATCHES, -BATCHES),
      ),
    );
    console.log(
      ackLine(
        `WORKER_CONCURRENCY=0 (no enrichment competes), ${CONCURRENT_DELIVERIES} in flight, after ${WARM_UP_BATCHES} warm-up batches`,
        alone,
        quietHandling.slice(-BATCHES),
      ),
    );

    const busy = await startServer(fake, 'writeback', 2, logDir);
    servers.push(busy);
    fake.setWebhookUrl(busy.webhookUrl);
    // Warm-up for (b): the first enrichment loads what it needs.
    await creationToWriteBack(fake, 3);
    const writeBacks = await creationToWriteBack(fake, CONTACTS);
    // (a) again on this server: its two workers drain the jobs while the batches come in (the
    // contacts are not in the fake, so each read of 100 finds none and the jobs end skipped:record_deleted).
    fake.setWebhookUrl(null);
    // Warmed up as the quiet server was: the first 100-event batches of a process compile their path.
    await deliver(busy, clientSecret, WARM_UP_BATCHES);
    const draining = await deliver(busy, clientSecret, BATCHES);
    await busy.stop();
    console.log(
      ackLine(
        `WORKER_CONCURRENCY=2 (the default), ${CONCURRENT_DELIVERIES} in flight, after ${WARM_UP_BATCHES} warm-up batches, the workers draining the queued jobs meanwhile`,
        draining,
        busy.webhookHandlingMs().slice(-BATCHES),
      ),
    );
    console.log('');

    const w = latencyStats(writeBacks);
    console.log(
      `(b) creation to write-back, no backlog: ${CONTACTS} persona contacts created one at a time (>= ${CREATION_SPACING_MS} ms apart, under the account's default 5/s), WORKER_CONCURRENCY=2`,
    );
    console.log(`    from the webhook POST to the batch update reaching the fake (after 3 warm-up contacts)`);
    console.log(
      `    p50 ${w.p50.toFixed(0)} ms   p99 ${w.p99.toFixed(0)} ms   max ${w.max.toFixed(0)} ms   target p50 <= ${TARGETS.writeBackP50Ms} ms: ${verdict(w.p50 <= TARGETS.writeBackP50Ms)}`,
    );
    console.log('');
    console.log(`server logs (LOG_LEVEL=info): ${logDir}`);
  } finally {
    for (const server of servers) await server.stop();
    await fake.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
