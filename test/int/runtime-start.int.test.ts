// A start that fails part-way (here: a malformed ENRICHBRIDGE_SECRET_KEY, read after the database,
// Redis and the snapshot watcher are open) closes what it opened: no pool, listener or timer is left
// to keep a process or a test worker alive.
import { afterEach, describe, expect, it, vi } from 'vitest';
import pg from 'pg';
import { SecretBoxError } from '../../core/secrets/secret-box.ts';
import { loadConfig } from '../../server/config.ts';
import { createLogger } from '../../server/logger.ts';
import { openRuntime, startServer } from '../../server/runtime.ts';
import { TEST_DATABASE_URL, freshPostgresSchema } from '../support/databases.ts';
import { tempDir } from '../support/harness.ts';

afterEach(() => {
  vi.unstubAllEnvs();
});

describe.skipIf(TEST_DATABASE_URL === undefined || TEST_DATABASE_URL === '')('a failed start', () => {
  it('closes the snapshot listener (and the pools) it had opened', async () => {
    const url = await freshPostgresSchema(TEST_DATABASE_URL ?? '');
    const schema = /search_path=(\w+)/.exec(decodeURIComponent(url))?.[1] ?? '';
    vi.stubEnv('ENRICHBRIDGE_SECRET_KEY', 'not-a-key');
    const config = loadConfig({ DATA_DIR: tempDir(), DATABASE_URL: url });
    await expect(openRuntime(config, createLogger('silent'))).rejects.toBeInstanceOf(SecretBoxError);

    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    try {
      // The listener's last statement names this schema's channel; a connection left open would show it.
      const listening = async () =>
        Number(
          (await admin.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE query = $1', [`LISTEN "eb_snapshots:${schema}"`])).rows[0]?.n,
        );
      // The listener connects in the background: give it the time it would take, then look.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(await listening()).toBe(0);
    } finally {
      await admin.end();
    }
  });

  it('a TLS file that cannot be read fails the start with no database connection left open', async () => {
    const url = await freshPostgresSchema(TEST_DATABASE_URL ?? '');
    const schema = /search_path=(\w+)/.exec(decodeURIComponent(url))?.[1] ?? '';
    vi.stubEnv('ENRICHBRIDGE_SECRET_KEY', 'a'.repeat(64));
    const missing = `${tempDir()}/missing.pem`;
    const config = loadConfig({ DATA_DIR: tempDir(), DATABASE_URL: url, TLS_CERT_FILE: missing, TLS_KEY_FILE: missing, PORT: '0', WORKER_CONCURRENCY: '0' });
    await expect(startServer(config, createLogger('silent'))).rejects.toMatchObject({ code: 'ENOENT' });
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    try {
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      // The listeners' last statement names this schema's channels; a connection left open would show it.
      const { rows } = await admin.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE query LIKE $1', [`LISTEN %${schema}%`]);
      expect(Number(rows[0]?.n)).toBe(0);
    } finally {
      await admin.end();
    }
  });
});
