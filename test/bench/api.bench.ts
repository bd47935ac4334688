// `npm run bench:api`: the sandbox endpoint of the real server process (the bundle, started as `npm
// start` starts it, logging and /metrics on as in production) against a bare Express server that reads
// the same JSON, validates it with the same request schema and answers it; each loaded with autocannon
// on this machine. Prints req/s, p50 and p99 and whether the targets hold.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import {
  AMANDA_TAYLOR,
  CONNECTIONS,
  type Measured,
  type Target,
  cli,
  freePort,
  machine,
  loadWith,
  measure,
  measuredRow,
  startBuiltServer,
  startChild,
  stopChild,
  tableRow,
  medianOf,
  verdict,
  waitHealthy,
  ratiosPerRound,
  takeTurns,
} from './bench-support.ts';

const WARM_UP_SECONDS = 2;
/**
 * Measured in rounds, the two servers taking turns, and the median of each kept: this machine's speed
 * drifts by a fifth within a minute, and one long run of each, one after the other, compared two
 * different machines (a ratio of 148 % was seen so).
 */
const ROUNDS = 5;
const ROUND_SECONDS = 4;
/** Targets: the sandbox keeps at least this share of a bare echo's throughput … */
const TARGET_THROUGHPUT_RATIO = 0.8;
/** … and answers 99 % of requests within this many milliseconds. */
const TARGET_P99_MS = 10;

/** The operator's path: the CLI creates the account and prints the sandbox token alone on stdout. */
async function createBenchToken(dataDir: string): Promise<string> {
  const env = { DATA_DIR: dataDir };
  await cli(['accounts', 'create', 'bench', '--career-intelligence', '--rate-limit', '1000000'], env);
  const token = (await cli(['tokens', 'create', 'bench', '--env', 'sandbox'], env)).trim();
  if (!token.startsWith('sandbox_')) throw new Error(`the CLI printed no sandbox token: ${JSON.stringify(token)}`);
  return token;
}

/** One request by hand first, so the bench measures the path it claims to (a 200 with a match). */
async function checkOnce(target: Target, check: (body: unknown) => boolean): Promise<void> {
  const response = await fetch(target.url, { method: 'POST', headers: target.headers, body: target.bodies[0] ?? '' });
  const body: unknown = await response.json();
  if (response.status !== 200 || !check(body)) {
    throw new Error(`${target.name}: unexpected answer ${response.status} ${JSON.stringify(body)}`);
  }
}

function report(sandboxRounds: readonly Measured[], echoRounds: readonly Measured[]): string {
  const sandbox = medianOf(sandboxRounds);
  const echo = medianOf(echoRounds);
  const ratio = sandbox.requestsPerSecond / echo.requestsPerSecond;

  return [
    '',
    tableRow(['median of the rounds', 'req/s', 'p50 ms', 'p99 ms']),
    measuredRow(sandbox),
    measuredRow(echo),
    '',
    `sandbox / echo req/s     ${(ratio * 100).toFixed(1)} %   target >= ${TARGET_THROUGHPUT_RATIO * 100} %: ${verdict(ratio >= TARGET_THROUGHPUT_RATIO)}`,
    `sandbox p99              ${sandbox.p99.toFixed(2)} ms   target <= ${TARGET_P99_MS} ms: ${verdict(sandbox.p99 <= TARGET_P99_MS)}`,
    `each round's ratio       ${ratiosPerRound(sandboxRounds, echoRounds)}`,
    '',
    `load: autocannon, ${CONNECTIONS} connections, pipelining 1, ${WARM_UP_SECONDS} s warm-up each, then ${ROUNDS} rounds of ${ROUND_SECONDS} s, the two taking turns`,
    machine(),
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'enrichbridge-bench-'));
  const children: ChildProcess[] = [];
  try {
    const token = await createBenchToken(dataDir);

    const apiPort = await freePort();
    const api = await startBuiltServer({ PORT: String(apiPort), DATA_DIR: dataDir, LOG_LEVEL: 'info' });
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
      bodies: [AMANDA_TAYLOR],
    };
    const echoTarget: Target = {
      name: 'express + schema POST /echo',
      url: `http://127.0.0.1:${echoPort}/echo`,
      headers: { 'content-type': 'application/json' },
      bodies: [AMANDA_TAYLOR],
    };
    const matched = (body: unknown) =>
      typeof body === 'object' &&
      body !== null &&
      'household_matched' in body &&
      body.household_matched === true &&
      'career_matched' in body &&
      body.career_matched === true;
    await checkOnce(sandboxTarget, matched);
    await checkOnce(echoTarget, (body) => isDeepStrictEqual(body, JSON.parse(AMANDA_TAYLOR)));
    // What the baseline refuses, the server refuses too: the same schema.
    const refused = await fetch(echoTarget.url, { method: 'POST', headers: echoTarget.headers, body: JSON.stringify({ emails: 'not-a-list' }) });
    if (refused.status !== 400) throw new Error(`the echo server took a body the schema refuses (${refused.status})`);

    await loadWith(sandboxTarget, WARM_UP_SECONDS);
    await loadWith(echoTarget, WARM_UP_SECONDS);
    const [sandboxRounds, echoRounds] = await takeTurns(
      ROUNDS,
      () => measure(sandboxTarget, 0, ROUND_SECONDS),
      () => measure(echoTarget, 0, ROUND_SECONDS),
    );
    console.log(report(sandboxRounds, echoRounds));
  } finally {
    await Promise.all(children.map(stopChild));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error('bench failed:', error);
  process.exitCode = 1;
});
