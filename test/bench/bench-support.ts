// What the benchmarks share: child processes for the server and the CLI, health waits, autocannon
// runs that fail loudly on any non-2xx answer, and the line that names the machine.
import { type WebhookEvent, hubspotV3Signature } from '../support/fake-hubspot.ts';
import autocannon from 'autocannon';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { buildBundles } from '../../scripts/build.ts';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const run = promisify(execFile);

/** A port the OS says is free now; the child binds it a moment later (a race we accept on a bench box). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** The CLI as an operator runs it; stdout is returned, stderr passes through (progress lines). */
export async function cli(args: string[], env: Record<string, string>): Promise<string> {
  const child = run(process.execPath, [path.join(ROOT, 'bin/enrichbridge.js'), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
  child.child.stderr?.pipe(process.stderr);
  return (await child).stdout;
}

export function startChild(name: string, script: string, env: Record<string, string>): ChildProcess {
  // NODE_ENV=production would demand HTTPS on this plain-HTTP loopback bench.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => key !== 'NODE_ENV'));
  // stdout (the JSON log lines) goes to /dev/null: logging stays on as in production, unprinted.
  const child = spawn(process.execPath, ['--import', 'tsx', script], { cwd: ROOT, env: { ...inherited, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
  child.once('exit', (code, signal) => {
    if (code !== 0 && signal !== 'SIGTERM') console.error(`${name} exited early: code ${code}, signal ${signal}`);
  });
  return child;
}

/**
 * The server as production runs it: the bundle `npm run build` writes (built here first), with the
 * flags `npm start` gives it, not the sources through tsx.
 */
export async function startBuiltServer(env: Record<string, string>): Promise<ChildProcess> {
  await buildBundles();
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => key !== 'NODE_ENV'));
  const child = spawn(process.execPath, ['--max-semi-space-size=32', 'dist/server.mjs'], {
    cwd: ROOT,
    env: { ...inherited, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  child.once('exit', (code, signal) => {
    if (code !== 0 && signal !== 'SIGTERM') console.error(`server exited early: code ${code}, signal ${signal}`);
  });
  return child;
}

export async function waitHealthy(name: string, child: ChildProcess, url: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${name} exited with code ${child.exitCode} before it was healthy`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${name} was not healthy at ${url} within 20 s`);
}

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

export interface Target {
  readonly name: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  /** One body, or several that the connections take in turn (rotatingRequests). */
  readonly bodies: readonly string[];
}

/**
 * Several bodies as autocannon requests: each request takes the next body from one cursor shared by
 * every connection, so that the connections in flight send different records, as separate callers do.
 * Given as a list instead, every connection walks the same list from its start and the ten send the
 * same record at once; a reader that merges the lookups of one turn (the PostgreSQL snapshot's) then
 * answers ten requests with the work of one.
 */
export function rotatingRequests(bodies: readonly string[]): autocannon.Request[] {
  let next = 0;
  return [
    {
      method: 'POST',
      setupRequest: (request) => {
        const body = bodies[next % bodies.length];
        next += 1;
        return { ...request, body };
      },
    },
  ];
}

export interface Measured {
  readonly name: string;
  readonly requestsPerSecond: number;
  readonly p50: number;
  readonly p99: number;
}

/** The sandbox persona Amanda Taylor, by e-mail and address: a sandbox match with household and career. */
export const AMANDA_TAYLOR = JSON.stringify({
  id: 'bench-1',
  first_name: 'Amanda',
  last_name: 'Taylor',
  emails: ['amanda.taylor@sandbox.windfall.com'],
  addresses: [{ address: '100 Demo St', city: 'Atlanta', state: 'GA', zipcode: '30301' }],
});

export const CONNECTIONS = 10;

export async function loadWith(target: Target, seconds: number): Promise<autocannon.Result> {
  const result = await autocannon({
    url: target.url,
    method: 'POST',
    headers: target.headers,
    connections: CONNECTIONS,
    pipelining: 1,
    duration: seconds,
    ...(target.bodies.length === 1 ? { body: target.bodies[0] } : { requests: rotatingRequests(target.bodies) }),
  });
  if (result.non2xx !== 0 || result.errors !== 0 || result.timeouts !== 0) {
    throw new Error(
      `${target.name}: ${result.non2xx} non-2xx answers, ${result.errors} errors, ${result.timeouts} timeouts ` +
        `(status codes ${JSON.stringify(result.statusCodeStats)})`,
    );
  }
  return result;
}

/** A warm-up run, then the measured one. */
export async function measure(target: Target, warmUpSeconds: number, seconds: number): Promise<Measured> {
  if (warmUpSeconds > 0) await loadWith(target, warmUpSeconds);
  const result = await loadWith(target, seconds);
  return { name: target.name, requestsPerSecond: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/**
 * Two loads measured in rounds that take turns, `a` then `b` in each round: this machine's speed drifts
 * by a fifth within a minute, so one run of each, one after the other, would compare two machines.
 */
export async function takeTurns<T>(rounds: number, a: () => Promise<T>, b: () => Promise<T>): Promise<[T[], T[]]> {
  const first: T[] = [];
  const second: T[] = [];
  for (let round = 0; round < rounds; round += 1) {
    first.push(await a());
    second.push(await b());
  }
  return [first, second];
}

/** Each round's req/s of `numerators` over the same round's of `denominators`, as "61.2 %, 58.0 %, …". */
export function ratiosPerRound(numerators: readonly Measured[], denominators: readonly Measured[]): string {
  return numerators.map((round, i) => `${((round.requestsPerSecond / (denominators[i]?.requestsPerSecond ?? Infinity)) * 100).toFixed(1)} %`).join(', ');
}

/** The median round of each figure. */
export function medianOf(rounds: readonly Measured[]): Measured {
  return {
    name: rounds[0]?.name ?? '',
    requestsPerSecond: median(rounds.map((round) => round.requestsPerSecond)),
    p50: median(rounds.map((round) => round.p50)),
    p99: median(rounds.map((round) => round.p99)),
  };
}

export function tableRow(cells: readonly string[]): string {
  return cells.map((cell, i) => (i === 0 ? cell.padEnd(28) : cell.padStart(12))).join('');
}

export function measuredRow(m: Measured): string {
  return tableRow([m.name, m.requestsPerSecond.toFixed(0), m.p50.toFixed(2), m.p99.toFixed(2)]);
}

export const verdict = (met: boolean): string => (met ? 'met' : 'MISSED');

export function machine(): string {
  const cpus = os.cpus();
  return `machine: ${cpus[0]?.model ?? 'unknown CPU'}, ${cpus.length} cores, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}`;
}

/**
 * Sends `count` requests with `inFlight` at a time and times each one (from just before `send` to
 * when it resolves); `send` checks the answer itself. Returns the latencies (ms) and the wall time (s).
 */
export async function timedInFlight(
  count: number,
  inFlight: number,
  send: (index: number) => Promise<void>,
): Promise<{ latencies: number[]; seconds: number }> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      for (let i = next++; i < count; i = next++) {
        const sent = performance.now();
        await send(i);
        latencies.push(performance.now() - sent);
      }
    }),
  );
  return { latencies, seconds: (performance.now() - started) / 1000 };
}

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
}

/** p50, p99 (nearest rank) and max of latency samples, in their unit. */
export function latencyStats(samples: readonly number[]): { p50: number; p99: number; max: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), max: sorted.at(-1) ?? Number.NaN };
}

let nextContactId = 900_000_001;
let nextEventId = 1;

/** One batch of `count` `contact.creation` events for contacts never seen before, signed (v3) as HubSpot signs it. */
export function signedCreationBatch(
  url: string,
  secret: string,
  portal: { readonly portalId: string; readonly appId: string },
  count = 100,
): { body: string; headers: Record<string, string> } {
  const now = Date.now();
  const events: WebhookEvent[] = Array.from({ length: count }, () => ({
    eventId: nextEventId++,
    subscriptionId: 4001,
    portalId: Number(portal.portalId),
    appId: Number(portal.appId),
    occurredAt: now,
    subscriptionType: 'contact.creation',
    attemptNumber: 0,
    objectId: nextContactId++,
    changeSource: 'CRM',
    sourceId: 'userId:9012345',
    changeFlag: 'CREATED',
  }));
  const body = JSON.stringify(events);
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-hubspot-signature-v3': hubspotV3Signature(secret, 'POST', url, body, now),
      'x-hubspot-request-timestamp': String(now),
    },
  };
}
