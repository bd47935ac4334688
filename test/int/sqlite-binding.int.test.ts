// The SQLite binding each Node.js line loads (core/storage/better-sqlite3.ts). On Node 24,
// better-sqlite3 12 aborts a process that ends with a database object still alive: this suite runs
// under every line CI covers (.ci/run), so each line proves its own binding.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { BETTER_SQLITE3_PACKAGE } from '../../core/storage/better-sqlite3.ts';
import { tempDir } from '../support/harness.ts';

const execFileAsync = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');

describe('the SQLite binding', () => {
  it('is better-sqlite3 12 on Node 20 and better-sqlite3 13 on Node 22 and later', () => {
    const major = Number(process.versions.node.split('.')[0]);
    expect(BETTER_SQLITE3_PACKAGE).toBe(major >= 22 ? 'better-sqlite3-n22' : 'better-sqlite3');
  });

  it('a process that opened and closed its store a dozen times exits 0 (better-sqlite3 12 aborts there on Node 24)', async () => {
    const dir = tempDir();
    // Closed databases left for the collector: on Node 24, better-sqlite3 12 destroys them while Node
    // tears the process down and aborts (exit 134), as the vitest processes of this suite did.
    const script = [
      "const { openStorage } = await import('./bridge/storage.ts');",
      'for (let i = 0; i < 12; i += 1) {',
      `  const opened = await openStorage(${JSON.stringify(dir)} + '/eb-' + i + '.db');`,
      "  await opened.queue.enqueue({ installationId: 'i1', kind: 'enrich', payload: {}, dedupeKey: 'k' });",
      '  await opened.store.close();',
      '}',
      "process.stdout.write('closed');",
    ].join('\n');
    const { stdout } = await execFileAsync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: ROOT });
    expect(stdout).toBe('closed');
  });
});
