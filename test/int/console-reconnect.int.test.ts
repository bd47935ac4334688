// The console's side of a refreshed Salesforce sandbox, over real HTTP on a runtime of its own: the
// overview says the org changed (since when, and the command), the operator's Reconnect makes a grant for
// the CRM's reconnect route, and nobody else may make one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../core/accounts/admin.ts';
import { openReconnectGrant } from '../../bridge/installations.ts';
import type { Installation } from '../../bridge/model.ts';
import type { Runtime } from '../../server/runtime.ts';
import { type ConsoleApp, runtimeConsole } from '../support/console-app.ts';
import { fakeId18 } from '../support/fake-salesforce.ts';
import { openFolderRuntime } from '../support/folder-runtime.ts';
import { tempDir } from '../support/harness.ts';

const PUBLIC_URL = 'http://console.test';
const OLD_ORG = fakeId18('00D8a000001AbCd');
const NEW_ORG = fakeId18('00D8a000002XyZw');
const SEEN_AT = new Date('2026-11-20T09:30:00.000Z');

let runtime: Runtime;
let app: ConsoleApp | undefined;
let marked: Installation;
let unmarked: Installation;

beforeAll(async () => {
  runtime = await openFolderRuntime({ DATA_DIR: tempDir('enrichbridge-console-reconnect-'), PUBLIC_URL });
  await createAccount(runtime.opened.store, 'acme', {});
  const connect = (orgId: string) =>
    runtime.bridge.installations.create({
      provider: 'salesforce',
      externalAccountId: orgId,
      environment: 'sandbox',
      target: { kind: 'local', accountName: 'acme' },
      crmCredentials: { kind: 'static', instanceUrl: 'https://acme--uat.sandbox.my.salesforce.com', accessToken: 't', orgId },
    });
  marked = await connect(OLD_ORG);
  unmarked = await connect(fakeId18('00D8a000003QrSt'));
  await runtime.bridge.installations.markOrgChanged(marked.id, NEW_ORG, SEEN_AT);
  app = await runtimeConsole(runtime, PUBLIC_URL);
});

afterAll(async () => {
  await app?.close();
  await runtime?.close();
});

async function as(scope: Parameters<ConsoleApp['signIn']>[0]) {
  if (app === undefined) throw new Error('no console');
  const { url } = app;
  const { cookie, csrf } = await app.signIn(scope);
  return {
    get: async (path: string) => {
      const response = await fetch(`${url}${path}`, { headers: { cookie } });
      return { status: response.status, page: await response.text() };
    },
    post: async (path: string) => {
      const response = await fetch(`${url}${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, origin: PUBLIC_URL, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf }).toString(),
      });
      return { status: response.status, page: await response.text() };
    },
  };
}

describe("the console's overview of an installation whose org changed", () => {
  it('says so, since when, and how to reconnect it, with the Reconnect button for the operator', async () => {
    const operator = await as({ kind: 'operator' });
    const { status, page } = await operator.get(`/console/installations/${marked.id}`);
    expect(status).toBe(200);
    expect(page).toContain(
      `org changed (sandbox refreshed?): messages from org ${NEW_ORG} since ${SEEN_AT.toISOString()}; run \`enrichbridge salesforce reconnect ${marked.id}\``,
    );
    expect(page).toContain(`action="/console/installations/${marked.id}/reconnect"`);
    expect((await operator.get(`/console/installations/${unmarked.id}`)).page).not.toContain('org changed');
  });

  it("shows the CRM admin the notice without the operator's button", async () => {
    const admin = await as({ kind: 'installation', installationId: marked.id });
    const { page } = await admin.get(`/console/installations/${marked.id}`);
    expect(page).toContain(`messages from org ${NEW_ORG}`);
    expect(page).not.toContain('/reconnect"');
  });
});

describe("the operator's Reconnect", () => {
  it("makes a link to the CRM's reconnect route carrying a grant for the installation", async () => {
    const { status, page } = await (await as({ kind: 'operator' })).post(`/console/installations/${marked.id}/reconnect`);
    expect(status).toBe(200);
    const href = /id="reconnect-url" href="([^"]+)"/.exec(page)?.[1]?.replaceAll('&amp;', '&') ?? '';
    const link = new URL(href);
    expect(`${link.origin}${link.pathname}`).toBe(`${PUBLIC_URL}/oauth/salesforce/reconnect`);
    expect(openReconnectGrant(runtime.box, link.searchParams.get('grant') ?? '')).toBe(marked.id);
  });

  it('refuses an installation no other org has posted for', async () => {
    expect((await (await as({ kind: 'operator' })).post(`/console/installations/${unmarked.id}/reconnect`)).status).toBe(409);
  });

  it("is not the CRM admin's to use", async () => {
    const admin = await as({ kind: 'installation', installationId: marked.id });
    const { status, page } = await admin.post(`/console/installations/${marked.id}/reconnect`);
    expect(status).toBe(404);
    expect(page).not.toContain('grant=');
  });
});
