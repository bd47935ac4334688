// What HubSpot sends us, decided here and answered as data (the server's route only reads the body and
// sends the answer): webhook batches (legacy `contact.*` subscriptions), verified with the app's or the
// portal's secret and stored as one job per portal; then, in a worker, what each event means for the
// pipeline. Creation and identity changes enqueue enrichment; our own writes are dropped; a merge carries
// our state to the survivor; deletions erase what we keep. (The workflow action is action.ts.)
import { z } from 'zod';
import { type Job, type JobQueue, JsonText, type NewJob } from '../../bridge/job-queue.ts';
import type { Installation } from '../../bridge/model.ts';
import { enrichDedupeKey, enrichJob } from '../../bridge/enrich-job.ts';
import type { PipelineStore } from '../../bridge/store.ts';
import type { InboundDeliveries } from '../../bridge/deliveries.ts';
import { CONTACT, HUBSPOT_PROVIDER } from './connector.ts';
import { HubSpotIdSchema } from './ids.ts';
import { HUBSPOT_IDENTITY_PROPERTIES } from './scopes.ts';
import type { HubSpotCredentials } from './auth.ts';
import { constantTimeEqual, verifyHubSpotRequest } from './signature.ts';
import type { Headers } from '../kit/signature.ts';

/** HubSpot sends up to 100 events per request. */
export const MAX_EVENTS_PER_BATCH = 100;

/**
 * A verified webhook batch of one portal, stored as one job: the acknowledgement costs one insert,
 * and a worker expands it into enrichment jobs, state moves and erasures moments later (or after a
 * restart: it is durable like any job).
 */
export const HUBSPOT_EVENTS_JOB = 'hubspot.events';

const id = HubSpotIdSchema;

export const HubSpotEventSchema = z
  .object({
    eventId: z.union([z.number(), z.string()]),
    portalId: id,
    appId: id.optional(),
    occurredAt: z.number(),
    subscriptionType: z.string().max(100),
    objectId: id,
    changeSource: z.string().max(100).optional(),
    sourceId: z.string().max(200).nullable().optional(),
    propertyName: z.string().max(200).optional(),
    primaryObjectId: id.optional(),
    mergedObjectIds: z.array(id).max(1000).optional(),
    /** Set when the merge made a new record: both the primary and the merged ones are then gone. */
    newObjectId: id.optional(),
  })
  .loose();
export type HubSpotEvent = z.infer<typeof HubSpotEventSchema>;

export const HubSpotBatchSchema = z.array(HubSpotEventSchema).min(1).max(MAX_EVENTS_PER_BATCH);

export interface IntakeSummary {
  enqueued: number;
  /** Already waiting in the queue: the duplicate added nothing. */
  duplicates: number;
  /** Our own writes, properties we do not read, automatic enrichment off, unknown portals. */
  ignored: number;
  merged: number;
  erased: number;
}

export interface IntakeDeps {
  readonly store: PipelineStore;
  readonly queue: JobQueue;
  /** The delivery ledger: each event applied is remembered, so the journal's copy of it is not applied again. */
  readonly deliveries?: Pick<InboundDeliveries, 'remember'>;
  /** Our HubSpot app id for the installation (events from our own writes carry it as sourceId). */
  readonly appIdOf: (installation: Installation) => Promise<string | null>;
}

const IDENTITY = new Set<string>(HUBSPOT_IDENTITY_PROPERTIES);

/** The delivery ledger's provider for HubSpot events (webhooks and the journal alike). */
export const HUBSPOT_EVENT_LEDGER = 'hubspot-event';

/**
 * What identifies one change whichever way HubSpot told us of it (a webhook, the journal): portal,
 * record, kind of change, property, and when it happened. Webhook event ids are not that: HubSpot
 * does not promise them unique, and the journal does not carry them.
 */
export function hubspotEventKey(event: Pick<HubSpotEvent, 'portalId' | 'objectId' | 'subscriptionType' | 'propertyName' | 'occurredAt'>): string {
  return `${event.portalId}:${event.objectId}:${event.subscriptionType}:${event.propertyName ?? ''}:${event.occurredAt}`;
}

/** Our own write: HubSpot reports it as an INTEGRATION change whose sourceId is our app id. */
export function isOwnWrite(event: HubSpotEvent, appId: string | null): boolean {
  return appId !== null && event.changeSource === 'INTEGRATION' && String(event.sourceId ?? '') === appId;
}

/**
 * Applies a verified batch. Events are taken in `occurredAt` order (HubSpot does not guarantee
 * order). Everything is durable when this resolves; it throws when it could not be (the route then
 * answers 5xx so HubSpot delivers again, and duplicates are harmless).
 */
export async function applyHubSpotEvents(events: readonly HubSpotEvent[], deps: IntakeDeps): Promise<IntakeSummary> {
  const summary: IntakeSummary = { enqueued: 0, duplicates: 0, ignored: 0, merged: 0, erased: 0 };
  const installations = new Map<string, Installation | null>();
  const installationFor = async (portalId: string): Promise<Installation | null> => {
    if (!installations.has(portalId)) {
      const found = await deps.store.findInstallationByAccount(HUBSPOT_PROVIDER, portalId);
      installations.set(portalId, found !== undefined && found.status !== 'disabled' ? found : null);
    }
    return installations.get(portalId) ?? null;
  };
  const appIds = new Map<string, Promise<string | null>>();
  const appIdOf = (installation: Installation): Promise<string | null> => {
    let appId = appIds.get(installation.id);
    if (appId === undefined) {
      appId = deps.appIdOf(installation);
      appIds.set(installation.id, appId);
    }
    return appId;
  };
  // Enqueued together at the end, in one transaction: a batch is durable as a whole or not at all.
  const jobs: NewJob[] = [];
  const enqueue = (installation: Installation, recordId: string, trigger: 'create' | 'update') => {
    jobs.push(enrichJob(installation.id, { object: CONTACT, recordId, trigger }));
  };
  /** A record deleted or merged away later in the batch is not enriched for its earlier events. */
  const drop = (installation: Installation, recordId: string) => {
    const key = enrichDedupeKey(installation.id, CONTACT, recordId);
    for (let i = jobs.length - 1; i >= 0; i -= 1) if (jobs[i]?.dedupeKey === key) jobs.splice(i, 1);
  };

  for (const event of [...events].sort((a, b) => a.occurredAt - b.occurredAt)) {
    const installation = await installationFor(event.portalId);
    if (installation === null) {
      summary.ignored += 1;
      continue;
    }
    switch (event.subscriptionType) {
      case 'contact.creation':
        if (installation.settings.enrichOnCreate) enqueue(installation, event.objectId, 'create');
        else summary.ignored += 1;
        break;
      case 'contact.propertyChange':
        if (event.propertyName !== undefined && IDENTITY.has(event.propertyName) && !isOwnWrite(event, await appIdOf(installation))) {
          // Re-enrichment: the pipeline skips it when the normalized input did not change.
          enqueue(installation, event.objectId, 'update');
        } else {
          summary.ignored += 1;
        }
        break;
      case 'contact.merge': {
        // The record that lives on: a new one when HubSpot made one (newObjectId), else the primary.
        // Gone: the merged ones, and the primary too when a new record replaced it. The primary's
        // state goes first, so it is the one the survivor keeps.
        const primary = event.primaryObjectId ?? event.objectId;
        const survivor = event.newObjectId ?? primary;
        const gone = [...new Set([...(survivor === primary ? [] : [primary]), ...(event.mergedObjectIds ?? [])])];
        for (const merged of gone) {
          if (merged === survivor) continue;
          await deps.store.moveRecordState(installation.id, CONTACT, merged, survivor);
          await deps.queue.cancel(enrichDedupeKey(installation.id, CONTACT, merged));
          drop(installation, merged);
        }
        summary.merged += 1;
        break;
      }
      case 'contact.deletion':
      case 'contact.privacyDeletion':
        await deps.queue.cancel(enrichDedupeKey(installation.id, CONTACT, event.objectId));
        drop(installation, event.objectId);
        // A privacy deletion is the person's request: a contact re-created with their identifiers is
        // not enriched in this portal again. A plain deletion forgets the record only.
        await deps.store.eraseRecord(installation.id, CONTACT, event.objectId, { suppress: event.subscriptionType === 'contact.privacyDeletion' });
        summary.erased += 1;
        break;
      default:
        summary.ignored += 1;
    }
  }
  const { created, duplicates } = await deps.queue.enqueueMany(jobs);
  summary.enqueued = created;
  summary.duplicates = duplicates;
  return summary;
}

export interface QueuedBatch {
  readonly received: number;
  /** Portals whose events were queued (one job each). */
  readonly queued: number;
  /** Events of portals we do not know, whose installation is disabled, or that the batch's secret does not speak for. */
  readonly ignored: number;
  /** Portals with an installation that the secret which verified the batch does not verify (dropped). */
  readonly foreignPortals?: readonly string[];
}

const EventsPayloadSchema = z.object({ events: z.array(HubSpotEventSchema).min(1).max(MAX_EVENTS_PER_BATCH) });

/**
 * Stores a verified batch durably, one job per portal, in one transaction. Resolves once it is on
 * disk; throws when it could not be (the route answers 5xx and HubSpot delivers again).
 */
export async function queueHubSpotBatch(
  events: readonly HubSpotEvent[],
  deps: {
    store: PipelineStore;
    queue: JobQueue;
    installationFor?: (portalId: string) => Promise<Installation | undefined>;
    /**
     * Whether the secret that verified the batch is this installation's own: events of any other
     * installation are dropped, so one tenant's secret cannot act on another tenant's portal.
     */
    verifiedFor?: (installation: Installation) => Promise<boolean>;
    /**
     * The batch's body as received (it parsed to `events`): stored as that text when every event is
     * of the one portal queued, instead of writing the parsed events out as JSON again.
     */
    body?: string;
  },
): Promise<QueuedBatch> {
  const byPortal = new Map<string, HubSpotEvent[]>();
  for (const event of events) byPortal.set(event.portalId, [...(byPortal.get(event.portalId) ?? []), event]);
  const jobs: NewJob[] = [];
  const foreignPortals: string[] = [];
  let ignored = 0;
  for (const [portalId, ofPortal] of byPortal) {
    const installation = await (deps.installationFor ?? ((p: string) => deps.store.findInstallationByAccount(HUBSPOT_PROVIDER, p)))(portalId);
    if (installation === undefined || installation.status === 'disabled') {
      ignored += ofPortal.length;
      continue;
    }
    if (deps.verifiedFor !== undefined && !(await deps.verifiedFor(installation))) {
      foreignPortals.push(portalId);
      ignored += ofPortal.length;
      continue;
    }
    // The events as received (they passed the schema): the expansion parses them again.
    const payload = byPortal.size === 1 && deps.body !== undefined ? new JsonText(`{"events":${deps.body}}`) : { events: ofPortal };
    jobs.push({ installationId: installation.id, kind: HUBSPOT_EVENTS_JOB, payload, maxAttempts: 10 });
  }
  await deps.queue.enqueueMany(jobs);
  return { received: events.length, queued: jobs.length, ignored, ...(foreignPortals.length > 0 ? { foreignPortals } : {}) };
}

/** The worker's handler for HUBSPOT_EVENTS_JOB: applies each stored batch. */
export async function expandHubSpotEventJobs(jobs: readonly Job[], deps: IntakeDeps): Promise<IntakeSummary> {
  const total: IntakeSummary = { enqueued: 0, duplicates: 0, ignored: 0, merged: 0, erased: 0 };
  for (const job of jobs) {
    const payload = EventsPayloadSchema.parse(job.payload);
    const summary = await applyHubSpotEvents(payload.events, deps);
    // After the events are applied: a crash in between applies them again, which is harmless.
    await deps.deliveries?.remember(HUBSPOT_EVENT_LEDGER, payload.events.map(hubspotEventKey));
    total.enqueued += summary.enqueued;
    total.duplicates += summary.duplicates;
    total.ignored += summary.ignored;
    total.merged += summary.merged;
    total.erased += summary.erased;
  }
  return total;
}

const NOT_JSON = Symbol('not JSON');

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return NOT_JSON;
  }
}

/** The portal a batch claims to be from, read only to find which secret verifies it. */
function claimedPortal(parsed: unknown): string | null {
  if (!Array.isArray(parsed) || parsed.length === 0) return null;
  const first: unknown = parsed[0];
  if (typeof first !== 'object' || first === null || !('portalId' in first)) return null;
  const portal = first.portalId;
  return typeof portal === 'number' || typeof portal === 'string' ? String(portal) : null;
}

export interface HubSpotWebhookDeps {
  /** The public app's client secret (null: the server has no public app); static-token portals have their own. */
  readonly appClientSecret: string | null;
  readonly installationOf: (portalId: string) => Promise<Installation | undefined>;
  readonly credentialsOf: (installation: Installation) => Promise<HubSpotCredentials | null>;
  readonly store: PipelineStore;
  readonly queue: JobQueue;
  /** Nudges the workers after an enqueue. */
  readonly wake: () => void;
  /** Events of portals the verifying secret does not speak for were dropped (for the operator's log). */
  readonly onForeignPortals: (portals: readonly string[]) => void;
  /** The batch could not be stored (for the operator's log): HubSpot is told to deliver it again. */
  readonly onError: (error: unknown) => void;
}

/** A JSON answer as data: the route sends it as is. */
export interface JsonAnswer {
  readonly status: number;
  readonly body: Readonly<Record<string, unknown>>;
}

/**
 * A webhook batch as HubSpot posts it: verified (v3, over the raw bytes and the URL HubSpot called) with
 * the app's secret or the claimed portal's own, parsed, and stored as one job per portal before the 200.
 * Never throws.
 */
export async function acceptWebhookBatch(
  body: Buffer,
  request: { readonly url: string; readonly headers: Headers; readonly now: number },
  deps: HubSpotWebhookDeps,
): Promise<JsonAnswer> {
  // Parsed once, but nothing in it is acted on before the signature checks out.
  const text = body.toString('utf8');
  const json = parseJson(text);
  const secrets: string[] = [];
  if (deps.appClientSecret !== null) secrets.push(deps.appClientSecret);
  let verifiedBy: string | undefined;
  try {
    const portal = claimedPortal(json);
    const installation = portal === null ? undefined : await deps.installationOf(portal);
    if (installation !== undefined) {
      const credentials = await deps.credentialsOf(installation);
      if (credentials !== null && !secrets.includes(credentials.clientSecret)) secrets.push(credentials.clientSecret);
    }
    verifiedBy = secrets.find(
      (clientSecret) =>
        verifyHubSpotRequest({ clientSecret, method: 'POST', url: request.url, rawBody: body, headers: request.headers, accept: ['v3'], now: request.now }).ok,
    );
  } catch (error) {
    deps.onError(error);
    return { status: 503, body: { message: 'could not read the installation; HubSpot will retry' } };
  }
  if (verifiedBy === undefined) return { status: 401, body: { message: 'invalid or missing HubSpot signature' } };
  if (json === NOT_JSON) return { status: 400, body: { message: 'the body is not JSON' } };
  const events = HubSpotBatchSchema.safeParse(json);
  if (!events.success) return { status: 400, body: { message: 'not a batch of HubSpot events (an array of 1 to 100)' } };
  const secret = verifiedBy;
  try {
    // Durable as one job per portal before the 200; a worker expands it moments later.
    // Tenant isolation: the batch speaks only for the installations whose secret verified it (the
    // app's for portals installed through the public app, a static-token portal's own for that
    // portal). Events of other portals are dropped with a warning, not refused: HubSpot retries a
    // refused batch whole, and a genuine one never mixes secrets, so only a forgery is affected.
    const queued = await queueHubSpotBatch(events.data, {
      store: deps.store,
      queue: deps.queue,
      installationFor: deps.installationOf,
      verifiedFor: async (installation) => {
        const credentials = await deps.credentialsOf(installation);
        return credentials !== null && constantTimeEqual(credentials.clientSecret, secret);
      },
      body: text,
    });
    if (queued.foreignPortals !== undefined) deps.onForeignPortals(queued.foreignPortals);
    if (queued.queued > 0) deps.wake();
    return { status: 200, body: { received: queued.received, queued: queued.queued, ignored: queued.ignored } };
  } catch (error) {
    // Not durably queued: a 5xx makes HubSpot deliver again (duplicates are harmless).
    deps.onError(error);
    return { status: 503, body: { message: 'could not queue the batch; HubSpot will retry' } };
  }
}
