// The load's side of a PostgreSQL snapshot: the schema's tables created (schema.ts), one COPY per table,
// each on a connection of its own, fed the rows of the load as they come, then the primary keys and
// indexes built and the tables vacuumed, so the first lookup finds a snapshot ready to read.
import { finished } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { postgresPool } from '../../storage/postgres.ts';
import type { NewHousehold, NewPerson, PersonKeys, SnapshotWriter } from '../port.ts';
import { LOADED_TABLES, type LoadedTable, RowFanOut, type Row, inSchema, postgresCopy, postgresIndexBuilds, postgresTables, quoteIdent } from './schema.ts';

/** A COPY chunk is sent once this many characters are buffered for its table. */
const CHUNK_CHARS = 1 << 18;
/** How long a load's statements may run (index builds on tens of millions of rows take minutes). */
const LOAD_STATEMENT_TIMEOUT_MS = 30 * 60_000;

const SPECIAL = /[\\\n\r\t\0]/;
const SPECIALS = /[\\\n\r\t\0]/g;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\0': '' };

/**
 * A value in COPY's text format. NUL cannot be stored in a PostgreSQL text value at all, so it is
 * dropped (no real name, address or e-mail carries one).
 */
function copyText(value: string): string {
  return SPECIAL.test(value) ? value.replace(SPECIALS, (c) => ESCAPES[c] ?? '') : value;
}

interface CopyTarget {
  readonly client: pg.PoolClient;
  readonly stream: ReturnType<typeof copyFrom>;
  parts: string[];
  chars: number;
  drain: Promise<void> | null;
}

/** A load into a new snapshot schema; see SnapshotWriter. */
export class PostgresSnapshotWriter implements SnapshotWriter {
  private readonly rows: RowFanOut;
  private failure: unknown = null;
  /** The COPYs are over (committed, or ended by abort) and their connections given back. */
  private copiesDone = false;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly schema: string,
    private readonly targets: ReadonlyMap<LoadedTable, CopyTarget>,
  ) {
    for (const target of targets.values()) {
      target.stream.on('error', (error: unknown) => {
        this.failure ??= error;
      });
    }
    this.rows = new RowFanOut((table, row) => this.row(table, row));
  }

  /** Creates the schema and its tables and opens one COPY per table, each on a connection of its own. */
  static async create(url: string, schema: string): Promise<PostgresSnapshotWriter> {
    const pool = postgresPool(url, { poolSize: LOADED_TABLES.length + 1, statementTimeoutMs: LOAD_STATEMENT_TIMEOUT_MS });
    const opened: pg.PoolClient[] = [];
    try {
      const statements = [`CREATE SCHEMA ${quoteIdent(schema)}`, ...postgresTables().map((statement) => inSchema(statement, schema))];
      await pool.query(statements.join(';\n'));
      const targets = new Map<LoadedTable, CopyTarget>();
      for (const table of LOADED_TABLES) {
        const client = await pool.connect();
        opened.push(client);
        const stream = client.query(copyFrom(inSchema(postgresCopy(table), schema)));
        targets.set(table, { client, stream, parts: [], chars: 0, drain: null });
      }
      return new PostgresSnapshotWriter(pool, schema, targets);
    } catch (error) {
      for (const client of opened) client.release(true);
      await pool.end();
      throw error;
    }
  }

  private row(table: LoadedTable, values: Row): void {
    const target = this.targets.get(table);
    if (target === undefined) throw new Error(`no COPY open for ${table}`);
    let line = '';
    for (let i = 0; i < values.length; i += 1) {
      const value = values[i];
      if (i > 0) line += '\t';
      line += value === null || value === undefined ? '\\N' : typeof value === 'number' ? String(value) : copyText(value);
    }
    line += '\n';
    target.parts.push(line);
    target.chars += line.length;
    if (target.chars >= CHUNK_CHARS) this.send(target);
  }

  private send(target: CopyTarget): void {
    if (target.parts.length === 0) return;
    const chunk = target.parts.join('');
    target.parts = [];
    target.chars = 0;
    if (!target.stream.write(chunk) && target.drain === null) {
      target.drain = new Promise<void>((resolve) => target.stream.once('drain', resolve)).then(() => {
        target.drain = null;
      });
    }
  }

  addHousehold(household: NewHousehold, addresses: readonly { key: string; unit: string }[]): number {
    return this.rows.household(household, addresses);
  }

  addPerson(person: NewPerson, keys: PersonKeys): void {
    this.rows.person(person, keys);
  }

  addBlock(key: string, hh: number): void {
    this.rows.block(key, hh);
  }

  backpressure(): Promise<void> | null {
    if (this.failure !== null) return Promise.reject(this.failure);
    const waits = [...this.targets.values()].flatMap((target) => (target.drain === null ? [] : [target.drain]));
    return waits.length === 0 ? null : Promise.all(waits).then(() => undefined);
  }

  async finish(meta: Record<string, string>): Promise<void> {
    if (this.failure !== null) throw this.failure;
    const targets = [...this.targets.values()];
    for (const target of targets) {
      this.send(target);
      target.stream.end();
    }
    // Each COPY commits when its stream finishes; an error in one fails the load.
    await Promise.all(targets.map((target) => finished(target.stream)));
    this.copiesDone = true;
    for (const target of targets) target.client.release();
    await Promise.all(
      postgresIndexBuilds().map(async (statements) => {
        const client = await this.pool.connect();
        try {
          await client.query("SET maintenance_work_mem = '256MB'");
          for (const statement of statements) await client.query(inSchema(statement, this.schema));
        } finally {
          client.release();
        }
      }),
    );
    const entries = Object.entries(meta);
    await this.pool.query(inSchema(`INSERT INTO S.meta (key, value) SELECT * FROM unnest($1::text[], $2::text[])`, this.schema), [
      entries.map(([key]) => key),
      entries.map(([, value]) => value),
    ]);
    // VACUUM as well as ANALYZE: it marks the pages all-visible, so the lookups are index-only scans.
    for (const table of LOADED_TABLES) await this.pool.query(inSchema(`VACUUM (ANALYZE) S.${table}`, this.schema));
    await this.pool.end();
  }

  /** Safe at any point, after a failed finish too: each connection is given back once. */
  async abort(): Promise<void> {
    if (!this.copiesDone) {
      this.copiesDone = true;
      // Dropping the connections ends their COPYs: the server rolls each back.
      for (const target of this.targets.values()) {
        target.stream.destroy();
        target.client.release(true);
      }
    }
    if (!this.pool.ended) await this.pool.end().catch(() => undefined);
  }
}
