// A HubSpot user's sign-in to the console (ConsoleSignIn, bridge/crm-module.ts): the public
// app's authorize URL with the install's redirect URI and the sign-in's optional scope, then code → token
// → who signed in and for which portal (token introspection) → whether HubSpot calls them a Super Admin
// of that portal (the user provisioning API). The token answers these two calls and is dropped.
import { z } from 'zod';
import { outboundTimeouts } from '../../core/client/timeouts.ts';
import { ConsoleSignInRefusal } from '../kit/console-signin.ts';
import type { ConsoleSignIn, ConsoleSignInResult } from '../../bridge/crm-module.ts';
import { HubSpotAuthError, postOAuthForm, requestToken } from './auth.ts';
import { hubspotUrl } from './api.ts';
import { HUBSPOT_PATHS } from './version.ts';
import { type HubSpotAppSettings, authorizeUrl, callbackUrl, hubspotAppConfig } from './install.ts';
import { HUBSPOT_OPTIONAL_SCOPES, HUBSPOT_SIGN_IN_SCOPES } from './scopes.ts';

/** What HubSpot calls a portal's admin: a user with every permission, who alone may manage apps and users. */
export const HUBSPOT_ADMIN_PERMISSION = 'Super Admin';
const USERS_READ: (typeof HUBSPOT_SIGN_IN_SCOPES)[number] = 'settings.users.read';

const NumericId = z.union([z.number().int().nonnegative(), z.string().regex(/^\d+$/)]).transform(String);

/**
 * Token introspection's answer for an access token (`PublicAccessTokenInfoResponse`): whether it is
 * active, the portal, the user who authorized, the scopes granted. The 2026-09 document names only the
 * base (`active`); both versions answer from one implementation, whose fields the 2026-03 document lists.
 */
const TokenInfoSchema = z
  .object({
    active: z.literal(true),
    hub_id: NumericId,
    user_id: NumericId,
    /** The authorizing user's name (their e-mail address, in HubSpot's answers on record); optional. */
    user: z.string().min(1).optional(),
    scopes: z.array(z.string()).default([]),
  })
  .loose();
export type HubSpotTokenInfo = z.infer<typeof TokenInfoSchema>;

/** `GET /settings/users/{version}/{userId}` (`PublicUser`): the user, their e-mail address, and `superAdmin`. */
const UserSchema = z.object({ id: NumericId, email: z.string().optional(), superAdmin: z.boolean().optional() }).loose();

/** The token's metadata, parsed; a HubSpotAuthError when it is not what HubSpot documents. */
export function parseTokenInfo(body: unknown): HubSpotTokenInfo {
  const parsed = TokenInfoSchema.safeParse(body);
  if (!parsed.success) throw new HubSpotAuthError('HubSpot token introspection without an active token, a portal and a user', 200, 'transient');
  return parsed.data;
}

/** The users API's answer about the user who signed in; null when the token was not granted its scope. */
export type HubSpotUserAnswer = { readonly status: number; readonly body: unknown } | null;

/**
 * Whether the user who signed in administers the portal, from the users API's answer: a Super Admin
 * only. A refusal by HubSpot to say (no scope, 403, no such user) is no admin; a failure (429, 5xx,
 * an answer that does not parse) is thrown, to try again.
 */
export function hubspotVerdict(info: HubSpotTokenInfo, answer: HubSpotUserAnswer): ConsoleSignInResult {
  const label = info.user ?? `user ${info.user_id}`;
  const who = { externalAccountId: info.hub_id, userLabel: label };
  const cannotTell = `so whether ${label} is a ${HUBSPOT_ADMIN_PERMISSION} of portal ${info.hub_id} cannot be told`;
  if (answer === null) {
    return { ...who, isAdmin: false, reason: `HubSpot did not grant this sign-in the ${USERS_READ} scope, ${cannotTell}.` };
  }
  if (answer.status === 403) return { ...who, isAdmin: false, reason: `HubSpot refused to read the user (${USERS_READ}), ${cannotTell}.` };
  if (answer.status === 404) return { ...who, isAdmin: false, reason: `HubSpot has no user ${info.user_id} in portal ${info.hub_id}.` };
  if (answer.status !== 200) throw new HubSpotAuthError(`HubSpot users API answered ${answer.status}`, answer.status, 'transient');
  const user = UserSchema.safeParse(answer.body);
  if (!user.success) throw new HubSpotAuthError('HubSpot users API answered 200 without a user', 200, 'transient');
  if (user.data.id !== info.user_id) throw new HubSpotAuthError('HubSpot users API answered with another user', 200, 'transient');
  const named = { ...who, userLabel: info.user ?? user.data.email ?? label };
  return user.data.superAdmin === true
    ? { ...named, isAdmin: true, reason: `${named.userLabel} is a ${HUBSPOT_ADMIN_PERMISSION} of portal ${info.hub_id}.` }
    : { ...named, isAdmin: false, reason: `${named.userLabel} is not a ${HUBSPOT_ADMIN_PERMISSION} of portal ${info.hub_id}.` };
}

/** A GET to HubSpot with the sign-in's token: its status and JSON body, within HUBSPOT_TIMEOUT_MS. */
async function getJson(url: URL, what: string, bearer: string): Promise<{ status: number; body: unknown }> {
  const signal = AbortSignal.timeout(outboundTimeouts().hubspotMs);
  try {
    const response = await fetch(url, { headers: { accept: 'application/json', authorization: `Bearer ${bearer}` }, signal });
    return { status: response.status, body: await response.json().catch(() => null) };
  } catch {
    // Neither the address (it can hold the token) nor the cause goes into the error.
    throw new HubSpotAuthError(`HubSpot ${what}: no answer${signal.aborted ? ' in time' : ''}`, null, 'transient');
  }
}

export function hubspotConsoleSignIn(settings: HubSpotAppSettings): ConsoleSignIn {
  const appFor = (publicUrl: string) => {
    const app = hubspotAppConfig(settings, publicUrl);
    if (app === null) throw new ConsoleSignInRefusal('This server has no HubSpot app configured to sign in with.');
    return app;
  };
  return {
    available: (publicUrl) => hubspotAppConfig(settings, publicUrl) !== null,
    choices: [{ label: 'Sign in with HubSpot', query: {} }],
    adminPermission: `${HUBSPOT_ADMIN_PERMISSION} rights in the HubSpot portal`,
    authorizeUrl: ({ publicUrl, seal }) => authorizeUrl(appFor(publicUrl), seal({}), [...HUBSPOT_OPTIONAL_SCOPES, ...HUBSPOT_SIGN_IN_SCOPES]),
    identify: async ({ publicUrl, code }) => {
      const app = appFor(publicUrl);
      let accessToken: string;
      try {
        // The install's code exchange, with the same redirect URI.
        ({ access_token: accessToken } = await requestToken(app.apiBaseUrl, {
          grant_type: 'authorization_code',
          client_id: app.clientId,
          client_secret: app.clientSecret,
          redirect_uri: callbackUrl(app),
          code,
        }));
      } catch (error) {
        if (error instanceof HubSpotAuthError && error.status !== null && error.status >= 400 && error.status < 500 && error.status !== 429) {
          throw new ConsoleSignInRefusal('HubSpot refused the sign-in code (it was used already, or has expired). Sign in again.');
        }
        throw error;
      }
      // The token goes in the form body, with the app's credentials, never in a URL.
      // Docs: https://developers.hubspot.com/docs/api-reference/latest/authentication/oauth-tokens/introspect-oauth-token
      const metadata = await postOAuthForm(app.apiBaseUrl, HUBSPOT_PATHS.introspect, {
        client_id: app.clientId,
        client_secret: app.clientSecret,
        token: accessToken,
        token_type_hint: 'access_token',
      });
      if (metadata.status !== 200) throw new HubSpotAuthError(`HubSpot token introspection answered ${metadata.status}`, metadata.status, 'transient');
      const info = parseTokenInfo(metadata.body);
      if (!info.scopes.includes(USERS_READ)) return hubspotVerdict(info, null);
      // Docs: https://developers.hubspot.com/docs/api-reference/latest/settings/user-provisioning/users/get-user
      return hubspotVerdict(info, await getJson(hubspotUrl(app.apiBaseUrl, HUBSPOT_PATHS.user(info.user_id)), 'users API', accessToken));
    },
  };
}
