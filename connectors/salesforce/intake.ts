// What Salesforce sends us, decided here, answered as data (Nango's webhook handlers: verify, parse,
// decide, queue, answer; never throw). The server's routes only read the body, keep a flood of
// refusals cheap (a limit per source address) and send the answer.
//
// - Outbound messages (SOAP, from the record-triggered flows): the org named in the first bytes and the
//   installation's secret in the URL are checked before the XML is parsed; each notification is
//   queued once (deliveries remember them), only when the installation enriches on create.
// - Signed JSON callouts (Apex, Flow): the HMAC over the raw body with the installation's secret
//   (events.ts), then the ids queued.
// - The packaged trigger's callouts (EnrichbridgeRecordSender): the org's record credential from the
//   Named Credential checked first, then the body, then each callout's delivery id queued once, only
//   when the installation enriches on create, as outbound messages are.
import type { JobQueue, NewJob } from '../../bridge/job-queue.ts';
import { constantTimeEqual } from '../../core/secrets/constant-time.ts';
import type { Headers, RawBody } from '../kit/signature.ts';
import type { InboundDeliveries } from '../../bridge/deliveries.ts';
import { enrichJob } from '../../bridge/enrich-job.ts';
import type { Installations } from '../../bridge/installations.ts';
import type { Installation } from '../../bridge/model.ts';
import type { PipelineStore } from '../../bridge/store.ts';
import { SalesforceCredentialsSchema } from './auth.ts';
import { SALESFORCE_PROVIDER, isSalesforceObject } from './connector.ts';
import { SALESFORCE_OBJECTS } from './fields.ts';
import { parseEvents, parseTriggerCallout, verifyEvents } from './events.ts';
import { installationForRecordCredential } from './record-routes.ts';
import { toSalesforceId18 } from './ids.ts';
import {
  OUTBOUND_ACK_XML,
  OUTBOUND_CONTENT_TYPE,
  OutboundMessageError,
  SOAP_FAULT_HTTP_STATUS,
  outboundMessageDedupeKey,
  parseOutboundMessage,
  scanInstanceHost,
  scanOrganizationId,
  soapFault,
} from './outbound-xml.ts';

export interface SalesforceIntakeDeps {
  readonly installations: Installations;
  readonly store: PipelineStore;
  readonly queue: JobQueue;
  readonly deliveries: InboundDeliveries;
  /** Nudges the workers after an enqueue. */
  readonly wake: () => void;
  /** A fault of ours (the database), for the operator's log: the caller is told to retry. */
  readonly onError: (error: unknown, what: string) => void;
  /** Something the operator should act on (a warn line): ids and counts only, never a secret. */
  readonly onNotice?: (fields: Readonly<Record<string, unknown>>, what: string) => void;
  /** Which unknown orgs were looked into lately; absent: one watch per store, in this process. */
  readonly orgChanges?: OrgChangeWatch;
  /** The clock (tests move it). */
  readonly now?: () => Date;
}

/**
 * How often an unknown org's envelope is compared with the connected installations' hosts (a refreshed
 * sandbox comes back under a new org id on its old host). The comparison opens every Salesforce
 * installation's sealed credentials, and anyone can post an envelope naming any org id, so it runs at most
 * once per org id per interval and at most `perMinute` times a minute in all; past either, the message is
 * refused as before, unexamined. Kept in memory: a restart only means one more look.
 */
export class OrgChangeWatch {
  private readonly looked = new Map<string, number>();
  private minute = { start: 0, count: 0 };

  constructor(
    private readonly options: { readonly intervalMs: number; readonly perMinute: number; readonly remembered: number } = {
      intervalMs: 10 * 60_000,
      perMinute: 30,
      remembered: 10_000,
    },
  ) {}

  /** True when `orgId` may be looked into now (and counts the look). */
  take(orgId: string, at: Date): boolean {
    const now = at.getTime();
    const last = this.looked.get(orgId);
    if (last !== undefined && now - last < this.options.intervalMs) return false;
    if (now - this.minute.start >= 60_000) this.minute = { start: now, count: 0 };
    if (this.minute.count >= this.options.perMinute) return false;
    this.minute.count += 1;
    // Re-inserted so the map's order is the looks' order, and the oldest is the one let go.
    this.looked.delete(orgId);
    this.looked.set(orgId, now);
    if (this.looked.size > this.options.remembered) {
      const oldest = this.looked.keys().next();
      if (oldest.done !== true) this.looked.delete(oldest.value);
    }
    return true;
  }
}

const watches = new WeakMap<PipelineStore, OrgChangeWatch>();
function watchOf(deps: SalesforceIntakeDeps): OrgChangeWatch {
  if (deps.orgChanges !== undefined) return deps.orgChanges;
  let watch = watches.get(deps.store);
  if (watch === undefined) {
    watch = new OrgChangeWatch();
    watches.set(deps.store, watch);
  }
  return watch;
}

/**
 * Said to whoever posts for an org that is not connected, and to a wrong secret alike (the two must not be
 * told apart: that would say which org ids are connected): a hint that names nothing of ours. Which
 * installation a refreshed sandbox belonged to is for the operator's log and console only.
 */
export const NOT_CONNECTED_FAULT =
  'this organization is not connected to enrichbridge at this address; if it is a Salesforce sandbox refreshed since it was connected, it has a new org id: ask the operator to reconnect its installation';

/**
 * An envelope from an org id no installation has, on the host of one that has another (a refreshed sandbox
 * keeps its My Domain host and gets a new org id): that installation is marked "org changed", with the new
 * id and when it was first seen, and the operator's log says which. Runs only for an unknown org, after
 * the cheap checks, at most once per org id per interval (OrgChangeWatch); the host is read from the same
 * 4 KiB as the org id, without parsing the XML. Never fails the answer: a fault here is logged.
 */
async function noticeOrgChange(body: Buffer, claimedOrg: string, deps: SalesforceIntakeDeps): Promise<void> {
  const orgId = toSalesforceId18(claimedOrg);
  if (orgId === null || !orgId.startsWith('00D')) return;
  const at = deps.now?.() ?? new Date();
  if (!watchOf(deps).take(orgId, at)) return;
  const host = scanInstanceHost(body);
  if (host === null) return;
  try {
    for (const installation of await deps.store.listInstallations()) {
      if (installation.provider !== SALESFORCE_PROVIDER || installation.externalAccountId === orgId) continue;
      let instanceHost: string | null = null;
      try {
        const credentials = SalesforceCredentialsSchema.safeParse((await deps.installations.secrets(installation.id)).crm);
        instanceHost = credentials.success ? new URL(credentials.data.instanceUrl).hostname.toLowerCase() : null;
      } catch {
        // Credentials this key cannot open: not this installation's to claim.
        instanceHost = null;
      }
      if (instanceHost !== host) continue;
      const marked = await deps.installations.markOrgChanged(installation.id, orgId, at);
      deps.onNotice?.(
        { installation: installation.id, org: orgId, new_mark: marked },
        `salesforce outbound message refused: org ${orgId} is not connected but posts from the host of installation ${installation.id} (org changed: a refreshed sandbox?); run \`enrichbridge salesforce reconnect ${installation.id}\``,
      );
    }
  } catch (error) {
    deps.onError(error, 'salesforce outbound message: could not compare an unknown org with the installations');
  }
}

/** An answer as data; `refused` says why a message was turned away before it was parsed (the route counts them). */
export interface IntakeAnswer {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
  readonly refused?: 'unreadable' | 'unknown_org' | 'wrong_secret';
}

const soap = (status: number, body: string, refused?: IntakeAnswer['refused']): IntakeAnswer => ({
  status,
  contentType: OUTBOUND_CONTENT_TYPE,
  body,
  ...(refused === undefined ? {} : { refused }),
});
const fault = (message: string, code: 'Client' | 'Server' = 'Client', refused?: IntakeAnswer['refused']): IntakeAnswer =>
  soap(SOAP_FAULT_HTTP_STATUS, soapFault(message, code), refused);
const json = (status: number, value: unknown): IntakeAnswer => ({ status, contentType: 'application/json; charset=utf-8', body: JSON.stringify(value) });

/** Whether the installation enriches the object: the ones it names, or Contacts and Leads when it names none. */
function enrichedBy(installation: Installation, object: string): boolean {
  return (installation.settings.objects.length > 0 ? installation.settings.objects : (SALESFORCE_OBJECTS as readonly string[])).includes(object);
}

async function installationOf(store: PipelineStore, orgId: string): Promise<Installation | undefined> {
  const canonical = toSalesforceId18(orgId);
  return canonical === null ? undefined : store.findInstallationByAccount(SALESFORCE_PROVIDER, canonical);
}

/**
 * An outbound message. `secret`: the one in the URL (undefined on the bare path an operator kept). The
 * cheap checks come first, so a refusal costs a 4 KiB scan and one lookup, never the XML parse.
 */
export async function acceptOutboundMessage(body: Buffer, secret: string | undefined, deps: SalesforceIntakeDeps): Promise<IntakeAnswer> {
  const claimedOrg = scanOrganizationId(body);
  if (claimedOrg === null) return fault('not an outbound message this endpoint accepts (no OrganizationId)', 'Client', 'unreadable');
  let installation: Installation | undefined;
  try {
    installation = await installationOf(deps.store, claimedOrg);
    const expected = installation === undefined || secret === undefined ? undefined : (await deps.installations.secrets(installation.id)).outboundSecret;
    if (installation === undefined) {
      await noticeOrgChange(body, claimedOrg, deps);
      return fault(NOT_CONNECTED_FAULT, 'Client', 'unknown_org');
    }
    if (secret !== undefined && (expected === undefined || !constantTimeEqual(expected, secret))) return fault(NOT_CONNECTED_FAULT, 'Client', 'wrong_secret');
  } catch (error) {
    deps.onError(error, 'salesforce outbound message: the installation could not be read');
    return fault('could not read the installation; Salesforce will retry', 'Server');
  }
  let message;
  try {
    message = parseOutboundMessage(body);
  } catch (error) {
    if (!(error instanceof OutboundMessageError)) throw error;
    return fault(`not an outbound message this endpoint accepts (${error.code})`, 'Client', 'unreadable');
  }
  if (toSalesforceId18(message.organizationId) !== installation.externalAccountId) return fault('the envelope names two organizations');
  try {
    if (installation.status !== 'disabled' && installation.settings.enrichOnCreate) {
      const keys = message.notifications.map((n) => outboundMessageDedupeKey(message.organizationId, n.id));
      const fresh = await deps.deliveries.unseen(SALESFORCE_PROVIDER, keys);
      const jobs: NewJob[] = [];
      for (const notification of message.notifications) {
        if (!fresh.has(outboundMessageDedupeKey(message.organizationId, notification.id))) continue;
        // Only what the installation enriches: person Accounts where it names Account.
        if (!isSalesforceObject(notification.object) || !enrichedBy(installation, notification.object)) continue;
        jobs.push(enrichJob(installation.id, { object: notification.object, recordId: notification.recordId, trigger: 'create' }));
      }
      // Queued before remembered: a crash between the two means a redelivery queues again (harmless).
      const queued = await deps.queue.enqueueMany(jobs);
      await deps.deliveries.remember(SALESFORCE_PROVIDER, keys);
      if (queued.created > 0) deps.wake();
    }
    // Acknowledges every notification of the message, as Salesforce requires.
    return soap(200, OUTBOUND_ACK_XML);
  } catch (error) {
    deps.onError(error, 'salesforce outbound message could not be queued');
    return fault('could not queue the notifications; Salesforce will retry', 'Server');
  }
}

/** The org a body that failed validation names, if it names one: its secret decides between 400 and 401. */
function claimedOrgId(body: Buffer): string | undefined {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return typeof value === 'object' && value !== null && 'orgId' in value && typeof value.orgId === 'string' ? value.orgId : undefined;
  } catch {
    return undefined;
  }
}

/** A signed JSON callout: `{orgId, object, ids}` with its HMAC headers. */
export async function acceptEvents(body: Buffer & RawBody, headers: Headers, deps: SalesforceIntakeDeps): Promise<IntakeAnswer> {
  const parsed = parseEvents(body);
  // The org named in the body picks the secret; nothing in it is acted on before the signature
  // holds. A body that fails validation but names an org is verified with that org's secret, so a
  // signed caller hears 400 for its mistake and everyone else 401.
  const orgId = parsed.ok ? parsed.events.orgId : claimedOrgId(body);
  let installation: Installation | undefined;
  let secret: string | undefined;
  try {
    installation = orgId === undefined ? undefined : await installationOf(deps.store, orgId);
    secret = installation === undefined ? undefined : (await deps.installations.secrets(installation.id)).webhookSecret;
  } catch (error) {
    deps.onError(error, 'salesforce events: the installation could not be read');
    return json(503, { message: 'could not read the installation; retry' });
  }
  if (installation === undefined || secret === undefined || !verifyEvents({ secret, rawBody: body, headers }).ok) {
    return json(401, { message: 'invalid or missing signature, or an organization that is not connected' });
  }
  if (!parsed.ok) return json(400, { message: parsed.message });
  if (installation.status === 'disabled') return json(200, { queued: 0, duplicates: 0 });
  try {
    const { object, ids } = parsed.events;
    const target = installation.id;
    const queued = await deps.queue.enqueueMany(ids.map((recordId) => enrichJob(target, { object, recordId, trigger: 'create' })));
    if (queued.created > 0) deps.wake();
    return json(200, { queued: queued.created, duplicates: queued.duplicates });
  } catch (error) {
    deps.onError(error, 'salesforce events could not be queued');
    return json(503, { message: 'could not queue the records; retry' });
  }
}

/** The ledger key of a trigger callout's delivery id: one org's ids never meet another's. */
export function triggerDeliveryKey(orgId18: string, deliveryId: string): string {
  return `salesforce:trigger:${orgId18}:${deliveryId.toLowerCase()}`;
}

/** How the trigger's callout was answered, for the Queueable's log: `reason` on every refusal. */
const refusedCallout = (status: number, reason: string, message: string): IntakeAnswer => json(status, { ok: false, reason, message });

/**
 * The packaged trigger's callout: `{deliveryId, orgId, object, ids}` with the org's record credential in
 * its header. The credential is checked before the body is parsed (a refusal costs one lookup and a hash),
 * then the org the body names must be the credential's (one org's secret never queues another's records).
 * Queued only where outbound messages would be: an installation that is not disabled, enriches on create,
 * and enriches the object (person Accounts only where it names Account; naming none means Contacts and
 * Leads). Otherwise answered 200 with `skipped`, not refused: the org's trigger did nothing wrong, and a
 * refusal would be logged as an error in the org and a 5xx retried.
 */
export async function acceptTriggerCallout(body: Buffer, headers: Headers, deps: SalesforceIntakeDeps): Promise<IntakeAnswer> {
  let installation: Installation | undefined;
  try {
    installation = await installationForRecordCredential(headers, deps);
  } catch (error) {
    deps.onError(error, 'salesforce trigger callout: the installation could not be read');
    return refusedCallout(503, 'unavailable', 'could not read the installation; retry');
  }
  if (installation === undefined) {
    return refusedCallout(401, 'unauthorised', "the External Credential's OrgSecret is missing or is not this org's record credential");
  }
  const parsed = parseTriggerCallout(body);
  if (!parsed.ok) return refusedCallout(parsed.reason === 'too_large' ? 413 : 400, parsed.reason, parsed.message);
  const { deliveryId, orgId, object, ids } = parsed.callout;
  if (orgId !== installation.externalAccountId) return refusedCallout(403, 'other_org', "this org's credential does not send another org's records");
  if (installation.status === 'disabled' || !installation.settings.enrichOnCreate) {
    return json(200, { ok: true, queued: 0, duplicates: 0, skipped: installation.status === 'disabled' ? 'disabled' : 'enrich_on_create_off' });
  }
  if (!enrichedBy(installation, object)) return json(200, { ok: true, queued: 0, duplicates: 0, skipped: 'object_not_enabled' });
  try {
    const key = triggerDeliveryKey(orgId, deliveryId);
    if (!(await deps.deliveries.unseen(SALESFORCE_PROVIDER, [key])).has(key)) return json(200, { ok: true, queued: 0, duplicates: ids.length, repeated: true });
    const target = installation.id;
    // Queued before remembered: a crash between the two means a retry queues again (harmless).
    const queued = await deps.queue.enqueueMany(ids.map((recordId) => enrichJob(target, { object, recordId, trigger: 'create' })));
    await deps.deliveries.remember(SALESFORCE_PROVIDER, [key]);
    if (queued.created > 0) deps.wake();
    return json(200, { ok: true, queued: queued.created, duplicates: queued.duplicates });
  } catch (error) {
    deps.onError(error, 'salesforce trigger callout could not be queued');
    return refusedCallout(503, 'unavailable', 'could not queue the records; retry');
  }
}
