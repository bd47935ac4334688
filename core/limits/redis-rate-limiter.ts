// The per-token rate limit shared by several instances (REDIS_URL): the same sliding log as the
// in-process limiter (rate-limiter.ts), kept in a Redis sorted set per token and decided by one Lua
// script, so the check and the admission are one atomic step whichever instance a request reaches, and
// Redis's own clock is the one every instance reads (no skew between hosts).
//
// rate-limiter-flexible's Redis limiters count in fixed windows (or a leaky bucket), which cannot keep
// the contract's pair of rules: no more than the rate in any 950 ms window, and a client spacing its
// calls 200 ms apart never refused. The sorted set keeps both, as the in-process log does.
//
// Redis unreachable: each instance falls back to an in-process log at its share of the rate (the rate
// divided by the instances seen alive in Redis last; rate-limiter-flexible calls this an insurance
// limiter), so together they never admit more than the rate. When the share is under one request a
// second, or no instance count was ever seen, the request is refused with 503 instead.
//
// The two switches keep the rate exact too, in any 950 ms window across them:
// - Going to the fallback: what Redis admitted just before is invisible to the in-process logs, so for
//   one window from the first failure the fallback admits nothing (429 with Retry-After). Every
//   admission Redis made happened before the failure, and has left the window when the fallback starts.
// - Coming back: Redis's log lacks what the fallbacks admitted. Each instance writes its own fallback
//   admissions of a token into Redis with its first call for that token (as ages, so no host clock is
//   compared with Redis's), and for one window after its return admits no more than the rate less the
//   other instances' shares, which they may have spent in their fallbacks and not written back yet.
// A partition that cuts only some instances from Redis is not covered: those admit their shares while
// the others admit the rate through Redis (bounded by the rate plus the cut instances' shares).
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { JITTER_ALLOWANCE_MS, MemoryRateLimiter, type RateDecision, type RateLimiter, RateLimitUnavailableError, WINDOW_MS } from './rate-limiter.ts';

const EFFECTIVE_WINDOW_MS = WINDOW_MS - JITTER_ALLOWANCE_MS;

// KEYS[1] the token's log; ARGV: limit, window (ms), consume (1/0), a member unique to this request,
// then pairs of (member, age in ms) of admissions this instance made while Redis was away, written
// into the log first. Returns {allowed, in window after this request, now, oldest, newest} in ms of
// Redis's clock.
const SLIDING_LOG = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
for i = 5, #ARGV - 1, 2 do
  local at = now - tonumber(ARGV[i + 1])
  if at > now - window then redis.call('ZADD', KEYS[1], at, ARGV[i]) end
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local n = redis.call('ZCARD', KEYS[1])
local allowed = 0
if n < limit then
  allowed = 1
  if ARGV[3] == '1' then
    redis.call('ZADD', KEYS[1], now, ARGV[4])
    n = n + 1
  end
end
if n > 0 then redis.call('PEXPIRE', KEYS[1], window) end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')[2] or now
local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')[2] or now
return {allowed, n, now, tonumber(oldest), tonumber(newest)}
`;

/** The instances alive, as they report themselves in Redis; the last count seen is kept for the fallback. */
export class InstanceRegistry {
  private readonly id = randomBytes(8).toString('hex');
  private lastCount: number | null = null;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly redis: Redis,
    private readonly options: { readonly key?: string; readonly everyMs?: number } = {},
  ) {}

  private get key(): string {
    return this.options.key ?? 'eb:instances';
  }

  /** Reports this instance alive now and counts the others alive (seen within three reports). */
  async beat(): Promise<number> {
    const every = this.options.everyMs ?? 2_000;
    // Redis's clock to the millisecond: whole seconds alone would age a report made late in one
    // second by up to a second more, enough to drop an instance that reported a moment ago.
    const [seconds, microseconds] = await this.redis.time();
    const now = Number(seconds) * 1000 + Math.floor(Number(microseconds) / 1000);
    const result = await this.redis
      .multi()
      .zadd(this.key, now, this.id)
      .zremrangebyscore(this.key, '-inf', now - 3 * every)
      .zcard(this.key)
      .pexpire(this.key, 10 * every)
      .exec();
    const count = Number(result?.[2]?.[1] ?? 1);
    this.lastCount = Math.max(1, count);
    return this.lastCount;
  }

  /** The last count seen, or null when Redis was never reached. */
  get count(): number | null {
    return this.lastCount;
  }

  start(): void {
    const beat = (): void => {
      this.beat().catch(() => undefined);
    };
    beat();
    this.timer = setInterval(beat, this.options.everyMs ?? 2_000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.redis.zrem(this.key, this.id).catch(() => undefined);
  }
}

export interface RedisRateLimiterOptions {
  readonly keyPrefix?: string;
  /** Who else takes from the same budgets, for the fallback's share. */
  readonly instances: Pick<InstanceRegistry, 'count'>;
  /** Hears each switch to and from the fallback (for the log): an error, or null when Redis answers again. */
  readonly onFallback?: (error: unknown | null) => void;
  /** This host's clock in ms (the fallback's and the switches'); Redis's own decides everything else. */
  readonly clock?: () => number;
}

type ScriptResult = [number, number, number, number, number];

/** An admission the fallback made, to be written into Redis's log when it answers again. */
interface Unreported {
  readonly at: number;
  readonly member: string;
}

const localClock = (): number => performance.timeOrigin + performance.now();

export class RedisRateLimiter implements RateLimiter {
  private readonly fallback: MemoryRateLimiter;
  /** When this instance's first call failed (its clock); null while Redis answers. */
  private failingSince: number | null = null;
  /** When Redis answered again after an outage; the window after it is still settling. */
  private recoveredAt: number | null = null;
  /** The fallback's admissions per token, until Redis's log has them or they have left the window. */
  private readonly unreported = new Map<string, Unreported[]>();
  private sequence = 0;
  private readonly member = randomBytes(6).toString('hex');
  private readonly clock: () => number;

  constructor(
    private readonly redis: Redis,
    private readonly options: RedisRateLimiterOptions,
  ) {
    if (!('slidingLog' in redis)) redis.defineCommand('slidingLog', { numberOfKeys: 1, lua: SLIDING_LOG });
    this.clock = options.clock ?? localClock;
    this.fallback = new MemoryRateLimiter(this.clock);
  }

  take(key: string, ratePerSecond: number): Promise<RateDecision> {
    return this.decide(key, ratePerSecond, true);
  }

  peek(key: string, ratePerSecond: number): Promise<RateDecision> {
    return this.decide(key, ratePerSecond, false);
  }

  private async decide(key: string, ratePerSecond: number, consume: boolean): Promise<RateDecision> {
    const limit = Math.max(1, Math.floor(ratePerSecond));
    const now = this.clock();
    if (this.recoveredAt !== null && now - this.recoveredAt >= EFFECTIVE_WINDOW_MS) {
      // Settled: whatever the fallback admitted has left every window.
      this.recoveredAt = null;
      this.unreported.clear();
    }
    const settling = this.failingSince !== null || this.recoveredAt !== null;
    // Around a return, the other instances' fallback admissions may not be in Redis's log yet.
    const instances = this.options.instances.count ?? 1;
    const admit = settling ? limit - (instances - 1) * Math.floor(limit / instances) : limit;
    const owed = settling ? this.owed(key, now) : [];
    let result: ScriptResult;
    try {
      this.sequence += 1;
      const run = (this.redis as unknown as { slidingLog: (...args: (string | number)[]) => Promise<ScriptResult> }).slidingLog;
      result = await run.call(
        this.redis,
        `${this.options.keyPrefix ?? 'eb:rate:'}${key}`,
        admit,
        EFFECTIVE_WINDOW_MS,
        consume ? '1' : '0',
        `${this.member}:${this.sequence}`,
        ...owed,
      );
    } catch (error) {
      return this.insured(key, limit, consume, error, now);
    }
    if (owed.length > 0) this.unreported.delete(key);
    if (this.failingSince !== null) {
      this.failingSince = null;
      this.recoveredAt = now;
      this.options.onFallback?.(null);
    }
    const [allowed, used, redisNow, oldest, newest] = result.map(Number) as ScriptResult;
    return {
      allowed: allowed === 1,
      limit,
      remaining: Math.max(0, admit - used),
      resetSeconds: used === 0 ? 0 : Math.ceil((newest + EFFECTIVE_WINDOW_MS - redisNow) / 1000),
      retryAfterSeconds: allowed === 1 ? 0 : Math.max(1, Math.ceil((oldest + EFFECTIVE_WINDOW_MS - redisNow) / 1000)),
    };
  }

  /** The script's trailing arguments: this token's fallback admissions still in the window, as (member, age). */
  private owed(key: string, now: number): string[] {
    const entries = this.unreported.get(key);
    if (entries === undefined) return [];
    return entries.filter((entry) => now - entry.at < EFFECTIVE_WINDOW_MS).flatMap((entry) => [entry.member, String(Math.max(0, Math.round(now - entry.at)))]);
  }

  /** Redis did not answer: this instance's share of the rate, in process, or a refusal when there is no safe share. */
  private insured(key: string, limit: number, consume: boolean, error: unknown, now: number): RateDecision {
    if (this.failingSince === null) {
      this.failingSince = now;
      this.recoveredAt = null;
      this.options.onFallback?.(error);
    }
    const instances = this.options.instances.count;
    const share = instances === null ? 0 : Math.floor(limit / instances);
    if (share < 1) throw new RateLimitUnavailableError('the shared rate limit is unreachable and this instance has no safe share of it', { cause: error });
    const blackoutLeft = this.failingSince + EFFECTIVE_WINDOW_MS - now;
    if (blackoutLeft > 0) {
      // What Redis admitted before it went away may fill this window: nothing more until it has passed.
      const seconds = Math.max(1, Math.ceil(blackoutLeft / 1000));
      return { allowed: false, limit, remaining: 0, resetSeconds: seconds, retryAfterSeconds: seconds };
    }
    const decision = consume ? this.fallback.takeNow(key, share) : this.fallback.peekNow(key, share);
    if (consume && decision.allowed) {
      this.sequence += 1;
      const entries = this.unreported.get(key) ?? [];
      entries.push({ at: now, member: `${this.member}:${this.sequence}` });
      this.unreported.set(
        key,
        entries.filter((entry) => now - entry.at < EFFECTIVE_WINDOW_MS),
      );
    }
    return { ...decision, limit };
  }
}
