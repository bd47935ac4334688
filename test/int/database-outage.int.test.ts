// PostgreSQL going away under a process (a restart, a failover, a network blip), through a TCP relay the
// test cuts: the work in flight fails as "database unavailable" (so a webhook answers 503 and a job is
// retried), the process never dies of it, and everything works again once the database is back.
import { sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { isDatabaseUnavailable } from '../../core/storage/errors.ts';
import { PostgresListener, channelSql } from '../../core/storage/postgres-listener.ts';
import { openPostgresStore } from '../../core/storage/postgres.ts';
import { TEST_DATABASE_URL, freshPostgresSchema } from '../support/databases.ts';
import { caught } from '../support/harness.ts';
import { TcpOutage } from '../support/tcp-outage.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(TEST_DATABASE_URL === undefined || TEST_DATABASE_URL === '')('a PostgreSQL connection that drops', () => {
  async function throughRelay(): Promise<{ url: string; schema: string; outage: TcpOutage }> {
    const url = await freshPostgresSchema(TEST_DATABASE_URL ?? '');
    const schema = /search_path=(\w+)/.exec(decodeURIComponent(url))?.[1] ?? '';
    const outage = await TcpOutage.start(url);
    cleanups.push(() => outage.close());
    return { url: outage.url, schema, outage };
  }

  it('fails the transaction that held it as database unavailable, and the process carries on', async () => {
    const { url, outage } = await throughRelay();
    const { db, store } = await openPostgresStore(url);
    cleanups.push(() => store.close());
    // Between two statements of a transaction the connection is checked out with no query running:
    // node-postgres then reports the loss as an 'error' event on the client, which nothing but our own
    // listener would catch (the pool's listens on idle clients only).
    const error = await caught(
      db.transaction().execute(async (trx) => {
        await sql`SELECT 1`.execute(trx);
        outage.cut();
        await sleep(200);
        await sql`SELECT 1`.execute(trx);
      }),
    );
    expect(isDatabaseUnavailable(error)).toBe(true);
    // While it is away, a query fails the same way (refused), not with a hang or a crash.
    expect(isDatabaseUnavailable(await caught(store.countAccounts()))).toBe(true);
    outage.restore();
    expect(await store.countAccounts()).toBe(0);
  });

  it('fails a query whose connection drops mid-statement as database unavailable', async () => {
    const { url, outage } = await throughRelay();
    const { db, store } = await openPostgresStore(url);
    cleanups.push(() => store.close());
    const slow = sql`SELECT pg_sleep(2)`.execute(db);
    await sleep(300);
    outage.cut();
    expect(isDatabaseUnavailable(await caught(slow))).toBe(true);
    outage.restore();
    expect(await store.countAccounts()).toBe(0);
  });

  it('the LISTEN connection comes back with the database and hears notifications again', async () => {
    const { url, schema, outage } = await throughRelay();
    const listener = new PostgresListener(url, channelSql('jobs'));
    cleanups.push(() => listener.close());
    let heard = 0;
    listener.subscribe(() => (heard += 1));
    // Subscribers are told once the connection listens (what was announced before it, late, not lost).
    await vi.waitFor(() => expect(heard).toBeGreaterThan(0), { timeout: 10_000 });
    outage.cut();
    await sleep(500);
    outage.restore();
    const before = heard;
    await vi.waitFor(() => expect(heard).toBeGreaterThan(before), { timeout: 15_000, interval: 50 });
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    cleanups.push(() => admin.end());
    const reconnected = heard;
    await admin.query(`NOTIFY "eb_jobs:${schema}"`);
    await vi.waitFor(() => expect(heard).toBeGreaterThan(reconnected), { timeout: 5_000, interval: 20 });
  });

  it('long-lived connections send TCP keepalives, so a peer that vanished without a word is found', async () => {
    const { url } = await throughRelay();
    const { pool, store } = await openPostgresStore(url);
    cleanups.push(() => store.close());
    // The socket's keepalive is set from the pool's options when each connection is made.
    expect((pool as unknown as { options: { keepAlive?: boolean } }).options.keepAlive).toBe(true);
  });
});
