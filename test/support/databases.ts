// The databases the storage suites run on: SQLite always, PostgreSQL whenever TEST_DATABASE_URL is set
// (.ci/run sets it to a database made for the run). Each store a test opens on PostgreSQL gets a schema
// of its own (search_path in the URL), so test files running side by side never see each other's rows.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import pg from 'pg';
import { tempDir } from './harness.ts';

export interface TestDatabase {
  readonly name: 'SQLite' | 'PostgreSQL';
  /** A new, empty database: a SQLite file's path, or a PostgreSQL URL whose search_path is a fresh schema. */
  readonly fresh: () => Promise<string>;
}

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL;

const sqlite: TestDatabase = { name: 'SQLite', fresh: () => Promise.resolve(path.join(tempDir(), 'eb.db')) };

/** A schema of its own on the test database; the URL names it as the search_path. */
export async function freshPostgresSchema(url: string): Promise<string> {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA ${schema}`);
  } finally {
    await client.end();
  }
  // Percent-encoded by hand: URLSearchParams would write the space as "+", which the driver keeps.
  return `${url}${url.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
}

const postgres = (url: string): TestDatabase => ({ name: 'PostgreSQL', fresh: () => freshPostgresSchema(url) });

/** SQLite, and PostgreSQL when the run has one. */
export const TEST_DATABASES: readonly TestDatabase[] =
  TEST_DATABASE_URL === undefined || TEST_DATABASE_URL === '' ? [sqlite] : [sqlite, postgres(TEST_DATABASE_URL)];
