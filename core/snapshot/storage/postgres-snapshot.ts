// Data snapshots in PostgreSQL (DATABASE_URL=postgres://…): one schema per snapshot, filled with COPY
// (postgres-snapshot-writer.ts) and read a round of requests at a time (postgres-snapshot-reader.ts), so
// every instance reads the same snapshot from the same database. This storage names, opens, lists and
// drops the schemas. Schemas are named after the schema the service's own tables live in (its
// current_schema), so deployments and test runs sharing a database never see, or remove, each other's
// snapshots.
import { createHash } from 'node:crypto';
import type pg from 'pg';
import { postgresPool } from '../../storage/postgres.ts';
import { PostgresListener, SNAPSHOTS_CHANNEL_SQL } from '../../storage/postgres-listener.ts';
import type { ContactKind, ContactRow, OpenedSnapshot, SnapshotStorage, SnapshotWriter } from '../port.ts';
import { PostgresSnapshotSource, READ_QUERY_TIMEOUT_MS, READ_STATEMENT_TIMEOUT_MS } from './postgres-snapshot-reader.ts';
import { PostgresSnapshotWriter } from './postgres-snapshot-writer.ts';
import { inSchema, quoteIdent } from './schema.ts';

/**
 * The URL with one more `-c name=value` in its `options` parameter (a search_path a test gives keeps):
 * written into the URL because the driver takes the URL's options over its own configuration's.
 */
export function withSessionSetting(url: string, setting: string): string {
  const added = encodeURIComponent(`-c ${setting}`);
  if (/[?&]options=/.test(url)) return url.replace(/([?&]options=)([^&]*)/, (_all, key: string, value: string) => `${key}${value}%20${added}`);
  return `${url}${url.includes('?') ? '&' : '?'}options=${added}`;
}

/** Snapshots as PostgreSQL schemas `ebs_<tag>_<stamp>_<4 hex>`, the tag naming the service's own schema. */
export class PostgresSnapshots implements SnapshotStorage {
  readonly description = 'PostgreSQL';
  private listener: PostgresListener | null = null;

  private constructor(
    private readonly url: string,
    private readonly pool: pg.Pool,
    /** `ebs_<8 hex of current_schema>_`: every snapshot schema of this deployment starts with it. */
    private readonly prefix: string,
  ) {}

  static async open(url: string, options: { readonly poolSize?: number } = {}): Promise<PostgresSnapshots> {
    // The lookup statement is the same every time but for its arrays: planning it anew for each
    // request (PostgreSQL's first five custom plans) costs more than running it.
    const pool = postgresPool(withSessionSetting(url, 'plan_cache_mode=force_generic_plan'), {
      ...options,
      statementTimeoutMs: READ_STATEMENT_TIMEOUT_MS,
      // One lookup statement is out at a time (PostgresSnapshotSource): on a connection gone silent it
      // must fail, not hold every request behind it until keepalive notices.
      queryTimeoutMs: READ_QUERY_TIMEOUT_MS,
    });
    try {
      const { rows } = await pool.query<{ schema: string }>('SELECT current_schema() AS schema');
      const tag = createHash('sha256')
        .update(rows[0]?.schema ?? 'public')
        .digest('hex')
        .slice(0, 8);
      return new PostgresSnapshots(url, pool, `ebs_${tag}_`);
    } catch (error) {
      await pool.end();
      throw error;
    }
  }

  async lastPerson(location: string): Promise<number> {
    const { rows } = await this.pool.query<{ last: number | null }>(inSchema('SELECT max(p) AS last FROM S.people', location));
    return rows[0]?.last ?? 0;
  }

  async contacts(location: string, kind: ContactKind, afterP: number, toP: number): Promise<ContactRow[]> {
    const table = kind === 'email' ? 'emails' : 'phones';
    const { rows } = await this.pool.query<ContactRow>(
      inSchema(
        `SELECT c.p AS p, p.person_id AS "personId", h.windfall_id AS "householdId", c.${kind} AS value FROM S.${table} c ` +
          'JOIN S.people p ON p.p = c.p LEFT JOIN S.households h ON h.hh = p.hh WHERE c.p > $1 AND c.p <= $2 ORDER BY c.p',
        location,
      ),
      [afterP, toP],
    );
    return rows;
  }

  locationFor(id: string): string {
    // The id ends in -<yyyymmddThhmmss>-<4 hex> (loader.ts); the version before it may hold anything.
    const tail = /(\d{8})T(\d{6})-([0-9a-f]{4})$/.exec(id);
    if (tail === null) throw new Error(`snapshot id ${id} does not end in a timestamp and 4 hex digits`);
    return `${this.prefix}${tail[1]}t${tail[2]}_${tail[3]}`;
  }

  create(location: string): Promise<SnapshotWriter> {
    return PostgresSnapshotWriter.create(this.url, this.checked(location));
  }

  async open(location: string): Promise<OpenedSnapshot> {
    const schema = this.checked(location);
    // A schema that is not there (removed by hand, another database) fails here, not on a request.
    await this.pool.query(inSchema("SELECT value FROM S.meta WHERE key = 'id'", schema));
    // A snapshot loaded before blocking keys existed has no blocks table: it answers through exact keys.
    const { rows } = await this.pool.query<{ present: boolean }>('SELECT to_regclass($1) IS NOT NULL AS present', [inSchema('S.blocks', schema)]);
    const source = new PostgresSnapshotSource(this.pool, schema, rows[0]?.present === true);
    return { kind: 'fetched', requestReader: () => source.requestReader(), close: () => undefined };
  }

  async remove(location: string): Promise<void> {
    await this.pool.query(`DROP SCHEMA IF EXISTS ${quoteIdent(this.checked(location))} CASCADE`);
  }

  async present(): Promise<string[]> {
    const { rows } = await this.pool.query<{ name: string }>('SELECT nspname AS name FROM pg_namespace WHERE starts_with(nspname, $1) ORDER BY nspname', [
      this.prefix,
    ]);
    return rows.map((row) => row.name);
  }

  watch(onChange: () => void): () => void {
    this.listener ??= new PostgresListener(this.url, SNAPSHOTS_CHANNEL_SQL);
    return this.listener.subscribe(onChange);
  }

  async close(): Promise<void> {
    await this.listener?.close();
    await this.pool.end();
  }

  /** A location this storage made; anything else (a registry entry from SQLite, a hand edit) is refused. */
  private checked(location: string): string {
    if (!location.startsWith(this.prefix) || !/^[a-z0-9_]+$/.test(location)) {
      throw new Error(`${location} is not a snapshot schema of this database (expected ${this.prefix}…)`);
    }
    return location;
  }
}
