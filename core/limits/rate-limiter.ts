// Per-token request-rate limiting: a sliding log of admitted requests per key, in process. The Redis
// adapter (redis-rate-limiter.ts, a sorted set per key) implements the same port for several instances.
//
// Two contract rules pull against each other: "more than 5 requests per second gives 429" and "a client
// spacing calls 200 ms apart never sees a 429". A fixed 1 s window breaks the first (5 at the end of one
// window, 5 at the start of the next); a token bucket breaks it too (a burst of 5, then one every 200 ms
// makes 9 in a second). A sliding window admits a request only when fewer than `rate` were admitted in
// the last second, less a small allowance for network jitter: a steady 200 ms client whose arrivals
// bunch by up to JITTER_ALLOWANCE_MS still passes, and no 6 requests inside 950 ms ever do.

export interface RateDecision {
  readonly allowed: boolean;
  /** Requests per second granted to the key. */
  readonly limit: number;
  /** Requests that could be made at once right now. */
  readonly remaining: number;
  /** Seconds until the full allowance is available again. */
  readonly resetSeconds: number;
  /** Seconds to wait before the next request can pass (0 when allowed). */
  readonly retryAfterSeconds: number;
}

/** The limiter cannot decide (a shared limit unreachable, and no safe share of it): the caller answers 503. */
export class RateLimitUnavailableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'RateLimitUnavailableError';
  }
}

export interface RateLimiter {
  take(key: string, ratePerSecond: number): Promise<RateDecision>;
  /** The state `take` would report, without taking: for answers that must not count against the rate. */
  peek(key: string, ratePerSecond: number): Promise<RateDecision>;
}

export const WINDOW_MS = 1000;
/** How much a 200 ms client's arrivals may bunch up (over five intervals) before one is refused. */
export const JITTER_ALLOWANCE_MS = 50;
const EFFECTIVE_WINDOW_MS = WINDOW_MS - JITTER_ALLOWANCE_MS;
const SWEEP_THRESHOLD = 10_000;

/** Admission times of one key, oldest first; `head` skips entries that have left the window. */
interface Log {
  times: number[];
  head: number;
}

export class MemoryRateLimiter implements RateLimiter {
  private readonly logs = new Map<string, Log>();

  constructor(private readonly clock: () => number = () => performance.timeOrigin + performance.now()) {}

  take(key: string, ratePerSecond: number): Promise<RateDecision> {
    return Promise.resolve(this.decide(key, ratePerSecond, true));
  }

  peek(key: string, ratePerSecond: number): Promise<RateDecision> {
    return Promise.resolve(this.decide(key, ratePerSecond, false));
  }

  /** peek, answered at once: for a caller on a hot path that must not wait a turn. */
  peekNow(key: string, ratePerSecond: number): RateDecision {
    return this.decide(key, ratePerSecond, false);
  }

  takeNow(key: string, ratePerSecond: number): RateDecision {
    return this.decide(key, ratePerSecond, true);
  }

  private decide(key: string, ratePerSecond: number, consume: boolean): RateDecision {
    const now = this.clock();
    const limit = Math.max(1, Math.floor(ratePerSecond));
    let log = this.logs.get(key);
    if (log !== undefined) expire(log, now);
    const inWindow = log === undefined ? 0 : log.times.length - log.head;
    const allowed = inWindow < limit;
    if (allowed && consume) {
      if (log === undefined) {
        if (this.logs.size >= SWEEP_THRESHOLD) this.sweep(now);
        log = { times: [], head: 0 };
        this.logs.set(key, log);
      }
      log.times.push(now);
    }
    const used = inWindow + (allowed && consume ? 1 : 0);
    const oldest = log === undefined || log.head >= log.times.length ? now : (log.times[log.head] ?? now);
    const newest = log === undefined || log.times.length === 0 ? now : (log.times[log.times.length - 1] ?? now);
    return {
      allowed,
      limit,
      remaining: Math.max(0, limit - used),
      resetSeconds: used === 0 ? 0 : Math.ceil((newest + EFFECTIVE_WINDOW_MS - now) / 1000),
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((oldest + EFFECTIVE_WINDOW_MS - now) / 1000)),
    };
  }

  /** Drops keys with nothing left in the window: they behave exactly like keys never seen. */
  private sweep(now: number): void {
    for (const [key, log] of this.logs) {
      expire(log, now);
      if (log.head >= log.times.length) this.logs.delete(key);
    }
  }
}

function expire(log: Log, now: number): void {
  while (log.head < log.times.length && (log.times[log.head] ?? now) <= now - EFFECTIVE_WINDOW_MS) log.head += 1;
  // Compact once the dead prefix dominates, so a busy key's array stays about `rate` long.
  if (log.head > 32 && log.head * 2 > log.times.length) {
    log.times = log.times.slice(log.head);
    log.head = 0;
  }
}
