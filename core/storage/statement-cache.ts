// Kysely's SQLite driver prepares every statement it runs, each time it runs it: for the bridge's
// hot statements (a webhook's insert, a worker's claim, its multi-row inserts of 100 rows) SQLite's
// parse and plan cost more than the run (prepare was 7 % of a draining server's CPU: bench:hubspot).
// The connection Kysely is given here prepares each distinct SQL text once and hands back the same
// statement after that, the least recently used ones dropped past the cache's size.
import type { SqliteDatabase, SqliteStatement } from 'kysely';
import type { BetterSqlite3 } from './better-sqlite3.ts';

/**
 * Distinct SQL texts kept prepared. A small statement holds a few kilobytes, but multi-row inserts make
 * one text per row count, and a 100-row insert of 16 columns holds about 80 KB (100 inserts of 1 to 100
 * rows: 8 MB): this many keeps the hot ones and bounds the memory at some tens of megabytes at worst.
 */
export const STATEMENT_CACHE_SIZE = 200;

/**
 * `connection` as Kysely's SQLite dialect takes it, reusing prepared statements. A statement another
 * caller is still iterating (a streamed select) is never handed out again: that caller gets one of its own.
 */
export function cachingStatements(connection: BetterSqlite3.Database, size = STATEMENT_CACHE_SIZE): SqliteDatabase {
  const cache = new Map<string, BetterSqlite3.Statement>();
  return {
    close: () => {
      cache.clear();
      connection.close();
    },
    prepare(sql: string): SqliteStatement {
      const cached = cache.get(sql);
      if (cached !== undefined && !cached.busy) {
        // Most recently used last: Map keeps insertion order, so the first key is the one to drop.
        cache.delete(sql);
        cache.set(sql, cached);
        return cached;
      }
      const statement = connection.prepare(sql);
      if (cached !== undefined) return statement;
      cache.set(sql, statement);
      if (cache.size > size) {
        const oldest = cache.keys().next();
        if (oldest.done !== true) cache.delete(oldest.value);
      }
      return statement;
    },
  };
}
