// The SQLite connection Kysely is given prepares each distinct statement once (core/storage/statement-cache.ts).
import path from 'node:path';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import Database, { type BetterSqlite3 } from '../../core/storage/better-sqlite3.ts';
import { cachingStatements } from '../../core/storage/statement-cache.ts';
import { tempDir } from '../support/harness.ts';

function connection() {
  const db = new Database(path.join(tempDir(), 'statements.db'));
  db.exec('CREATE TABLE t (a INTEGER)');
  db.exec('INSERT INTO t VALUES (1), (2), (3)');
  return db;
}

describe('prepared statements reused', () => {
  it('prepares a statement once and hands the same one back for the same text', () => {
    const statements = cachingStatements(connection());
    const first = statements.prepare('SELECT a FROM t ORDER BY a');
    expect(statements.prepare('SELECT a FROM t ORDER BY a')).toBe(first);
    expect(statements.prepare('SELECT a FROM t ORDER BY a DESC')).not.toBe(first);
    statements.close();
  });

  it('hands a statement still being iterated to no second caller', () => {
    const db = connection();
    const statements = cachingStatements(db);
    const text = 'SELECT a FROM t ORDER BY a';
    const first = statements.prepare(text) as BetterSqlite3.Statement<[]>;
    const rows = first.iterate();
    expect(rows.next().value).toEqual({ a: 1 });
    const second = statements.prepare(text) as BetterSqlite3.Statement<[]>;
    expect(second).not.toBe(first);
    expect(second.all()).toEqual([{ a: 1 }, { a: 2 }, { a: 3 }]);
    expect([...rows]).toEqual([{ a: 2 }, { a: 3 }]);
    // Once the iteration ends, the cached statement is handed out again.
    expect(statements.prepare(text)).toBe(first);
    statements.close();
  });

  it('drops the least recently used statement past its size', () => {
    const statements = cachingStatements(connection(), 2);
    const a = statements.prepare('SELECT 1');
    const b = statements.prepare('SELECT 2');
    expect(statements.prepare('SELECT 1')).toBe(a);
    statements.prepare('SELECT 3');
    expect(statements.prepare('SELECT 1')).toBe(a);
    expect(statements.prepare('SELECT 2')).not.toBe(b);
    statements.close();
  });

  it('answers from a reused statement after the table it reads has changed', async () => {
    const db = new Kysely<{ t: { a: number } }>({ dialect: new SqliteDialect({ database: cachingStatements(connection()) }) });
    const read = () => sql<Record<string, unknown>>`SELECT * FROM t ORDER BY a LIMIT 1`.execute(db);
    expect((await read()).rows).toEqual([{ a: 1 }]);
    await sql`ALTER TABLE t ADD COLUMN b TEXT DEFAULT 'x'`.execute(db);
    expect((await read()).rows).toEqual([{ a: 1, b: 'x' }]);
    await db.destroy();
  });
});
