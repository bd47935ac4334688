// A worker: claims batches of one installation's jobs from the durable queue and runs them through
// the pipeline, keeping its leases alive while it works. Runs inside the server by default, or alone
// (`enrichbridge worker`). On stop it finishes what is in flight and releases the rest.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { JobQueue } from '../../core/queue/job-queue.ts';
import { isDatabaseBusy } from '../../core/storage/errors.ts';
import type { BatchSummary, Pipeline } from './pipeline.ts';

export interface WorkerOptions {
  readonly queue: JobQueue;
  readonly pipeline: Pipeline;
  /**
   * Jobs claimed at a time (one installation's). 200, Salesforce's batch; the pipeline cuts a claim
   * into the connector's own batches (HubSpot 100), so either CRM gets full batches.
   */
  readonly batchSize?: number;
  readonly leaseMs?: number;
  /** How long an idle worker waits before looking again (a `wake()` cuts it short). */
  readonly idleMs?: number;
  /** Batches worked on at once (each a different installation's). */
  readonly concurrency?: number;
  readonly onBatch?: (summary: BatchSummary) => void;
  readonly onError?: (error: unknown) => void;
  readonly workerId?: string;
}

export class Worker {
  readonly workerId: string;
  private readonly batchSize: number;
  private readonly leaseMs: number;
  private readonly idleMs: number;
  private readonly concurrency: number;
  private readonly abort = new AbortController();
  private loops: Promise<void>[] = [];
  private wakers = new Set<() => void>();

  constructor(private readonly options: WorkerOptions) {
    this.workerId = options.workerId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.batchSize = options.batchSize ?? 200;
    this.leaseMs = options.leaseMs ?? 5 * 60_000;
    this.idleMs = options.idleMs ?? 500;
    this.concurrency = options.concurrency ?? 2;
  }

  start(): void {
    if (this.loops.length > 0) return;
    this.loops = Array.from({ length: this.concurrency }, () => this.loop());
  }

  /** Looks at the queue now (after an enqueue) instead of at the end of the idle wait. */
  wake(): void {
    for (const wake of this.wakers) wake();
  }

  /** Stops claiming, lets in-flight enrichments finish and be written, releases the rest. */
  async stop(): Promise<void> {
    this.abort.abort();
    this.wake();
    await Promise.all(this.loops);
  }

  /** Claims and runs one batch; false when there was nothing to do. */
  async runOnce(): Promise<boolean> {
    const { queue, pipeline } = this.options;
    const jobs = await queue.claimBatch({ workerId: this.workerId, limit: this.batchSize, leaseMs: this.leaseMs });
    if (jobs.length === 0) return false;
    const ids = jobs.map((j) => j.id);
    // A batch whose lease was lost (this process stalled past it, and another worker may hold the
    // jobs now) stops sending: what is not yet enriched is left to the new holder.
    const lost = new AbortController();
    // Keep the lease well ahead of a long batch (a shared token's limiter can make one slow).
    const heartbeat = setInterval(() => {
      queue.extendLease(ids, this.workerId, this.leaseMs).then(
        (held) => {
          if (held < ids.length) lost.abort();
        },
        (error: unknown) => this.options.onError?.(error),
      );
    }, Math.max(100, Math.floor(this.leaseMs / 3)));
    try {
      const summary = await pipeline.processBatch(jobs, this.workerId, AbortSignal.any([this.abort.signal, lost.signal]));
      this.options.onBatch?.(summary);
    } finally {
      clearInterval(heartbeat);
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
        // Another process holds the write lock: look again later and later (up to 10 s), on a timer,
        // so the event loop (the server's requests) is not spent knocking.
        if (isDatabaseBusy(error)) busy += 1;
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
