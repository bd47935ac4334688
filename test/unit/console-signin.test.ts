// The console sign-in with a CRM, piece by piece: the sealed state and how a CRM's OAuth callback tells a
// sign-in from an install and sends it on; each module's authorize URL (the install's client id and
// redirect URI, the sign-in's scopes); and how each module reads the CRM's answers into "admin or not"
// (HubSpot: the token's metadata and the user's `superAdmin`; Salesforce: UserPermissionAccess).
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { HUBSPOT_PROVIDER } from '../../connectors/hubspot/connector.ts';
import { hubspotConsoleSignIn, hubspotVerdict, parseTokenInfo } from '../../connectors/hubspot/console-signin.ts';
import { beginOAuth, createInstallLink, openInstallLink } from '../../connectors/hubspot/install.ts';
import { forwardSignIn, openSignInState, sealSignInState, type SignInState } from '../../connectors/kit/console-signin.ts';
import { pkceChallenge } from '../../connectors/salesforce/auth.ts';
import { ADMIN_PERMISSIONS_SOQL, salesforceConsoleSignIn, salesforceVerdict } from '../../connectors/salesforce/console-signin.ts';
import { SecretBox } from '../../core/secrets/secret-box.ts';

const box = new SecretBox(randomBytes(32));
const PUBLIC_URL = 'https://enrich.example.com/bridge';
const state = (changes: Partial<SignInState> = {}): SignInState => ({
  purpose: 'console-signin',
  provider: 'hubspot',
  returnUrl: `${PUBLIC_URL}/console/signin/hubspot/callback`,
  nonce: 'n'.repeat(24),
  carry: {},
  expiresAt: Date.now() + 60_000,
  ...changes,
});

describe('the sign-in state', () => {
  it('opens for its own CRM only, and an install state never opens as one', () => {
    const sealed = sealSignInState(box, state({ carry: { codeVerifier: 'v' } }));
    expect(openSignInState(box, 'hubspot', sealed)?.carry).toEqual({ codeVerifier: 'v' });
    expect(openSignInState(box, 'salesforce', sealed)).toBeUndefined();
    expect(openSignInState(new SecretBox(randomBytes(32)), 'hubspot', sealed)).toBeUndefined();
    expect(openSignInState(box, 'hubspot', `${sealed.slice(0, -2)}xx`)).toBeUndefined();
    const install = beginOAuth(box, openInstallLink(box, createInstallLink(box, { kind: 'local', accountName: 'acme' }, 'sandbox'))).state;
    expect(openSignInState(box, 'hubspot', install)).toBeUndefined();
  });

  it("sends a sign-in on from the CRM's callback to the console's, with the code, the error and the state, and leaves anything else to the install", () => {
    const sealed = sealSignInState(box, state());
    const forwarded = forwardSignIn(box, 'hubspot', PUBLIC_URL, { code: 'c-1', state: sealed, extra: 'dropped' });
    expect(forwarded?.status).toBe(302);
    expect(forwarded?.headers['Referrer-Policy']).toBe('no-referrer');
    const location = new URL(forwarded?.headers.Location ?? '');
    expect(`${location.origin}${location.pathname}`).toBe(`${PUBLIC_URL}/console/signin/hubspot/callback`);
    expect(Object.fromEntries(location.searchParams)).toEqual({ code: 'c-1', state: sealed });
    expect(
      new URL(forwardSignIn(box, 'hubspot', PUBLIC_URL, { error: 'access_denied', state: sealed })?.headers.Location ?? '').searchParams.get('error'),
    ).toBe('access_denied');
    expect(forwardSignIn(box, 'hubspot', PUBLIC_URL, { code: 'c-1', state: 'an-install-state' })).toBeUndefined();
    expect(forwardSignIn(box, 'hubspot', PUBLIC_URL, { code: 'c-1' })).toBeUndefined();
    // Never a redirect off PUBLIC_URL, whatever a state says.
    const away = sealSignInState(box, state({ returnUrl: 'https://enrich.example.com.evil.test/console/signin/hubspot/callback' }));
    expect(forwardSignIn(box, 'hubspot', PUBLIC_URL, { code: 'c-1', state: away })).toBeUndefined();
  });
});

describe('the sign-in authorize URLs', () => {
  it("HubSpot: the install's client id and redirect URI, the required scopes, and settings.users.read beside the optional ones", () => {
    const signIn = hubspotConsoleSignIn({
      clientId: 'client-1',
      clientSecret: 'secret',
      appId: '7',
      apiBaseUrl: 'https://api.hubapi.com',
      authBaseUrl: 'https://app.hubspot.com',
    });
    expect(signIn.available(PUBLIC_URL)).toBe(true);
    expect(signIn.available(null)).toBe(false);
    expect(
      hubspotConsoleSignIn({
        clientId: null,
        clientSecret: null,
        appId: null,
        apiBaseUrl: 'https://api.hubapi.com',
        authBaseUrl: 'https://app.hubspot.com',
      }).available(PUBLIC_URL),
    ).toBe(false);
    const url = new URL(signIn.authorizeUrl({ publicUrl: PUBLIC_URL, query: {}, seal: () => 'sealed-state' }));
    expect(`${url.origin}${url.pathname}`).toBe('https://app.hubspot.com/oauth/authorize');
    expect(url.searchParams.get('client_id')).toBe('client-1');
    expect(url.searchParams.get('redirect_uri')).toBe(`${PUBLIC_URL}/oauth/${HUBSPOT_PROVIDER}/callback`);
    expect(url.searchParams.get('state')).toBe('sealed-state');
    expect(url.searchParams.get('optional_scope')?.split(' ').sort()).toEqual(['automation', 'settings.users.read']);
    expect(url.searchParams.get('scope')?.split(' ')).not.toContain('settings.users.read');
  });

  it("Salesforce: PKCE with the verifier sealed in the state, the install's redirect URI, the api scope only, a sandbox org at test.salesforce.com", () => {
    const signIn = salesforceConsoleSignIn({
      clientId: '3MVG9.key',
      clientSecret: null,
      loginUrl: 'https://login.salesforce.com',
      allowAnyHost: false,
      jwt: null,
    });
    let carry: Readonly<Record<string, string>> = {};
    const url = new URL(signIn.authorizeUrl({ publicUrl: PUBLIC_URL, query: {}, seal: (c) => ((carry = c), 'sealed-state') }));
    expect(`${url.origin}${url.pathname}`).toBe('https://login.salesforce.com/services/oauth2/authorize');
    expect(url.searchParams.get('scope')).toBe('api');
    expect(url.searchParams.get('redirect_uri')).toBe(`${PUBLIC_URL}/oauth/salesforce/callback`);
    expect(url.searchParams.get('code_challenge')).toBe(pkceChallenge(carry.codeVerifier ?? ''));
    expect(carry).toMatchObject({ loginUrl: 'https://login.salesforce.com', org: 'production' });
    const sandbox = new URL(signIn.authorizeUrl({ publicUrl: PUBLIC_URL, query: { org: 'sandbox' }, seal: () => 's' }));
    expect(sandbox.origin).toBe('https://test.salesforce.com');
    expect(() => signIn.authorizeUrl({ publicUrl: PUBLIC_URL, query: { org: 'elsewhere' }, seal: () => 's' })).toThrow('org must be production or sandbox');
  });
});

describe("HubSpot's answer: a Super Admin of the token's portal", () => {
  // Shape of POST /oauth/{version}/token/introspect for an access token (PublicAccessTokenInfoResponse), values scrubbed.
  const metadata = {
    active: true,
    token: 'CNa1-scrubbed',
    user: 'ada@example.com',
    hub_domain: 'example.hubspot.com',
    scopes: ['oauth', 'crm.objects.contacts.read', 'settings.users.read'],
    signed_access_token: { expiresAt: 1, scopes: 'scrubbed', hubId: 62515, userId: 4701001 },
    hub_id: 62515,
    app_id: 1160452,
    expires_in: 1799,
    user_id: 4701001,
    token_type: 'bearer',
    token_use: 'access_token',
    client_id: 'client-0001',
    is_private_distribution: false,
  };
  const info = parseTokenInfo(metadata);
  // Shape of GET /settings/users/{version}/{userId} (PublicUser).
  const user = (superAdmin?: boolean) => ({
    id: '4701001',
    email: 'ada@example.com',
    roleIds: [],
    primaryTeamId: '1',
    secondaryTeamIds: [],
    ...(superAdmin === undefined ? {} : { superAdmin }),
  });

  it('reads the portal and the user from the token metadata', () => {
    expect(info).toMatchObject({ hub_id: '62515', user_id: '4701001', user: 'ada@example.com' });
    expect(() => parseTokenInfo({ ...metadata, user_id: undefined })).toThrow('without an active token, a portal and a user');
    // An inactive token (expired, revoked) is no sign-in.
    expect(() => parseTokenInfo({ active: false })).toThrow('without an active token');
  });

  it('names the user by the users API e-mail address when introspection gives no user name', () => {
    const unnamed = parseTokenInfo({ ...metadata, user: undefined });
    expect(hubspotVerdict(unnamed, { status: 200, body: user(true) })).toMatchObject({ userLabel: 'ada@example.com', isAdmin: true });
    expect(hubspotVerdict(unnamed, null)).toMatchObject({ userLabel: 'user 4701001', isAdmin: false });
  });

  it('lets a Super Admin in, and no one else', () => {
    expect(hubspotVerdict(info, { status: 200, body: user(true) })).toEqual({
      externalAccountId: '62515',
      userLabel: 'ada@example.com',
      isAdmin: true,
      reason: 'ada@example.com is a Super Admin of portal 62515.',
    });
    expect(hubspotVerdict(info, { status: 200, body: user(false) })).toMatchObject({
      isAdmin: false,
      reason: 'ada@example.com is not a Super Admin of portal 62515.',
    });
    // No `superAdmin` in the answer: not one.
    expect(hubspotVerdict(info, { status: 200, body: user() }).isAdmin).toBe(false);
  });

  it('refuses when HubSpot will not say (no scope, 403, no such user), and throws on a failure to try again', () => {
    expect(hubspotVerdict(info, null)).toMatchObject({
      isAdmin: false,
      reason: expect.stringContaining('did not grant this sign-in the settings.users.read scope'),
    });
    expect(hubspotVerdict(info, { status: 403, body: { category: 'MISSING_SCOPES' } }).isAdmin).toBe(false);
    expect(hubspotVerdict(info, { status: 404, body: null })).toMatchObject({ isAdmin: false, reason: 'HubSpot has no user 4701001 in portal 62515.' });
    expect(() => hubspotVerdict(info, { status: 429, body: null })).toThrow('answered 429');
    expect(() => hubspotVerdict(info, { status: 502, body: null })).toThrow('answered 502');
    expect(() => hubspotVerdict(info, { status: 200, body: { superAdmin: true } })).toThrow('without a user');
    expect(() => hubspotVerdict(info, { status: 200, body: { ...user(true), id: '999' } })).toThrow('another user');
  });
});

describe("Salesforce's answer: Modify All Data or Customize Application, the user's own effective permissions", () => {
  const grant = { orgId: '00D5g000004fAkE', userId: '0055g00000AbCdEAAV' };
  const rows = (modifyAllData: boolean, customizeApplication: boolean) => ({
    totalSize: 1,
    done: true,
    records: [
      {
        attributes: { type: 'UserPermissionAccess', url: '/services/data/v62.0/sobjects/UserPermissionAccess/x' },
        PermissionsModifyAllData: modifyAllData,
        PermissionsCustomizeApplication: customizeApplication,
      },
    ],
  });

  it('asks one fixed query, with no id in it', () => {
    expect(ADMIN_PERMISSIONS_SOQL).toBe('SELECT PermissionsModifyAllData, PermissionsCustomizeApplication FROM UserPermissionAccess');
  });

  it('lets in a user with either permission, keyed by the 18-character org id', () => {
    expect(salesforceVerdict(grant, { status: 200, body: rows(true, true) })).toEqual({
      externalAccountId: '00D5g000004fAkEEAU',
      userLabel: 'user 0055g00000AbCdEAAV',
      isAdmin: true,
      reason: 'Salesforce user 0055g00000AbCdEAAV holds Modify All Data and Customize Application in org 00D5g000004fAkEEAU.',
    });
    expect(salesforceVerdict(grant, { status: 200, body: rows(false, true) }).isAdmin).toBe(true);
    expect(salesforceVerdict(grant, { status: 200, body: rows(true, false) }).isAdmin).toBe(true);
    expect(salesforceVerdict(grant, { status: 200, body: rows(false, false) })).toMatchObject({
      isAdmin: false,
      reason: 'Salesforce user 0055g00000AbCdEAAV holds neither Modify All Data nor Customize Application in org 00D5g000004fAkEEAU.',
    });
  });

  it('refuses a query Salesforce turns down, and throws on a failure to try again', () => {
    const refused = salesforceVerdict(grant, {
      status: 400,
      body: [{ message: "sObject type 'UserPermissionAccess' is not supported.", errorCode: 'INVALID_TYPE' }],
    });
    expect(refused).toMatchObject({ isAdmin: false, reason: expect.stringContaining('(INVALID_TYPE)') });
    expect(() => salesforceVerdict(grant, { status: 401, body: [{ message: 'Session expired or invalid', errorCode: 'INVALID_SESSION_ID' }] })).toThrow(
      'answered 401',
    );
    expect(() => salesforceVerdict(grant, { status: 503, body: null })).toThrow('answered 503');
    expect(() => salesforceVerdict(grant, { status: 200, body: { totalSize: 0, done: true, records: [] } })).toThrow('one row');
    expect(() => salesforceVerdict({ ...grant, orgId: 'not-an-org' }, { status: 200, body: rows(true, true) })).toThrow('not one');
  });
});
