// An installation's pauses, as a batch meets them. A disabled installation, or one an admin paused, enriches
// nothing: its records are logged and their jobs completed (a backfill catches up later). One paused for a
// limit (the quota, the CRM's daily or org limit, the month's budget) holds its jobs until the limit
// resets; a reset that has passed, or a budget no longer spent, ends the pause and brings its jobs back.
import { type BatchPorts, type BatchRun, PAUSE_WITHOUT_RESET_MS, type WorksByObject } from '../batch-run.ts';
import { budgetState } from '../budget.ts';

/**
 * Settles the whole batch without enriching when the installation is disabled or paused (by an admin,
 * or for a limit that has not reset yet); true when it did. A limit that has reset ends the pause.
 */
export async function heldByInstallationStatus(ports: BatchPorts, run: BatchRun, byObject: WorksByObject): Promise<boolean> {
  const { installation } = run;
  const all = [...byObject.entries()].flatMap(([object, records]) => [...records.values()].map((work) => ({ object, work })));
  if (installation.status === 'disabled' || (installation.status === 'paused' && installation.pauseReason === 'admin')) {
    const outcome = installation.status === 'disabled' ? 'skipped:installation_disabled' : 'skipped:installation_paused';
    for (const { object, work } of all) {
      run.log(object, work, outcome);
      run.dispose(work, { kind: 'complete' });
    }
    return true;
  }
  if (installation.status !== 'paused') return false;
  if (installation.pauseReason === 'budget' && !(await budgetState(ports.store, installation, run.now()))?.reached) {
    // The budget was raised or removed (or the month turned): carry on, with the held jobs.
    await ports.store.updateInstallation(installation.id, { status: 'active', pauseReason: null, pausedUntil: null });
    await ports.queue.reschedule(installation.id, run.now());
    return false;
  }
  const until = installation.pausedUntil === null ? null : new Date(installation.pausedUntil);
  if (until !== null && until.getTime() <= run.now().getTime()) {
    // The limit has reset: carry on, and bring the rest of the installation's jobs back.
    await ports.store.updateInstallation(installation.id, { status: 'active', pauseReason: null, pausedUntil: null });
    await ports.queue.reschedule(installation.id, run.now());
    return false;
  }
  const outcome =
    installation.pauseReason === 'crm_limit'
      ? 'skipped:crm_limit_paused'
      : installation.pauseReason === 'budget'
        ? 'skipped:budget_paused'
        : 'skipped:quota_paused';
  const runAt = until ?? new Date(run.now().getTime() + PAUSE_WITHOUT_RESET_MS);
  for (const { object, work } of all) {
    run.log(object, work, outcome, { detail: `waits until ${runAt.toISOString()}` });
    run.dispose(work, { kind: 'release', runAt });
  }
  return true;
}

/** Pauses the run's installation until `until` for a limit, and holds its queued jobs till then. */
export async function pauseForLimit(ports: BatchPorts, run: BatchRun, reason: 'quota' | 'crm_limit' | 'budget', until: Date | null): Promise<Date> {
  const runAt = until ?? new Date(run.now().getTime() + PAUSE_WITHOUT_RESET_MS);
  await ports.store.updateInstallation(run.installation.id, {
    status: 'paused',
    pauseReason: reason,
    pausedUntil: until === null ? null : until.toISOString(),
  });
  await ports.queue.reschedule(run.installation.id, runAt);
  return runAt;
}
