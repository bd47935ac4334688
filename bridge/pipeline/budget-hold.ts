// The month's budget is read, spent and recorded by one batch of an installation at a time, across
// workers and instances: two side by side would each read the whole of what is left. A batch takes the
// installation's budget lease before it reads, renews it while it runs, and gives it back once its spend
// is saved; the lease of a process that died runs out by itself.
import { randomUUID } from 'node:crypto';
import type { BatchRun } from '../batch-run.ts';
import type { LeaseStore } from '../store.ts';

/**
 * How long a batch's hold on its installation's budget lasts unless renewed (a third of it at a time):
 * the hold of a process that died frees the budget for the other workers after this.
 */
export const BUDGET_HOLD_MS = 60_000;
/** A batch that found the budget held by another runs again after this, without an attempt counted. */
export const BUDGET_WAIT_MS = 2_000;

/** Takes the installation's budget hold for this batch, renewed while the batch runs; false when another batch has it. */
export async function holdBudget(leases: LeaseStore, run: BatchRun): Promise<boolean> {
  const key = `budget:${run.installation.id}`;
  const owner = `${run.workerId}:${randomUUID()}`;
  if (!(await leases.acquireLease(key, owner, BUDGET_HOLD_MS))) return false;
  const renewal = setInterval(() => {
    leases.acquireLease(key, owner, BUDGET_HOLD_MS).catch(() => undefined);
  }, BUDGET_HOLD_MS / 3);
  renewal.unref();
  run.budgetHold = { key, owner, renewal };
  return true;
}

/** Gives the hold back, if the batch has one. A hold that cannot be given back (the database away) runs out by itself. */
export async function releaseBudget(leases: LeaseStore, run: BatchRun): Promise<void> {
  const hold = run.budgetHold;
  if (hold === null) return;
  run.budgetHold = null;
  clearInterval(hold.renewal);
  await leases.releaseLease(hold.key, hold.owner).catch(() => undefined);
}
