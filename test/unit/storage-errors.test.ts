// Driver errors the storage code tells apart (core/storage/errors.ts), for both databases.
import { describe, expect, it } from 'vitest';
import { isDatabaseBusy, isUniqueViolation } from '../../core/storage/errors.ts';

const driverError = (code: string): Error => Object.assign(new Error(code), { code });

describe('storage errors', () => {
  it('a busy SQLite file, and a PostgreSQL lock wait, deadlock or serialization failure, are busy: retried later', () => {
    for (const code of ['SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT', '55P03', '40P01', '40001']) expect(isDatabaseBusy(driverError(code)), code).toBe(true);
    for (const code of ['23505', 'SQLITE_CONSTRAINT_UNIQUE', '42P01']) expect(isDatabaseBusy(driverError(code)), code).toBe(false);
  });

  it('a unique violation is one in either database, and nothing else is', () => {
    expect(isUniqueViolation(driverError('23505'))).toBe(true);
    expect(isUniqueViolation(driverError('SQLITE_CONSTRAINT_UNIQUE'))).toBe(true);
    expect(isUniqueViolation(driverError('40P01'))).toBe(false);
  });
});
