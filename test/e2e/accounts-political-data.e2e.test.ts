// The political-data entitlement through the CLI as an operator runs it: a new account starts without
// it, `--political-data` grants it, `--no-political-data` withdraws it, `accounts show` says which, and
// the help names the fields it covers. On SQLite, and on PostgreSQL when the run has one.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { tempDir } from '../support/harness.ts';
import { TEST_DATABASES } from '../support/databases.ts';
import { cli } from '../support/processes.ts';

const shownEntitlement = (stdout: string) => /^political data +(on|off)$/m.exec(stdout)?.[1];

describe.each(TEST_DATABASES)('accounts and political data on $name', (database) => {
  it('new accounts are not entitled to political fields by default; --political-data grants them and --no-political-data withdraws them', async () => {
    const location = await database.fresh();
    // SQLite: the file in DATA_DIR; PostgreSQL: a schema of its own.
    const env: Record<string, string> = database.name === 'SQLite' ? { DATA_DIR: tempDir() } : { DATA_DIR: tempDir(), DATABASE_URL: location };
    await cli(['accounts', 'create', 'plain', '--career-intelligence'], env);
    await cli(['accounts', 'create', 'granted', '--political-data'], env);
    const [plain, granted] = await Promise.all([cli(['accounts', 'show', 'plain'], env), cli(['accounts', 'show', 'granted'], env)]);
    expect(shownEntitlement(plain.stdout)).toBe('off');
    expect(shownEntitlement(granted.stdout)).toBe('on');

    await Promise.all([cli(['accounts', 'update', 'plain', '--political-data'], env), cli(['accounts', 'update', 'granted', '--no-political-data'], env)]);
    const json = z.object({ account: z.object({ politicalData: z.boolean(), careerIntelligence: z.boolean() }) });
    const [plainNow, grantedNow] = await Promise.all([cli(['accounts', 'show', 'plain', '--json'], env), cli(['accounts', 'show', 'granted', '--json'], env)]);
    expect(json.parse(JSON.parse(plainNow.stdout)).account).toEqual({ politicalData: true, careerIntelligence: true });
    expect(json.parse(JSON.parse(grantedNow.stdout)).account).toEqual({ politicalData: false, careerIntelligence: false });
  });
});

describe('the accounts help', () => {
  it('names the political fields --political-data grants, off by default, and offers to withdraw them on update', async () => {
    const env = { DATA_DIR: tempDir() };
    const [create, update] = await Promise.all([cli(['accounts', 'create', '--help'], env), cli(['accounts', 'update', '--help'], env)]);
    const flat = (text: string) => text.replace(/\s+/g, ' ');
    expect(flat(create.stdout)).toContain(
      '--political-data grant political data: household political_donor, top_political_donor, political_party (a special category; default off)',
    );
    expect(create.stdout).not.toContain('--no-political-data');
    expect(flat(update.stdout)).toContain('--no-political-data withdraw political data');
  });
});
