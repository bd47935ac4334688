// The SQLite adapter of the storage port: one WAL-mode file in the data folder, shared safely by the
// server and CLI processes, migrated to the latest version on open.
import Database from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import { KyselyStore } from './kysely-store.ts';
import type { QuotaTake } from './port.ts';
import { type Database as Tables, migrationProvider } from './schema.ts';

export const SQLITE_FILE_NAME = 'enrichbridge.db';

export interface OpenedStore {
  readonly store: KyselyStore;
}

/**
 * The Kysely store with its hottest statement, the quota take of every production request, run as
 * a prepared statement on a connection of its own: building and compiling the query through Kysely
 * cost about 45 µs a request, the prepared statement about 10 µs. Same SQL, same atomic guarantee.
 */
class SqliteStore extends KyselyStore {
  private readonly take: Database.Statement<[{ token: string; period: string; limit: number }], { used: number }>;

  constructor(
    db: Kysely<Tables>,
    private readonly quotaConnection: Database.Database,
  ) {
    super(db);
    this.take = quotaConnection.prepare(
      `INSERT INTO quota_usage (token_id, period_key, used) VALUES (@token, @period, 1)
       ON CONFLICT (token_id, period_key) DO UPDATE SET used = quota_usage.used + 1 WHERE quota_usage.used < @limit
       RETURNING used`,
    );
  }

  override async takeQuota(tokenId: string, periodKey: string, limit: number): Promise<QuotaTake> {
    if (limit <= 0) return { granted: false, used: await this.quotaUsed(tokenId, periodKey) };
    // all(), not get(): get() leaves a RETURNING statement unfinished, and an unfinished statement
    // keeps SQLite from ever restarting the WAL, which then grows by a page a request.
    const [taken] = this.take.all({ token: tokenId, period: periodKey, limit });
    if (taken !== undefined) return { granted: true, used: taken.used };
    return { granted: false, used: await this.quotaUsed(tokenId, periodKey) };
  }

  override async close(): Promise<void> {
    await super.close();
    this.quotaConnection.close();
  }
}

function connect(file: string): Database.Database {
  const sqlite = new Database(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  // The CLI and the server write the same file; wait for the other's write lock instead of failing.
  sqlite.pragma('busy_timeout = 5000');
  return sqlite;
}

export async function migrateToLatest(db: Kysely<Tables>): Promise<void> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error } = await migrator.migrateToLatest();
  if (error !== undefined) {
    throw new Error('database migration failed', { cause: error });
  }
}

export async function openSqliteStore(file: string): Promise<OpenedStore> {
  const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: connect(file) }) });
  await migrateToLatest(db);
  return { store: new SqliteStore(db, connect(file)) };
}
