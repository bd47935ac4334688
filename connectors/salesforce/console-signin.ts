// A Salesforce user's sign-in to the console (ConsoleSignIn, bridge/crm-module.ts): the
// External Client App's web-server flow with PKCE, with the install's redirect URI and only the `api`
// scope (no refresh token), then code → token → the org and user from the token's identity URL →
// whether the user holds Modify All Data or Customize Application, read from the user's own effective
// permissions (UserPermissionAccess). The token answers that one query and is dropped.
import { z } from 'zod';
import { outboundTimeouts } from '../../core/client/timeouts.ts';
import { ConsoleSignInRefusal } from '../kit/console-signin.ts';
import type { ConsoleSignIn, ConsoleSignInResult } from '../../bridge/crm-module.ts';
import { type SalesforceGrant, SalesforceAuthError, SalesforceUrlError, authorizationUrl, checkInstanceUrl, createPkceVerifier, exchangeCode } from './auth.ts';
import { toSalesforceId18 } from './ids.ts';
import { type SalesforceAppSettings, type SalesforceOrgKind, SALESFORCE_ORG_KINDS, callbackUrl, loginUrlFor, salesforceAppConfig } from './install.ts';
import { SALESFORCE_API_VERSION } from './version.ts';

/** The system permissions that make a Salesforce admin here: either one (the System Administrator profile has both). */
export const SALESFORCE_ADMIN_PERMISSIONS = ['Modify All Data', 'Customize Application'] as const;
/** The sign-in asks for the REST API only: no refresh token, nothing that outlives the check. */
export const SALESFORCE_SIGN_IN_SCOPE = 'api';
/**
 * The running user's effective system permissions (profile, permission sets and groups), readable by
 * any API user, View Setup or not (API 41.0 and later), where PermissionSetAssignment needs View Setup
 * and Configuration to be read at all. No id in it: nothing to interpolate.
 */
export const ADMIN_PERMISSIONS_SOQL = 'SELECT PermissionsModifyAllData, PermissionsCustomizeApplication FROM UserPermissionAccess';

const CarrySchema = z.object({ codeVerifier: z.string().min(43), loginUrl: z.string().min(1), org: z.enum(SALESFORCE_ORG_KINDS) });

const PermissionsSchema = z.object({
  records: z.array(z.object({ PermissionsModifyAllData: z.boolean(), PermissionsCustomizeApplication: z.boolean() }).loose()).length(1),
});
const ErrorsSchema = z.array(z.object({ errorCode: z.string(), message: z.string() }).loose()).min(1);

/** The query's answer, as status and JSON body. */
export interface SalesforceQueryAnswer {
  readonly status: number;
  readonly body: unknown;
}

/**
 * Whether the user who signed in administers the org, from the UserPermissionAccess query's answer. A
 * query Salesforce refuses (4xx with an errorCode) is no admin; a failure (401, 429, 5xx, an answer
 * that does not parse) is thrown, to try again.
 */
export function salesforceVerdict(grant: Pick<SalesforceGrant, 'orgId' | 'userId'>, answer: SalesforceQueryAnswer): ConsoleSignInResult {
  const orgId = toSalesforceId18(grant.orgId);
  if (orgId === null) throw new SalesforceAuthError(`Salesforce named an org id that is not one: ${grant.orgId}`, 200);
  const who = { externalAccountId: orgId, userLabel: `user ${grant.userId}` };
  const needed = SALESFORCE_ADMIN_PERMISSIONS.join(' or ');
  if (answer.status >= 400 && answer.status < 500 && answer.status !== 401 && answer.status !== 429) {
    const errors = ErrorsSchema.safeParse(answer.body);
    const code = errors.success ? errors.data[0]?.errorCode : undefined;
    if (code !== undefined)
      return {
        ...who,
        isAdmin: false,
        reason: `Salesforce would not read this user's permissions (${code}), so whether they hold ${needed} in org ${orgId} cannot be told.`,
      };
  }
  if (answer.status !== 200) throw new SalesforceAuthError(`Salesforce permissions query answered ${answer.status}`, answer.status, null, 'transient');
  const parsed = PermissionsSchema.safeParse(answer.body);
  if (!parsed.success) throw new SalesforceAuthError('Salesforce permissions query answered 200 without one row of permissions', 200, null, 'transient');
  const [row] = parsed.data.records;
  const held = [
    row?.PermissionsModifyAllData === true ? SALESFORCE_ADMIN_PERMISSIONS[0] : null,
    row?.PermissionsCustomizeApplication === true ? SALESFORCE_ADMIN_PERMISSIONS[1] : null,
  ].filter((p) => p !== null);
  return held.length > 0
    ? { ...who, isAdmin: true, reason: `Salesforce ${who.userLabel} holds ${held.join(' and ')} in org ${orgId}.` }
    : { ...who, isAdmin: false, reason: `Salesforce ${who.userLabel} holds neither ${SALESFORCE_ADMIN_PERMISSIONS.join(' nor ')} in org ${orgId}.` };
}

/**
 * The admin query with the sign-in's token, within SALESFORCE_TIMEOUT_MS.
 * Docs: https://developer.salesforce.com/docs/atlas.en-us.object_reference.meta/object_reference/sforce_api_objects_userpermissionaccess.htm
 * and https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/resources_query.htm
 */
async function queryPermissions(instanceUrl: string, accessToken: string): Promise<SalesforceQueryAnswer> {
  const url = `${instanceUrl.replace(/\/+$/, '')}/services/data/v${SALESFORCE_API_VERSION}/query?q=${encodeURIComponent(ADMIN_PERMISSIONS_SOQL)}`;
  const signal = AbortSignal.timeout(outboundTimeouts().salesforceMs);
  try {
    const response = await fetch(url, { headers: { accept: 'application/json', authorization: `Bearer ${accessToken}` }, signal });
    return { status: response.status, body: await response.json().catch(() => null) };
  } catch {
    throw new SalesforceAuthError(`Salesforce permissions query: no answer${signal.aborted ? ' in time' : ''}`, null, null, 'transient');
  }
}

export function salesforceConsoleSignIn(settings: SalesforceAppSettings): ConsoleSignIn {
  const appFor = (publicUrl: string) => {
    const app = salesforceAppConfig(settings, publicUrl);
    if (app === null) throw new ConsoleSignInRefusal('This server has no Salesforce External Client App configured to sign in with.');
    return app;
  };
  return {
    available: (publicUrl) => salesforceAppConfig(settings, publicUrl) !== null,
    choices: [
      { label: 'Sign in with Salesforce', query: {} },
      { label: 'Sign in with a Salesforce sandbox org', query: { org: 'sandbox' } },
    ],
    adminPermission: `${SALESFORCE_ADMIN_PERMISSIONS.join(' or ')} in the Salesforce org`,
    authorizeUrl: ({ publicUrl, query, seal }) => {
      const app = appFor(publicUrl);
      const requested = query.org ?? 'production';
      const org = SALESFORCE_ORG_KINDS.find((kind): kind is SalesforceOrgKind => kind === requested);
      if (org === undefined) throw new ConsoleSignInRefusal('org must be production or sandbox.');
      const loginUrl = checkInstanceUrl(loginUrlFor(app, org), { allowAnyHost: app.allowAnyHost });
      const codeVerifier = createPkceVerifier();
      const state = seal({ codeVerifier, loginUrl, org });
      return authorizationUrl({
        loginUrl,
        clientId: app.clientId,
        redirectUri: callbackUrl(app),
        state,
        codeVerifier,
        scope: SALESFORCE_SIGN_IN_SCOPE,
        allowAnyHost: app.allowAnyHost,
      });
    },
    identify: async ({ publicUrl, code, carry }) => {
      const app = appFor(publicUrl);
      const parsed = CarrySchema.safeParse(carry);
      if (!parsed.success) throw new ConsoleSignInRefusal('This sign-in cannot be completed; sign in again.');
      let grant: SalesforceGrant;
      try {
        // The install's code exchange (PKCE, the same redirect URI); the instance URL is checked before use.
        grant = await exchangeCode({
          loginUrl: parsed.data.loginUrl,
          clientId: app.clientId,
          clientSecret: app.clientSecret,
          redirectUri: callbackUrl(app),
          code,
          codeVerifier: parsed.data.codeVerifier,
          allowAnyHost: app.allowAnyHost,
        });
      } catch (error) {
        if (error instanceof SalesforceAuthError && error.oauthError !== null && error.status !== null && error.status < 500) {
          throw new ConsoleSignInRefusal(`Salesforce refused the sign-in code (${error.oauthError}). Sign in again.`);
        }
        if (error instanceof SalesforceUrlError)
          throw new SalesforceAuthError('Salesforce answered with an instance URL that is not a Salesforce host', 200, null, 'transient');
        throw error;
      }
      return salesforceVerdict(grant, await queryPermissions(grant.instanceUrl, grant.accessToken));
    },
  };
}
