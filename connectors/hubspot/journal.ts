// HubSpot's Webhooks Journal: the events HubSpot keeps for 3 days for each installed portal's journal
// subscription, pulled to recover what the webhooks did not bring (our server down past HubSpot's
// retries). A job per OAuth installation, at most hourly whichever worker or instance runs it, reads
// the portal's journal from the offset the last pull saved (in the database), up to the entries
// HubSpot may still be retrying as webhooks (the last 24 hours), keeps the contact events the
// delivery ledger has not seen, and stores them as a webhook batch would be, so the same expansion
// applies them. The offset moves only once what it passed over is queued.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { eventsRecovered } from '../../core/observe/metrics.ts';
import { outboundTimeouts } from '../../core/client/timeouts.ts';
import { type InboundDeliveries, recoveredEventsLedger } from '../../bridge/deliveries.ts';
import type { Installations } from '../../bridge/installations.ts';
import type { JobQueue, NewJob } from '../../bridge/job-queue.ts';
import type { Installation } from '../../bridge/model.ts';
import { HubSpotApi, HubSpotApiError, Ignored } from './api.ts';
import { type HubSpotCredentials, HubSpotCredentialsSchema, requestToken } from './auth.ts';
import { HUBSPOT_EVENTS_JOB, HUBSPOT_EVENT_LEDGER, type HubSpotEvent, MAX_EVENTS_PER_BATCH, hubspotEventKey } from './intake.ts';
import { HubSpotIdSchema } from './ids.ts';
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
/**
 * HubSpot retries a webhook up to 10 times over 24 hours: an event younger than that may still come
 * as a webhook, so the journal is read up to it and no further (the next pull goes on from there).
 */
export const WEBHOOK_RETRY_WINDOW_MS = 24 * 3600_000;
/** A pull within this long of the last one (another worker's, another instance's) is not made again. */
const MIN_PULL_SPACING_MS = 50 * 60_000;
const offsetLedger = (installationId: string) => `hubspot-journal-offset:${installationId}`;
const pulledLedger = (installationId: string) => `hubspot-journal-pulled:${installationId}`;
/** HubSpot's object type id of contacts. */
const CONTACT_TYPE = '0-1';

/** What the app's client-credentials token asks for: reading the journal and keeping its subscription. */
export const JOURNAL_SCOPES = [
  'developer.webhooks_journal.read',
  'developer.webhooks_journal.subscriptions.read',
  'developer.webhooks_journal.subscriptions.write',
  'crm.objects.contacts.read',
] as const;

const NumericId = HubSpotIdSchema;

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

const IDENTITY = new Set<string>(HUBSPOT_IDENTITY_PROPERTIES);

/** Journal files and events that could not be read, in this process (a layout other than the one expected shows here first). */
const unreadable = { count: 0 };

/** A journal file's contact events of one portal, as the webhook events they stand for (merges are left to the webhooks). */
export function journalEvents(file: unknown, portalId: string, fileOffset: string): HubSpotEvent[] {
  const parsed = JournalFileSchema.safeParse(file);
  if (!parsed.success) {
    unreadable.count += 1;
    return [];
  }
  const events: HubSpotEvent[] = [];
  for (const [index, raw] of parsed.data.journalEvents.entries()) {
    const event = JournalEventSchema.safeParse(raw);
    if (!event.success) {
      unreadable.count += 1;
      continue;
    }
    if (event.data.portalId !== portalId || (event.data.objectTypeId ?? CONTACT_TYPE) !== CONTACT_TYPE) continue;
    const base = {
      eventId: `journal:${fileOffset}:${index}`,
      portalId,
      objectId: event.data.objectId,
      occurredAt: event.data.occurredAt,
      changeSource: 'JOURNAL',
    };
    switch (event.data.action) {
      case 'CREATE':
        events.push({ ...base, subscriptionType: 'contact.creation' });
        break;
      case 'UPDATE':
        for (const propertyName of changedProperties(event.data.propertyChanges).filter((name) => IDENTITY.has(name)))
          events.push({ ...base, eventId: `${base.eventId}:${propertyName}`, subscriptionType: 'contact.propertyChange', propertyName });
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

/** The app's client-credentials tokens, by base URL, client id and secret, while they have more than a minute left. */
const appTokens = new Map<string, { token: string; expiresAt: number }>();

async function appToken(credentials: HubSpotCredentials & { clientId: string }, now: () => Date, fresh = false): Promise<string> {
  // An installation with another base URL or secret never gets a token another one obtained.
  const key = `${credentials.apiBaseUrl}\n${credentials.clientId}\n${createHash('sha256').update(credentials.clientSecret).digest('hex')}`;
  const cached = appTokens.get(key);
  if (!fresh && cached !== undefined && cached.expiresAt - now().getTime() > 60_000) return cached.token;
  // Docs: https://developers.hubspot.com/docs/api-reference/latest/webhooks-journal/guide
  const token = await requestToken(credentials.apiBaseUrl, {
    grant_type: 'client_credentials',
    client_id: credentials.clientId,
    client_secret: credentials.clientSecret,
    scope: JOURNAL_SCOPES.join(' '),
  });
  appTokens.set(key, { token: token.access_token, expiresAt: now().getTime() + token.expires_in * 1000 });
  return token.access_token;
}

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

/**
 * A journal file, fetched from its pre-signed URL without our token, within the HubSpot timeout and a
 * byte bound: only over https (or from the API's own origin, a stand-in for QA), no redirect.
 */
async function fetchFile(url: string, apiBaseUrl: string): Promise<unknown> {
  const target = new URL(url);
  if (target.protocol !== 'https:' && target.origin !== new URL(apiBaseUrl).origin) throw new Error('HubSpot journal file URL is not https');
  const response = await fetch(target, {
    signal: AbortSignal.timeout(outboundTimeouts().hubspotMs),
    redirect: 'error',
    headers: { accept: 'application/json' },
  });
  if (!response.ok || response.body === null) throw new Error(`HubSpot journal file answered ${response.status}`);
  const chunks: Uint8Array[] = [];
  let bytes = 0;
  for await (const chunk of response.body) {
    bytes += chunk.byteLength;
    if (bytes > MAX_FILE_BYTES) throw new Error(`HubSpot journal file over ${MAX_FILE_BYTES} bytes refused`);
    chunks.push(chunk);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

export interface JournalPull {
  /** Contact events read from the journal. */
  readonly read: number;
  /** Files and events that could not be read (skipped). */
  readonly unreadable?: number;
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
  const lastPull = await deps.deliveries.latest(pulledLedger(installation.id), now());
  if (lastPull !== null && now().getTime() - lastPull.at.getTime() < MIN_PULL_SPACING_MS) {
    return { read: 0, recovered: 0, skipped: 'pulled less than an hour ago' };
  }
  if (!subscribed.has(installation.id)) {
    await ensureSubscription(api, portal);
    subscribed.add(installation.id);
  }
  const floor = now().getTime() - WEBHOOK_RETRY_WINDOW_MS;
  let offset = (await deps.deliveries.latest(offsetLedger(installation.id), now()))?.id;
  let read = 0;
  let recovered = 0;
  const unreadableBefore = unreadable.count;
  pages: for (let call = 0; call < CALLS_PER_PULL; call += 1) {
    let batch: z.infer<typeof FetchBatchSchema>;
    try {
      const path = offset === undefined ? HUBSPOT_PATHS.journalEarliest(ENTRIES_PER_CALL) : HUBSPOT_PATHS.journalNext(offset, ENTRIES_PER_CALL);
      batch = await api.call('read journal', { method: 'GET', path, query: { installPortalId: portal } }, FetchBatchSchema);
    } catch (error) {
      // The offset expired (older than the journal keeps): start again from the earliest entry.
      if (offset !== undefined && error instanceof HubSpotApiError && error.status === 404) {
        await deps.deliveries.forget(offsetLedger(installation.id));
        offset = undefined;
        continue;
      }
      throw error;
    }
    for (const entry of batch.results) {
      const events = journalEvents(await fetchFile(entry.url, credentials.apiBaseUrl), portal, entry.currentOffset);
      // An entry HubSpot may still be retrying as webhooks: left for a later pull, and so is all after it.
      if (events.some((event) => event.occurredAt > floor)) break pages;
      read += events.length;
      recovered += await queueUnseen(installation, events, deps, now);
      // Past this entry only once its events are queued: a failure before this reads it again.
      offset = entry.currentOffset;
      await saveOffset(deps.deliveries, installation.id, offset, now());
    }
    if (batch.results.length < ENTRIES_PER_CALL) break;
  }
  await deps.deliveries.remember(pulledLedger(installation.id), [now().toISOString()], now());
  const skippedEvents = unreadable.count - unreadableBefore;
  return { read, recovered, skipped: null, ...(skippedEvents > 0 ? { unreadable: skippedEvents } : {}) };
}

/** The installation's journal offset: one row, replaced (the ledger's rows of one provider, kept 4 days like the journal's 3). */
async function saveOffset(deliveries: InboundDeliveries, installationId: string, offset: string, at: Date): Promise<void> {
  await deliveries.forget(offsetLedger(installationId));
  await deliveries.remember(offsetLedger(installationId), [offset], at);
}

/** Queues the events the ledger has not seen as one webhook batch job each 100; returns how many. */
async function queueUnseen(installation: Installation, events: readonly HubSpotEvent[], deps: JournalDeps, now: () => Date): Promise<number> {
  const keys = new Map(events.map((event) => [hubspotEventKey(event), event]));
  if (keys.size === 0) return 0;
  const unseen = await deps.deliveries.unseen(HUBSPOT_EVENT_LEDGER, [...keys.keys()], now());
  const fresh = [...keys].filter(([key]) => unseen.has(key));
  if (fresh.length === 0) return 0;
  const jobs: NewJob[] = [];
  for (let i = 0; i < fresh.length; i += MAX_EVENTS_PER_BATCH) {
    jobs.push({
      installationId: installation.id,
      kind: HUBSPOT_EVENTS_JOB,
      payload: { events: fresh.slice(i, i + MAX_EVENTS_PER_BATCH).map(([, event]) => event) },
      maxAttempts: 10,
    });
  }
  await deps.queue.enqueueMany(jobs);
  const freshKeys = fresh.map(([key]) => key);
  // Remembered as delivered at once, so a pull before the expansion does not queue them again.
  await deps.deliveries.remember(HUBSPOT_EVENT_LEDGER, freshKeys, now());
  await deps.deliveries.remember(recoveredEventsLedger(installation.id), freshKeys, now());
  eventsRecovered.inc({ provider: 'hubspot' }, fresh.length);
  return fresh.length;
}

/** The job a worker's scheduler queues for an installation (one waiting at a time; a failed pull waits for the next hour). */
export function journalJob(installationId: string): NewJob {
  return { installationId, kind: HUBSPOT_JOURNAL_JOB, payload: {}, maxAttempts: 1, dedupeKey: `${HUBSPOT_JOURNAL_JOB}:${installationId}` };
}
