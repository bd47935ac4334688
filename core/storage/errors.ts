// Driver errors the storage code must tell apart, recognised in one place for every SQL dialect.

/** A unique-constraint violation from better-sqlite3 (SQLite) or node-postgres (PostgreSQL). */
export function isUniqueViolation(error: unknown): boolean {
  if (!(error instanceof Error) || !('code' in error)) return false;
  return error.code === 'SQLITE_CONSTRAINT_UNIQUE' || error.code === '23505';
}
