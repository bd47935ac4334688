// What the worker runs, by job kind (pg-boss's `work(name, handler)`): a batch the queue hands out is
// one installation's jobs, which may be of several kinds; each kind's jobs go to the handler that was
// registered for it. The pipeline is the handler of `enrich`; a connector's own kinds (a webhook batch
// to expand, a workflow callback to retry) are registered through the ConnectorRegistry and settled by
// `settledBy`. A kind nobody registered fails for good: this version cannot run it.
import { loggableMessage } from '../core/observe/loggable-errors.ts';
import { jobsFinished } from '../core/observe/metrics.ts';
import type { Job, JobQueue } from './job-queue.ts';
import { retryWhileBusy } from '../core/storage/errors.ts';
import type { Installation } from './model.ts';
import type { BatchSignals, BatchSummary } from './pipeline.ts';
import type { PipelineStore } from './store.ts';

export interface JobContext {
  readonly workerId: string;
  readonly signals: BatchSignals;
}

/** Runs and settles (completes, fails or releases) a batch of one kind's jobs of one installation. */
export type JobKindHandler = (jobs: readonly Job[], context: JobContext) => Promise<BatchSummary>;

/** What a worker needs: something that runs and settles whatever batch it claimed. */
export interface BatchProcessor {
  processBatch(jobs: readonly Job[], workerId: string, signals?: BatchSignals): Promise<BatchSummary>;
}

/** A job's last error keeps no personal data: a driver's or a CRM's text is reduced (loggableMessage). */
const describe = (error: unknown): string => loggableMessage(error);

function emptySummary(installationId: string): BatchSummary {
  return { installationId, jobs: 0, outcomes: {}, released: 0, crmCalls: 0, leaseLost: 0 };
}

function merge(a: BatchSummary, b: BatchSummary): BatchSummary {
  const outcomes: Record<string, number> = { ...a.outcomes };
  for (const [outcome, n] of Object.entries(b.outcomes)) outcomes[outcome] = (outcomes[outcome] ?? 0) + n;
  return {
    installationId: a.installationId,
    jobs: a.jobs + b.jobs,
    outcomes,
    released: a.released + b.released,
    crmCalls: a.crmCalls + b.crmCalls,
    leaseLost: a.leaseLost + b.leaseLost,
  };
}

export class JobKinds implements BatchProcessor {
  private readonly handlers = new Map<string, JobKindHandler>();

  constructor(private readonly queue: JobQueue) {}

  /** Registers the handler of a kind; a kind has one handler. */
  work(kind: string, handler: JobKindHandler): this {
    if (this.handlers.has(kind)) throw new Error(`job kind "${kind}" has a handler already`);
    this.handlers.set(kind, handler);
    return this;
  }

  kinds(): string[] {
    return [...this.handlers.keys()];
  }

  /** Each kind's jobs to its handler, in the order the kinds first appear in the batch. */
  async processBatch(jobs: readonly Job[], workerId: string, signals: BatchSignals = {}): Promise<BatchSummary> {
    let summary = emptySummary(jobs[0]?.installationId ?? '');
    const byKind = new Map<string, Job[]>();
    for (const job of jobs) {
      const ofKind = byKind.get(job.kind);
      if (ofKind === undefined) byKind.set(job.kind, [job]);
      else ofKind.push(job);
    }
    for (const [kind, ofKind] of byKind) {
      const handler = this.handlers.get(kind);
      if (handler === undefined) {
        for (const job of ofKind) {
          await retryWhileBusy(() => this.queue.fail(job.id, workerId, `not a job kind this version understands (${kind})`, { retryable: false }));
        }
        summary = merge(summary, { ...emptySummary(summary.installationId), jobs: ofKind.length });
        jobsFinished.inc({ kind, result: 'failed' }, ofKind.length);
        continue;
      }
      const done = await handler(ofKind, { workerId, signals });
      count(kind, done);
      summary = merge(summary, done);
    }
    return summary;
  }
}

/** A kind's batch in the metrics: released as said, failed as its `failed:*` outcomes say, the rest completed. */
function count(kind: string, summary: BatchSummary): void {
  const failed = Object.entries(summary.outcomes).reduce((n, [outcome, times]) => (outcome.startsWith('failed') ? n + times : n), 0);
  if (summary.released > 0) jobsFinished.inc({ kind, result: 'released' }, summary.released);
  if (failed > 0) jobsFinished.inc({ kind, result: 'failed' }, failed);
  const completed = summary.jobs - summary.released - failed;
  if (completed > 0) jobsFinished.inc({ kind, result: 'completed' }, completed);
}

/**
 * A handler for jobs that are done when `task` resolves and retried (with the queue's backoff) when it
 * throws. Jobs of an installation that no longer exists (disconnected) are settled without running.
 */
export function settledBy(
  kind: string,
  deps: { readonly store: PipelineStore; readonly queue: JobQueue },
  task: (installation: Installation, jobs: readonly Job[]) => Promise<void>,
): JobKindHandler {
  return async (jobs, { workerId }) => {
    const installationId = jobs[0]?.installationId ?? '';
    const installation = await deps.store.findInstallation(installationId);
    if (installation === undefined) {
      await retryWhileBusy(() =>
        deps.queue.completeMany(
          jobs.map((job) => job.id),
          workerId,
        ),
      );
      return { ...emptySummary(installationId), jobs: jobs.length, outcomes: { 'dropped:disconnected': jobs.length } };
    }
    let leaseLost = 0;
    try {
      await task(installation, jobs);
      const completed = await retryWhileBusy(() =>
        deps.queue.completeMany(
          jobs.map((job) => job.id),
          workerId,
        ),
      );
      leaseLost = jobs.length - completed.size;
    } catch (error) {
      for (const job of jobs) {
        const failed = await retryWhileBusy(() => deps.queue.fail(job.id, workerId, `${kind}: ${describe(error)}`, { retryable: true }));
        if (failed === 'not_leased') leaseLost += 1;
      }
    }
    return { ...emptySummary(installationId), jobs: jobs.length, leaseLost };
  };
}
