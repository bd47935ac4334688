// The data folder's modes tightened at every start (core/storage/data-folder.ts) while other processes
// use it: SQLite deletes a database's -wal and -shm files as its last connection closes, so a file
// listed a moment ago may be gone when its turn comes. That is skipped, never a failed start.
import { chmodSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { securePrivateFolder } from '../../core/storage/data-folder.ts';
import { tempDir } from '../support/harness.ts';

describe('tightening the data folder', () => {
  it('skips a file removed between the listing and its turn (a -shm file another process closed)', () => {
    const dir = tempDir('enrichbridge-private-folder-');
    writeFileSync(path.join(dir, 'enrichbridge.db'), '');
    chmodSync(path.join(dir, 'enrichbridge.db'), 0o644);
    // The listing names a -shm file that is gone by the time it is looked at.
    const list = (folder: string) => [...readdirSync(folder), ...(folder === dir ? ['enrichbridge.db-shm'] : [])];
    expect(securePrivateFolder(dir, { list })).toEqual(['enrichbridge.db']);
    expect(statSync(path.join(dir, 'enrichbridge.db')).mode & 0o777).toBe(0o600);
  });
});
