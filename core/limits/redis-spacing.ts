// Outbound spacing shared by every process on one Redis (pacing.ts): one Lua script reserves the next
// slot of a key on Redis's clock and says how long to wait for it, so calls from several instances and
// workers interleave at the key's rate instead of adding up.
//
// Redis unreachable: each process spaces its own calls at its share of the rate (the spacing times the
// instances seen alive last, or times MAX_ASSUMED_INSTANCES when none was ever seen), so together they
// stay under the rate; the next call after Redis answers again is back on the shared spacing.
import type { Redis } from 'ioredis';
import type { InstanceRegistry } from './redis-rate-limiter.ts';
import type { SharedSpacing } from './pacing.ts';

/** The share assumed when Redis was never reached: spacing this many times wider. */
export const MAX_ASSUMED_INSTANCES = 8;

// KEYS[1] the key's next free slot; ARGV[1] the spacing (ms). Returns how long to wait (ms).
const RESERVE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local gap = tonumber(ARGV[1])
local nextSlot = tonumber(redis.call('GET', KEYS[1]) or '0')
local slot = math.max(now, nextSlot)
redis.call('SET', KEYS[1], slot + gap, 'PX', slot + gap - now + 60000)
return slot - now
`;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export class RedisSpacing implements SharedSpacing {
  /** The fallback's next free slot per key, in this process. */
  private readonly local = new Map<string, number>();
  private failing = false;

  constructor(
    private readonly redis: Redis,
    private readonly options: {
      readonly keyPrefix?: string;
      readonly instances: Pick<InstanceRegistry, 'count'>;
      readonly onFallback?: (error: unknown | null) => void;
    },
  ) {
    if (!('reserveSlot' in redis)) redis.defineCommand('reserveSlot', { numberOfKeys: 1, lua: RESERVE });
  }

  async wait(key: string, minTimeMs: number): Promise<void> {
    const gap = Math.max(0, Math.ceil(minTimeMs));
    let waitMs: number;
    try {
      const reserve = (this.redis as unknown as { reserveSlot: (key: string, gap: number) => Promise<number> }).reserveSlot;
      waitMs = Number(await reserve.call(this.redis, `${this.options.keyPrefix ?? 'eb:pace:'}${key}`, gap));
      if (this.failing) {
        this.failing = false;
        this.options.onFallback?.(null);
      }
    } catch (error) {
      if (!this.failing) {
        this.failing = true;
        this.options.onFallback?.(error);
      }
      waitMs = this.reserveLocally(key, gap * (this.options.instances.count ?? MAX_ASSUMED_INSTANCES));
    }
    if (waitMs > 0) await sleep(waitMs);
  }

  private reserveLocally(key: string, gap: number): number {
    const now = Date.now();
    const slot = Math.max(now, this.local.get(key) ?? 0);
    if (this.local.size >= 10_000) this.local.clear();
    this.local.set(key, slot + gap);
    return slot - now;
  }
}
