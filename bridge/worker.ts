// A worker: claims batches of one installation's jobs from the durable queue and runs them by kind
// (job-kinds.ts: enrichment through the pipeline), keeping its leases alive while it works. Runs inside the server by default, or alone
// (`enrichbridge worker`). On stop it finishes what is in flight (within a grace), and releases the rest.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { JobQueue } from './job-queue.ts';
import { isDatabaseBusy, isDatabaseUnavailable } from '../core/storage/errors.ts';
import { runInBackground } from '../core/storage/event-loop-slices.ts';
import { ownerKnownDead } from '../core/storage/owners.ts';
import type { BatchProcessor } from './job-kinds.ts';
import type { BatchSummary } from './pipeline.ts';

/**
 * How long a claim lasts without renewal (renewed every third of it while the batch runs): a killed
 * worker's jobs are back within it, as BullMQ's 30 s lock. A restart on the same host gets them back
 * at once (reclaimDeadWorkers).
 */
export const DEFAULT_LEASE_MS = 30_000;
/** How long a stopping worker lets in-flight CRM calls and enrichments finish before it aborts them. */
export const DEFAULT_STOP_GRACE_MS = 10_000;

export interface WorkerOptions {
  readonly queue: JobQueue;
  /** Runs what a claim brings, by job kind (the bridge's `jobs`). */
  readonly jobs: BatchProcessor;
  /**
   * Jobs claimed at a time (one installation's). 200, Salesforce's batch; the pipeline cuts a claim
   * into the connector's own batches (HubSpot 100), so either CRM gets full batches.
   */
  readonly batchSize?: number;
  readonly leaseMs?: number;
  /** How long an idle worker waits before looking again (a `wake()` cuts it short). */
  readonly idleMs?: number;
  /** Batches worked on at once (each a different installation's while others wait). */
  readonly concurrency?: number;
  readonly stopGraceMs?: number;
  readonly onBatch?: (summary: BatchSummary) => void;
  readonly onError?: (error: unknown) => void;
  readonly workerId?: string;
  /** Background tasks that run while the worker does, started and stopped with it (the scheduled refresh). */
  readonly companions?: readonly { start(): void; stop(): void }[];
}

/** A worker id names its host and process, so a restart can tell its dead predecessor's leases. */
export function newWorkerId(): string {
  return `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
}

/** The host and pid of an id newWorkerId made; null for any other id. */
export function workerProcess(workerId: string): { host: string; pid: number } | null {
  const match = /^(.+):(\d+):[0-9a-f]{8}$/.exec(workerId);
  if (match === null || match[1] === undefined || match[2] === undefined) return null;
  return { host: match[1], pid: Number(match[2]) };
}

/**
 * Ends at once the leases of workers that ran on this host in a process that is gone (a SIGKILL, a
 * crash), instead of waiting for them to run out. Only this host's processes can be checked; our own
 * pid is never taken for dead (another worker may run in this process).
 */
export async function reclaimDeadWorkers(
  queue: JobQueue,
  options: { host?: string; isAlive?: (pid: number) => boolean } = {},
): Promise<{ workers: string[]; jobs: number }> {
  const dead = (await queue.leaseHolders()).filter((owner) => workerProcess(owner) !== null && ownerKnownDead(owner, options));
  return { workers: dead, jobs: await queue.expireLeases(dead) };
}

export class Worker {
  readonly workerId: string;
  private readonly batchSize: number;
  private readonly leaseMs: number;
  private readonly idleMs: number;
  private readonly concurrency: number;
  private readonly stopGraceMs: number;
  /** Stop claiming and sending: what is not yet sent is released. */
  private readonly abort = new AbortController();
  /** Give up what is in flight: the grace is over. */
  private readonly cancel = new AbortController();
  private loops: Promise<void>[] = [];
  private wakers = new Set<() => void>();
  private unsubscribe: (() => void) | undefined;
  /** Installations whose batch a lane is working on: the other lanes look elsewhere first. */
  private readonly inHand = new Map<string, number>();
  /** The lanes claim one at a time, so each claim knows what the others took. */
  private claiming: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: WorkerOptions) {
    this.workerId = options.workerId ?? newWorkerId();
    this.batchSize = options.batchSize ?? 200;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    // Where enqueues are announced (PostgreSQL) the poll is only the fallback, and slower.
    this.idleMs = options.idleMs ?? (options.queue.onReady === undefined ? 500 : 2_000);
    this.concurrency = options.concurrency ?? 2;
    this.stopGraceMs = options.stopGraceMs ?? DEFAULT_STOP_GRACE_MS;
  }

  start(): void {
    if (this.loops.length > 0) return;
    for (const companion of this.options.companions ?? []) companion.start();
    // Woken by every process's enqueues where the queue announces them (PostgreSQL); the poll stays.
    this.unsubscribe = this.options.queue.onReady?.(() => this.wake());
    // Background work: its long runs of statements give requests a turn (core/storage/event-loop-slices.ts).
    this.loops = Array.from({ length: this.concurrency }, () => runInBackground(() => this.loop()));
  }

  /** Looks at the queue now (after an enqueue) instead of at the end of the idle wait. */
  wake(): void {
    for (const wake of this.wakers) wake();
  }

  /**
   * Stops claiming, lets in-flight enrichments and CRM calls finish and be written for up to the
   * grace, then aborts them (a CRM that hangs must not hold the shutdown) and releases the rest.
   */
  async stop(): Promise<void> {
    for (const companion of this.options.companions ?? []) companion.stop();
    this.unsubscribe?.();
    this.abort.abort();
    this.wake();
    const grace = setTimeout(() => this.cancel.abort(new Error('the worker is stopping')), this.stopGraceMs);
    try {
      await Promise.all(this.loops);
    } finally {
      clearTimeout(grace);
    }
  }

  /** Claims and runs one batch; false when there was nothing to do. */
  async runOnce(): Promise<boolean> {
    const { queue, jobs: processor } = this.options;
    const claim = this.claiming.then(async () => {
      const claimed = await queue.claimBatch({ workerId: this.workerId, limit: this.batchSize, leaseMs: this.leaseMs, avoid: [...this.inHand.keys()] });
      const first = claimed[0]?.installationId;
      if (first !== undefined) this.inHand.set(first, (this.inHand.get(first) ?? 0) + 1);
      return claimed;
    });
    this.claiming = claim.catch(() => undefined);
    const jobs = await claim;
    const installationId = jobs[0]?.installationId;
    if (installationId === undefined) return false;
    const ids = jobs.map((j) => j.id);
    // A batch whose lease was lost (this process stalled past it, and another worker may hold the
    // jobs now) stops sending and gives up its calls in flight: the rest is left to the new holder.
    // The pipeline also checks the lease before each CRM write, as a renewal may come too late.
    const lost = new AbortController();
    // Keep the lease well ahead of a long batch (a shared token's limiter can make one slow).
    // Fewer renewed than claimed is usual (the pipeline settles a batch slice by slice): the lease is
    // lost only when another worker has taken some of the jobs.
    const heartbeat = setInterval(
      () => {
        queue
          .extendLease(ids, this.workerId, this.leaseMs)
          .then(async (held) => {
            if (held < ids.length && (await queue.takenOver(ids, this.workerId)) > 0) lost.abort(new Error('the lease was lost'));
          })
          .catch((error: unknown) => this.options.onError?.(error));
      },
      Math.max(100, Math.floor(this.leaseMs / 3)),
    );
    try {
      const summary = await processor.processBatch(jobs, this.workerId, {
        stop: AbortSignal.any([this.abort.signal, lost.signal]),
        cancel: AbortSignal.any([this.cancel.signal, lost.signal]),
      });
      this.options.onBatch?.(summary);
    } finally {
      clearInterval(heartbeat);
      const lanes = (this.inHand.get(installationId) ?? 1) - 1;
      if (lanes > 0) this.inHand.set(installationId, lanes);
      else this.inHand.delete(installationId);
    }
    return true;
  }

  private async loop(): Promise<void> {
    let busy = 0;
    while (!this.abort.signal.aborted) {
      let worked = false;
      try {
        worked = await this.runOnce();
        busy = 0;
      } catch (error) {
        this.options.onError?.(error);
        // Another process holds the write lock, or the database is away (a restart, a failover): look
        // again later and later (up to 10 s), on a timer, so the event loop (the server's requests) is
        // not spent knocking. Jobs a lost connection left leased go back to the queue with their lease.
        if (isDatabaseBusy(error) || isDatabaseUnavailable(error)) busy += 1;
      }
      if (!worked && !this.abort.signal.aborted) await this.idle(busy === 0 ? this.idleMs : Math.min(10_000, this.idleMs * 2 ** busy));
    }
  }

  private idle(ms = this.idleMs): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakers.add(done);
    });
  }
}
