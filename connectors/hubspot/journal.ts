// HubSpot's Webhooks Journal: the events HubSpot keeps for 3 days for each installed portal's journal
// subscription, pulled to recover what the webhooks did not bring (our server down past HubSpot's
// retries). An hourly job per OAuth installation reads the portal's journal from where the last pull
// of this process stopped (from its earliest entry after a restart: the downtime case), keeps the
// contact events the delivery ledger has not seen, and stores them as a webhook batch would be, so
// the same expansion applies them.
import { z } from 'zod';
import { eventsRecovered } from '../../core/observe/metrics.ts';
import { outboundTimeouts } from '../../core/client/timeouts.ts';
import { type InboundDeliveries, recoveredEventsLedger } from '../pipeline/deliveries.ts';
import type { Installations } from '../pipeline/installations.ts';
import type { JobQueue, NewJob } from '../pipeline/job-queue.ts';
import type { Installation } from '../pipeline/model.ts';
import { HubSpotApi, HubSpotApiError, Ignored } from './api.ts';
import { type HubSpotCredentials, HubSpotCredentialsSchema, requestToken } from './auth.ts';
import { HUBSPOT_EVENTS_JOB, HUBSPOT_EVENT_LEDGER, type HubSpotEvent, MAX_EVENTS_PER_BATCH, hubspotEventKey } from './intake.ts';
import { HUBSPOT_IDENTITY_PROPERTIES } from './scopes.ts';
import { HUBSPOT_PATHS } from './version.ts';

/** The job that pulls one installation's journal. */
export const HUBSPOT_JOURNAL_JOB = 'hubspot.journal';
/** How often each installation's journal is pulled (and once when a worker starts). */
export const JOURNAL_PULL_EVERY_MS = 60 * 60_000;

/** Entries (files) asked for per call, and calls per pull at most (a pull then resumes on the next). */
const ENTRIES_PER_CALL = 100;
const CALLS_PER_PULL = 20;
/** A journal file larger than this is refused: a portal's contact changes do not come near it. */
const MAX_FILE_BYTES = 32 * 1024 * 1024;
/** HubSpot's object type id of contacts. */
const CONTACT_TYPE = '0-1';

/** What the app's client-credentials token asks for: reading the journal and keeping its subscription. */
export const JOURNAL_SCOPES = [
  'developer.webhooks_journal.read',
  'developer.webhooks_journal.subscriptions.read',
  'developer.webhooks_journal.subscriptions.write',
  'crm.objects.contacts.read',
] as const;

const NumericId = z.union([z.number().int().nonnegative(), z.string().regex(/^\d{1,30}$/)]).transform(String);

const SubscriptionsSchema = z.object({ results: z.array(z.object({ portalId: NumericId.optional(), objectTypeId: z.string().optional() }).loose()) }).loose();
/** `BatchResponseJournalFetchResponse`: each entry's offset and the pre-signed file holding its events. */
const FetchBatchSchema = z.object({ results: z.array(z.object({ currentOffset: z.string().min(1), url: z.url() }).loose()) }).loose();
/**
 * A journal file. HubSpot's documents do not give its layout; this follows a published description of
 * it (`{offset, journalEvents: [...]}`, CRM object events with `portalId`, `objectId`, `objectTypeId`,
 * `action`, `occurredAt`, `propertyChanges`), read leniently: an event we cannot read is skipped.
 */
const JournalFileSchema = z.object({ journalEvents: z.array(z.unknown()).default([]) }).loose();
const JournalEventSchema = z
  .object({
    portalId: NumericId,
    objectId: NumericId,
    objectTypeId: z.string().optional(),
    action: z.string(),
    occurredAt: z.union([z.number(), z.iso.datetime({ offset: true }).transform((at) => Date.parse(at))]),
    propertyChanges: z.unknown().optional(),
  })
  .loose();

/** The properties a journal UPDATE names: an array of `{propertyName}` (or `{name}`), or an object keyed by them. */
function changedProperties(changes: unknown): string[] {
  if (Array.isArray(changes)) {
    return changes.flatMap((change) => {
      if (typeof change !== 'object' || change === null) return [];
      const name = 'propertyName' in change ? change.propertyName : 'name' in change ? change.name : undefined;
      return typeof name === 'string' ? [name] : [];
    });
  }
  return typeof changes === 'object' && changes !== null ? Object.keys(changes) : [];
}

/** A journal file's contact events of one portal, as the webhook events they stand for (merges are left to the webhooks). */
export function journalEvents(file: unknown, portalId: string, fileOffset: string): HubSpotEvent[] {
  const parsed = JournalFileSchema.safeParse(file);
  if (!parsed.success) return [];
  const events: HubSpotEvent[] = [];
  for (const [index, raw] of parsed.data.journalEvents.entries()) {
    const event = JournalEventSchema.safeParse(raw);
    if (!event.success || event.data.portalId !== portalId || (event.data.objectTypeId ?? CONTACT_TYPE) !== CONTACT_TYPE) continue;
    const base = { eventId: `journal:${fileOffset}:${index}`, portalId, objectId: event.data.objectId, occurredAt: event.data.occurredAt, changeSource: 'JOURNAL' };
    switch (event.data.action) {
      case 'CREATE':
        events.push({ ...base, subscriptionType: 'contact.creation' });
        break;
      case 'UPDATE':
        for (const propertyName of changedProperties(event.data.propertyChanges)) events.push({ ...base, eventId: `${base.eventId}:${propertyName}`, subscriptionType: 'contact.propertyChange', propertyName });
        break;
      case 'DELETE':
        events.push({ ...base, subscriptionType: 'contact.deletion' });
        break;
      case 'GDPR_DELETE':
        events.push({ ...base, subscriptionType: 'contact.privacyDeletion' });
        break;
      default:
        // MERGE and the rest: their layout is not documented; the webhook's merge event moves our state.
        break;
    }
  }
  return events;
}

/** The app's client-credentials tokens, by client id, while they have more than a minute left. */
const appTokens = new Map<string, { token: string; expiresAt: number }>();

async function appToken(credentials: HubSpotCredentials & { clientId: string }, now: () => Date, fresh = false): Promise<string> {
  const cached = appTokens.get(credentials.clientId);
  if (!fresh && cached !== undefined && cached.expiresAt - now().getTime() > 60_000) return cached.token;
  // Docs: https://developers.hubspot.com/docs/api-reference/latest/webhooks-journal/guide
  const token = await requestToken(credentials.apiBaseUrl, {
    grant_type: 'client_credentials',
    client_id: credentials.clientId,
    client_secret: credentials.clientSecret,
    scope: JOURNAL_SCOPES.join(' '),
  });
  appTokens.set(credentials.clientId, { token: token.access_token, expiresAt: now().getTime() + token.expires_in * 1000 });
  return token.access_token;
}

/** Where each installation's last pull in this process stopped. */
const offsets = new Map<string, string>();
/** Installations whose journal subscription this process has checked. */
const subscribed = new Set<string>();

/**
 * The portal's journal subscription for contacts (creations, identity changes, deletions), made when
 * it has none. Docs: https://developers.hubspot.com/docs/api-reference/latest/webhooks-journal/guide
 */
async function ensureSubscription(api: HubSpotApi, portalId: string): Promise<boolean> {
  const existing = await api.call('list journal subscriptions', { method: 'GET', path: HUBSPOT_PATHS.journalSubscriptions }, SubscriptionsSchema);
  if (existing.results.some((s) => s.portalId === portalId && (s.objectTypeId ?? CONTACT_TYPE) === CONTACT_TYPE)) return false;
  await api.call(
    'create journal subscription',
    {
      method: 'POST',
      path: HUBSPOT_PATHS.journalSubscriptions,
      body: {
        subscriptionType: 'OBJECT',
        portalId: Number(portalId),
        objectTypeId: CONTACT_TYPE,
        actions: ['CREATE', 'UPDATE', 'DELETE', 'MERGE', 'GDPR_DELETE'],
        properties: [...HUBSPOT_IDENTITY_PROPERTIES],
        objectIds: [],
      },
    },
    Ignored,
  );
  return true;
}

/** A journal file, fetched from its pre-signed URL without our token, within the HubSpot timeout and a size bound. */
async function fetchFile(url: string): Promise<unknown> {
  const response = await fetch(url, { signal: AbortSignal.timeout(outboundTimeouts().hubspotMs), headers: { accept: 'application/json' } });
  if (!response.ok) throw new Error(`HubSpot journal file answered ${response.status}`);
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > MAX_FILE_BYTES) throw new Error(`HubSpot journal file of ${declared} bytes refused`);
  const text = await response.text();
  if (text.length > MAX_FILE_BYTES) throw new Error('HubSpot journal file too large');
  return JSON.parse(text);
}

export interface JournalPull {
  /** Contact events read from the journal. */
  readonly read: number;
  /** Of those, the ones no webhook had brought: queued now. */
  readonly recovered: number;
  /** Null when pulled; else why not (a static-token portal has no app to read a journal with). */
  readonly skipped: string | null;
}

export interface JournalDeps {
  readonly installations: Installations;
  readonly queue: JobQueue;
  readonly deliveries: InboundDeliveries;
  readonly now?: () => Date;
  /** The API's base URL of the files and calls (tests: the fake's). */
  readonly requestsPer10s?: number;
}

/** Pulls one installation's journal and queues what no webhook brought. */
export async function pullHubSpotJournal(installation: Installation, deps: JournalDeps): Promise<JournalPull> {
  const now = deps.now ?? (() => new Date());
  const credentials = HubSpotCredentialsSchema.parse((await deps.installations.secrets(installation.id)).crm);
  if (credentials.kind !== 'oauth' || credentials.clientId === null) {
    return { read: 0, recovered: 0, skipped: 'a static-token portal has no public app to read a journal with' };
  }
  const app = { ...credentials, clientId: credentials.clientId };
  const api = new HubSpotApi({
    portalId: installation.externalAccountId,
    apiBaseUrl: credentials.apiBaseUrl,
    accessToken: () => appToken(app, now),
    refreshAccessToken: () => appToken(app, now, true),
    ...(deps.requestsPer10s === undefined ? {} : { requestsPer10s: deps.requestsPer10s }),
    now,
  });
  const portal = installation.externalAccountId;
  if (!subscribed.has(installation.id)) {
    await ensureSubscription(api, portal);
    subscribed.add(installation.id);
  }
  const events: HubSpotEvent[] = [];
  let offset = offsets.get(installation.id);
  for (let call = 0; call < CALLS_PER_PULL; call += 1) {
    let batch: z.infer<typeof FetchBatchSchema>;
    try {
      const path = offset === undefined ? HUBSPOT_PATHS.journalEarliest(ENTRIES_PER_CALL) : HUBSPOT_PATHS.journalNext(offset, ENTRIES_PER_CALL);
      batch = await api.call('read journal', { method: 'GET', path, query: { installPortalId: portal } }, FetchBatchSchema);
    } catch (error) {
      // The offset expired (older than the journal keeps): start again from the earliest entry.
      if (offset !== undefined && error instanceof HubSpotApiError && error.status === 404) {
        offset = undefined;
        continue;
      }
      throw error;
    }
    for (const entry of batch.results) {
      events.push(...journalEvents(await fetchFile(entry.url), portal, entry.currentOffset));
      offset = entry.currentOffset;
    }
    if (batch.results.length < ENTRIES_PER_CALL) break;
  }
  if (offset !== undefined) offsets.set(installation.id, offset);
  const keys = new Map(events.map((event) => [hubspotEventKey(event), event]));
  const unseen = await deps.deliveries.unseen(HUBSPOT_EVENT_LEDGER, [...keys.keys()], now());
  const fresh = [...keys].filter(([key]) => unseen.has(key));
  if (fresh.length > 0) {
    const jobs: NewJob[] = [];
    for (let i = 0; i < fresh.length; i += MAX_EVENTS_PER_BATCH) {
      jobs.push({ installationId: installation.id, kind: HUBSPOT_EVENTS_JOB, payload: { events: fresh.slice(i, i + MAX_EVENTS_PER_BATCH).map(([, event]) => event) }, maxAttempts: 10 });
    }
    await deps.queue.enqueueMany(jobs);
    const freshKeys = fresh.map(([key]) => key);
    // Remembered as delivered at once, so a pull before the expansion does not queue them again.
    await deps.deliveries.remember(HUBSPOT_EVENT_LEDGER, freshKeys, now());
    await deps.deliveries.remember(recoveredEventsLedger(installation.id), freshKeys, now());
    eventsRecovered.inc({ provider: 'hubspot' }, fresh.length);
  }
  return { read: keys.size, recovered: fresh.length, skipped: null };
}

/** The job a worker's scheduler queues for an installation (one waiting at a time). */
export function journalJob(installationId: string): NewJob {
  return { installationId, kind: HUBSPOT_JOURNAL_JOB, payload: {}, maxAttempts: 3, dedupeKey: `${HUBSPOT_JOURNAL_JOB}:${installationId}` };
}
