// The PostgreSQL adapter of the storage port (DATABASE_URL=postgres://…): the same Kysely store and
// the same migrations as SQLite, over a node-postgres pool, for several instances sharing one state.
// Every statement the store runs is one both dialects accept; what differs is said here and in the
// job queue's claim (connectors/pipeline/kysely-job-queue.ts).
import { type Migration, Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { KyselyStore } from './kysely-store.ts';
import { type Database as Tables } from './schema.ts';
import { migrateToLatest, type OpenedStore } from './sqlite.ts';

/** A DATABASE_URL that names PostgreSQL (anything else is a path to a SQLite file). */
export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

export interface PostgresOptions {
  /** Connections per process (default 10): each instance holds at most this many. */
  readonly poolSize?: number;
  /** Migrations of the layers above (the pipeline's tables), run with the service's own. */
  readonly migrations?: Readonly<Record<string, Migration>>;
  /** A statement that runs longer is cancelled by the server (default 30 s): nothing here should. */
  readonly statementTimeoutMs?: number;
  /** What else closes with the store (the layers above: the job listener). */
  readonly beforeClose?: () => Promise<void>;
}

/** Connecting gives up after this long: a database that does not answer is an error, not a hang. */
const CONNECT_TIMEOUT_MS = 5_000;

/**
 * The pool every adapter of a process shares. `int8` (what COUNT(*) and BIGINT return) stays a string
 * as node-postgres gives it: the store turns each count into a number where it reads it.
 */
export function postgresPool(url: string, options: Pick<PostgresOptions, 'poolSize' | 'statementTimeoutMs'> = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: 30_000,
    statement_timeout: options.statementTimeoutMs ?? 30_000,
    application_name: 'enrichbridge',
  });
  // An idle connection the server closed (a restart, a failover) must not crash the process: the pool
  // drops it and the next query opens another.
  pool.on('error', () => undefined);
  return pool;
}

export interface OpenedPostgresStore extends OpenedStore {
  readonly pool: pg.Pool;
}

/** Opens the store on PostgreSQL, migrated to the latest version (several instances may start at once: Kysely's migrator takes an advisory lock). */
export async function openPostgresStore(url: string, options: PostgresOptions = {}): Promise<OpenedPostgresStore> {
  const pool = postgresPool(url, options);
  const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
  try {
    const { rows } = await sql<{ schema: string }>`SELECT current_schema() AS schema`.execute(db);
    const schema = rows[0]?.schema;
    if (schema === undefined) throw new Error('the database has no schema to create tables in (search_path)');
    await migrateToLatest(db, options.migrations, { migrationTableSchema: schema });
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return { store: new KyselyStore(db, options.beforeClose), db, pool };
}
