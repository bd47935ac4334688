// Quota periods: which ledger a request draws from and when it refreshes. Periods are UTC calendar
// periods (day, ISO week from Monday, month, year) so every process agrees on the boundary.
import type { QuotaPeriod } from '../accounts/model.ts';

export interface PeriodWindow {
  /** Ledger key, the ISO date the period started (`2026-11-01`), or `all` for a quota that never refreshes. */
  readonly key: string;
  /** Start of the next period, or null when the quota never refreshes. */
  readonly resetsAt: Date | null;
}

function utcDate(year: number, month: number, day: number): Date {
  return new Date(Date.UTC(year, month, day));
}

export function currentPeriod(period: QuotaPeriod, now: Date): PeriodWindow {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const d = now.getUTCDate();
  let start: Date;
  let next: Date;
  switch (period) {
    case 'none':
      return { key: 'all', resetsAt: null };
    case 'day':
      start = utcDate(y, m, d);
      next = utcDate(y, m, d + 1);
      break;
    case 'week': {
      const sinceMonday = (now.getUTCDay() + 6) % 7;
      start = utcDate(y, m, d - sinceMonday);
      next = utcDate(y, m, d - sinceMonday + 7);
      break;
    }
    case 'month':
      start = utcDate(y, m, 1);
      next = utcDate(y, m + 1, 1);
      break;
    case 'year':
      start = utcDate(y, 0, 1);
      next = utcDate(y + 1, 0, 1);
      break;
  }
  return { key: start.toISOString().slice(0, 10), resetsAt: next };
}
