// Ready jobs announced over PostgreSQL's LISTEN/NOTIFY: an enqueue on any instance notifies the
// database's channel for this schema, and every instance's idle workers wake at once instead of at the
// end of their poll. The poll stays as the fallback (a notification lost while the listening
// connection was being re-made, a retry's backoff running out), only slower.
import pg from 'pg';

/** The channel for the jobs of the schema the connection works in (tests share a database, one schema each). */
export const JOBS_CHANNEL_SQL = "'eb_jobs:' || current_schema()";

export interface JobListener {
  /** Calls `listener` whenever jobs become ready; returns how to stop. */
  subscribe(listener: () => void): () => void;
  close(): Promise<void>;
}

/**
 * One connection per process that LISTENs and hands each notification to the subscribers, made again
 * (after a second, then up to ten) when the database drops it. Subscribers are told on reconnection
 * too: what was announced meanwhile is not lost, only late.
 */
export class PostgresJobListener implements JobListener {
  private readonly listeners = new Set<() => void>();
  private client: pg.Client | null = null;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;
  private failures = 0;

  constructor(private readonly url: string) {}

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
    const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 5_000, application_name: 'enrichbridge-listen' });
    this.client = client;
    const again = (): void => {
      if (this.client !== client) return;
      this.client = null;
      client.end().catch(() => undefined);
      if (this.closed) return;
      this.failures += 1;
      this.retry = setTimeout(() => {
        this.retry = undefined;
        this.connect();
      }, Math.min(10_000, 1_000 * this.failures));
      this.retry.unref();
    };
    client.on('error', again);
    client.on('end', again);
    client.on('notification', () => this.notify());
    client
      .connect()
      .then(async () => {
        const { rows } = await client.query<{ channel: string }>(`SELECT ${JOBS_CHANNEL_SQL} AS channel`);
        const channel = rows[0]?.channel ?? 'eb_jobs:public';
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
