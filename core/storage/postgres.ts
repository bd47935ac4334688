// The PostgreSQL adapter of the storage port (DATABASE_URL=postgres://…): the same Kysely store and
// the same migrations as SQLite, over a node-postgres pool, for several instances sharing one state.
// Every statement the store runs is one both dialects accept; what differs is said here and in the
// job queue's claim (bridge/kysely-job-queue.ts).
import {
  DEFAULT_MIGRATION_LOCK_TABLE,
  DEFAULT_MIGRATION_TABLE,
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type DatabaseMetadataOptions,
  Kysely,
  type Migration,
  PostgresAdapter,
  PostgresDialect,
  type SchemaMetadata,
  type TableMetadata,
  sql,
} from 'kysely';
import pg from 'pg';
import { KyselyStore } from './kysely-store.ts';
import type { QuotaTake } from './port.ts';
import { type Database as Tables } from './schema.ts';
import { migrateToLatest, type OpenedStore } from './sqlite.ts';

/** Whether a Kysely handle talks to PostgreSQL (else SQLite): for the few statements that differ. */
export function usesPostgres(db: Kysely<never> | { getExecutor(): { adapter: unknown } }): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/**
 * Serialises, on PostgreSQL, the transactions that touch one installation's erasures and saved
 * outcomes: under READ COMMITTED an erasure could otherwise commit between a save's check for it and
 * the save's write, and be undone. SQLite runs one writing transaction at a time already.
 */
export async function lockInstallationErasures(
  trx: Kysely<never> | { getExecutor(): { adapter: unknown } },
  installationIds: readonly string[],
): Promise<void> {
  if (!usesPostgres(trx)) return;
  for (const id of [...new Set(installationIds)].sort()) {
    await sql`SELECT pg_advisory_xact_lock(hashtext(${`eb-erasure:${id}`}))`.execute(trx as Kysely<never>);
  }
}

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
  /**
   * A query with no answer this long fails on the client (none by default): for a connection that went
   * silent without closing, which the server's own timeout cannot end and keepalive finds only in a minute.
   */
  readonly queryTimeoutMs?: number;
  /** What else closes with the store (the layers above: the job listener). */
  readonly beforeClose?: () => Promise<void>;
}

/** Connecting gives up after this long: a database that does not answer is an error, not a hang. */
const CONNECT_TIMEOUT_MS = 5_000;

/**
 * The pool every adapter of a process shares. `int8` (what COUNT(*) and BIGINT return) stays a string
 * as node-postgres gives it: the store turns each count into a number where it reads it.
 */
export function postgresPool(url: string, options: Pick<PostgresOptions, 'poolSize' | 'statementTimeoutMs' | 'queryTimeoutMs'> = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: 30_000,
    statement_timeout: options.statementTimeoutMs ?? 30_000,
    ...(options.queryTimeoutMs === undefined ? {} : { query_timeout: options.queryTimeoutMs }),
    application_name: 'enrichbridge',
    // A connection a peer dropped without a word (a failover, a cable) is found within a minute or so.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  // A connection the server or the network closed (a restart, a failover, a blip) must never crash the
  // process. The pool listens on its idle clients only (and drops them); a client a query or a
  // transaction holds reports the loss to its query, which fails (and the caller answers 503 or the job
  // is retried), and also emits 'error' on itself, which without a listener of its own would be thrown
  // as an uncaught exception between two statements of a transaction. The pool discards a client that
  // errored when it is released.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
  });
  return pool;
}

interface PendingTake {
  readonly tokenId: string;
  readonly periodKey: string;
  readonly limit: number;
  readonly resolve: (take: QuotaTake) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * The Kysely store with the quota take of every production request grouped: the takes that arrive in
 * one turn of the event loop go to PostgreSQL as one statement, n units per token and period at once,
 * each row guarded by `used + n <= limit` under its row lock, so the atomic guarantee stays the
 * statement's (several instances taking at once never exceed a limit). A group that would cross its
 * limit (the last units of a period) is taken one unit at a time instead, so every unit left is still
 * given out. One round trip for many requests, where SQLite's group commit saves fsyncs.
 */
class PostgresStore extends KyselyStore {
  private pending: PendingTake[] = [];

  constructor(
    private readonly pgDb: Kysely<Tables>,
    beforeClose?: () => Promise<void>,
  ) {
    super(pgDb, beforeClose);
  }

  override takeQuota(tokenId: string, periodKey: string, limit: number): Promise<QuotaTake> {
    if (limit <= 0) return super.takeQuota(tokenId, periodKey, limit);
    return new Promise((resolve, reject) => {
      if (this.pending.length === 0) setImmediate(() => void this.flush());
      this.pending.push({ tokenId, periodKey, limit, resolve, reject });
    });
  }

  private async flush(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    const groups = new Map<string, PendingTake[]>();
    for (const take of batch) {
      const key = `${take.tokenId}\u0000${take.periodKey}`;
      const group = groups.get(key);
      if (group === undefined) groups.set(key, [take]);
      else group.push(take);
    }
    const keys = [...groups.keys()].sort();
    const rows = keys.map((key) => {
      const takes = groups.get(key) ?? [];
      const first = takes[0];
      return { tokenId: first?.tokenId ?? '', periodKey: first?.periodKey ?? '', n: takes.length, limit: Math.min(...takes.map((t) => t.limit)) };
    });
    let taken: { token_id: string; period_key: string; used: number }[];
    try {
      // Rows in key order, so two instances' statements lock shared rows in the same order.
      // The statement's own transaction commits without waiting for its WAL to reach the disk
      // (set_config(..., true) is local to it): the row lock on a token's usage is held until the commit,
      // so every group of one token waited for the previous group's fsync. A crash of PostgreSQL within
      // a fraction of a second after a take may lose it: units answered and not counted, never counted
      // twice; SQLite's quota take (WAL, synchronous=NORMAL) is of the same kind on a power loss.
      const result = await sql<{ token_id: string; period_key: string; used: number }>`
        WITH req AS (
          SELECT * FROM unnest(${rows.map((r) => r.tokenId)}::text[], ${rows.map((r) => r.periodKey)}::text[], ${rows.map((r) => r.n)}::int[], ${rows.map((r) => r.limit)}::int[])
            AS r(token_id, period_key, n, lim)
        ),
        no_wait AS (SELECT set_config('synchronous_commit', 'off', true) AS setting)
        INSERT INTO quota_usage (token_id, period_key, used)
        SELECT token_id, period_key, n FROM req CROSS JOIN no_wait WHERE n <= lim ORDER BY token_id, period_key
        ON CONFLICT (token_id, period_key) DO UPDATE SET used = quota_usage.used + excluded.used
          WHERE quota_usage.used + excluded.used <= (SELECT lim FROM req WHERE req.token_id = quota_usage.token_id AND req.period_key = quota_usage.period_key)
        RETURNING token_id, period_key, used`.execute(this.pgDb);
      taken = result.rows;
    } catch (error) {
      // A deadlock with another instance's group, or a serialization failure: PostgreSQL rolled the
      // statement back whole, so each take alone instead. Anything else (the connection gone, the pool
      // exhausted) may or may not have committed: those requests fail rather than risk a second charge.
      const code = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
      if (code !== '40P01' && code !== '40001') {
        for (const take of batch) take.reject(error);
        return;
      }
      taken = [];
    }
    const done = new Set<string>();
    for (const row of taken) {
      const key = `${row.token_id}\u0000${row.period_key}`;
      const takes = groups.get(key) ?? [];
      const used = Number(row.used);
      takes.forEach((take, i) => take.resolve({ granted: true, used: used - takes.length + 1 + i }));
      done.add(key);
    }
    // The groups the statement did not take (they would cross their limit): a unit at a time, in order.
    for (const key of keys) {
      if (done.has(key)) continue;
      for (const take of groups.get(key) ?? []) {
        try {
          take.resolve(await super.takeQuota(take.tokenId, take.periodKey, take.limit));
        } catch (error) {
          take.reject(error);
        }
      }
    }
  }
}

/**
 * What Kysely's migrator asks of the database (does the migration table exist?), answered from the
 * service's own schema only, by object ids. Kysely's PostgreSQL introspector reads every schema of the
 * database and resolves each by name (has_schema_privilege, pg_get_serial_sequence), so a schema
 * dropped meanwhile (a snapshot's retention on another instance, a test's cleanup) failed a start
 * with 3F000 (test/int/postgres-introspection.int.test.ts).
 */
type IntrospectedDb = Parameters<PostgresDialect['createIntrospector']>[0];

class OwnSchemaIntrospector implements DatabaseIntrospector {
  constructor(private readonly db: IntrospectedDb) {}

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ name: string | null }>`SELECT current_schema() AS name`.execute(this.db);
    return rows.flatMap((row) => (row.name === null ? [] : [{ name: row.name }]));
  }

  async getTables(options: DatabaseMetadataOptions = { withInternalKyselyTables: false }): Promise<TableMetadata[]> {
    const { rows } = await sql<{
      table: string;
      kind: string;
      schema: string;
      column: string;
      not_null: boolean;
      has_default: boolean;
      type: string;
      type_schema: string;
    }>`SELECT c.relname AS table, c.relkind AS kind, n.nspname AS schema, a.attname AS column, a.attnotnull AS not_null,
         a.atthasdef AS has_default, t.typname AS type, tn.nspname AS type_schema
       FROM pg_catalog.pg_class c
       JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
       JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
       JOIN pg_catalog.pg_namespace tn ON tn.oid = t.typnamespace
       WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'v', 'p')
       ORDER BY c.relname, a.attnum`.execute(this.db);
    const internal = new Set([DEFAULT_MIGRATION_TABLE, DEFAULT_MIGRATION_LOCK_TABLE]);
    const tables = new Map<string, { name: string; isView: boolean; schema: string; columns: TableMetadata['columns'] }>();
    for (const row of rows) {
      if (!options.withInternalKyselyTables && internal.has(row.table)) continue;
      let table = tables.get(row.table);
      if (table === undefined) {
        table = { name: row.table, isView: row.kind === 'v', schema: row.schema, columns: [] };
        tables.set(row.table, table);
      }
      table.columns.push({
        name: row.column,
        dataType: row.type,
        dataTypeSchema: row.type_schema,
        isNullable: !row.not_null,
        // Nothing here reads it; telling would take pg_get_serial_sequence, which resolves names.
        isAutoIncrementing: false,
        hasDefaultValue: row.has_default,
      });
    }
    return [...tables.values()];
  }

  async getMetadata(options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables(options) };
  }
}

/** PostgreSQL as Kysely speaks it, with the introspector above. */
class OwnSchemaPostgresDialect extends PostgresDialect {
  override createIntrospector(db: IntrospectedDb): DatabaseIntrospector {
    return new OwnSchemaIntrospector(db);
  }
}

export interface OpenedPostgresStore extends OpenedStore {
  readonly pool: pg.Pool;
}

/** Opens the store on PostgreSQL, migrated to the latest version (several instances may start at once: Kysely's migrator takes an advisory lock). */
export async function openPostgresStore(url: string, options: PostgresOptions = {}): Promise<OpenedPostgresStore> {
  const pool = postgresPool(url, options);
  const db = new Kysely<Tables>({ dialect: new OwnSchemaPostgresDialect({ pool }) });
  try {
    const { rows } = await sql<{ schema: string }>`SELECT current_schema() AS schema`.execute(db);
    const schema = rows[0]?.schema;
    if (schema === undefined) throw new Error('the database has no schema to create tables in (search_path)');
    await migrateToLatest(db, options.migrations, { migrationTableSchema: schema });
  } catch (error) {
    await db.destroy();
    throw error;
  }
  return { store: new PostgresStore(db, options.beforeClose), db, pool };
}
