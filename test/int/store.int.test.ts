// The storage port on a real SQLite file and on PostgreSQL (TEST_DATABASE_URL): accounts, tokens,
// revocation, and quota consumption that stays atomic when several processes take from one ledger at
// the same time.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccount, describeAccount, issueToken } from '../../core/accounts/admin.ts';
import { hashToken } from '../../core/accounts/tokens.ts';
import { DuplicateAccountError } from '../../core/storage/port.ts';
import { sql } from 'kysely';
import { openStorage } from '../../bridge/storage.ts';
import { openPostgresStore } from '../../core/storage/postgres.ts';
import { TEST_DATABASES } from '../support/databases.ts';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function open(location: string) {
  const opened = await openStorage(location);
  closers.push(() => opened.store.close());
  return opened;
}

describe.each(TEST_DATABASES)('Store on $name', (database) => {
  it('creates a fresh file, then reopens and migrates an existing one without loss', async () => {
    const file = await database.fresh();
    const first = await openStorage(file);
    expect(await first.store.countAccounts()).toBe(0);
    await createAccount(first.store, 'kept', { careerIntelligence: true, householdFields: 'net_worth' });
    await first.store.close();
    const again = await open(file);
    expect(await again.store.countAccounts()).toBe(1);
    const account = await again.store.findAccountByName('kept');
    expect(account).toMatchObject({ name: 'kept', careerIntelligence: true, householdFields: ['net_worth'], careerFields: 'all', rateLimit: 5 });
    expect(await again.store.findAccountById(account?.id ?? '')).toEqual(account);
    expect(await again.store.findAccountById('acct_missing')).toBeUndefined();
  });

  it('refuses a second account with the same name', async () => {
    const { store } = await open(await database.fresh());
    await createAccount(store, 'acme', {});
    await expect(createAccount(store, 'acme', {})).rejects.toBeInstanceOf(DuplicateAccountError);
  });

  it('finds a live token by hash only, and not after revocation', async () => {
    const { store } = await open(await database.fresh());
    await createAccount(store, 'acme', {});
    const { token, record } = await issueToken(store, 'acme', 'sandbox');
    expect((await store.findLiveToken(hashToken(token)))?.token.id).toBe(record.id);
    expect(await store.revokeToken({ id: record.id })).toBe(true);
    expect(await store.findLiveToken(hashToken(token))).toBeUndefined();
    expect(await store.revokeToken({ id: record.id })).toBe(false);
  });

  it('shows quota used and remaining per production token', async () => {
    const { store } = await open(await database.fresh());
    await createAccount(store, 'acme', { quotaLimit: 10, quotaPeriod: 'month' });
    const { record } = await issueToken(store, 'acme', 'production');
    await issueToken(store, 'acme', 'sandbox');
    const now = new Date('2026-11-21T12:00:00Z');
    await store.takeQuota(record.id, '2026-11-01', 10);
    await store.takeQuota(record.id, '2026-11-01', 10);
    const { tokens } = await describeAccount(store, 'acme', now);
    const production = tokens.find((t) => t.token.environment === 'production');
    expect(production?.quota).toEqual({ used: 2, remaining: 8, resetsAt: new Date('2026-12-01T00:00:00Z') });
    expect(tokens.find((t) => t.token.environment === 'sandbox')?.quota).toBeUndefined();
  });

  it('takes arriving together are granted up to the limit and no further, each with its own count', async () => {
    const { store } = await open(await database.fresh());
    await createAccount(store, 'together', { quotaLimit: 10 });
    const { record } = await issueToken(store, 'together', 'production');
    const { record: other } = await issueToken(store, 'together', 'production');
    await store.takeQuota(record.id, 'p', 10);
    // 25 takes in one turn for a token with 1 taken already, and 4 for another: one group each.
    const takes = await Promise.all([
      ...Array.from({ length: 25 }, () => store.takeQuota(record.id, 'p', 10)),
      ...Array.from({ length: 4 }, () => store.takeQuota(other.id, 'p', 10)),
    ]);
    const mine = takes.slice(0, 25);
    expect(mine.filter((t) => t.granted)).toHaveLength(9);
    expect(
      mine
        .filter((t) => t.granted)
        .map((t) => t.used)
        .sort((a, b) => a - b),
    ).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(mine.filter((t) => !t.granted).every((t) => t.used === 10)).toBe(true);
    expect(takes.slice(25).map((t) => [t.granted, t.used])).toEqual([
      [true, 1],
      [true, 2],
      [true, 3],
      [true, 4],
    ]);
    expect(await store.quotaUsed(record.id, 'p')).toBe(10);
  });

  it('never takes more than the limit when four processes race for one ledger', async () => {
    const file = await database.fresh();
    const { store } = await openStorage(file);
    await createAccount(store, 'race', { quotaLimit: 50 });
    const { record } = await issueToken(store, 'race', 'production');
    await store.close();

    const script = path.resolve('test/support/quota-taker.ts');
    const takers = Array.from(
      { length: 4 },
      () =>
        new Promise<number>((resolve, reject) => {
          const child = spawn(process.execPath, ['--import', 'tsx', script, file, record.id, '50', '40'], { stdio: ['ignore', 'pipe', 'inherit'] });
          let out = '';
          child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
          child.on('error', reject);
          child.on('exit', (code) => (code === 0 ? resolve(Number(out.trim())) : reject(new Error(`taker exited ${code}`))));
        }),
    );
    const granted = await Promise.all(takers);
    expect(granted.reduce((a, b) => a + b, 0)).toBe(50);
    const check = await open(file);
    expect(await check.store.quotaUsed(record.id, 'all')).toBe(50);
  });
});

// PostgreSQL only: SQLite has no per-transaction commit setting (its WAL runs synchronous=NORMAL throughout).
describe.each(TEST_DATABASES.filter((database) => database.name === 'PostgreSQL'))('Quota takes on $name', (database) => {
  it('a grouped take’s commit that does not wait for the disk stays its own: the connection’s next statements still wait', async () => {
    const location = await database.fresh();
    // One connection: the statements after the take run where the take ran.
    const { store, db } = await openPostgresStore(location, { poolSize: 1 });
    closers.push(() => store.close());
    await createAccount(store, 'relaxed', { quotaLimit: 100 });
    const { record } = await issueToken(store, 'relaxed', 'production');
    const takes = await Promise.all(Array.from({ length: 5 }, () => store.takeQuota(record.id, 'p', 100)));
    expect(takes.map((take) => take.used).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5]);
    // The relaxed commit was the take's own transaction's: the session (where a webhook's acknowledged
    // insert may run next) commits synchronously as configured.
    const { rows } = await sql<{ synchronous_commit: string }>`SHOW synchronous_commit`.execute(db);
    expect(rows[0]?.synchronous_commit).toBe('on');
    expect(await store.quotaUsed(record.id, 'p')).toBe(5);
  });
});
