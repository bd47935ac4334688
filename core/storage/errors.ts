// Driver errors the storage code must tell apart, recognised in one place for every SQL dialect.

/** A unique-constraint violation from better-sqlite3 (SQLite) or node-postgres (PostgreSQL). */
export function isUniqueViolation(error: unknown): boolean {
  if (!(error instanceof Error) || !('code' in error)) return false;
  return error.code === 'SQLITE_CONSTRAINT_UNIQUE' || error.code === '23505';
}

/**
 * Another connection holds the write lock and did not let go within busy_timeout (SQLITE_BUSY and
 * its extended codes), or PostgreSQL's lock_not_available, deadlock_detected or
 * serialization_failure (each rolls the statement or transaction back whole): retry later, the
 * request was not wrong.
 */
export function isDatabaseBusy(error: unknown): boolean {
  if (!(error instanceof Error) || !('code' in error) || typeof error.code !== 'string') return false;
  return error.code === 'SQLITE_BUSY' || error.code.startsWith('SQLITE_BUSY_') || ['55P03', '40P01', '40001'].includes(error.code);
}

/**
 * The database DATABASE_URL names does not exist on its server (PostgreSQL's invalid_catalog_name,
 * 3D000): the server answers, but nothing can be opened until the operator creates it.
 */
export function isMissingDatabase(error: unknown): boolean {
  return error instanceof Error && 'code' in error && error.code === '3D000';
}

/** About 3 s in all: longer than any write the server or a CLI command holds the lock for. */
const BUSY_RETRY_MS = [10, 20, 40, 80, 160, 320, 640, 1280] as const;

/**
 * Runs an atomic unit of storage work (one statement, or one transaction, which SQLite rolls back
 * whole on SQLITE_BUSY) again while the database is locked by another connection, waiting on a timer
 * in between so the event loop serves others meanwhile. Anything but a busy database is thrown at once.
 */
export async function retryWhileBusy<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await work();
    } catch (error) {
      const delay = BUSY_RETRY_MS[attempt];
      if (delay === undefined || !isDatabaseBusy(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

/** SQLSTATE classes and codes that mean the database could not be reached or went away mid-statement. */
const UNAVAILABLE_SQLSTATES = ['57P01', '57P02', '57P03', '53300'] as const;
const UNAVAILABLE_SOCKET_CODES = ['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN'] as const;

/**
 * The database is unreachable or dropped the connection (a restart, a failover, a network blip), as
 * opposed to a statement it refused: what was asked may be asked again later. node-postgres reports a
 * lost connection with a plain Error ("Connection terminated unexpectedly", a connect timeout), a socket
 * error code, or SQLSTATE class 08 and the shutdown codes of class 57.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = 'code' in error && typeof error.code === 'string' ? error.code : undefined;
  if (code !== undefined) {
    if (code.startsWith('08') || (UNAVAILABLE_SQLSTATES as readonly string[]).includes(code)) return true;
    if ((UNAVAILABLE_SOCKET_CODES as readonly string[]).includes(code)) return true;
  }
  if (/^Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error and is not queryable/.test(error.message))
    return true;
  return error.cause !== undefined && error.cause !== error && isDatabaseUnavailable(error.cause);
}

/** What may be said of a driver's error: its code and the names of what it concerns, never a value. */
export interface DatabaseErrorFacts {
  /** SQLSTATE (PostgreSQL) or SQLITE_… (SQLite). */
  readonly code: string;
  readonly constraint?: string;
  readonly table?: string;
  readonly schema?: string;
  readonly column?: string;
}

const NAME_FIELDS = ['constraint', 'table', 'schema', 'column'] as const;

/**
 * The facts of a PostgreSQL error (a SQLSTATE and the fields node-postgres names from the server's
 * answer) or a SQLite one (an SQLITE_ code); null for any other error. A PostgreSQL error's detail,
 * where, hint and internal query quote the row's values and the statement, and its message can quote
 * an input ("invalid input syntax for type uuid: …"): none of them is read here.
 */
export function databaseErrorOf(error: unknown): DatabaseErrorFacts | null {
  if (typeof error !== 'object' || error === null || !('code' in error) || typeof error.code !== 'string') return null;
  const { code } = error;
  // Every SQLSTATE has a digit, and no class starts with E (errno codes do: EPIPE, E2BIG).
  const postgres = 'severity' in error ? /^[0-9A-Z]{5}$/.test(code) : /^(?=.*\d)[0-9A-DF-Z][0-9A-Z]{4}$/.test(code);
  if (!postgres && !code.startsWith('SQLITE_')) return null;
  const names: { -readonly [K in (typeof NAME_FIELDS)[number]]?: string } = {};
  for (const field of NAME_FIELDS) {
    const value: unknown = Reflect.get(error, field);
    if (typeof value === 'string' && value !== '') names[field] = value;
  }
  // SQLite names what a constraint concerns only in its message: "UNIQUE constraint failed: people.email"
  // (a table and column), "CHECK constraint failed: positive_amount" (a constraint). Names, never values.
  const message: unknown = Reflect.get(error, 'message');
  const failed = !postgres && typeof message === 'string' ? /constraint failed: ([A-Za-z_]\w*)(?:\.([A-Za-z_]\w*))?/.exec(message) : null;
  if (failed?.[1] !== undefined) {
    if (failed[2] === undefined) names.constraint = failed[1];
    else Object.assign(names, { table: failed[1], column: failed[2] });
  }
  return { code, ...names };
}
