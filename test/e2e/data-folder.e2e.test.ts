// Files at rest: the data folder holds e-mails, phones and net worths, so its folders are 0700 and its
// files 0600 whatever the umask, as the CLI and the server create them, and a folder left looser by an
// older version is tightened at start, with a log line saying which paths were.
import { chmodSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../support/harness.ts';
import { type Proc, cli, startServerProcess } from '../support/processes.ts';
import { household, person, writeSnapshot } from '../support/snapshot-fixture.ts';

const running: Proc[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((proc) => proc.stop()));
});

const modeOf = (file: string) => (statSync(file).mode & 0o777).toString(8);

/** Every folder and file under `dir` (the folder itself included), relative, with its mode. */
function modes(dir: string): Record<string, string> {
  const out: Record<string, string> = { '.': modeOf(dir) };
  const walk = (current: string) => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const full = path.join(current, entry.name);
      out[path.relative(dir, full)] = modeOf(full);
      if (entry.isDirectory()) walk(full);
    }
  };
  walk(dir);
  return out;
}

function smallSnapshot(dir: string): string {
  const h = household([{ address: '1 Oak Street', zipcode: '30301' }], { windfall_id: '1'.padStart(32, '0') });
  return writeSnapshot(dir, { version: 'week-1', households: [h], people: [person('p1', 'Pat', 'Doe', h, { emails: ['pat@example.com'] })] });
}

describe('Files at rest', () => {
  it('creates the data folder 0700 and the database, its WAL and SHM, every snapshot and the key 0600, under the usual umask', async () => {
    const root = tempDir();
    const env = { DATA_DIR: path.join(root, 'data') };
    // The processes inherit this test runner's umask, normally 022: the modes below must not depend on it.
    await cli(['accounts', 'create', 'files'], env);
    await cli(['data', 'load', smallSnapshot(path.join(root, 'week-1'))], env);
    const { proc } = await startServerProcess(env, 'node');
    running.push(proc);
    await proc.waitFor(/"msg":"listening"/);

    const seen = modes(env.DATA_DIR);
    const names = Object.keys(seen);
    expect(names).toEqual(expect.arrayContaining(['.', 'snapshots', 'enrichbridge.db', 'enrichbridge.db-wal', 'enrichbridge.db-shm', 'secret.key']));
    expect(names.some((name) => name.startsWith('snapshots/') && name.endsWith('.db'))).toBe(true);
    for (const [name, mode] of Object.entries(seen)) {
      expect(mode, name).toBe(name === '.' || name === 'snapshots' ? '700' : '600');
    }
  });

  it('tightens an existing 0755 folder and its 0644 files at start, and says which in the log', async () => {
    const root = tempDir();
    const env = { DATA_DIR: path.join(root, 'data') };
    await cli(['accounts', 'create', 'files'], env);
    await cli(['data', 'load', smallSnapshot(path.join(root, 'week-1'))], env);
    // As an older version left it.
    chmodSync(env.DATA_DIR, 0o755);
    chmodSync(path.join(env.DATA_DIR, 'snapshots'), 0o755);
    chmodSync(path.join(env.DATA_DIR, 'enrichbridge.db'), 0o644);
    const snapshot = readdirSync(path.join(env.DATA_DIR, 'snapshots'))[0] ?? '';
    chmodSync(path.join(env.DATA_DIR, 'snapshots', snapshot), 0o644);
    mkdirSync(path.join(env.DATA_DIR, 'exports'), { mode: 0o755 });
    writeFileSync(path.join(env.DATA_DIR, 'exports', 'old.csv'), 'x', { mode: 0o664 });

    const { proc } = await startServerProcess(env, 'node');
    running.push(proc);
    await proc.waitFor(/"msg":"listening"/);

    const line = (await proc.waitFor(/\{[^\n]*tightened[^\n]*\}/))[0];
    const logged = JSON.parse(line) as { level: number; paths: string[] };
    expect(logged.level).toBe(40); // warn: an operator should know the folder was open
    expect(logged.paths.sort()).toEqual(['.', 'enrichbridge.db', 'exports', 'exports/old.csv', 'snapshots', `snapshots/${snapshot}`].sort());
    for (const [name, mode] of Object.entries(modes(env.DATA_DIR))) {
      expect(mode, name).toBe(['.', 'snapshots', 'exports'].includes(name) ? '700' : '600');
    }
  });
});
