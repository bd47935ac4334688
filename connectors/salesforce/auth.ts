// Salesforce credentials as an installation keeps them (sealed), the instance-URL check, the OAuth web-server
// flow with PKCE and the JWT bearer flow through jsforce's OAuth2, and the token source every API call draws
// from: one refresh per org at a time, a rotated refresh token persisted before the new access token is used.
import { createHash, createSign, randomBytes } from 'node:crypto';
import { SingleFlightRefresh } from '../kit/credential-refresh.ts';
import type { Connection, HttpRequest, HttpRequestOptions, HttpResponse, OAuth2, OAuth2Config } from 'jsforce';
import { loadJsforce } from './jsforce.ts';
import { z } from 'zod';
import { abortable, outboundTimeouts } from '../../core/client/timeouts.ts';
import { CrmError, type CrmErrorKind } from '../../bridge/connector.ts';
import type { Installations } from '../../bridge/installations.ts';

export const SALESFORCE_PRODUCTION_LOGIN_URL = 'https://login.salesforce.com';
export const SALESFORCE_SANDBOX_LOGIN_URL = 'https://test.salesforce.com';
export const JWT_BEARER_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** Salesforce refuses a JWT bearer assertion whose `exp` is more than 3 minutes ahead. */
export const JWT_MAX_LIFETIME_SECONDS = 180;
/** What the web-server flow asks for: the REST API, and a refresh token to stay connected. */
export const DEFAULT_OAUTH_SCOPE = 'api refresh_token';
/** Refresh when less than this is left (only when the expiry is known: Salesforce's token answers carry none). */
export const REFRESH_AHEAD_MS = 5 * 60_000;

const ORG_ID = /^00D[a-zA-Z0-9]{12}(?:[a-zA-Z0-9]{3})?$/;
const USER_ID = /^005[a-zA-Z0-9]{12}(?:[a-zA-Z0-9]{3})?$/;

const JwtKeySchema = z.object({
  /** The External Client App's consumer key: the assertion's `iss`. */
  consumerKey: z.string().min(1),
  /** The integration user the token acts as: the assertion's `sub`. */
  username: z.string().min(1),
  /** PKCS#8 or PKCS#1 PEM of the key whose certificate is uploaded to the app. */
  privateKeyPem: z.string().includes('PRIVATE KEY'),
});
export type SalesforceJwtKey = z.infer<typeof JwtKeySchema>;

export const SalesforceCredentialsSchema = z
  .object({
    /** oauth: web-server flow tokens, refreshed. jwt: re-issued from a signed assertion. static: used as is. */
    kind: z.enum(['oauth', 'jwt', 'static']),
    /** The org's API host (`https://<my-domain>.my.salesforce.com`), checked with checkInstanceUrl before use. */
    instanceUrl: z.url(),
    accessToken: z.string().min(1),
    refreshToken: z.string().min(1).nullable().default(null),
    /** When Salesforce issued the access token (ISO), from the token answer's `issued_at`. */
    issuedAt: z.string().nullable().default(null),
    /**
     * When the access token expires (ISO), if known. Salesforce's token answers do not say (the org's session
     * timeout decides), so this is normally null and a token is refreshed after a 401 instead of ahead of time.
     */
    expiresAt: z.string().nullable().default(null),
    clientId: z.string().min(1).nullable().default(null),
    /** Optional with PKCE (an External Client App may not require the secret for refresh). */
    clientSecret: z.string().min(1).nullable().default(null),
    /** Where tokens are requested: login.salesforce.com, test.salesforce.com or the org's My Domain. */
    loginUrl: z.url().default(SALESFORCE_PRODUCTION_LOGIN_URL),
    orgId: z.string().regex(ORG_ID),
    userId: z.string().regex(USER_ID).nullable().default(null),
    jwt: JwtKeySchema.nullable().default(null),
  })
  .superRefine((credentials, context) => {
    if (credentials.kind === 'jwt' && credentials.jwt === null) {
      context.addIssue({ code: 'custom', path: ['jwt'], message: 'a jwt installation needs its consumer key, username and private key' });
    }
  });
export type SalesforceCredentials = z.infer<typeof SalesforceCredentialsSchema>;

/** What one API call needs: where, and with which token. */
export interface SalesforceSession {
  readonly instanceUrl: string;
  readonly accessToken: string;
}

/** A token request refused or failed; a CrmError so a failed refresh inside an API call reaches the pipeline as `auth`. */
export class SalesforceAuthError extends CrmError {
  constructor(
    message: string,
    /** The token endpoint's HTTP status; null when it did not answer. */
    readonly status: number | null,
    /** The OAuth `error` (`invalid_grant`, `invalid_client_id`, …) when Salesforce sent one. */
    readonly oauthError: string | null = null,
    kind: CrmErrorKind = tokenErrorKind(status),
  ) {
    super(kind, message);
    this.name = 'SalesforceAuthError';
  }
}

/** Refused credentials need an admin; a token endpoint that is down or busy is only waited out. */
function tokenErrorKind(status: number | null): CrmErrorKind {
  if (status === null || status >= 500) return 'transient';
  if (status === 429) return 'rate_limited';
  return 'auth';
}

/** An instance or login URL that is not a Salesforce API host: never sent a token. */
export class SalesforceUrlError extends CrmError {
  constructor(message: string) {
    super('auth', message);
    this.name = 'SalesforceUrlError';
  }
}

/**
 * Registrable domains Salesforce serves orgs' API and login hosts from: `*.salesforce.com` (My Domain
 * `*.my.salesforce.com`, sandboxes `*.sandbox.my.salesforce.com`, legacy instances `na1.salesforce.com`),
 * `*.force.com` and `*.cloudforce.com` (older instance and My Domain hosts), `*.database.com`, Government Cloud
 * Plus Defense (`*.salesforce.mil`, `*.cloudforce.mil`, `*.crmforce.mil`) and the Alibaba-hosted orgs in China
 * (`*.sfcrmproducts.cn`). Sources: Salesforce CLI's SfdcUrl.isSalesforceDomain (sfdx-core, after help article
 * 000003652) and the My Domain URL formats (help.salesforce.com, domain_name_app_url_changes.htm).
 */
export const SALESFORCE_DOMAINS: readonly string[] = [
  'salesforce.com',
  'force.com',
  'cloudforce.com',
  'database.com',
  'salesforce.mil',
  'cloudforce.mil',
  'crmforce.mil',
  'sfcrmproducts.cn',
];

/**
 * Salesforce-owned hosts that serve UI or org-authored content, not the API: a Lightning host is refused by
 * jsforce itself, and Visualforce, Experience Cloud and content hosts run code the org (or anyone with an org)
 * writes, so a token sent there could be read by it.
 */
const NON_API_HOST_PARTS: readonly string[] = ['.lightning.force.com', '.visual.force.com', '.vf.force.com', '.content.force.com', '.secure.force.com'];

export interface UrlCheckOptions {
  /** Tests and local fakes only: any http(s) host is accepted. */
  readonly allowAnyHost?: boolean;
}

/**
 * The origin (`https://host`) of an instance or login URL that may be sent a token: https, a host under one of
 * SALESFORCE_DOMAINS (not the bare domain, not a UI or content host), no credentials, no path beyond `/`.
 * With `allowAnyHost` (tests, a local fake) any http or https host passes; the other rules stay.
 */
export function checkInstanceUrl(raw: string, options: UrlCheckOptions = {}): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new SalesforceUrlError('the Salesforce URL is not an absolute URL (like https://mydomain.my.salesforce.com)');
  }
  if (url.username !== '' || url.password !== '') throw new SalesforceUrlError('the Salesforce URL must not carry credentials');
  if (url.search !== '' || url.hash !== '' || (url.pathname !== '/' && url.pathname !== '')) {
    throw new SalesforceUrlError(`the Salesforce URL must be an origin only (https://host), not ${url.origin}${url.pathname}`);
  }
  if (options.allowAnyHost === true) {
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new SalesforceUrlError('the Salesforce URL must be http or https');
    return url.origin;
  }
  if (url.protocol !== 'https:') throw new SalesforceUrlError(`the Salesforce URL must be https, not ${url.protocol}`);
  if (url.port !== '') throw new SalesforceUrlError(`the Salesforce URL must use the default https port, not ${url.port}`);
  const host = url.hostname.toLowerCase();
  if (!SALESFORCE_DOMAINS.some((domain) => host.endsWith(`.${domain}`))) {
    throw new SalesforceUrlError(`${host} is not a Salesforce host (${SALESFORCE_DOMAINS.map((d) => `*.${d}`).join(', ')})`);
  }
  if (NON_API_HOST_PARTS.some((part) => `.${host}`.includes(part))) {
    throw new SalesforceUrlError(`${host} serves Salesforce's UI or org content, not the API: use the org's My Domain (https://<name>.my.salesforce.com)`);
  }
  return url.origin;
}

type Transport = Connection['_transport'];

/** jsforce's own retries off: pacing and retrying belong to the caller (the limiter, the queue). */
export const NO_SDK_RETRY: HttpRequestOptions = { retry: { maxRetries: 0, methods: [] } };

/**
 * A jsforce transport that sends through `base` with jsforce's retries off and a timeout, and shows each
 * response (status and headers) to `onResponse`: jsforce's errors carry neither, and both decide what a
 * failure means (a 401 refreshes, a 5xx is transient, Sforce-Limit-Info reports usage).
 */
export function observedTransport(base: Transport, timeoutMs: number, onResponse: (response: HttpResponse) => void): Transport {
  return {
    httpRequest: (request: HttpRequest, options?: HttpRequestOptions) => {
      const sent = base.httpRequest(request, { ...options, ...NO_SDK_RETRY, timeout: timeoutMs });
      sent.then(onResponse, () => undefined);
      return sent;
    },
    getRequestStreamCreator: () => base.getRequestStreamCreator(),
  };
}

const TokenResponseSchema = z
  .object({
    access_token: z.string().min(1),
    refresh_token: z.string().min(1).optional(),
    instance_url: z.string().min(1),
    /** The identity URL: `https://login.salesforce.com/id/<orgId>/<userId>`. */
    id: z.string().min(1),
    token_type: z.string().optional(),
    /** Milliseconds since the epoch, as a string. */
    issued_at: z.string().regex(/^\d+$/).optional(),
    scope: z.string().optional(),
    signature: z.string().optional(),
  })
  .loose();

/** What a token request yields, checked: a Salesforce instance URL, and the org and user it is for. */
export interface SalesforceGrant {
  readonly instanceUrl: string;
  readonly accessToken: string;
  /** Null when none was issued (JWT bearer, or a refresh without rotation). */
  readonly refreshToken: string | null;
  readonly orgId: string;
  readonly userId: string;
  readonly issuedAt: string | null;
  readonly scope: string | null;
}

/** The org and user ids of an identity URL (`…/id/00D…/005…`), as jsforce reads them, but validated. */
export function parseIdentityUrl(idUrl: string): { orgId: string; userId: string } {
  let segments: string[];
  try {
    segments = new URL(idUrl).pathname.split('/').filter((s) => s !== '');
  } catch {
    throw new SalesforceAuthError('the Salesforce token answer has no usable identity URL', 200);
  }
  const [marker, orgId, userId] = segments.slice(-3);
  if (marker !== 'id' || orgId === undefined || userId === undefined || !ORG_ID.test(orgId) || !USER_ID.test(userId)) {
    throw new SalesforceAuthError('the Salesforce identity URL does not name an org and a user (…/id/00D…/005…)', 200);
  }
  return { orgId, userId };
}

const OAuthErrorSchema = z.object({ name: z.string(), message: z.string() });

/**
 * One token request through jsforce's OAuth2 (its transport observed, without retries, with a timeout), its
 * answer parsed and checked: the instance URL must be a Salesforce host (unless allowed otherwise).
 */
async function tokenRequest(
  config: OAuth2Config,
  allowAnyHost: boolean,
  run: (oauth2: OAuth2) => Promise<unknown>,
  prepare?: (oauth2: OAuth2) => void,
): Promise<SalesforceGrant> {
  const { OAuth2 } = await loadJsforce();
  const oauth2 = new OAuth2(config);
  prepare?.(oauth2);
  let status: number | null = null;
  // TOKEN_TIMEOUT_MS for the answer, its body included; jsforce's own timeout (headers only) a second
  // later closes the socket of a request still waiting.
  const timeoutMs = outboundTimeouts().tokenMs;
  oauth2._transport = observedTransport(oauth2._transport, timeoutMs + 1_000, (response) => {
    status = response.statusCode;
  });
  const timeout = AbortSignal.timeout(timeoutMs);
  let answer: unknown;
  try {
    answer = await abortable(run(oauth2), timeout);
  } catch (error) {
    if (timeout.aborted) throw new SalesforceAuthError(`Salesforce token endpoint: no answer within ${timeoutMs} ms`, null, null, 'transient');
    // jsforce throws an Error named after the OAuth `error` with `error_description` as its message
    // (`ERROR_HTTP_<status>` and the raw body when the answer was not JSON).
    const parsed = OAuthErrorSchema.safeParse(error);
    const oauthError = parsed.success && /^[a-z_]+$/.test(parsed.data.name) ? parsed.data.name : null;
    const detail = parsed.success ? `${parsed.data.name}: ${parsed.data.message.slice(0, 300)}` : 'no answer';
    throw new SalesforceAuthError(`Salesforce token endpoint answered ${status ?? 'nothing'}: ${detail}`, status, oauthError);
  }
  const token = TokenResponseSchema.safeParse(answer);
  if (!token.success) throw new SalesforceAuthError('Salesforce token endpoint answered without a usable token', status);
  const { orgId, userId } = parseIdentityUrl(token.data.id);
  return {
    instanceUrl: checkInstanceUrl(token.data.instance_url, { allowAnyHost }),
    accessToken: token.data.access_token,
    refreshToken: token.data.refresh_token ?? null,
    orgId,
    userId,
    issuedAt: token.data.issued_at === undefined ? null : new Date(Number(token.data.issued_at)).toISOString(),
    scope: token.data.scope ?? null,
  };
}

/**
 * A PKCE code verifier as Salesforce documents it (and jsforce makes it with `useVerifier`): 128 random bytes,
 * base64url-encoded. Kept server-side (in the signed state) between the redirect and the callback.
 */
export function createPkceVerifier(): string {
  return randomBytes(128).toString('base64url');
}

/** The S256 code challenge of a verifier: base64url(SHA-256(verifier)). */
export function pkceChallenge(codeVerifier: string): string {
  return createHash('sha256').update(codeVerifier).digest('base64url');
}

export interface AuthorizationUrlInput {
  readonly loginUrl: string;
  readonly clientId: string;
  readonly redirectUri: string;
  readonly state: string;
  /** The verifier; jsforce derives the `code_challenge` from it, and only the challenge is in the URL. */
  readonly codeVerifier: string;
  readonly scope?: string;
  readonly allowAnyHost?: boolean;
}

/**
 * The authorization URL of the web-server flow with PKCE: the parameters jsforce's OAuth2 sends
 * (`getAuthorizationUrl` with `useVerifier`), built here so that making a link does not load jsforce.
 * Docs: https://help.salesforce.com/s/articleView?id=xcloud.remoteaccess_oauth_web_server_flow.htm&type=5
 */
export function authorizationUrl(input: AuthorizationUrlInput): string {
  const loginUrl = checkInstanceUrl(input.loginUrl, { allowAnyHost: input.allowAnyHost === true });
  const url = new URL('/services/oauth2/authorize', loginUrl);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: input.clientId,
    redirect_uri: input.redirectUri,
    scope: input.scope ?? DEFAULT_OAUTH_SCOPE,
    state: input.state,
    code_challenge: pkceChallenge(input.codeVerifier),
  }).toString();
  return url.toString();
}

export interface ExchangeCodeInput {
  readonly loginUrl: string;
  readonly clientId: string;
  readonly clientSecret: string | null;
  readonly redirectUri: string;
  readonly code: string;
  readonly codeVerifier: string;
  readonly allowAnyHost?: boolean;
}

/**
 * The callback's code for tokens (`grant_type=authorization_code` with the `code_verifier`).
 * Docs: https://help.salesforce.com/s/articleView?id=xcloud.remoteaccess_oauth_web_server_flow.htm&type=5
 */
export async function exchangeCode(input: ExchangeCodeInput): Promise<SalesforceGrant> {
  const allowAnyHost = input.allowAnyHost === true;
  const loginUrl = checkInstanceUrl(input.loginUrl, { allowAnyHost });
  const config: OAuth2Config = {
    loginUrl,
    clientId: input.clientId,
    redirectUri: input.redirectUri,
    useVerifier: true,
    ...(input.clientSecret === null ? {} : { clientSecret: input.clientSecret }),
  };
  return tokenRequest(
    config,
    allowAnyHost,
    (oauth2) => oauth2.requestToken(input.code),
    (oauth2) => {
      oauth2.codeVerifier = input.codeVerifier;
    },
  );
}

export interface JwtAssertionInput {
  readonly consumerKey: string;
  readonly username: string;
  /** The login URL the token is requested from (`https://login.salesforce.com` or `https://test.salesforce.com`). */
  readonly audience: string;
  readonly privateKeyPem: string;
  readonly now?: Date;
  /** At most JWT_MAX_LIFETIME_SECONDS (the default). */
  readonly lifetimeSeconds?: number;
}

/**
 * An RS256-signed JWT bearer assertion: `iss` the consumer key, `sub` the username, `aud` the login URL,
 * `exp` at most 3 minutes ahead. jsforce v3 has no JWT login, so it is signed here with node:crypto.
 * Docs: https://help.salesforce.com/s/articleView?id=xcloud.remoteaccess_oauth_jwt_flow.htm&type=5
 */
export function jwtAssertion(input: JwtAssertionInput): string {
  const lifetime = Math.min(input.lifetimeSeconds ?? JWT_MAX_LIFETIME_SECONDS, JWT_MAX_LIFETIME_SECONDS);
  if (lifetime <= 0) throw new Error('a JWT assertion needs a positive lifetime');
  const now = input.now ?? new Date();
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const signingInput = `${encode({ alg: 'RS256' })}.${encode({
    iss: input.consumerKey,
    sub: input.username,
    aud: input.audience,
    exp: Math.floor(now.getTime() / 1000) + lifetime,
  })}`;
  const signature = createSign('RSA-SHA256').update(signingInput).sign(input.privateKeyPem).toString('base64url');
  return `${signingInput}.${signature}`;
}

export interface ExchangeJwtInput extends SalesforceJwtKey {
  readonly loginUrl: string;
  readonly now?: Date;
  readonly allowAnyHost?: boolean;
}

/**
 * A JWT bearer assertion for an access token (no refresh token is ever issued: the next one is a new assertion).
 * Docs: https://help.salesforce.com/s/articleView?id=xcloud.remoteaccess_oauth_jwt_flow.htm&type=5
 */
export async function exchangeJwt(input: ExchangeJwtInput): Promise<SalesforceGrant> {
  const allowAnyHost = input.allowAnyHost === true;
  const loginUrl = checkInstanceUrl(input.loginUrl, { allowAnyHost });
  const assertion = jwtAssertion({
    consumerKey: input.consumerKey,
    username: input.username,
    audience: loginUrl,
    privateKeyPem: input.privateKeyPem,
    ...(input.now === undefined ? {} : { now: input.now }),
  });
  // No client id on the OAuth2: requestToken would append it (and a secret, a redirect URI) to the JWT grant.
  return tokenRequest({ loginUrl }, allowAnyHost, (oauth2) => oauth2.requestToken({ grant_type: JWT_BEARER_GRANT_TYPE, assertion }));
}

/**
 * A refresh token for a new access token (and, with refresh-token rotation on, a new refresh token).
 * Docs: https://help.salesforce.com/s/articleView?id=xcloud.remoteaccess_oauth_refresh_token_flow.htm&type=5
 */
async function refreshGrant(credentials: SalesforceCredentials, refreshToken: string, clientId: string, allowAnyHost: boolean): Promise<SalesforceGrant> {
  const loginUrl = checkInstanceUrl(credentials.loginUrl, { allowAnyHost });
  const config: OAuth2Config = { loginUrl, clientId, ...(credentials.clientSecret === null ? {} : { clientSecret: credentials.clientSecret }) };
  return tokenRequest(config, allowAnyHost, (oauth2) => oauth2.refreshToken(refreshToken));
}

/** The credentials an installation keeps after a code exchange or a first JWT grant. */
export function credentialsFromGrant(
  grant: SalesforceGrant,
  app: { kind: 'oauth' | 'jwt'; loginUrl: string; clientId: string | null; clientSecret: string | null; jwt?: SalesforceJwtKey },
): SalesforceCredentials {
  return SalesforceCredentialsSchema.parse({
    kind: app.kind,
    instanceUrl: grant.instanceUrl,
    accessToken: grant.accessToken,
    refreshToken: grant.refreshToken,
    issuedAt: grant.issuedAt,
    expiresAt: null,
    clientId: app.clientId,
    clientSecret: app.clientSecret,
    loginUrl: app.loginUrl,
    orgId: grant.orgId,
    userId: grant.userId,
    jwt: app.jwt ?? null,
  });
}

/** One refresh per org at a time, in this process and across processes (connectors/kit/credential-refresh.ts). */
const refreshing = new SingleFlightRefresh<SalesforceCredentials, SalesforceSession>();

function sessionOf(credentials: SalesforceCredentials): SalesforceSession {
  return { instanceUrl: credentials.instanceUrl, accessToken: credentials.accessToken };
}

export interface SalesforceTokenSourceOptions {
  readonly now?: () => Date;
  /** Tests and local fakes only: instance and login URLs on any host. */
  readonly allowAnyHost?: boolean;
}

export class SalesforceTokenSource {
  private readonly now: () => Date;
  private readonly allowAnyHost: boolean;

  constructor(
    private readonly installationId: string,
    private readonly installations: Installations,
    options: SalesforceTokenSourceOptions = {},
  ) {
    this.now = options.now ?? (() => new Date());
    this.allowAnyHost = options.allowAnyHost === true;
  }

  async credentials(): Promise<SalesforceCredentials> {
    return SalesforceCredentialsSchema.parse((await this.installations.secrets(this.installationId)).crm);
  }

  /** The session to call with; refreshed first only when its expiry is known and near. */
  async session(): Promise<SalesforceSession> {
    const credentials = await this.credentials();
    if (!this.expiring(credentials)) return sessionOf(credentials);
    return this.refresh(null);
  }

  private expiring(credentials: SalesforceCredentials): boolean {
    if (credentials.kind === 'static' || credentials.expiresAt === null) return false;
    return Date.parse(credentials.expiresAt) - this.now().getTime() < REFRESH_AHEAD_MS;
  }

  /**
   * After Salesforce refused `refused` (401): a new session, from another refresher if one already replaced the
   * refused token, else refreshed here (once per installation at a time). Null when the installation cannot
   * refresh (a static token, or OAuth without a refresh token or client id).
   */
  async refreshAfterRefusal(refused: SalesforceSession): Promise<SalesforceSession | null> {
    const credentials = await this.credentials();
    if (credentials.accessToken !== refused.accessToken) return sessionOf(credentials);
    if (credentials.kind === 'static') return null;
    if (credentials.kind === 'oauth' && (credentials.refreshToken === null || credentials.clientId === null)) return null;
    return this.refresh(refused.accessToken);
  }

  /** `refused`: the token Salesforce refused (refresh unless it was replaced meanwhile); null: refresh if expiring. */
  private refresh(refused: string | null): Promise<SalesforceSession> {
    // Read again inside the lease: another process may have refreshed since our caller read.
    return refreshing.run(this.installations, this.installationId, async () => {
      const credentials = await this.credentials();
      if (refused !== null ? credentials.accessToken !== refused : !this.expiring(credentials)) return { save: null, use: sessionOf(credentials) };
      const grant = await this.grant(credentials);
      if (grant.orgId !== credentials.orgId) {
        throw new SalesforceAuthError(`Salesforce issued a token for org ${grant.orgId}, not for this installation's org ${credentials.orgId}`, 200);
      }
      const next: SalesforceCredentials = {
        ...credentials,
        instanceUrl: grant.instanceUrl,
        accessToken: grant.accessToken,
        refreshToken: grant.refreshToken ?? credentials.refreshToken,
        issuedAt: grant.issuedAt,
        expiresAt: null,
        userId: grant.userId,
      };
      return { save: next, use: sessionOf(next) };
    });
  }

  private grant(credentials: SalesforceCredentials): Promise<SalesforceGrant> {
    if (credentials.kind === 'jwt' && credentials.jwt !== null) {
      return exchangeJwt({ ...credentials.jwt, loginUrl: credentials.loginUrl, now: this.now(), allowAnyHost: this.allowAnyHost });
    }
    if (credentials.kind === 'oauth' && credentials.refreshToken !== null && credentials.clientId !== null) {
      return refreshGrant(credentials, credentials.refreshToken, credentials.clientId, this.allowAnyHost);
    }
    return Promise.reject(
      new SalesforceAuthError('the Salesforce session expired and cannot be renewed (no refresh token, client id or JWT key)', null, null, 'auth'),
    );
  }
}
