// `enrichbridge suppress` as an operator runs it beside a running server: a person suppressed from the
// command line is answered no more by the server within seconds, under any of their identifiers; a
// deletion platform's hashed list imports with its bad lines named by number; check, count, audit
// and remove say what they did without printing an identifier. Accounts and the snapshot are set up
// in-process on the same folder.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAccount, issueToken } from '../../core/accounts/admin.ts';
import { loadSnapshot } from '../../core/snapshot/storage/loader.ts';
import { platformHash } from '../../core/suppression/identifiers.ts';
import { openDataFolder, snapshotsDir } from '../../server/runtime.ts';
import { post, tempDir } from '../support/harness.ts';
import { cli, startServerProcess, until } from '../support/processes.ts';
import { household, person, writeSnapshot } from '../support/snapshot-fixture.ts';

const ANN_EMAIL = 'ann.lee@example.com';

describe('suppress CLI', () => {
  it('a person suppressed from the command line is no longer answered by a running server, by any of their identifiers, within seconds', async ({
    onTestFinished,
  }) => {
    const dataDir = tempDir();
    const env = { DATA_DIR: dataDir, ENRICHBRIDGE_SECRET_KEY: randomBytes(32).toString('hex') };
    const opened = await openDataFolder(dataDir);
    await createAccount(opened.store, 'acme', { careerIntelligence: true, rateLimit: 100 });
    const { token } = await issueToken(opened.store, 'acme', 'production');
    const lees = household([{ address: '1 Elm Street', zipcode: '30301' }]);
    const parks = household([{ address: '9 Oak Avenue', zipcode: '30302' }]);
    await loadSnapshot(
      opened.store,
      snapshotsDir(dataDir),
      writeSnapshot(path.join(tempDir(), 'week-1'), {
        version: 'week-1',
        households: [lees, parks],
        people: [
          person('p-ann', 'Ann', 'Lee', lees, { emails: [ANN_EMAIL], phones: ['+14045550101'] }),
          person('p-cy', 'Cy', 'Park', parks, { emails: ['cy.park@example.com'], phones: ['+14045550199'] }),
        ],
      }),
    );
    await opened.store.close();

    const { proc, url } = await startServerProcess(env);
    onTestFinished(async () => {
      await proc.stop();
    });
    const ask = async (body: unknown) => (await post(`${url}/v1/`, body, { 'X-WF-Auth-Token': token })).body;
    const byName = { first_name: 'Ann', last_name: 'Lee', addresses: [{ address: '1 Elm Street', zipcode: '30301' }] };
    expect(await ask(byName)).toMatchObject({ household_matched: true });

    const added = await cli(['suppress', 'add', '--email', ANN_EMAIL, '--by', 'privacy-desk'], env);
    expect(added.stdout).toBe('suppressed: 2 new entries; 1 person in the active snapshot\n');
    // The running server reads the list again within its poll; no restart.
    await until(
      'the server to stop answering about her',
      async () => (((await ask(byName)) as { household_matched: boolean }).household_matched ? undefined : true),
      {
        timeoutMs: 15_000,
      },
    );
    expect(await ask({ phones: ['404-555-0101'], first_name: 'Ann', last_name: 'Lee' })).toEqual({
      household_matched: false,
      career_matched: false,
      household: null,
      career: null,
    });
    expect((await cli(['suppress', 'check', '--phone', '(404) 555-0101'], env)).stdout).toBe(
      'suppressed: the person these identifiers lead to is on the list (by another identifier)\n',
    );

    // A deletion platform's list of hashed phones: ID,Hash, one bad line.
    const list = path.join(tempDir(), 'drop-phone.csv');
    writeFileSync(list, `ID,Hash\nwi-1,${platformHash('4045550199')}\nwi-2,zzz\n`);
    const imported = await cli(['suppress', 'import', list, '--hashed', 'phone'], env);
    // The snapshot is read through for the people listed e-mails and phones name: Ann (by e-mail, earlier) and Cy.
    expect(imported.stdout).toBe('imported 2 lines: 1 new entry, 1 bad line skipped\n2 people of the active snapshot found under listed e-mails and phones\n');
    expect(imported.stderr).toContain('skipped line 3: no SHA-256 hash');
    await until(
      'the server to refuse the hashed phone',
      async () =>
        ((await ask({ phones: ['+1 404 555 0199'], first_name: 'Cy', last_name: 'Park' })) as { household_matched: boolean }).household_matched
          ? undefined
          : true,
      {
        timeoutMs: 15_000,
      },
    );

    const [count, audit] = await Promise.all([cli(['suppress', 'count'], env), cli(['suppress', 'audit'], env)]);
    expect(count.stdout).toBe('4 entries: 1 e-mail, 1 phone, 0 names at addresses, 2 people, 0 households (0 entries with the whole household)\n');
    const auditLines = audit.stdout.trim().split('\n');
    expect(auditLines).toEqual([
      expect.stringMatching(/ resolve +1 entry +cli:\S+ +snapshot week-1$/),
      expect.stringMatching(/ import +1 entry +cli:\S+ +2 lines, 1 bad, hashed phones$/),
      expect.stringMatching(/ add +2 entries +privacy-desk$/),
    ]);
    // Nothing the commands printed names her.
    for (const output of [added, imported, count, audit]) expect(output.stdout + output.stderr).not.toContain('ann');

    const removed = await cli(['suppress', 'remove', '--email', ANN_EMAIL, '--by', 'privacy-desk'], env);
    expect(removed.stdout).toBe('removed 2 entries; production answers about them again\n');
    await until(
      'the server to answer about her again',
      async () => (((await ask(byName)) as { household_matched: boolean }).household_matched ? true : undefined),
      { timeoutMs: 15_000 },
    );
    await expect(cli(['suppress', 'add'], env)).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('name the person: --email, --phone') });
  });
});
