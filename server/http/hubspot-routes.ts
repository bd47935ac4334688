// HubSpot's routes: the OAuth install and callback an admin goes through, and the webhook HubSpot
// calls with batches of contact events. HTTP only: the work is in connectors/hubspot/.
import { StateCookie, claimOAuthState, resultPage } from '../../connectors/kit/oauth-install.ts';
import { sendResult } from './send-result.ts';
import express, { type Request, type Response, type Router } from 'express';
import type { JobQueue } from '../../connectors/pipeline/job-queue.ts';
import type { SecretBox } from '../../core/secrets/secret-box.ts';
import type { Bridge } from '../../connectors/pipeline/bridge.ts';
import type { Installation } from '../../connectors/pipeline/model.ts';
import { HubSpotCredentialsCache } from '../../connectors/hubspot/auth.ts';
import { HUBSPOT_PROVIDER } from '../../connectors/hubspot/connector.ts';
import {
  type HubSpotAppConfig,
  HubSpotInstallError,
  authorizeUrl,
  beginOAuth,
  completeOAuth,
  openInstallLink,
  verifyOAuthState,
} from '../../connectors/hubspot/install.ts';
import { HUBSPOT_OAUTH_CALLBACK_ROUTE, HUBSPOT_OAUTH_INSTALL_ROUTE, HUBSPOT_WEBHOOK_ROUTE } from '../../connectors/hubspot/routes.ts';
import { hubspotRequestUrl } from '../../connectors/hubspot/signature.ts';
import { type HubSpotWebhookDeps, acceptWebhookBatch } from '../../connectors/hubspot/intake.ts';
import { readBody } from './body.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';

export interface HubSpotRouteDeps {
  readonly config: Config;
  readonly bridge: Bridge;
  readonly queue: JobQueue;
  readonly box: SecretBox;
  readonly logger: Logger;
  /** Nudges the in-process workers after an enqueue. */
  readonly wake: () => void;
  readonly now?: () => Date;
}

const stateCookie = new StateCookie('eb_hubspot_oauth', 'hubspot');
/** HubSpot's batches are up to 100 events of a few hundred bytes each. */
const WEBHOOK_BODY_LIMIT = '1mb';

/** The install pages: the kit's result page (no caching, no referrer, a CSP that allows nothing else). */
function page(res: Response, status: number, title: string, lines: string[]): void {
  sendResult(res, resultPage(status, { title, lines }));
}

function appConfig(config: Config): HubSpotAppConfig | null {
  const h = config.hubspot;
  if (h.clientId === null || h.clientSecret === null || h.appId === null || config.publicUrl === null) return null;
  return { clientId: h.clientId, clientSecret: h.clientSecret, appId: h.appId, apiBaseUrl: h.apiBaseUrl, authBaseUrl: h.authBaseUrl, publicUrl: config.publicUrl };
}

export function hubspotRouter(deps: HubSpotRouteDeps): Router {
  const { config, bridge, box, logger } = deps;
  const now = deps.now ?? (() => new Date());
  const router = express.Router();
  const raw = readBody({ limit: WEBHOOK_BODY_LIMIT });
  const credentialsCache = new HubSpotCredentialsCache(bridge.installations);
  // Portal → installation for a second: HubSpot sends up to 10 batches at once per portal, and each
  // needs the installation before anything else. A disconnect or a disable is seen within a second.
  const installationsByPortal = new Map<string, { at: number; installation: Installation | undefined }>();
  const installationOf = async (portalId: string): Promise<Installation | undefined> => {
    const cached = installationsByPortal.get(portalId);
    if (cached !== undefined && Date.now() - cached.at < 1_000) return cached.installation;
    const installation = await bridge.pipelineStore.findInstallationByAccount(HUBSPOT_PROVIDER, portalId);
    if (installationsByPortal.size >= 10_000) installationsByPortal.clear();
    installationsByPortal.set(portalId, { at: Date.now(), installation });
    return installation;
  };

  const intake: HubSpotWebhookDeps = {
    appClientSecret: config.hubspot.clientSecret,
    installationOf,
    credentialsOf: (installation) => credentialsCache.get(installation),
    store: bridge.pipelineStore,
    queue: deps.queue,
    wake: deps.wake,
    onForeignPortals: (portals) => logger.warn({ portals }, "hubspot webhook batch carried events of portals its signature's secret does not verify: dropped"),
    onError: (error) => logger.error({ err: error }, 'hubspot webhook batch could not be queued'),
  };

  router.get(HUBSPOT_OAUTH_INSTALL_ROUTE, (req: Request, res: Response) => {
    const app = appConfig(config);
    if (app === null) {
      page(res, 503, 'HubSpot install is not configured', [
        'This server has no HubSpot app configured (HUBSPOT_CLIENT_ID, HUBSPOT_CLIENT_SECRET, HUBSPOT_APP_ID and PUBLIC_URL).',
      ]);
      return;
    }
    const link = typeof req.query.link === 'string' ? req.query.link : '';
    if (link === '') {
      page(res, 400, 'Install link needed', ['Ask your enrichbridge operator for an install link (enrichbridge hubspot install-link).']);
      return;
    }
    try {
      const intent = openInstallLink(box, link, now());
      const { state, nonce } = beginOAuth(box, intent, now());
      res.setHeader(
        'Set-Cookie',
        stateCookie.set(nonce, app.publicUrl),
      );
      res.redirect(302, authorizeUrl(app, state));
    } catch (error) {
      if (!(error instanceof HubSpotInstallError)) throw error;
      page(res, 400, 'This install link cannot be used', [error.message]);
    }
  });

  router.get(HUBSPOT_OAUTH_CALLBACK_ROUTE, async (req: Request, res: Response) => {
    const app = appConfig(config);
    if (app === null) {
      page(res, 503, 'HubSpot install is not configured', ['This server has no HubSpot app configured.']);
      return;
    }
    if (typeof req.query.error === 'string') {
      page(res, 400, 'HubSpot did not grant access', [`HubSpot said: ${req.query.error}. Nothing was installed.`]);
      return;
    }
    const code = typeof req.query.code === 'string' ? req.query.code : '';
    const sealed = typeof req.query.state === 'string' ? req.query.state : '';
    if (code === '' || sealed === '') {
      page(res, 400, 'Incomplete callback', ['The callback is missing its code or state. Start the install again.']);
      return;
    }
    try {
      const state = verifyOAuthState(box, sealed, stateCookie.read(req.headers.cookie), now());
      if (!(await claimOAuthState(bridge.pipelineStore, state.nonce))) {
        page(res, 400, 'This install was already completed', ['This sign-in link has been used for an install already. Start the install again from your install link.']);
        return;
      }
      const result = await completeOAuth({
        app,
        code,
        state,
        installations: bridge.installations,
        findExisting: (portalId) => bridge.pipelineStore.findInstallationByAccount(HUBSPOT_PROVIDER, portalId),
        now: now(),
      });
      res.setHeader('Set-Cookie', stateCookie.clear(app.publicUrl));
      const p = result.provisioned;
      logger.info({ installation: result.installation.id, portal: result.installation.externalAccountId, created: result.created }, 'hubspot connected');
      page(res, 200, 'enrichbridge is connected to HubSpot', [
        `Portal ${result.installation.externalAccountId} ${result.created ? 'is now connected' : 'was connected already; its access was renewed'} (installation ${result.installation.id}, ${result.installation.environment}).`,
        `Contact properties in the "Windfall enrichment" group: ${p.created.length} created, ${p.updated.length} updated, ${p.unchanged.length} already in place${p.conflicting.length > 0 ? `, ${p.conflicting.length} left alone because a property of that name has another type (${p.conflicting.join(', ')})` : ''}.`,
        result.installation.settings.enrichOnCreate
          ? 'New contacts are enriched automatically within seconds. Existing contacts can be backfilled by your operator.'
          : 'Automatic enrichment of new contacts is off for this installation.',
      ]);
    } catch (error) {
      if (error instanceof HubSpotInstallError) {
        page(res, 400, 'The install could not finish', [error.message]);
        return;
      }
      logger.error({ err: error }, 'hubspot install failed');
      page(res, 502, 'The install could not finish', ['HubSpot could not be reached or refused the request. Nothing was installed; try again.']);
    }
  });

  router.post(HUBSPOT_WEBHOOK_ROUTE, raw, async (req: Request, res: Response) => {
    if (config.publicUrl === null) {
      // Without the public URL the signature cannot be checked: refuse rather than trust.
      res.status(503).json({ message: 'PUBLIC_URL is not configured; webhook signatures cannot be verified' });
      return;
    }
    const body: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const answer = await acceptWebhookBatch(body, { url: hubspotRequestUrl(config.publicUrl, req.originalUrl), headers: req.headers, now: now().getTime() }, intake);
    res.status(answer.status).json(answer.body);
  });

  return router;
}
