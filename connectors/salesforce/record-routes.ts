// The per-record API the Salesforce record component calls through its Apex controller and the Named
// Credential Enrichbridge_Record: the record view (GET) and the record actions (POST), answered as JSON.
//
// Who is asking: the External Credential sends the org's record credential in X-Enrichbridge-Org-Secret,
// `<installation id>.<secret>` (recordCredential). The installation is found from it and its secret
// compared in constant time; a missing, malformed or wrong credential is refused (401) without saying
// which. Then the org id the controller sends (UserInfo.getOrganizationId()) must be that installation's
// org (403 otherwise), so one org's credential never reads or changes another org's records. The user id
// and e-mail it sends are the actor each action is logged with.
import { z } from 'zod';
import type { CrmRouteContext } from '../../bridge/crm-module.ts';
import { type CrmRequest, type CrmRoute, type HttpResult, jsonResult } from '../../bridge/http.ts';
import type { Installation } from '../../bridge/model.ts';
import { type ActionResult, RECORD_UNAVAILABLE, actorForLog } from '../../bridge/record-actions.ts';
import type { Installations } from '../../bridge/installations.ts';
import type { PipelineStore } from '../../bridge/store.ts';
import { type Headers, constantTimeEqual, singleHeader } from '../kit/signature.ts';
import { SALESFORCE_PROVIDER, isSalesforceObject } from './connector.ts';
import { recordIdMatchesObject, toSalesforceId18 } from './ids.ts';
import { SALESFORCE_RECORD_ACTIONS, SALESFORCE_RECORD_ROUTE, SALESFORCE_RECORD_SECRET_HEADER } from './paths.ts';

/** An action's body: who asks, as the org states it. */
const MAX_BODY_BYTES = 4 * 1024;

/** The credential an admin enters in the External Credential: the installation's id, a dot, its record secret. */
export const recordCredential = (installationId: string, secret: string): string => `${installationId}.${secret}`;

/** The installation id and secret of a credential; null when it is not of that shape. */
export function parseRecordCredential(value: string): { installationId: string; secret: string } | null {
  const dot = value.lastIndexOf('.');
  if (dot <= 0 || dot === value.length - 1) return null;
  return { installationId: value.slice(0, dot), secret: value.slice(dot + 1) };
}

/** Where a record credential is checked: the installation it names and that installation's secrets. */
export interface RecordCredentialDeps {
  readonly store: Pick<PipelineStore, 'findInstallation'>;
  readonly installations: Pick<Installations, 'secrets'>;
}

/**
 * The Salesforce installation whose record credential the request carries in SALESFORCE_RECORD_SECRET_HEADER,
 * or undefined for a missing, malformed or wrong one (the caller refuses all three alike). Costs one
 * lookup by id and a hash compare: it comes before anything else a caller does with the request.
 */
export async function installationForRecordCredential(headers: Headers, deps: RecordCredentialDeps): Promise<Installation | undefined> {
  const header = singleHeader(headers, SALESFORCE_RECORD_SECRET_HEADER);
  const credential = header === null ? null : parseRecordCredential(header);
  if (credential === null) return undefined;
  const installation = await deps.store.findInstallation(credential.installationId);
  // The installation id is no secret (the console and the log show it); the secret part is, compared in constant time.
  if (installation?.provider !== SALESFORCE_PROVIDER) return undefined;
  const expected = (await deps.installations.secrets(installation.id)).recordSecret;
  return expected !== undefined && constantTimeEqual(expected, credential.secret) ? installation : undefined;
}

/** Who asks: the org, the Salesforce user and the user's e-mail, as the controller sends them (query or body). */
const AskerSchema = z.object({
  orgId: z.string().min(1).max(18),
  userId: z.string().min(1).max(18),
  userEmail: z.string().max(320).optional(),
});
type Asker = z.infer<typeof AskerSchema>;

const refusal = (status: number, reason: string, message: string): HttpResult => jsonResult(status, { ok: false, reason, message });

/** The status of an action's answer: 200 applied, 404 no such record here, 400 no user, 409 not allowed now, 502 the CRM refused the write. */
function statusOf(result: ActionResult): number {
  if (result.ok) return 200;
  if ((RECORD_UNAVAILABLE as readonly string[]).includes(result.reason)) return 404;
  if (result.reason === 'actor_invalid') return 400;
  if (result.reason === 'crm_write') return 502;
  return 409;
}

/** The record component's routes: the view and the actions. */
export function recordRoutes(context: CrmRouteContext): CrmRoute[] {
  const { bridge, log } = context;

  /** The installation the request's credential names, or the refusal. */
  async function installationOf(request: CrmRequest): Promise<{ ok: true; installation: Installation } | { ok: false; answer: HttpResult }> {
    const unauthorised = {
      ok: false as const,
      answer: refusal(401, 'unauthorised', `${SALESFORCE_RECORD_SECRET_HEADER} is missing or is not this org's secret`),
    };
    const installation = await installationForRecordCredential(request.headers, { store: bridge.pipelineStore, installations: bridge.installations });
    return installation === undefined ? unauthorised : { ok: true, installation };
  }

  /** The record and who asks, once the credential and the org are checked; the refusal otherwise. */
  async function resolve(
    request: CrmRequest,
    asked: unknown,
  ): Promise<{ ok: true; installation: Installation; object: string; recordId: string; asker: Asker } | { ok: false; answer: HttpResult }> {
    const found = await installationOf(request);
    if (!found.ok) return found;
    const { installation } = found;
    const parsed = AskerSchema.safeParse(asked);
    if (!parsed.success) return { ok: false, answer: refusal(400, 'asker_invalid', 'orgId and userId are required') };
    const asker = parsed.data;
    if (toSalesforceId18(asker.orgId) !== installation.externalAccountId) {
      log.warn({ installation: installation.id, org: asker.orgId }, 'salesforce record request for another org refused');
      return { ok: false, answer: refusal(403, 'other_org', "this org's secret does not open another org's records") };
    }
    const object = request.params.object ?? '';
    const recordId = toSalesforceId18(request.params.recordId ?? '');
    if (!isSalesforceObject(object) || recordId === null || !recordIdMatchesObject(object, recordId)) {
      return { ok: false, answer: refusal(400, 'record_invalid', 'the object must be Contact or Lead, and the id one of its records') };
    }
    return { ok: true, installation, object, recordId, asker };
  }

  const view: CrmRoute = {
    method: 'GET',
    path: `${SALESFORCE_RECORD_ROUTE}/:object/:recordId`,
    handle: async (request) => {
      const resolved = await resolve(request, request.query);
      if (!resolved.ok) return resolved.answer;
      const result = await bridge.records.view({ installationId: resolved.installation.id, object: resolved.object, recordId: resolved.recordId });
      return result.ok ? jsonResult(200, result.view) : refusal(404, result.reason, result.message);
    },
  };

  const act: CrmRoute = {
    method: 'POST',
    path: `${SALESFORCE_RECORD_ROUTE}/:object/:recordId/:action`,
    body: { limit: MAX_BODY_BYTES, refuse: (fault) => refusal(fault.status, 'body_unreadable', fault.message) },
    handle: async (request) => {
      const segment = request.params.action ?? '';
      const action = Object.hasOwn(SALESFORCE_RECORD_ACTIONS, segment) ? SALESFORCE_RECORD_ACTIONS[segment as keyof typeof SALESFORCE_RECORD_ACTIONS] : null;
      if (action === null) return refusal(404, 'unknown_action', `no record action ${segment}: enrich, undo, exclude or include`);
      let body: unknown;
      try {
        body = JSON.parse(request.body.toString('utf8'));
      } catch {
        return refusal(400, 'body_unreadable', 'the body must be JSON: {"orgId", "userId", "userEmail"}');
      }
      const resolved = await resolve(request, body);
      if (!resolved.ok) return resolved.answer;
      const { installation, object, recordId, asker } = resolved;
      const ref = { installationId: installation.id, object, recordId };
      const actor = { userId: asker.userId, email: asker.userEmail === undefined || asker.userEmail === '' ? null : asker.userEmail };
      const result = await bridge.records.take(action, ref, actor);
      if (result.ok && action === 'enrich_now') context.wake();
      log.info(
        {
          installation: installation.id,
          object,
          record: recordId,
          action,
          ok: result.ok,
          ...(result.ok ? {} : { reason: result.reason }),
          actor: actorForLog(actor),
        },
        'salesforce record action',
      );
      return jsonResult(statusOf(result), result);
    },
  };

  return [view, act];
}
