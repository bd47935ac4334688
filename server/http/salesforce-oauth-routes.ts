// Salesforce's OAuth install routes: the install link an admin opens (→ Salesforce's authorize URL, production or
// sandbox login) and the callback that connects the org. HTTP only: the work is in connectors/salesforce/install.ts.
import { type ResultPageContent, StateCookie, claimOAuthState, resultPage } from '../../connectors/kit/oauth-install.ts';
import { sendResult } from './send-result.ts';
import express, { type Request, type Response, type Router } from 'express';
import type { SecretBox } from '../../core/secrets/secret-box.ts';
import type { Bridge } from '../../connectors/pipeline/bridge.ts';
import { InstallationError } from '../../connectors/pipeline/installations.ts';
import { SalesforceAuthError, SalesforceUrlError } from '../../connectors/salesforce/auth.ts';
import { SALESFORCE_PROVIDER } from '../../connectors/salesforce/connector.ts';
import {
  type SalesforceAppConfig,
  SalesforceInstallError,
  beginOAuth,
  completeOAuth,
  openInstallLink,
  orgKindFor,
  verifyOAuthState,
} from '../../connectors/salesforce/install.ts';
import { SALESFORCE_EVENTS_ROUTE, SALESFORCE_OAUTH_CALLBACK_ROUTE, SALESFORCE_OAUTH_INSTALL_ROUTE, salesforceOutboundMessagePath } from '../../connectors/salesforce/routes.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';

export interface SalesforceOAuthRouteDeps {
  readonly config: Config;
  readonly bridge: Bridge;
  readonly box: SecretBox;
  readonly logger: Logger;
  readonly now?: () => Date;
}

const stateCookie = new StateCookie('eb_salesforce_oauth', 'salesforce');
export const SALESFORCE_STATE_COOKIE = stateCookie.name;

type PageContent = ResultPageContent;

/** The install pages: the kit's result page (no caching, no referrer, a CSP that allows nothing else). */
function page(res: Response, status: number, content: PageContent): void {
  sendResult(res, resultPage(status, content));
}

/** The app's settings, or null when the server cannot run the install (no client id or no public URL). */
export function salesforceAppConfig(config: Config): SalesforceAppConfig | null {
  const s = config.salesforce;
  if (s.clientId === null || config.publicUrl === null) return null;
  return { clientId: s.clientId, clientSecret: s.clientSecret, loginUrl: s.loginUrl, publicUrl: config.publicUrl, allowAnyHost: config.salesforceAllowAnyHost };
}

function queryString(req: Request, name: string): string | undefined {
  const value = req.query[name];
  return typeof value === 'string' ? value : undefined;
}

const NOT_CONFIGURED: PageContent = {
  title: 'Salesforce install is not configured',
  lines: ['This server has no Salesforce External Client App configured (SALESFORCE_CLIENT_ID and PUBLIC_URL).'],
};

export function salesforceOAuthRouter(deps: SalesforceOAuthRouteDeps): Router {
  const { config, bridge, box, logger } = deps;
  const now = deps.now ?? (() => new Date());
  const router = express.Router();

  router.get(SALESFORCE_OAUTH_INSTALL_ROUTE, (req: Request, res: Response) => {
    const app = salesforceAppConfig(config);
    if (app === null) {
      page(res, 503, NOT_CONFIGURED);
      return;
    }
    const link = queryString(req, 'link') ?? '';
    if (link === '') {
      page(res, 400, { title: 'Install link needed', lines: ['Ask your enrichbridge operator for an install link (enrichbridge salesforce install-link).'] });
      return;
    }
    try {
      const intent = openInstallLink(box, link, now());
      const org = orgKindFor(intent, queryString(req, 'org'));
      const { authorizeUrl, nonce } = beginOAuth(box, app, intent, org, now());
      res.setHeader(
        'Set-Cookie',
        stateCookie.set(nonce, app.publicUrl),
      );
      res.redirect(302, authorizeUrl);
    } catch (error) {
      if (error instanceof SalesforceInstallError) {
        page(res, 400, { title: 'This install link cannot be used', lines: [error.message] });
        return;
      }
      if (error instanceof SalesforceUrlError) {
        // The configured login URL, not the admin's doing.
        logger.error({ err: error }, 'salesforce login URL refused');
        page(res, 503, { title: 'Salesforce install is not configured', lines: ['The configured Salesforce login URL is not a Salesforce host (SALESFORCE_LOGIN_URL).'] });
        return;
      }
      throw error;
    }
  });

  router.get(SALESFORCE_OAUTH_CALLBACK_ROUTE, async (req: Request, res: Response) => {
    const app = salesforceAppConfig(config);
    if (app === null) {
      page(res, 503, NOT_CONFIGURED);
      return;
    }
    const denied = queryString(req, 'error');
    if (denied !== undefined) {
      page(res, 400, { title: 'Salesforce did not grant access', lines: [`Salesforce said: ${denied}. Nothing was installed.`] });
      return;
    }
    const code = queryString(req, 'code') ?? '';
    const sealed = queryString(req, 'state') ?? '';
    if (code === '' || sealed === '') {
      page(res, 400, { title: 'Incomplete callback', lines: ['The callback is missing its code or state. Start the install again.'] });
      return;
    }
    try {
      const state = verifyOAuthState(box, sealed, stateCookie.read(req.headers.cookie), now());
      if (!(await claimOAuthState(bridge.pipelineStore, state.nonce))) {
        page(res, 400, { title: 'This install was already completed', lines: ['This sign-in link has been used for an install already. Start the install again from your install link.'] });
        return;
      }
      const result = await completeOAuth({
        app,
        code,
        state,
        installations: bridge.installations,
        findExisting: (orgId) => bridge.pipelineStore.findInstallationByAccount(SALESFORCE_PROVIDER, orgId),
      });
      res.setHeader('Set-Cookie', stateCookie.clear(app.publicUrl));
      const { installation } = result;
      logger.info({ installation: installation.id, org: installation.externalAccountId, created: result.created }, 'salesforce connected');
      const lines = [
        `Org ${installation.externalAccountId} (${result.instanceUrl}, a Salesforce ${state.org} org) ${
          result.created ? 'is now connected' : 'was connected already; its access was renewed'
        } (installation ${installation.id}, ${installation.environment} environment).`,
      ];
      if (!result.created && installation.environment !== state.intent.environment) {
        lines.push(
          `This install link named the ${state.intent.environment} environment, but the org stays connected to ${installation.environment}: ask your operator to disconnect it first to move it.`,
        );
      }
      lines.push(
        `Outbound messages from this org go to ${app.publicUrl}${salesforceOutboundMessagePath(await bridge.installations.outboundSecret(installation.id))}: put it in the endpointUrl of the two workflows (it replaces https://YOUR_PUBLIC_HOST/webhooks/salesforce/outbound-message/YOUR_OUTBOUND_SECRET) and keep it private, since it lets whoever has it send records to enrich.`,
        'Next, deploy the metadata in manifests/salesforce (sf project deploy start --manifest manifest/package.xml): the WF_* fields on Contact and Lead, the permission set, and the record-triggered flows whose outbound messages send new Contacts and Leads here. Assign the Enrichbridge permission set to the integration user. See manifests/salesforce/README.md.',
        installation.settings.enrichOnCreate ? 'New Contacts and Leads are then enriched within seconds.' : 'Automatic enrichment of new records is off for this installation.',
      );
      const content: PageContent =
        result.newWebhookSecret === null
          ? { title: 'enrichbridge is connected to Salesforce', lines: [...lines, 'The signing secret for the JSON callout is unchanged (it was shown when the org was first connected).'] }
          : {
              title: 'enrichbridge is connected to Salesforce',
              lines,
              secret: {
                label: `If you trigger enrichment from Apex or a Flow callout (POST ${SALESFORCE_EVENTS_ROUTE}) instead of outbound messages, this is its signing secret, for the Signing_Secret__c field of the Enrichbridge_Setting__mdt record Default (manifests/salesforce/apex/README.md). It is shown only this once:`,
                value: result.newWebhookSecret,
              },
            };
      page(res, 200, content);
    } catch (error) {
      if (error instanceof SalesforceInstallError) {
        page(res, 400, { title: 'The install could not finish', lines: [error.message, 'Nothing was installed.'] });
        return;
      }
      if (error instanceof SalesforceAuthError && error.oauthError !== null && error.status !== null && error.status < 500) {
        // A code refused (used already, expired, or for another redirect URI): starting again gets a new one.
        logger.warn({ status: error.status, oauth_error: error.oauthError }, 'salesforce refused the authorization code');
        page(res, 400, {
          title: 'The install could not finish',
          lines: [`Salesforce refused the authorization code (${error.oauthError}). Nothing was installed; start the install again.`],
        });
        return;
      }
      if (error instanceof SalesforceUrlError) {
        logger.error({ err: error }, 'salesforce token answer named a host that is not Salesforce');
        page(res, 502, {
          title: 'The install could not finish',
          lines: ['Salesforce answered with an instance URL that is not a Salesforce host. Nothing was installed.'],
        });
        return;
      }
      if (error instanceof InstallationError) {
        // The link's target cannot take the org (its account is gone, its remote URL is not usable).
        page(res, 400, { title: 'The install could not finish', lines: [error.message, 'Nothing was installed; ask your operator for a new install link.'] });
        return;
      }
      logger.error({ err: error }, 'salesforce install failed');
      page(res, 502, { title: 'The install could not finish', lines: ['Salesforce could not be reached or refused the request. Nothing was installed; try again.'] });
    }
  });

  return router;
}
