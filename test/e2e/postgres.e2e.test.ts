// The product on PostgreSQL (DATABASE_URL) as an operator runs it: `npm start` and the CLI in separate
// processes share one database, not a file. Runs when the run has a PostgreSQL (TEST_DATABASE_URL,
// which .ci/run always sets).
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { post, tempDir } from '../support/harness.ts';
import { hashToken } from '../../core/accounts/tokens.ts';
import { openStorage } from '../../bridge/storage.ts';
import { TEST_DATABASE_URL, freshPostgresSchema } from '../support/databases.ts';
import { type Proc, cli, startServerProcess } from '../support/processes.ts';
import { byEmail, persona } from '../support/requests.ts';

const running: Proc[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((proc) => proc.stop()));
});

// Skipped only where no PostgreSQL was given (a quick local run); CI always gives one.
describe.skipIf(TEST_DATABASE_URL === undefined || TEST_DATABASE_URL === '')('DATABASE_URL', () => {
  it('keeps the state in PostgreSQL: a token the CLI issues is served by a running server, and no SQLite file is made', async () => {
    const databaseUrl = await freshPostgresSchema(TEST_DATABASE_URL ?? '');
    const env = { DATA_DIR: tempDir(), DATABASE_URL: databaseUrl };
    const started = await startServerProcess({ ...env, NODE_ENV: 'production', HOST: '127.0.0.1', REQUIRE_HTTPS: 'false' });
    running.push(started.proc);
    await cli(['accounts', 'create', 'acme', '--career-intelligence'], env);
    const token = (await cli(['tokens', 'create', 'acme', '--env', 'sandbox'], env)).stdout.trim();
    const answer = await post(`${started.url}/sandbox/v1`, byEmail(persona('Amanda Taylor')), { 'X-WF-Auth-Token': token });
    expect(answer.status).toBe(200);
    expect((await cli(['accounts', 'list'], env)).stdout).toContain('acme');
    expect(readdirSync(env.DATA_DIR).filter((name) => name.endsWith('.db'))).toEqual([]);
  });

  it('refuses a DATABASE_URL that is not PostgreSQL, naming the variable', async () => {
    await expect(cli(['accounts', 'list'], { DATA_DIR: tempDir(), DATABASE_URL: 'mysql://localhost/x' })).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('DATABASE_URL'),
    });
  });

  // Nine CLI starts and a server's: on a loaded 2-core machine that has taken more than the 60 s default.
  it(
    'data migrate-to-postgres copies a SQLite folder whole (a token issued before still works), and refuses a database that is not empty',
    { timeout: 150_000 },
    async () => {
      const dataDir = tempDir();
      const sqliteEnv = { DATA_DIR: dataDir };
      await cli(['accounts', 'create', 'acme', '--quota', '50'], sqliteEnv);
      const token = (await cli(['tokens', 'create', 'acme', '--env', 'sandbox'], sqliteEnv)).stdout.trim();
      const production = (await cli(['tokens', 'create', 'acme', '--env', 'production'], sqliteEnv)).stdout.trim();
      const sqlite = await openStorage(path.join(dataDir, 'enrichbridge.db'));
      const tokenId = (await sqlite.store.findLiveToken(hashToken(production)))?.token.id;
      await sqlite.store.takeQuota(tokenId ?? '', 'all-time', 50);
      await sqlite.queue.enqueue({ installationId: 'inst_gone', kind: 'enrich', payload: { n: 1 } });
      await sqlite.queue.enqueue({ installationId: 'inst_gone', kind: 'enrich', payload: { n: 2 } });
      await sqlite.queue.claimBatch({ workerId: 'old-worker', limit: 1, leaseMs: 60_000 });
      await sqlite.store.close();

      const databaseUrl = await freshPostgresSchema(TEST_DATABASE_URL ?? '');
      // The folder sealed nothing (no server or CRM command ran on it): any key the instances will share.
      const env = { DATA_DIR: dataDir, DATABASE_URL: databaseUrl, ENRICHBRIDGE_SECRET_KEY: randomBytes(32).toString('hex') };
      const { stdout } = await cli(['data', 'migrate-to-postgres'], env);
      expect(stdout).toMatch(/^accounts\s+1$/m);
      expect(stdout).toMatch(/^tokens\s+2$/m);
      expect(stdout).toMatch(/^jobs\s+2$/m);

      const pg = await openStorage(databaseUrl);
      try {
        expect(await pg.store.quotaUsed(tokenId ?? '', 'all-time')).toBe(1);
        // The job the old worker held is queued again, its attempt kept.
        expect((await pg.queue.list()).map((job) => [job.state, job.attempts, job.leaseOwner])).toEqual([
          ['queued', 1, null],
          ['queued', 0, null],
        ]);
      } finally {
        await pg.store.close();
      }
      const started = await startServerProcess({ ...env, NODE_ENV: 'production', HOST: '127.0.0.1', REQUIRE_HTTPS: 'false' });
      running.push(started.proc);
      expect((await post(`${started.url}/sandbox/v1`, byEmail(persona('Amanda Taylor')), { 'X-WF-Auth-Token': token })).status).toBe(200);

      // Migrated once, the folder is marked: a second run is refused by the mark, another folder by the rows.
      await expect(cli(['data', 'migrate-to-postgres'], env)).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringContaining('this data folder was already migrated to'),
      });
      const other = tempDir();
      await cli(['accounts', 'create', 'other'], { DATA_DIR: other });
      await expect(cli(['data', 'migrate-to-postgres'], { ...env, DATA_DIR: other })).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringContaining('already has 1 rows in accounts'),
      });
    },
  );
});
