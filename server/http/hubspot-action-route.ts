// POST /webhooks/hubspot/actions/enrich: the "Enrich contact" workflow action. HubSpot signs these
// requests with the v2 scheme (and v3 beside it, which we verify when it is there); a callback id is
// acted on once; the answer is the outputs when the contact is settled within 2.5 s,
// else BLOCK, and the pipeline completes the callback.
import express, { type Request, type Response, type Router } from 'express';
import type { JobQueue } from '../../connectors/pipeline/job-queue.ts';
import type { Bridge } from '../../connectors/pipeline/bridge.ts';
import { ActionCallbacks, ActionRequestSchema, acceptAction } from '../../connectors/hubspot/action.ts';
import { HubSpotCredentialsCache } from '../../connectors/hubspot/auth.ts';
import { HUBSPOT_PROVIDER } from '../../connectors/hubspot/connector.ts';
import { HUBSPOT_ENRICH_ACTION_ROUTE } from '../../connectors/hubspot/routes.ts';
import { hubspotRequestUrl, verifyHubSpotRequest } from '../../connectors/hubspot/signature.ts';
import { readBody } from './body.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../logger.ts';

export interface HubSpotActionRouteDeps {
  readonly config: Config;
  readonly bridge: Bridge;
  readonly queue: JobQueue;
  readonly logger: Logger;
  readonly wake: () => void;
  /** Where callback ids are remembered, so a replayed request queues nothing. */
  /** The clock the v3 timestamp window is checked against (tests). */
  readonly now?: () => number;
}

function portalOf(raw: Buffer): string | null {
  try {
    const parsed: unknown = JSON.parse(raw.toString('utf8'));
    const origin = typeof parsed === 'object' && parsed !== null && 'origin' in parsed ? parsed.origin : null;
    const portal = typeof origin === 'object' && origin !== null && 'portalId' in origin ? origin.portalId : null;
    return typeof portal === 'number' || typeof portal === 'string' ? String(portal) : null;
  } catch {
    return null;
  }
}

export function hubspotActionRouter(deps: HubSpotActionRouteDeps): Router {
  const { config, bridge, logger } = deps;
  const router = express.Router();
  const credentialsCache = new HubSpotCredentialsCache(bridge.installations);
  const callbacks = new ActionCallbacks(deps.bridge.requestAnswers);
  const now = deps.now ?? (() => Date.now());
  router.post(HUBSPOT_ENRICH_ACTION_ROUTE, readBody({ limit: '256kb' }), async (req: Request, res: Response) => {
    if (config.publicUrl === null) {
      res.status(503).json({ message: 'PUBLIC_URL is not configured; request signatures cannot be verified' });
      return;
    }
    const body: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const portal = portalOf(body);
    const installation = portal === null ? undefined : await bridge.pipelineStore.findInstallationByAccount(HUBSPOT_PROVIDER, portal);
    const secrets: string[] = config.hubspot.clientSecret === null ? [] : [config.hubspot.clientSecret];
    if (installation !== undefined) {
      const credentials = await credentialsCache.get(installation);
      if (credentials !== null && !secrets.includes(credentials.clientSecret)) secrets.push(credentials.clientSecret);
    }
    const url = hubspotRequestUrl(config.publicUrl, req.originalUrl);
    // v3 (timestamped, so a replay goes stale in 5 minutes) when HubSpot sends it, as it does beside
    // the older versions; otherwise v2, whose replays the callback ids catch.
    if (!secrets.some((clientSecret) => verifyHubSpotRequest({ clientSecret, method: 'POST', url, rawBody: body, headers: req.headers, accept: ['v3', 'v2'], now: now() }).ok)) {
      res.status(401).json({ message: 'invalid or missing HubSpot signature' });
      return;
    }
    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch {
      res.status(400).json({ message: 'the body is not JSON' });
      return;
    }
    const request = ActionRequestSchema.safeParse(json);
    if (!request.success) {
      res.status(400).json({ message: 'not a workflow action request (callbackId, origin.portalId, object.objectId)' });
      return;
    }
    if (installation === undefined || installation.status === 'disabled') {
      res.status(200).json({ outputFields: { hs_execution_state: 'FAIL_CONTINUE' } });
      return;
    }
    try {
      const answer = await acceptAction(request.data, installation, deps.queue, { wake: deps.wake, callbacks });
      res.status(200).json(answer);
    } catch (error) {
      logger.error({ err: error }, 'hubspot workflow action could not be queued');
      res.status(503).json({ message: 'could not queue the enrichment; HubSpot will retry' });
    }
  });
  return router;
}
