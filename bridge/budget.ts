// An installation's monthly unit budget: what it has spent this calendar month (UTC)
// by its log, what is left, and when it starts again. The pipeline lets no more lookups through than
// are left and then pauses the installation (reason `budget`) until the next month, as a quota pause
// does; a larger budget set meanwhile resumes it (Installations.updateSettings).
import type { Installation } from './model.ts';
import type { PipelineStore } from './store.ts';

/** From this share of the budget on, the console, the server log and /metrics warn. */
export const BUDGET_WARNING_RATIO = 0.8;

export function monthStart(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

export function nextMonthStart(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
}

export interface BudgetState {
  readonly budget: number;
  readonly spent: number;
  readonly left: number;
  /** spent / budget (above 1 when a batch in flight went past it). */
  readonly ratio: number;
  /** Spent at least 80 %. */
  readonly warning: boolean;
  readonly reached: boolean;
  /** The start of next month (UTC), when the budget starts again. */
  readonly resetsAt: string;
}

/** The installation's budget this month; null when it has none, or spends no units (the sandbox). */
export async function budgetState(store: Pick<PipelineStore, 'unitsSince'>, installation: Installation, now: Date): Promise<BudgetState | null> {
  const budget = installation.settings.monthlyBudget;
  if (budget === null || installation.environment !== 'production') return null;
  const spent = await store.unitsSince(installation.id, monthStart(now).toISOString());
  return {
    budget,
    spent,
    left: Math.max(0, budget - spent),
    ratio: spent / budget,
    warning: spent >= budget * BUDGET_WARNING_RATIO,
    reached: spent >= budget,
    resetsAt: nextMonthStart(now).toISOString(),
  };
}
