// The database's clock, read on this host: leases and claims are written by one host and compared by
// another, so they must all be on one clock. Each host's own clock can be minutes off another's (no
// NTP, a paused VM); the database's is the one every instance shares. Reading it in every statement
// would cost a round trip each, so the offset between this host's clock and the database's is measured
// at start and every minute (half the round trip taken as the one-way delay), and `now()` is this
// host's clock plus that offset. SQLite lives on one host: its clock is the host's.
import type { Kysely } from 'kysely';
import { sql } from 'kysely';

export interface LeaseClock {
  /** Now, on the clock leases and claims are written and compared on. */
  now(): Date;
}

/** This host's clock: SQLite's, and what tests and single-host tools use. */
export const HOST_CLOCK: LeaseClock = { now: () => new Date() };

const RESYNC_MS = 60_000;

export class DatabaseClock implements LeaseClock {
  private offsetMs = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly readDatabaseMs: () => Promise<number>,
    /** This host's clock in ms since the epoch (a test may set it off by minutes). */
    private readonly hostMs: () => number = () => Date.now(),
  ) {}

  /** The clock of a PostgreSQL database, read through `db`. */
  static postgres<DB>(db: Kysely<DB>, hostMs?: () => number): DatabaseClock {
    return new DatabaseClock(async () => {
      const { rows } = await sql<{ ms: number | string }>`SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms`.execute(db);
      return Number(rows[0]?.ms);
    }, hostMs);
  }

  now(): Date {
    return new Date(this.hostMs() + this.offsetMs);
  }

  /** How far this host's clock is behind the database's, in ms (negative: ahead). */
  get offset(): number {
    return this.offsetMs;
  }

  /** Measures the offset again; on failure (the database away) the last one stands. */
  async sync(): Promise<void> {
    const before = this.hostMs();
    const database = await this.readDatabaseMs();
    const after = this.hostMs();
    if (Number.isFinite(database)) this.offsetMs = Math.round(database - (before + after) / 2);
  }

  /** Measures now, then every minute in the background. */
  async start(): Promise<void> {
    await this.sync();
    this.timer = setInterval(() => {
      this.sync().catch(() => undefined);
    }, RESYNC_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
