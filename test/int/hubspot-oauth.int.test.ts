// The HubSpot OAuth install over real HTTP, on the real runtime (SQLite, sealed installations) with a
// stateful fake HubSpot (token endpoint, account-info, properties) as the only double: install links,
// the authorize redirect, every refusal of the callback's state, and a good install end to end.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import nock from 'nock';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccount } from '../../core/accounts/admin.ts';
import { SecretBox, loadSecretBox } from '../../core/secrets/secret-box.ts';
import { HubSpotCredentialsSchema } from '../../connectors/hubspot/auth.ts';
import { HUBSPOT_PROVIDER } from '../../connectors/hubspot/connector.ts';
import { createInstallLink } from '../../connectors/hubspot/install.ts';
import type { Installation } from '../../bridge/model.ts';
import { createApp } from '../../server/http/app.ts';
import { type Config, loadConfig } from '../../server/config.ts';
import { crmRouter } from '../../server/http/crm-routes.ts';
import { createLogger } from '../../server/logger.ts';
import { type Runtime, crmModules, routeContext, openRuntime, startServer } from '../../server/runtime.ts';
import { type FakeHubSpot, startFakeHubSpot } from '../support/fake-hubspot.ts';
import { type Page, browserGet } from '../support/browser.ts';
import { tempDir } from '../support/harness.ts';
import { HUBSPOT_PATHS } from '../../connectors/hubspot/version.ts';

const PUBLIC_URL = 'https://enrich.example.com';
const APP_ID = '1160452';
const PORTAL_ID = '62515';
const ACCOUNT = 'acme';
const COOKIE = 'eb_hubspot_oauth';
const REQUIRED_SCOPES = ['oauth', 'crm.objects.contacts.read', 'crm.objects.contacts.write', 'crm.schemas.contacts.read', 'crm.schemas.contacts.write'];
const OPTIONAL_SCOPES = ['automation'];
/** The status properties every install must leave in the portal (issue 5, "Properties"). */
const STATUS_PROPERTIES = ['wf_enriched_at', 'wf_household_matched', 'wf_career_matched', 'wf_enrichment_status'];
const logger = createLogger('silent');

interface Rig {
  readonly origin: string;
  readonly config: Config;
  readonly runtime: Runtime;
  readonly fake: FakeHubSpot;
  /** How far the routes' clock is ahead of the real one. */
  readonly clock: { aheadMs: number };
  close(): Promise<void>;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  nock.cleanAll();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The HubSpot routes as startServer mounts them, on a real data folder, against a fake HubSpot. */
async function startRig(options: { publicUrl?: string; configured?: boolean; fakeApiBase?: (fake: FakeHubSpot) => string } = {}): Promise<Rig> {
  const fake = await startFakeHubSpot({ portalId: PORTAL_ID, appId: APP_ID });
  cleanups.push(() => fake.close());
  const dataDir = tempDir('enrichbridge-hubspot-oauth-');
  const config = loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    WORKER_CONCURRENCY: '0',
    PUBLIC_URL: options.publicUrl ?? PUBLIC_URL,
    HUBSPOT_API_BASE_URL: options.fakeApiBase?.(fake) ?? fake.url,
    ...(options.configured === false ? {} : { HUBSPOT_CLIENT_ID: fake.clientId, HUBSPOT_CLIENT_SECRET: fake.clientSecret, HUBSPOT_APP_ID: APP_ID }),
  });
  const runtime = await openRuntime(config, logger);
  await createAccount(runtime.opened.store, ACCOUNT, { careerIntelligence: true });
  const clock = { aheadMs: 0 };
  const router = crmRouter(
    crmModules(config),
    routeContext(runtime, config, logger, {
      wake: () => undefined,
      now: () => new Date(Date.now() + clock.aheadMs),
    }),
  );
  const app = createApp({ service: runtime.service, logger, trustProxy: false, requireHttps: false, routers: [router] });
  const server: Server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo; // a TCP listener always reports an AddressInfo
  const rig: Rig = {
    origin: `http://127.0.0.1:${port}`,
    config,
    runtime,
    fake,
    clock,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await runtime.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  cleanups.push(() => rig.close());
  return rig;
}

function linkFor(rig: Rig, now: Date = new Date()): string {
  return createInstallLink(rig.runtime.box, { kind: 'local', accountName: ACCOUNT }, 'sandbox', now);
}

const get = browserGet;

interface Started {
  readonly page: Page;
  readonly state: string;
  /** `name=value`, as the browser sends it back. */
  readonly cookie: string;
}

/** Opens the install link: HubSpot's authorize URL, with the state and the browser's cookie. */
async function beginInstall(rig: Rig, link = linkFor(rig)): Promise<Started> {
  const page = await get(`${rig.origin}/oauth/hubspot/install?link=${encodeURIComponent(link)}`);
  expect(page.status).toBe(302);
  const state = page.location?.searchParams.get('state') ?? '';
  const cookie = page.setCookies.find((c) => c.startsWith(`${COOKIE}=`))?.split(';')[0] ?? '';
  expect(state).not.toBe('');
  expect(cookie).not.toBe('');
  return { page, state, cookie };
}

/** What HubSpot's consent screen hands back: a code for our redirect URI. */
function grant(rig: Rig, redirectUri = `${PUBLIC_URL}/oauth/hubspot/callback`): string {
  return rig.fake.tokens.authorizationCode({ redirectUri });
}

function callback(rig: Rig, query: Record<string, string>, cookie?: string): Promise<Page> {
  return get(`${rig.origin}/oauth/hubspot/callback?${new URLSearchParams(query).toString()}`, cookie);
}

async function installations(rig: Rig): Promise<Installation[]> {
  return rig.runtime.bridge.pipelineStore.listInstallations();
}

const ourProperties = (fake: FakeHubSpot) => [...fake.properties.keys()].filter((name) => name.startsWith('wf_')).sort();
const propertyCreates = (fake: FakeHubSpot) =>
  fake.requests.filter((r) => r.method === 'POST' && /^\/crm\/v3\/properties\/contacts(\/batch\/create)?$/.test(r.path));
const tokenRequests = (fake: FakeHubSpot) => fake.requests.filter((r) => /\/token$/.test(r.path));

describe('GET /oauth/hubspot/install', () => {
  it('answers a 400 page without an install link', async () => {
    const rig = await startRig();

    const page = await get(`${rig.origin}/oauth/hubspot/install`);

    expect(page.status).toBe(400);
    expect(page.contentType).toMatch(/^text\/html/);
    expect(page.text).toContain('Install link needed');
    expect(page.setCookies).toEqual([]);
  });

  it('refuses a tampered, expired or foreign install link with a 400 page', async () => {
    const rig = await startRig();
    const good = linkFor(rig);
    const middle = Math.floor(good.length / 2);
    const tampered = `${good.slice(0, middle)}${good[middle] === 'A' ? 'B' : 'A'}${good.slice(middle + 1)}`;
    const expired = linkFor(rig, new Date(Date.now() - 8 * 24 * 3600_000));
    const foreign = createInstallLink(new SecretBox(randomBytes(32)), { kind: 'local', accountName: ACCOUNT }, 'sandbox');

    for (const link of [tampered, expired, foreign, 'not-a-link']) {
      const page = await get(`${rig.origin}/oauth/hubspot/install?link=${encodeURIComponent(link)}`);
      expect(page.status).toBe(400);
      expect(page.contentType).toMatch(/^text\/html/);
      expect(page.location).toBeNull();
      expect(page.setCookies).toEqual([]);
    }
    const expiredPage = await get(`${rig.origin}/oauth/hubspot/install?link=${encodeURIComponent(expired)}`);
    expect(expiredPage.text).toContain('expired');
  });

  it('redirects a good link to the authorize URL with exactly the required scopes and sets an HttpOnly state cookie', async () => {
    const rig = await startRig();
    const link = linkFor(rig);

    const { page, state, cookie } = await beginInstall(rig, link);

    const location = page.location;
    expect(location?.origin).toBe('https://app.hubspot.com');
    expect(location?.pathname).toBe('/oauth/authorize');
    const params = location?.searchParams;
    expect(params?.get('client_id')).toBe(rig.fake.clientId);
    expect(params?.get('redirect_uri')).toBe(`${PUBLIC_URL}/oauth/hubspot/callback`);
    expect(params?.get('scope')?.split(' ').sort()).toEqual([...REQUIRED_SCOPES].sort());
    expect(params?.get('optional_scope')?.split(' ').sort()).toEqual(OPTIONAL_SCOPES);
    expect([...(params?.keys() ?? [])].sort()).toEqual(['client_id', 'optional_scope', 'redirect_uri', 'scope', 'state']);
    // The state is sealed: neither the link nor the cookie's nonce can be read from it.
    expect(state).not.toBe(link);
    expect(state).not.toContain(cookie.split('=')[1] ?? '');
    const setCookie = page.setCookies.find((c) => c.startsWith(`${COOKIE}=`)) ?? '';
    expect(setCookie).toMatch(/;\s*HttpOnly/i);
    expect(setCookie).toMatch(/;\s*SameSite=Lax/i);
    expect(setCookie).toMatch(/;\s*Secure/i);
    expect(setCookie).toMatch(/;\s*Path=\/oauth\/hubspot(;|$)/i);
    expect(setCookie).toMatch(/;\s*Max-Age=600/i);
  });

  it('keeps a path prefix of PUBLIC_URL in the redirect URI and the cookie path', async () => {
    const prefixed = `${PUBLIC_URL}/enrich`;
    const rig = await startRig({ publicUrl: prefixed });

    const { page, state, cookie } = await beginInstall(rig);

    expect(page.location?.searchParams.get('redirect_uri')).toBe(`${prefixed}/oauth/hubspot/callback`);
    // The browser comes back to /enrich/oauth/hubspot/callback: the cookie must be sent there.
    expect(page.setCookies.find((c) => c.startsWith(`${COOKIE}=`))).toMatch(/;\s*Path=\/enrich\/oauth\/hubspot(;|$)/i);
    // And the code is exchanged with the same redirect URI it was granted for.
    const done = await callback(rig, { code: grant(rig, `${prefixed}/oauth/hubspot/callback`), state }, cookie);
    expect(done.status).toBe(200);
    expect(await installations(rig)).toHaveLength(1);
  });

  it('answers 503 when the HubSpot app is not configured', async () => {
    const rig = await startRig({ configured: false });

    const page = await get(`${rig.origin}/oauth/hubspot/install?link=${encodeURIComponent(linkFor(rig))}`);

    expect(page.status).toBe(503);
    expect(page.location).toBeNull();
  });
});

describe('GET /oauth/hubspot/callback: the state', () => {
  it('refuses a bad or tampered state with 400, installs nothing and never exchanges the code', async () => {
    const rig = await startRig();
    const { state, cookie } = await beginInstall(rig);
    const code = grant(rig);
    const middle = Math.floor(state.length / 2);
    const tampered = `${state.slice(0, middle)}${state[middle] === 'A' ? 'B' : 'A'}${state.slice(middle + 1)}`;
    // An install link is sealed with the same key, but it is not a state.
    const link = linkFor(rig);

    for (const bad of ['garbage', tampered, link]) {
      const page = await callback(rig, { code, state: bad }, cookie);
      expect(page.status).toBe(400);
      expect(page.contentType).toMatch(/^text\/html/);
    }
    const missing = await callback(rig, { code }, cookie);
    expect(missing.status).toBe(400);

    expect(await installations(rig)).toEqual([]);
    expect(rig.fake.tokens.grants).toEqual([]);
  });

  it('refuses a state that comes back to another browser (no cookie, or another install’s cookie)', async () => {
    const rig = await startRig();
    const mine = await beginInstall(rig);
    const theirs = await beginInstall(rig);
    const code = grant(rig);

    const noCookie = await callback(rig, { code, state: mine.state });
    const otherCookie = await callback(rig, { code, state: mine.state }, theirs.cookie);

    expect(noCookie.status).toBe(400);
    expect(otherCookie.status).toBe(400);
    expect(otherCookie.text).toContain('another browser');
    expect(await installations(rig)).toEqual([]);
    expect(rig.fake.tokens.grants).toEqual([]);

    // The browser that started it finishes it with the same, still unused code.
    const own = await callback(rig, { code, state: mine.state }, mine.cookie);
    expect(own.status).toBe(200);
  });

  it('completes only one install per state: the same callback again, even with a fresh code, is refused and exchanges nothing', async () => {
    const rig = await startRig();
    const { state, cookie } = await beginInstall(rig);

    const first = await callback(rig, { code: grant(rig), state }, cookie);
    const grantsAfterFirst = rig.fake.tokens.grants.length;
    const again = await callback(rig, { code: grant(rig), state }, cookie);

    expect(first.status).toBe(200);
    expect(again.status).toBe(400);
    expect(again.text).toContain('used for an install already');
    expect(rig.fake.tokens.grants).toHaveLength(grantsAfterFirst);
    expect(await installations(rig)).toHaveLength(1);
  });

  it('refuses a state older than 10 minutes', async () => {
    const rig = await startRig();
    const { state, cookie } = await beginInstall(rig);
    rig.clock.aheadMs = 11 * 60_000;

    const page = await callback(rig, { code: grant(rig), state }, cookie);

    expect(page.status).toBe(400);
    expect(page.text).toContain('10 minutes');
    expect(await installations(rig)).toEqual([]);
    expect(rig.fake.tokens.grants).toEqual([]);
  });

  it('answers a 400 page when HubSpot reports error=access_denied', async () => {
    const rig = await startRig();
    const { state, cookie } = await beginInstall(rig);

    const page = await callback(rig, { error: 'access_denied', error_description: 'The user denied access', state }, cookie);

    expect(page.status).toBe(400);
    expect(page.contentType).toMatch(/^text\/html/);
    expect(page.text).toContain('access_denied');
    expect(await installations(rig)).toEqual([]);
    expect(rig.fake.tokens.grants).toEqual([]);
  });
});

describe('GET /oauth/hubspot/callback: the install', () => {
  it('exchanges the code, creates the installation with sealed OAuth credentials, provisions properties, and names the portal', async () => {
    const rig = await startRig();
    const { state, cookie } = await beginInstall(rig);
    const before = Date.now();

    const page = await callback(rig, { code: grant(rig), state }, cookie);

    expect(page.status).toBe(200);
    expect(page.contentType).toMatch(/^text\/html/);
    expect(page.text).toContain(`Portal ${PORTAL_ID}`);
    expect(page.text).toContain('is now connected');
    // The state cookie has done its job.
    expect(page.setCookies.find((c) => c.startsWith(`${COOKIE}=`))).toMatch(/Max-Age=0/i);
    // The date-versioned token endpoint, not the deprecated v1 path.
    expect(tokenRequests(rig.fake).map((r) => `${r.method} ${r.path}`)).toEqual([`POST ${HUBSPOT_PATHS.token}`]);
    expect(rig.fake.tokens.grants).toEqual(['authorization_code']);

    const [installation, ...others] = await installations(rig);
    expect(others).toEqual([]);
    expect(installation).toMatchObject({
      provider: HUBSPOT_PROVIDER,
      externalAccountId: PORTAL_ID,
      environment: 'sandbox',
      status: 'active',
      target: { kind: 'local' },
    });
    if (installation === undefined) return;
    expect(page.text).toContain(installation.id);
    const issued = rig.fake.tokens.issued[0];
    const credentials = HubSpotCredentialsSchema.parse((await rig.runtime.bridge.installations.secrets(installation.id)).crm);
    expect(credentials).toMatchObject({
      kind: 'oauth',
      accessToken: issued?.accessToken,
      refreshToken: issued?.refreshToken,
      clientId: rig.fake.clientId,
      clientSecret: rig.fake.clientSecret,
      appId: APP_ID,
      apiBaseUrl: rig.fake.url,
    });
    const expiresAt = Date.parse(credentials.expiresAt ?? '');
    expect(expiresAt).toBeGreaterThanOrEqual(before + 1800_000 - 1000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 1800_000 + 1000);
    // Sealed at rest: none of the secrets is in the row as written.
    const row = await rig.runtime.opened.db.selectFrom('installations').select('secrets').where('id', '=', installation.id).executeTakeFirstOrThrow();
    for (const secret of [issued?.accessToken ?? '', issued?.refreshToken ?? '', rig.fake.clientSecret]) {
      expect(secret).not.toBe('');
      expect(row.secrets).not.toContain(secret);
    }

    expect(rig.fake.groups.has('enrichbridge')).toBe(true);
    const properties = ourProperties(rig.fake);
    expect(properties).toEqual(expect.arrayContaining(STATUS_PROPERTIES));
    expect(properties.some((name) => name.startsWith('wf_hh_'))).toBe(true);
    expect(properties.some((name) => name.startsWith('wf_career_'))).toBe(true);
    expect(properties.every((name) => rig.fake.properties.get(name)?.groupName === 'enrichbridge')).toBe(true);
    // Provisioned with the token just issued.
    expect(propertyCreates(rig.fake).every((r) => r.token === issued?.accessToken)).toBe(true);
  });

  it('renews the credentials of a portal installed again, without a second installation or duplicate properties', async () => {
    const rig = await startRig();
    const first = await beginInstall(rig);
    expect((await callback(rig, { code: grant(rig), state: first.state }, first.cookie)).status).toBe(200);
    const [installation] = await installations(rig);
    const propertiesAfterFirst = ourProperties(rig.fake);
    const createsAfterFirst = propertyCreates(rig.fake).length;

    const second = await beginInstall(rig);
    const page = await callback(rig, { code: grant(rig), state: second.state }, second.cookie);

    expect(page.status).toBe(200);
    expect(page.text).toContain('was connected already');
    expect(page.text).toMatch(/0 created/);
    const all = await installations(rig);
    expect(all.map((i) => i.id)).toEqual([installation?.id]);
    const renewed = HubSpotCredentialsSchema.parse((await rig.runtime.bridge.installations.secrets(installation?.id ?? '')).crm);
    expect(rig.fake.tokens.issued).toHaveLength(2);
    expect(renewed.accessToken).toBe(rig.fake.tokens.issued[1]?.accessToken);
    expect(renewed.refreshToken).toBe(rig.fake.tokens.issued[1]?.refreshToken);
    expect(ourProperties(rig.fake)).toEqual(propertiesAfterFirst);
    expect(propertyCreates(rig.fake)).toHaveLength(createsAfterFirst);
  });

  it('connects a disabled installation again as active', async () => {
    const rig = await startRig();
    const first = await beginInstall(rig);
    expect((await callback(rig, { code: grant(rig), state: first.state }, first.cookie)).status).toBe(200);
    const [installation] = await installations(rig);
    await rig.runtime.bridge.installations.disable(installation?.id ?? '');

    const second = await beginInstall(rig);
    const page = await callback(rig, { code: grant(rig), state: second.state }, second.cookie);

    expect(page.status).toBe(200);
    expect(await installations(rig)).toEqual([expect.objectContaining({ id: installation?.id, status: 'active' })]);
  });

  it('shows an error page and installs nothing when the token endpoint refuses the code', async () => {
    const rig = await startRig();
    const { state, cookie } = await beginInstall(rig);

    // A code HubSpot never issued (or one already used): invalid_grant.
    const page = await callback(rig, { code: 'na1-0000-not-a-code', state }, cookie);

    expect(page.status).toBeGreaterThanOrEqual(400);
    expect(page.contentType).toMatch(/^text\/html/);
    expect(page.text).toContain('Nothing was installed');
    expect(rig.fake.tokens.grants).toEqual(['authorization_code']);
    expect(await installations(rig)).toEqual([]);
    expect(ourProperties(rig.fake)).toEqual([]);
  });

  it('leaves no installation behind when the properties cannot be provisioned', async () => {
    const rig = await startRig();
    const { state, cookie } = await beginInstall(rig);
    rig.fake.failNext(5, 'UNAUTHORIZED', { path: HUBSPOT_PATHS.properties });

    const page = await callback(rig, { code: grant(rig), state }, cookie);

    expect(page.status).toBeGreaterThanOrEqual(400);
    expect(page.text).toContain('Nothing was installed');
    expect(await installations(rig)).toEqual([]);
  });

  it('learns the portal from account-info when the token response has no hub_id', async () => {
    const rig = await startRig();
    const { state, cookie } = await beginInstall(rig);
    // The fake's tokens, answered without hub_id (older token responses carry none).
    const tokens = rig.fake.tokens.issue();
    const scope = nock(rig.fake.url, { allowUnmocked: true })
      .post(HUBSPOT_PATHS.token, (body: Record<string, string>) => body.grant_type === 'authorization_code' && body.code === 'code-without-hub-id')
      .reply(200, { token_type: 'bearer', access_token: tokens.accessToken, refresh_token: tokens.refreshToken, expires_in: 1800 });

    const page = await callback(rig, { code: 'code-without-hub-id', state }, cookie);

    scope.done();
    expect(page.status).toBe(200);
    expect(rig.fake.requests.some((r) => r.path === HUBSPOT_PATHS.accountDetails && r.token === tokens.accessToken)).toBe(true);
    expect(await installations(rig)).toEqual([expect.objectContaining({ externalAccountId: PORTAL_ID })]);
  });
});

describe('the OAuth install on the real server', () => {
  it('is mounted by startServer: a link sealed with the data folder’s key redirects to HubSpot', async () => {
    const fake = await startFakeHubSpot({ portalId: PORTAL_ID, appId: APP_ID });
    cleanups.push(() => fake.close());
    const dataDir = tempDir('enrichbridge-hubspot-oauth-server-');
    cleanups.push(() => Promise.resolve(rmSync(dataDir, { recursive: true, force: true })));
    const env = {
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      WORKER_CONCURRENCY: '0',
      PUBLIC_URL,
      HUBSPOT_CLIENT_ID: fake.clientId,
      HUBSPOT_CLIENT_SECRET: fake.clientSecret,
      HUBSPOT_APP_ID: APP_ID,
      HUBSPOT_API_BASE_URL: fake.url,
    };
    const server = await startServer(loadConfig(env), logger);
    cleanups.push(() => server.stop());
    // As `enrichbridge hubspot install-link` makes it: sealed with the data folder's key.
    const link = createInstallLink(loadSecretBox({ dataDir }), { kind: 'local', accountName: ACCOUNT }, 'sandbox');

    const page = await get(`${server.url}/oauth/hubspot/install?link=${encodeURIComponent(link)}`);

    expect(page.status).toBe(302);
    expect(page.location?.searchParams.get('redirect_uri')).toBe(`${PUBLIC_URL}/oauth/hubspot/callback`);
    expect(page.setCookies.some((c) => c.startsWith(`${COOKIE}=`))).toBe(true);
  });
});
