// One data snapshot as a SQLite file in the snapshots folder (the default): the writer a load fills
// (indexes built at the end), and the read-only reader production matching queries with prepared
// statements, one indexed lookup each, answered at once.
import { closeSync, fsyncSync, openSync, readdirSync, unlinkSync } from 'node:fs';
import path from 'node:path';
import Database, { type BetterSqlite3 } from '../storage/better-sqlite3.ts';
import { ensurePrivateFile } from '../storage/data-folder.ts';
import {
  type AddressHit,
  BLOCK_LIMIT,
  type HouseholdRow,
  NAME_LOOKUP_LIMIT,
  type NameHits,
  type NewHousehold,
  type NewPerson,
  type OpenedSnapshot,
  type PersonKeys,
  type PersonRow,
  type SnapshotReader,
  type SnapshotStorage,
  type SnapshotWriter,
} from './port.ts';

const SCHEMA = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE households (hh INTEGER PRIMARY KEY, windfall_id TEXT NOT NULL, data TEXT NOT NULL,
  postal TEXT NOT NULL, region TEXT NOT NULL, city TEXT NOT NULL, address_keys TEXT NOT NULL);
CREATE TABLE addresses (key TEXT NOT NULL, unit TEXT NOT NULL, hh INTEGER NOT NULL);
CREATE TABLE people (p INTEGER PRIMARY KEY, person_id TEXT NOT NULL, hh INTEGER, first TEXT NOT NULL,
  last TEXT NOT NULL, company TEXT NOT NULL, has_career INTEGER NOT NULL);
-- Career records apart: person rows stay small, so lookups that read many of them read few pages.
CREATE TABLE careers (p INTEGER PRIMARY KEY, career TEXT NOT NULL);
CREATE TABLE emails (email TEXT NOT NULL, p INTEGER NOT NULL);
CREATE TABLE phones (phone TEXT NOT NULL, p INTEGER NOT NULL);
CREATE TABLE names (last TEXT NOT NULL, first_key TEXT NOT NULL, p INTEGER NOT NULL);
-- Blocking keys (keys.ts): the candidates a record with a typo in one field still finds.
CREATE TABLE blocks (key TEXT NOT NULL, hh INTEGER NOT NULL);
`;

// Built after the bulk insert: far faster than maintaining them row by row. Each lookup index
// carries the column results are ordered by, so no query sorts.
const INDEXES = `
CREATE UNIQUE INDEX households_windfall_id ON households (windfall_id);
CREATE INDEX addresses_key ON addresses (key, hh, unit);
CREATE UNIQUE INDEX people_person_id ON people (person_id);
CREATE INDEX people_hh ON people (hh);
CREATE INDEX emails_email ON emails (email, p);
CREATE INDEX phones_phone ON phones (phone, p);
CREATE INDEX names_last_first ON names (last, first_key, p);
CREATE INDEX blocks_key ON blocks (key, hh);
`;

const BATCH = 20_000;
export class SqliteSnapshotWriter implements SnapshotWriter {
  private readonly db: BetterSqlite3.Database;
  private readonly insertHouseholdStmt: BetterSqlite3.Statement;
  private readonly insertAddressStmt: BetterSqlite3.Statement;
  private readonly insertPersonStmt: BetterSqlite3.Statement;
  private readonly insertCareerStmt: BetterSqlite3.Statement;
  private readonly insertEmailStmt: BetterSqlite3.Statement;
  private readonly insertPhoneStmt: BetterSqlite3.Statement;
  private readonly insertNameStmt: BetterSqlite3.Statement;
  private readonly insertBlockStmt: BetterSqlite3.Statement;
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
    this.db.exec(SCHEMA);
    this.insertHouseholdStmt = this.db.prepare(
      'INSERT INTO households (windfall_id, data, postal, region, city, address_keys) VALUES (?, ?, ?, ?, ?, ?)',
    );
    this.insertAddressStmt = this.db.prepare('INSERT INTO addresses (key, unit, hh) VALUES (?, ?, ?)');
    this.insertPersonStmt = this.db.prepare('INSERT INTO people (person_id, hh, first, last, company, has_career) VALUES (?, ?, ?, ?, ?, ?)');
    this.insertCareerStmt = this.db.prepare('INSERT INTO careers (p, career) VALUES (?, ?)');
    this.insertEmailStmt = this.db.prepare('INSERT INTO emails (email, p) VALUES (?, ?)');
    this.insertPhoneStmt = this.db.prepare('INSERT INTO phones (phone, p) VALUES (?, ?)');
    this.insertNameStmt = this.db.prepare('INSERT INTO names (last, first_key, p) VALUES (?, ?, ?)');
    this.insertBlockStmt = this.db.prepare('INSERT INTO blocks (key, hh) VALUES (?, ?)');
    this.db.exec('BEGIN');
  }

  private tick(): void {
    this.pending += 1;
    if (this.pending >= BATCH) {
      this.db.exec('COMMIT');
      this.db.exec('BEGIN');
      this.pending = 0;
    }
  }

  addHousehold(household: NewHousehold, addresses: readonly { key: string; unit: string }[]): number {
    const keys = addresses.map((address) => address.key).join('\n');
    const hh = Number(
      this.insertHouseholdStmt.run(household.windfallId, household.data, household.postal, household.region, household.city, keys)
        .lastInsertRowid,
    );
    for (const address of addresses) this.insertAddressStmt.run(address.key, address.unit, hh);
    for (const key of household.blocks) this.insertBlockStmt.run(key, hh);
    this.tick();
    return hh;
  }

  addPerson(person: NewPerson, keys: PersonKeys): void {
    const p = Number(
      this.insertPersonStmt.run(person.personId, person.hh, person.first, person.last, person.company, person.career === null ? 0 : 1)
        .lastInsertRowid,
    );
    if (person.career !== null) this.insertCareerStmt.run(p, person.career);
    for (const email of keys.emails) this.insertEmailStmt.run(email, p);
    for (const phone of keys.phones) this.insertPhoneStmt.run(phone, p);
    if (person.last !== '') for (const key of keys.firstKeys) this.insertNameStmt.run(person.last, key, p);
    if (person.hh !== null) for (const key of keys.blocks) this.insertBlockStmt.run(key, person.hh);
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
    this.db.exec('COMMIT');
    this.db.exec(INDEXES);
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
  private readonly byEmail: BetterSqlite3.Statement<[string], PersonRow>;
  private readonly byPhone: BetterSqlite3.Statement<[string], PersonRow>;
  private readonly byName: BetterSqlite3.Statement<[string, string], PersonRow>;
  private readonly atAddress: BetterSqlite3.Statement<[string], AddressHit>;
  /** null for a snapshot loaded before blocking keys existed: it answers through exact keys only. */
  private readonly byBlock: BetterSqlite3.Statement<[string], number> | null;
  private readonly householdStmt: BetterSqlite3.Statement<[number], HouseholdRow>;
  private readonly membersStmt: BetterSqlite3.Statement<[number], PersonRow>;
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
    const person = 'SELECT p.p, p.hh, p.first, p.last, p.company, p.has_career FROM people p';
    this.byEmail = this.db.prepare(`${person} JOIN emails e ON e.p = p.p WHERE e.email = ? ORDER BY p.p`);
    this.byPhone = this.db.prepare(`${person} JOIN phones f ON f.p = p.p WHERE f.phone = ? ORDER BY p.p`);
    this.byName = this.db.prepare(`${person} JOIN names n ON n.p = p.p WHERE n.last = ? AND n.first_key = ? ORDER BY p.p LIMIT ${NAME_LOOKUP_LIMIT + 1}`);
    this.atAddress = this.db.prepare('SELECT hh, unit FROM addresses WHERE key = ? ORDER BY hh');
    const hasBlocks = this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'blocks'").get() !== undefined;
    this.byBlock = hasBlocks ? this.db.prepare<[string], number>(`SELECT DISTINCT hh FROM blocks WHERE key = ? ORDER BY hh LIMIT ${BLOCK_LIMIT + 1}`).pluck() : null;
    this.householdStmt = this.db.prepare('SELECT hh, windfall_id, postal, region, city, address_keys FROM households WHERE hh = ?');
    this.householdDataStmt = this.db.prepare('SELECT data FROM households WHERE hh = ?');
    this.membersStmt = this.db.prepare(`${person} WHERE p.hh = ? ORDER BY p.p`);
    this.careerStmt = this.db.prepare('SELECT career FROM careers WHERE p = ?');
  }

  peopleByEmail(email: string): PersonRow[] {
    return this.byEmail.all(email);
  }

  peopleByPhone(phone: string): PersonRow[] {
    return this.byPhone.all(phone);
  }

  peopleByName(last: string, firstKey: string): NameHits {
    // Every person with the name (the scope is for readers that pay to send rows; one here is cheap).
    const people = this.byName.all(last, firstKey);
    return { people, tooCommon: people.length > NAME_LOOKUP_LIMIT };
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
    return this.membersStmt.all(hh);
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
