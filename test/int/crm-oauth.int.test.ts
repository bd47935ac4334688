// The CRMs' OAuth installs over real HTTP, on the real runtime (SQLite, sealed installations): install links,
// the authorize redirect, every refusal of the callback's state and a good install end to end, for HubSpot and
// for Salesforce. The rules both CRMs follow are one describe.each over the two; what only one CRM does is
// below it. HubSpot's side runs against a stateful fake HubSpot (token endpoint, account-info, properties);
// Salesforce's token endpoint is nock'd with its documented answer shapes (PKCE, production and sandbox login,
// a non-Salesforce instance URL), and its CLI's install-link and connect-jwt commands run in-process.
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
import { HubSpotCredentialsSchema } from '../../connectors/hubspot/auth.ts';
import { HUBSPOT_PROVIDER } from '../../connectors/hubspot/connector.ts';
import { createInstallLink as createHubSpotInstallLink } from '../../connectors/hubspot/install.ts';
import { HUBSPOT_PATHS } from '../../connectors/hubspot/version.ts';
import { JWT_BEARER_GRANT_TYPE, SalesforceCredentialsSchema, pkceChallenge } from '../../connectors/salesforce/auth.ts';
import { SALESFORCE_PROVIDER } from '../../connectors/salesforce/connector.ts';
import { SALESFORCE_STATE_COOKIE } from '../../connectors/salesforce/index.ts';
import {
  SalesforceInstallError,
  type SalesforceOrgKind,
  createInstallLink as createSalesforceInstallLink,
  verifyOAuthState,
} from '../../connectors/salesforce/install.ts';
import type { Installation } from '../../bridge/model.ts';
import { createApp } from '../../server/http/app.ts';
import { type Config, loadConfig } from '../../server/config.ts';
import { crmCommand } from '../../server/cli/crm.ts';
import { crmRouter } from '../../server/http/crm-routes.ts';
import { createLogger } from '../../server/logger.ts';
import { type Runtime, crmModules, routeContext, openRuntime, startServer } from '../../server/runtime.ts';
import { type FakeHubSpot, startFakeHubSpot } from '../support/fake-hubspot.ts';
import { type Page, browserGet } from '../support/browser.ts';
import { tempDir } from '../support/harness.ts';

const PUBLIC_URL = 'https://enrich.example.com';
const ACCOUNT = 'acme';
const logger = createLogger('silent');
const get = browserGet;

// HubSpot's app and portal.
const APP_ID = '1160452';
const PORTAL_ID = '62515';
const HUBSPOT_COOKIE = 'eb_hubspot_oauth';
const REQUIRED_SCOPES = ['oauth', 'crm.objects.contacts.read', 'crm.objects.contacts.write', 'crm.schemas.contacts.read', 'crm.schemas.contacts.write'];
const OPTIONAL_SCOPES = ['automation'];
/** The status properties every install must leave in the portal (issue 5, "Properties"). */
const STATUS_PROPERTIES = ['wf_enriched_at', 'wf_household_matched', 'wf_career_matched', 'wf_enrichment_status'];

// Salesforce's External Client App and org.
const LOGIN = 'https://login.salesforce.com';
const TEST_LOGIN = 'https://test.salesforce.com';
const TOKEN = '/services/oauth2/token';
const CLIENT_ID = '3MVG9consumer.key.0001';
const CLIENT_SECRET = 'consumer-secret-0001';
const INSTANCE = 'https://enrichbridge-dev-ed.develop.my.salesforce.com';
const ORG = '00D5g000004fAkEEAU';
const USER = '0055g00000AbCdEAAV';
const SALESFORCE_COOKIE = SALESFORCE_STATE_COOKIE;

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
  // Our own server and the fake HubSpot on loopback are real; Salesforce is not.
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

/** A CRM's OAuth routes as startServer mounts them, on a real data folder, with the CRM's settings in `env`. */
async function startRig(env: Record<string, string>): Promise<Rig> {
  const dataDir = tempDir('enrichbridge-oauth-');
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', WORKER_CONCURRENCY: '0', PUBLIC_URL, ...env });
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

async function installations(rig: Rig): Promise<Installation[]> {
  return rig.runtime.bridge.pipelineStore.listInstallations();
}

/** The one installation an install left: the CRM account's, in the sandbox, active, enriching with the local account. */
async function theInstallation(rig: Rig, provider: string, externalAccountId: string): Promise<Installation> {
  const [installation, ...others] = await installations(rig);
  expect(others).toEqual([]);
  expect(installation).toMatchObject({ provider, externalAccountId, environment: 'sandbox', status: 'active', target: { kind: 'local' } });
  if (installation === undefined) throw new Error('no installation');
  return installation;
}

async function sealedRow(rig: Rig, id: string): Promise<string> {
  return (await rig.runtime.opened.db.selectFrom('installations').select('secrets').where('id', '=', id).executeTakeFirstOrThrow()).secrets;
}

/** A sealed value with one character in its middle changed. */
function flip(sealed: string): string {
  const middle = Math.floor(sealed.length / 2);
  return `${sealed.slice(0, middle)}${sealed[middle] === 'A' ? 'B' : 'A'}${sealed.slice(middle + 1)}`;
}

interface Started {
  readonly page: Page;
  readonly state: string;
  /** `name=value`, as the browser sends it back. */
  readonly cookie: string;
}

/** Opens an install link at /oauth/CRM/install: the CRM's authorize URL, with the state and the browser's cookie. */
async function openInstallLink(rig: Rig, crm: string, cookieName: string, link: string, query = ''): Promise<Started> {
  const page = await get(`${rig.origin}/oauth/${crm}/install?link=${encodeURIComponent(link)}${query}`);
  expect(page.status).toBe(302);
  const state = page.location?.searchParams.get('state') ?? '';
  const cookie = page.setCookies.find((c) => c.startsWith(`${cookieName}=`))?.split(';')[0] ?? '';
  expect(state).not.toBe('');
  expect(cookie).not.toBe('');
  return { page, state, cookie };
}

function callbackOf(rig: Rig, crm: string, query: Record<string, string>, cookie?: string): Promise<Page> {
  return get(`${rig.origin}/oauth/${crm}/callback?${new URLSearchParams(query).toString()}`, cookie);
}

// ---- HubSpot ----

interface HubSpotRig extends Rig {
  readonly fake: FakeHubSpot;
}

/** The HubSpot routes against a fake HubSpot. */
async function startHubSpotRig(options: { publicUrl?: string; configured?: boolean; fakeApiBase?: (fake: FakeHubSpot) => string } = {}): Promise<HubSpotRig> {
  const fake = await startFakeHubSpot({ portalId: PORTAL_ID, appId: APP_ID });
  cleanups.push(() => fake.close());
  const rig = await startRig({
    PUBLIC_URL: options.publicUrl ?? PUBLIC_URL,
    HUBSPOT_API_BASE_URL: options.fakeApiBase?.(fake) ?? fake.url,
    ...(options.configured === false ? {} : { HUBSPOT_CLIENT_ID: fake.clientId, HUBSPOT_CLIENT_SECRET: fake.clientSecret, HUBSPOT_APP_ID: APP_ID }),
  });
  return { ...rig, fake };
}

function hubspotLink(rig: Rig, now: Date = new Date()): string {
  return createHubSpotInstallLink(rig.runtime.box, { kind: 'local', accountName: ACCOUNT }, 'sandbox', now);
}

function beginHubSpotInstall(rig: Rig, link = hubspotLink(rig)): Promise<Started> {
  return openInstallLink(rig, 'hubspot', HUBSPOT_COOKIE, link);
}

/** What HubSpot's consent screen hands back: a code for our redirect URI. */
function hubspotGrant(rig: HubSpotRig, redirectUri = `${PUBLIC_URL}/oauth/hubspot/callback`): string {
  return rig.fake.tokens.authorizationCode({ redirectUri });
}

function hubspotCallback(rig: Rig, query: Record<string, string>, cookie?: string): Promise<Page> {
  return callbackOf(rig, 'hubspot', query, cookie);
}

const ourProperties = (fake: FakeHubSpot) => [...fake.properties.keys()].filter((name) => name.startsWith('wf_')).sort();
const propertyCreates = (fake: FakeHubSpot) =>
  fake.requests.filter((r) => r.method === 'POST' && /^\/crm\/v3\/properties\/contacts(\/batch\/create)?$/.test(r.path));
const tokenRequests = (fake: FakeHubSpot) => fake.requests.filter((r) => /\/token$/.test(r.path));

// ---- Salesforce ----

interface SalesforceStarted extends Started {
  /** The PKCE verifier sealed in the state, read back with the runtime's key. */
  readonly verifier: string;
}

/** The Salesforce routes; its token endpoint is nock'd by each test. */
function startSalesforceRig(options: { publicUrl?: string; configured?: boolean; withSecret?: boolean } = {}): Promise<Rig> {
  return startRig({
    PUBLIC_URL: options.publicUrl ?? PUBLIC_URL,
    ...(options.configured === false ? {} : { SALESFORCE_CLIENT_ID: CLIENT_ID }),
    ...(options.configured === false || options.withSecret === false ? {} : { SALESFORCE_CLIENT_SECRET: CLIENT_SECRET }),
  });
}

function salesforceLink(rig: Rig, options: { org?: SalesforceOrgKind; now?: Date; environment?: 'sandbox' | 'production' } = {}): string {
  const { environment = 'sandbox', ...rest } = options;
  return createSalesforceInstallLink(rig.runtime.box, { kind: 'local', accountName: ACCOUNT }, environment, rest);
}

async function beginSalesforceInstall(rig: Rig, link = salesforceLink(rig), query = ''): Promise<SalesforceStarted> {
  const started = await openInstallLink(rig, 'salesforce', SALESFORCE_COOKIE, link, query);
  const verifier = verifyOAuthState(rig.runtime.box, started.state, started.cookie.slice(SALESFORCE_COOKIE.length + 1)).codeVerifier;
  return { ...started, verifier };
}

function salesforceCallback(rig: Rig, query: Record<string, string>, cookie?: string): Promise<Page> {
  return callbackOf(rig, 'salesforce', query, cookie);
}

/** Salesforce's token endpoint, expecting exactly this code exchange. */
function tokenExchange(
  started: SalesforceStarted,
  code: string,
  options: { login?: string; redirectUri?: string; withSecret?: boolean } = {},
): nock.Interceptor {
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

// ---- The rules both CRMs follow ----

/** One CRM's install, as the rules below drive it. */
interface CrmRig extends Rig {
  beginInstall(link?: string): Promise<Started>;
  /** A good install link (made at `now`). */
  link(now?: Date): string;
  /** The same install link, sealed with another key. */
  linkSealedWith(box: SecretBox): string;
  /** An install link of the other CRM's, sealed with this server's key. */
  otherCrmLink(): string;
  /** A code the CRM's consent screen hands back for this install, which its token endpoint exchanges once. */
  grant(started: Started, redirectUri?: string): string;
  /** The code exchanges the CRM's token endpoint answered, by grant type. */
  exchanges(): readonly string[];
  callback(query: Record<string, string>, cookie?: string): Promise<Page>;
}

interface Crm {
  readonly name: string;
  readonly path: 'hubspot' | 'salesforce';
  readonly cookie: string;
  /** Where the CRM's authorize page is. */
  readonly authorizeOrigin: string;
  start(options?: { publicUrl?: string; configured?: boolean }): Promise<CrmRig>;
  /** The settings of the CRM's app for a server of this data folder, and what it needs running. */
  serverEnv(): Promise<Record<string, string>>;
  /** As `enrichbridge CRM install-link` makes it: sealed with the data folder's key. */
  installLink(dataDir: string): string;
}

const HUBSPOT: Crm = {
  name: 'HubSpot',
  path: 'hubspot',
  cookie: HUBSPOT_COOKIE,
  authorizeOrigin: 'https://app.hubspot.com',
  async start(options) {
    const rig = await startHubSpotRig(options);
    return {
      ...rig,
      beginInstall: (link) => beginHubSpotInstall(rig, link),
      link: (now) => hubspotLink(rig, now),
      linkSealedWith: (box) => createHubSpotInstallLink(box, { kind: 'local', accountName: ACCOUNT }, 'sandbox'),
      otherCrmLink: () => salesforceLink(rig),
      grant: (_started, redirectUri) => hubspotGrant(rig, redirectUri),
      exchanges: () => rig.fake.tokens.grants,
      callback: (query, cookie) => hubspotCallback(rig, query, cookie),
    };
  },
  async serverEnv() {
    const fake = await startFakeHubSpot({ portalId: PORTAL_ID, appId: APP_ID });
    cleanups.push(() => fake.close());
    return { HUBSPOT_CLIENT_ID: fake.clientId, HUBSPOT_CLIENT_SECRET: fake.clientSecret, HUBSPOT_APP_ID: APP_ID, HUBSPOT_API_BASE_URL: fake.url };
  },
  installLink: (dataDir) => createHubSpotInstallLink(loadSecretBox({ dataDir }), { kind: 'local', accountName: ACCOUNT }, 'sandbox'),
};

const SALESFORCE: Crm = {
  name: 'Salesforce',
  path: 'salesforce',
  cookie: SALESFORCE_COOKIE,
  authorizeOrigin: LOGIN,
  async start(options) {
    const rig = await startSalesforceRig(options);
    const verifiers = new Map<string, string>();
    const exchanges: nock.Scope[] = [];
    let codes = 0;
    return {
      ...rig,
      async beginInstall(link) {
        const started = await beginSalesforceInstall(rig, link);
        verifiers.set(started.state, started.verifier);
        return started;
      },
      link: (now) => salesforceLink(rig, now === undefined ? {} : { now }),
      linkSealedWith: (box) => createSalesforceInstallLink(box, { kind: 'local', accountName: ACCOUNT }, 'sandbox'),
      otherCrmLink: () => hubspotLink(rig),
      grant(started, redirectUri) {
        codes += 1;
        const code = `aPrxcode${String(codes).padStart(4, '0')}`;
        const verifier = verifiers.get(started.state) ?? '';
        exchanges.push(
          tokenExchange({ ...started, verifier }, code, redirectUri === undefined ? {} : { redirectUri }).reply(...answer('token-authorization-code-200.json')),
        );
        return code;
      },
      exchanges: () => exchanges.filter((scope) => scope.isDone()).map(() => 'authorization_code'),
      callback: (query, cookie) => salesforceCallback(rig, query, cookie),
    };
  },
  serverEnv: () => Promise.resolve({ SALESFORCE_CLIENT_ID: CLIENT_ID }),
  installLink: (dataDir) => createSalesforceInstallLink(loadSecretBox({ dataDir }), { kind: 'local', accountName: ACCOUNT }, 'sandbox'),
};

describe.each([HUBSPOT, SALESFORCE])('$name OAuth install', (crm) => {
  const install = `/oauth/${crm.path}/install`;
  const redirectUri = `${PUBLIC_URL}/oauth/${crm.path}/callback`;

  describe(`GET ${install}`, () => {
    it('answers a 400 page without an install link', async () => {
      const rig = await crm.start();

      const page = await get(`${rig.origin}${install}`);

      expect(page.status).toBe(400);
      expect(page.contentType).toMatch(/^text\/html/);
      expect(page.text).toContain('Install link needed');
      expect(page.setCookies).toEqual([]);
    });

    it("refuses a tampered, expired or foreign install link, or the other CRM's, with a 400 page and no cookie", async () => {
      const rig = await crm.start();
      const expired = rig.link(new Date(Date.now() - 8 * 24 * 3600_000));
      const foreign = rig.linkSealedWith(new SecretBox(randomBytes(32)));

      for (const link of [flip(rig.link()), expired, foreign, rig.otherCrmLink(), 'not-a-link']) {
        const page = await get(`${rig.origin}${install}?link=${encodeURIComponent(link)}`);
        expect(page.status).toBe(400);
        expect(page.contentType).toMatch(/^text\/html/);
        expect(page.location).toBeNull();
        expect(page.setCookies).toEqual([]);
      }
      const expiredPage = await get(`${rig.origin}${install}?link=${encodeURIComponent(expired)}`);
      expect(expiredPage.text).toContain('expired');
    });

    it('seals the link and the cookie’s nonce in the state, and sets an HttpOnly state cookie', async () => {
      const rig = await crm.start();
      const link = rig.link();

      const { page, state, cookie } = await rig.beginInstall(link);

      expect(state).not.toBe(link);
      expect(state).not.toContain(cookie.split('=')[1] ?? '');
      const setCookie = page.setCookies.find((c) => c.startsWith(`${crm.cookie}=`)) ?? '';
      expect(setCookie).toMatch(/;\s*HttpOnly/i);
      expect(setCookie).toMatch(/;\s*SameSite=Lax/i);
      expect(setCookie).toMatch(/;\s*Secure/i);
      expect(setCookie).toMatch(new RegExp(`;\\s*Path=/oauth/${crm.path}(;|$)`, 'i'));
      expect(setCookie).toMatch(/;\s*Max-Age=600/i);
    });

    it('keeps a path prefix of PUBLIC_URL in the redirect URI, the cookie path and the code exchange', async () => {
      const prefixed = `${PUBLIC_URL}/enrich`;
      const rig = await crm.start({ publicUrl: prefixed });

      const started = await rig.beginInstall();

      expect(started.page.location?.searchParams.get('redirect_uri')).toBe(`${prefixed}/oauth/${crm.path}/callback`);
      // The browser comes back to /enrich/oauth/CRM/callback: the cookie must be sent there.
      expect(started.page.setCookies.find((c) => c.startsWith(`${crm.cookie}=`))).toMatch(new RegExp(`;\\s*Path=/enrich/oauth/${crm.path}(;|$)`, 'i'));
      // And the code is exchanged with the same redirect URI it was granted for.
      const done = await rig.callback({ code: rig.grant(started, `${prefixed}/oauth/${crm.path}/callback`), state: started.state }, started.cookie);
      expect(rig.exchanges()).toEqual(['authorization_code']);
      expect(done.status).toBe(200);
      expect(await installations(rig)).toHaveLength(1);
    });

    it('answers 503 when the CRM app is not configured', async () => {
      const rig = await crm.start({ configured: false });

      const page = await get(`${rig.origin}${install}?link=${encodeURIComponent(rig.link())}`);

      expect(page.status).toBe(503);
      expect(page.location).toBeNull();
      expect(page.setCookies).toEqual([]);
    });
  });

  describe(`GET /oauth/${crm.path}/callback: the state`, () => {
    it('refuses a bad or tampered state, or an install link as state, with 400, installs nothing and never exchanges the code', async () => {
      const rig = await crm.start();
      const started = await rig.beginInstall();
      const code = rig.grant(started);

      // An install link is sealed with the same key, but it is not a state.
      for (const bad of ['garbage', flip(started.state), rig.link()]) {
        const page = await rig.callback({ code, state: bad }, started.cookie);
        expect(page.status).toBe(400);
        expect(page.contentType).toMatch(/^text\/html/);
      }
      expect((await rig.callback({ code }, started.cookie)).status).toBe(400);
      expect((await rig.callback({ state: started.state }, started.cookie)).status).toBe(400);

      expect(await installations(rig)).toEqual([]);
      expect(rig.exchanges()).toEqual([]);
    });

    it('refuses a state that comes back to another browser (no cookie, or another install’s cookie)', async () => {
      const rig = await crm.start();
      const mine = await rig.beginInstall();
      const theirs = await rig.beginInstall();
      const code = rig.grant(mine);

      const noCookie = await rig.callback({ code, state: mine.state });
      const otherCookie = await rig.callback({ code, state: mine.state }, theirs.cookie);

      expect(noCookie.status).toBe(400);
      expect(otherCookie.status).toBe(400);
      expect(otherCookie.text).toContain('another browser');
      expect(await installations(rig)).toEqual([]);
      expect(rig.exchanges()).toEqual([]);

      // The browser that started it finishes it with the same, still unused code.
      const own = await rig.callback({ code, state: mine.state }, mine.cookie);
      expect(own.status).toBe(200);
      expect(rig.exchanges()).toEqual(['authorization_code']);
    });

    it('completes only one install per state: the same callback again, even with a fresh code, is refused and exchanges nothing', async () => {
      const rig = await crm.start();
      const started = await rig.beginInstall();
      const firstCode = rig.grant(started);
      const secondCode = rig.grant(started);

      const first = await rig.callback({ code: firstCode, state: started.state }, started.cookie);
      const exchangesAfterFirst = rig.exchanges().length;
      const again = await rig.callback({ code: secondCode, state: started.state }, started.cookie);

      expect(first.status).toBe(200);
      expect(exchangesAfterFirst).toBe(1);
      expect(again.status).toBe(400);
      expect(again.text).toContain('used for an install already');
      expect(rig.exchanges()).toHaveLength(exchangesAfterFirst);
      expect(await installations(rig)).toHaveLength(1);
    });

    it('refuses a state older than 10 minutes', async () => {
      const rig = await crm.start();
      const started = await rig.beginInstall();
      const code = rig.grant(started);
      rig.clock.aheadMs = 11 * 60_000;

      const page = await rig.callback({ code, state: started.state }, started.cookie);

      expect(page.status).toBe(400);
      expect(page.text).toContain('10 minutes');
      expect(await installations(rig)).toEqual([]);
      expect(rig.exchanges()).toEqual([]);
    });

    it('answers a 400 page, escaped, when the CRM reports an error instead of a code', async () => {
      const rig = await crm.start();
      const started = await rig.beginInstall();

      const denied = await rig.callback({ error: 'access_denied', error_description: 'end-user denied authorization', state: started.state }, started.cookie);
      const hostile = await rig.callback({ error: '<script>alert(1)</script>', state: started.state }, started.cookie);

      expect(denied.status).toBe(400);
      expect(denied.contentType).toMatch(/^text\/html/);
      expect(denied.text).toContain('access_denied');
      expect(hostile.status).toBe(400);
      expect(hostile.text).not.toContain('<script>');
      expect(hostile.text).toContain('&#60;script&#62;');
      expect(await installations(rig)).toEqual([]);
      expect(rig.exchanges()).toEqual([]);
    });
  });

  describe(`GET /oauth/${crm.path}/callback: the install`, () => {
    it('connects a disabled installation again as active', async () => {
      const rig = await crm.start();
      const first = await rig.beginInstall();
      expect((await rig.callback({ code: rig.grant(first), state: first.state }, first.cookie)).status).toBe(200);
      const [installation] = await installations(rig);
      await rig.runtime.bridge.installations.disable(installation?.id ?? '');

      const second = await rig.beginInstall();
      const page = await rig.callback({ code: rig.grant(second), state: second.state }, second.cookie);

      expect(page.status).toBe(200);
      expect(await installations(rig)).toEqual([expect.objectContaining({ id: installation?.id, status: 'active' })]);
    });
  });

  describe('the OAuth install on the real server', () => {
    it(`is mounted by startServer: a link sealed with the data folder’s key redirects to ${crm.name}`, async () => {
      const dataDir = tempDir(`enrichbridge-${crm.path}-oauth-server-`);
      cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
      const env = { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', WORKER_CONCURRENCY: '0', PUBLIC_URL, ...(await crm.serverEnv()) };
      const server = await startServer(loadConfig(env), logger);
      cleanups.push(() => server.stop());

      const page = await get(`${server.url}${install}?link=${encodeURIComponent(crm.installLink(dataDir))}`);

      expect(page.status).toBe(302);
      expect(page.location?.origin).toBe(crm.authorizeOrigin);
      expect(page.location?.searchParams.get('redirect_uri')).toBe(redirectUri);
      expect(page.setCookies.some((c) => c.startsWith(`${crm.cookie}=`))).toBe(true);
    });
  });
});

// ---- What HubSpot alone does ----

describe('GET /oauth/hubspot/install', () => {
  it('redirects a good link to the authorize URL with exactly the required scopes', async () => {
    const rig = await startHubSpotRig();

    const { page } = await beginHubSpotInstall(rig);

    const location = page.location;
    expect(location?.origin).toBe('https://app.hubspot.com');
    expect(location?.pathname).toBe('/oauth/authorize');
    const params = location?.searchParams;
    expect(params?.get('client_id')).toBe(rig.fake.clientId);
    expect(params?.get('redirect_uri')).toBe(`${PUBLIC_URL}/oauth/hubspot/callback`);
    expect(params?.get('scope')?.split(' ').sort()).toEqual([...REQUIRED_SCOPES].sort());
    expect(params?.get('optional_scope')?.split(' ').sort()).toEqual(OPTIONAL_SCOPES);
    expect([...(params?.keys() ?? [])].sort()).toEqual(['client_id', 'optional_scope', 'redirect_uri', 'scope', 'state']);
  });
});

describe('GET /oauth/hubspot/callback: the install', () => {
  it('exchanges the code, creates the installation with sealed OAuth credentials, provisions properties, and names the portal', async () => {
    const rig = await startHubSpotRig();
    const { state, cookie } = await beginHubSpotInstall(rig);
    const before = Date.now();

    const page = await hubspotCallback(rig, { code: hubspotGrant(rig), state }, cookie);

    expect(page.status).toBe(200);
    expect(page.contentType).toMatch(/^text\/html/);
    expect(page.text).toContain(`Portal ${PORTAL_ID}`);
    expect(page.text).toContain('is now connected');
    // The state cookie has done its job.
    expect(page.setCookies.find((c) => c.startsWith(`${HUBSPOT_COOKIE}=`))).toMatch(/Max-Age=0/i);
    // The date-versioned token endpoint, not the deprecated v1 path.
    expect(tokenRequests(rig.fake).map((r) => `${r.method} ${r.path}`)).toEqual([`POST ${HUBSPOT_PATHS.token}`]);
    expect(rig.fake.tokens.grants).toEqual(['authorization_code']);

    const installation = await theInstallation(rig, HUBSPOT_PROVIDER, PORTAL_ID);
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
    const row = await sealedRow(rig, installation.id);
    for (const secret of [issued?.accessToken ?? '', issued?.refreshToken ?? '', rig.fake.clientSecret]) {
      expect(secret).not.toBe('');
      expect(row).not.toContain(secret);
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
    const rig = await startHubSpotRig();
    const first = await beginHubSpotInstall(rig);
    expect((await hubspotCallback(rig, { code: hubspotGrant(rig), state: first.state }, first.cookie)).status).toBe(200);
    const [installation] = await installations(rig);
    const propertiesAfterFirst = ourProperties(rig.fake);
    const createsAfterFirst = propertyCreates(rig.fake).length;

    const second = await beginHubSpotInstall(rig);
    const page = await hubspotCallback(rig, { code: hubspotGrant(rig), state: second.state }, second.cookie);

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

  it('shows an error page and installs nothing when the token endpoint refuses the code', async () => {
    const rig = await startHubSpotRig();
    const { state, cookie } = await beginHubSpotInstall(rig);

    // A code HubSpot never issued (or one already used): invalid_grant.
    const page = await hubspotCallback(rig, { code: 'na1-0000-not-a-code', state }, cookie);

    expect(page.status).toBeGreaterThanOrEqual(400);
    expect(page.contentType).toMatch(/^text\/html/);
    expect(page.text).toContain('Nothing was installed');
    expect(rig.fake.tokens.grants).toEqual(['authorization_code']);
    expect(await installations(rig)).toEqual([]);
    expect(ourProperties(rig.fake)).toEqual([]);
  });

  it('leaves no installation behind when the properties cannot be provisioned', async () => {
    const rig = await startHubSpotRig();
    const { state, cookie } = await beginHubSpotInstall(rig);
    rig.fake.failNext(5, 'UNAUTHORIZED', { path: HUBSPOT_PATHS.properties });

    const page = await hubspotCallback(rig, { code: hubspotGrant(rig), state }, cookie);

    expect(page.status).toBeGreaterThanOrEqual(400);
    expect(page.text).toContain('Nothing was installed');
    expect(await installations(rig)).toEqual([]);
  });

  it('learns the portal from account-info when the token response has no hub_id', async () => {
    const rig = await startHubSpotRig();
    const { state, cookie } = await beginHubSpotInstall(rig);
    // The fake's tokens, answered without hub_id (older token responses carry none).
    const tokens = rig.fake.tokens.issue();
    const scope = nock(rig.fake.url, { allowUnmocked: true })
      .post(HUBSPOT_PATHS.token, (body: Record<string, string>) => body.grant_type === 'authorization_code' && body.code === 'code-without-hub-id')
      .reply(200, { token_type: 'bearer', access_token: tokens.accessToken, refresh_token: tokens.refreshToken, expires_in: 1800 });

    const page = await hubspotCallback(rig, { code: 'code-without-hub-id', state }, cookie);

    scope.done();
    expect(page.status).toBe(200);
    expect(rig.fake.requests.some((r) => r.path === HUBSPOT_PATHS.accountDetails && r.token === tokens.accessToken)).toBe(true);
    expect(await installations(rig)).toEqual([expect.objectContaining({ externalAccountId: PORTAL_ID })]);
  });
});

// ---- What Salesforce alone does ----

describe('GET /oauth/salesforce/install', () => {
  it('redirects a good link to the production authorize URL with PKCE (S256 of the sealed verifier)', async () => {
    const rig = await startSalesforceRig();
    const link = salesforceLink(rig);

    const { page, state, verifier } = await beginSalesforceInstall(rig, link);

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
    // Only the challenge travels in the clear; the verifier is sealed in the state (with the link and the nonce, as for every CRM).
    expect(page.location?.toString()).not.toContain(verifier);
    // A new verifier for every install.
    const again = await beginSalesforceInstall(rig, link);
    expect(again.verifier).not.toBe(verifier);
  });

  it('sends a sandbox org to test.salesforce.com: by org=sandbox, or by a link made for one', async () => {
    const rig = await startSalesforceRig();

    const chosen = await beginSalesforceInstall(rig, salesforceLink(rig), '&org=sandbox');
    const fixed = await beginSalesforceInstall(rig, salesforceLink(rig, { org: 'sandbox' }));

    for (const started of [chosen, fixed]) {
      expect(`${started.page.location?.origin}${started.page.location?.pathname}`).toBe(`${TEST_LOGIN}/services/oauth2/authorize`);
      expect(started.page.location?.searchParams.get('code_challenge')).toBe(pkceChallenge(started.verifier));
    }
    const production = await beginSalesforceInstall(rig, salesforceLink(rig), '&org=production');
    expect(production.page.location?.origin).toBe(LOGIN);
  });

  it('refuses an org parameter that is unknown or contradicts the link', async () => {
    const rig = await startSalesforceRig();

    const unknown = await get(`${rig.origin}/oauth/salesforce/install?link=${encodeURIComponent(salesforceLink(rig))}&org=developer`);
    const contradicting = await get(
      `${rig.origin}/oauth/salesforce/install?link=${encodeURIComponent(salesforceLink(rig, { org: 'sandbox' }))}&org=production`,
    );

    for (const page of [unknown, contradicting]) {
      expect(page.status).toBe(400);
      expect(page.location).toBeNull();
      expect(page.setCookies).toEqual([]);
    }
    expect(contradicting.text).toContain('sandbox org');
  });
});

describe('GET /oauth/salesforce/callback: the install', () => {
  it('exchanges the code with the verifier, creates the installation with sealed OAuth credentials, and shows the org and the signing secret once', async () => {
    const rig = await startSalesforceRig();
    const started = await beginSalesforceInstall(rig);
    const token = tokenExchange(started, 'aPrxcode0001').reply(...answer('token-authorization-code-200.json'));

    const page = await salesforceCallback(rig, { code: 'aPrxcode0001', state: started.state }, started.cookie);

    token.done();
    expect(page.status).toBe(200);
    expect(page.contentType).toMatch(/^text\/html/);
    expect(page.cacheControl).toBe('no-store');
    expect(page.text).toContain(`Org ${ORG} (${INSTANCE}, a Salesforce production org) is now connected`);
    expect(page.text).toContain('manifests/salesforce');
    // The state cookie has done its job.
    expect(page.setCookies.find((c) => c.startsWith(`${SALESFORCE_COOKIE}=`))).toMatch(/Max-Age=0/i);

    const installation = await theInstallation(rig, SALESFORCE_PROVIDER, ORG);
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
    const rig = await startSalesforceRig();
    const started = await beginSalesforceInstall(rig, salesforceLink(rig), '&org=sandbox');
    const sandboxInstance = 'https://acme--uat.sandbox.my.salesforce.com';
    const token = tokenExchange(started, 'aPrxsandbox', { login: TEST_LOGIN }).reply(
      ...answer('token-authorization-code-200.json', { instance_url: sandboxInstance, id: `${TEST_LOGIN}/id/${ORG}/${USER}` }),
    );

    const page = await salesforceCallback(rig, { code: 'aPrxsandbox', state: started.state }, started.cookie);

    token.done();
    expect(page.status).toBe(200);
    expect(page.text).toContain('a Salesforce sandbox org');
    const [installation] = await installations(rig);
    const credentials = SalesforceCredentialsSchema.parse((await rig.runtime.bridge.installations.secrets(installation?.id ?? '')).crm);
    expect(credentials).toMatchObject({ kind: 'oauth', loginUrl: TEST_LOGIN, instanceUrl: sandboxInstance, orgId: ORG });
  });

  it('exchanges without a client secret when none is configured (PKCE alone)', async () => {
    const rig = await startSalesforceRig({ withSecret: false });
    const started = await beginSalesforceInstall(rig);
    const token = tokenExchange(started, 'aPrxcode0001', { withSecret: false }).reply(...answer('token-authorization-code-200.json'));

    const page = await salesforceCallback(rig, { code: 'aPrxcode0001', state: started.state }, started.cookie);

    token.done();
    expect(page.status).toBe(200);
    const [installation] = await installations(rig);
    expect(SalesforceCredentialsSchema.parse((await rig.runtime.bridge.installations.secrets(installation?.id ?? '')).crm).clientSecret).toBeNull();
  });

  it.each([
    {
      what: 'refuses a token answer whose instance URL is not a Salesforce host, and installs nothing',
      reply: answer('token-authorization-code-200.json', { instance_url: 'https://collector.example.net' }),
      status: 502,
      says: ['not a Salesforce host', 'Nothing was installed'],
    },
    {
      what: 'shows an error page and installs nothing when Salesforce refuses the code (invalid_grant)',
      reply: answer('token-400-invalid-grant.json'),
      status: 400,
      says: ['invalid_grant', 'Nothing was installed'],
    },
    {
      what: 'shows a 502 page and installs nothing when the token endpoint is down',
      reply: [503, '<html><body>Service Unavailable</body></html>', { 'content-type': 'text/html' }] satisfies ReturnType<typeof answer>,
      status: 502,
      says: ['Nothing was installed'],
    },
    {
      what: 'refuses a grant without a refresh token (the app lacks the refresh_token scope), and installs nothing',
      reply: answer('token-authorization-code-200.json', { refresh_token: undefined, scope: 'api' }),
      status: 400,
      says: ['refresh token'],
    },
  ])('$what', async ({ reply, status, says }) => {
    const rig = await startSalesforceRig();
    const started = await beginSalesforceInstall(rig);
    const token = tokenExchange(started, 'aPrxcode0001').reply(...reply);

    const page = await salesforceCallback(rig, { code: 'aPrxcode0001', state: started.state }, started.cookie);

    token.done();
    expect(page.status).toBe(status);
    expect(page.contentType).toMatch(/^text\/html/);
    for (const text of says) expect(page.text).toContain(text);
    expect(await installations(rig)).toEqual([]);
  });

  it('leaves no installation behind when the signing secret cannot be made', async () => {
    const rig = await startSalesforceRig();
    const started = await beginSalesforceInstall(rig);
    const token = tokenExchange(started, 'aPrxcode0001').reply(...answer('token-authorization-code-200.json'));
    vi.spyOn(rig.runtime.bridge.installations, 'webhookSecret').mockRejectedValueOnce(new Error('disk I/O error'));

    const page = await salesforceCallback(rig, { code: 'aPrxcode0001', state: started.state }, started.cookie);

    token.done();
    expect(page.status).toBe(502);
    expect(page.text).toContain('Nothing was installed');
    expect(await installations(rig)).toEqual([]);
  });

  it('renews the credentials of an org installed again: one installation, new tokens, the secret not shown again', async () => {
    const rig = await startSalesforceRig();
    const first = await beginSalesforceInstall(rig);
    const firstToken = tokenExchange(first, 'aPrxfirst').reply(...answer('token-authorization-code-200.json'));
    expect((await salesforceCallback(rig, { code: 'aPrxfirst', state: first.state }, first.cookie)).status).toBe(200);
    firstToken.done();
    const [installation] = await installations(rig);
    const secret = (await rig.runtime.bridge.installations.secrets(installation?.id ?? '')).webhookSecret ?? '';

    // Installed again from a link for the production environment; the org stays where it is.
    const second = await beginSalesforceInstall(rig, salesforceLink(rig, { environment: 'production' }));
    const secondToken = tokenExchange(second, 'aPrxsecond').reply(
      ...answer('token-authorization-code-200.json', {
        access_token: '00D5g000004fAkE!AQ0AQHsecond-access-token',
        refresh_token: '5Aep861second.refresh-token',
      }),
    );
    const page = await salesforceCallback(rig, { code: 'aPrxsecond', state: second.state }, second.cookie);

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
    const rig = await startSalesforceRig();
    stubCliEnv(rig, { PUBLIC_URL, SALESFORCE_CLIENT_ID: CLIENT_ID });

    const [printed, ...more] = await run(['install-link', '--account', ACCOUNT, '--env', 'production', '--sandbox-org']);

    expect(more).toEqual([]);
    const url = new URL(printed ?? '');
    expect(`${url.origin}${url.pathname}`).toBe(`${PUBLIC_URL}/oauth/salesforce/install`);
    const started = await beginSalesforceInstall(rig, url.searchParams.get('link') ?? '');
    expect(started.page.location?.origin).toBe(TEST_LOGIN);
    expect(verifyOAuthState(rig.runtime.box, started.state, started.cookie.slice(SALESFORCE_COOKIE.length + 1)).intent).toMatchObject({
      target: { kind: 'local', accountName: ACCOUNT },
      environment: 'production',
      org: 'sandbox',
    });
  });

  it('install-link refuses an account that does not exist, before any link is made', async () => {
    const rig = await startSalesforceRig();
    stubCliEnv(rig, { PUBLIC_URL });

    await expect(run(['install-link', '--account', 'nobody', '--env', 'sandbox'])).rejects.toThrow(/nobody/);
    expect(vi.mocked(console.log)).not.toHaveBeenCalled();
  });

  it('connect-jwt signs an assertion the public key verifies, learns the org from the grant, and creates a jwt installation', async () => {
    const rig = await startSalesforceRig();
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
    const rig = await startSalesforceRig();
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
    const rig = await startSalesforceRig();
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
