// One LISTENing connection per process and channel: PostgreSQL's NOTIFY tells every instance at once
// that something changed (jobs became ready, another data snapshot became active) instead of each one
// finding out at the end of its poll. The polls stay as the fallback (a notification sent while the
// listening connection was being made again), only slower.
import pg from 'pg';

export interface ChannelListener {
  /** Calls `listener` on every notification, and after each reconnection; returns how to stop. */
  subscribe(listener: () => void): () => void;
  close(): Promise<void>;
}

/**
 * The channel for one kind of event of the schema a connection works in: tests share a database,
 * one schema each, and so may deployments, so a channel never crosses schemas.
 */
export function channelSql(kind: string): string {
  if (!/^[a-z_]+$/.test(kind)) throw new Error(`channel kind ${kind}: lowercase letters and underscores only`);
  return `'eb_${kind}:' || current_schema()`;
}

/** The channel told when the active data snapshot changes (a load, a rollback). */
export const SNAPSHOTS_CHANNEL_SQL = channelSql('snapshots');

/**
 * Listens on the channel `channelExpression` (SQL, evaluated on the connection: see channelSql) and
 * hands each notification to the subscribers. The connection is made again (after a second, then up
 * to ten) when the database drops it; subscribers are told on reconnection too, so what was announced
 * meanwhile is late, never lost.
 */
export class PostgresListener implements ChannelListener {
  private readonly listeners = new Set<() => void>();
  private client: pg.Client | null = null;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;
  private failures = 0;

  constructor(
    private readonly url: string,
    private readonly channelExpression: string,
  ) {}

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    if (this.client === null && this.retry === undefined) this.connect();
    return () => this.listeners.delete(listener);
  }

  private notify(): void {
    for (const listener of this.listeners) listener();
  }

  private connect(): void {
    if (this.closed) return;
    const client = new pg.Client({
      connectionString: this.url,
      connectionTimeoutMillis: 5_000,
      application_name: 'enrichbridge-listen',
      // A connection that only listens sends nothing: keepalives find a peer that vanished.
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
    });
    this.client = client;
    const again = (): void => {
      if (this.client !== client) return;
      this.client = null;
      client.end().catch(() => undefined);
      if (this.closed) return;
      this.failures += 1;
      this.retry = setTimeout(
        () => {
          this.retry = undefined;
          this.connect();
        },
        Math.min(10_000, 1_000 * this.failures),
      );
      this.retry.unref();
    };
    client.on('error', again);
    client.on('end', again);
    client.on('notification', () => this.notify());
    client
      .connect()
      .then(async () => {
        const { rows } = await client.query<{ channel: string }>(`SELECT ${this.channelExpression} AS channel`);
        const channel = rows[0]?.channel;
        if (channel === undefined) throw new Error('no channel name');
        await client.query(`LISTEN "${channel.replace(/"/g, '""')}"`);
        this.failures = 0;
        // Whatever was announced while no connection listened.
        this.notify();
      })
      .catch(again);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }
}
