// Connecting a Salesforce org: by OAuth (an operator's install link → Salesforce's consent screen, the web-server
// flow with PKCE → callback) or server to server with the JWT bearer flow from the CLI. Both end the same way: an
// installation keyed by the 18-character org id, with sealed credentials and a signing secret for the JSON callout.
import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { Environment } from '../../core/accounts/model.ts';
import { ENVIRONMENTS } from '../../core/accounts/model.ts';
import type { SecretBox } from '../../core/secrets/secret-box.ts';
import { InstallationError, type Installations, type TargetInput } from '../../bridge/installations.ts';
import type { Installation } from '../../bridge/model.ts';
import {
  SALESFORCE_PRODUCTION_LOGIN_URL,
  SALESFORCE_SANDBOX_LOGIN_URL,
  type SalesforceCredentials,
  SalesforceCredentialsSchema,
  type SalesforceGrant,
  type SalesforceJwtKey,
  authorizationUrl,
  checkInstanceUrl,
  createPkceVerifier,
  credentialsFromGrant,
  exchangeCode,
  exchangeJwt,
} from './auth.ts';
import { SALESFORCE_PROVIDER } from './connector.ts';
import { toSalesforceId18 } from './ids.ts';
import { SALESFORCE_OAUTH_CALLBACK_ROUTE, SALESFORCE_OAUTH_INSTALL_ROUTE } from './paths.ts';
import {
  INSTALL_LINK_TTL_MS,
  InstallSeals,
  InstallTargetSchema,
  OAUTH_STATE_TTL_MS,
  installLinkUrl as kitInstallLinkUrl,
  newBrowserNonce,
} from '../kit/oauth-install.ts';

/** A production (or developer) org logs in at SALESFORCE_LOGIN_URL; a Salesforce sandbox org at test.salesforce.com. */
export const SALESFORCE_ORG_KINDS = ['production', 'sandbox'] as const;
export type SalesforceOrgKind = (typeof SALESFORCE_ORG_KINDS)[number];

/** The External Client App as configured (SALESFORCE_CLIENT_ID, …): without a client id, no OAuth install. */
export interface SalesforceAppSettings {
  readonly clientId: string | null;
  /** Null when the app does not require the secret (PKCE alone). */
  readonly clientSecret: string | null;
  /** Where production orgs log in (login.salesforce.com, or a My Domain login URL). */
  readonly loginUrl: string;
  /** Tests and local fakes only: login and instance URLs on any host. */
  readonly allowAnyHost: boolean;
  /** The JWT bearer flow's settings (`salesforce connect-jwt`), or null when none is set. */
  readonly jwt: { readonly consumerKey: string; readonly username: string; readonly privateKeyFile: string } | null;
}

/** No External Client App: orgs connect with a token (`enrichbridge salesforce connect`). */
export const NO_SALESFORCE_APP: SalesforceAppSettings = {
  clientId: null,
  clientSecret: null,
  loginUrl: SALESFORCE_PRODUCTION_LOGIN_URL,
  allowAnyHost: false,
  jwt: null,
};

/** The app's settings for an install, or null when the server cannot run one (no client id or no public URL). */
export function salesforceAppConfig(settings: SalesforceAppSettings, publicUrl: string | null): SalesforceAppConfig | null {
  if (settings.clientId === null || publicUrl === null) return null;
  return { clientId: settings.clientId, clientSecret: settings.clientSecret, loginUrl: settings.loginUrl, publicUrl, allowAnyHost: settings.allowAnyHost };
}

/** The External Client App's settings and where we are reached, from the server's configuration. */
export interface SalesforceAppConfig {
  readonly clientId: string;
  /** Null when the app does not require the secret (PKCE alone). */
  readonly clientSecret: string | null;
  /** Where production orgs log in (login.salesforce.com, or a My Domain login URL). */
  readonly loginUrl: string;
  /** The server's public base URL: the redirect URI is built on it. */
  readonly publicUrl: string;
  /** Tests and local fakes only: login and instance URLs on any host. */
  readonly allowAnyHost: boolean;
}

const TargetSchema = InstallTargetSchema;

/** What an operator's install link grants: the target and environment the org will enrich against. */
const InstallIntentSchema = z.object({
  purpose: z.literal('salesforce-install'),
  target: TargetSchema,
  environment: z.enum(ENVIRONMENTS),
  /** Null: the admin picks (`org=sandbox` on the link), production by default. */
  org: z.enum(SALESFORCE_ORG_KINDS).nullable(),
  expiresAt: z.number().int(),
});
export type SalesforceInstallIntent = z.infer<typeof InstallIntentSchema>;

/**
 * What an operator's reconnect link grants: the org the admin authorises takes the place of the one an
 * installation had (a refreshed sandbox's new org id), the installation keeping its target, environment,
 * settings and secrets.
 */
const ReconnectIntentSchema = z.object({
  purpose: z.literal('salesforce-reconnect'),
  installationId: z.string().min(1).max(100),
  /** The org id the grant must be for (the installation's org-changed mark); null: any, as the operator said. */
  orgId: z.string().min(15).max(18).nullable(),
  org: z.enum(SALESFORCE_ORG_KINDS).nullable(),
  expiresAt: z.number().int(),
});
export type SalesforceReconnectIntent = z.infer<typeof ReconnectIntentSchema>;

/** An install link's intent: a new org, or an installation moved to another org. */
const LinkIntentSchema = z.discriminatedUnion('purpose', [InstallIntentSchema, ReconnectIntentSchema]);
export type SalesforceLinkIntent = z.infer<typeof LinkIntentSchema>;

const OAuthStateSchema = z.object({
  purpose: z.literal('salesforce-oauth-state'),
  intent: LinkIntentSchema,
  /** The PKCE verifier: only its challenge went to Salesforce; it travels sealed, so only we can send it back. */
  codeVerifier: z.string().min(43),
  /** Also set as a cookie on the admin's browser: the callback must come back to the same browser. */
  nonce: z.string().min(16),
  /** The kind of org the admin logs in to, and where: the code is exchanged at the same place. */
  org: z.enum(SALESFORCE_ORG_KINDS),
  loginUrl: z.string().min(1),
  expiresAt: z.number().int(),
});
export type SalesforceOAuthState = z.infer<typeof OAuthStateSchema>;

/** An install that cannot go on for a reason the admin or operator can act on (a bad link, state or key). */
export class SalesforceInstallError extends InstallationError {
  constructor(message: string) {
    super(message);
    this.name = 'SalesforceInstallError';
  }
}

// Not HubSpot's context: a HubSpot install link or state does not open here, nor ours there.
const seals = new InstallSeals({
  context: 'salesforce-oauth',
  intent: LinkIntentSchema,
  state: OAuthStateSchema,
  fail: (message) => new SalesforceInstallError(message),
});

/** An install link's token: sealed (neither readable nor forgeable), expiring in 7 days. */
export function createInstallLink(
  box: SecretBox,
  target: TargetInput,
  environment: Environment,
  options: { readonly org?: SalesforceOrgKind; readonly now?: Date } = {},
): string {
  const now = options.now ?? new Date();
  const intent: SalesforceInstallIntent = {
    purpose: 'salesforce-install',
    target: TargetSchema.parse(target),
    environment,
    org: options.org ?? null,
    expiresAt: now.getTime() + INSTALL_LINK_TTL_MS,
  };
  return seals.seal(box, intent);
}

/**
 * A reconnect link's token (sealed, expiring in 7 days): the admin who opens it authorises an org, and the
 * installation moves to it when it is `orgId` (or any org, when null).
 */
export function createReconnectLink(
  box: SecretBox,
  installationId: string,
  orgId: string | null,
  options: { readonly org?: SalesforceOrgKind; readonly now?: Date } = {},
): string {
  const now = options.now ?? new Date();
  const intent: SalesforceReconnectIntent = {
    purpose: 'salesforce-reconnect',
    installationId,
    orgId,
    org: options.org ?? null,
    expiresAt: now.getTime() + INSTALL_LINK_TTL_MS,
  };
  return seals.seal(box, intent);
}

/**
 * The OAuth link that moves `installation` to the org it is marked with (or to any org the admin authorises,
 * with `anyOrg`), for the CLI's `salesforce reconnect` and the console's Reconnect: a sandbox installation's
 * link logs in at test.salesforce.com.
 */
export async function reconnectLinkFor(options: {
  box: SecretBox;
  installations: Installations;
  installation: Installation;
  publicUrl: string;
  orgId?: string | null;
  anyOrg?: boolean;
  now?: Date;
}): Promise<{ url: string; orgId: string | null }> {
  const { installation } = options;
  if (installation.provider !== SALESFORCE_PROVIDER) throw new SalesforceInstallError(`${installation.id} is not a Salesforce installation`);
  const marked = installation.orgChange?.externalAccountId ?? null;
  const named = options.orgId ?? null;
  if (options.anyOrg !== true) {
    if (marked === null) {
      throw new SalesforceInstallError(`installation ${installation.id} has seen no message from another org: to move it all the same, say so (--any-org)`);
    }
    if (named !== null && toSalesforceId18(named) !== marked) {
      throw new SalesforceInstallError(
        `installation ${installation.id} gets messages from org ${marked}, not ${named}; to move it there all the same, say so (--any-org)`,
      );
    }
  }
  const current = SalesforceCredentialsSchema.safeParse((await options.installations.secrets(installation.id)).crm);
  const sandbox = current.success && current.data.loginUrl === SALESFORCE_SANDBOX_LOGIN_URL;
  // The org the grant must be for: the one named, else the mark's; none (any org) only when told so.
  const expected = named ?? (options.anyOrg === true ? null : marked);
  const link = createReconnectLink(options.box, installation.id, expected, {
    ...(sandbox ? { org: 'sandbox' as const } : {}),
    ...(options.now === undefined ? {} : { now: options.now }),
  });
  return { url: installLinkUrl(options.publicUrl, link), orgId: expected };
}

/** The address an admin opens: PUBLIC_URL with the install route appended (a path prefix stays) and the link. */
export function installLinkUrl(publicUrl: string, link: string): string {
  return kitInstallLinkUrl(publicUrl, SALESFORCE_OAUTH_INSTALL_ROUTE, link);
}

export function openInstallLink(box: SecretBox, sealed: string, now: Date = new Date()): SalesforceLinkIntent {
  return seals.openLink(box, sealed, now);
}

/**
 * Which kind of org the admin logs in to: the link's, else the `org` query parameter's, else production. A
 * parameter that contradicts the link is refused rather than silently overruled.
 */
export function orgKindFor(intent: SalesforceLinkIntent, requested: string | undefined): SalesforceOrgKind {
  if (requested !== undefined && requested !== 'production' && requested !== 'sandbox') {
    throw new SalesforceInstallError('org must be production or sandbox');
  }
  if (intent.org !== null) {
    if (requested !== undefined && requested !== intent.org) {
      throw new SalesforceInstallError(`this install link is for a Salesforce ${intent.org} org; open it without org=${requested}`);
    }
    return intent.org;
  }
  return requested ?? 'production';
}

export function loginUrlFor(app: Pick<SalesforceAppConfig, 'loginUrl'>, org: SalesforceOrgKind): string {
  return org === 'sandbox' ? SALESFORCE_SANDBOX_LOGIN_URL : app.loginUrl;
}

/**
 * The redirect URI: PUBLIC_URL with the callback route appended, not resolved against it, so a path prefix (a
 * proxy serving us under `/enrich`) stays. The External Client App's callback URL must be exactly this.
 */
export function callbackUrl(app: Pick<SalesforceAppConfig, 'publicUrl'>): string {
  return `${app.publicUrl.replace(/\/+$/, '')}${SALESFORCE_OAUTH_CALLBACK_ROUTE}`;
}

/**
 * Starts the OAuth dance: a PKCE verifier and a nonce, sealed with the intent into the `state`; the authorize URL
 * to send the browser to (carrying only the verifier's challenge); and the nonce to set as a cookie.
 */
export function beginOAuth(
  box: SecretBox,
  app: SalesforceAppConfig,
  intent: SalesforceLinkIntent,
  org: SalesforceOrgKind,
  now: Date = new Date(),
): { authorizeUrl: string; nonce: string } {
  const loginUrl = checkInstanceUrl(loginUrlFor(app, org), { allowAnyHost: app.allowAnyHost });
  const nonce = newBrowserNonce();
  const codeVerifier = createPkceVerifier();
  const state: SalesforceOAuthState = {
    purpose: 'salesforce-oauth-state',
    intent,
    codeVerifier,
    nonce,
    org,
    loginUrl,
    expiresAt: now.getTime() + OAUTH_STATE_TTL_MS,
  };
  const sealed = seals.seal(box, state);
  return {
    authorizeUrl: authorizationUrl({
      loginUrl,
      clientId: app.clientId,
      redirectUri: callbackUrl(app),
      state: sealed,
      codeVerifier,
      allowAnyHost: app.allowAnyHost,
    }),
    nonce,
  };
}

/** Verifies the state Salesforce hands back: ours, unexpired, and from the browser that started. */
export function verifyOAuthState(box: SecretBox, sealed: string, cookieNonce: string | undefined, now: Date = new Date()): SalesforceOAuthState {
  return seals.verifyState(box, sealed, cookieNonce, now);
}

export interface SalesforceConnectResult {
  readonly installation: Installation;
  /** The org's API host, as Salesforce named it in the grant. */
  readonly instanceUrl: string;
  /** False: the org was connected already; its credentials were replaced. */
  readonly created: boolean;
  /** The JSON callout's signing secret when it was made just now (to be shown once); null when it existed already. */
  readonly newWebhookSecret: string | null;
  /** The org the installation had before a reconnect moved it to this one; absent otherwise. */
  readonly movedFrom?: string;
}

/**
 * Moves a Salesforce installation to the org of `credentials` (a refreshed sandbox's new org id): new CRM
 * credentials, the installation's id, target, environment, settings, secrets, log and record states kept, the
 * org-changed mark cleared. Refused when the new org is not the one the mark recorded (or nothing is marked)
 * unless `anyOrg`, when it is the org the installation has already, and when another installation has it.
 */
export async function reconnectOrg(options: {
  installations: Installations;
  installationId: string;
  credentials: SalesforceCredentials;
  /** The org the operator expected (a reconnect link's); null: the installation's mark decides. */
  expectedOrgId?: string | null;
  anyOrg: boolean;
}): Promise<SalesforceConnectResult> {
  const { installations } = options;
  const installation = await installations.require(options.installationId);
  if (installation.provider !== SALESFORCE_PROVIDER) throw new SalesforceInstallError(`${installation.id} is not a Salesforce installation`);
  const orgId = toSalesforceId18(options.credentials.orgId);
  if (orgId === null || !orgId.startsWith('00D')) throw new SalesforceInstallError(`not an organization id: ${options.credentials.orgId}`);
  if (orgId === installation.externalAccountId) {
    throw new SalesforceInstallError(`installation ${installation.id} is connected to org ${orgId} already; nothing to move`);
  }
  if (!options.anyOrg) {
    const expected = options.expectedOrgId ?? installation.orgChange?.externalAccountId ?? null;
    if (expected === null) {
      throw new SalesforceInstallError(
        `installation ${installation.id} has seen no message from another org; to move it to org ${orgId} all the same, say so (--any-org)`,
      );
    }
    if (toSalesforceId18(expected) !== orgId) {
      throw new SalesforceInstallError(
        `the credentials are for org ${orgId}, but installation ${installation.id} expects org ${expected} (the org its messages come from now); nothing was moved`,
      );
    }
  }
  const from = installation.externalAccountId;
  const moved = await installations.moveToAccount(installation.id, { externalAccountId: orgId, crmCredentials: { ...options.credentials, orgId } });
  return { installation: moved, instanceUrl: options.credentials.instanceUrl, created: false, newWebhookSecret: null, movedFrom: from };
}

/**
 * Creates the installation (or renews a connected org's credentials) and makes its signing secret. A connected
 * org keeps its target and environment: connecting it elsewhere is a disconnect first.
 */
export async function connectOrg(options: {
  installations: Installations;
  /** The installation of an org id (18 characters, as every route looks it up), if connected. */
  findExisting: (orgId: string) => Promise<Installation | undefined>;
  grant: SalesforceGrant;
  credentials: SalesforceCredentials;
  target: TargetInput;
  environment: Environment;
}): Promise<SalesforceConnectResult> {
  const { installations } = options;
  const orgId = toSalesforceId18(options.grant.orgId);
  if (orgId === null) throw new SalesforceInstallError(`Salesforce named an org id that is not one: ${options.grant.orgId}`);
  const existing = await options.findExisting(orgId);
  if (existing !== undefined) {
    let installation = existing;
    await installations.updateCrmCredentials(installation.id, options.credentials);
    if (installation.status === 'disabled') {
      // Installations.resume refuses a disabled installation ("connect it again"), and this is that connect: the
      // disable becomes an operator's pause first, which resume then lifts.
      await installations.pause(installation.id);
      installation = await installations.resume(installation.id);
    }
    const hadSecret = (await installations.secrets(installation.id)).webhookSecret !== undefined;
    const secret = await installations.webhookSecret(installation.id);
    return { installation, instanceUrl: options.credentials.instanceUrl, created: false, newWebhookSecret: hadSecret ? null : secret };
  }
  const installation = await installations.create({
    provider: SALESFORCE_PROVIDER,
    externalAccountId: orgId,
    environment: options.environment,
    target: options.target,
    crmCredentials: options.credentials,
  });
  try {
    return { installation, instanceUrl: options.credentials.instanceUrl, created: true, newWebhookSecret: await installations.webhookSecret(installation.id) };
  } catch (error) {
    // An org without its secret is not connected: nothing half-installed stays behind.
    await installations.remove(installation.id);
    throw error;
  }
}

/** The OAuth callback's work: code (with the verifier) → tokens → org → installation. */
export async function completeOAuth(options: {
  app: SalesforceAppConfig;
  code: string;
  state: SalesforceOAuthState;
  installations: Installations;
  findExisting: (orgId: string) => Promise<Installation | undefined>;
}): Promise<SalesforceConnectResult> {
  const { app, state } = options;
  // exchangeCode refuses an instance URL off Salesforce's domains (unless allowAnyHost) before anything is kept.
  const grant = await exchangeCode({
    loginUrl: state.loginUrl,
    clientId: app.clientId,
    clientSecret: app.clientSecret,
    redirectUri: callbackUrl(app),
    code: options.code,
    codeVerifier: state.codeVerifier,
    allowAnyHost: app.allowAnyHost,
  });
  if (grant.refreshToken === null) {
    // Without one the org would stop working when the session times out, hours from now.
    throw new SalesforceInstallError('Salesforce issued no refresh token: give the External Client App the RefreshToken (refresh_token, offline_access) scope');
  }
  const credentials = credentialsFromGrant(grant, { kind: 'oauth', loginUrl: state.loginUrl, clientId: app.clientId, clientSecret: app.clientSecret });
  if (state.intent.purpose === 'salesforce-reconnect') {
    // The operator's reconnect link: the org authorised must be the one it names (the installation's mark).
    return reconnectOrg({
      installations: options.installations,
      installationId: state.intent.installationId,
      credentials,
      expectedOrgId: state.intent.orgId,
      anyOrg: state.intent.orgId === null,
    });
  }
  return connectOrg({
    installations: options.installations,
    grant,
    credentials,
    target: state.intent.target,
    environment: state.intent.environment,
    findExisting: options.findExisting,
  });
}

/**
 * The JWT key from configuration: the private key PEM read from its file and checked to be a usable, unencrypted
 * RSA key before anything is sent (it is kept, sealed, in the installation's credentials to sign later assertions).
 */
export function readJwtKey(settings: { consumerKey: string; username: string; privateKeyFile: string }): SalesforceJwtKey {
  let privateKeyPem: string;
  try {
    privateKeyPem = readFileSync(settings.privateKeyFile, 'utf8');
  } catch (error) {
    const code = error instanceof Error && 'code' in error && typeof error.code === 'string' ? error.code : 'unreadable';
    throw new SalesforceInstallError(`cannot read SALESFORCE_JWT_PRIVATE_KEY_FILE ${settings.privateKeyFile} (${code})`);
  }
  let type: string | undefined;
  try {
    type = createPrivateKey(privateKeyPem).asymmetricKeyType;
  } catch {
    throw new SalesforceInstallError(`SALESFORCE_JWT_PRIVATE_KEY_FILE ${settings.privateKeyFile} is not an unencrypted PEM private key`);
  }
  if (type !== 'rsa') throw new SalesforceInstallError(`the JWT key must be an RSA key (Salesforce signs with RS256), not ${type ?? 'unknown'}`);
  return { consumerKey: settings.consumerKey, username: settings.username, privateKeyPem };
}

/**
 * Server to server: a signed assertion for a token, the org learnt from the grant, the installation made (or its
 * credentials renewed) with kind `jwt` credentials. `instanceUrl` is what the operator expects: a token for
 * another org's host is refused, so a wrong username or login URL cannot connect the wrong org.
 */
export async function connectJwt(options: {
  installations: Installations;
  findExisting: (orgId: string) => Promise<Installation | undefined>;
  key: SalesforceJwtKey;
  loginUrl: string;
  instanceUrl: string;
  target: TargetInput;
  environment: Environment;
  allowAnyHost: boolean;
  now?: Date;
}): Promise<SalesforceConnectResult> {
  const { allowAnyHost } = options;
  const expected = checkInstanceUrl(options.instanceUrl, { allowAnyHost });
  const loginUrl = checkInstanceUrl(options.loginUrl, { allowAnyHost });
  const grant = await exchangeJwt({ ...options.key, loginUrl, allowAnyHost, ...(options.now === undefined ? {} : { now: options.now }) });
  if (grant.instanceUrl !== expected) {
    throw new SalesforceInstallError(`Salesforce issued a token for ${grant.instanceUrl} (org ${grant.orgId}), not for ${expected}; nothing was connected`);
  }
  const credentials = credentialsFromGrant(grant, { kind: 'jwt', loginUrl, clientId: null, clientSecret: null, jwt: options.key });
  return connectOrg({
    installations: options.installations,
    grant,
    credentials,
    target: options.target,
    environment: options.environment,
    findExisting: options.findExisting,
  });
}
