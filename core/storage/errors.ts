// Driver errors the storage code must tell apart, recognised in one place for every SQL dialect.

/** A unique-constraint violation from better-sqlite3 (SQLite) or node-postgres (PostgreSQL). */
export function isUniqueViolation(error: unknown): boolean {
  if (!(error instanceof Error) || !('code' in error)) return false;
  return error.code === 'SQLITE_CONSTRAINT_UNIQUE' || error.code === '23505';
}

/**
 * Another connection holds the write lock and did not let go within busy_timeout (SQLITE_BUSY and
 * its extended codes), or PostgreSQL's lock_not_available: retry later, the request was not wrong.
 */
export function isDatabaseBusy(error: unknown): boolean {
  if (!(error instanceof Error) || !('code' in error) || typeof error.code !== 'string') return false;
  return error.code === 'SQLITE_BUSY' || error.code.startsWith('SQLITE_BUSY_') || error.code === '55P03';
}
