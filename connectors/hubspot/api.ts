// The HubSpot API as the connector uses it: plain fetch on the one date-based version (version.ts), each
// call with our timeout and its answer parsed with zod. Pacing is ours (one Bottleneck per portal), and so
// is the reading of HubSpot's answers: TEN_SECONDLY_ROLLING 429s are waited out, DAILY 429s pause the
// installation, a 401 refreshes the token once, and 207s and validation refusals are split per record.
import Bottleneck from 'bottleneck';
import { z } from 'zod';
import { abortable, outboundTimeouts } from '../../core/client/timeouts.ts';
import { type Pacer, pacer } from '../../core/limits/pacing.ts';
import { crmCalls, rateLimited } from '../../core/observe/metrics.ts';
import { type CallOptions, CrmError, CrmTimeoutError, type RecordUpdate, type WriteResult } from '../../bridge/connector.ts';
import type { CrmValue } from '../../bridge/model.ts';
import { type HubSpotErrorBody, HubSpotErrorSchema, errorIds, errorSummary, hubspotErrorBody, refusalOf, refusalSentence } from './refusals.ts';
import { HUBSPOT_PATHS } from './version.ts';

export const DEFAULT_HUBSPOT_API_BASE = 'https://api.hubapi.com';
/** HubSpot's batch endpoints take at most 100 records. */
export const HUBSPOT_BATCH_LIMIT = 100;
/** OAuth apps: 110 requests per 10 s per installing account (search excluded). */
export const DEFAULT_REQUESTS_PER_10S = 110;
/** How long a DAILY 429 pauses an installation before we look again (HubSpot resets at the portal's midnight). */
export const DAILY_LIMIT_PROBE_MS = 60 * 60_000;
/** TEN_SECONDLY_ROLLING 429s waited out in one call before the batch is handed back to the queue. */
const BURST_RETRIES = 3;
/**
 * Calls one batch may spend finding which records a whole-request validation refusal meant: enough to
 * find one or two refused records among 100 (about 2 log2 n each), far from the 2n − 1 of a rule that
 * refuses every record.
 */
const NARROWING_CALLS = 24;

/**
 * One limiter per portal in this process: every API call of an installation goes through it. minTime
 * spaces calls so no rolling 10-second window holds more than the limit.
 */
const portalLimiters = new Bottleneck.Group({ maxConcurrent: 6, minTime: Math.ceil(10_000 / DEFAULT_REQUESTS_PER_10S) });

export function portalLimiter(portalId: string, requestsPer10s: number = DEFAULT_REQUESTS_PER_10S): Pacer {
  const limiter = portalLimiters.key(portalId);
  const minTime = Math.ceil(10_000 / requestsPer10s);
  limiter.updateSettings({ minTime });
  // Shared across processes with REDIS_URL (core/limits/pacing.ts): the portal's limit is one budget.
  return pacer(limiter, `hubspot:${portalId}`, minTime);
}

/** Joins a base URL and a path by appending: a base with a path of its own (a proxy, a fake) keeps it. */
export function hubspotUrl(apiBaseUrl: string, path: string, query: Readonly<Record<string, string | readonly string[] | undefined>> = {}): URL {
  const url = new URL(`${apiBaseUrl.replace(/\/+$/, '')}${path}`);
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    for (const one of typeof value === 'string' ? [value] : value) url.searchParams.append(key, one);
  }
  return url;
}

/** One HTTP request of the API: its method, path (from HUBSPOT_PATHS), query and JSON body. */
export interface HubSpotRequest {
  readonly method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  readonly path: string;
  readonly query?: Readonly<Record<string, string | readonly string[] | undefined>>;
  readonly body?: unknown;
}

/** An answer other than 2xx, before it is read into what the pipeline acts on. */
class HttpAnswer extends Error {
  constructor(
    readonly status: number,
    readonly body: HubSpotErrorBody,
    readonly retryAfter: string | null,
  ) {
    super(`HTTP ${status}`);
  }
}

function retryAfterMs(raw: string | null): number | null {
  if (raw === null || !/^\d+$/.test(raw.trim())) return null;
  return Number(raw.trim()) * 1000;
}

export interface HubSpotApiOptions {
  readonly portalId: string;
  readonly apiBaseUrl?: string;
  /** The current access token (refreshed ahead of expiry by the caller's token source). */
  readonly accessToken: () => Promise<string>;
  /** Called after a 401: refresh now and return the new token, or null when there is no way to. */
  readonly refreshAccessToken?: () => Promise<string | null>;
  readonly requestsPer10s?: number;
  /** Per call, the answer's body included (default: the process's HUBSPOT_TIMEOUT_MS). */
  readonly timeoutMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly now?: () => Date;
}

export interface ContactPage {
  readonly contacts: { id: string; properties: Record<string, CrmValue> }[];
  readonly after: string | null;
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// The answers we read, as HubSpot's OpenAPI documents give them (only the fields we use; the rest pass).
const ObjectSchema = z.object({ id: z.string(), properties: z.record(z.string(), z.string().nullable()).default({}) }).loose();
/** Each error of a 207 is read on its own (`entries`): one HubSpot wrote differently must not cost the others. */
const BatchObjectsSchema = z.object({ results: z.array(ObjectSchema), errors: z.array(z.unknown()).optional() }).loose();
const PageSchema = z
  .object({
    results: z.array(ObjectSchema),
    paging: z
      .object({ next: z.object({ after: z.string() }).loose().optional() })
      .loose()
      .optional(),
  })
  .loose();
/** Any 2xx whose body we do not read (a 204, or one we only need to have succeeded). */
export const Ignored = z.unknown();

export class HubSpotApi {
  private readonly limiter: Pacer;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly now: () => Date;
  /** API calls made (each attempt), for the enrichment figures. */
  calls = 0;

  constructor(private readonly options: HubSpotApiOptions) {
    this.limiter = portalLimiter(options.portalId, options.requestsPer10s);
    this.sleep = options.sleep ?? realSleep;
    this.now = options.now ?? (() => new Date());
  }

  private basePath(): string {
    return this.options.apiBaseUrl ?? DEFAULT_HUBSPOT_API_BASE;
  }

  /** One attempt, given up after the timeout (the body included) or when `signal` aborts. */
  private async attempt<T>(what: string, token: string, request: HubSpotRequest, schema: z.ZodType<T>, signal: AbortSignal | undefined): Promise<T> {
    const timeoutMs = this.options.timeoutMs ?? outboundTimeouts().hubspotMs;
    const timeout = AbortSignal.timeout(timeoutMs);
    let status: number;
    let text: string;
    let retryAfter: string | null;
    try {
      const response = await fetch(hubspotUrl(this.basePath(), request.path, request.query), {
        method: request.method,
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json',
          ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
        signal: signal === undefined ? timeout : AbortSignal.any([timeout, signal]),
      });
      status = response.status;
      retryAfter = response.headers.get('retry-after');
      text = await response.text();
    } catch (error) {
      if (timeout.aborted && !(signal?.aborted ?? false)) {
        crmCalls.inc({ provider: 'hubspot', status: 'timeout' });
        throw new CrmTimeoutError(`HubSpot ${what}: no answer within ${timeoutMs} ms`);
      }
      if (signal?.aborted === true) throw signal.reason as Error;
      crmCalls.inc({ provider: 'hubspot', status: 'error' });
      // The cause's text only (never the request: it carries the token in a header).
      throw new CrmError('transient', `HubSpot ${what}: ${error instanceof Error ? error.message : 'no answer'}`);
    }
    if (status < 200 || status >= 300) {
      crmCalls.inc({ provider: 'hubspot', status: String(status) });
      if (status === 429) rateLimited.inc({ direction: 'received', peer: 'hubspot' });
      throw new HttpAnswer(status, hubspotErrorBody(text), retryAfter);
    }
    crmCalls.inc({ provider: 'hubspot', status: '2xx' });
    let json: unknown = undefined;
    if (text !== '') {
      try {
        json = JSON.parse(text);
      } catch {
        throw new CrmError('transient', `HubSpot ${what}: ${status} with a body that is not JSON`);
      }
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw new CrmError('transient', `HubSpot ${what}: ${status} with an answer not in HubSpot's documented shape`);
    // A 207's errors travel with its results; callers that split per record read them.
    return parsed.data;
  }

  /**
   * One API call: paced, each attempt with a timeout, with HubSpot's answers turned into what the
   * pipeline acts on. `signal` gives it up at once, waiting in the limiter or in flight.
   */
  async call<T>(what: string, request: HubSpotRequest, schema: z.ZodType<T>, options: CallOptions = {}): Promise<T> {
    const { signal } = options;
    return abortable(this.callPaced(what, request, schema, signal), signal);
  }

  private async callPaced<T>(what: string, request: HubSpotRequest, schema: z.ZodType<T>, signal: AbortSignal | undefined): Promise<T> {
    let token = await this.options.accessToken();
    let refreshed = false;
    for (let burst = 0; ;) {
      if (signal?.aborted) throw signal.reason as Error;
      try {
        this.calls += 1;
        return await this.limiter.schedule(() => this.attempt(what, token, request, schema, signal));
      } catch (error) {
        if (!(error instanceof HttpAnswer) || signal?.aborted) throw error;
        const { status, body } = error;
        if (status === 401 && !refreshed && this.options.refreshAccessToken !== undefined) {
          const next = await this.options.refreshAccessToken();
          if (next !== null) {
            token = next;
            refreshed = true;
            continue;
          }
        }
        if (status === 429) {
          if (body.policyName === 'DAILY') {
            throw new CrmError('limit_exhausted', `HubSpot ${what}: daily API limit reached`, new Date(this.now().getTime() + DAILY_LIMIT_PROBE_MS));
          }
          // TEN_SECONDLY_ROLLING (or the search's secondly limit): wait and go on.
          const wait = retryAfterMs(error.retryAfter) ?? (body.policyName === undefined ? 1_000 : 10_000);
          if (burst < BURST_RETRIES) {
            burst += 1;
            await this.sleep(wait);
            continue;
          }
          throw new CrmError('rate_limited', `HubSpot ${what}: rate limited`, new Date(this.now().getTime() + wait));
        }
        // A property the portal marked sensitive is refused with a 403 naming a sensitive-data scope:
        // that is about the record's values, not our credentials (the caller splits it per record).
        if (status === 403 && refusalOf(body).kind === 'sensitive') throw new HubSpotApiError(what, status, body);
        if (status === 401 || status === 403) {
          throw new CrmError('auth', `HubSpot ${what}: ${status} ${errorSummary(body)}`);
        }
        throw new HubSpotApiError(what, status, body);
      }
    }
  }

  /**
   * Batch-reads contacts (≤ 100) with exactly `properties`; ids HubSpot does not return are missing.
   * Docs: https://developers.hubspot.com/docs/api-reference/latest/crm/objects/contacts/batch/read-contacts
   */
  async readContacts(ids: readonly string[], properties: readonly string[], options: CallOptions = {}): Promise<Map<string, Record<string, CrmValue>>> {
    if (ids.length > HUBSPOT_BATCH_LIMIT) throw new Error(`at most ${HUBSPOT_BATCH_LIMIT} contacts per batch read`);
    const response = await this.call(
      'batch read contacts',
      {
        method: 'POST',
        path: HUBSPOT_PATHS.contactsBatchRead,
        query: { archived: 'false' },
        body: { inputs: ids.map((id) => ({ id })), properties: [...properties], propertiesWithHistory: [] },
      },
      BatchObjectsSchema,
      options,
    );
    const requested = new Set(ids);
    const found = new Map<string, Record<string, CrmValue>>();
    for (const result of response.results) {
      // A merged-away id comes back as the survivor's record under the survivor's id: that is not
      // the record asked for (the merge event moves our state), so it counts as gone.
      if (!requested.has(result.id)) continue;
      found.set(result.id, Object.fromEntries(properties.map((p) => [p, result.properties[p] ?? null])));
    }
    return found;
  }

  /**
   * Batch-updates contacts (≤ 100), one result per update. A 207's errors are matched to their
   * records. A whole-batch 4xx that names records (gone, refused by a validation rule) ends those and
   * sends the rest again; a validation refusal that names none is narrowed down by halves, so one
   * record a portal's rule refuses never keeps the others of its batch unwritten.
   * Docs: https://developers.hubspot.com/docs/api-reference/latest/crm/objects/contacts/batch/update-contacts
   */
  async updateContacts(updates: readonly RecordUpdate[], options: CallOptions = {}): Promise<WriteResult[]> {
    if (updates.length > HUBSPOT_BATCH_LIMIT) throw new Error(`at most ${HUBSPOT_BATCH_LIMIT} contacts per batch update`);
    return this.writeContacts(updates, options, { narrowingCalls: NARROWING_CALLS });
  }

  /**
   * One batch update and what its answer says of each record. `budget` bounds the calls spent finding
   * which records a whole-request refusal meant: past it, the records not yet told apart are handed
   * back as transient (tried again later, in other batches).
   */
  private async writeContacts(updates: readonly RecordUpdate[], options: CallOptions, budget: { narrowingCalls: number }): Promise<WriteResult[]> {
    if (updates.length === 0) return [];
    const inputs = updates.map((u) => ({
      id: u.id,
      properties: Object.fromEntries(Object.entries(u.properties).map(([k, v]) => [k, v === null ? '' : String(v)])),
    }));
    let response;
    try {
      response = await this.call(
        'batch update contacts',
        { method: 'POST', path: HUBSPOT_PATHS.contactsBatchUpdate, body: { inputs } },
        BatchObjectsSchema,
        options,
      );
    } catch (error) {
      if (!(error instanceof HubSpotApiError)) throw error;
      return this.refusedWhole(updates, error, options, budget);
    }
    const failed = new Map<string, WriteResult>();
    for (const raw of response.errors ?? []) {
      const entry = HubSpotErrorSchema.safeParse(raw);
      if (!entry.success) continue;
      const refusal = refusalOf(entry.data);
      const ids = errorIds(entry.data);
      // An error without ids is no record's: those records end transient below, as with no answer.
      for (const id of ids) failed.set(id, refusedResult(id, refusal, errorSummary(entry.data)));
    }
    const written = new Set(response.results.map((r) => r.id));
    return updates.map((u): WriteResult => {
      const failure = failed.get(u.id);
      if (failure !== undefined) return failure;
      if (written.has(u.id)) return { id: u.id, ok: true };
      return { id: u.id, ok: false, reason: 'transient', message: 'HubSpot returned neither a result nor an error for the record' };
    });
  }

  /**
   * A batch HubSpot refused as a whole (4xx/5xx other than 401/403/429): the records it names end with
   * its reason and the rest are sent again; a validation refusal that names none is narrowed down by
   * halves; anything else ends every record alike.
   */
  private async refusedWhole(
    updates: readonly RecordUpdate[],
    error: HubSpotApiError,
    options: CallOptions,
    budget: { narrowingCalls: number },
  ): Promise<WriteResult[]> {
    if (error.status >= 500) return updates.map((u) => ({ id: u.id, ok: false, reason: 'transient', message: error.message }));
    const refusal = refusalOf(error.body);
    const named = new Set(error.ids);
    const sendAgain = async (refused: readonly RecordUpdate[], rest: readonly RecordUpdate[]) => [
      ...refused.map((u) => refusedResult(u.id, refusal, error.message)),
      ...(await this.settle(rest, options, budget)),
    ];
    if (named.size > 0 && updates.some((u) => named.has(u.id))) {
      return sendAgain(
        updates.filter((u) => named.has(u.id)),
        updates.filter((u) => !named.has(u.id)),
      );
    }
    const byProperty = refusal.kind === 'sensitive' || (refusal.kind === 'validation' && refusal.cause !== 'rule');
    if (byProperty && refusal.properties.length > 0) {
      // Refused wherever they are written, and named: the records that write one are refused, the others sent again.
      const writes = (u: RecordUpdate) => refusal.properties.some((p) => p in u.properties);
      if (updates.some(writes))
        return sendAgain(
          updates.filter(writes),
          updates.filter((u) => !writes(u)),
        );
    }
    if ((refusal.kind === 'validation' || refusal.kind === 'sensitive') && updates.length > 1) {
      if (budget.narrowingCalls < 2) {
        return updates.map((u) => ({
          id: u.id,
          ok: false,
          reason: 'transient',
          message: `${error.message} (not yet told apart from the other records of its batch; tried again later)`,
        }));
      }
      // Which record(s) the rule refused is not said: halves, each written or narrowed again.
      budget.narrowingCalls -= 2;
      const middle = Math.ceil(updates.length / 2);
      return [...(await this.settle(updates.slice(0, middle), options, budget)), ...(await this.settle(updates.slice(middle), options, budget))];
    }
    // Not about any one record (a 404 for the whole request, …): every record alike, and gone only when named.
    return updates.map((u) =>
      refusal.kind === 'not_found' ? { id: u.id, ok: false, reason: 'rejected', message: error.message } : refusedResult(u.id, refusal, error.message),
    );
  }

  /**
   * Writes records found while answering a refusal; a call that then fails (a 429, a timeout) hands
   * these back as transient, so what was already learnt of the others is kept.
   */
  private async settle(updates: readonly RecordUpdate[], options: CallOptions, budget: { narrowingCalls: number }): Promise<WriteResult[]> {
    try {
      return await this.writeContacts(updates, options, budget);
    } catch (error) {
      if (options.signal?.aborted === true) throw error;
      const message = error instanceof Error ? error.message : String(error);
      return updates.map((u) => ({ id: u.id, ok: false, reason: 'transient', message }));
    }
  }

  /**
   * One page of contacts, oldest id first (the list endpoint: no 10,000 cap, unlike search).
   * Docs: https://developers.hubspot.com/docs/api-reference/latest/crm/objects/contacts/basic/list-contacts
   */
  async listContacts(after: string | null, properties: readonly string[], limit = HUBSPOT_BATCH_LIMIT): Promise<ContactPage> {
    const page = await this.call(
      'list contacts',
      {
        method: 'GET',
        path: HUBSPOT_PATHS.contacts,
        query: { limit: String(limit), after: after ?? undefined, properties: properties.length === 0 ? undefined : [...properties], archived: 'false' },
      },
      PageSchema,
    );
    return {
      contacts: page.results.map((r) => ({ id: r.id, properties: Object.fromEntries(properties.map((p) => [p, r.properties[p] ?? null])) })),
      after: page.paging?.next?.after ?? null,
    };
  }
}

/** A record HubSpot did not take, as the pipeline acts on it: gone, refused for good (with the admin's sentence), or rejected. */
function refusedResult(id: string, refusal: ReturnType<typeof refusalOf>, fallback: string): WriteResult {
  if (refusal.kind === 'not_found') return { id, ok: false, reason: 'not_found', message: fallback };
  if (refusal.kind === 'validation' || refusal.kind === 'sensitive') return { id, ok: false, reason: refusal.kind, message: refusalSentence(refusal) };
  return { id, ok: false, reason: 'rejected', message: fallback };
}

/**
 * A HubSpot answer other than 401/403/429, with what it says about which records. Its message names the
 * status, category, codes and correlation id only (errorSummary): the body's prose quotes values.
 */
export class HubSpotApiError extends CrmError {
  readonly category: string | null;
  readonly correlationId: string | null;
  readonly ids: readonly string[];

  constructor(
    what: string,
    readonly status: number,
    readonly body: HubSpotErrorBody,
  ) {
    // Retried by the queue with backoff, then dead-lettered: a 4xx that persists ends there for an operator.
    super('transient', `HubSpot ${what}: ${status} ${errorSummary(body)}`);
    this.name = 'HubSpotApiError';
    this.category = body.category ?? null;
    this.correlationId = body.correlationId ?? null;
    this.ids = errorIds(body);
  }
}
