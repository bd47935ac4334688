// `npm run profile:api`: where a request's CPU goes. Starts the server as production runs it (the bundle,
// npm start's flags) under `--cpu-prof`, loads POST /sandbox/v1 (Amanda Taylor) and POST /v1/ (a small
// generated snapshot's queries, on SQLite and then on PostgreSQL) with autocannon as bench:api does, stops it, and for each writes
// docs/performance/<endpoint>.cpuprofile's summary: self time by package or file, and a flame graph
// (docs/performance/<endpoint>.svg). Open a .cpuprofile itself in Chrome DevTools or speedscope; it is
// kept only with PROFILE_KEEP=folder (tens of megabytes).
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { buildBundles } from './build.ts';
import { TraceMap, originalPositionFor } from '@jridgewell/trace-mapping';
import { type CpuProfile, type Locate, flameGraphSvg, selfTimeBy } from './flame-graph.ts';
import { AMANDA_TAYLOR, CONNECTIONS, ROOT, type Target, cli, freePort, loadWith, stopChild, waitHealthy } from '../test/bench/bench-support.ts';

const SECONDS = 10;
/** The generated snapshot's size: PROFILE_PEOPLE=1000000 profiles production as bench:match measures it. */
const PEOPLE = Number(process.env.PROFILE_PEOPLE ?? '50000');
/** PROFILE_ONLY=production (or sandbox, production-postgres; comma-separated) profiles those alone. */
const ONLY = new Set((process.env.PROFILE_ONLY ?? 'sandbox,production,production-postgres').split(',').map((name) => name.trim()));
/** The PostgreSQL server the third profile makes a database on (dropped after); none there, it is skipped. */
const PROFILE_DATABASE = process.env.PROFILE_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const database = `enrichbridge_profile_${randomBytes(4).toString('hex')}`;
const OUT = path.join(ROOT, 'docs', 'performance');

/** Our frames by their source file, read through the bundle's source map. */
function bundleLocator(): Locate {
  const bundle = path.join(ROOT, 'dist', 'server.mjs');
  const map = new TraceMap(readFileSync(`${bundle}.map`, 'utf8'));
  return (frame) => {
    if (!frame.url.endsWith('/dist/server.mjs')) return null;
    const { source } = originalPositionFor(map, { line: frame.lineNumber + 1, column: frame.columnNumber });
    return source === null ? null : path.relative(ROOT, path.resolve(path.dirname(bundle), source));
  };
}

async function profiled(name: string, env: Record<string, string>, target: (port: number) => Target): Promise<void> {
  const profileDir = mkdtempSync(path.join(os.tmpdir(), 'enrichbridge-profile-'));
  const port = await freePort();
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => key !== 'NODE_ENV'));
  const server = spawn(process.execPath, ['--max-semi-space-size=32', '--cpu-prof', `--cpu-prof-dir=${profileDir}`, 'dist/server.mjs'], {
    cwd: ROOT,
    env: { ...inherited, ...env, PORT: String(port), LOG_LEVEL: 'info', WORKER_CONCURRENCY: '0' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    await waitHealthy('server', server, `http://127.0.0.1:${port}/healthz`);
    const result = await loadWith(target(port), SECONDS);
    console.log(`${name}: ${result.requests.total.toLocaleString('en-US')} requests in ${SECONDS} s, ${CONNECTIONS} connections`);
  } finally {
    // The profile is written as the process exits.
    await stopChild(server);
  }
  const file = readdirSync(profileDir).find((entry) => entry.endsWith('.cpuprofile'));
  if (file === undefined) throw new Error(`${name}: the server wrote no profile`);
  const profile = JSON.parse(readFileSync(path.join(profileDir, file), 'utf8')) as CpuProfile;
  // PROFILE_KEEP=folder keeps the .cpuprofile files (for DevTools or speedscope).
  if (process.env.PROFILE_KEEP !== undefined) {
    mkdirSync(process.env.PROFILE_KEEP, { recursive: true });
    copyFileSync(path.join(profileDir, file), path.join(process.env.PROFILE_KEEP, `${name}.cpuprofile`));
  }
  rmSync(profileDir, { recursive: true, force: true });
  const locate = bundleLocator();
  writeFileSync(path.join(OUT, `${name}.svg`), flameGraphSvg(profile, `${name}: ${SECONDS} s under autocannon, ${CONNECTIONS} connections`, locate));
  const rows = selfTimeBy(profile, ROOT, locate);
  const busy = rows.reduce((sum, [, ms]) => sum + ms, 0);
  console.log(`self time while busy (${busy.toFixed(0)} ms), by package or file:`);
  for (const [where, ms] of rows.slice(0, 20)) console.log(`  ${ms.toFixed(0).padStart(7)} ms ${((ms / busy) * 100).toFixed(1).padStart(5)} %  ${where}`);
  console.log(`  flame graph: docs/performance/${name}.svg\n`);
}

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  await buildBundles();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'enrichbridge-profile-data-'));
  try {
    const env = { DATA_DIR: dataDir };
    await cli(['accounts', 'create', 'profile', '--career-intelligence', '--rate-limit', '1000000', '--quota', '100000000'], env);
    const sandboxToken = (await cli(['tokens', 'create', 'profile', '--env', 'sandbox'], env)).trim();
    const productionToken = (await cli(['tokens', 'create', 'profile', '--env', 'production'], env)).trim();
    const source = path.join(dataDir, 'snapshot');
    await cli(['data', 'generate', source, '--people', String(PEOPLE), '--queries', '2000'], env);
    await cli(['data', 'load', source], env);
    const queries = readFileSync(path.join(source, 'queries.jsonl'), 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.stringify((JSON.parse(line) as { request: unknown }).request));

    if (ONLY.has('sandbox'))
      await profiled('sandbox', env, (port) => ({
        name: 'POST /sandbox/v1',
        url: `http://127.0.0.1:${port}/sandbox/v1`,
        headers: { 'content-type': 'application/json', 'x-wf-auth-token': sandboxToken },
        bodies: [AMANDA_TAYLOR],
      }));
    if (ONLY.has('production'))
      await profiled('production', env, (port) => ({
        name: 'POST /v1/',
        url: `http://127.0.0.1:${port}/v1/`,
        headers: { 'content-type': 'application/json', 'x-wf-auth-token': productionToken },
        bodies: queries,
      }));

    // The same snapshot and queries on PostgreSQL: the server's share of a request there.
    if (!ONLY.has('production-postgres')) return;
    const admin = new pg.Client({ connectionString: PROFILE_DATABASE });
    try {
      await admin.connect();
      await admin.query(`CREATE DATABASE ${database}`);
    } catch (error) {
      await admin.end().catch(() => undefined);
      console.log(`production-postgres: skipped, no PostgreSQL at ${PROFILE_DATABASE} (${(error as Error).message})`);
      return;
    }
    const url = new URL(PROFILE_DATABASE);
    url.pathname = `/${database}`;
    const pgEnv = { DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'enrichbridge-profile-pg-')), DATABASE_URL: url.toString() };
    try {
      await cli(['accounts', 'create', 'profile', '--career-intelligence', '--rate-limit', '1000000', '--quota', '100000000'], pgEnv);
      const pgToken = (await cli(['tokens', 'create', 'profile', '--env', 'production'], pgEnv)).trim();
      await cli(['data', 'load', source], pgEnv);
      await profiled('production-postgres', pgEnv, (port) => ({
        name: 'POST /v1/ on PostgreSQL',
        url: `http://127.0.0.1:${port}/v1/`,
        headers: { 'content-type': 'application/json', 'x-wf-auth-token': pgToken },
        bodies: queries,
      }));
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.end();
      rmSync(pgEnv.DATA_DIR, { recursive: true, force: true });
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error('profile failed:', error);
  process.exitCode = 1;
});
