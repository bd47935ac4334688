// The routes the contact record card (manifests/hubspot/src/app/cards/) calls through hubspot.fetch:
// the record view (GET) and the record actions (POST enrich, undo, exclude, include), answered as JSON.
//
// Who is asking comes only from what HubSpot vouches for. hubspot.fetch signs each request with the v3
// signature (the app's client secret over the method, the full URL with its query, the raw body and the
// timestamp, within 5 minutes), and appends `portalId`, `userId`, `userEmail` and `appId` to the query
// before signing. So the signature is checked first, over PUBLIC_URL plus the path and query as received;
// then the portal, the user and the app are read from that signed query, each at most once and never
// empty: a card (or anyone) that put its own `portalId` in the URL gets a second one appended by HubSpot
// and is refused. The installation is the signed portal's; a contact is read through that installation
// only, so a portal never sees or changes another portal's contacts.
//
// HubSpot's proxy turns a 3xx-5xx answer into its own error, so every answer the card should read is a
// 200 with `ok` and, when refused, a `reason` code and a message; only a request HubSpot did not sign
// (or that cannot be checked) is answered 401 (or 503).
import { z } from 'zod';
import type { CrmRouteContext } from '../../bridge/crm-module.ts';
import { type CrmRequest, type CrmRoute, type HttpResult, jsonResult } from '../../bridge/http.ts';
import type { Actor, CrmValue, Installation, RecordAction } from '../../bridge/model.ts';
import { actorForLog } from '../../bridge/record-actions.ts';
import { CONTACT, HUBSPOT_PROVIDER } from './connector.ts';
import { fieldKeyForHubSpotProperty } from './fields.ts';
import { isHubSpotId } from './ids.ts';
import type { HubSpotAppSettings } from './install.ts';
import { HUBSPOT_CARD_ACTION_ROUTE, HUBSPOT_CARD_ROUTE } from './paths.ts';
import { hubspotRequestUrl, verifyHubSpotRequest } from './signature.ts';

/** An action sends no body and a view our properties' values (about 60, most short); HubSpot's own limit is 1 MB. */
const MAX_BODY_BYTES = 64 * 1024;

/** The path segment of the view from the card's own read of the contact (`POST …/view`). */
export const VIEW_SEGMENT = 'view';

/** What the card read of the contact: our properties by name (others are ignored), as HubSpot gives them. */
const SeenSchema = z.object({
  properties: z.record(z.string().max(100), z.union([z.string().max(65_536), z.number(), z.boolean(), z.null()])).refine((p) => Object.keys(p).length <= 500),
});

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** The path segment of each action and the RecordDesk action it runs. */
export const HUBSPOT_CARD_ACTIONS: Readonly<Record<string, RecordAction>> = { enrich: 'enrich_now', undo: 'undo', exclude: 'exclude', include: 'include' };

/** What HubSpot appends to a hubspot.fetch URL (and signs): who asks, from which portal, through which app. */
export interface CardAsker {
  readonly portalId: string;
  readonly userId: string;
  readonly userEmail: string | null;
  readonly appId: string | null;
}

const refusal = (reason: string, message: string, status = 200): HttpResult => jsonResult(status, { ok: false, reason, message });

/**
 * The asker from the signed query: `portalId` and `userId` required, `userEmail` and `appId` optional,
 * each one present at most once and never empty, the ids digits; the refusal's reason otherwise.
 */
export function askerOf(url: string): { ok: true; asker: CardAsker } | { ok: false; reason: string } {
  const query = new URL(url, 'https://placeholder.invalid').searchParams;
  const one = (name: string, required: boolean): { ok: true; value: string | null } | { ok: false } => {
    const values = query.getAll(name);
    if (values.length === 0) return required ? { ok: false } : { ok: true, value: null };
    const [value] = values;
    return values.length === 1 && value !== undefined && value.trim() !== '' ? { ok: true, value } : { ok: false };
  };
  const portalId = one('portalId', true);
  const userId = one('userId', true);
  const userEmail = one('userEmail', false);
  const appId = one('appId', false);
  if (!portalId.ok || !userId.ok || !userEmail.ok || !appId.ok || portalId.value === null || userId.value === null) {
    return { ok: false, reason: 'ambiguous_request_identity' };
  }
  if (!isHubSpotId(portalId.value) || !isHubSpotId(userId.value) || (appId.value !== null && !isHubSpotId(appId.value))) {
    return { ok: false, reason: 'ambiguous_request_identity' };
  }
  return { ok: true, asker: { portalId: portalId.value, userId: userId.value, userEmail: userEmail.value, appId: appId.value } };
}

/** The record card's routes: the view of a contact and its actions. */
export function hubspotCardRoutes(settings: HubSpotAppSettings, context: CrmRouteContext): CrmRoute[] {
  const { bridge, log, publicUrl } = context;
  const now = context.now ?? (() => new Date());

  /** The installation and the asker of a signed request for one contact, or the answer refusing it. */
  async function resolve(
    request: CrmRequest,
    method: 'GET' | 'POST',
  ): Promise<{ ok: true; installation: Installation; recordId: string; actor: Actor } | { ok: false; answer: HttpResult }> {
    const { clientSecret } = settings;
    if (publicUrl === null || clientSecret === null) {
      return {
        ok: false,
        answer: refusal('not_configured', 'PUBLIC_URL or the HubSpot app (HUBSPOT_CLIENT_SECRET) is not configured: requests cannot be verified', 503),
      };
    }
    const url = hubspotRequestUrl(publicUrl, request.url);
    const check = verifyHubSpotRequest({
      clientSecret,
      method,
      url,
      rawBody: request.body,
      headers: request.headers,
      accept: ['v3'],
      now: now().getTime(),
    });
    if (!check.ok) {
      log.warn({ reason: check.reason }, 'hubspot card request refused: signature');
      return { ok: false, answer: refusal('unauthorised', `the request is not signed by HubSpot (${check.reason})`, 401) };
    }
    const asked = askerOf(request.url);
    if (!asked.ok) {
      log.warn({ reason: asked.reason }, 'hubspot card request refused: portal, user or app missing or repeated');
      return { ok: false, answer: refusal(asked.reason, 'The request must carry exactly one portalId and userId, as HubSpot appends them.') };
    }
    const { asker } = asked;
    if (settings.appId !== null && asker.appId !== settings.appId) {
      log.warn({ portal: asker.portalId, app: asker.appId }, 'hubspot card request refused: another app');
      return { ok: false, answer: refusal('other_app', 'The request comes from another HubSpot app.') };
    }
    const recordId = request.params.objectId ?? '';
    if (!isHubSpotId(recordId)) return { ok: false, answer: refusal('record_invalid', 'The contact id must be a HubSpot record id.') };
    const installation = await bridge.pipelineStore.findInstallationByAccount(HUBSPOT_PROVIDER, asker.portalId);
    if (installation === undefined) {
      return { ok: false, answer: refusal('installation_not_found', 'This HubSpot account is not connected to enrichbridge.') };
    }
    return { ok: true, installation, recordId, actor: { userId: asker.userId, email: asker.userEmail } };
  }

  const view: CrmRoute = {
    method: 'GET',
    path: HUBSPOT_CARD_ROUTE,
    handle: async (request) => {
      const resolved = await resolve(request, 'GET');
      if (!resolved.ok) return resolved.answer;
      const result = await bridge.records.view({ installationId: resolved.installation.id, object: CONTACT, recordId: resolved.recordId });
      return result.ok ? jsonResult(200, { ok: true, view: result.view }) : refusal(result.reason, result.message);
    },
  };

  /**
   * POST …/view: the view from the card's own read of our properties (HubSpot's
   * fetchCrmObjectProperties, in the body HubSpot signs), so showing a record costs no call on the
   * portal's API budget: a card's GET would read the contact through the portal's pacer, and 20 cards
   * at once would wait their turn behind each other and the pipeline.
   */
  async function viewAsSeen(request: CrmRequest): Promise<HttpResult> {
    const resolved = await resolve(request, 'POST');
    if (!resolved.ok) return resolved.answer;
    const seen = SeenSchema.safeParse(parseJson(request.body));
    if (!seen.success) return refusal('body_invalid', 'The body must be {"properties": {…}} with the values the card read.');
    const properties: Record<string, CrmValue> = {};
    for (const [name, value] of Object.entries(seen.data.properties)) {
      // Only ours; an empty value is an empty property, as a read through the API gives it.
      if (fieldKeyForHubSpotProperty(name) !== null) properties[name] = value === '' ? null : value;
    }
    const result = await bridge.records.view({ installationId: resolved.installation.id, object: CONTACT, recordId: resolved.recordId }, properties);
    return result.ok ? jsonResult(200, { ok: true, view: result.view }) : refusal(result.reason, result.message);
  }

  const act: CrmRoute = {
    method: 'POST',
    path: HUBSPOT_CARD_ACTION_ROUTE,
    body: { limit: MAX_BODY_BYTES, refuse: (fault) => refusal('body_unreadable', fault.message, fault.status) },
    handle: async (request) => {
      const segment = request.params.action ?? '';
      if (segment === VIEW_SEGMENT) return viewAsSeen(request);
      const action = Object.hasOwn(HUBSPOT_CARD_ACTIONS, segment) ? HUBSPOT_CARD_ACTIONS[segment] : undefined;
      if (action === undefined) return refusal('unknown_action', `no record action ${segment}: enrich, undo, exclude or include`, 404);
      const resolved = await resolve(request, 'POST');
      if (!resolved.ok) return resolved.answer;
      const { installation, recordId, actor } = resolved;
      const ref = { installationId: installation.id, object: CONTACT, recordId };
      const result = await bridge.records.take(action, ref, actor);
      if (result.ok && action === 'enrich_now') context.wake();
      log.info(
        {
          installation: installation.id,
          object: CONTACT,
          record: recordId,
          action,
          ok: result.ok,
          ...(result.ok ? {} : { reason: result.reason }),
          actor: actorForLog(actor),
        },
        'hubspot card action',
      );
      return jsonResult(200, result);
    },
  };

  return [view, act];
}
