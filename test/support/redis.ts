// Redis for the suites of what several instances share: used whenever TEST_REDIS_URL is set (.ci/run
// sets it). Each test gets key prefixes of its own; `RedisOutage` stands between a client and Redis so
// a test can take Redis away from that client and give it back, as a network partition or a restart would.
import { randomBytes } from 'node:crypto';
import net, { type AddressInfo } from 'node:net';
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

/** A TCP relay to Redis on a loopback port: `cut()` drops every connection and refuses new ones until `restore()`. */
export class RedisOutage {
  private readonly sockets = new Set<net.Socket>();
  private readonly server = net.createServer((client) => this.relay(client));
  private down = false;
  /** Where a client connects to reach Redis through the relay. */
  url = '';

  private constructor(private readonly target: URL) {}

  static async start(target: string): Promise<RedisOutage> {
    const outage = new RedisOutage(new URL(target));
    await new Promise<void>((resolve) => outage.server.listen(0, '127.0.0.1', resolve));
    const { port } = outage.server.address() as AddressInfo; // a TCP listener always reports an AddressInfo
    const url = new URL(target);
    url.hostname = '127.0.0.1';
    url.port = String(port);
    outage.url = url.toString();
    return outage;
  }

  private relay(client: net.Socket): void {
    if (this.down) {
      client.destroy();
      return;
    }
    const upstream = net.connect(Number(this.target.port || 6379), this.target.hostname);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
  }

  cut(): void {
    this.down = true;
    for (const socket of this.sockets) socket.destroy();
  }

  restore(): void {
    this.down = false;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
