// Several instances on one PostgreSQL and one Redis, as an operator runs them: two `npm start`
// processes, no proxy in front (the test spreads the requests itself). One token's requests spread
// over both are admitted at most 5 per 950 ms in all, and a quota is never exceeded by requests racing
// to both. Each has a data folder of its own, as on two hosts: the data snapshot a `data load` on a
// third puts in PostgreSQL reaches both. Runs when the run has both servers (TEST_DATABASE_URL,
// TEST_REDIS_URL; .ci/run sets them). Accounts and tokens are made and read back in-process on the same
// database, as `accounts` and `tokens` commands would (each CLI start costs seconds of CPU); the
// `data load` runs as the command.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createAccount, describeAccount, issueToken } from '../../core/accounts/admin.ts';
import type { Store } from '../../core/storage/port.ts';
import { openDataFolder } from '../../server/runtime.ts';
import { post, tempDir } from '../support/harness.ts';
import { TEST_DATABASE_URL, freshPostgresSchema } from '../support/databases.ts';
import { type Proc, cli, startServerProcess } from '../support/processes.ts';
import { TEST_REDIS_URL, freshPrefix } from '../support/redis.ts';
import { byEmail, persona } from '../support/requests.ts';
import { household, person, writeSnapshot } from '../support/snapshot-fixture.ts';

const running: Proc[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((proc) => proc.stop()));
});

/** Runs `work` on the store of the database `env` names, opened in-process as a command would open it. */
async function inDatabase<T>(env: Record<string, string>, work: (store: Store) => Promise<T>): Promise<T> {
  const { store } = await openDataFolder(env.DATA_DIR ?? '', { databaseUrl: env.DATABASE_URL ?? null });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/** Two instances as on two hosts: a data folder each, one secret key, one database, one Redis. */
async function twoInstances(): Promise<{ env: Record<string, string>; urls: [string, string] }> {
  const env = {
    DATA_DIR: tempDir(),
    ENRICHBRIDGE_SECRET_KEY: randomBytes(32).toString('hex'),
    DATABASE_URL: await freshPostgresSchema(TEST_DATABASE_URL ?? ''),
    REDIS_URL: TEST_REDIS_URL ?? '',
    REDIS_KEY_PREFIX: freshPrefix(),
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    REQUIRE_HTTPS: 'false',
  };
  await inDatabase(env, () => Promise.resolve()); // migrates once, before the two start side by side
  const [a, b] = await Promise.all([startServerProcess({ ...env, DATA_DIR: tempDir() }), startServerProcess({ ...env, DATA_DIR: tempDir() })]);
  running.push(a.proc, b.proc);
  return { env, urls: [a.url, b.url] };
}

// Skipped only where the run has no PostgreSQL or no Redis (a quick local run); CI always has both.
describe.skipIf(TEST_DATABASE_URL === undefined || TEST_DATABASE_URL === '' || TEST_REDIS_URL === undefined)('two instances', () => {
  it("admit one token's requests spread over both at most 5 per 950 ms in all", async () => {
    const { env, urls } = await twoInstances();
    // As `accounts create acme` and `tokens create acme --env sandbox` would.
    const token = await inDatabase(env, async (store) => {
      await createAccount(store, 'acme', {});
      return (await issueToken(store, 'acme', 'sandbox')).token;
    });
    const body = byEmail(persona('Amanda Taylor'));
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => post(`${urls[i % 2]}/sandbox/v1`, body, { 'X-WF-Auth-Token': token })));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(5);
    expect(replies.filter((r) => r.status === 429)).toHaveLength(15);
    // Each instance had 10 of them and refused some: the budget is one, not one each.
    expect(new Set(replies.flatMap((r, i) => (r.status === 429 ? [i % 2] : []))).size).toBe(2);
  });

  it('never exceed a quota of 7 with production requests racing to both, each answering from the snapshot loaded elsewhere', async () => {
    const { env, urls } = await twoInstances();
    const h = household([{ address: '1 Oak Street', zipcode: '30301' }], { windfall_id: '1'.padStart(32, '0') });
    // As `accounts create acme --quota 7 --rate-limit 1000` and `tokens create acme --env production` would.
    const token = await inDatabase(env, async (store) => {
      await createAccount(store, 'acme', { quotaLimit: 7, rateLimit: 1000 });
      return (await issueToken(store, 'acme', 'production')).token;
    });
    // Loaded from a third data folder: the snapshot lives in PostgreSQL, and both instances are told.
    await cli(
      [
        'data',
        'load',
        writeSnapshot(path.join(tempDir(), 'week-1'), {
          version: 'week-1',
          households: [h],
          people: [person('p1', 'Pat', 'Doe', h, { emails: ['pat@example.com'] })],
        }),
      ],
      env,
    );
    const ask = (url: string) => post(`${url}/v1/`, { emails: ['pat@example.com'] }, { 'X-WF-Auth-Token': token });
    for (const url of urls) {
      // 503 (no snapshot yet) bills nothing; the first 200 takes one unit of the 7.
      await vi.waitFor(async () => expect((await ask(url)).body).toMatchObject({ household: { windfall_id: h.windfall_id } }), {
        timeout: 2_000,
        interval: 50,
      });
    }
    const replies = await Promise.all(Array.from({ length: 24 }, (_, i) => ask(urls[i % 2] ?? '')));
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    expect(statuses.filter((s) => s === 402)).toHaveLength(19);
    // What `accounts show acme --json` prints, read in-process.
    const shown = await inDatabase(env, (store) => describeAccount(store, 'acme'));
    expect(shown.tokens[0]?.quota).toMatchObject({ used: 7, remaining: 0 });
  });
});
