// The political-data entitlement in the store, on SQLite and on PostgreSQL (TEST_DATABASE_URL): a new
// account starts without it, an operator grants and withdraws it, an account that existed before the
// entitlement did keeps the political fields it was answered, and the first-start demo has it.
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccount, createDemo, updateAccount } from '../../core/accounts/admin.ts';
import { CORE_MIGRATIONS } from '../../core/storage/schema.ts';
import { openStorage } from '../../bridge/storage.ts';
import { TEST_DATABASES } from '../support/databases.ts';

const MIGRATION = '0023_political_entitlement';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function open(location: string) {
  const opened = await openStorage(location);
  closers.push(() => opened.store.close());
  return opened;
}

describe.each(TEST_DATABASES)('political data on $name', (database) => {
  it('new accounts are not entitled to political fields by default; an operator grants and withdraws them', async () => {
    const location = await database.fresh();
    const first = await openStorage(location);
    expect((await createAccount(first.store, 'plain', {})).politicalData).toBe(false);
    expect((await createAccount(first.store, 'granted', { politicalData: true })).politicalData).toBe(true);
    await first.store.close();

    const { store } = await open(location);
    expect((await store.findAccountByName('plain'))?.politicalData).toBe(false);
    expect((await store.findAccountByName('granted'))?.politicalData).toBe(true);
    await updateAccount(store, 'plain', { politicalData: true });
    await updateAccount(store, 'granted', { politicalData: false });
    expect((await store.findAccountByName('plain'))?.politicalData).toBe(true);
    expect((await store.findAccountByName('granted'))?.politicalData).toBe(false);
    // Another setting changed leaves the entitlement as it is.
    await updateAccount(store, 'plain', { rateLimit: 7 });
    expect(await store.findAccountByName('plain')).toMatchObject({ politicalData: true, rateLimit: 7 });
  });

  it('existing accounts keep their political fields after the migration; accounts created after it do not get them', async () => {
    const location = await database.fresh();
    // The database as it was before the entitlement existed: the migration undone and forgotten.
    const before = await openStorage(location);
    await createAccount(before.store, 'earlier', { careerIntelligence: true });
    const migration = CORE_MIGRATIONS[MIGRATION];
    if (migration?.down === undefined) throw new Error(`${MIGRATION} must be reversible`);
    await migration.down(before.db);
    await sql`DELETE FROM kysely_migration WHERE name = ${MIGRATION}`.execute(before.db);
    await before.store.close();

    const { store } = await open(location);
    expect(await store.findAccountByName('earlier')).toMatchObject({ careerIntelligence: true, politicalData: true });
    expect((await createAccount(store, 'later', {})).politicalData).toBe(false);
    expect((await store.findAccountByName('later'))?.politicalData).toBe(false);
  });

  it('the first-start demo account is entitled to political fields, to show the whole contract', async () => {
    const { store } = await open(await database.fresh());
    const { account } = await createDemo(store);
    expect(account).toMatchObject({ careerIntelligence: true, politicalData: true, householdFields: 'all' });
    expect((await store.findAccountByName(account.name))?.politicalData).toBe(true);
  });
});
