// The operator's console pages on a runtime of their own (SQLite in a temp folder), a signed-in
// operator, real HTTP: the installations list says each one's account by name, its last activity and
// its recent errors from what the stores hold; revoking a token an installation enriches with asks
// first, naming the installation, and revokes only once confirmed; "Roll back" is not offered with no
// earlier snapshot to go back to.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../core/accounts/admin.ts';
import type { Installation, LogEntry } from '../../bridge/model.ts';
import { newLogId } from '../../bridge/store.ts';
import type { Runtime } from '../../server/runtime.ts';
import { type ConsoleApp, runtimeConsole } from '../support/console-app.ts';
import { openFolderRuntime } from '../support/folder-runtime.ts';
import { tempDir } from '../support/harness.ts';

const PUBLIC_URL = 'http://console.test';
let runtime: Runtime;
let app: ConsoleApp | undefined;
let url = '';
let cookie = '';
let csrf = '';
let portal: Installation;
let lastAt = '';

const entry = (at: Date, outcome: LogEntry['outcome']): LogEntry => ({
  id: newLogId(at),
  installationId: portal.id,
  object: 'contact',
  recordId: `r-${at.getTime()}`,
  at: at.toISOString(),
  outcome,
  fieldsWritten: [],
  changes: {},
  quotaConsumed: 0,
  latencyMs: 1,
  detail: null,
});

beforeAll(async () => {
  runtime = await openFolderRuntime({ DATA_DIR: tempDir('enrichbridge-console-operator-'), PUBLIC_URL });
  await createAccount(runtime.opened.store, 'acme', { quotaLimit: 100 });
  portal = await runtime.bridge.installations.create({
    provider: 'hubspot',
    externalAccountId: '22334455',
    environment: 'sandbox',
    target: { kind: 'local', accountName: 'acme' },
    settings: {},
  });
  // Two failures in the last seven days and one before them; the newest entry is the last activity.
  const now = Date.now();
  const last = new Date(now - 60_000);
  lastAt = last.toISOString();
  await runtime.bridge.pipelineStore.saveOutcomes(
    [],
    [
      entry(new Date(now - 10 * 86_400_000), 'failed:crm_error'),
      entry(new Date(now - 2 * 86_400_000), 'failed:crm_error'),
      entry(new Date(now - 3_600_000), 'failed:timeout'),
      entry(last, 'enriched'),
    ],
  );
  app = await runtimeConsole(runtime, PUBLIC_URL);
  url = app.url;
  ({ cookie, csrf } = await app.signIn({ kind: 'operator' }));
});

afterAll(async () => {
  await app?.close();
  await runtime?.close();
});

const get = async (path: string) => {
  const response = await fetch(`${url}${path}`, { headers: { cookie } });
  return { status: response.status, page: await response.text() };
};
const post = async (path: string, fields: Record<string, string> = {}) => {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, origin: PUBLIC_URL, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf, ...fields }).toString(),
  });
  return { status: response.status, page: await response.text(), location: response.headers.get('location') };
};
const tokenOf = async (id: string) => {
  const account = await runtime.opened.store.findAccountByName('acme');
  return (await runtime.opened.store.listTokens(account?.id ?? '')).find((token) => token.id === id);
};

describe("the operator's console", () => {
  it("lists each installation with its account by name, its last activity and its last 7 days' failures", async () => {
    const { status, page } = await get('/console');
    expect(status).toBe(200);
    const row = /<tr data-installation="[^"]+">(.*?)<\/tr>/.exec(page)?.[1] ?? '';
    expect(row).toContain('>HubSpot portal 22334455</a>');
    expect(row).toMatch(/<td class="installation-account"><a href="\/console\/accounts\/acme">acme<\/a> <code class="muted">acct_[^<]+<\/code><\/td>/);
    expect(row).toContain(`<time datetime="${lastAt}">`);
    expect(row).toContain('>2 records failed in 7 days</a>');
  });

  it('asks before revoking a token an installation uses, naming the installation, and revokes it once confirmed', async () => {
    if (portal.target.kind !== 'local') throw new Error('a local installation');
    const tokenId = portal.target.tokenId;
    const account = await get('/console/accounts/acme');
    expect(account.page).toContain('<a href="/console/installations/' + portal.id + '">HubSpot portal 22334455</a>');

    const asked = await post(`/console/accounts/acme/tokens/${tokenId}/revoke`);
    expect(asked.status).toBe(200);
    expect(asked.page).toContain('id="token-in-use"');
    expect(asked.page).toContain('Revoke it and cut off HubSpot portal 22334455');
    expect((await tokenOf(tokenId))?.revokedAt).toBeNull();

    const confirmed = await post(`/console/accounts/acme/tokens/${tokenId}/revoke`, { confirm: 'yes' });
    expect(confirmed.status).toBe(303);
    expect(confirmed.location).toBe('/console/accounts/acme');
    expect((await tokenOf(tokenId))?.revokedAt).not.toBeNull();
  });

  it('does not offer Roll back when there is no earlier snapshot to roll back to', async () => {
    const { status, page } = await get('/console/snapshots');
    expect(status).toBe(200);
    expect(page).toContain('id="no-rollback"');
    expect(page).not.toContain('/console/snapshots/rollback');
  });
});

describe("the operator's account form and political data", () => {
  const form = { rateLimit: '5', quotaLimit: '100', quotaPeriod: 'month', householdFields: 'all', careerFields: 'all' };
  const politicalData = async (name: string) => (await runtime.opened.store.findAccountByName(name))?.politicalData;

  it('creates an account without political data unless its box is ticked', async () => {
    expect((await post('/console/accounts', { ...form, name: 'plain' })).status).toBe(303);
    expect(await politicalData('plain')).toBe(false);
    expect((await post('/console/accounts', { ...form, name: 'political', politicalData: 'on' })).status).toBe(303);
    expect(await politicalData('political')).toBe(true);
  });

  it("grants and withdraws an account's political data", async () => {
    await createAccount(runtime.opened.store, 'toggled', {});
    expect((await post('/console/accounts/toggled', { ...form, politicalData: 'on' })).status).toBe(303);
    expect(await politicalData('toggled')).toBe(true);
    expect((await post('/console/accounts/toggled', form)).status).toBe(303);
    expect(await politicalData('toggled')).toBe(false);
  });
});
