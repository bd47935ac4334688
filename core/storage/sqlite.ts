// The SQLite adapter of the storage port: one WAL-mode file in the data folder, shared safely by the
// server and CLI processes, migrated to the latest version on open.
import Database from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import { KyselyStore } from './kysely-store.ts';
import { type Database as Tables, migrationProvider } from './schema.ts';

export const SQLITE_FILE_NAME = 'enrichbridge.db';

export interface OpenedStore {
  readonly store: KyselyStore;
}

export async function migrateToLatest(db: Kysely<Tables>): Promise<void> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error } = await migrator.migrateToLatest();
  if (error !== undefined) {
    throw new Error('database migration failed', { cause: error });
  }
}

export async function openSqliteStore(file: string): Promise<OpenedStore> {
  const sqlite = new Database(file);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  // The CLI and the server write the same file; wait for the other's write lock instead of failing.
  sqlite.pragma('busy_timeout = 5000');
  const db = new Kysely<Tables>({ dialect: new SqliteDialect({ database: sqlite }) });
  await migrateToLatest(db);
  return { store: new KyselyStore(db) };
}
