// Connecting a HubSpot portal: by OAuth (a public app: install link → HubSpot's consent screen →
// callback) or with a private/static app token from the CLI. Both end the same way: an installation
// with sealed credentials, and the contact properties provisioned.
import { z } from 'zod';
import type { Environment } from '../../core/accounts/model.ts';
import { ENVIRONMENTS } from '../../core/accounts/model.ts';
import type { SecretBox } from '../../core/secrets/secret-box.ts';
import { outboundTimeouts } from '../../core/client/timeouts.ts';
import { type Installations, type TargetInput } from '../../bridge/installations.ts';
import type { Installation } from '../../bridge/model.ts';
import { DEFAULT_HUBSPOT_API_BASE, HubSpotApi, hubspotUrl } from './api.ts';
import { HUBSPOT_PATHS } from './version.ts';
import { type HubSpotCredentials, HubSpotAuthError, requestToken } from './auth.ts';
import { HUBSPOT_PROVIDER, hubspotApiFor } from './connector.ts';
import { type ProvisionReport, provisionHubSpotProperties, removeHubSpotProperties } from './provision.ts';
import { HUBSPOT_OAUTH_CALLBACK_ROUTE } from './paths.ts';
import { HUBSPOT_OPTIONAL_SCOPES, HUBSPOT_REQUIRED_SCOPES } from './scopes.ts';
import { INSTALL_LINK_TTL_MS, InstallSeals, InstallTargetSchema, OAUTH_STATE_TTL_MS, newBrowserNonce } from '../kit/oauth-install.ts';

/** The public app as configured (HUBSPOT_CLIENT_ID, …): without all three, no OAuth install. */
export interface HubSpotAppSettings {
  readonly clientId: string | null;
  readonly clientSecret: string | null;
  readonly appId: string | null;
  readonly apiBaseUrl: string;
  readonly authBaseUrl: string;
}

/** No public app: static-token portals only (`enrichbridge hubspot connect`). */
export const NO_HUBSPOT_APP: HubSpotAppSettings = {
  clientId: null,
  clientSecret: null,
  appId: null,
  apiBaseUrl: DEFAULT_HUBSPOT_API_BASE,
  authBaseUrl: 'https://app.hubspot.com',
};

/** The app's settings for an install, or null when the server cannot run one (no app, or no public URL). */
export function hubspotAppConfig(settings: HubSpotAppSettings, publicUrl: string | null): HubSpotAppConfig | null {
  const { clientId, clientSecret, appId } = settings;
  if (clientId === null || clientSecret === null || appId === null || publicUrl === null) return null;
  return { clientId, clientSecret, appId, apiBaseUrl: settings.apiBaseUrl, authBaseUrl: settings.authBaseUrl, publicUrl };
}

/** The public app's settings, from the server's configuration. */
export interface HubSpotAppConfig {
  readonly clientId: string;
  readonly clientSecret: string;
  readonly appId: string;
  readonly apiBaseUrl: string;
  readonly authBaseUrl: string;
  /** The server's public base URL (what HubSpot calls; redirect URI and signature base). */
  readonly publicUrl: string;
}

const TargetSchema = InstallTargetSchema;

/** What an operator's install link grants: which target and environment the portal will enrich against. */
const InstallIntentSchema = z.object({
  purpose: z.literal('hubspot-install'),
  target: TargetSchema,
  environment: z.enum(ENVIRONMENTS),
  expiresAt: z.number().int(),
});
type InstallIntent = z.infer<typeof InstallIntentSchema>;

const OAuthStateSchema = z.object({
  purpose: z.literal('hubspot-oauth-state'),
  intent: InstallIntentSchema,
  /** Also set as a cookie on the admin's browser: the callback must come back to the same browser. */
  nonce: z.string().min(16),
  expiresAt: z.number().int(),
});
export type OAuthState = z.infer<typeof OAuthStateSchema>;

export class HubSpotInstallError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HubSpotInstallError';
  }
}

const seals = new InstallSeals({
  context: 'hubspot-oauth',
  intent: InstallIntentSchema,
  state: OAuthStateSchema,
  fail: (message) => new HubSpotInstallError(message),
});

/** An install link's token: sealed (so neither readable nor forgeable), expiring. */
export function createInstallLink(box: SecretBox, target: TargetInput, environment: Environment, now: Date = new Date()): string {
  return seals.seal(box, { purpose: 'hubspot-install', target: TargetSchema.parse(target), environment, expiresAt: now.getTime() + INSTALL_LINK_TTL_MS });
}

export function openInstallLink(box: SecretBox, sealed: string, now: Date = new Date()): InstallIntent {
  return seals.openLink(box, sealed, now);
}

/** Starts the OAuth dance: the state to send (sealed) and the nonce to set as a cookie. */
export function beginOAuth(box: SecretBox, intent: InstallIntent, now: Date = new Date()): { state: string; nonce: string } {
  const nonce = newBrowserNonce();
  return { state: seals.seal(box, { purpose: 'hubspot-oauth-state', intent, nonce, expiresAt: now.getTime() + OAUTH_STATE_TTL_MS }), nonce };
}

/** Verifies the state HubSpot hands back: ours, unexpired, and from the browser that started. */
export function verifyOAuthState(box: SecretBox, sealed: string, cookieNonce: string | undefined, now: Date = new Date()): OAuthState {
  return seals.verifyState(box, sealed, cookieNonce, now);
}

/**
 * The redirect URI: PUBLIC_URL with the callback route appended, not resolved against it, so a path
 * prefix (a proxy serving us under `/enrich`) stays, as it does in the webhook signature's URL.
 */
export function callbackUrl(app: Pick<HubSpotAppConfig, 'publicUrl'>): string {
  return `${app.publicUrl.replace(/\/+$/, '')}${HUBSPOT_OAUTH_CALLBACK_ROUTE}`;
}

/** HubSpot's authorize URL: the required scopes, and the optional ones (the install's, or a console sign-in's beside them). */
export function authorizeUrl(app: HubSpotAppConfig, state: string, optionalScopes: readonly string[] = HUBSPOT_OPTIONAL_SCOPES): string {
  const url = new URL('/oauth/authorize', app.authBaseUrl);
  url.searchParams.set('client_id', app.clientId);
  url.searchParams.set('redirect_uri', callbackUrl(app));
  url.searchParams.set('scope', HUBSPOT_REQUIRED_SCOPES.join(' '));
  if (optionalScopes.length > 0) url.searchParams.set('optional_scope', optionalScopes.join(' '));
  url.searchParams.set('state', state);
  return url.toString();
}

const AccountDetailsSchema = z.object({ portalId: z.union([z.number(), z.string()]).transform(String) }).loose();

/** The portal a token belongs to: from the token response, or else from account-info. */
async function portalIdFor(apiBaseUrl: string, accessToken: string, hubId: string | number | undefined): Promise<string> {
  if (hubId !== undefined) return String(hubId);
  // Docs: https://developers.hubspot.com/docs/api-reference/latest/account/account-info/get-account-details
  const response = await fetch(hubspotUrl(apiBaseUrl, HUBSPOT_PATHS.accountDetails), {
    headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
    // An API call like the others (HUBSPOT_TIMEOUT_MS), the body included.
    signal: AbortSignal.timeout(outboundTimeouts().hubspotMs),
  });
  if (!response.ok) throw new HubSpotAuthError(`HubSpot account-info answered ${response.status}`, response.status);
  return AccountDetailsSchema.parse(await response.json()).portalId;
}

export interface ConnectResult {
  readonly installation: Installation;
  /** False: the portal was connected already; its credentials were replaced. */
  readonly created: boolean;
  readonly provisioned: ProvisionReport;
}

/** Creates the installation (or renews a connected portal's credentials) and provisions properties. */
export async function connectPortal(options: {
  installations: Installations;
  portalId: string;
  credentials: HubSpotCredentials;
  target: TargetInput;
  environment: Environment;
  existing?: Installation | undefined;
}): Promise<ConnectResult> {
  const { installations } = options;
  let installation: Installation;
  let created = false;
  if (options.existing !== undefined) {
    await installations.updateCrmCredentials(options.existing.id, options.credentials);
    installation = options.existing;
    if (installation.status === 'disabled') {
      // Installations.resume refuses a disabled installation ("connect it again"), and this is that
      // connect: the disable becomes an operator's pause first, which resume then lifts.
      await installations.pause(installation.id);
      installation = await installations.resume(installation.id);
    }
  } else {
    installation = await installations.create({
      provider: HUBSPOT_PROVIDER,
      externalAccountId: options.portalId,
      environment: options.environment,
      target: options.target,
      crmCredentials: options.credentials,
    });
    created = true;
  }
  const api = await hubspotApiFor(installation, installations);
  try {
    return { installation, created, provisioned: await provisionHubSpotProperties(api) };
  } catch (error) {
    // A portal whose properties cannot be made is not connected: nothing half-installed stays behind.
    if (created) await installations.remove(installation.id);
    throw error;
  }
}

/** The OAuth callback's work: code → tokens → portal → installation → properties. */
export async function completeOAuth(options: {
  app: HubSpotAppConfig;
  code: string;
  state: OAuthState;
  installations: Installations;
  findExisting: (portalId: string) => Promise<Installation | undefined>;
  now?: Date;
}): Promise<ConnectResult> {
  const { app } = options;
  const now = options.now ?? new Date();
  const token = await requestToken(app.apiBaseUrl, {
    grant_type: 'authorization_code',
    client_id: app.clientId,
    client_secret: app.clientSecret,
    redirect_uri: callbackUrl(app),
    code: options.code,
  });
  const portalId = await portalIdFor(app.apiBaseUrl, token.access_token, token.hub_id);
  const credentials: HubSpotCredentials = {
    kind: 'oauth',
    accessToken: token.access_token,
    refreshToken: token.refresh_token ?? null,
    expiresAt: new Date(now.getTime() + token.expires_in * 1000).toISOString(),
    clientId: app.clientId,
    clientSecret: app.clientSecret,
    appId: app.appId,
    apiBaseUrl: app.apiBaseUrl,
  };
  return connectPortal({
    installations: options.installations,
    portalId,
    credentials,
    target: options.state.intent.target,
    environment: options.state.intent.environment,
    existing: await options.findExisting(portalId),
  });
}

/** Disconnect: optionally archive our properties in the portal, then forget the installation. */
export async function disconnectPortal(
  installations: Installations,
  installationId: string,
  removeProperties: boolean,
): Promise<{ removedProperties: number }> {
  const installation = await installations.require(installationId);
  if (installation.provider !== HUBSPOT_PROVIDER) throw new HubSpotInstallError(`${installationId} is not a HubSpot installation`);
  let removedProperties = 0;
  if (removeProperties) removedProperties = await removeHubSpotProperties(await hubspotApiFor(installation, installations));
  await installations.remove(installationId);
  return { removedProperties };
}

/** For a static-token connect: check the token works before storing it. */
export async function checkStaticToken(apiBaseUrl: string | undefined, portalId: string, accessToken: string): Promise<void> {
  const api = new HubSpotApi({ portalId, apiBaseUrl: apiBaseUrl ?? DEFAULT_HUBSPOT_API_BASE, accessToken: () => Promise.resolve(accessToken) });
  await api.listContacts(null, ['email'], 1);
}
