// `npm run bench:card [-- --contacts N --clients N --seconds N --post-seconds N --portals N]`: the HubSpot record
// card's backend under load, on the real server process (the `npm start` command line, its log at info
// level going to a file) connected (static token, sandbox) to the fake HubSpot of test/support.
// Set-up: N (300) persona contacts created in the fake, backfilled with the CLI and enriched by the
// server's workers (the account's rate limit raised so the set-up is quick), every one waited for.
// (a) The card's view: `clients` (20) concurrent clients, each sending one POST
//     /hubspot/card/contacts/:objectId/view after another with the contact's properties of ours (as the
//     card reads them itself), v3-signed as hubspot.fetch signs it (over the URL with the portalId,
//     userId, userEmail and appId HubSpot appends, the body and the timestamp of the send), for
//     `seconds` (20) after a 3 s warm-up, over loopback. With --read-through, a GET instead, for which
//     enrichbridge reads the contact from the fake.
//     With --portals N (1), the contacts are spread over N portals (a fake HubSpot and an installation
//     each) and the requests go to them in turn: every HubSpot call of a portal goes through its pacer
//     (110 calls per 10 s, spaced 91 ms apart), so one portal caps the views at about 11/s.
// (b) The card's actions: each client POSTs exclude then include on a contact of its own, for
//     `post-seconds` (5; 0 skips it).
// A figure, not a test: it prints requests, errors (any answer but 200, or no answer within 5 s),
// refusals (a 200 whose `ok` is not true), p50/p95/p99/max latency and throughput, and the target
// "p99 <= 100 ms"; it exits 1 only when there were errors or refusals, or the set-up failed.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { z } from 'zod';
import { PERSONAS } from '../../core/sandbox/personas.ts';
import { HUBSPOT_CARD_ACTION_ROUTE, HUBSPOT_CARD_ROUTE } from '../../connectors/hubspot/paths.ts';
import { type FakeHubSpot, hubspotV3Signature, startFakeHubSpot } from '../support/fake-hubspot.ts';
import { ROOT, freePort, machine, stopChild, verdict, waitHealthy } from './bench-support.ts';

const APP_ID = '1160452';
const FIRST_PORTAL_ID = 62515;
const CARD_PATH = '/hubspot/card/contacts';
const WARM_UP_SECONDS = 3;
const REQUEST_TIMEOUT_MS = 5_000;
/** Enrichment is set-up here, not what is measured: the account's rate limit is far above the default 5/s. */
const ACCOUNT_RATE_LIMIT = 1_000;
const ENRICHED_WITHIN_MS = 120_000;
const TARGET_P99_MS = 100;
/** The HubSpot users the card's requests come from, cycled. */
const USERS = [
  { userId: '4242', email: 'fundraiser@example.org' },
  { userId: '4243', email: 'major.gifts@example.org' },
  { userId: '4244', email: 'prospect.research@example.org' },
] as const;

const { values } = parseArgs({
  options: {
    contacts: { type: 'string', default: '300' },
    clients: { type: 'string', default: '20' },
    seconds: { type: 'string', default: '20' },
    'post-seconds': { type: 'string', default: '5' },
    portals: { type: 'string', default: '1' },
    'read-through': { type: 'boolean', default: false },
  },
});
/** The view as an older card asked for it (GET: enrichbridge reads the contact through the portal's pacer). */
const READ_THROUGH = values['read-through'] === true;
const CONTACTS = z.coerce.number().int().min(1).max(10_000).parse(values.contacts);
const CLIENTS = z.coerce.number().int().min(1).max(1_000).parse(values.clients);
const SECONDS = z.coerce.number().min(1).max(3_600).parse(values.seconds);
const POST_SECONDS = z.coerce.number().min(0).max(3_600).parse(values['post-seconds']);
const PORTALS = z.coerce.number().int().min(1).max(200).parse(values.portals);

const AnswerSchema = z.object({ ok: z.boolean() }).loose();
const RequestLineSchema = z.object({ msg: z.string(), route: z.string().optional(), ms: z.number() }).loose();

const execFileAsync = promisify(execFile);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The CLI as an operator runs it; its stdout (stderr, the progress lines, is dropped). */
async function quietCli(args: string[], env: Record<string, string>): Promise<string> {
  const { stdout } = await execFileAsync(process.execPath, [path.join(ROOT, 'bin/enrichbridge.js'), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout;
}

interface Server {
  readonly child: ChildProcess;
  readonly url: string;
  readonly logFile: string;
  stop(): Promise<void>;
}

/**
 * A data folder with an account and the fake's portal connected, its contacts backfilled (queued before
 * the server starts), and the server on it with the default two workers, which enrich them.
 */
async function startServer(fakes: readonly FakeHubSpot[], logDir: string): Promise<Server> {
  const [fake] = fakes;
  if (fake === undefined) throw new Error('no portals');
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'enrichbridge-bench-card-'));
  const env = { DATA_DIR: dataDir, ENRICHBRIDGE_SECRET_KEY: randomBytes(32).toString('hex') };
  await quietCli(['accounts', 'create', 'bench', '--career-intelligence', '--rate-limit', String(ACCOUNT_RATE_LIMIT)], env);
  for (const portal of fakes) {
    const installationId = (
      await quietCli(
        [
          ...['hubspot', 'connect', '--portal-id', portal.portalId, '--access-token', portal.tokens.staticToken, '--client-secret', portal.clientSecret],
          ...['--app-id', APP_ID, '--account', 'bench', '--env', 'sandbox', '--api-base-url', portal.url],
        ],
        env,
      )
    ).trim();
    await quietCli(['backfill', 'hubspot', installationId, '--yes'], env);
  }
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const logFile = path.join(logDir, 'server.log');
  const log = openSync(logFile, 'a');
  // NODE_ENV=production would demand HTTPS on this plain-HTTP loopback bench.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => key !== 'NODE_ENV'));
  // The same command line as `npm start` (its larger young generation included).
  const child = spawn(process.execPath, ['--max-semi-space-size=32', 'bin/server.js'], {
    cwd: ROOT,
    env: {
      ...inherited,
      ...env,
      PORT: String(port),
      LOG_LEVEL: 'info',
      PUBLIC_URL: url,
      HUBSPOT_CLIENT_ID: fake.clientId,
      HUBSPOT_CLIENT_SECRET: fake.clientSecret,
      HUBSPOT_APP_ID: APP_ID,
      HUBSPOT_API_BASE_URL: fake.url,
    },
    stdio: ['ignore', log, log],
  });
  closeSync(log);
  await waitHealthy('server', child, `${url}/healthz`);
  return {
    child,
    url,
    logFile,
    stop: async () => {
      await stopChild(child);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Waits until the workers have written a status to every contact; the count of `enriched` ones. */
async function enrichedAll(ids: readonly Target[]): Promise<number> {
  const deadline = Date.now() + ENRICHED_WITHIN_MS;
  for (;;) {
    const statuses = ids.map(({ fake, id }) => fake.contacts.get(id)?.properties.wf_enrichment_status ?? null);
    if (statuses.every((status) => status !== null && status !== '' && status !== 'queued')) {
      return statuses.filter((status) => status === 'enriched').length;
    }
    if (Date.now() > deadline) {
      const done = statuses.filter((status) => status !== null && status !== '' && status !== 'queued').length;
      throw new Error(`only ${done} of ${ids.length} contacts enriched within ${ENRICHED_WITHIN_MS / 1000} s`);
    }
    await sleep(100);
  }
}

/** The app's client secret (the fake's), which signs every card request. */
let fakeSecret = '';
let sent = 0;

/** A contact of one portal. */
interface Target {
  readonly fake: FakeHubSpot;
  readonly id: string;
}

/** A card request as hubspot.fetch sends it: the card's path, HubSpot's query appended, v3-signed now. */
async function cardRequest(server: Server, method: 'GET' | 'POST', target: Target, action = '', json?: unknown): Promise<{ status: number; ok: boolean }> {
  const user = USERS[sent++ % USERS.length] ?? USERS[0];
  const query = new URLSearchParams({ userId: user.userId, userEmail: user.email, appId: APP_ID, portalId: target.fake.portalId }).toString();
  const url = `${server.url}${CARD_PATH}/${target.id}${action}?${query}`;
  const timestamp = Date.now();
  const body = json === undefined ? '' : JSON.stringify(json);
  const response = await fetch(url, {
    method,
    headers: {
      'X-HubSpot-Signature-v3': hubspotV3Signature(fakeSecret, method, url, body, timestamp),
      'X-HubSpot-Request-Timestamp': String(timestamp),
      ...(body === '' ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(body === '' ? {} : { body }),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await response.text();
  if (response.status !== 200) return { status: response.status, ok: false };
  const parsed = AnswerSchema.safeParse(JSON.parse(text));
  return { status: 200, ok: parsed.success && parsed.data.ok };
}

interface Run {
  readonly latencies: number[];
  readonly seconds: number;
  errors: number;
  refused: number;
  readonly statuses: Map<string, number>;
  firstProblem: string | null;
}

/** `clients` loops, each sending one request after another until `seconds` have passed; each request timed. */
async function runFor(clients: number, seconds: number, send: (client: number) => Promise<{ status: number; ok: boolean }[]>): Promise<Run> {
  const run: Run = { latencies: [], seconds, errors: 0, refused: 0, statuses: new Map(), firstProblem: null };
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      while (performance.now() < until) {
        const at = performance.now();
        let answers: { status: number; ok: boolean }[];
        try {
          answers = await send(client);
        } catch (error) {
          answers = [{ status: 0, ok: false }];
          run.firstProblem ??= error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        }
        // A pair (exclude then include) is timed per request by its sender; a single request here.
        if (answers.length === 1) run.latencies.push(performance.now() - at);
        for (const answer of answers) {
          const key = answer.status === 0 ? 'no answer' : String(answer.status);
          run.statuses.set(key, (run.statuses.get(key) ?? 0) + 1);
          if (answer.status !== 200) run.errors += 1;
          else if (!answer.ok) run.refused += 1;
        }
      }
    }),
  );
  return { ...run, seconds: (performance.now() - started) / 1000 };
}

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
}

/** p50, p95, p99 (nearest rank) and max. */
function stats(samples: readonly number[]): { p50: number; p95: number; p99: number; max: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: quantile(sorted, 0.5), p95: quantile(sorted, 0.95), p99: quantile(sorted, 0.99), max: sorted.at(-1) ?? Number.NaN };
}

/** The server's own handling time (its request log's `ms`) of the requests to `route`, in order. */
function handlingMs(logFile: string, route: string): number[] {
  return readFileSync(logFile, 'utf8')
    .split('\n')
    .flatMap((line) => {
      if (!line.startsWith('{')) return [];
      const parsed = RequestLineSchema.safeParse(JSON.parse(line));
      return parsed.success && parsed.data.msg === 'request' && parsed.data.route === route ? [parsed.data.ms] : [];
    });
}

function runLines(run: Run, latencies: readonly number[], requests: number, handling: readonly number[]): string[] {
  const s = stats(latencies);
  const h = stats(handling);
  const statuses = [...run.statuses.entries()].map(([status, count]) => `${status}: ${count}`).join(', ');
  return [
    `    requests ${requests} in ${run.seconds.toFixed(1)} s   errors ${run.errors} (non-200 or no answer)   refused ${run.refused} (200 without ok)   [${statuses}]`,
    ...(run.firstProblem === null ? [] : [`    first failure: ${run.firstProblem}`]),
    `    latency p50 ${s.p50.toFixed(1)} ms   p95 ${s.p95.toFixed(1)} ms   p99 ${s.p99.toFixed(1)} ms   max ${s.max.toFixed(1)} ms`,
    `    throughput ${(requests / run.seconds).toFixed(0)} requests/s`,
    `    the server's own handling time (its request log): p50 ${h.p50.toFixed(1)} ms   p99 ${h.p99.toFixed(1)} ms   max ${h.max.toFixed(1)} ms`,
  ];
}

async function main(): Promise<void> {
  fakeSecret = randomUUID();
  const fakes: FakeHubSpot[] = [];
  for (let p = 0; p < PORTALS; p += 1) {
    fakes.push(await startFakeHubSpot({ appId: APP_ID, portalId: String(FIRST_PORTAL_ID + p), clientSecret: fakeSecret, webhookUrl: null }));
  }
  // The data folder goes when the bench ends; the server log stays for a look.
  const logDir = mkdtempSync(path.join(os.tmpdir(), 'enrichbridge-bench-card-logs-'));
  let server: Server | null = null;
  try {
    console.log(`bench:card: the server process (LOG_LEVEL=info to a file) and the fake HubSpot on loopback, sandbox installation`);
    console.log(machine());
    console.log('');

    // The sandbox personas, cycled; created quietly (no webhooks: the backfill queues them).
    // Contact i in portal i mod N: taken in order, the requests go to the portals in turn.
    const ids: Target[] = [];
    for (let i = 0; i < CONTACTS; i += 1) {
      const persona = PERSONAS[i % PERSONAS.length];
      const fake = fakes[i % fakes.length];
      if (persona === undefined || fake === undefined) throw new Error('no sandbox personas');
      const contact = await fake.createContact({ firstname: persona.first_name, lastname: persona.last_name, email: persona.email }, { notify: false });
      ids.push({ fake, id: contact.id });
    }
    const setUp = performance.now();
    server = await startServer(fakes, logDir);
    const enriched = await enrichedAll(ids);
    console.log(
      `set-up: ${CONTACTS} persona contacts in ${PORTALS === 1 ? 'one portal' : `${PORTALS} portals (an installation and a fake HubSpot each)`}, backfilled (\`enrichbridge backfill hubspot … --yes\`) and enriched by the server's two workers in ${((performance.now() - setUp) / 1000).toFixed(1)} s: ${enriched} enriched, ${CONTACTS - enriched} other`,
    );
    console.log('');
    const live = server;

    let next = 0;
    const view = async () => {
      const target = ids[next++ % ids.length];
      if (target === undefined) throw new Error('no contacts');
      if (READ_THROUGH) return [await cardRequest(live, 'GET', target)];
      // As the card asks: with what it read of our properties itself (fetchCrmObjectProperties).
      const properties = Object.fromEntries(Object.entries(target.fake.contacts.get(target.id)?.properties ?? {}).filter(([name]) => name.startsWith('wf_')));
      return [await cardRequest(live, 'POST', target, '/view', { properties })];
    };
    const viewRoute = READ_THROUGH ? HUBSPOT_CARD_ROUTE : HUBSPOT_CARD_ACTION_ROUTE;
    console.log(
      `(a) the view: ${READ_THROUGH ? `GET ${HUBSPOT_CARD_ROUTE} (enrichbridge reads the contact)` : `POST ${HUBSPOT_CARD_ROUTE}/view with the properties the card read itself`}, v3-signed with HubSpot's appended query, ${PORTALS === 1 ? 'one portal' : `${PORTALS} portals in turn`}, ${CLIENTS} concurrent clients for ${SECONDS} s after a ${WARM_UP_SECONDS} s warm-up`,
    );
    const warmUp = await runFor(CLIENTS, WARM_UP_SECONDS, view);
    const viewsBefore = handlingMs(live.logFile, viewRoute).length;
    const views = await runFor(CLIENTS, SECONDS, view);
    const viewHandling = handlingMs(live.logFile, viewRoute).slice(viewsBefore);
    for (const line of runLines(views, views.latencies, views.latencies.length, viewHandling)) console.log(line);
    const p99 = stats(views.latencies).p99;
    console.log(`    target p99 <= ${TARGET_P99_MS} ms: ${verdict(p99 <= TARGET_P99_MS)}`);
    let failed = warmUp.errors + warmUp.refused + views.errors + views.refused > 0;

    if (POST_SECONDS > 0) {
      console.log('');
      console.log(`(b) the actions: POST ${HUBSPOT_CARD_ACTION_ROUTE}, exclude then include, each client on a contact of its own, for ${POST_SECONDS} s`);
      const actionLatencies: number[] = [];
      const timed = async (target: Target, action: string) => {
        const at = performance.now();
        const answer = await cardRequest(live, 'POST', target, action);
        actionLatencies.push(performance.now() - at);
        return answer;
      };
      const actionsBefore = handlingMs(live.logFile, HUBSPOT_CARD_ACTION_ROUTE).length;
      const pairs = await runFor(Math.min(CLIENTS, ids.length), POST_SECONDS, async (client) => {
        const target = ids[client];
        if (target === undefined) throw new Error('no contacts');
        const excluded = await timed(target, '/exclude');
        const included = await timed(target, '/include');
        return [excluded, included];
      });
      const actionHandling = handlingMs(live.logFile, HUBSPOT_CARD_ACTION_ROUTE).slice(actionsBefore);
      for (const line of runLines(pairs, actionLatencies, actionLatencies.length, actionHandling)) console.log(line);
      console.log(`    (no target: the issue's figure is the view's)`);
      failed ||= pairs.errors + pairs.refused > 0;
    }
    console.log('');
    console.log(`server log (LOG_LEVEL=info): ${live.logFile}`);
    if (failed) {
      console.error('bench:card: some requests failed or were refused (see above)');
      process.exitCode = 1;
    }
  } finally {
    await server?.stop();
    for (const fake of fakes) await fake.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
