// The quota forecast: units used this period, the daily average of the last seven
// days, and the day the quota runs out at that pace (none when it lasts until the period resets). Shown
// by `installations show` and on the console's overview.
import type { Store } from '../core/storage/port.ts';
import { currentPeriod } from '../core/limits/quota-period.ts';
import type { Installation } from './model.ts';
import type { PipelineStore } from './store.ts';
import { budgetState } from './budget.ts';

const DAY_MS = 86_400_000;
/** The window the pace is taken over. */
export const FORECAST_DAYS = 7;

export interface UsageForecast {
  /** The sandbox spends no quota. */
  readonly sandbox: boolean;
  /** Units used this period: the token's quota count for a local account, the log's units this UTC month for a remote endpoint. */
  readonly used: number;
  /** The quota for the period; null when it is not known here (a remote endpoint's). */
  readonly limit: number | null;
  readonly period: string;
  /** When the period resets; null when it never does. */
  readonly resetsAt: string | null;
  /** Units a day, over the last seven days (from the log). */
  readonly dailyAverage: number;
  /** The UTC day the quota runs out at that pace; null when it does not before the reset (or nothing is spent). */
  readonly runsOutOn: string | null;
  /** The installation's monthly budget at the same pace; null when it has none. */
  readonly budget: { readonly spent: number; readonly budget: number; readonly runsOutOn: string | null } | null;
}

/** The day the remaining units last to at `dailyAverage` a day, unless the period resets first. */
export function runsOutOn(input: { used: number; limit: number | null; resetsAt: Date | null; dailyAverage: number; now: Date }): string | null {
  const { used, limit, resetsAt, dailyAverage, now } = input;
  if (limit === null) return null;
  const remaining = Math.max(0, limit - used);
  if (remaining === 0) return now.toISOString().slice(0, 10);
  if (dailyAverage <= 0) return null;
  const out = new Date(now.getTime() + (remaining / dailyAverage) * DAY_MS);
  if (resetsAt !== null && out.getTime() >= resetsAt.getTime()) return null;
  return out.toISOString().slice(0, 10);
}

/** The forecast of an installation, from its account's quota (local) or its log (remote), at `now`. */
export async function usageForecast(
  deps: { readonly store: Store; readonly pipelineStore: PipelineStore },
  installation: Installation,
  now: Date,
): Promise<UsageForecast> {
  const since = new Date(now.getTime() - FORECAST_DAYS * DAY_MS);
  const recent = await deps.pipelineStore.dailyOutcomes(installation.id, since.toISOString());
  const dailyAverage = recent.reduce((sum, row) => sum + row.quotaConsumed, 0) / FORECAST_DAYS;
  let used: number;
  let limit: number | null = null;
  let period = 'month';
  let resetsAt: Date | null;
  const account = installation.target.kind === 'local' ? await deps.store.findAccountById(installation.target.accountId) : undefined;
  if (installation.target.kind === 'local' && account !== undefined) {
    const current = currentPeriod(account.quotaPeriod, now);
    used = installation.environment === 'production' ? await deps.store.quotaUsed(installation.target.tokenId, current.key) : 0;
    limit = installation.environment === 'production' ? account.quotaLimit : null;
    period = account.quotaPeriod;
    resetsAt = current.resetsAt;
  } else {
    // A remote endpoint's quota is its own: what this installation spent this UTC month, from the log.
    const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    used = (await deps.pipelineStore.dailyOutcomes(installation.id, monthStart.toISOString())).reduce((sum, row) => sum + row.quotaConsumed, 0);
    resetsAt = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
  }
  const budget = await budgetState(deps.pipelineStore, installation, now);
  return {
    budget:
      budget === null
        ? null
        : {
            spent: budget.spent,
            budget: budget.budget,
            runsOutOn: runsOutOn({ used: budget.spent, limit: budget.budget, resetsAt: new Date(budget.resetsAt), dailyAverage, now }),
          },
    sandbox: installation.environment === 'sandbox',
    used,
    limit,
    period,
    resetsAt: resetsAt?.toISOString() ?? null,
    dailyAverage,
    runsOutOn: runsOutOn({ used, limit, resetsAt, dailyAverage, now }),
  };
}

/** The forecast in one line, for the CLI and the console. */
export function describeForecast(forecast: UsageForecast): string {
  const average = `${forecast.dailyAverage.toFixed(1)} units a day over the last ${FORECAST_DAYS} days`;
  const used =
    forecast.limit === null
      ? `${forecast.used} units used this ${forecast.period}`
      : `${forecast.used} of ${forecast.limit} units used this ${forecast.period}`;
  if (forecast.sandbox) return 'sandbox: no quota is spent';
  let pace: string;
  if (forecast.limit === null) pace = "the endpoint's quota is not known here";
  else if (forecast.runsOutOn !== null) pace = `at this pace the quota runs out on ${forecast.runsOutOn}`;
  else pace = forecast.resetsAt === null ? 'at this pace the quota lasts' : `at this pace the quota lasts until it resets (${forecast.resetsAt.slice(0, 10)})`;
  const budget =
    forecast.budget === null
      ? ''
      : `; budget ${forecast.budget.spent} of ${forecast.budget.budget} units this month, ${forecast.budget.runsOutOn === null ? 'lasting the month at this pace' : `spent at this pace on ${forecast.budget.runsOutOn}`}`;
  return `${used}; ${average}; ${pace}${budget}`;
}
