// Salesforce's routes table: the OAuth install an admin goes through, the Outbound Messages (SOAP) of
// the record-triggered flows on Contact and Lead creation, the packaged Apex trigger's callout, and the
// signed JSON variant for Apex or Flow callouts, each answering as data. What to accept is decided by
// intake.ts; here, what a refusal costs is kept small (a limit per source address) and the install's
// pages are written.
import { MemoryRateLimiter } from '../../core/limits/rate-limiter.ts';
import type { CrmRouteContext } from '../../bridge/crm-module.ts';
import { InstallationError, openReconnectGrant, reconnectRoute } from '../../bridge/installations.ts';
import { type BodyFault, type CrmRoute, type HttpResult, jsonResult, redirectResult } from '../../bridge/http.ts';
import { type ResultPageContent, StateCookie, resultPage } from '../kit/oauth-install.ts';
import { type Refusal, oauthInstallRoutes } from '../kit/oauth-routes.ts';
import { SalesforceAuthError, SalesforceUrlError } from './auth.ts';
import { SALESFORCE_PROVIDER } from './connector.ts';
import { EVENTS_MAX_BODY_BYTES } from './events.ts';
import {
  type SalesforceAppConfig,
  type SalesforceAppSettings,
  type SalesforceConnectResult,
  SalesforceInstallError,
  type SalesforceOAuthState,
  beginOAuth,
  completeOAuth,
  openInstallLink,
  orgKindFor,
  reconnectLinkFor,
  salesforceAppConfig,
  verifyOAuthState,
} from './install.ts';
import { type IntakeAnswer, type SalesforceIntakeDeps, acceptEvents, acceptOutboundMessage, acceptTriggerCallout } from './intake.ts';
import { recordRoutes } from './record-routes.ts';
import { OUTBOUND_CONTENT_TYPE, OUTBOUND_MESSAGE_MAX_BYTES, SOAP_FAULT_HTTP_STATUS, soapFault } from './outbound-xml.ts';
import {
  SALESFORCE_EVENTS_ROUTE,
  SALESFORCE_OAUTH_CALLBACK_ROUTE,
  SALESFORCE_OAUTH_INSTALL_ROUTE,
  SALESFORCE_OUTBOUND_MESSAGE_ROUTE,
  SALESFORCE_TRIGGER_ROUTE,
  salesforceOutboundMessagePath,
} from './paths.ts';

/** How the outbound-message endpoint is exposed (SALESFORCE_OUTBOUND_LEGACY_PATH, SALESFORCE_OUTBOUND_RATE). */
export interface OutboundSettings {
  /** Accept outbound messages at the bare path, without an installation's secret (default: refused). */
  readonly legacyPath: boolean;
  /** Refused outbound messages per second from one source address before it is turned away unread (default 20). */
  readonly ratePerAddress: number;
}

export const DEFAULT_OUTBOUND_SETTINGS: OutboundSettings = { legacyPath: false, ratePerAddress: 20 };

/** The name of the cookie that binds an install to the browser that started it. */
export const SALESFORCE_STATE_COOKIE = 'eb_salesforce_oauth';

const soapResult = (status: number, body: string, headers: Readonly<Record<string, string>> = {}): HttpResult => ({
  status,
  headers: { ...headers, 'Content-Type': OUTBOUND_CONTENT_TYPE },
  body,
});
const faultResult = (message: string, code: 'Client' | 'Server' = 'Client'): HttpResult => soapResult(SOAP_FAULT_HTTP_STATUS, soapFault(message, code));
const answerOf = (answer: IntakeAnswer): HttpResult => ({ status: answer.status, headers: { 'Content-Type': answer.contentType }, body: answer.body });

/** Salesforce's routes table. */
export function salesforceRoutes(app: SalesforceAppSettings, outbound: OutboundSettings, context: CrmRouteContext): CrmRoute[] {
  return [
    ...installRoutes(app, context),
    reconnectGrantRoute(context),
    ...outboundRoutes(outbound, context),
    eventsRoute(context),
    triggerRoute(context),
    ...recordRoutes(context),
  ];
}

/**
 * The console's Reconnect: its sealed grant (an operator's, for one installation) becomes the OAuth reconnect
 * link, and the browser goes on to the install route with it, then to Salesforce's consent. A grant that is
 * not ours, altered or expired, or an installation with nothing to reconnect, gets a page saying so.
 */
function reconnectGrantRoute(context: CrmRouteContext): CrmRoute {
  const refused = (status: number, line: string): HttpResult => resultPage(status, { title: 'The reconnect cannot start', lines: [line] });
  return {
    method: 'GET',
    path: reconnectRoute(SALESFORCE_PROVIDER),
    handle: async (request) => {
      const at = context.now?.() ?? new Date();
      const installationId = openReconnectGrant(context.box, request.query.grant ?? '', at);
      if (installationId === null) return refused(400, 'This reconnect link is not valid or has expired: ask your operator for a new one.');
      if (context.publicUrl === null) return refused(503, 'This server has no PUBLIC_URL: the Salesforce install is not configured.');
      const installation = await context.bridge.pipelineStore.findInstallation(installationId);
      if (installation?.provider !== SALESFORCE_PROVIDER) return refused(400, 'The installation this link was made for is no longer connected.');
      try {
        const link = await reconnectLinkFor({
          box: context.box,
          installations: context.bridge.installations,
          installation,
          publicUrl: context.publicUrl,
          now: at,
        });
        return redirectResult(link.url);
      } catch (error) {
        if (!(error instanceof InstallationError)) throw error;
        return refused(409, error.message);
      }
    },
  };
}

function intakeDeps(context: CrmRouteContext): SalesforceIntakeDeps {
  return {
    installations: context.bridge.installations,
    store: context.bridge.pipelineStore,
    queue: context.queue,
    deliveries: context.bridge.deliveries,
    wake: context.wake,
    onError: (error, what) => context.log.error({ err: error }, what),
    onNotice: (fields, what) => context.log.warn(fields, what),
    ...(context.now === undefined ? {} : { now: context.now }),
  };
}

/**
 * Outbound messages carry no signature and anyone can post one, so what a refusal costs is kept small:
 * an address refused too often is turned away unread, then the org id is read from the first bytes and
 * the URL's secret checked, and only then is the XML parsed.
 */
function outboundRoutes(settings: OutboundSettings, context: CrmRouteContext): CrmRoute[] {
  const intake = intakeDeps(context);
  const limiter = new MemoryRateLimiter();
  const addressKey = (address: string): string => `outbound-refusals:${address}`;
  // One warning a second at most, with the counts: a flood must not become a flood of log lines.
  const refusals = {
    unknownOrg: 0,
    wrongSecret: 0,
    timer: undefined as NodeJS.Timeout | undefined,
    note(knownOrg: boolean): void {
      if (knownOrg) this.wrongSecret += 1;
      else this.unknownOrg += 1;
      this.timer ??= setTimeout(() => {
        context.log.warn(
          { route: SALESFORCE_OUTBOUND_MESSAGE_ROUTE, unknown_org: this.unknownOrg, wrong_secret: this.wrongSecret },
          'outbound messages refused before parsing in the last second',
        );
        this.unknownOrg = 0;
        this.wrongSecret = 0;
        this.timer = undefined;
      }, 1000).unref();
    },
  };
  const accept: Omit<CrmRoute, 'path'> = {
    method: 'POST',
    // An address whose messages were refused too often in the last second is turned away unread, the
    // connection closed (reading the rest of a large body only to throw it away is the cost a flood is
    // after). Only refusals count: a busy org's genuine messages (and Salesforce's addresses serve many
    // orgs) are never slowed.
    admit: ({ address }) =>
      limiter.peekNow(addressKey(address), settings.ratePerAddress).allowed
        ? undefined
        : {
            ...soapResult(429, soapFault('too many refused outbound messages from this address; Salesforce will retry', 'Server'), { Connection: 'close' }),
            close: true,
          },
    // A little over the parser's own cap, so an oversized message gets its SOAP fault, not a 413.
    body: { limit: OUTBOUND_MESSAGE_MAX_BYTES + 1024, refuse: (fault: BodyFault) => soapResult(fault.status, soapFault(fault.message, 'Client')) },
    handle: async (request) => {
      const answer = await acceptOutboundMessage(request.body, request.params.secret, intake);
      if (answer.refused !== undefined) {
        limiter.takeNow(addressKey(request.address), settings.ratePerAddress);
        if (answer.refused !== 'unreadable') refusals.note(answer.refused === 'wrong_secret');
      }
      return answerOf(answer);
    },
  };
  // One route per path (the request log names a route by its one pattern): the secret's, and the bare
  // path only where an operator keeps it.
  const bare: CrmRoute = settings.legacyPath
    ? { ...accept, path: SALESFORCE_OUTBOUND_MESSAGE_ROUTE }
    : {
        method: 'POST',
        path: SALESFORCE_OUTBOUND_MESSAGE_ROUTE,
        handle: () => ({
          ...faultResult(
            "this endpoint needs the installation's secret in its URL: run `enrichbridge salesforce outbound-url <installation>` and update the outbound messages",
          ),
          status: 404,
        }),
      };
  return [bare, { ...accept, path: `${SALESFORCE_OUTBOUND_MESSAGE_ROUTE}/:secret` }];
}

function eventsRoute(context: CrmRouteContext): CrmRoute {
  const intake = intakeDeps(context);
  return {
    method: 'POST',
    path: SALESFORCE_EVENTS_ROUTE,
    body: { limit: EVENTS_MAX_BODY_BYTES + 1024, refuse: (fault) => jsonResult(fault.status, { message: fault.message }) },
    handle: async (request) => answerOf(await acceptEvents(request.body, request.headers, intake)),
  };
}

/**
 * The packaged trigger's callout. Its refusals stay cheap without a limit per address: the credential is
 * checked (one lookup by id, one hash) before the body is parsed, and the callouts of every subscriber
 * org leave from Salesforce's shared addresses, which a limit would let one misconfigured org block.
 */
function triggerRoute(context: CrmRouteContext): CrmRoute {
  const intake = intakeDeps(context);
  return {
    method: 'POST',
    path: SALESFORCE_TRIGGER_ROUTE,
    body: {
      limit: EVENTS_MAX_BODY_BYTES + 1024,
      refuse: (fault) => jsonResult(fault.status, { ok: false, reason: 'body_unreadable', message: fault.message }),
    },
    // A refusal is not logged here: a flood of wrong credentials must not become a flood of log lines,
    // and the org's own Queueable logs the status and reason it was answered with.
    handle: async (request) => answerOf(await acceptTriggerCallout(request.body, request.headers, intake)),
  };
}

function installRoutes(settings: SalesforceAppSettings, context: CrmRouteContext): CrmRoute[] {
  const { bridge, box, log } = context;
  return oauthInstallRoutes<SalesforceAppConfig, SalesforceOAuthState>({
    provider: SALESFORCE_PROVIDER,
    crmName: 'Salesforce',
    routes: { install: SALESFORCE_OAUTH_INSTALL_ROUTE, callback: SALESFORCE_OAUTH_CALLBACK_ROUTE },
    cookie: new StateCookie(SALESFORCE_STATE_COOKIE, SALESFORCE_PROVIDER),
    linkCommand: 'enrichbridge salesforce install-link',
    app: () => salesforceAppConfig(settings, context.publicUrl),
    notConfigured: {
      title: 'Salesforce install is not configured',
      lines: ['This server has no Salesforce External Client App configured (SALESFORCE_CLIENT_ID and PUBLIC_URL).'],
    },
    installError: SalesforceInstallError,
    begin: (app, link, query, at) => {
      const intent = openInstallLink(box, link, at);
      return beginOAuth(box, app, intent, orgKindFor(intent, query.org), at);
    },
    verify: (sealed, cookieNonce, at) => verifyOAuthState(box, sealed, cookieNonce, at),
    complete: async (app, code, state) => {
      const result = await completeOAuth({
        app,
        code,
        state,
        installations: bridge.installations,
        findExisting: (orgId) => bridge.pipelineStore.findInstallationByAccount(SALESFORCE_PROVIDER, orgId),
      });
      if (result.movedFrom !== undefined) {
        log.info(
          { installation: result.installation.id, org: result.installation.externalAccountId, from_org: result.movedFrom },
          'salesforce reconnected to a new org',
        );
      } else {
        log.info({ installation: result.installation.id, org: result.installation.externalAccountId, created: result.created }, 'salesforce connected');
      }
      return connectedPage(app, state, result, await bridge.installations.outboundSecret(result.installation.id));
    },
    refusal: (error, step) => refusalOf(error, step, log),
    leases: bridge.pipelineStore,
    box,
    log,
    ...(context.now === undefined ? {} : { now: context.now }),
  });
}

/** Salesforce's own errors that deserve a page of their own. */
function refusalOf(error: unknown, step: 'install' | 'callback', log: CrmRouteContext['log']): Refusal | undefined {
  if (error instanceof SalesforceUrlError) {
    if (step === 'install') {
      // The configured login URL, not the admin's doing.
      log.error({ err: error }, 'salesforce login URL refused');
      return {
        status: 503,
        content: {
          title: 'Salesforce install is not configured',
          lines: ['The configured Salesforce login URL is not a Salesforce host (SALESFORCE_LOGIN_URL).'],
        },
      };
    }
    log.error({ err: error }, 'salesforce token answer named a host that is not Salesforce');
    return {
      status: 502,
      content: {
        title: 'The install could not finish',
        lines: ['Salesforce answered with an instance URL that is not a Salesforce host. Nothing was installed.'],
      },
    };
  }
  if (step === 'install') return undefined;
  if (error instanceof SalesforceAuthError && error.oauthError !== null && error.status !== null && error.status < 500) {
    // A code refused (used already, expired, or for another redirect URI): starting again gets a new one.
    log.warn({ status: error.status, oauth_error: error.oauthError }, 'salesforce refused the authorization code');
    return {
      status: 400,
      content: {
        title: 'The install could not finish',
        lines: [`Salesforce refused the authorization code (${error.oauthError}). Nothing was installed; start the install again.`],
      },
    };
  }
  if (error instanceof InstallationError) {
    // The link's target cannot take the org (its account is gone, its remote URL is not usable).
    return {
      status: 400,
      content: { title: 'The install could not finish', lines: [error.message, 'Nothing was installed; ask your operator for a new install link.'] },
    };
  }
  return undefined;
}

/** What the admin reads once the org is connected: where its outbound messages go, what to deploy, the callout's secret once. */
function connectedPage(app: SalesforceAppConfig, state: SalesforceOAuthState, result: SalesforceConnectResult, outboundSecret: string): ResultPageContent {
  const { installation } = result;
  const lines = [
    `Org ${installation.externalAccountId} (${result.instanceUrl}, a Salesforce ${state.org} org) ${
      result.movedFrom !== undefined
        ? `is now connected in place of org ${result.movedFrom}, with the same settings and secrets`
        : result.created
          ? 'is now connected'
          : 'was connected already; its access was renewed'
    } (installation ${installation.id}, ${installation.environment} environment).`,
  ];
  if (state.intent.purpose === 'salesforce-install' && !result.created && installation.environment !== state.intent.environment) {
    lines.push(
      `This install link named the ${state.intent.environment} environment, but the org stays connected to ${installation.environment}: ask your operator to disconnect it first to move it.`,
    );
  }
  lines.push(
    `Outbound messages from this org go to ${app.publicUrl}${salesforceOutboundMessagePath(outboundSecret)}: put it in the endpointUrl of the two workflows (it replaces https://YOUR_PUBLIC_HOST/webhooks/salesforce/outbound-message/YOUR_OUTBOUND_SECRET) and keep it private, since it lets whoever has it send records to enrich.`,
    'Next, deploy the metadata in manifests/salesforce (sf project deploy start --manifest manifest/package.xml): the WF_* fields on Contact and Lead, the permission set, and the record-triggered flows whose outbound messages send new Contacts and Leads here. Assign the Enrichbridge permission set to the integration user. See manifests/salesforce/README.md.',
    `The record component (Windfall enrichment, on Contact and Lead record pages) calls us with this org's own secret, which your operator prints with \`enrichbridge salesforce record-secret ${installation.id}\`: enter it as the OrgSecret authentication parameter of the principal Enrichbridge_Org in the External Credential Enrichbridge_Record, and assign the Enrichbridge_Record_User permission set to its users.`,
    installation.settings.enrichOnCreate
      ? 'New Contacts and Leads are then enriched within seconds.'
      : 'Automatic enrichment of new records is off for this installation.',
  );
  if (result.newWebhookSecret === null) {
    return {
      title: 'enrichbridge is connected to Salesforce',
      lines: [...lines, 'The signing secret for the JSON callout is unchanged (it was shown when the org was first connected).'],
    };
  }
  return {
    title: 'enrichbridge is connected to Salesforce',
    lines,
    secret: {
      label: `If you trigger enrichment from Apex or a Flow callout (POST ${SALESFORCE_EVENTS_ROUTE}) instead of outbound messages, this is its signing secret, for the Signing_Secret__c field of the Enrichbridge_Setting__mdt record Default (manifests/salesforce/apex/README.md). It is shown only this once:`,
      value: result.newWebhookSecret,
    },
  };
}
