// The pipeline's storage on the service's database: the SQLite file or the PostgreSQL database
// core/storage opens (one sequence of migrations), with the pipeline's migrations run beside the
// service's and its adapters (the job queue; the pipeline store and the rest through the bridge) over
// the same handle.
import type { Kysely } from 'kysely';
import { isPostgresUrl, openPostgresStore } from '../core/storage/postgres.ts';
import { type OpenOptions, openSqliteStore } from '../core/storage/sqlite.ts';
import type { KyselyStore } from '../core/storage/kysely-store.ts';
import type { JobQueue } from './job-queue.ts';
import { KyselyJobQueue } from './kysely-job-queue.ts';
import { postgresJobListener } from './job-notifications.ts';
import { DatabaseClock, HOST_CLOCK, type LeaseClock } from '../core/storage/database-clock.ts';
import { PIPELINE_MIGRATIONS, type PipelineDatabase, type PipelineTables } from './schema.ts';

export interface OpenedStorage {
  /** The service's store (accounts, tokens, quotas, snapshots). */
  readonly store: KyselyStore;
  /** The durable job queue. */
  readonly queue: JobQueue;
  /** The database as the pipeline's adapters see it: only the composition root hands it to them (createBridge). */
  readonly db: Kysely<PipelineDatabase>;
  /** The clock leases and claims are written on: the database's (PostgreSQL), or this host's (SQLite). */
  readonly clock: LeaseClock;
}

/**
 * Opens the database at `location`: a `postgres://` URL (DATABASE_URL), or else the path of a SQLite
 * file. `busyTimeoutMs` and `checkpointThread` are SQLite's; PostgreSQL waits on row locks, not on the
 * whole file, and checkpoints in a process of its own.
 */
export async function openStorage(location: string, options: Omit<OpenOptions, 'migrations'> & { readonly poolSize?: number } = {}): Promise<OpenedStorage> {
  if (isPostgresUrl(location)) {
    // Its own connection, LISTENing for every instance's enqueues; closed with the store.
    const listener = postgresJobListener(location);
    let clock: DatabaseClock | undefined;
    const { store, db } = await openPostgresStore(location, {
      migrations: PIPELINE_MIGRATIONS,
      beforeClose: async () => {
        clock?.stop();
        await listener.close();
      },
      ...(options.poolSize === undefined ? {} : { poolSize: options.poolSize }),
    });
    try {
      clock = DatabaseClock.postgres(db);
      await clock.start();
    } catch (error) {
      await store.close();
      throw error;
    }
    const pipelineDb = db.withTables<PipelineTables>();
    return { store, queue: new KyselyJobQueue(pipelineDb, { dialect: 'postgres', listener, clock }), db: pipelineDb, clock };
  }
  const { store, db } = await openSqliteStore(location, {
    ...(options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs }),
    ...(options.checkpointThread === undefined ? {} : { checkpointThread: options.checkpointThread }),
    migrations: PIPELINE_MIGRATIONS,
  });
  const pipelineDb = db.withTables<PipelineTables>();
  return { store, queue: new KyselyJobQueue(pipelineDb, { dialect: 'sqlite' }), db: pipelineDb, clock: HOST_CLOCK };
}
