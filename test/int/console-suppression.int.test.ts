// The operator's suppression page on a runtime of its own (SQLite in a temp folder, a snapshot loaded),
// a signed-in operator, real HTTP: suppressing a person stops this server's production answers about
// them at once; check and remove say what they found in counts; every change is in the audit trail
// with who made it; the page never shows an identifier back; a CRM admin never reaches it.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, issueToken } from '../../core/accounts/admin.ts';
import { loadSnapshot } from '../../core/snapshot/storage/loader.ts';
import { type Runtime, snapshotsDir } from '../../server/runtime.ts';
import { type ConsoleApp, runtimeConsole } from '../support/console-app.ts';
import { openFolderRuntime } from '../support/folder-runtime.ts';
import { tempDir } from '../support/harness.ts';
import { SqliteSnapshots } from '../../core/snapshot/storage/sqlite-snapshot.ts';
import { SnapshotMatcher } from '../../core/snapshot/matching/matcher.ts';
import { household, person, writeSnapshot } from '../support/snapshot-fixture.ts';

const PUBLIC_URL = 'http://console.test';
const EMAIL = 'ann.lee@example.com';
let runtime: Runtime;
let app: ConsoleApp | undefined;
let url = '';
let token = '';
const closing: (() => void)[] = [];
const operator = { cookie: '', csrf: '' };
const admin = { cookie: '', csrf: '' };

beforeAll(async () => {
  const dataDir = tempDir('enrichbridge-console-suppression-');
  runtime = await openFolderRuntime({ DATA_DIR: dataDir, PUBLIC_URL });
  await createAccount(runtime.opened.store, 'acme', { rateLimit: 100 });
  ({ token } = await issueToken(runtime.opened.store, 'acme', 'production'));
  const home = household([{ address: '1 Elm Street', zipcode: '30301' }]);
  const loaded = await loadSnapshot(
    runtime.opened.store,
    snapshotsDir(dataDir),
    writeSnapshot(path.join(tempDir(), 'week-1'), {
      version: 'week-1',
      households: [home],
      people: [person('p-ann', 'Ann', 'Lee', home, { emails: [EMAIL], phones: ['+14045550101'] })],
    }),
  );
  // A command's runtime watches no snapshot: the matcher a server's watcher would install.
  const snapshots = new SqliteSnapshots(snapshotsDir(dataDir));
  const opened = await snapshots.open(snapshots.locationFor(loaded.id));
  closing.push(() => opened.close());
  runtime.service.productionMatcher = new SnapshotMatcher(opened, 'week-1');
  const portal = await runtime.bridge.installations.create({
    provider: 'hubspot',
    externalAccountId: '1234',
    environment: 'sandbox',
    target: { kind: 'local', accountName: 'acme' },
    settings: {},
  });
  app = await runtimeConsole(runtime, PUBLIC_URL, { suppressions: runtime.suppressions });
  url = app.url;
  for (const [who, scope] of [
    [operator, { kind: 'operator' }],
    [admin, { kind: 'installation', installationId: portal.id }],
  ] as const) {
    Object.assign(who, await app.signIn(scope));
  }
});

afterAll(async () => {
  await app?.close();
  for (const close of closing) close();
  await runtime?.close();
});

const post = async (fields: Record<string, string>, who = operator) => {
  const response = await fetch(`${url}/console/suppression`, {
    method: 'POST',
    headers: { cookie: who.cookie, origin: PUBLIC_URL, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf: who.csrf, ...fields }).toString(),
  });
  return { status: response.status, page: await response.text() };
};
const notice = (page: string) => /<div[^>]*id="suppression-notice"[^>]*>\s*<p>([^<]*)<\/p>/.exec(page)?.[1];
const answer = async () => {
  const result = await runtime.service.enrichRecord({
    environment: 'production',
    token,
    readBody: () => ({ first_name: 'Ann', last_name: 'Lee', addresses: [{ address: '1 Elm Street', zipcode: '30301' }] }),
  });
  if (!result.ok) throw new Error(result.error.message);
  return result.response;
};

describe("the operator's suppression page", () => {
  it('suppresses a person: this server stops answering about them at once, the audit names who did it, and no identifier is shown back', async () => {
    expect(await answer()).toMatchObject({ household_matched: true });
    const added = await post({ action: 'add', email: EMAIL });
    expect(added.status).toBe(200);
    expect(notice(added.page)).toBe('Suppressed: 2 new entries, 1 person of the active snapshot. Every instance stops answering within seconds.');
    expect(added.page).not.toContain('ann.lee');
    expect(added.page).toContain('2 entries on the list: 1 e-mail, 0 phones, 0 names at addresses, 1 person and 0 households');
    expect(/<table[^>]*id="audit"[\s\S]*?<tbody>\s*<tr>([\s\S]*?)<\/tr>/.exec(added.page)?.[1]).toMatch(/console:operator[\s\S]*added[\s\S]*>2</);
    expect(await answer()).toEqual({ household_matched: false, career_matched: false, household: null, career: null });
  });

  it('checks a person by another identifier, and removes them again, in counts', async () => {
    const checked = await post({ action: 'check', phone: '404 555 0101' });
    expect(notice(checked.page)).toBe('Suppressed: the person these identifiers lead to is on the list, by another identifier.');
    const removed = await post({ action: 'remove', email: EMAIL });
    expect(notice(removed.page)).toBe('Removed 2 entries: production answers about them again.');
    expect(await answer()).toMatchObject({ household_matched: true });
    expect(notice((await post({ action: 'remove', email: EMAIL })).page)).toBe('Nothing of this person is on the list.');
  });

  it('refuses a form that names nobody, and a value too long, beside the form or the field', async () => {
    const empty = await post({ action: 'add', lastName: 'Lee' });
    expect(empty.status).toBe(400);
    expect(empty.page).toMatch(/<p class="error" id="s-form-error">nothing to go by: /);
    const long = await post({ action: 'add', email: `${'a'.repeat(330)}@example.com` });
    expect(long.status).toBe(400);
    expect(long.page).toContain('<span class="error" id="s-email-error">at most 320 characters</span>');
  });

  it("is not there for a CRM admin's session", async () => {
    const page = await fetch(`${url}/console/suppression`, { headers: { cookie: admin.cookie } });
    expect(page.status).toBe(404);
    expect((await post({ action: 'add', email: 'x@example.com' }, admin)).status).toBe(404);
  });
});
