// Unit tests of the snapshot schema: rendered for SQLite it creates what snapshot files are written
// with, rendered for PostgreSQL it is what loaded snapshot schemas were created with, every key and
// index is built once, and the rows a household and a person fan out into fit the tables' columns.
import { describe, expect, it } from 'vitest';
import Database from '../../core/storage/better-sqlite3.ts';
import {
  INDEXES,
  LOADED_TABLES,
  type LoadedTable,
  type Row,
  RowFanOut,
  TABLES,
  columnsOf,
  postgresCopy,
  postgresIndexBuilds,
  postgresTables,
  sqliteIndexes,
  sqliteTables,
  tableNamed,
} from '../../core/snapshot/storage/schema.ts';

/**
 * The tables and indexes snapshot files are written with: those of the files written before the schema
 * was declared once, and the name rows' scope (employer and place) carried in the name index since.
 */
const SQLITE_FORMAT = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE households (hh INTEGER PRIMARY KEY, windfall_id TEXT NOT NULL, data TEXT NOT NULL,
  postal TEXT NOT NULL, region TEXT NOT NULL, city TEXT NOT NULL, address_keys TEXT NOT NULL);
CREATE TABLE addresses (key TEXT NOT NULL, unit TEXT NOT NULL, hh INTEGER NOT NULL);
CREATE TABLE people (p INTEGER PRIMARY KEY, person_id TEXT NOT NULL, hh INTEGER, first TEXT NOT NULL,
  last TEXT NOT NULL, company TEXT NOT NULL, has_career INTEGER NOT NULL);
CREATE TABLE careers (p INTEGER PRIMARY KEY, career TEXT NOT NULL);
CREATE TABLE emails (email TEXT NOT NULL, p INTEGER NOT NULL);
CREATE TABLE phones (phone TEXT NOT NULL, p INTEGER NOT NULL);
CREATE TABLE names (last TEXT NOT NULL, first_key TEXT NOT NULL, p INTEGER NOT NULL, company TEXT NOT NULL,
  postal TEXT NOT NULL, city TEXT NOT NULL, region TEXT NOT NULL);
CREATE TABLE blocks (key TEXT NOT NULL, hh INTEGER NOT NULL);
CREATE UNIQUE INDEX households_windfall_id ON households (windfall_id);
CREATE INDEX addresses_key ON addresses (key, hh, unit);
CREATE UNIQUE INDEX people_person_id ON people (person_id);
CREATE INDEX people_hh ON people (hh);
CREATE INDEX emails_email ON emails (email, p);
CREATE INDEX phones_phone ON phones (phone, p);
CREATE INDEX names_last_first ON names (last, first_key, p, company, postal, city, region);
CREATE INDEX blocks_key ON blocks (key, hh);
`;

/** The statements snapshot schemas were created, filled and indexed with before. */
const POSTGRES_FORMAT = {
  tables: [
    'CREATE TABLE S.meta (key text PRIMARY KEY, value text NOT NULL)',
    'CREATE TABLE S.households (hh integer NOT NULL, windfall_id text COLLATE "C" NOT NULL, data text NOT NULL, postal text NOT NULL, region text NOT NULL, city text NOT NULL, address_keys text NOT NULL)',
    'CREATE TABLE S.addresses (key text COLLATE "C" NOT NULL, unit text COLLATE "C" NOT NULL, hh integer NOT NULL)',
    'CREATE TABLE S.people (p integer NOT NULL, person_id text COLLATE "C" NOT NULL, hh integer, first text NOT NULL, last text NOT NULL, company text NOT NULL, has_career smallint NOT NULL)',
    'CREATE TABLE S.careers (p integer NOT NULL, career text NOT NULL)',
    'CREATE TABLE S.emails (email text COLLATE "C" NOT NULL, p integer NOT NULL)',
    'CREATE TABLE S.phones (phone text COLLATE "C" NOT NULL, p integer NOT NULL)',
    'CREATE TABLE S.names (last text COLLATE "C" NOT NULL, first_key text COLLATE "C" NOT NULL, p integer NOT NULL, company text COLLATE "C" NOT NULL, postal text COLLATE "C" NOT NULL, city text COLLATE "C" NOT NULL, region text COLLATE "C" NOT NULL)',
    'CREATE TABLE S.blocks (key text COLLATE "C" NOT NULL, hh integer NOT NULL)',
  ],
  copies: [
    'COPY S.households (hh, windfall_id, data, postal, region, city, address_keys) FROM STDIN',
    'COPY S.addresses (key, unit, hh) FROM STDIN',
    'COPY S.people (p, person_id, hh, first, last, company, has_career) FROM STDIN',
    'COPY S.careers (p, career) FROM STDIN',
    'COPY S.emails (email, p) FROM STDIN',
    'COPY S.phones (phone, p) FROM STDIN',
    'COPY S.names (last, first_key, p, company, postal, city, region) FROM STDIN',
    'COPY S.blocks (key, hh) FROM STDIN',
  ],
  builds: [
    [
      'ALTER TABLE S.people ADD PRIMARY KEY (p)',
      'CREATE INDEX people_hh ON S.people (hh)',
      'CREATE UNIQUE INDEX people_person_id ON S.people (person_id)',
      'CREATE INDEX names_last_first ON S.names (last, first_key, p) INCLUDE (company, postal, city, region)',
      'ALTER TABLE S.careers ADD PRIMARY KEY (p)',
    ],
    [
      'ALTER TABLE S.households ADD PRIMARY KEY (hh)',
      'CREATE UNIQUE INDEX households_windfall_id ON S.households (windfall_id)',
      'CREATE INDEX addresses_key ON S.addresses (key, hh, unit)',
      'CREATE INDEX emails_email ON S.emails (email, p)',
      'CREATE INDEX phones_phone ON S.phones (phone, p)',
      'CREATE INDEX blocks_key ON S.blocks (key, hh)',
    ],
  ],
};

/** Every table's columns and every index's columns, as SQLite describes them. */
function sqliteStructure(db: InstanceType<typeof Database>): unknown {
  const tables = db.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all();
  return tables.map(({ name }) => ({
    name,
    columns: db.pragma(`table_info(${name})`),
    indexes: (db.pragma(`index_list(${name})`) as { name: string }[])
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((index) => ({ ...index, columns: db.pragma(`index_xinfo(${index.name})`) })),
  }));
}

function fannedOut(): { table: LoadedTable; row: Row }[] {
  const rows: { table: LoadedTable; row: Row }[] = [];
  const fanOut = new RowFanOut((table, row) => rows.push({ table, row }));
  const hh = fanOut.household({ windfallId: 'w1', data: '{}', postal: '30301', region: 'GA', city: 'atlanta', blocks: ['pn|30301|310'] }, [
    { key: '310|ridgewood ave|30301', unit: '4b' },
  ]);
  fanOut.person(
    { personId: 'p1', hh, first: 'meredith', last: 'stephenson', company: 'acme', career: '{"job_title":"VP"}' },
    {
      emails: ['m@example.com'],
      phones: ['+14045550101'],
      firstKeys: ['meredith'],
      blocks: ['np|30301|STFN'],
      place: { postal: '30301', city: 'atlanta', region: 'GA' },
    },
  );
  fanOut.person(
    { personId: 'p2', hh: null, first: 'bob', last: 'lee', company: '', career: null },
    { emails: [], phones: [], firstKeys: ['robert'], blocks: [], place: null },
  );
  return rows;
}

describe('the snapshot schema', () => {
  it('creates a SQLite snapshot file with the tables, columns and indexes snapshot files already hold', () => {
    const before = new Database(':memory:');
    before.exec(SQLITE_FORMAT);
    const now = new Database(':memory:');
    for (const statement of [...sqliteTables(), ...sqliteIndexes()]) now.exec(statement);
    expect(sqliteStructure(now)).toEqual(sqliteStructure(before));
    before.close();
    now.close();
  });

  it('creates, fills and indexes a PostgreSQL snapshot schema with the statements loaded schemas were made with', () => {
    expect(postgresTables()).toEqual(POSTGRES_FORMAT.tables);
    expect(LOADED_TABLES.map(postgresCopy)).toEqual(POSTGRES_FORMAT.copies);
    expect(postgresIndexBuilds().map((lane) => [...lane].sort())).toEqual(POSTGRES_FORMAT.builds.map((lane) => [...lane].sort()));
  });

  it('builds every primary key and index of a loaded table once, on PostgreSQL on one of two connections', () => {
    const lanes = postgresIndexBuilds();
    expect(lanes).toHaveLength(2);
    for (const lane of lanes) expect(lane.length).toBeGreaterThan(0);
    const built = lanes.flat();
    expect(new Set(built).size).toBe(built.length);
    for (const index of INDEXES) expect(built.filter((statement) => statement.includes(` INDEX ${index.name} ON `))).toHaveLength(1);
    for (const table of TABLES) {
      const keyed = built.filter((statement) => statement.startsWith(`ALTER TABLE S.${table.name} ADD PRIMARY KEY`));
      expect(keyed, table.name).toHaveLength(table.loaded && 'primaryKey' in table ? 1 : 0);
    }
    expect(sqliteIndexes()).toHaveLength(INDEXES.length);
  });

  it('names in each index, keyed or carried, only columns its table has', () => {
    for (const index of INDEXES) {
      const columns = columnsOf(index.table).map((column) => column.name);
      for (const name of [...index.columns, ...(index.include ?? [])]) expect(columns, `${index.name}.${name}`).toContain(name);
    }
    expect(tableNamed('names').columns.map((column) => column.name)).toEqual(['last', 'first_key', 'p', 'company', 'postal', 'city', 'region']);
  });

  it('fans a household and its people out into rows of exactly the tables’ columns, each name row with its scope', () => {
    const rows = fannedOut();
    const named = rows.map(({ table, row }) => {
      const columns = columnsOf(table);
      expect(row, table).toHaveLength(columns.length);
      return [table, Object.fromEntries(columns.map((column, i) => [column.name, row[i]]))] as const;
    });
    expect(named).toEqual([
      ['households', { hh: 1, windfall_id: 'w1', data: '{}', postal: '30301', region: 'GA', city: 'atlanta', address_keys: '310|ridgewood ave|30301' }],
      ['addresses', { key: '310|ridgewood ave|30301', unit: '4b', hh: 1 }],
      ['blocks', { key: 'pn|30301|310', hh: 1 }],
      ['people', { p: 1, person_id: 'p1', hh: 1, first: 'meredith', last: 'stephenson', company: 'acme', has_career: 1 }],
      ['careers', { p: 1, career: '{"job_title":"VP"}' }],
      ['emails', { email: 'm@example.com', p: 1 }],
      ['phones', { phone: '+14045550101', p: 1 }],
      ['names', { last: 'stephenson', first_key: 'meredith', p: 1, company: 'acme', postal: '30301', city: 'atlanta', region: 'GA' }],
      ['blocks', { key: 'np|30301|STFN', hh: 1 }],
      ['people', { p: 2, person_id: 'p2', hh: null, first: 'bob', last: 'lee', company: '', has_career: 0 }],
      ['names', { last: 'lee', first_key: 'robert', p: 2, company: '', postal: '', city: '', region: '' }],
    ]);
  });
});
