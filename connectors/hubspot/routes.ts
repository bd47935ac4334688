// HubSpot's routes table: the paths HubSpot and admins call on us (paths.ts) and the handler of each,
// answering as data. server/http mounts them with every other module's (crm-routes.ts).
import type { CrmRouteContext } from '../../bridge/crm-module.ts';
import type { Installation } from '../../bridge/model.ts';
import { type CrmRoute, type HttpResult, jsonResult, refuseAsJson } from '../../bridge/http.ts';
import { type ResultPageContent, StateCookie } from '../kit/oauth-install.ts';
import { oauthInstallRoutes } from '../kit/oauth-routes.ts';
import { ActionCallbacks, type ActionRequestDeps, acceptActionRequest } from './action.ts';
import { HubSpotCredentialsCache } from './auth.ts';
import { HUBSPOT_PROVIDER } from './connector.ts';
import {
  type ConnectResult,
  type HubSpotAppConfig,
  type HubSpotAppSettings,
  HubSpotInstallError,
  type OAuthState,
  authorizeUrl,
  beginOAuth,
  completeOAuth,
  hubspotAppConfig,
  openInstallLink,
  verifyOAuthState,
} from './install.ts';
import { hubspotCardRoutes } from './card-routes.ts';
import { type HubSpotWebhookDeps, acceptWebhookBatch } from './intake.ts';
import { hubspotRequestUrl } from './signature.ts';
import { HUBSPOT_ENRICH_ACTION_ROUTE, HUBSPOT_OAUTH_CALLBACK_ROUTE, HUBSPOT_OAUTH_INSTALL_ROUTE, HUBSPOT_WEBHOOK_ROUTE } from './paths.ts';

/** HubSpot's batches are up to 100 events of a few hundred bytes each. */
const WEBHOOK_BODY_LIMIT = 1024 * 1024;
/** One action request: a contact id and the workflow's inputs. */
const ACTION_BODY_LIMIT = 256 * 1024;

const notVerifiable = (what: string): HttpResult => jsonResult(503, { message: `PUBLIC_URL is not configured; ${what} signatures cannot be verified` });

/** HubSpot's routes table: the OAuth install, the webhook batches, the workflow action and the record card's routes. */
export function hubspotRoutes(settings: HubSpotAppSettings, context: CrmRouteContext): CrmRoute[] {
  const { bridge, box, log, publicUrl } = context;
  const now = context.now ?? (() => new Date());
  const credentials = new HubSpotCredentialsCache(bridge.installations);
  // Portal → installation for a second: HubSpot sends up to 10 batches at once per portal, and each
  // needs the installation before anything else. A disconnect or a disable is seen within a second.
  const installationsByPortal = new Map<string, { at: number; installation: Installation | undefined }>();
  const cachedInstallationOf = async (portalId: string): Promise<Installation | undefined> => {
    const cached = installationsByPortal.get(portalId);
    if (cached !== undefined && Date.now() - cached.at < 1_000) return cached.installation;
    const installation = await bridge.pipelineStore.findInstallationByAccount(HUBSPOT_PROVIDER, portalId);
    if (installationsByPortal.size >= 10_000) installationsByPortal.clear();
    installationsByPortal.set(portalId, { at: Date.now(), installation });
    return installation;
  };
  const webhookIntake: HubSpotWebhookDeps = {
    appClientSecret: settings.clientSecret,
    installationOf: cachedInstallationOf,
    credentialsOf: (installation) => credentials.get(installation),
    store: bridge.pipelineStore,
    queue: context.queue,
    wake: context.wake,
    onForeignPortals: (portals) => log.warn({ portals }, "hubspot webhook batch carried events of portals its signature's secret does not verify: dropped"),
    onError: (error) => log.error({ err: error }, 'hubspot webhook batch could not be queued'),
  };
  const actionIntake: ActionRequestDeps = {
    appClientSecret: settings.clientSecret,
    installationOf: (portalId) => bridge.pipelineStore.findInstallationByAccount(HUBSPOT_PROVIDER, portalId),
    credentialsOf: (installation) => credentials.get(installation),
    queue: context.queue,
    wake: context.wake,
    callbacks: new ActionCallbacks(bridge.requestAnswers),
    onError: (error) => log.error({ err: error }, 'hubspot workflow action could not be queued'),
  };

  const install = oauthInstallRoutes<HubSpotAppConfig, OAuthState>({
    provider: HUBSPOT_PROVIDER,
    crmName: 'HubSpot',
    routes: { install: HUBSPOT_OAUTH_INSTALL_ROUTE, callback: HUBSPOT_OAUTH_CALLBACK_ROUTE },
    cookie: new StateCookie('eb_hubspot_oauth', HUBSPOT_PROVIDER),
    linkCommand: 'enrichbridge hubspot install-link',
    app: () => hubspotAppConfig(settings, publicUrl),
    notConfigured: {
      title: 'HubSpot install is not configured',
      lines: ['This server has no HubSpot app configured (HUBSPOT_CLIENT_ID, HUBSPOT_CLIENT_SECRET, HUBSPOT_APP_ID and PUBLIC_URL).'],
    },
    installError: HubSpotInstallError,
    begin: (app, link, _query, at) => {
      const { state, nonce } = beginOAuth(box, openInstallLink(box, link, at), at);
      return { authorizeUrl: authorizeUrl(app, state), nonce };
    },
    verify: (sealed, cookieNonce, at) => verifyOAuthState(box, sealed, cookieNonce, at),
    complete: async (app, code, state, at) => {
      const result = await completeOAuth({
        app,
        code,
        state,
        installations: bridge.installations,
        findExisting: (portalId) => bridge.pipelineStore.findInstallationByAccount(HUBSPOT_PROVIDER, portalId),
        now: at,
      });
      log.info({ installation: result.installation.id, portal: result.installation.externalAccountId, created: result.created }, 'hubspot connected');
      return connectedPage(result);
    },
    leases: bridge.pipelineStore,
    box,
    log,
    now,
  });

  const webhook: CrmRoute = {
    method: 'POST',
    path: HUBSPOT_WEBHOOK_ROUTE,
    body: { limit: WEBHOOK_BODY_LIMIT, refuse: refuseAsJson },
    handle: async (request) => {
      // Without the public URL the signature cannot be checked: refuse rather than trust.
      if (publicUrl === null) return notVerifiable('webhook');
      const answer = await acceptWebhookBatch(
        request.body,
        { url: hubspotRequestUrl(publicUrl, request.url), headers: request.headers, now: now().getTime() },
        webhookIntake,
      );
      return jsonResult(answer.status, answer.body);
    },
  };

  const action: CrmRoute = {
    method: 'POST',
    path: HUBSPOT_ENRICH_ACTION_ROUTE,
    body: { limit: ACTION_BODY_LIMIT, refuse: refuseAsJson },
    handle: (request) => {
      if (publicUrl === null) return notVerifiable('request');
      return acceptActionRequest(
        request.body,
        { url: hubspotRequestUrl(publicUrl, request.url), headers: request.headers, now: now().getTime() },
        actionIntake,
      );
    },
  };

  return [...install, webhook, action, ...hubspotCardRoutes(settings, context)];
}

/** What the admin reads once the portal is connected. */
function connectedPage(result: ConnectResult): ResultPageContent {
  const p = result.provisioned;
  const { installation } = result;
  return {
    title: 'enrichbridge is connected to HubSpot',
    lines: [
      `Portal ${installation.externalAccountId} ${result.created ? 'is now connected' : 'was connected already; its access was renewed'} (installation ${installation.id}, ${installation.environment}).`,
      `Contact properties in the "Windfall enrichment" group: ${p.created.length} created, ${p.updated.length} updated, ${p.unchanged.length} already in place${p.conflicting.length > 0 ? `, ${p.conflicting.length} left alone because a property of that name has another type (${p.conflicting.join(', ')})` : ''}.`,
      installation.settings.enrichOnCreate
        ? 'New contacts are enriched automatically within seconds. Existing contacts can be backfilled by your operator.'
        : 'Automatic enrichment of new contacts is off for this installation.',
    ],
  };
}
