// Vitest's global setup. First, the PostgreSQL and Redis the storage suites also run on: TEST_DATABASE_URL
// and TEST_REDIS_URL when set (.ci/run sets both; set one to '' to leave it out), else the local services
// DESIGN.md names, found on loopback, with a database made for this run and dropped after it. What is
// not found is said plainly, with how to run it, since those suites then run on SQLite and in-process only.
// Then it builds dist/ from the sources under test (scripts/build.ts), so every CLI and server process
// the e2e tests start runs the bundle (about half the start-up time of tsx, and the suite starts
// hundreds of them). bin/launch.js would run the sources through tsx were it stale.
import { Redis } from 'ioredis';
import pg from 'pg';
import { buildBundles } from '../../scripts/build.ts';

/** Where DESIGN.md's PostgreSQL listens (trust authentication), and its Redis. */
const LOCAL_POSTGRES = 'postgres://postgres@127.0.0.1:5432';
const LOCAL_REDIS = 'redis://127.0.0.1:6379/0';

/** A database of its own on the local PostgreSQL, and how to drop it; null when none answers. */
async function localPostgres(): Promise<{ url: string; drop: () => Promise<void> } | null> {
  const admin = () => new pg.Client({ connectionString: `${LOCAL_POSTGRES}/postgres`, connectionTimeoutMillis: 2_000 });
  const name = `enrichbridge_test_${Date.now()}_${process.pid}`;
  const client = admin();
  try {
    await client.connect();
    await client.query(`CREATE DATABASE ${name}`);
  } catch {
    return null;
  } finally {
    await client.end().catch(() => undefined);
  }
  return {
    url: `${LOCAL_POSTGRES}/${name}`,
    drop: async () => {
      const dropper = admin();
      await dropper.connect();
      await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).finally(() => dropper.end());
    },
  };
}

async function localRedis(): Promise<boolean> {
  const redis = new Redis(LOCAL_REDIS, { lazyConnect: true, connectTimeout: 2_000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

export default async function setup(): Promise<() => Promise<void>> {
  let drop: (() => Promise<void>) | null = null;
  if (process.env.TEST_DATABASE_URL === undefined) {
    const found = await localPostgres();
    if (found === null) {
      console.warn(
        `PostgreSQL: none at ${LOCAL_POSTGRES} and TEST_DATABASE_URL unset, so the storage suites run on SQLite only. ` +
          'Start it (DESIGN.md), set TEST_DATABASE_URL=postgres://…, or run `bash .ci/run`.',
      );
    } else {
      process.env.TEST_DATABASE_URL = found.url;
      drop = found.drop;
      console.log(`PostgreSQL: the storage suites also run on ${found.url} (made for this run, dropped after it)`);
    }
  } else if (process.env.TEST_DATABASE_URL === '') {
    console.warn('PostgreSQL: TEST_DATABASE_URL is empty, so the storage suites run on SQLite only.');
  }
  if (process.env.TEST_REDIS_URL === undefined) {
    if (await localRedis()) {
      process.env.TEST_REDIS_URL = LOCAL_REDIS;
      console.log(`Redis: the shared-limit suites also run on ${LOCAL_REDIS}`);
    } else {
      console.warn(
        `Redis: none at ${LOCAL_REDIS} and TEST_REDIS_URL unset, so the shared-limit suites run in-process only. ` +
          'Start it (DESIGN.md), set TEST_REDIS_URL=redis://…, or run `bash .ci/run`.',
      );
    }
  } else if (process.env.TEST_REDIS_URL === '') {
    console.warn('Redis: TEST_REDIS_URL is empty, so the shared-limit suites run in-process only.');
  }
  await buildBundles();
  return async () => {
    await drop?.();
  };
}
