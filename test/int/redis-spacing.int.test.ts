// Outbound pacing shared by several processes on a real Redis (TEST_REDIS_URL): calls for one key from
// two connections interleave at the key's spacing instead of adding up, and while Redis is away each
// process spaces its own calls at its share. Only lower bounds on elapsed time are asserted: a slow
// machine can only make them hold more easily.
import Bottleneck from 'bottleneck';
import type { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { pacer, shareSpacing } from '../../core/limits/pacing.ts';
import { RedisSpacing } from '../../core/limits/redis-spacing.ts';
import { RedisOutage, TEST_REDIS_URL, freshPrefix, redisReady, testRedisClient } from '../support/redis.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  shareSpacing(null);
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const client = (url: string): Redis => testRedisClient(url, cleanups);
const ready = redisReady;

// Skipped only where no Redis was given (a quick local run); CI always gives one.
describe.skipIf(TEST_REDIS_URL === undefined)('shared outbound spacing', () => {
  const url = TEST_REDIS_URL ?? '';

  it('two processes calling for one key take turns: 20 calls 100 ms apart take at least 1.9 s in all, not half that', async () => {
    const prefix = freshPrefix();
    const [a, b] = [client(url), client(url)];
    await Promise.all([ready(a), ready(b)]);
    const spacings = [a, b].map((redis) => new RedisSpacing(redis, { keyPrefix: prefix, instances: { count: 2 } }));
    const started = Date.now();
    await Promise.all(Array.from({ length: 20 }, (_, i) => spacings[i % 2]?.wait('tok', 100)));
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_850);
  });

  it('a pacer waits for its shared turn inside its own limiter', async () => {
    const redis = client(url);
    await ready(redis);
    shareSpacing(new RedisSpacing(redis, { keyPrefix: freshPrefix(), instances: { count: 1 } }));
    // Two limiters, as two processes have: only the shared turn keeps them apart.
    const pacers = [pacer(new Bottleneck({ maxConcurrent: null }), 'k', 100), pacer(new Bottleneck({ maxConcurrent: null }), 'k', 100)];
    const started = Date.now();
    await Promise.all(Array.from({ length: 10 }, (_, i) => pacers[i % 2]?.schedule(() => Promise.resolve(i))));
    expect(Date.now() - started).toBeGreaterThanOrEqual(850);
  });

  it('Redis unreachable: each process spaces its calls at its share (two instances: twice the spacing), and shares again once Redis is back', async () => {
    const outage = await RedisOutage.start(url);
    cleanups.push(() => outage.close());
    const redis = client(outage.url);
    await ready(redis);
    const switches: (string | null)[] = [];
    const spacing = new RedisSpacing(redis, {
      keyPrefix: freshPrefix(),
      instances: { count: 2 },
      onFallback: (error) => switches.push(error === null ? null : 'down'),
    });
    outage.cut();
    const started = Date.now();
    for (let i = 0; i < 5; i += 1) await spacing.wait('tok', 100);
    expect(Date.now() - started).toBeGreaterThanOrEqual(4 * 200 - 20);
    outage.restore();
    await ready(redis);
    await spacing.wait('tok', 100);
    expect(switches).toEqual(['down', null]);
  });
});
