// `npm run bench:api`: the sandbox endpoint of the real server process against a bare Express JSON echo,
// each loaded with autocannon on this machine; prints req/s, p50 and p99 and whether the targets hold.
import autocannon from 'autocannon';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const WARM_UP_SECONDS = 2;
const MEASURE_SECONDS = 10;
const CONNECTIONS = 10;
/** Targets: the sandbox keeps at least this share of a bare echo's throughput … */
const TARGET_THROUGHPUT_RATIO = 0.6;
/** … and answers 99 % of requests within this many milliseconds. */
const TARGET_P99_MS = 10;

const AMANDA_TAYLOR = JSON.stringify({
  id: 'bench-1',
  first_name: 'Amanda',
  last_name: 'Taylor',
  emails: ['amanda.taylor@sandbox.windfall.com'],
  addresses: [{ address: '100 Demo St', city: 'Atlanta', state: 'GA', zipcode: '30301' }],
});

const run = promisify(execFile);

interface Target {
  readonly name: string;
  readonly url: string;
  readonly headers: Record<string, string>;
}

interface Measured {
  readonly name: string;
  readonly requestsPerSecond: number;
  readonly p50: number;
  readonly p99: number;
}

/** A port the OS says is free now; the child binds it a moment later (a race we accept on a bench box). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** The operator's path: the CLI creates the account and prints the sandbox token alone on stdout. */
async function createBenchToken(dataDir: string): Promise<string> {
  const env = { ...process.env, DATA_DIR: dataDir };
  const cli = path.join(ROOT, 'bin/enrichbridge.js');
  await run(process.execPath, [cli, 'accounts', 'create', 'bench', '--career-intelligence', '--rate-limit', '1000000'], { env, cwd: ROOT });
  const { stdout } = await run(process.execPath, [cli, 'tokens', 'create', 'bench', '--env', 'sandbox'], { env, cwd: ROOT });
  const token = stdout.trim();
  if (!token.startsWith('sandbox_')) throw new Error(`the CLI printed no sandbox token: ${JSON.stringify(stdout)}`);
  return token;
}

function startChild(name: string, script: string, env: Record<string, string>): ChildProcess {
  // NODE_ENV=production would demand HTTPS on this plain-HTTP loopback bench.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'NODE_ENV'));
  // stdout (the JSON log lines) goes to /dev/null: logging stays on as in production, unprinted.
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    cwd: ROOT,
    env: { ...inherited, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  child.once('exit', (code, signal) => {
    if (code !== 0 && signal !== 'SIGTERM') console.error(`${name} exited early: code ${code}, signal ${signal}`);
  });
  return child;
}

async function waitHealthy(name: string, child: ChildProcess, url: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${name} exited with code ${child.exitCode} before it was healthy`);
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${name} was not healthy at ${url} within 20 s`);
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

/** One request by hand first, so the bench measures the path it claims to (a 200 with a match). */
async function checkOnce(target: Target, check: (body: unknown) => boolean): Promise<void> {
  const response = await fetch(target.url, { method: 'POST', headers: target.headers, body: AMANDA_TAYLOR });
  const body: unknown = await response.json();
  if (response.status !== 200 || !check(body)) {
    throw new Error(`${target.name}: unexpected answer ${response.status} ${JSON.stringify(body)}`);
  }
}

async function load(target: Target, seconds: number): Promise<autocannon.Result> {
  const result = await autocannon({
    url: target.url,
    method: 'POST',
    headers: target.headers,
    body: AMANDA_TAYLOR,
    connections: CONNECTIONS,
    pipelining: 1,
    duration: seconds,
  });
  if (result.non2xx !== 0 || result.errors !== 0 || result.timeouts !== 0) {
    throw new Error(
      `${target.name}: ${result.non2xx} non-2xx answers, ${result.errors} errors, ${result.timeouts} timeouts ` +
        `(status codes ${JSON.stringify(result.statusCodeStats)})`,
    );
  }
  return result;
}

async function measure(target: Target): Promise<Measured> {
  await load(target, WARM_UP_SECONDS);
  const result = await load(target, MEASURE_SECONDS);
  return { name: target.name, requestsPerSecond: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 };
}

function report(sandbox: Measured, echo: Measured): string {
  const ratio = sandbox.requestsPerSecond / echo.requestsPerSecond;
  const row = (cells: readonly string[]) => cells.map((cell, i) => (i === 0 ? cell.padEnd(24) : cell.padStart(12))).join('');
  const line = (m: Measured) => row([m.name, m.requestsPerSecond.toFixed(0), m.p50.toFixed(2), m.p99.toFixed(2)]);
  const verdict = (met: boolean) => (met ? 'met' : 'MISSED');
  const cpus = os.cpus();
  return [
    '',
    row(['', 'req/s', 'p50 ms', 'p99 ms']),
    line(sandbox),
    line(echo),
    '',
    `sandbox / echo req/s     ${(ratio * 100).toFixed(1)} %   target >= ${TARGET_THROUGHPUT_RATIO * 100} %: ${verdict(ratio >= TARGET_THROUGHPUT_RATIO)}`,
    `sandbox p99              ${sandbox.p99.toFixed(2)} ms   target <= ${TARGET_P99_MS} ms: ${verdict(sandbox.p99 <= TARGET_P99_MS)}`,
    '',
    `load: autocannon, ${CONNECTIONS} connections, pipelining 1, ${WARM_UP_SECONDS} s warm-up then ${MEASURE_SECONDS} s each, one after the other`,
    `machine: ${cpus[0]?.model ?? 'unknown CPU'}, ${cpus.length} cores, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}`,
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'enrichbridge-bench-'));
  const children: ChildProcess[] = [];
  try {
    const token = await createBenchToken(dataDir);

    const apiPort = await freePort();
    const api = startChild('server', 'server/main.ts', { PORT: String(apiPort), DATA_DIR: dataDir, LOG_LEVEL: 'info' });
    children.push(api);
    await waitHealthy('server', api, `http://127.0.0.1:${apiPort}/healthz`);

    const echoPort = await freePort();
    const echoServer = startChild('echo server', 'test/bench/echo-server.ts', { PORT: String(echoPort) });
    children.push(echoServer);
    await waitHealthy('echo server', echoServer, `http://127.0.0.1:${echoPort}/healthz`);

    const sandboxTarget: Target = {
      name: 'sandbox POST /sandbox/v1',
      url: `http://127.0.0.1:${apiPort}/sandbox/v1`,
      headers: { 'content-type': 'application/json', 'x-wf-auth-token': token },
    };
    const echoTarget: Target = {
      name: 'express echo POST /echo',
      url: `http://127.0.0.1:${echoPort}/echo`,
      headers: { 'content-type': 'application/json' },
    };
    const matched = (body: unknown) =>
      typeof body === 'object' && body !== null && 'household_matched' in body && body.household_matched === true &&
      'career_matched' in body && body.career_matched === true;
    await checkOnce(sandboxTarget, matched);
    await checkOnce(echoTarget, (body) => JSON.stringify(body) === AMANDA_TAYLOR);

    const sandbox = await measure(sandboxTarget);
    const echo = await measure(echoTarget);
    console.log(report(sandbox, echo));
  } finally {
    await Promise.all(children.map(stopChild));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error('bench failed:', error);
  process.exitCode = 1;
});
