// A registry and snapshot storage on each test database: SQLite files in a temporary folder, or
// snapshot schemas beside a fresh PostgreSQL schema (TEST_DATABASE_URL), as the runtime opens them.
import path from 'node:path';
import type { SnapshotStorage } from '../../core/snapshot/port.ts';
import { PostgresSnapshots } from '../../core/snapshot/storage/postgres-snapshot.ts';
import { SqliteSnapshots } from '../../core/snapshot/storage/sqlite-snapshot.ts';
import type { KyselyStore } from '../../core/storage/kysely-store.ts';
import { isPostgresUrl, openPostgresStore } from '../../core/storage/postgres.ts';
import { openSqliteStore } from '../../core/storage/sqlite.ts';
import type { TestDatabase } from './databases.ts';
import { tempDir } from './harness.ts';

export interface TestSnapshots {
  readonly store: KyselyStore;
  readonly storage: SnapshotStorage;
  /** The database's location: a SQLite file, or the PostgreSQL URL with its schema. */
  readonly location: string;
  /** Where snapshot files go on SQLite (and the sources of both). */
  readonly root: string;
  /** Another storage on the same database: another process's view. */
  another(): Promise<SnapshotStorage>;
  close(): Promise<void>;
}

export async function openTestSnapshots(database: TestDatabase): Promise<TestSnapshots> {
  const location = await database.fresh();
  const root = isPostgresUrl(location) ? tempDir() : path.dirname(location);
  const storageAt = async (): Promise<SnapshotStorage> =>
    isPostgresUrl(location) ? PostgresSnapshots.open(location, { poolSize: 4 }) : new SqliteSnapshots(root);
  const { store } = isPostgresUrl(location) ? await openPostgresStore(location) : await openSqliteStore(location);
  const storage = await storageAt();
  const others: SnapshotStorage[] = [];
  return {
    store,
    storage,
    location,
    root,
    another: async () => {
      const other = await storageAt();
      others.push(other);
      return other;
    },
    close: async () => {
      for (const other of others) await other.close();
      await storage.close();
      await store.close();
    },
  };
}
