// Unit tests of quota periods: the ledger key (ISO date the UTC period started) and the next refresh,
// for day, ISO week from Monday, month, year and the never-refreshing quota, including boundaries.
import { describe, expect, it } from 'vitest';
import type { QuotaPeriod } from '../../core/accounts/model.ts';
import { currentPeriod } from '../../core/limits/quota-period.ts';

function window(period: QuotaPeriod, now: string): { key: string; resetsAt: string | null } {
  const { key, resetsAt } = currentPeriod(period, new Date(now));
  return { key, resetsAt: resetsAt === null ? null : resetsAt.toISOString() };
}

describe('currentPeriod on an ordinary instant (Saturday 2026-11-21T21:40Z)', () => {
  const now = '2026-11-21T21:40:00.000Z';

  it('day: key is the UTC date, resets at the next UTC midnight', () => {
    expect(window('day', now)).toEqual({ key: '2026-11-21', resetsAt: '2026-11-22T00:00:00.000Z' });
  });

  it('week: key is the Monday the ISO week started, resets the next Monday', () => {
    expect(window('week', now)).toEqual({ key: '2026-11-16', resetsAt: '2026-11-23T00:00:00.000Z' });
  });

  it('month: key is the 1st, resets on the 1st of the next month', () => {
    expect(window('month', now)).toEqual({ key: '2026-11-01', resetsAt: '2026-12-01T00:00:00.000Z' });
  });

  it('year: key is January 1st, resets January 1st of the next year', () => {
    expect(window('year', now)).toEqual({ key: '2026-01-01', resetsAt: '2027-01-01T00:00:00.000Z' });
  });

  it("none: one ledger 'all' that never resets", () => {
    expect(window('none', now)).toEqual({ key: 'all', resetsAt: null });
  });
});

describe('currentPeriod boundaries', () => {
  it('exactly midnight belongs to the new day', () => {
    expect(window('day', '2026-11-22T00:00:00.000Z')).toEqual({ key: '2026-11-22', resetsAt: '2026-11-23T00:00:00.000Z' });
  });

  it('one millisecond before midnight still belongs to the old day', () => {
    expect(window('day', '2026-11-21T23:59:59.999Z').key).toBe('2026-11-21');
  });

  it('periods are UTC: an instant given with a negative offset is keyed by its UTC date', () => {
    // 2026-11-21T20:30-05:00 is 2026-11-22T01:30Z.
    expect(window('day', '2026-11-21T20:30:00-05:00').key).toBe('2026-11-22');
  });

  it('exactly Monday midnight starts a new week', () => {
    expect(window('week', '2026-11-23T00:00:00.000Z')).toEqual({ key: '2026-11-23', resetsAt: '2026-11-30T00:00:00.000Z' });
  });

  it('a Sunday belongs to the week that started the Monday before', () => {
    expect(window('week', '2026-11-22T23:59:59.999Z')).toEqual({ key: '2026-11-16', resetsAt: '2026-11-23T00:00:00.000Z' });
  });

  it('a Monday is the first day of its own week', () => {
    expect(window('week', '2026-11-16T08:00:00.000Z').key).toBe('2026-11-16');
  });

  it('a week that straddles a month end starts in the earlier month', () => {
    // Sunday 2026-03-01 belongs to the week of Monday 2026-02-23.
    expect(window('week', '2026-03-01T12:00:00.000Z')).toEqual({ key: '2026-02-23', resetsAt: '2026-03-02T00:00:00.000Z' });
  });

  it('a week that straddles New Year starts in the old year', () => {
    // Friday 2027-01-01 belongs to the week of Monday 2026-12-28.
    expect(window('week', '2027-01-01T09:00:00.000Z')).toEqual({ key: '2026-12-28', resetsAt: '2027-01-04T00:00:00.000Z' });
  });

  it('month: December 31st resets on January 1st of the next year', () => {
    expect(window('month', '2026-12-31T23:59:59.999Z')).toEqual({ key: '2026-12-01', resetsAt: '2027-01-01T00:00:00.000Z' });
  });

  it('month: exactly midnight on the 1st belongs to the new month', () => {
    expect(window('month', '2027-01-01T00:00:00.000Z')).toEqual({ key: '2027-01-01', resetsAt: '2027-02-01T00:00:00.000Z' });
  });

  it('month: the end of February rolls to March 1st in leap and common years', () => {
    expect(window('month', '2028-02-29T12:00:00.000Z')).toEqual({ key: '2028-02-01', resetsAt: '2028-03-01T00:00:00.000Z' });
    expect(window('month', '2027-02-28T12:00:00.000Z')).toEqual({ key: '2027-02-01', resetsAt: '2027-03-01T00:00:00.000Z' });
  });

  it('day: December 31st rolls to January 1st', () => {
    expect(window('day', '2026-12-31T18:00:00.000Z')).toEqual({ key: '2026-12-31', resetsAt: '2027-01-01T00:00:00.000Z' });
  });

  it('year: December 31st is still the old year, exactly midnight Jan 1st is the new one', () => {
    expect(window('year', '2026-12-31T23:59:59.999Z')).toEqual({ key: '2026-01-01', resetsAt: '2027-01-01T00:00:00.000Z' });
    expect(window('year', '2027-01-01T00:00:00.000Z')).toEqual({ key: '2027-01-01', resetsAt: '2028-01-01T00:00:00.000Z' });
  });

  it('resetsAt is always after now and the key is never after now', () => {
    const instants = ['2026-01-01T00:00:00Z', '2026-06-15T12:34:56Z', '2026-12-31T23:59:59Z', '2028-02-29T00:00:00Z'];
    const periods: QuotaPeriod[] = ['day', 'week', 'month', 'year'];
    for (const instant of instants) {
      const now = new Date(instant);
      for (const period of periods) {
        const { key, resetsAt } = currentPeriod(period, now);
        expect(resetsAt?.getTime() ?? 0).toBeGreaterThan(now.getTime());
        expect(new Date(`${key}T00:00:00Z`).getTime()).toBeLessThanOrEqual(now.getTime());
      }
    }
  });
});
