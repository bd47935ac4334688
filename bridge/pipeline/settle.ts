// Settling a batch's jobs once its outcomes are saved: the completed ones in one statement, each other
// failed (retried with backoff, or dead) or released (untouched, or held until a time). A job this worker
// no longer holds (its lease ran out) is its new holder's to settle, and counted as lost. The jobs that
// carried a workflow's callbackId and are settled for good (done, or dead) are handed to the callback
// hook with the record's outcome and its properties as they now stand.
import { retryWhileBusy } from '../../core/storage/errors.ts';
import type { BatchRun } from '../batch-run.ts';
import { EnrichJobPayloadSchema } from '../enrich-job.ts';
import type { Job, JobQueue } from '../job-queue.ts';
import type { CrmValue, Installation, Outcome } from '../model.ts';

/** A workflow's job, settled: the record's outcome and its properties as they now stand in the CRM. */
export interface SettledCallback {
  readonly callbackId: string;
  readonly object: string;
  readonly recordId: string;
  /** The record's last logged outcome in this batch; null when none was logged. */
  readonly outcome: Outcome | null;
  /** True when the job ended dead (the enrichment or the write failed for good). */
  readonly failed: boolean;
  /** The record's properties after our write (null when it could not be read). */
  readonly properties: Readonly<Record<string, CrmValue>> | null;
}

export type CallbackHook = (installation: Installation, settled: readonly SettledCallback[]) => Promise<void>;

export async function settle(queue: JobQueue, onCallbacks: CallbackHook | undefined, run: BatchRun, jobs: readonly Job[], workerId: string): Promise<void> {
  const callbacks: SettledCallback[] = [];
  // The completed ones in one statement: a batch of 100 is one write, not 100.
  const completed = await retryWhileBusy(() =>
    queue.completeMany(
      jobs.filter((job) => run.disposals.get(job.id)?.kind === 'complete').map((job) => job.id),
      workerId,
    ),
  );
  for (const job of jobs) {
    const disposal = run.disposals.get(job.id) ?? { kind: 'fail', error: 'left unsettled by the pipeline', retryable: true };
    let final: 'done' | 'dead' | null = null;
    // A job this worker no longer holds is its new holder's to settle (and to answer a callback for).
    if (disposal.kind === 'complete') {
      if (completed.has(job.id)) final = 'done';
      else run.leaseLost += 1;
    } else if (disposal.kind === 'fail') {
      const failed = await retryWhileBusy(() => queue.fail(job.id, workerId, disposal.error, { retryable: disposal.retryable }));
      if (failed === 'dead') final = 'dead';
      if (failed === 'not_leased') run.leaseLost += 1;
    } else if (await retryWhileBusy(() => queue.release(job.id, workerId, disposal.runAt === undefined ? {} : { runAt: disposal.runAt }))) {
      run.released += 1;
    } else {
      run.leaseLost += 1;
    }
    const payload = EnrichJobPayloadSchema.safeParse(job.payload);
    if (final !== null && payload.success && payload.data.callbackId !== undefined) {
      const key = `${payload.data.object}/${payload.data.recordId}`;
      callbacks.push({
        callbackId: payload.data.callbackId,
        object: payload.data.object,
        recordId: payload.data.recordId,
        outcome: run.lastOutcome.get(key) ?? null,
        failed: final === 'dead',
        properties: run.finalProperties.get(key) ?? null,
      });
    }
  }
  if (callbacks.length > 0) await onCallbacks?.(run.installation, callbacks);
}
