// The SQLite adapter of the storage port: one WAL-mode file in the data folder, shared safely by the
// server and CLI processes, migrated to the latest version on open.
import Database, { type BetterSqlite3 } from './better-sqlite3.ts';
import { Kysely, type Migration, Migrator, type QueryExecutorProvider, SqliteAdapter, SqliteDialect, sql } from 'kysely';
import { ensurePrivateFile } from './data-folder.ts';
import { isDatabaseBusy } from './errors.ts';
import { EventLoopSlices } from './event-loop-slices.ts';
import { cachingStatements } from './statement-cache.ts';
import { KyselyStore } from './kysely-store.ts';
import { CheckpointThread, type CheckpointThreadOptions, WAL_SIZE_LIMIT_BYTES, WRITER_CHECKPOINT_PAGES } from './sqlite-checkpoints.ts';
import type { QuotaTake } from './port.ts';
import { CORE_MIGRATIONS, type Database as Tables } from './schema.ts';

export const SQLITE_FILE_NAME = 'enrichbridge.db';

/**
 * How long a statement waits for another connection's write lock. better-sqlite3 waits synchronously,
 * so in a server this is time the whole event loop stands still: the server and its workers give up
 * after a few tens of milliseconds and retry asynchronously (or answer 503). A one-shot CLI command
 * has nothing else to serve and keeps the long wait.
 */
export const DEFAULT_BUSY_TIMEOUT_MS = 5_000;
export const SERVER_BUSY_TIMEOUT_MS = 50;
/** The quota take's asynchronous retries while the file is locked: about 0.3 s in all, then 503. */
const QUOTA_BUSY_RETRY_MS = [10, 20, 40, 80, 160] as const;

export interface OpenedStore {
  readonly store: KyselyStore;
  /**
   * The database itself, for the adapters of the layers above core, whose tables live in the same file
   * (bridge/storage.ts). Nothing else takes it.
   */
  readonly db: Kysely<Tables>;
}

interface PendingTake {
  readonly params: { token: string; period: string; limit: number };
  readonly resolve: (used: number | undefined) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * The Kysely store with its hottest statement, the quota take of every production request, run as
 * a prepared statement on a connection of its own, and group-committed: the takes that arrive in one
 * turn of the event loop run in one transaction, so concurrent requests share one WAL commit instead
 * of paying for one each. Each take keeps its own `used < limit` guard, so the atomic guarantee is
 * the statement's, as before. (Through Kysely a take cost about 45 µs; alone, ~10 µs in a loop but
 * several times that between HTTP requests; grouped, a fraction.)
 */
class SqliteStore extends KyselyStore {
  private readonly take: BetterSqlite3.Statement<[{ token: string; period: string; limit: number }], { used: number }>;
  private readonly takeAll: (batch: readonly PendingTake[]) => (number | undefined)[];
  private pending: PendingTake[] = [];

  constructor(
    db: Kysely<Tables>,
    private readonly quotaConnection: BetterSqlite3.Database,
    private readonly checkpoints: CheckpointThread | null = null,
  ) {
    super(db);
    this.take = quotaConnection.prepare(
      `INSERT INTO quota_usage (token_id, period_key, used) VALUES (@token, @period, 1)
       ON CONFLICT (token_id, period_key) DO UPDATE SET used = quota_usage.used + 1 WHERE quota_usage.used < @limit
       RETURNING used`,
    );
    // all(), not get(): get() leaves a RETURNING statement unfinished, and an unfinished statement
    // keeps SQLite from ever restarting the WAL, which then grows by a page a request.
    this.takeAll = quotaConnection.transaction((batch: readonly PendingTake[]) => batch.map((take) => this.take.all(take.params)[0]?.used));
  }

  override async takeQuota(tokenId: string, periodKey: string, limit: number): Promise<QuotaTake> {
    if (limit <= 0) return { granted: false, used: await this.quotaUsed(tokenId, periodKey) };
    const used = await new Promise<number | undefined>((resolve, reject) => {
      if (this.pending.length === 0) setImmediate(() => this.flush());
      this.pending.push({ params: { token: tokenId, period: periodKey, limit }, resolve, reject });
    });
    if (used !== undefined) return { granted: true, used };
    return { granted: false, used: await this.quotaUsed(tokenId, periodKey) };
  }

  private flush(batch: PendingTake[] = this.takeBatch(), attempt = 0): void {
    try {
      const results = this.takeAll(batch);
      batch.forEach((take, i) => take.resolve(results[i]));
    } catch (error) {
      // Locked by another connection: the transaction rolled back whole, so running it again later
      // is safe. Waiting off the event loop lets the holder (maybe this process) finish meanwhile.
      const delay = QUOTA_BUSY_RETRY_MS[attempt];
      if (isDatabaseBusy(error) && delay !== undefined) {
        setTimeout(() => this.flush(batch, attempt + 1), delay);
        return;
      }
      for (const take of batch) take.reject(error);
    }
  }

  private takeBatch(): PendingTake[] {
    const batch = this.pending;
    this.pending = [];
    return batch;
  }

  override async close(): Promise<void> {
    // The thread first: the last connection to close checkpoints what is left and removes the log.
    await this.checkpoints?.stop();
    await super.close();
    this.quotaConnection.close();
  }
}

function connect(file: string, busyTimeoutMs: number): BetterSqlite3.Database {
  const sqlite = new Database(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  // Erased means gone from the file too: SQLite overwrites deleted content with zeros (cells freed in a
  // page, pages put on the free list), so a deleted row does not linger readable in free space. The WAL
  // still holds the pages as they were until a checkpoint: see checkpointAfterErasure.
  sqlite.pragma('secure_delete = ON');
  // The CLI and the server write the same file; wait a while for the other's write lock instead of failing.
  sqlite.pragma(`busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
  return sqlite;
}

/** A checkpoint's retries while another connection reads an older snapshot: about 0.4 s in all, off the event loop. */
const CHECKPOINT_BUSY_RETRY_MS = [20, 80, 320] as const;

/** What a checkpoint after an erasure came to: the WAL emptied, held back by a reader, or not SQLite (nothing to do). */
export type ErasureCheckpoint = 'truncated' | 'busy' | 'not-sqlite';

/**
 * After an erasure committed, on SQLite: copies the WAL into the database file and truncates the WAL to
 * zero bytes (wal_checkpoint(TRUNCATE)). secure_delete zeroes the deleted rows in their pages, but the
 * WAL's earlier frames hold those pages as they were, readable until the WAL is emptied. A connection
 * of another process reading an older snapshot holds the checkpoint back: it is tried again a few
 * times, waiting off the event loop, and then reported as 'busy' rather than failing the erasure
 * (the next complete checkpoint, or the last connection's close, empties the WAL). PostgreSQL keeps
 * no such file of ours: 'not-sqlite' (what VACUUM does there is in the operator's guide).
 */
export async function checkpointAfterErasure(db: QueryExecutorProvider): Promise<ErasureCheckpoint> {
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) return 'not-sqlite';
  for (let attempt = 0; ; attempt += 1) {
    let busy: boolean;
    try {
      const { rows } = await sql<{ busy: number }>`PRAGMA wal_checkpoint(TRUNCATE)`.execute(db);
      busy = rows[0]?.busy !== 0;
    } catch (error) {
      if (!isDatabaseBusy(error)) throw error;
      busy = true;
    }
    if (!busy) return 'truncated';
    const delay = CHECKPOINT_BUSY_RETRY_MS[attempt];
    if (delay === undefined) return 'busy';
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}

/**
 * Runs the service's migrations and the ones the layers above bring (the pipeline's), as one sequence
 * of names: a name may not be claimed twice.
 */
export async function migrateToLatest(
  db: Kysely<Tables>,
  more: Readonly<Record<string, Migration>> = {},
  options: { readonly migrationTableSchema?: string } = {},
): Promise<void> {
  const clash = Object.keys(more).find((name) => name in CORE_MIGRATIONS);
  if (clash !== undefined) throw new Error(`migration ${clash} is defined twice`);
  const migrations = { ...CORE_MIGRATIONS, ...more };
  // Unordered: migrations are numbered when a change starts and land in any order, so a database that
  // already ran a later number still takes an earlier one that landed after it.
  const migrator = new Migrator({
    db,
    provider: { getMigrations: () => Promise.resolve(migrations) },
    allowUnorderedMigrations: true,
    // PostgreSQL: the bookkeeping tables in the schema the data goes to, not whichever schema of the
    // database already has tables of that name.
    ...(options.migrationTableSchema === undefined ? {} : { migrationTableSchema: options.migrationTableSchema }),
  });
  const { error } = await migrator.migrateToLatest();
  if (error !== undefined) {
    throw new Error('database migration failed', { cause: error });
  }
}

export interface OpenOptions {
  readonly busyTimeoutMs?: number;
  /** Migrations of the layers above (the pipeline's tables), run with the service's own. */
  readonly migrations?: Readonly<Record<string, Migration>>;
  /**
   * A serving process's: the log is checkpointed by a thread of its own, not in the commit that takes
   * it past 1,000 pages on the event loop (sqlite-checkpoints.ts).
   */
  readonly checkpointThread?: CheckpointThreadOptions;
}

/** A writer that leaves checkpoints to the thread, checkpointing itself only past the fallback. */
function leaveCheckpointsToThread(connection: BetterSqlite3.Database): void {
  connection.pragma(`wal_autocheckpoint = ${WRITER_CHECKPOINT_PAGES}`);
  connection.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
}

export async function openSqliteStore(file: string, options: OpenOptions = {}): Promise<OpenedStore> {
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS;
  // SQLite creates a new file with the umask's mode and gives -wal and -shm the database's mode.
  ensurePrivateFile(file);
  const main = connect(file, DEFAULT_BUSY_TIMEOUT_MS);
  const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: cachingStatements(main) }), plugins: [new EventLoopSlices()] });
  // Migrating at start may wait the long time (nothing is served yet); serving may not.
  await migrateToLatest(db, options.migrations);
  main.pragma(`busy_timeout = ${Math.trunc(busyTimeoutMs)}`);
  const quotaConnection = connect(file, busyTimeoutMs);
  if (options.checkpointThread === undefined) return { store: new SqliteStore(db, quotaConnection), db };
  leaveCheckpointsToThread(main);
  leaveCheckpointsToThread(quotaConnection);
  return { store: new SqliteStore(db, quotaConnection, CheckpointThread.start(file, options.checkpointThread)), db };
}
