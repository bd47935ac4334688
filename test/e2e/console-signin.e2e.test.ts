// CRM admins sign in to the console with their CRM (issue 13), in Chromium against `npm start`, through a
// fake HubSpot's and a fake Salesforce org's OAuth (authorize page, code exchange, the token's user, the
// users API / UserPermissionAccess), with the install's client ids and redirect URIs. A HubSpot Super Admin
// and a Salesforce admin each reach their own installation and nothing else; a non-admin of either gets a
// page naming the permission needed; a portal with no installation here is told so; a replayed or forged
// state is refused. One server, one browser.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { screenshotAtWidths, seriousViolations, unreachableByKeyboard } from '../support/chromium.ts';
import { APP_ID, type ConsoleServer, PORTAL_ID, addInstallation, startConsoleServer } from '../support/console-portal.ts';
import { type FakeHubSpot, startFakeHubSpot } from '../support/fake-hubspot.ts';
import { type FakeSalesforce, startFakeSalesforce } from '../support/fake-salesforce.ts';
import { withFolderRuntime } from '../support/folder-runtime.ts';
import { createAccount } from '../../core/accounts/admin.ts';
import type { Proc } from '../support/processes.ts';

const OTHER_PORTAL_ID = '99999';
const SALESFORCE_CLIENT_ID = '3MVG9fake.console.signin';
const HUBSPOT_ADMIN = '4701001';
const HUBSPOT_MEMBER = '4701002';

let hubspot: FakeHubSpot;
let salesforce: FakeSalesforce;
let app: ConsoleServer<{ portal: string; otherPortal: string; org: string }>;
let server: Proc;
let browser: Browser;
let publicUrl = '';
let ids = { portal: '', otherPortal: '', org: '' };

beforeAll(async () => {
  hubspot = await startFakeHubSpot({ webhookUrl: null, appId: APP_ID, portalId: PORTAL_ID, subscribedProperties: [] });
  hubspot.users.set(HUBSPOT_MEMBER, { id: HUBSPOT_MEMBER, email: 'member@portal.example', superAdmin: false });
  salesforce = await startFakeSalesforce({ clientId: SALESFORCE_CLIENT_ID });
  app = await startConsoleServer({
    folderPrefix: 'enrichbridge-console-signin-',
    env: {
      // The install's OAuth apps, pointed at the fakes: the sign-in uses them as they are.
      HUBSPOT_CLIENT_ID: hubspot.clientId,
      HUBSPOT_CLIENT_SECRET: hubspot.clientSecret,
      HUBSPOT_APP_ID: APP_ID,
      HUBSPOT_API_BASE_URL: hubspot.url,
      HUBSPOT_AUTH_BASE_URL: hubspot.url,
      SALESFORCE_CLIENT_ID,
      SALESFORCE_LOGIN_URL: salesforce.url,
      SALESFORCE_ALLOW_ANY_HOST: 'true',
    },
    // The installations, seeded in this process (as `connect` would leave them, but without the CLI's start-up
    // time): two HubSpot portals and the Salesforce org. Sealed with the server's key.
    seed: (env) =>
      withFolderRuntime(env, async (runtime) => {
        await createAccount(runtime.opened.store, 'e2e', {});
        return {
          portal: (await addInstallation(runtime, 'hubspot', PORTAL_ID)).id,
          otherPortal: (await addInstallation(runtime, 'hubspot', OTHER_PORTAL_ID)).id,
          org: (await addInstallation(runtime, 'salesforce', salesforce.orgId)).id,
        };
      }),
  });
  ({ server, browser, publicUrl, seeded: ids } = app);
  for (const id of Object.values(ids)) expect(id).toMatch(/^inst_\S+$/);
}, 90_000);

afterAll(async () => {
  await app?.close();
  await hubspot?.close();
  await salesforce?.close();
});

/** What a sign-in passed through: the console callback's address and the state cookie the start set. */
interface Trail {
  callback: string;
  cookie: string;
}

/** A fresh browser on the console's sign-in page, the trail of its sign-in recorded. */
async function signInPage(): Promise<{ page: Page; trail: Trail }> {
  const page = await (await browser.newContext()).newPage();
  const trail: Trail = { callback: '', cookie: '' };
  page.on('request', (request) => {
    if (/\/console\/signin\/[a-z]+\/callback\?/.test(request.url())) trail.callback = request.url();
  });
  page.on('response', async (response) => {
    const cookie = (await response.headerValue('set-cookie'))?.split(';')[0] ?? '';
    if (cookie.startsWith('eb_console_signin_') && !cookie.endsWith('=')) trail.cookie = cookie;
  });
  const answer = await page.goto(`${publicUrl}/console`);
  expect(answer?.status()).toBe(200);
  return { page, trail };
}

/** Clicks a sign-in button and waits for where the CRM's round trip ends. */
async function signIn(page: Page, button: string, ends: string | RegExp): Promise<void> {
  await Promise.all([page.waitForURL(ends), page.click(`a:has-text("${button}")`)]);
}

const alertText = async (page: Page) => (await page.textContent('[role=alert]')) ?? '';

describe('console sign-in with the CRM', () => {
  it("signs a HubSpot Super Admin in to their portal's installation only; a replayed or forged state is refused", async () => {
    const { page, trail } = await signInPage();
    expect(await page.textContent('h1')).toBe('Sign in');
    expect(await page.locator('a.button').allTextContents()).toEqual([
      'Sign in with HubSpot',
      'Sign in with Salesforce',
      'Sign in with a Salesforce sandbox org',
    ]);
    expect(await page.textContent('main')).toContain('Super Admin rights in the HubSpot portal');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshotAtWidths(page, 'signin');
    expect(await unreachableByKeyboard(page)).toEqual([]);

    await signIn(page, 'Sign in with HubSpot', `${publicUrl}/console/installations/${ids.portal}`);
    expect(await page.textContent('h1')).toBe(`HubSpot portal ${PORTAL_ID}`);
    // The header names the portal and the person HubSpot signed in, not the installation's id.
    expect(await page.textContent('header .who')).toBe(`Signed in: HubSpot portal ${PORTAL_ID} · admin@portal.example`);
    // What the browser went through: HubSpot's consent with the sign-in's optional scope, back on the install's redirect URI.
    const authorize = hubspot.requests.find((r) => r.path === '/oauth/authorize');
    expect(authorize?.query.redirect_uri).toEqual([`${publicUrl}/oauth/hubspot/callback`]);
    expect(authorize?.query.optional_scope?.[0]?.split(' ')).toContain('settings.users.read');

    // Another portal's installation, and the Salesforce org's, answer as ones that do not exist.
    for (const other of [ids.otherPortal, ids.org]) {
      expect((await page.goto(`${publicUrl}/console/installations/${other}`))?.status()).toBe(404);
      expect((await page.goto(`${publicUrl}/console/installations/${other}/settings`))?.status()).toBe(404);
    }

    // The callback's address opened again, with the state cookie it had: refused as used, before its code reaches
    // HubSpot again; and without the cookie (another browser): refused as such.
    expect(trail.callback).toContain('state=');
    expect(trail.cookie).not.toBe('');
    const exchanges = hubspot.tokens.grants.length;
    const replay = await fetch(trail.callback, { headers: { cookie: trail.cookie }, redirect: 'manual' });
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain('each one signs in once');
    expect(replay.headers.getSetCookie().join(';')).not.toContain('eb_console=');
    expect(hubspot.tokens.grants.length).toBe(exchanges);
    const elsewhere = await fetch(trail.callback, { redirect: 'manual' });
    expect(elsewhere.status).toBe(400);
    expect(await elsewhere.text()).toContain('started in another browser');
    // A state this server did not seal, at the console's callback and at HubSpot's.
    const sealed = new URL(trail.callback).searchParams.get('state') ?? '';
    const altered = `${sealed.slice(0, -4)}${sealed.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`;
    const forged = await fetch(`${publicUrl}/console/signin/hubspot/callback?code=stolen&state=${encodeURIComponent(altered)}`, {
      headers: { cookie: trail.cookie },
      redirect: 'manual',
    });
    expect(forged.status).toBe(400);
    expect(await forged.text()).toContain('not valid');
    expect((await fetch(`${publicUrl}/oauth/hubspot/callback?code=stolen&state=forged`, { redirect: 'manual' })).status).toBe(400);
    await page.context().close();
  });

  it('refuses a HubSpot user who is not a Super Admin, naming the permission, and tells a portal without an installation so', async () => {
    hubspot.signInAs(HUBSPOT_MEMBER);
    try {
      const { page } = await signInPage();
      await signIn(page, 'Sign in with HubSpot', /\/console\/signin\/hubspot\/callback\?/);
      expect(await page.textContent('h1')).toBe('Only admins may sign in');
      const refusal = await alertText(page);
      expect(refusal).toContain(`member@portal.example is not a Super Admin of portal ${PORTAL_ID}`);
      expect(refusal).toContain('Signing in needs Super Admin rights in the HubSpot portal');
      expect(await seriousViolations(page)).toEqual([]);
      await screenshotAtWidths(page, 'signin-refused');
      expect((await page.goto(`${publicUrl}/console/installations/${ids.portal}`))?.status()).toBe(401);

      hubspot.signInAs(HUBSPOT_ADMIN, '424242');
      await page.goto(`${publicUrl}/console`);
      await signIn(page, 'Sign in with HubSpot', /\/console\/signin\/hubspot\/callback\?/);
      expect(await page.textContent('h1')).toBe('No installation here');
      expect(await alertText(page)).toContain('HubSpot account 424242: it has no installation on this server');
      expect((await page.goto(`${publicUrl}/console/installations/${ids.portal}`))?.status()).toBe(401);
      await page.context().close();
    } finally {
      hubspot.signInAs(HUBSPOT_ADMIN);
    }
  });

  it("signs a Salesforce admin in to their org's installation only, and refuses a user without Modify All Data or Customize Application", async () => {
    const { page } = await signInPage();
    await signIn(page, 'Sign in with Salesforce', `${publicUrl}/console/installations/${ids.org}`);
    expect(await page.textContent('h1')).toBe(`Salesforce org ${salesforce.orgId}`);
    expect((await page.goto(`${publicUrl}/console/installations/${ids.portal}`))?.status()).toBe(404);
    // The sign-in asked for the REST API only: no refresh token was issued.
    const authorize = salesforce.requests.find((r) => r.path === '/services/oauth2/authorize');
    expect(authorize?.query.scope).toBe('api');
    expect(authorize?.query.redirect_uri).toBe(`${publicUrl}/oauth/salesforce/callback`);
    await page.context().close();

    const rep = salesforce.addUser('rep@org.example');
    salesforce.signInAs(rep.id);
    try {
      const refused = await signInPage();
      await signIn(refused.page, 'Sign in with Salesforce', /\/console\/signin\/salesforce\/callback\?/);
      expect(await refused.page.textContent('h1')).toBe('Only admins may sign in');
      const refusal = await alertText(refused.page);
      expect(refusal).toContain(`user ${rep.id} holds neither Modify All Data nor Customize Application in org ${salesforce.orgId}`);
      expect(refusal).toContain('Modify All Data or Customize Application in the Salesforce org');
      expect(await seriousViolations(refused.page)).toEqual([]);
      expect((await refused.page.goto(`${publicUrl}/console/installations/${ids.org}`))?.status()).toBe(401);
      await refused.page.context().close();
    } finally {
      salesforce.signInAs([...salesforce.users.keys()][0] ?? '');
    }
  });

  it('logs who signed in by their account and installation, never their e-mail address or a token', () => {
    const output = server.output();
    expect(output).toContain('"msg":"console sign-in"');
    expect(output).toContain('"outcome":"not_admin"');
    expect(output).not.toContain('member@portal.example');
    expect(output).not.toContain('admin@portal.example');
    for (const token of hubspot.tokens.issued) expect(output).not.toContain(token.accessToken);
    // Nor the callback's address: its code and state stay out of the request log.
    expect(output).not.toContain('code=');
    expect(output).not.toContain('state=');
  });
});
