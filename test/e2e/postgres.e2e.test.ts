// The product on PostgreSQL (DATABASE_URL) as an operator runs it: `npm start` and the CLI in separate
// processes share one database, not a file. Runs when the run has a PostgreSQL (TEST_DATABASE_URL,
// which .ci/run always sets).
import { readdirSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { post, tempDir } from '../support/harness.ts';
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
});
