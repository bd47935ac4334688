// The HubSpot API as the connector uses it, through @hubspot/api-client built without its own limiter
// or retries: pacing is ours (one Bottleneck per portal), and so is the reading of HubSpot's answers:
// TEN_SECONDLY_ROLLING 429s are waited out, DAILY 429s pause the installation, a 401 refreshes the
// token once, 207s are split per record.
import http from 'node:http';
import https from 'node:https';
import { Client } from '@hubspot/api-client';
import Bottleneck from 'bottleneck';
import { type Pacer, pacer } from '../../core/limits/pacing.ts';
import { crmCalls, rateLimited } from '../../core/observe/metrics.ts';
import { z } from 'zod';
import { abortable, outboundTimeouts } from '../../core/client/timeouts.ts';
import { type CallOptions, CrmError, CrmTimeoutError, type RecordUpdate, type WriteResult } from '../pipeline/connector.ts';
import type { CrmValue } from '../pipeline/model.ts';

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

/**
 * The options every SDK call is given as its last argument. The SDK (v13) applies its configured
 * middleware, the one that puts our per-attempt agent on the request among them, only to calls that
 * bring middleware of their own ("append": none more). Without them the agent is never used and a
 * timed-out call's socket stays open.
 */
export interface SdkOptions {
  readonly middleware: never[];
  readonly middlewareMergeStrategy: 'append';
}

/** Runs one SDK call with the client of the attempt; it must pass `sdk` as the call's options. */
export type SdkCall<T> = (client: Client, sdk: SdkOptions) => Promise<T>;

/** What an ApiException of the SDK carries, as far as we read it. */
interface SdkError {
  readonly code: number;
  readonly body: unknown;
  readonly headers: Record<string, string>;
}

function sdkError(error: unknown): SdkError | null {
  if (typeof error !== 'object' || error === null || !('code' in error) || typeof error.code !== 'number') return null;
  const headers = 'headers' in error && typeof error.headers === 'object' && error.headers !== null ? (error.headers as Record<string, string>) : {};
  return { code: error.code, body: 'body' in error ? error.body : undefined, headers };
}

const ErrorBodySchema = z
  .object({
    message: z.string().optional(),
    category: z.string().optional(),
    policyName: z.string().optional(),
    errorType: z.string().optional(),
    context: z.object({ ids: z.array(z.string()).optional() }).loose().optional(),
  })
  .loose();

function errorBody(body: unknown): z.infer<typeof ErrorBodySchema> {
  let value = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch {
      return { message: body.slice(0, 300) };
    }
  }
  const parsed = ErrorBodySchema.safeParse(value);
  return parsed.success ? parsed.data : {};
}

function retryAfterMs(headers: Record<string, string>): number | null {
  const raw = headers['retry-after'] ?? headers['Retry-After'];
  if (raw === undefined || !/^\d+$/.test(raw.trim())) return null;
  return Number(raw.trim()) * 1000;
}

const BatchErrorSchema = z
  .object({
    status: z.string().optional(),
    category: z.string().optional(),
    message: z.string().optional(),
    context: z.record(z.string(), z.unknown()).optional(),
  })
  .loose();

function idsOf(error: z.infer<typeof BatchErrorSchema>): string[] {
  const ids = error.context?.ids;
  return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === 'string') : [];
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

  private client(token: string, agent: http.Agent): Client {
    // No limiterOptions and no retries: the SDK then adds no decorators, so its process-wide decorator
    // list cannot leak another portal's limiter into this client. The agent is per-client too.
    return new Client({ accessToken: token, basePath: this.basePath(), numberOfApiCallRetries: 0, httpAgent: agent });
  }

  private basePath(): string {
    return this.options.apiBaseUrl ?? DEFAULT_HUBSPOT_API_BASE;
  }

  /**
   * One attempt, given up after the timeout or when `signal` aborts. The SDK (node-fetch) takes no
   * signal and sets no timeout, so each attempt gets an agent of its own, destroyed when the attempt
   * is given up: that closes its socket, and the SDK's request fails instead of waiting forever.
   */
  private async attempt<T>(what: string, token: string, run: SdkCall<T>, signal: AbortSignal | undefined): Promise<T> {
    const timeoutMs = this.options.timeoutMs ?? outboundTimeouts().hubspotMs;
    const timeout = AbortSignal.timeout(timeoutMs);
    const agent = this.basePath().startsWith('https:') ? new https.Agent({ keepAlive: false }) : new http.Agent({ keepAlive: false });
    try {
      const result = await abortable(run(this.client(token, agent), { middleware: [], middlewareMergeStrategy: 'append' }), signal === undefined ? timeout : AbortSignal.any([timeout, signal]));
      crmCalls.inc({ provider: 'hubspot', status: '2xx' });
      return result;
    } catch (error) {
      if (timeout.aborted && !(signal?.aborted ?? false)) {
        crmCalls.inc({ provider: 'hubspot', status: 'timeout' });
        throw new CrmTimeoutError(`HubSpot ${what}: no answer within ${timeoutMs} ms`);
      }
      const code = sdkError(error)?.code;
      crmCalls.inc({ provider: 'hubspot', status: code === undefined ? 'error' : String(code) });
      if (code === 429) rateLimited.inc({ direction: 'received', peer: 'hubspot' });
      throw error;
    } finally {
      agent.destroy();
    }
  }

  /**
   * One API call: paced, each attempt with a timeout, with HubSpot's answers turned into what the
   * pipeline acts on. `signal` gives it up at once, waiting in the limiter or in flight.
   */
  async call<T>(what: string, run: SdkCall<T>, options: CallOptions = {}): Promise<T> {
    const { signal } = options;
    return abortable(this.callPaced(what, run, signal), signal);
  }

  private async callPaced<T>(what: string, run: SdkCall<T>, signal: AbortSignal | undefined): Promise<T> {
    let token = await this.options.accessToken();
    let refreshed = false;
    for (let burst = 0; ; ) {
      if (signal?.aborted) throw signal.reason as Error;
      try {
        this.calls += 1;
        return await this.limiter.schedule(() => this.attempt(what, token, run, signal));
      } catch (error) {
        if (error instanceof CrmError || signal?.aborted) throw error;
        const e = sdkError(error);
        if (e === null) throw new CrmError('transient', `HubSpot ${what}: ${error instanceof Error ? error.message : String(error)}`);
        const body = errorBody(e.body);
        if (e.code === 401 && !refreshed && this.options.refreshAccessToken !== undefined) {
          const next = await this.options.refreshAccessToken();
          if (next !== null) {
            token = next;
            refreshed = true;
            continue;
          }
        }
        if (e.code === 429) {
          if (body.policyName === 'DAILY') {
            throw new CrmError('limit_exhausted', `HubSpot ${what}: daily API limit reached`, new Date(this.now().getTime() + DAILY_LIMIT_PROBE_MS));
          }
          // TEN_SECONDLY_ROLLING (or the search's secondly limit): wait and go on.
          const wait = retryAfterMs(e.headers) ?? (body.policyName === undefined ? 1_000 : 10_000);
          if (burst < BURST_RETRIES) {
            burst += 1;
            await this.sleep(wait);
            continue;
          }
          throw new CrmError('rate_limited', `HubSpot ${what}: rate limited`, new Date(this.now().getTime() + wait));
        }
        if (e.code === 401 || e.code === 403) {
          throw new CrmError('auth', `HubSpot ${what}: ${e.code} ${body.message ?? 'unauthorized'}`);
        }
        throw new HubSpotApiError(what, e.code, body.message ?? `HTTP ${e.code}`, body.category ?? null, body.context?.ids ?? []);
      }
    }
  }

  /** Batch-reads contacts (≤ 100) with exactly `properties`; ids HubSpot does not return are missing. */
  async readContacts(ids: readonly string[], properties: readonly string[], options: CallOptions = {}): Promise<Map<string, Record<string, CrmValue>>> {
    if (ids.length > HUBSPOT_BATCH_LIMIT) throw new Error(`at most ${HUBSPOT_BATCH_LIMIT} contacts per batch read`);
    const response = await this.call(
      'batch read contacts',
      (client, sdk) => client.crm.contacts.batchApi.read({ inputs: ids.map((id) => ({ id })), properties: [...properties], propertiesWithHistory: [] }, false, sdk),
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
   * records; when HubSpot refuses a whole batch for records that no longer exist, those are reported
   * not_found and the rest are sent again.
   */
  async updateContacts(updates: readonly RecordUpdate[], options: CallOptions = {}): Promise<WriteResult[]> {
    if (updates.length > HUBSPOT_BATCH_LIMIT) throw new Error(`at most ${HUBSPOT_BATCH_LIMIT} contacts per batch update`);
    if (updates.length === 0) return [];
    const inputs = updates.map((u) => ({
      id: u.id,
      properties: Object.fromEntries(Object.entries(u.properties).map(([k, v]) => [k, v === null ? '' : String(v)])),
    }));
    let response;
    try {
      response = await this.call('batch update contacts', (client, sdk) => client.crm.contacts.batchApi.update({ inputs }, sdk), options);
    } catch (error) {
      if (error instanceof HubSpotApiError && error.ids.length > 0 && error.status >= 400 && error.status < 500) {
        const gone = new Set(error.ids);
        const rest = updates.filter((u) => !gone.has(u.id));
        const missing: WriteResult[] = updates
          .filter((u) => gone.has(u.id))
          .map((u) => ({ id: u.id, ok: false, reason: 'not_found', message: error.message }));
        if (rest.length === updates.length) throw error;
        return [...missing, ...(await this.updateContacts(rest, options))];
      }
      if (error instanceof HubSpotApiError) {
        const reason = error.status >= 500 ? 'transient' : 'rejected';
        return updates.map((u) => ({ id: u.id, ok: false, reason, message: error.message }));
      }
      throw error;
    }
    const failed = new Map<string, WriteResult>();
    const errors = 'errors' in response && Array.isArray(response.errors) ? (response.errors as unknown[]) : [];
    for (const raw of errors) {
      const parsed = BatchErrorSchema.safeParse(raw);
      if (!parsed.success) continue;
      const notFound = parsed.data.category === 'OBJECT_NOT_FOUND';
      for (const id of idsOf(parsed.data)) {
        failed.set(id, { id, ok: false, reason: notFound ? 'not_found' : 'rejected', message: parsed.data.message ?? parsed.data.category ?? 'error' });
      }
    }
    const written = new Set(response.results.map((r) => r.id));
    return updates.map((u): WriteResult => {
      const failure = failed.get(u.id);
      if (failure !== undefined) return failure;
      if (written.has(u.id)) return { id: u.id, ok: true };
      return { id: u.id, ok: false, reason: 'transient', message: 'HubSpot returned neither a result nor an error for the record' };
    });
  }

  /** One page of contacts, oldest id first (the list endpoint: no 10,000 cap, unlike search). */
  async listContacts(after: string | null, properties: readonly string[], limit = HUBSPOT_BATCH_LIMIT): Promise<ContactPage> {
    const page = await this.call('list contacts', (client, sdk) =>
      client.crm.contacts.basicApi.getPage(limit, after ?? undefined, [...properties], undefined, undefined, false, sdk),
    );
    return {
      contacts: page.results.map((r) => ({ id: r.id, properties: Object.fromEntries(properties.map((p) => [p, r.properties[p] ?? null])) })),
      after: page.paging?.next?.after ?? null,
    };
  }
}

/** A HubSpot answer other than 401/403/429, with what it says about which records. */
export class HubSpotApiError extends CrmError {
  constructor(
    what: string,
    readonly status: number,
    message: string,
    readonly category: string | null,
    readonly ids: readonly string[],
  ) {
    // Retried by the queue with backoff, then dead-lettered: a 4xx that persists ends there for an operator.
    super('transient', `HubSpot ${what}: ${status} ${message}`);
    this.name = 'HubSpotApiError';
  }
}
