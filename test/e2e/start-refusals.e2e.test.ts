// A server start or a CLI command that the place it runs in refuses ends with one line naming the fix,
// a non-zero exit and no stack trace: the port taken, the database DATABASE_URL names missing. Real
// processes, as an operator starts them; the missing database is a name made up for the test on the
// run's PostgreSQL (TEST_DATABASE_URL), which .ci/run always sets.
import { randomBytes } from 'node:crypto';
import { type Server, createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { tempDir } from '../support/harness.ts';
import { TEST_DATABASE_URL } from '../support/databases.ts';
import { type Proc, cli, killProcess, startProcess } from '../support/processes.ts';

const running: Proc[] = [];
const listening: Server[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((proc) => killProcess(proc)));
  await Promise.all(listening.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** The lines a process printed (stdout and stderr together), blank ones left out. */
const linesOf = (text: string): string[] => text.split('\n').filter((line) => line.trim() !== '');

/** What a stack trace or a dumped error object looks like in the output. */
const RAW_ERROR = /^\s+at |\{\s*$|code: '/m;

/** `bin/server.js` as npm start runs it, with its exit code and everything it printed. */
async function startExpectingRefusal(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const proc = startProcess(process.execPath, ['bin/server.js'], env);
  running.push(proc);
  const code = await proc.exited();
  return { code, output: proc.output() };
}

/** A command that failed, as execFile rejects with it. */
const FailedCommandSchema = z.object({ code: z.number(), stdout: z.string(), stderr: z.string() });

/** A URL of the run's PostgreSQL server naming a database that does not exist there. */
function missingDatabaseUrl(): { url: string; name: string } {
  const name = `eb_missing_${randomBytes(5).toString('hex')}`;
  const url = new URL(TEST_DATABASE_URL ?? '');
  url.pathname = `/${name}`;
  url.search = '';
  return { url: url.toString(), name };
}

describe('a taken port', () => {
  it('ends the start with one line naming PORT=, a non-zero exit and no stack trace', async () => {
    // The port taken on the address the server listens on (127.0.0.1 outside production).
    const taken = createServer();
    listening.push(taken);
    await new Promise<void>((resolve, reject) => {
      taken.once('error', reject);
      taken.listen(0, '127.0.0.1', () => resolve());
    });
    const address = taken.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;

    const { code, output } = await startExpectingRefusal({ DATA_DIR: tempDir(), PORT: String(port) });

    expect(code).not.toBe(0);
    expect(linesOf(output)).toEqual([`port ${port} on 127.0.0.1 is in use: start with PORT=<another port>, or stop what listens there`]);
    expect(output).not.toMatch(RAW_ERROR);
  });
});

describe.skipIf(TEST_DATABASE_URL === undefined || TEST_DATABASE_URL === '')('a database that does not exist', () => {
  it('ends the start with one line naming the createdb command, a non-zero exit and no stack trace', async () => {
    const { url, name } = missingDatabaseUrl();
    const server = new URL(url);

    const { code, output } = await startExpectingRefusal({ DATA_DIR: tempDir(), PORT: '0', DATABASE_URL: url });

    expect(code).not.toBe(0);
    const lines = linesOf(output);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`database "${name}" does not exist`);
    expect(lines[0]).toContain(`createdb -h ${server.hostname} -p ${server.port} -U ${decodeURIComponent(server.username)} ${name}`);
    expect(output).not.toMatch(RAW_ERROR);
  });

  it('ends a CLI command with the same one line, a non-zero exit and no stack trace', async () => {
    const { url, name } = missingDatabaseUrl();

    const failed = FailedCommandSchema.parse(
      await cli(['accounts', 'list'], { DATA_DIR: tempDir(), DATABASE_URL: url }).then(
        () => expect.unreachable('accounts list ran on a database that does not exist'),
        (error: unknown) => error,
      ),
    );

    expect(failed.code).not.toBe(0);
    expect(failed.stdout).toBe('');
    // The refusal is the command's last word, in one line (a line naming the database may come first).
    const lines = linesOf(failed.stderr);
    expect(lines.at(-1)).toMatch(new RegExp(`^enrichbridge: database "${name}" does not exist .*: create it with \`createdb .*${name}\``));
    expect(lines.filter((line) => line.includes('does not exist'))).toHaveLength(1);
    expect(failed.stderr).not.toMatch(RAW_ERROR);
  });
});
