// The Enricher port the CRM pipeline enriches through, and the one policy both adapters share:
// pacing per API token (Bottleneck), bounded retries with backoff and jitter, and outcome classes.
import { loggableMessage, maskPersonalText } from '../observe/loggable-errors.ts';
import { createHash } from 'node:crypto';
import Bottleneck from 'bottleneck';
import { type Pacer, pacer } from '../limits/pacing.ts';
import { JITTER_ALLOWANCE_MS } from '../limits/rate-limiter.ts';
import { rateLimited } from '../observe/metrics.ts';
import { type EnrichmentRequest, type EnrichmentResponse, EnrichmentResponseSchema } from '../contract/schemas.ts';
import { abortable, isTimeout } from './timeouts.ts';

/** What one enrichment came to, as the pipeline acts on it. A no-match is an `ok`. */
export type EnrichOutcome =
  | { readonly kind: 'ok'; readonly response: EnrichmentResponse; readonly attempts: number; readonly dataVersion: string | null }
  /** 402: stop sending for this installation until the quota refreshes (null: it never does). */
  | { readonly kind: 'quota_exhausted'; readonly resetsAt: Date | null; readonly attempts: number }
  /** 400, 401, 403 and other refusals: retrying cannot help. */
  | { readonly kind: 'rejected'; readonly status: number; readonly message: string; readonly attempts: number }
  /**
   * 429, 5xx or network failures that outlasted every retry; `timedOut` when the endpoint did not answer
   * within its timeout (not retried here: a hanging endpoint would cost a timeout per retry).
   */
  | { readonly kind: 'failed'; readonly status: number | null; readonly message: string; readonly attempts: number; readonly timedOut?: boolean };

export interface EnrichOptions {
  /** Gives up what is in flight (a shutdown past its grace, a lost lease): a `failed` outcome at once. */
  readonly signal?: AbortSignal | undefined;
}

export interface Enricher {
  enrich(request: EnrichmentRequest, options?: EnrichOptions): Promise<EnrichOutcome>;
  /**
   * The target's data version now, when the enricher can tell without a lookup (the in-process
   * service: its active snapshot; null when it reports none, as the sandbox); undefined when it cannot.
   */
  currentDataVersion?(): string | null | undefined;
}

/** One attempt as a transport reports it: an HTTP-like status, body and the headers we act on. */
export interface Attempt {
  readonly status: number;
  readonly body: unknown;
  readonly retryAfterSeconds: number | null;
  readonly quotaResetsAt: Date | null;
  readonly dataVersion: string | null;
}

/** Sends one request once, stopping when `signal` aborts; throws only for a transport failure (network error, timeout, abort). */
export type Transport = (request: EnrichmentRequest, signal?: AbortSignal) => Promise<Attempt>;

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  readonly maxAttempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 5, baseDelayMs: 250, maxDelayMs: 15_000 };
export const DEFAULT_RATE_PER_SECOND = 5;

const RETRYABLE = new Set([429, 500, 502, 503, 504]);

/**
 * One limiter per API token in this process, however many enrichers use it: the contract's limit is
 * per token, so two installations sharing a token share its 5/s. Keyed by a hash, never the token.
 */
const limiters = new Bottleneck.Group({ maxConcurrent: null, minTime: 1000 / DEFAULT_RATE_PER_SECOND });

/**
 * The gap our own client leaves between a token's calls. The service admits a client spacing calls
 * exactly 1000/rate ms apart whose arrivals bunch by up to JITTER_ALLOWANCE_MS; our client does not
 * live at that edge: half the allowance more per second of calls (205 ms at 5/s, 97.6 % of the rate)
 * lets a slow first call (a cold connection, a busy event loop at either end) arrive one and a half
 * times the allowance late and still never meet a 429.
 */
export function clientSpacingMs(ratePerSecond: number): number {
  const rate = Math.max(1, Math.floor(ratePerSecond));
  return Math.ceil((1000 + JITTER_ALLOWANCE_MS / 2) / rate);
}

export function limiterFor(token: string, ratePerSecond: number): Pacer {
  const key = createHash('sha256').update(token).digest('hex');
  const limiter = limiters.key(key);
  const minTime = clientSpacingMs(ratePerSecond);
  limiter.updateSettings({ minTime });
  // Shared across processes with REDIS_URL (core/limits/pacing.ts): the token's 5/s is one budget.
  return pacer(limiter, `enrich:${key}`, minTime);
}

/** Full-jitter exponential backoff: a random wait up to base × 2^(retry−1), capped. */
export function backoffMs(retry: number, policy: RetryPolicy, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  return Math.round(random() * ceiling);
}

/**
 * A refusal's message as the pipeline keeps it (a job's error, the enrichment log): the endpoint's error
 * code and its message with e-mail addresses and phone numbers masked, since a remote endpoint's text
 * can quote the request it refused.
 */
function messageOf(body: unknown, fallback: string): string {
  if (typeof body !== 'object' || body === null) return fallback;
  const code = 'error' in body && typeof body.error === 'string' ? body.error : null;
  const message = 'message' in body && typeof body.message === 'string' ? maskPersonalText(body.message.slice(0, 500)) : null;
  if (message === null) return code ?? fallback;
  return code === null ? message : `${code}: ${message}`;
}

/** What every adapter lets its caller tune. */
export interface PacingOptions {
  readonly ratePerSecond?: number | undefined;
  readonly retry?: RetryPolicy | undefined;
  readonly sleep?: ((ms: number) => Promise<void>) | undefined;
}

export interface PacedEnricherOptions extends PacingOptions {
  readonly transport: Transport;
  /** The API token the transport sends: the pacing key. */
  readonly token: string;
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The shared policy around a transport: paced, retried, classified. */
export class PacedEnricher implements Enricher {
  private readonly limiter: Pacer;
  private readonly retry: RetryPolicy;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly options: PacedEnricherOptions) {
    this.limiter = limiterFor(options.token, options.ratePerSecond ?? DEFAULT_RATE_PER_SECOND);
    this.retry = options.retry ?? DEFAULT_RETRY;
    this.sleep = options.sleep ?? realSleep;
  }

  async enrich(request: EnrichmentRequest, options: EnrichOptions = {}): Promise<EnrichOutcome> {
    const { signal } = options;
    let lastFailure: { status: number | null; message: string } = { status: null, message: 'not attempted' };
    for (let attempt = 1; attempt <= this.retry.maxAttempts; attempt += 1) {
      if (signal?.aborted) return { kind: 'failed', status: null, message: 'given up by the caller', attempts: attempt - 1 };
      let result: Attempt;
      try {
        // Every attempt, retries included, goes through the token's limiter: retries are requests too.
        result = await abortable(
          this.limiter.schedule(() => this.options.transport(request, signal)),
          signal,
        );
      } catch (error) {
        lastFailure = { status: null, message: loggableMessage(error) };
        if (signal?.aborted) return { kind: 'failed', ...lastFailure, attempts: attempt };
        if (isTimeout(error)) return { kind: 'failed', ...lastFailure, attempts: attempt, timedOut: true };
        if (attempt < this.retry.maxAttempts) await this.sleep(backoffMs(attempt, this.retry));
        continue;
      }
      if (result.status === 429) rateLimited.inc({ direction: 'received', peer: 'enrichment' });
      if (result.status === 200) {
        const parsed = EnrichmentResponseSchema.safeParse(result.body);
        if (!parsed.success) return { kind: 'failed', status: 200, message: 'the endpoint answered 200 with a body outside the contract', attempts: attempt };
        // Production sends null for an unmatched object and the sandbox omits it: one shape from here on.
        const response = { ...parsed.data, household: parsed.data.household ?? null, career: parsed.data.career ?? null };
        return { kind: 'ok', response, attempts: attempt, dataVersion: result.dataVersion };
      }
      if (result.status === 402) return { kind: 'quota_exhausted', resetsAt: result.quotaResetsAt, attempts: attempt };
      if (!RETRYABLE.has(result.status)) {
        return { kind: 'rejected', status: result.status, message: messageOf(result.body, `HTTP ${result.status}`), attempts: attempt };
      }
      lastFailure = { status: result.status, message: messageOf(result.body, `HTTP ${result.status}`) };
      if (attempt < this.retry.maxAttempts) {
        // Retry-After is honoured as given; one longer than the policy's longest wait ends this try
        // (the caller's queue retries later) rather than being cut short.
        if (result.retryAfterSeconds !== null && result.retryAfterSeconds * 1000 > this.retry.maxDelayMs) {
          return { kind: 'failed', ...lastFailure, attempts: attempt };
        }
        await this.sleep(result.retryAfterSeconds === null ? backoffMs(attempt, this.retry) : result.retryAfterSeconds * 1000);
      }
    }
    return { kind: 'failed', ...lastFailure, attempts: this.retry.maxAttempts };
  }
}
