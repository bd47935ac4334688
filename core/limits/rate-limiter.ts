// Per-token request-rate limiting: the GCRA (generic cell rate algorithm, a token bucket kept as one
// timestamp per key), in process. A Redis adapter will implement the same port for several instances.
//
// Why not rate-limiter-flexible's fixed windows: a client spacing calls 200 ms apart can land six
// calls in one server-side 1 s window when network jitter bunches two of them, and the contract says
// such a client never sees a 429. A bucket of `rate` requests refilled at `rate` per second admits a
// steady 200 ms client forever while still refusing a sixth call inside one second.

export interface RateDecision {
  readonly allowed: boolean;
  /** Requests per second granted to the key. */
  readonly limit: number;
  /** Requests that could be made at once right now. */
  readonly remaining: number;
  /** Seconds until the bucket is full again. */
  readonly resetSeconds: number;
  /** Seconds to wait before the next request can pass (0 when allowed). */
  readonly retryAfterSeconds: number;
}

export interface RateLimiter {
  take(key: string, ratePerSecond: number): Promise<RateDecision>;
  /** The state `take` would report, without taking: for answers that must not count against the rate. */
  peek(key: string, ratePerSecond: number): Promise<RateDecision>;
}

const SWEEP_THRESHOLD = 10_000;
/** Slack for floating-point drift: 1000 / rate is rarely exact, and a burst must not lose a call to it. */
const EPSILON_MS = 1e-6;

export class MemoryRateLimiter implements RateLimiter {
  /** Theoretical arrival time per key, in ms: when the bucket would next be empty of debt. */
  private readonly tat = new Map<string, number>();

  constructor(private readonly clock: () => number = () => performance.timeOrigin + performance.now()) {}

  take(key: string, ratePerSecond: number): Promise<RateDecision> {
    return Promise.resolve(this.takeNow(key, ratePerSecond));
  }

  peek(key: string, ratePerSecond: number): Promise<RateDecision> {
    return Promise.resolve(this.decide(key, ratePerSecond, false));
  }

  takeNow(key: string, ratePerSecond: number): RateDecision {
    return this.decide(key, ratePerSecond, true);
  }

  private decide(key: string, ratePerSecond: number, consume: boolean): RateDecision {
    const now = this.clock();
    const interval = 1000 / ratePerSecond;
    const burst = Math.max(1, Math.floor(ratePerSecond));
    const tolerance = interval * burst;
    const tat = Math.max(this.tat.get(key) ?? now, now);
    const newTat = tat + interval;
    const allowed = newTat - now <= tolerance + EPSILON_MS;
    const effectiveTat = allowed && consume ? newTat : tat;
    if (allowed && consume) {
      if (this.tat.size >= SWEEP_THRESHOLD) this.sweep(now);
      this.tat.set(key, newTat);
    }
    const debt = effectiveTat - now;
    return {
      allowed,
      limit: burst,
      remaining: Math.max(0, Math.floor((tolerance - debt + EPSILON_MS) / interval)),
      resetSeconds: Math.ceil((debt - EPSILON_MS) / 1000),
      retryAfterSeconds: allowed || !consume ? 0 : Math.max(1, Math.ceil((newTat - tolerance - now) / 1000)),
    };
  }

  /** Drops keys whose bucket has refilled: they behave exactly like keys never seen. */
  private sweep(now: number): void {
    for (const [key, tat] of this.tat) {
      if (tat <= now) this.tat.delete(key);
    }
  }
}
