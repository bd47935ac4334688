// The weekly refresh as operators run it, across processes: a server answering production requests
// while `data load` and `data rollback` switch snapshots under it, with no failed or mixed answer:
// snapshots as SQLite files and, when the run has PostgreSQL, as schemas. What a test only sets up or
// reads back (accounts, a first snapshot, the snapshot list) is done in-process on the same folder: each
// CLI start costs seconds of CPU. Each test has a data folder of its own; the killed-load tests run
// side by side.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { type TestContext, afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, issueToken } from '../../core/accounts/admin.ts';
import { generateSnapshot } from '../../core/snapshot/generator/generate.ts';
import { loadSnapshot } from '../../core/snapshot/storage/loader.ts';
import { loadConfig } from '../../server/config.ts';
import { openConfiguredStorage, openSnapshotStorage } from '../../server/runtime.ts';
import { post, tempDir } from '../support/harness.ts';
import { type Proc, REPO, cli, killProcess, startProcess, startServerProcess } from '../support/processes.ts';
import { sleep } from '../support/requests.ts';
import { TEST_DATABASES } from '../support/databases.ts';
import { household, person, writeSnapshot } from '../support/snapshot-fixture.ts';

/** Registers the processes a test starts, to be stopped when it finishes (whichever tests run beside it). */
function stoppedAtEnd({ onTestFinished }: TestContext): (proc: Proc) => Proc {
  const running: Proc[] = [];
  onTestFinished(async () => {
    await Promise.all(running.map((proc) => proc.stop()));
  });
  return (proc) => {
    running.push(proc);
    return proc;
  };
}

const PEOPLE = 200;
/** The same people in every version; only net worth tells the versions apart. */
function version(name: string, netWorthBase: number, dir: string): string {
  const households = Array.from({ length: PEOPLE }, (_, i) =>
    household([{ address: `${i + 1} Oak Street`, zipcode: '30301' }], { windfall_id: i.toString(16).padStart(32, '0'), net_worth: netWorthBase + i * 100_000 }),
  );
  const people = households.map((h, i) => person(`p${i}`, 'Pat', `Doe${i}`, h, { emails: [`pat${i}@example.com`] }));
  return writeSnapshot(dir, { version: name, households, people });
}
const EXPECTED_BASE: Record<string, number> = { 'week-1': 1_000_000, 'week-2': 50_000_000 };

/** Opens the folder (and database) `env` names in-process, as the CLI would with the same environment. */
async function withFolder<T>(
  env: Record<string, string>,
  run: (opened: Awaited<ReturnType<typeof openConfiguredStorage>>, config: ReturnType<typeof loadConfig>) => Promise<T>,
): Promise<T> {
  const config = loadConfig({ ...process.env, ...env });
  const opened = await openConfiguredStorage(config);
  try {
    return await run(opened, config);
  } finally {
    await opened.store.close();
  }
}

// One at a time: side by side, each one's load would slow the other's `data load` and `data rollback`
// and so last longer, for no time saved.
describe('Snapshot refresh under load', () => {
  it.for(TEST_DATABASES)('switches atomically on $name: every response is 200 and consistent with exactly one snapshot version', async (database, context) => {
    const track = stoppedAtEnd(context);
    const root = tempDir();
    const env: Record<string, string> = { DATA_DIR: path.join(root, 'data') };
    if (database.name === 'PostgreSQL') env.DATABASE_URL = await database.fresh();
    const week1 = version('week-1', EXPECTED_BASE['week-1'] ?? 0, path.join(root, 'week-1'));
    const week2 = version('week-2', EXPECTED_BASE['week-2'] ?? 0, path.join(root, 'week-2'));
    // Set up in-process, as `accounts create load --rate-limit 100000 --quota 1000000`, `tokens create load
    // --env production` and `data load week-1` would: the switches under test are the CLI's, below.
    const token = await withFolder(env, async ({ store }, config) => {
      await createAccount(store, 'load', { rateLimit: 100_000, quotaLimit: 1_000_000 });
      const issued = await issueToken(store, 'load', 'production');
      const snapshots = await openSnapshotStorage(config);
      try {
        await loadSnapshot(store, snapshots, week1);
      } finally {
        await snapshots.close();
      }
      return issued.token;
    });
    const { proc, url } = await startServerProcess(env, 'node');
    track(proc);

    const seen = new Map<string, number>();
    const failures: string[] = [];
    let stop = false;
    const worker = async (w: number) => {
      for (let n = 0; !stop; n += 1) {
        if (proc.child.exitCode !== null) return;
        const i = (w * 7919 + n * 31) % PEOPLE;
        const reply = await post(`${url}/v1/`, { emails: [`pat${i}@example.com`] }, { 'X-WF-Auth-Token': token });
        const versionSeen = reply.headers.get('x-data-version') ?? 'none';
        seen.set(versionSeen, (seen.get(versionSeen) ?? 0) + 1);
        const netWorth = (reply.body as { household?: { net_worth?: number } } | undefined)?.household?.net_worth;
        const expected = (EXPECTED_BASE[versionSeen] ?? Number.NaN) + i * 100_000;
        if (reply.status !== 200 || netWorth !== expected) failures.push(`${reply.status} ${versionSeen} person ${i}: ${reply.text.slice(0, 200)}`);
      }
    };
    const workers = Array.from({ length: 6 }, (_, w) => worker(w));
    const waitFor = async (name: string) => {
      const before = seen.get(name) ?? 0;
      const deadline = Date.now() + 10_000;
      while ((seen.get(name) ?? 0) < before + 50 && Date.now() < deadline) await sleep(50);
    };

    let afterRollback = 0;
    try {
      await waitFor('week-1');
      await cli(['data', 'load', week2], env);
      await waitFor('week-2');
      await cli(['data', 'rollback'], env);
      afterRollback = seen.get('week-1') ?? 0;
      await waitFor('week-1');
    } finally {
      stop = true;
      await Promise.all(workers);
    }

    expect(failures).toEqual([]);
    expect(seen.get('week-2') ?? 0).toBeGreaterThan(0);
    expect(seen.get('week-1') ?? 0).toBeGreaterThan(afterRollback);
    expect([...seen.keys()].sort()).toEqual(['week-1', 'week-2']);
  });
});

describe('A newcomer following the README', () => {
  it('generates a snapshot, loads it, and enriches a generated person through /v1/', async (context) => {
    const track = stoppedAtEnd(context);
    const root = tempDir();
    const env = { DATA_DIR: path.join(root, 'data') };
    const source = path.join(root, 'generated');
    // The operator's guide's steps (docs/operator-guide.md, Production data), those that do not need each
    // other's result side by side. `data generate` does not open the data folder, so `accounts create` is the first to (and makes its database) alone.
    await Promise.all([
      cli(['data', 'generate', source, '--people', '2000', '--seed', '7'], env),
      cli(['accounts', 'create', 'newcomer', '--career-intelligence'], env),
    ]);
    const [loaded, token] = await Promise.all([
      cli(['data', 'load', source], env),
      cli(['tokens', 'create', 'newcomer', '--env', 'production'], env).then((created) => created.stdout.trim()),
    ]);
    expect(loaded.stdout).toMatch(/^loaded 2026-11-16 .* 2,000 people/m);
    // `data status` only reads: the server starts beside it. Both settle before either is judged, so a
    // server that came up is stopped at the end whatever `data status` did.
    const [status, server] = await Promise.allSettled([cli(['data', 'status'], env), startServerProcess(env)]);
    if (server.status === 'fulfilled') track(server.value.proc);
    if (status.status === 'rejected') throw status.reason;
    if (server.status === 'rejected') throw server.reason;
    expect(status.value.stdout).toMatch(/^active: 2026-11-16 .* 2,000 people/m);
    const { url } = server.value;

    const first = JSON.parse(readFileSync(path.join(source, 'queries.jsonl'), 'utf8').split('\n')[0] ?? '{}');
    const reply = await post(`${url}/v1/`, first.request, { 'X-WF-Auth-Token': token });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('x-data-version')).toBe('2026-11-16');
    expect(reply.body).toMatchObject({ household_matched: true, household: { windfall_id: first.expected.windfall_id } });
  });
});

describe.concurrent('A killed data load', () => {
  /** The snapshot list `data status --json` prints, read in-process. */
  const status = (env: Record<string, string>) => withFolder(env, ({ store }) => store.listSnapshots());

  // One generated snapshot, big enough that a load still has seconds to go at its first tenth; every test
  // loads it into a data folder of its own and only reads it.
  let big = '';
  beforeAll(async () => {
    big = tempDir();
    await generateSnapshot(big, { people: 60_000 });
  });
  afterAll(() => {
    if (big !== '') rmSync(big, { recursive: true, force: true });
  });

  /** Starts `data load` on the big snapshot and SIGKILLs it once it has read a tenth. */
  async function killedLoad(env: Record<string, string>, track: (proc: Proc) => Proc): Promise<{ id: string; file: string }> {
    const load = track(startProcess(process.execPath, [path.join(REPO, 'bin/enrichbridge.js'), 'data', 'load', big], env));
    await load.waitFor(/load: [1-9]0%/);
    await killProcess(load);
    const entry = (await status(env)).find((s) => s.state === 'loading');
    expect(entry, 'the killed load left its entry').toBeDefined();
    const file = path.join(env.DATA_DIR ?? '', 'snapshots', entry?.location ?? '');
    expect(existsSync(file), 'and its partial file').toBe(true);
    return { id: entry?.id ?? '', file };
  }

  it('is cleaned up at server start, once its loader is known dead', async (context) => {
    const track = stoppedAtEnd(context);
    const root = tempDir();
    const env = { DATA_DIR: path.join(root, 'data') };
    const killed = await killedLoad(env, track);

    const proc = track((await startServerProcess(env, 'node')).proc);
    const line = (await proc.waitFor(/\{[^\n]*cleaned up after data loads that were killed[^\n]*\}/))[0];
    expect(JSON.parse(line)).toMatchObject({ level: 40, abandoned: [killed.id] });
    expect((await status(env)).find((s) => s.id === killed.id)).toMatchObject({ state: 'failed', failure: expect.stringMatching(/died before finishing/) });
    expect(existsSync(killed.file)).toBe(false);
  });

  it('is cleaned up by the next load, which then succeeds', async (context) => {
    const track = stoppedAtEnd(context);
    const root = tempDir();
    const env = { DATA_DIR: path.join(root, 'data') };
    const killed = await killedLoad(env, track);

    await cli(['data', 'load', version('week-2', 1_000_000, path.join(root, 'week-2'))], env);
    const after = await status(env);
    // Marked failed, then pruned with the other failed loads once the new one is active.
    expect(after.filter((s) => s.state === 'loading')).toEqual([]);
    expect(after.filter((s) => s.state === 'ready').map((s) => s.id)).toHaveLength(1);
    expect(existsSync(killed.file)).toBe(false);
  });

  it('a load still running is not touched by a server starting beside it', async (context) => {
    const track = stoppedAtEnd(context);
    const root = tempDir();
    const env = { DATA_DIR: path.join(root, 'data') };
    const load = track(startProcess(process.execPath, [path.join(REPO, 'bin/enrichbridge.js'), 'data', 'load', big], env));
    await load.waitFor(/load: [1-9]0%/);
    // The loader is held (SIGSTOP: alive, mid-load) until the server is up, so the server's start-up
    // clean-up surely meets the load unfinished, however fast the load or slow the server; then it goes on.
    const signalLoader = (signal: NodeJS.Signals) => {
      if (load.child.pid === undefined || load.child.exitCode !== null) return;
      try {
        process.kill(-load.child.pid, signal);
      } catch {
        // already gone: the checks below say so
      }
    };
    signalLoader('SIGSTOP');
    let server: Proc;
    let loadingWhenUp: unknown[];
    try {
      server = track((await startServerProcess(env, 'node')).proc);
      loadingWhenUp = (await status(env)).filter((s) => s.state === 'loading');
    } finally {
      signalLoader('SIGCONT');
    }
    expect(loadingWhenUp, 'the server started while the load was under way').toHaveLength(1);
    expect(await load.exited()).toBe(0);
    expect(server.output()).not.toMatch(/cleaned up after data loads/);
    expect((await status(env)).filter((s) => s.state === 'ready')).toHaveLength(1);
  });
});
