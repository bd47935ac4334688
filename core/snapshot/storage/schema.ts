// The snapshot schema, defined once: tables, columns, primary keys and indexes, rendered as SQLite DDL
// for a snapshot file and as PostgreSQL DDL for a snapshot schema, and the rows one household or person
// fans out into, which both writers take as they come. Names and types are what loaded snapshots hold.
import type { NewHousehold, NewPerson, PersonKeys } from '../port.ts';

/**
 * A column's logical type: `integer` numbers and references rows; `flag` is 0 or 1; `text` is read
 * whole; `key` is compared for equality only, so PostgreSQL stores it in byte order (COLLATE "C"),
 * which builds its indexes faster.
 */
export type ColumnType = 'integer' | 'flag' | 'text' | 'key';

export interface Column {
  readonly name: string;
  readonly type: ColumnType;
  /** NULL allowed; every other column is NOT NULL. */
  readonly nullable?: true;
}

export interface Table {
  readonly name: string;
  readonly columns: readonly Column[];
  readonly primaryKey?: string;
  /** Filled by the load's rows (the fan-out below); the others are written once, at the end. */
  readonly loaded: boolean;
}

const column = (name: string, type: ColumnType, extra: Pick<Column, 'nullable'> = {}): Column => ({ name, type, ...extra });

export const TABLES = [
  { name: 'meta', columns: [column('key', 'text'), column('value', 'text')], primaryKey: 'key', loaded: false },
  {
    name: 'households',
    columns: [
      column('hh', 'integer'),
      column('windfall_id', 'key'),
      column('data', 'text'),
      column('postal', 'text'),
      column('region', 'text'),
      column('city', 'text'),
      column('address_keys', 'text'),
    ],
    primaryKey: 'hh',
    loaded: true,
  },
  { name: 'addresses', columns: [column('key', 'key'), column('unit', 'key'), column('hh', 'integer')], loaded: true },
  {
    name: 'people',
    columns: [
      column('p', 'integer'),
      column('person_id', 'key'),
      column('hh', 'integer', { nullable: true }),
      column('first', 'text'),
      column('last', 'text'),
      column('company', 'text'),
      column('has_career', 'flag'),
    ],
    primaryKey: 'p',
    loaded: true,
  },
  // Career records apart: person rows stay small, so lookups that read many of them read few pages.
  { name: 'careers', columns: [column('p', 'integer'), column('career', 'text')], primaryKey: 'p', loaded: true },
  { name: 'emails', columns: [column('email', 'key'), column('p', 'integer')], loaded: true },
  { name: 'phones', columns: [column('phone', 'key'), column('p', 'integer')], loaded: true },
  {
    name: 'names',
    columns: [
      column('last', 'key'),
      column('first_key', 'key'),
      column('p', 'integer'),
      // With what a name lookup's scope compares (the person's employer, their household's place), so
      // the people outside the scope are passed over in the index, never read. A SQLite file loaded
      // before these columns has the first three only; its reader filters the people it finds instead.
      column('company', 'key'),
      column('postal', 'key'),
      column('city', 'key'),
      column('region', 'key'),
    ],
    loaded: true,
  },
  // Blocking keys (block-keys.ts): the candidates a record with a typo in one field still finds.
  { name: 'blocks', columns: [column('key', 'key'), column('hh', 'integer')], loaded: true },
] as const satisfies readonly Table[];

export type TableName = (typeof TABLES)[number]['name'];
/** The tables a load's rows fill. */
export type LoadedTable = Extract<(typeof TABLES)[number], { loaded: true }>['name'];

export const LOADED_TABLES: readonly LoadedTable[] = TABLES.flatMap((table) => (table.loaded ? [table.name] : []));

export interface Index {
  readonly name: string;
  readonly table: LoadedTable;
  readonly columns: readonly string[];
  readonly unique?: true;
  /**
   * Columns carried in the index's leaves, so a lookup reads no table row: INCLUDE on PostgreSQL, after
   * the key columns on SQLite (which has no INCLUDE).
   */
  readonly include?: readonly string[];
}

/**
 * Built after the rows are in: far faster than maintaining them row by row. Each lookup index carries
 * the column results are ordered by, so no query sorts.
 */
export const INDEXES: readonly Index[] = [
  { name: 'households_windfall_id', table: 'households', columns: ['windfall_id'], unique: true },
  { name: 'addresses_key', table: 'addresses', columns: ['key', 'hh', 'unit'] },
  { name: 'people_person_id', table: 'people', columns: ['person_id'], unique: true },
  { name: 'people_hh', table: 'people', columns: ['hh'] },
  { name: 'emails_email', table: 'emails', columns: ['email', 'p'] },
  { name: 'phones_phone', table: 'phones', columns: ['phone', 'p'] },
  { name: 'names_last_first', table: 'names', columns: ['last', 'first_key', 'p'], include: ['company', 'postal', 'city', 'region'] },
  { name: 'blocks_key', table: 'blocks', columns: ['key', 'hh'] },
];

export function tableNamed(name: TableName): Table {
  const table = TABLES.find((candidate) => candidate.name === name);
  if (table === undefined) throw new Error(`no snapshot table ${name}`);
  return table;
}

/** A table's columns, in order (both dialects store the same). */
export function columnsOf(name: TableName): readonly Column[] {
  return tableNamed(name).columns;
}

// SQLite: a primary key is declared with its table (an INTEGER PRIMARY KEY is the rowid, which cannot
// be added later); the indexes are built after the rows.

const SQLITE_TYPES: Record<ColumnType, string> = { integer: 'INTEGER', flag: 'INTEGER', text: 'TEXT', key: 'TEXT' };

function sqliteColumn(table: Table, { name, type, nullable }: Column): string {
  if (name === table.primaryKey) return `${name} ${SQLITE_TYPES[type]} PRIMARY KEY`;
  return `${name} ${SQLITE_TYPES[type]}${nullable === true ? '' : ' NOT NULL'}`;
}

/** Every table of a snapshot file. */
export function sqliteTables(): string[] {
  return TABLES.map(
    (table) =>
      `CREATE TABLE ${table.name} (${columnsOf(table.name)
        .map((c) => sqliteColumn(table, c))
        .join(', ')})`,
  );
}

/** Every index of a snapshot file, to run once its rows are in. */
export function sqliteIndexes(): string[] {
  return INDEXES.map(
    (index) =>
      `CREATE ${index.unique === true ? 'UNIQUE ' : ''}INDEX ${index.name} ON ${index.table} (${[...index.columns, ...(index.include ?? [])].join(', ')})`,
  );
}

// PostgreSQL: statements name the snapshot's schema as `S.` (inSchema fills it in). A table the load
// fills by COPY gets its primary key after its rows, with the indexes; meta, written at the end, with
// the table.

const POSTGRES_TYPES: Record<ColumnType, string> = { integer: 'integer', flag: 'smallint', text: 'text', key: 'text COLLATE "C"' };

function postgresColumn(table: Table, { name, type, nullable }: Column): string {
  if (name === table.primaryKey && !table.loaded) return `${name} ${POSTGRES_TYPES[type]} PRIMARY KEY`;
  return `${name} ${POSTGRES_TYPES[type]}${nullable === true ? '' : ' NOT NULL'}`;
}

/** Every table of a snapshot schema. */
export function postgresTables(): string[] {
  return TABLES.map(
    (table) =>
      `CREATE TABLE S.${table.name} (${columnsOf(table.name)
        .map((c) => postgresColumn(table, c))
        .join(', ')})`,
  );
}

/** The COPY that fills a loaded table. */
export function postgresCopy(table: LoadedTable): string {
  return `COPY S.${table} (${columnsOf(table)
    .map((c) => c.name)
    .join(', ')}) FROM STDIN`;
}

/**
 * Which of two connections builds each table's primary key and indexes once the rows are in: the
 * people's side and the households' side, about equal work, run side by side (two cores).
 */
const POSTGRES_BUILD_LANE: Record<LoadedTable, 0 | 1> = { people: 0, names: 0, careers: 0, households: 1, addresses: 1, emails: 1, phones: 1, blocks: 1 };

/** The primary keys and indexes of a snapshot schema in two lists, each run in order on a connection of its own. */
export function postgresIndexBuilds(): string[][] {
  const lanes: [string[], string[]] = [[], []];
  for (const table of TABLES) {
    if (!table.loaded) continue;
    const lane = lanes[POSTGRES_BUILD_LANE[table.name]];
    if ('primaryKey' in table) lane.push(`ALTER TABLE S.${table.name} ADD PRIMARY KEY (${table.primaryKey})`);
    for (const index of INDEXES) {
      if (index.table !== table.name) continue;
      const include = index.include === undefined ? '' : ` INCLUDE (${index.include.join(', ')})`;
      lane.push(`CREATE ${index.unique === true ? 'UNIQUE ' : ''}INDEX ${index.name} ON S.${index.table} (${index.columns.join(', ')})${include}`);
    }
  }
  return lanes;
}

export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** A statement written against `S.` run in the given schema. */
export function inSchema(statement: string, schema: string): string {
  return statement.replace(/\bS\./g, `${quoteIdent(schema)}.`);
}

// The rows of a load, the same for both writers.

export type Row = readonly (string | number | null)[];
export type RowSink = (table: LoadedTable, row: Row) => void;

/**
 * Numbers households and people from 1 and turns each into its rows, in the tables' columns and
 * order, handing every row to the writer's sink.
 */
export class RowFanOut {
  private nextHousehold = 1;
  private nextPerson = 1;

  constructor(private readonly sink: RowSink) {}

  household(household: NewHousehold, addresses: readonly { key: string; unit: string }[]): number {
    const hh = this.nextHousehold;
    this.nextHousehold += 1;
    const keys = addresses.map((address) => address.key).join('\n');
    this.sink('households', [hh, household.windfallId, household.data, household.postal, household.region, household.city, keys]);
    for (const address of addresses) this.sink('addresses', [address.key, address.unit, hh]);
    for (const key of household.blocks) this.sink('blocks', [key, hh]);
    return hh;
  }

  person(person: NewPerson, keys: PersonKeys): void {
    const p = this.nextPerson;
    this.nextPerson += 1;
    this.sink('people', [p, person.personId, person.hh, person.first, person.last, person.company, person.career === null ? 0 : 1]);
    if (person.career !== null) this.sink('careers', [p, person.career]);
    for (const email of keys.emails) this.sink('emails', [email, p]);
    for (const phone of keys.phones) this.sink('phones', [phone, p]);
    if (person.last !== '') {
      const { postal, city, region } = keys.place ?? { postal: '', city: '', region: '' };
      for (const key of keys.firstKeys) this.sink('names', [person.last, key, p, person.company, postal, city, region]);
    }
    if (person.hh !== null) for (const key of keys.blocks) this.sink('blocks', [key, person.hh]);
  }

  block(key: string, hh: number): void {
    this.sink('blocks', [key, hh]);
  }
}
