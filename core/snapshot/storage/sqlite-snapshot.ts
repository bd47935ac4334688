// One data snapshot as a SQLite file in the snapshots folder (the default): the writer a load fills
// (the tables of schema.ts, their indexes built at the end), and the read-only reader production
// matching queries with prepared statements, one indexed lookup each, answered at once.
import { closeSync, fsyncSync, openSync, readdirSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import Database, { type BetterSqlite3 } from '../../storage/better-sqlite3.ts';
import { ensurePrivateFile } from '../../storage/data-folder.ts';
import {
  type AddressHit,
  BLOCK_LIMIT,
  type ContactKind,
  type ContactRow,
  type HouseholdRow,
  NAME_LOOKUP_LIMIT,
  type NameHits,
  type NameScope,
  type NewHousehold,
  type NewPerson,
  type OpenedSnapshot,
  type PersonKeys,
  type PersonRow,
  type SnapshotReader,
  type SnapshotStorage,
  type SnapshotWriter,
} from '../port.ts';
import { LOADED_TABLES, type LoadedTable, type Row, RowFanOut, columnsOf, sqliteIndexes, sqliteTables } from './schema.ts';

const BATCH = 20_000;
/**
 * Rows one INSERT statement takes. A statement's run has a fixed cost besides its rows: two-column rows
 * alone cost 1.8 µs a row one at a time, 0.54 µs 64 at a time. A 1M-people load writes 10.5M rows,
 * half of them blocking keys; it took 57.4 and 58.5 s against 61.2 and 59.7 s one row a statement
 * (runs taking turns): most of a row's cost is SQLite's own.
 */
export const ROWS_PER_INSERT = 64;

/** One loaded table's inserts: rows gathered and sent ROWS_PER_INSERT at a time, the rest one by one. */
class TableInserts {
  private readonly many: BetterSqlite3.Statement;
  private readonly one: BetterSqlite3.Statement;
  private readonly width: number;
  private pending: (string | number | null)[] = [];

  constructor(db: BetterSqlite3.Database, table: LoadedTable) {
    const columns = columnsOf(table).map((column) => column.name);
    const row = `(${columns.map(() => '?').join(', ')})`;
    this.width = columns.length;
    this.one = db.prepare(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${row}`);
    this.many = db.prepare(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${Array.from({ length: ROWS_PER_INSERT }, () => row).join(', ')}`);
  }

  add(row: Row): void {
    for (const value of row) this.pending.push(value);
    if (this.pending.length === this.width * ROWS_PER_INSERT) {
      this.many.run(this.pending);
      this.pending = [];
    }
  }

  /** Inserts the rows still gathered. */
  flush(): void {
    for (let at = 0; at < this.pending.length; at += this.width) this.one.run(this.pending.slice(at, at + this.width));
    this.pending = [];
  }
}

export class SqliteSnapshotWriter implements SnapshotWriter {
  private readonly db: BetterSqlite3.Database;
  private readonly rows: RowFanOut;
  private readonly inserts: TableInserts[];
  private pending = 0;

  constructor(readonly file: string) {
    // Hundreds of thousands of e-mails, phones and net worths: readable by the owner only.
    ensurePrivateFile(file);
    this.db = new Database(file);
    // A snapshot is written once, by one process, and thrown away if the load fails: no journal.
    this.db.pragma('journal_mode = OFF');
    this.db.pragma('synchronous = OFF');
    this.db.pragma('cache_size = -262144');
    this.db.pragma('temp_store = MEMORY');
    // The indexes are built after the rows, while the load has nothing else to do: their sorts may use
    // a second thread (at 1M people the blocks index took 5.8 s with one more, 10.6 s without).
    this.db.pragma('threads = 2');
    // Statistics from about a thousand rows of each index: every lookup has one index to use, so
    // approximate counts choose the same plans, in a tenth of the time (2.1 s at 1M people).
    this.db.pragma('analysis_limit = 1000');
    for (const statement of sqliteTables()) this.db.exec(statement);
    const inserts = new Map<LoadedTable, TableInserts>(LOADED_TABLES.map((table) => [table, new TableInserts(this.db, table)]));
    this.inserts = [...inserts.values()];
    this.rows = new RowFanOut((table, row) => {
      const insert = inserts.get(table);
      if (insert === undefined) throw new Error(`no insert prepared for ${table}`);
      insert.add(row);
    });
    this.db.exec('BEGIN');
  }

  private commit(): void {
    for (const insert of this.inserts) insert.flush();
    this.db.exec('COMMIT');
  }

  private tick(): void {
    this.pending += 1;
    if (this.pending >= BATCH) {
      this.commit();
      this.db.exec('BEGIN');
      this.pending = 0;
    }
  }

  addHousehold(household: NewHousehold, addresses: readonly { key: string; unit: string }[]): number {
    const hh = this.rows.household(household, addresses);
    this.tick();
    return hh;
  }

  addPerson(person: NewPerson, keys: PersonKeys): void {
    this.rows.person(person, keys);
    this.tick();
  }

  addBlock(key: string, hh: number): void {
    this.rows.block(key, hh);
    this.tick();
  }

  backpressure(): null {
    // Every insert is done when it returns.
    return null;
  }

  /** Commits, builds the indexes and statistics, and closes the file, ready to be opened read-only. */
  finish(meta: Record<string, string>): Promise<void> {
    this.finishNow(meta);
    return Promise.resolve();
  }

  private finishNow(meta: Record<string, string>): void {
    this.commit();
    for (const statement of sqliteIndexes()) this.db.exec(statement);
    const insertMeta = this.db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
    for (const [key, value] of Object.entries(meta)) insertMeta.run(key, value);
    this.db.exec('ANALYZE');
    this.db.close();
    // Written without a journal or syncs for speed; made durable once, before anything activates it.
    const fd = openSync(this.file, 'r+');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  abort(): Promise<void> {
    if (this.db.open) this.db.close();
    return Promise.resolve();
  }
}

export class SqliteSnapshotReader implements SnapshotReader {
  private readonly db: BetterSqlite3.Database;
  /** One person by p: the lookups below find people's p in an index, then read each row by it. */
  private readonly person: BetterSqlite3.Statement<[number], PersonRow>;
  private readonly byEmail: BetterSqlite3.Statement<[string], number>;
  private readonly byPhone: BetterSqlite3.Statement<[string], number>;
  /** A file whose name index carries the scope (employer and place) of each name row. */
  private readonly scopedNames: boolean;
  /** Every person with a name key, for a file whose name index carries no scope. */
  private readonly byName: BetterSqlite3.Statement<[string, string], number>;
  /** The name lookups within a scope, one statement for each shape of scope asked (parameters in place). */
  private readonly byNameIn = new Map<string, BetterSqlite3.Statement<string[], number>>();
  private readonly nameCount: BetterSqlite3.Statement<[string, string], number>;
  private readonly atAddress: BetterSqlite3.Statement<[string], AddressHit>;
  /** null for a snapshot loaded before blocking keys existed: it answers through exact keys only. */
  private readonly byBlock: BetterSqlite3.Statement<[string], number> | null;
  private readonly householdStmt: BetterSqlite3.Statement<[number], HouseholdRow>;
  private readonly membersStmt: BetterSqlite3.Statement<[number], number>;
  private readonly careerStmt: BetterSqlite3.Statement<[number], { career: string | null }>;
  private readonly householdDataStmt: BetterSqlite3.Statement<[number], { data: string }>;

  constructor(file: string) {
    this.db = new Database(file, { readonly: true, fileMustExist: true });
    // Memory-mapped reads and a large page cache: lookups stop paying for read() calls. The file
    // never changes once loaded, so the shared lock is taken once and kept (locking_mode EXCLUSIVE on
    // a read-only connection keeps a SHARED lock: other readers are fine) instead of once a query.
    this.db.pragma('mmap_size = 4294967296');
    this.db.pragma('cache_size = -131072');
    this.db.pragma('locking_mode = EXCLUSIVE');
    // People are found by p in an index that holds it (e-mails, phones, names, households), and each
    // row then read by p, in two statements: on a 1M-person file a statement that joins the index to
    // the people table took twice as long as the two (14 against 7 µs for an e-mail, on 2026-11-28).
    this.person = this.db.prepare('SELECT p, person_id, hh, first, last, company, has_career FROM people WHERE p = ?');
    this.byEmail = this.db.prepare<[string], number>('SELECT p FROM emails WHERE email = ? ORDER BY p').pluck();
    this.byPhone = this.db.prepare<[string], number>('SELECT p FROM phones WHERE phone = ? ORDER BY p').pluck();
    // A name within its scope (the employer, the postal codes, the places of the record) is compared in
    // the name index, which carries them: a common name's people elsewhere are passed over there, never
    // read nor sent to the matcher (a name carried by a few hundred people used to cost more than the
    // rest of a request). How many carry the name at all is counted apart, in the same index. A file
    // loaded before the index carried the scope gets every person with the name; the matcher filters.
    this.scopedNames = this.db.prepare("SELECT 1 FROM pragma_table_info('names') WHERE name = 'postal'").get() !== undefined;
    this.byName = this.db
      .prepare<[string, string], number>(`SELECT p FROM names WHERE last = ? AND first_key = ? ORDER BY p LIMIT ${NAME_LOOKUP_LIMIT + 1}`)
      .pluck();
    this.nameCount = this.db
      .prepare<[string, string], number>(`SELECT count(*) FROM (SELECT 1 FROM names WHERE last = ? AND first_key = ? LIMIT ${NAME_LOOKUP_LIMIT + 1})`)
      .pluck();
    this.atAddress = this.db.prepare('SELECT hh, unit FROM addresses WHERE key = ? ORDER BY hh');
    const hasBlocks = this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'blocks'").get() !== undefined;
    this.byBlock = hasBlocks
      ? this.db.prepare<[string], number>(`SELECT DISTINCT hh FROM blocks WHERE key = ? ORDER BY hh LIMIT ${BLOCK_LIMIT + 1}`).pluck()
      : null;
    this.householdStmt = this.db.prepare('SELECT hh, windfall_id, postal, region, city, address_keys FROM households WHERE hh = ?');
    this.householdDataStmt = this.db.prepare('SELECT data FROM households WHERE hh = ?');
    this.membersStmt = this.db.prepare<[number], number>('SELECT p FROM people WHERE hh = ? ORDER BY p').pluck();
    this.careerStmt = this.db.prepare('SELECT career FROM careers WHERE p = ?');
  }

  peopleByEmail(email: string): PersonRow[] {
    return this.people(this.byEmail.all(email));
  }

  peopleByPhone(phone: string): PersonRow[] {
    return this.people(this.byPhone.all(phone));
  }

  peopleByName(last: string, firstKey: string, scope: NameScope): NameHits {
    const total = this.nameCount.get(last, firstKey) ?? 0;
    if (total === 0) return { people: [], tooCommon: false };
    const tooCommon = total > NAME_LOOKUP_LIMIT;
    // Too common to decide anything: no one is read (in its scope, a lookup could walk every one of them).
    if (tooCommon) return { people: [], tooCommon };
    if (!this.scopedNames) return { people: this.people(this.byName.all(last, firstKey)), tooCommon };
    const postals = [...new Set(scope.postals)];
    const places = [...new Map(scope.places.map((place) => [`${place.city}\n${place.region}`, place])).values()];
    if (scope.company === '' && postals.length === 0 && places.length === 0) return { people: [], tooCommon };
    const parameters = [last, firstKey, ...(scope.company === '' ? [] : [scope.company]), ...postals, ...places.flatMap((place) => [place.city, place.region])];
    return { people: this.people(this.nameInScope(scope.company !== '', postals.length, places.length).all(...parameters)), tooCommon };
  }

  /**
   * The statement for a name within a scope of this shape, prepared once. json_each over one statement
   * for every shape cost three times the lookup itself. A record has at most ten addresses, so there
   * are at most 242 shapes (with or without an employer, 0–10 postal codes, 0–10 places), and a few in
   * practice.
   */
  private nameInScope(company: boolean, postals: number, places: number): BetterSqlite3.Statement<string[], number> {
    const shape = `${company ? 1 : 0}|${postals}|${places}`;
    let statement = this.byNameIn.get(shape);
    if (statement === undefined) {
      const scope = [
        ...(company ? ['company = ?'] : []),
        ...(postals === 0 ? [] : [`postal IN (${Array.from({ length: postals }, () => '?').join(', ')})`]),
        ...Array.from({ length: places }, () => '(city = ? AND region = ?)'),
      ];
      statement = this.db
        .prepare<string[], number>(`SELECT p FROM names WHERE last = ? AND first_key = ? AND (${scope.join(' OR ')}) ORDER BY p LIMIT ${NAME_LOOKUP_LIMIT + 1}`)
        .pluck();
      this.byNameIn.set(shape, statement);
    }
    return statement;
  }

  /** The people with these p, in the order given (a p without a row, which a loaded file never has, left out). */
  private people(ps: readonly number[]): PersonRow[] {
    const rows: PersonRow[] = [];
    for (const p of ps) {
      const row = this.person.get(p);
      if (row !== undefined) rows.push(row);
    }
    return rows;
  }

  householdsAtAddress(key: string): AddressHit[] {
    return this.atAddress.all(key);
  }

  householdsByBlock(key: string): number[] {
    return this.byBlock?.all(key) ?? [];
  }

  household(hh: number): HouseholdRow | undefined {
    return this.householdStmt.get(hh);
  }

  householdData(hh: number): string | null {
    return this.householdDataStmt.get(hh)?.data ?? null;
  }

  members(hh: number): PersonRow[] {
    return this.people(this.membersStmt.all(hh));
  }

  career(p: number): string | null {
    return this.careerStmt.get(p)?.career ?? null;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

/** The name a snapshot file gets: `<version>-<yyyymmddThhmmss>-<4 hex>.db`. */
const SNAPSHOT_FILE_NAME = /-\d{8}T\d{6}-[0-9a-f]{4}\.db$/;

/** Snapshots as SQLite files in one folder (DATA_DIR/snapshots), each opened read-only by the servers. */
export class SqliteSnapshots implements SnapshotStorage {
  readonly description: string;

  constructor(readonly dir: string) {
    this.description = `the folder ${dir}`;
  }

  locationFor(id: string): string {
    return `${id}.db`;
  }

  create(location: string): Promise<SnapshotWriter> {
    return Promise.resolve(new SqliteSnapshotWriter(path.join(this.dir, location)));
  }

  open(location: string): Promise<OpenedSnapshot> {
    const reader = new SqliteSnapshotReader(path.join(this.dir, location));
    return Promise.resolve({ kind: 'immediate', reader, close: () => reader.close() });
  }

  lastPerson(location: string): Promise<number> {
    return Promise.resolve(this.readOnly(location, (db) => db.prepare<[], { last: number | null }>('SELECT max(p) AS last FROM people').get()?.last ?? 0));
  }

  contacts(location: string, kind: ContactKind, afterP: number, toP: number): Promise<ContactRow[]> {
    const table = kind === 'email' ? 'emails' : 'phones';
    return Promise.resolve(
      this.readOnly(location, (db) =>
        db
          .prepare<[number, number], ContactRow>(
            `SELECT c.p AS p, p.person_id AS personId, h.windfall_id AS householdId, c.${kind} AS value FROM ${table} c ` +
              'JOIN people p ON p.p = c.p LEFT JOIN households h ON h.hh = p.hh WHERE c.p > ? AND c.p <= ? ORDER BY c.p',
          )
          .all(afterP, toP),
      ),
    );
  }

  /** `read` on a connection of its own to the snapshot's file, read-only, closed after. */
  private readOnly<T>(location: string, read: (db: BetterSqlite3.Database) => T): T {
    const db = new Database(path.join(this.dir, location), { readonly: true, fileMustExist: true });
    try {
      return read(db);
    } finally {
      db.close();
    }
  }

  remove(location: string): Promise<void> {
    try {
      unlinkSync(path.join(this.dir, location));
    } catch {
      // Never written, or removed already: nothing to remove.
    }
    return Promise.resolve();
  }

  present(): Promise<string[]> {
    try {
      return Promise.resolve(readdirSync(this.dir).filter((name) => SNAPSHOT_FILE_NAME.test(name)));
    } catch {
      // No snapshots folder yet.
      return Promise.resolve([]);
    }
  }

  watch(): () => void {
    // Nothing tells a SQLite reader that the registry changed: the manager's poll finds out.
    return () => undefined;
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
