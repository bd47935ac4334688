// The durable job queue of the CRM pipeline, as a port (kysely-job-queue.ts is its SQL adapter, the
// embedded default; a pg-boss adapter will implement it on PostgreSQL).

export const JOB_STATES = ['queued', 'running', 'done', 'dead'] as const;
export type JobState = (typeof JOB_STATES)[number];

export interface Job {
  readonly id: string;
  readonly installationId: string;
  readonly kind: string;
  readonly payload: unknown;
  readonly dedupeKey: string | null;
  readonly state: JobState;
  /** Deliveries so far, this one included once claimed. */
  readonly attempts: number;
  readonly maxAttempts: number;
  readonly runAt: string;
  readonly leaseOwner: string | null;
  readonly leaseExpiresAt: string | null;
  readonly lastError: string | null;
  readonly createdAt: string;
}

/**
 * A payload already written as JSON (a webhook batch's body, which passed its schema): stored as that
 * text instead of being parsed into objects and written out again. A claim reads it back as any payload.
 */
export class JsonText {
  constructor(readonly text: string) {}
}

export interface NewJob {
  readonly installationId: string;
  readonly kind: string;
  /** Stored as JSON; a JsonText as its text. */
  readonly payload: unknown;
  /**
   * A queued job with this key makes the new one a no-op. A running one is marked to run once more
   * when it completes: the event may report a change its run read too early to see.
   */
  readonly dedupeKey?: string;
  readonly maxAttempts?: number;
  readonly runAt?: Date;
  /** The work it belongs to (a console backfill run): counted and cancelled together (countGroup, cancelGroup). */
  readonly group?: string;
}

export interface ClaimOptions {
  readonly workerId: string;
  readonly limit: number;
  readonly leaseMs: number;
  readonly now?: Date;
  /** Only jobs of these kinds (all kinds when absent). */
  readonly kinds?: readonly string[];
  /**
   * Installations the worker already has in hand (its other lanes): another installation's ready jobs
   * are taken first, so one slow or hanging CRM cannot hold every lane while others wait. Taken anyway
   * when nothing else is ready.
   */
  readonly avoid?: readonly string[];
}

export interface JobQueue {
  /** Returns the job's id and whether it was created (false: a pending job has the dedupe key). */
  enqueue(job: NewJob): Promise<{ id: string; created: boolean }>;
  /**
   * Enqueues several jobs in one transaction (a webhook batch): all land or none do. Same dedupe
   * rules as `enqueue`; returns how many were created.
   */
  enqueueMany(jobs: readonly NewJob[]): Promise<{ created: number; duplicates: number }>;
  /**
   * Leases up to `limit` ready jobs of one installation (the one whose oldest job is readiest), so a
   * worker can batch its CRM reads and writes. A job whose lease expired is ready again: delivery is
   * at least once.
   */
  claimBatch(options: ClaimOptions): Promise<Job[]>;
  complete(id: string, workerId: string): Promise<boolean>;
  /** Completes a worker's leased jobs in one statement per hundred; returns the ids it completed. */
  completeMany(ids: readonly string[], workerId: string): Promise<Set<string>>;
  /** Back to the queue after a backoff, or dead once its attempts are spent (or when not retryable). */
  fail(id: string, workerId: string, error: string, options?: { retryable?: boolean; now?: Date }): Promise<'retrying' | 'dead' | 'not_leased'>;
  /**
   * Gives a leased job back untouched (graceful shutdown, a paused installation): it does not count as
   * an attempt. With `runAt`, it waits until then.
   */
  release(id: string, workerId: string, options?: { runAt?: Date }): Promise<boolean>;
  /** Pushes the lease of jobs still held by this worker out by `leaseMs` from now; returns how many. */
  extendLease(ids: readonly string[], workerId: string, leaseMs: number): Promise<number>;
  /** How many of these jobs another worker has leased since (settled ones are not taken: they are done). */
  takenOver(ids: readonly string[], workerId: string): Promise<number>;
  /** Of these jobs, the ones this worker still holds, its lease not run out: what it may act on. */
  heldBy(ids: readonly string[], workerId: string, now?: Date): Promise<Set<string>>;
  /** The workers holding leases on running jobs. */
  leaseHolders(): Promise<string[]>;
  /** Ends these workers' leases now, as if they had run out (their process is known dead); returns how many. */
  expireLeases(workerIds: readonly string[], now?: Date): Promise<number>;
  /** Moves every queued job of an installation to `runAt` (a pause until a reset, or a resume now). */
  reschedule(installationId: string, runAt: Date): Promise<number>;
  /**
   * Removes every job of an installation, whatever its state (a disconnect): none is left to run, to be
   * listed as dead or to be retried, and the worker holding a running one settles nothing of it, as after
   * a takeover. Returns how many.
   */
  removeInstallation(installationId: string): Promise<number>;
  /** The queued or running job with one of these dedupe keys, if any (a record's pending enrichment). */
  findPending(dedupeKeys: readonly string[]): Promise<Job | undefined>;
  /** Drops the queued job with this dedupe key (the record it was for is gone); true when one was. */
  cancel(dedupeKey: string): Promise<boolean>;
  /** A group's jobs by state (a backfill run's enrichments: how far they have got). */
  countGroup(group: string): Promise<Partial<Record<JobState, number>>>;
  /** Removes a group's queued jobs (a running one finishes); returns how many. */
  cancelGroup(group: string): Promise<number>;
  list(options?: { state?: JobState; limit?: number }): Promise<Job[]>;
  retryDead(ids: readonly string[] | 'all'): Promise<number>;
  /** How many jobs are in each state (a state with none is absent). */
  countByState(): Promise<Partial<Record<JobState, number>>>;
  /**
   * Where the queue can say so (PostgreSQL's LISTEN/NOTIFY): calls `listener` when jobs are enqueued by
   * any process; returns how to stop. Absent: workers find new jobs by polling.
   */
  readonly onReady?: ((listener: () => void) => () => void) | undefined;
}

export const DEFAULT_MAX_ATTEMPTS = 5;
export const RETRY_BASE_MS = 30_000;
export const RETRY_MAX_MS = 30 * 60_000;

/** Backoff before the next delivery after `attempts` failed ones: doubling from 30 s, capped at 30 min. */
export function retryDelayMs(attempts: number): number {
  return Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.max(0, attempts - 1));
}
