// Redis for the suites of what several instances share: used whenever TEST_REDIS_URL is set (.ci/run
// sets it). Each test gets key prefixes of its own; `RedisOutage` stands between a client and Redis so
// a test can take Redis away from that client and give it back, as a network partition or a restart would.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL === '' ? undefined : process.env.TEST_REDIS_URL;

/**
 * A client as the runtime makes one (no offline queue, short command timeout, quick reconnects); it
 * is disconnected by the cleanup it registers.
 */
export function testRedisClient(url: string, cleanups: (() => Promise<void> | void)[]): Redis {
  const redis = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: 250, retryStrategy: () => 50 });
  redis.on('error', () => undefined);
  cleanups.push(() => redis.disconnect());
  return redis;
}

/** Resolves once the client can send commands. */
export async function redisReady(redis: Redis): Promise<void> {
  if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
}

/** A prefix no other test uses. */
export function freshPrefix(): string {
  return `eb-test:${randomBytes(6).toString('hex')}:`;
}

/** A TCP relay to Redis (test/support/tcp-outage.ts): `cut()` takes Redis away from its clients, `restore()` gives it back. */
export { TcpOutage as RedisOutage } from './tcp-outage.ts';
