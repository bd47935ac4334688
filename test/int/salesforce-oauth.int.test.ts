// Connecting a Salesforce org over real HTTP, on the real runtime (SQLite, sealed installations): install links,
// the authorize redirect with PKCE (production and sandbox login), every refusal of the callback's state, a good
// install end to end, a refused code, a non-Salesforce instance URL, a reinstall; and the CLI's install-link and
// connect-jwt commands in-process. Salesforce's token endpoint is nock'd with its documented answer shapes.
import { createVerify, generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import nock from 'nock';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createAccount } from '../../core/accounts/admin.ts';
import { SecretBox, loadSecretBox } from '../../core/secrets/secret-box.ts';
import { createInstallLink as createHubSpotInstallLink } from '../../connectors/hubspot/install.ts';
import type { Installation } from '../../bridge/model.ts';
import { JWT_BEARER_GRANT_TYPE, SalesforceCredentialsSchema, pkceChallenge } from '../../connectors/salesforce/auth.ts';
import { SALESFORCE_PROVIDER } from '../../connectors/salesforce/connector.ts';
import { SalesforceInstallError, type SalesforceOrgKind, createInstallLink, verifyOAuthState } from '../../connectors/salesforce/install.ts';
import { createApp } from '../../server/http/app.ts';
import { type Config, loadConfig } from '../../server/config.ts';
import { createLogger } from '../../server/logger.ts';
import { type Runtime, crmModules, routeContext, openRuntime, startServer } from '../../server/runtime.ts';
import { crmCommand } from '../../server/cli/crm.ts';
import { SALESFORCE_STATE_COOKIE } from '../../connectors/salesforce/index.ts';
import { crmRouter } from '../../server/http/crm-routes.ts';
import { tempDir } from '../support/harness.ts';
import { type Page, browserGet } from '../support/browser.ts';

const PUBLIC_URL = 'https://enrich.example.com';
const LOGIN = 'https://login.salesforce.com';
const TEST_LOGIN = 'https://test.salesforce.com';
const TOKEN = '/services/oauth2/token';
const CLIENT_ID = '3MVG9consumer.key.0001';
const CLIENT_SECRET = 'consumer-secret-0001';
const INSTANCE = 'https://enrichbridge-dev-ed.develop.my.salesforce.com';
const ORG = '00D5g000004fAkEEAU';
const USER = '0055g00000AbCdEAAV';
const ACCOUNT = 'acme';
const COOKIE = SALESFORCE_STATE_COOKIE;
const logger = createLogger('silent');

const FixtureSchema = z.object({ status: z.number().int(), headers: z.record(z.string(), z.string()), body: z.record(z.string(), z.unknown()) });
const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/salesforce/rest');
function fixture(name: string) {
  return FixtureSchema.parse(JSON.parse(readFileSync(path.join(FIXTURES, name), 'utf8')));
}
/** nock reply arguments: the fixture's status and headers, its body with `changes`. */
function answer(name: string, changes: Record<string, unknown> = {}): [number, string, Record<string, string>] {
  const f = fixture(name);
  return [f.status, JSON.stringify({ ...f.body, ...changes }), f.headers];
}
const CODE_ANSWER = fixture('token-authorization-code-200.json').body;

beforeAll(() => {
  nock.disableNetConnect();
  // Our own server on loopback is real; Salesforce is not.
  nock.enableNetConnect('127.0.0.1');
});
afterAll(() => {
  nock.enableNetConnect();
});

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  nock.cleanAll();
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Rig {
  readonly origin: string;
  readonly dataDir: string;
  readonly config: Config;
  readonly runtime: Runtime;
  /** How far the routes' clock is ahead of the real one. */
  readonly clock: { aheadMs: number };
}

/** The OAuth routes as startServer mounts them, on a real data folder. */
async function startRig(options: { publicUrl?: string; configured?: boolean; withSecret?: boolean } = {}): Promise<Rig> {
  const dataDir = tempDir('enrichbridge-salesforce-oauth-');
  const config = loadConfig({
    DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    WORKER_CONCURRENCY: '0',
    PUBLIC_URL: options.publicUrl ?? PUBLIC_URL,
    ...(options.configured === false ? {} : { SALESFORCE_CLIENT_ID: CLIENT_ID }),
    ...(options.configured === false || options.withSecret === false ? {} : { SALESFORCE_CLIENT_SECRET: CLIENT_SECRET }),
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
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await runtime.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return { origin: `http://127.0.0.1:${port}`, dataDir, config, runtime, clock };
}

function linkFor(rig: Rig, options: { org?: SalesforceOrgKind; now?: Date; environment?: 'sandbox' | 'production' } = {}): string {
  const { environment = 'sandbox', ...rest } = options;
  return createInstallLink(rig.runtime.box, { kind: 'local', accountName: ACCOUNT }, environment, rest);
}

const get = browserGet;

interface Started {
  readonly page: Page;
  readonly state: string;
  /** `name=value`, as the browser sends it back. */
  readonly cookie: string;
  /** The PKCE verifier sealed in the state, read back with the runtime's key. */
  readonly verifier: string;
}

/** Opens the install link: Salesforce's authorize URL, with the state and the browser's cookie. */
async function beginInstall(rig: Rig, link = linkFor(rig), query = ''): Promise<Started> {
  const page = await get(`${rig.origin}/oauth/salesforce/install?link=${encodeURIComponent(link)}${query}`);
  expect(page.status).toBe(302);
  const state = page.location?.searchParams.get('state') ?? '';
  const cookie = page.setCookies.find((c) => c.startsWith(`${COOKIE}=`))?.split(';')[0] ?? '';
  expect(state).not.toBe('');
  expect(cookie).not.toBe('');
  const verifier = verifyOAuthState(rig.runtime.box, state, cookie.slice(COOKIE.length + 1)).codeVerifier;
  return { page, state, cookie, verifier };
}

function callback(rig: Rig, query: Record<string, string>, cookie?: string): Promise<Page> {
  return get(`${rig.origin}/oauth/salesforce/callback?${new URLSearchParams(query).toString()}`, cookie);
}

/** Salesforce's token endpoint, expecting exactly this code exchange. */
function tokenExchange(started: Started, code: string, options: { login?: string; redirectUri?: string; withSecret?: boolean } = {}): nock.Interceptor {
  const form: Record<string, string> = {
    grant_type: 'authorization_code',
    code,
    client_id: CLIENT_ID,
    ...(options.withSecret === false ? {} : { client_secret: CLIENT_SECRET }),
    redirect_uri: options.redirectUri ?? `${PUBLIC_URL}/oauth/salesforce/callback`,
    code_verifier: started.verifier,
  };
  return nock(options.login ?? LOGIN)
    .matchHeader('content-type', 'application/x-www-form-urlencoded')
    .post(TOKEN, form);
}

async function installations(rig: Rig): Promise<Installation[]> {
  return rig.runtime.bridge.pipelineStore.listInstallations();
}

async function sealedRow(rig: Rig, id: string): Promise<string> {
  return (await rig.runtime.opened.db.selectFrom('installations').select('secrets').where('id', '=', id).executeTakeFirstOrThrow()).secrets;
}

function flip(sealed: string): string {
  const middle = Math.floor(sealed.length / 2);
  return `${sealed.slice(0, middle)}${sealed[middle] === 'A' ? 'B' : 'A'}${sealed.slice(middle + 1)}`;
}

describe('GET /oauth/salesforce/install', () => {
  it('answers a 400 page without an install link', async () => {
    const rig = await startRig();

    const page = await get(`${rig.origin}/oauth/salesforce/install`);

    expect(page.status).toBe(400);
    expect(page.contentType).toMatch(/^text\/html/);
    expect(page.text).toContain('Install link needed');
    expect(page.setCookies).toEqual([]);
  });

  it('refuses a tampered, expired, foreign or HubSpot install link with a 400 page and no cookie', async () => {
    const rig = await startRig();
    const expired = linkFor(rig, { now: new Date(Date.now() - 8 * 24 * 3600_000) });
    const foreign = createInstallLink(new SecretBox(randomBytes(32)), { kind: 'local', accountName: ACCOUNT }, 'sandbox');
    // Sealed with this server's key, but for the other CRM.
    const hubspot = createHubSpotInstallLink(rig.runtime.box, { kind: 'local', accountName: ACCOUNT }, 'sandbox');

    for (const link of [flip(linkFor(rig)), expired, foreign, hubspot, 'not-a-link']) {
      const page = await get(`${rig.origin}/oauth/salesforce/install?link=${encodeURIComponent(link)}`);
      expect(page.status).toBe(400);
      expect(page.contentType).toMatch(/^text\/html/);
      expect(page.location).toBeNull();
      expect(page.setCookies).toEqual([]);
    }
    const expiredPage = await get(`${rig.origin}/oauth/salesforce/install?link=${encodeURIComponent(expired)}`);
    expect(expiredPage.text).toContain('expired');
  });

  it('redirects a good link to the production authorize URL with PKCE (S256 of the sealed verifier) and sets an HttpOnly state cookie', async () => {
    const rig = await startRig();
    const link = linkFor(rig);

    const { page, state, cookie, verifier } = await beginInstall(rig, link);

    const location = page.location;
    expect(`${location?.origin}${location?.pathname}`).toBe(`${LOGIN}/services/oauth2/authorize`);
    expect(Object.fromEntries(location?.searchParams ?? [])).toEqual({
      response_type: 'code',
      client_id: CLIENT_ID,
      redirect_uri: `${PUBLIC_URL}/oauth/salesforce/callback`,
      scope: 'api refresh_token',
      state,
      code_challenge: pkceChallenge(verifier),
    });
    // Only the challenge travels in the clear; the verifier, the link and the nonce are sealed in the state.
    expect(page.location?.toString()).not.toContain(verifier);
    expect(state).not.toBe(link);
    expect(state).not.toContain(cookie.split('=')[1] ?? '');
    const setCookie = page.setCookies.find((c) => c.startsWith(`${COOKIE}=`)) ?? '';
    expect(setCookie).toMatch(/;\s*HttpOnly/i);
    expect(setCookie).toMatch(/;\s*SameSite=Lax/i);
    expect(setCookie).toMatch(/;\s*Secure/i);
    expect(setCookie).toMatch(/;\s*Path=\/oauth\/salesforce(;|$)/i);
    expect(setCookie).toMatch(/;\s*Max-Age=600/i);
    // A new verifier for every install.
    const again = await beginInstall(rig, link);
    expect(again.verifier).not.toBe(verifier);
  });

  it('sends a sandbox org to test.salesforce.com: by org=sandbox, or by a link made for one', async () => {
    const rig = await startRig();

    const chosen = await beginInstall(rig, linkFor(rig), '&org=sandbox');
    const fixed = await beginInstall(rig, linkFor(rig, { org: 'sandbox' }));

    for (const started of [chosen, fixed]) {
      expect(`${started.page.location?.origin}${started.page.location?.pathname}`).toBe(`${TEST_LOGIN}/services/oauth2/authorize`);
      expect(started.page.location?.searchParams.get('code_challenge')).toBe(pkceChallenge(started.verifier));
    }
    const production = await beginInstall(rig, linkFor(rig), '&org=production');
    expect(production.page.location?.origin).toBe(LOGIN);
  });

  it('refuses an org parameter that is unknown or contradicts the link', async () => {
    const rig = await startRig();

    const unknown = await get(`${rig.origin}/oauth/salesforce/install?link=${encodeURIComponent(linkFor(rig))}&org=developer`);
    const contradicting = await get(`${rig.origin}/oauth/salesforce/install?link=${encodeURIComponent(linkFor(rig, { org: 'sandbox' }))}&org=production`);

    for (const page of [unknown, contradicting]) {
      expect(page.status).toBe(400);
      expect(page.location).toBeNull();
      expect(page.setCookies).toEqual([]);
    }
    expect(contradicting.text).toContain('sandbox org');
  });

  it('keeps a path prefix of PUBLIC_URL in the redirect URI, the cookie path and the code exchange', async () => {
    const prefixed = `${PUBLIC_URL}/enrich`;
    const rig = await startRig({ publicUrl: prefixed });

    const started = await beginInstall(rig);

    expect(started.page.location?.searchParams.get('redirect_uri')).toBe(`${prefixed}/oauth/salesforce/callback`);
    expect(started.page.setCookies.find((c) => c.startsWith(`${COOKIE}=`))).toMatch(/;\s*Path=\/enrich\/oauth\/salesforce(;|$)/i);
    const token = tokenExchange(started, 'aPrxprefixed', { redirectUri: `${prefixed}/oauth/salesforce/callback` }).reply(
      ...answer('token-authorization-code-200.json'),
    );
    const done = await callback(rig, { code: 'aPrxprefixed', state: started.state }, started.cookie);
    token.done();
    expect(done.status).toBe(200);
    expect(await installations(rig)).toHaveLength(1);
  });

  it('answers 503 when the External Client App is not configured', async () => {
    const rig = await startRig({ configured: false });

    const page = await get(`${rig.origin}/oauth/salesforce/install?link=${encodeURIComponent(linkFor(rig))}`);

    expect(page.status).toBe(503);
    expect(page.location).toBeNull();
    expect(page.setCookies).toEqual([]);
  });
});

describe('GET /oauth/salesforce/callback: the state', () => {
  it('refuses a bad or tampered state, or an install link as state, with 400, and never exchanges the code', async () => {
    const rig = await startRig();
    const started = await beginInstall(rig);
    const token = tokenExchange(started, 'aPrxcode0001').reply(...answer('token-authorization-code-200.json'));

    for (const bad of ['garbage', flip(started.state), linkFor(rig)]) {
      const page = await callback(rig, { code: 'aPrxcode0001', state: bad }, started.cookie);
      expect(page.status).toBe(400);
      expect(page.contentType).toMatch(/^text\/html/);
    }
    expect((await callback(rig, { code: 'aPrxcode0001' }, started.cookie)).status).toBe(400);
    expect((await callback(rig, { state: started.state }, started.cookie)).status).toBe(400);

    expect(token.isDone()).toBe(false);
    expect(await installations(rig)).toEqual([]);
  });

  it('refuses a state that comes back to another browser (no cookie, or another install’s cookie)', async () => {
    const rig = await startRig();
    const mine = await beginInstall(rig);
    const theirs = await beginInstall(rig);
    const token = tokenExchange(mine, 'aPrxcode0001').reply(...answer('token-authorization-code-200.json'));

    const noCookie = await callback(rig, { code: 'aPrxcode0001', state: mine.state });
    const otherCookie = await callback(rig, { code: 'aPrxcode0001', state: mine.state }, theirs.cookie);

    expect(noCookie.status).toBe(400);
    expect(otherCookie.status).toBe(400);
    expect(otherCookie.text).toContain('another browser');
    expect(token.isDone()).toBe(false);
    expect(await installations(rig)).toEqual([]);

    // The browser that started it finishes it with the same, still unused code.
    const own = await callback(rig, { code: 'aPrxcode0001', state: mine.state }, mine.cookie);
    expect(own.status).toBe(200);
    token.done();
  });

  it('completes only one install per state: the same callback again, even with a fresh code, is refused and exchanges nothing', async () => {
    const rig = await startRig();
    const started = await beginInstall(rig);
    const first = tokenExchange(started, 'aPrxcode0001').reply(...answer('token-authorization-code-200.json'));
    const second = tokenExchange(started, 'aPrxcode0002').reply(...answer('token-authorization-code-200.json'));

    const done = await callback(rig, { code: 'aPrxcode0001', state: started.state }, started.cookie);
    const again = await callback(rig, { code: 'aPrxcode0002', state: started.state }, started.cookie);

    expect(done.status).toBe(200);
    first.done();
    expect(again.status).toBe(400);
    expect(again.text).toContain('used for an install already');
    expect(second.isDone()).toBe(false);
    expect(await installations(rig)).toHaveLength(1);
  });

  it('refuses a state older than 10 minutes', async () => {
    const rig = await startRig();
    const started = await beginInstall(rig);
    const token = tokenExchange(started, 'aPrxcode0001').reply(...answer('token-authorization-code-200.json'));
    rig.clock.aheadMs = 11 * 60_000;

    const page = await callback(rig, { code: 'aPrxcode0001', state: started.state }, started.cookie);

    expect(page.status).toBe(400);
    expect(page.text).toContain('10 minutes');
    expect(token.isDone()).toBe(false);
    expect(await installations(rig)).toEqual([]);
  });

  it('answers a 400 page, escaped, when Salesforce reports an error instead of a code', async () => {
    const rig = await startRig();
    const started = await beginInstall(rig);

    const denied = await callback(rig, { error: 'access_denied', error_description: 'end-user denied authorization', state: started.state }, started.cookie);
    const hostile = await callback(rig, { error: '<script>alert(1)</script>', state: started.state }, started.cookie);

    expect(denied.status).toBe(400);
    expect(denied.contentType).toMatch(/^text\/html/);
    expect(denied.text).toContain('access_denied');
    expect(hostile.status).toBe(400);
    expect(hostile.text).not.toContain('<script>');
    expect(hostile.text).toContain('&#60;script&#62;');
    expect(await installations(rig)).toEqual([]);
  });
});

describe('GET /oauth/salesforce/callback: the install', () => {
  it('exchanges the code with the verifier, creates the installation with sealed OAuth credentials, and shows the org and the signing secret once', async () => {
    const rig = await startRig();
    const started = await beginInstall(rig);
    const token = tokenExchange(started, 'aPrxcode0001').reply(...answer('token-authorization-code-200.json'));

    const page = await callback(rig, { code: 'aPrxcode0001', state: started.state }, started.cookie);

    token.done();
    expect(page.status).toBe(200);
    expect(page.contentType).toMatch(/^text\/html/);
    expect(page.cacheControl).toBe('no-store');
    expect(page.text).toContain(`Org ${ORG} (${INSTANCE}, a Salesforce production org) is now connected`);
    expect(page.text).toContain('manifests/salesforce');
    // The state cookie has done its job.
    expect(page.setCookies.find((c) => c.startsWith(`${COOKIE}=`))).toMatch(/Max-Age=0/i);

    const [installation, ...others] = await installations(rig);
    expect(others).toEqual([]);
    expect(installation).toMatchObject({
      provider: SALESFORCE_PROVIDER,
      externalAccountId: ORG,
      environment: 'sandbox',
      status: 'active',
      target: { kind: 'local' },
    });
    if (installation === undefined) return;
    expect(installation.externalAccountId).toHaveLength(18);
    expect(page.text).toContain(installation.id);
    const secrets = await rig.runtime.bridge.installations.secrets(installation.id);
    const credentials = SalesforceCredentialsSchema.parse(secrets.crm);
    expect(credentials).toEqual({
      kind: 'oauth',
      instanceUrl: INSTANCE,
      accessToken: CODE_ANSWER.access_token,
      refreshToken: CODE_ANSWER.refresh_token,
      issuedAt: new Date(Number(CODE_ANSWER.issued_at)).toISOString(),
      expiresAt: null,
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      loginUrl: LOGIN,
      orgId: ORG,
      userId: USER,
      jwt: null,
    });
    // The signing secret: on the page once (a later look at the secrets returns the same one).
    const secret = secrets.webhookSecret ?? '';
    expect(secret).not.toBe('');
    expect(page.text).toContain(`<code>${secret}</code>`);
    expect(await rig.runtime.bridge.installations.webhookSecret(installation.id)).toBe(secret);
    // Sealed at rest: none of the secrets is in the row as written.
    const row = await sealedRow(rig, installation.id);
    for (const value of [credentials.accessToken, credentials.refreshToken ?? '', CLIENT_SECRET, secret]) {
      expect(value).not.toBe('');
      expect(row).not.toContain(value);
    }
  });

  it('connects a Salesforce sandbox org: the code is exchanged at test.salesforce.com, and refreshes go there', async () => {
    const rig = await startRig();
    const started = await beginInstall(rig, linkFor(rig), '&org=sandbox');
    const sandboxInstance = 'https://acme--uat.sandbox.my.salesforce.com';
    const token = tokenExchange(started, 'aPrxsandbox', { login: TEST_LOGIN }).reply(
      ...answer('token-authorization-code-200.json', { instance_url: sandboxInstance, id: `${TEST_LOGIN}/id/${ORG}/${USER}` }),
    );

    const page = await callback(rig, { code: 'aPrxsandbox', state: started.state }, started.cookie);

    token.done();
    expect(page.status).toBe(200);
    expect(page.text).toContain('a Salesforce sandbox org');
    const [installation] = await installations(rig);
    const credentials = SalesforceCredentialsSchema.parse((await rig.runtime.bridge.installations.secrets(installation?.id ?? '')).crm);
    expect(credentials).toMatchObject({ kind: 'oauth', loginUrl: TEST_LOGIN, instanceUrl: sandboxInstance, orgId: ORG });
  });

  it('exchanges without a client secret when none is configured (PKCE alone)', async () => {
    const rig = await startRig({ withSecret: false });
    const started = await beginInstall(rig);
    const token = tokenExchange(started, 'aPrxcode0001', { withSecret: false }).reply(...answer('token-authorization-code-200.json'));

    const page = await callback(rig, { code: 'aPrxcode0001', state: started.state }, started.cookie);

    token.done();
    expect(page.status).toBe(200);
    const [installation] = await installations(rig);
    expect(SalesforceCredentialsSchema.parse((await rig.runtime.bridge.installations.secrets(installation?.id ?? '')).crm).clientSecret).toBeNull();
  });

  it('refuses a token answer whose instance URL is not a Salesforce host, and installs nothing', async () => {
    const rig = await startRig();
    const started = await beginInstall(rig);
    const token = tokenExchange(started, 'aPrxcode0001').reply(
      ...answer('token-authorization-code-200.json', { instance_url: 'https://collector.example.net' }),
    );

    const page = await callback(rig, { code: 'aPrxcode0001', state: started.state }, started.cookie);

    token.done();
    expect(page.status).toBe(502);
    expect(page.text).toContain('not a Salesforce host');
    expect(page.text).toContain('Nothing was installed');
    expect(await installations(rig)).toEqual([]);
  });

  it('shows an error page and installs nothing when Salesforce refuses the code (invalid_grant)', async () => {
    const rig = await startRig();
    const started = await beginInstall(rig);
    const token = tokenExchange(started, 'aPrxused').reply(...answer('token-400-invalid-grant.json'));

    const page = await callback(rig, { code: 'aPrxused', state: started.state }, started.cookie);

    token.done();
    expect(page.status).toBe(400);
    expect(page.contentType).toMatch(/^text\/html/);
    expect(page.text).toContain('invalid_grant');
    expect(page.text).toContain('Nothing was installed');
    expect(await installations(rig)).toEqual([]);
  });

  it('shows a 502 page and installs nothing when the token endpoint is down', async () => {
    const rig = await startRig();
    const started = await beginInstall(rig);
    const token = tokenExchange(started, 'aPrxcode0001').reply(503, '<html><body>Service Unavailable</body></html>', { 'content-type': 'text/html' });

    const page = await callback(rig, { code: 'aPrxcode0001', state: started.state }, started.cookie);

    token.done();
    expect(page.status).toBe(502);
    expect(page.text).toContain('Nothing was installed');
    expect(await installations(rig)).toEqual([]);
  });

  it('refuses a grant without a refresh token (the app lacks the refresh_token scope), and installs nothing', async () => {
    const rig = await startRig();
    const started = await beginInstall(rig);
    const token = tokenExchange(started, 'aPrxcode0001').reply(...answer('token-authorization-code-200.json', { refresh_token: undefined, scope: 'api' }));

    const page = await callback(rig, { code: 'aPrxcode0001', state: started.state }, started.cookie);

    token.done();
    expect(page.status).toBe(400);
    expect(page.text).toContain('refresh token');
    expect(await installations(rig)).toEqual([]);
  });

  it('leaves no installation behind when the signing secret cannot be made', async () => {
    const rig = await startRig();
    const started = await beginInstall(rig);
    const token = tokenExchange(started, 'aPrxcode0001').reply(...answer('token-authorization-code-200.json'));
    vi.spyOn(rig.runtime.bridge.installations, 'webhookSecret').mockRejectedValueOnce(new Error('disk I/O error'));

    const page = await callback(rig, { code: 'aPrxcode0001', state: started.state }, started.cookie);

    token.done();
    expect(page.status).toBe(502);
    expect(page.text).toContain('Nothing was installed');
    expect(await installations(rig)).toEqual([]);
  });

  it('renews the credentials of an org installed again: one installation, new tokens, the secret not shown again', async () => {
    const rig = await startRig();
    const first = await beginInstall(rig);
    const firstToken = tokenExchange(first, 'aPrxfirst').reply(...answer('token-authorization-code-200.json'));
    expect((await callback(rig, { code: 'aPrxfirst', state: first.state }, first.cookie)).status).toBe(200);
    firstToken.done();
    const [installation] = await installations(rig);
    const secret = (await rig.runtime.bridge.installations.secrets(installation?.id ?? '')).webhookSecret ?? '';

    // Installed again from a link for the production environment; the org stays where it is.
    const second = await beginInstall(rig, linkFor(rig, { environment: 'production' }));
    const secondToken = tokenExchange(second, 'aPrxsecond').reply(
      ...answer('token-authorization-code-200.json', {
        access_token: '00D5g000004fAkE!AQ0AQHsecond-access-token',
        refresh_token: '5Aep861second.refresh-token',
      }),
    );
    const page = await callback(rig, { code: 'aPrxsecond', state: second.state }, second.cookie);

    secondToken.done();
    expect(page.status).toBe(200);
    expect(page.text).toContain('was connected already; its access was renewed');
    expect(page.text).toContain('stays connected to sandbox');
    expect(page.text).not.toContain(secret);
    const all = await installations(rig);
    expect(all.map((i) => [i.id, i.environment])).toEqual([[installation?.id, 'sandbox']]);
    const secrets = await rig.runtime.bridge.installations.secrets(installation?.id ?? '');
    expect(SalesforceCredentialsSchema.parse(secrets.crm)).toMatchObject({
      accessToken: '00D5g000004fAkE!AQ0AQHsecond-access-token',
      refreshToken: '5Aep861second.refresh-token',
      orgId: ORG,
    });
    expect(secrets.webhookSecret).toBe(secret);
  });

  it('connects a disabled installation again as active', async () => {
    const rig = await startRig();
    const first = await beginInstall(rig);
    tokenExchange(first, 'aPrxfirst').reply(...answer('token-authorization-code-200.json'));
    expect((await callback(rig, { code: 'aPrxfirst', state: first.state }, first.cookie)).status).toBe(200);
    const [installation] = await installations(rig);
    await rig.runtime.bridge.installations.disable(installation?.id ?? '');

    const second = await beginInstall(rig);
    tokenExchange(second, 'aPrxsecond').reply(...answer('token-authorization-code-200.json'));
    const page = await callback(rig, { code: 'aPrxsecond', state: second.state }, second.cookie);

    expect(page.status).toBe(200);
    expect(await installations(rig)).toEqual([expect.objectContaining({ id: installation?.id, status: 'active' })]);
  });
});

describe('Salesforce configuration', () => {
  it('reads the app and JWT settings, with login.salesforce.com by default, and refuses half the JWT settings', () => {
    const base = { DATA_DIR: tempDir('enrichbridge-salesforce-config-') };
    cleanups.push(() => rmSync(base.DATA_DIR, { recursive: true, force: true }));

    expect(loadConfig(base).salesforce).toEqual({ clientId: null, clientSecret: null, loginUrl: LOGIN, jwt: null });
    expect(
      loadConfig({
        ...base,
        SALESFORCE_CLIENT_ID: CLIENT_ID,
        SALESFORCE_LOGIN_URL: 'https://acme.my.salesforce.com/',
        SALESFORCE_JWT_CONSUMER_KEY: 'k',
        SALESFORCE_JWT_USERNAME: 'u@acme.example',
        SALESFORCE_JWT_PRIVATE_KEY_FILE: '/etc/enrichbridge/jwt.key',
      }).salesforce,
    ).toEqual({
      clientId: CLIENT_ID,
      clientSecret: null,
      loginUrl: 'https://acme.my.salesforce.com',
      jwt: { consumerKey: 'k', username: 'u@acme.example', privateKeyFile: '/etc/enrichbridge/jwt.key' },
    });
    expect(() => loadConfig({ ...base, SALESFORCE_JWT_CONSUMER_KEY: 'k' })).toThrow(/go together/);
    expect(() => loadConfig({ ...base, SALESFORCE_LOGIN_URL: 'login.salesforce.com' })).toThrow(/SALESFORCE_LOGIN_URL/);
  });
});

describe('the OAuth install on the real server', () => {
  it('is mounted by startServer: a link sealed with the data folder’s key redirects to Salesforce', async () => {
    const dataDir = tempDir('enrichbridge-salesforce-oauth-server-');
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const env = { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', WORKER_CONCURRENCY: '0', PUBLIC_URL, SALESFORCE_CLIENT_ID: CLIENT_ID };
    const server = await startServer(loadConfig(env), logger);
    cleanups.push(() => server.stop());
    // As `enrichbridge salesforce install-link` makes it: sealed with the data folder's key.
    const link = createInstallLink(loadSecretBox({ dataDir }), { kind: 'local', accountName: ACCOUNT }, 'sandbox');

    const page = await get(`${server.url}/oauth/salesforce/install?link=${encodeURIComponent(link)}`);

    expect(page.status).toBe(302);
    expect(page.location?.origin).toBe(LOGIN);
    expect(page.location?.searchParams.get('redirect_uri')).toBe(`${PUBLIC_URL}/oauth/salesforce/callback`);
    expect(page.setCookies.some((c) => c.startsWith(`${COOKIE}=`))).toBe(true);
  });
});

describe('enrichbridge salesforce install-link and connect-jwt', () => {
  /** The CLI's environment: this rig's data folder, and nothing Salesforce from the shell running the tests. */
  function stubCliEnv(rig: Rig, env: Record<string, string | undefined>): void {
    for (const name of Object.keys(process.env)) {
      if (name.startsWith('SALESFORCE_') || name === 'PUBLIC_URL') vi.stubEnv(name, undefined);
    }
    vi.stubEnv('DATA_DIR', rig.dataDir);
    vi.stubEnv('LOG_LEVEL', 'silent');
    for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  }

  /** `enrichbridge salesforce …` in this process (so nock sees its requests): what it printed on stdout. */
  async function run(args: string[]): Promise<string[]> {
    const printed: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((line: unknown) => {
      printed.push(String(line));
    });
    vi.spyOn(console, 'error').mockImplementation(() => undefined);
    await crmCommand('salesforce').parseAsync(args, { from: 'user' });
    return printed;
  }

  function keyPair(dir: string) {
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const privateKeyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const file = path.join(dir, 'jwt.key');
    writeFileSync(file, privateKeyPem, { mode: 0o600 });
    return { privateKeyPem, publicKey, file };
  }

  const JWT_ENV = (file: string) => ({
    SALESFORCE_JWT_CONSUMER_KEY: '3MVG9jwt.consumer.key',
    SALESFORCE_JWT_USERNAME: 'integration@acme.example',
    SALESFORCE_JWT_PRIVATE_KEY_FILE: file,
  });

  it('install-link prints a link the server opens, for a sandbox org with --sandbox-org', async () => {
    const rig = await startRig();
    stubCliEnv(rig, { PUBLIC_URL, SALESFORCE_CLIENT_ID: CLIENT_ID });

    const [printed, ...more] = await run(['install-link', '--account', ACCOUNT, '--env', 'production', '--sandbox-org']);

    expect(more).toEqual([]);
    const url = new URL(printed ?? '');
    expect(`${url.origin}${url.pathname}`).toBe(`${PUBLIC_URL}/oauth/salesforce/install`);
    const started = await beginInstall(rig, url.searchParams.get('link') ?? '');
    expect(started.page.location?.origin).toBe(TEST_LOGIN);
    expect(verifyOAuthState(rig.runtime.box, started.state, started.cookie.slice(COOKIE.length + 1)).intent).toMatchObject({
      target: { kind: 'local', accountName: ACCOUNT },
      environment: 'production',
      org: 'sandbox',
    });
  });

  it('install-link refuses an account that does not exist, before any link is made', async () => {
    const rig = await startRig();
    stubCliEnv(rig, { PUBLIC_URL });

    await expect(run(['install-link', '--account', 'nobody', '--env', 'sandbox'])).rejects.toThrow(/nobody/);
    expect(vi.mocked(console.log)).not.toHaveBeenCalled();
  });

  it('connect-jwt signs an assertion the public key verifies, learns the org from the grant, and creates a jwt installation', async () => {
    const rig = await startRig();
    const { privateKeyPem, publicKey, file } = keyPair(rig.dataDir);
    stubCliEnv(rig, JWT_ENV(file));
    const forms: Record<string, string>[] = [];
    const token = nock(LOGIN)
      .matchHeader('content-type', 'application/x-www-form-urlencoded')
      .post(TOKEN, (body: Record<string, string>) => {
        forms.push(body);
        return true;
      })
      .reply(...answer('token-jwt-200.json'));

    const printed = await run(['connect-jwt', '--instance-url', INSTANCE, '--account', ACCOUNT, '--env', 'production']);

    token.done();
    // Exactly the JWT bearer grant: no client id, secret or redirect URI appended to it.
    const form = forms[0] ?? {};
    expect(Object.keys(form).sort()).toEqual(['assertion', 'grant_type']);
    expect(form.grant_type).toBe(JWT_BEARER_GRANT_TYPE);
    const [header = '', claims = '', signature = ''] = (form.assertion ?? '').split('.');
    expect(createVerify('RSA-SHA256').update(`${header}.${claims}`).verify(publicKey, Buffer.from(signature, 'base64url'))).toBe(true);
    expect(JSON.parse(Buffer.from(claims, 'base64url').toString('utf8'))).toMatchObject({
      iss: '3MVG9jwt.consumer.key',
      sub: 'integration@acme.example',
      aud: LOGIN,
    });

    const [installation, ...others] = await installations(rig);
    expect(others).toEqual([]);
    expect(printed).toEqual([installation?.id]);
    expect(installation).toMatchObject({ provider: SALESFORCE_PROVIDER, externalAccountId: ORG, environment: 'production', status: 'active' });
    const credentials = SalesforceCredentialsSchema.parse((await rig.runtime.bridge.installations.secrets(installation?.id ?? '')).crm);
    expect(credentials).toMatchObject({
      kind: 'jwt',
      instanceUrl: INSTANCE,
      accessToken: fixture('token-jwt-200.json').body.access_token,
      refreshToken: null,
      loginUrl: LOGIN,
      orgId: ORG,
      userId: USER,
      jwt: { consumerKey: '3MVG9jwt.consumer.key', username: 'integration@acme.example', privateKeyPem },
    });
    // The private key is in the credentials, sealed: not in the row as written.
    const row = await sealedRow(rig, installation?.id ?? '');
    expect(row).not.toContain('PRIVATE KEY');
    expect(row).not.toContain(credentials.accessToken);
  });

  it('connect-jwt refuses a token for another instance than the one named, and connects nothing', async () => {
    const rig = await startRig();
    const { file } = keyPair(rig.dataDir);
    stubCliEnv(rig, JWT_ENV(file));
    const token = nock(TEST_LOGIN)
      .post(TOKEN)
      .reply(...answer('token-jwt-200.json'));

    const failure = run([
      'connect-jwt',
      '--instance-url',
      'https://other-org.my.salesforce.com',
      '--login-url',
      TEST_LOGIN,
      '--account',
      ACCOUNT,
      '--env',
      'sandbox',
    ]);

    await expect(failure).rejects.toBeInstanceOf(SalesforceInstallError);
    await expect(failure).rejects.toThrow(/not for https:\/\/other-org\.my\.salesforce\.com/);
    token.done();
    expect(await installations(rig)).toEqual([]);
  });

  it('connect-jwt needs the JWT settings and a readable RSA key, and says so before calling Salesforce', async () => {
    const rig = await startRig();
    const args = ['connect-jwt', '--instance-url', INSTANCE, '--account', ACCOUNT, '--env', 'sandbox'];
    stubCliEnv(rig, {});
    await expect(run(args)).rejects.toThrow(/SALESFORCE_JWT_CONSUMER_KEY/);

    const missing = path.join(rig.dataDir, 'no-such.key');
    stubCliEnv(rig, JWT_ENV(missing));
    await expect(run(args)).rejects.toThrow(/ENOENT/);

    const notAKey = path.join(rig.dataDir, 'not-a.key');
    // A PEM frame around "not a key" (base64), assembled so no scanner takes it for a real key.
    const frame = (edge: string) => `-----${edge} PRIVATE KEY-----`;
    writeFileSync(notAKey, `${frame('BEGIN')}\nbm90IGEga2V5\n${frame('END')}\n`);
    stubCliEnv(rig, JWT_ENV(notAKey));
    await expect(run(args)).rejects.toBeInstanceOf(SalesforceInstallError);

    expect(await installations(rig)).toEqual([]);
  });
});
