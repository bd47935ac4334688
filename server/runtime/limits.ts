// The limits several instances share (REDIS_URL): the per-token rate and the outbound pacing in Redis,
// each with its in-process fallback while Redis is away.
import { InstanceRegistry, RedisRateLimiter } from '../../core/limits/redis-rate-limiter.ts';
import { RedisSpacing } from '../../core/limits/redis-spacing.ts';
import { shareSpacing } from '../../core/limits/pacing.ts';
import { type Logger } from '../logger.ts';

export interface SharedLimits {
  readonly rateLimiter: RedisRateLimiter;
  /** Whether Redis answers (GET /readyz). */
  ping(): Promise<unknown>;
  close(): Promise<void>;
}

/** How long a start waits for Redis before serving on the fallback (and Redis's commands, each). */
const REDIS_CONNECT_TIMEOUT_MS = 2_000;
const REDIS_COMMAND_TIMEOUT_MS = 250;

/**
 * The limits several instances share (REDIS_URL): the per-token rate in Redis, and the outbound pacing
 * per enrichment token and CRM account (core/limits/pacing.ts), with this process counted among the
 * live ones for the fallbacks' shares. Redis unreachable at start is not fatal: the fallbacks serve (or
 * refuse) until Redis answers.
 */
export async function openSharedLimits(url: string, prefix: string, logger: Logger): Promise<SharedLimits> {
  // Loaded here, only when REDIS_URL is set: a process without it never pays for ioredis.
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, {
    connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    // Fail at once while disconnected (the fallback decides), and keep reconnecting in the background.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
  redis.on('error', () => undefined);
  await new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, REDIS_CONNECT_TIMEOUT_MS);
    redis.once('ready', done);
  });
  const instances = new InstanceRegistry(redis, { key: `${prefix}instances` });
  await instances
    .beat()
    .catch((error: unknown) =>
      logger.warn({ err: error }, 'redis unreachable at start: the rate limit falls back (see docs/operator-guide.md, Running several instances)'),
    );
  instances.start();
  const rateLimiter = new RedisRateLimiter(redis, {
    keyPrefix: `${prefix}rate:`,
    instances,
    onFallback: (error) =>
      error === null
        ? logger.info('redis answers again: the shared rate limit is back')
        : logger.error({ err: error, instances: instances.count }, "redis unreachable: each instance admits its share of a token's rate in process"),
  });
  const spacing = new RedisSpacing(redis, {
    keyPrefix: `${prefix}pace:`,
    instances,
    onFallback: (error) =>
      error === null
        ? logger.info('redis answers again: outbound pacing is shared again')
        : logger.error({ err: error, instances: instances.count }, 'redis unreachable: each process paces its outbound calls at its share of each rate'),
  });
  shareSpacing(spacing);
  return {
    rateLimiter,
    ping: () => redis.ping(),
    close: async () => {
      shareSpacing(null);
      await instances.stop();
      redis.disconnect();
    },
  };
}
