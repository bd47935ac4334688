// A serving process's SQLite store checkpoints its write-ahead log on a thread of its own, not in the
// commit that takes the log past 1,000 pages on the event loop: the real store on a real file, the
// thread's work seen where it lands (the database file grows while the log's pages are copied in).
import { existsSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { CheckpointThread, WRITER_CHECKPOINT_PAGES } from '../../core/storage/sqlite-checkpoints.ts';
import { type OpenedStore, openSqliteStore } from '../../core/storage/sqlite.ts';
import { tempDir } from '../support/harness.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A store on a new file; `close` closes it before the cleanup would. */
async function openStore(options: { thread: boolean }): Promise<{ opened: OpenedStore; file: string; close: () => Promise<void> }> {
  const dir = tempDir('enrichbridge-checkpoints-');
  const file = path.join(dir, 'enrichbridge.db');
  const opened = await openSqliteStore(file, options.thread ? { checkpointThread: { everyMs: 20 } } : {});
  let open = true;
  const close = async () => {
    if (!open) return;
    open = false;
    await opened.store.close();
  };
  cleanups.push(async () => {
    await close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { opened, file, close };
}

/** Rows of 100 KB each, in their own table: `megabytes` MB through the store's own connection. */
async function write(opened: OpenedStore, megabytes: number): Promise<void> {
  await sql`CREATE TABLE IF NOT EXISTS filler (body TEXT NOT NULL)`.execute(opened.db);
  for (let i = 0; i < megabytes * 10; i += 1) {
    await sql`INSERT INTO filler (body) VALUES (${`${i}`.padEnd(100_000, 'x')})`.execute(opened.db);
  }
}

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return true;
}

describe('SQLite checkpoints off the event loop', () => {
  it('a serving store’s commits leave the checkpoint to the thread: they checkpoint themselves only past the fallback', async () => {
    const { opened } = await openStore({ thread: true });
    const { rows } = await sql<{ wal_autocheckpoint: number }>`PRAGMA wal_autocheckpoint`.execute(opened.db);
    expect(rows[0]?.wal_autocheckpoint).toBe(WRITER_CHECKPOINT_PAGES);
  });

  it('a store opened without the thread checkpoints in its commits, as SQLite does by default', async () => {
    const { opened } = await openStore({ thread: false });
    const { rows } = await sql<{ wal_autocheckpoint: number }>`PRAGMA wal_autocheckpoint`.execute(opened.db);
    expect(rows[0]?.wal_autocheckpoint).toBe(1000);
  });

  it('the thread copies the log into the database file while the store writes, far below the fallback', async () => {
    const { opened, file } = await openStore({ thread: true });
    const before = statSync(file).size;
    // 8 MB: 2,000 pages, a quarter of the writers' own limit, so only the thread can have copied them.
    await write(opened, 8);
    expect(await until(() => statSync(file).size - before >= 8_000_000)).toBe(true);
  });

  it('closing the store stops the thread before the connections close: the last one removes the log', async () => {
    const { opened, file, close } = await openStore({ thread: true });
    await write(opened, 1);
    expect(existsSync(`${file}-wal`)).toBe(true);
    await close();
    expect(existsSync(`${file}-wal`)).toBe(false);
  });

  it('a thread that cannot open its file reports why, and stops all the same', async () => {
    const dir = tempDir('enrichbridge-checkpoints-');
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const errors: string[] = [];
    const thread = CheckpointThread.start(path.join(dir, 'missing.db'), { onError: (message) => errors.push(message) });
    expect(await until(() => errors.length > 0)).toBe(true);
    expect(errors[0]).toMatch(/missing\.db|unable to open|does not exist/i);
    await thread.stop();
  });
});
