// Migrations on PostgreSQL while other schemas come and go in the same database: a data load or its
// retention drops snapshot schemas, tests drop theirs. Kysely's own introspector reads every schema
// by name (has_schema_privilege, pg_get_serial_sequence), so one dropped mid-query failed an
// instance's start with 3F000; ours reads the service's own schema only (core/storage/postgres.ts).
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openPostgresStore } from '../../core/storage/postgres.ts';
import { TEST_DATABASE_URL, freshPostgresSchema } from '../support/databases.ts';

describe.skipIf(TEST_DATABASE_URL === undefined || TEST_DATABASE_URL === '')('migrations beside schemas being dropped', () => {
  it('start (and migrate) while another connection creates and drops schemas without pause', async () => {
    const churn = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await churn.connect();
    let stop = false;
    const tag = `race_${process.pid}_${Date.now()}`;
    const churning = (async () => {
      for (let i = 0; !stop; i += 1) {
        await churn.query(`CREATE SCHEMA ${tag}_${i}; CREATE TABLE ${tag}_${i}.t (id serial primary key, v text)`);
        await churn.query(`DROP SCHEMA ${tag}_${i} CASCADE`);
      }
    })();
    try {
      for (let n = 0; n < 12; n += 1) {
        const { store } = await openPostgresStore(await freshPostgresSchema(TEST_DATABASE_URL ?? ''));
        expect(await store.countAccounts()).toBe(0);
        await store.close();
      }
    } finally {
      stop = true;
      await churning;
      await churn.end();
    }
  }, 60_000);
});
