// What a failed CRM call (a read or a write) does to its records and to the rest of the batch. A call we
// cancelled ourselves releases them untouched. A rate limit releases them until the CRM's retry time, and
// the rest of the batch waits as long (calling sooner only earns more refusals). A daily or org limit
// pauses the installation until the CRM's reset. Anything else is logged and retried with the queue's
// backoff; a CRM that timed out holds the rest of the batch until that first retry.
import { type BatchPorts, type BatchRun, describe, type Stop, type Work } from '../batch-run.ts';
import { CrmError, CrmTimeoutError } from '../connector.ts';
import { RETRY_BASE_MS } from '../job-queue.ts';
import { pauseForLimit } from './pauses.ts';

/** A CRM call failed for these records: wait, pause, or retry, as the error says. */
export async function crmFailure(ports: BatchPorts, run: BatchRun, object: string, works: readonly Work[], error: unknown): Promise<Stop | null> {
  if (run.cancel?.aborted) {
    // Given up by us (shutdown past its grace, a lost lease), not by the CRM: back untouched.
    for (const work of works) run.dispose(work, { kind: 'release' });
    return { kind: 'release', outcome: null };
  }
  if (error instanceof CrmError && error.kind === 'rate_limited') {
    const runAt = error.retryAt ?? new Date(run.now().getTime() + 10_000);
    for (const work of works) run.dispose(work, { kind: 'release', runAt });
    // The rest of the batch waits as well: calling again before retryAt only earns more refusals.
    return { kind: 'release', runAt, outcome: null };
  }
  if (error instanceof CrmError && error.kind === 'limit_exhausted') {
    const runAt = await pauseForLimit(ports, run, 'crm_limit', error.retryAt);
    for (const work of works) {
      run.log(object, work, 'skipped:crm_limit_paused', { detail: `${error.message}; waits until ${runAt.toISOString()}` });
      run.dispose(work, { kind: 'release', runAt });
    }
    return { kind: 'release', runAt, outcome: 'skipped:crm_limit_paused' };
  }
  const kind = error instanceof CrmError ? error.kind : 'transient';
  for (const work of works) {
    run.log(object, work, `failed:crm_${kind}`, { detail: describe(error) });
    run.dispose(work, { kind: 'fail', error: `CRM ${kind}: ${describe(error)}`, retryable: true });
  }
  if (error instanceof CrmTimeoutError) {
    // A CRM that does not answer: the rest of the batch waits as long as these jobs' first retry
    // instead of timing out slice after slice, which would hold this worker for many timeouts.
    return { kind: 'release', runAt: new Date(run.now().getTime() + RETRY_BASE_MS), outcome: null };
  }
  return null;
}
