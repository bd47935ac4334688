// The quota forecast's arithmetic (bridge/forecast.ts): the day the remaining units last
// to at the last seven days' pace, or none when they outlast the period.
import { describe, expect, it } from 'vitest';
import { describeForecast, runsOutOn } from '../../bridge/forecast.ts';

const now = new Date('2026-11-10T12:00:00Z');
const reset = new Date('2026-12-01T00:00:00Z');

describe('runsOutOn', () => {
  it('is the day the remaining units run out at the daily average, when that comes before the reset', () => {
    // 100 left at 20 a day: 5 days.
    expect(runsOutOn({ used: 900, limit: 1000, resetsAt: reset, dailyAverage: 20, now })).toBe('2026-11-15');
  });
  it('is none when the quota outlasts the period at that pace', () => {
    expect(runsOutOn({ used: 100, limit: 1000, resetsAt: reset, dailyAverage: 20, now })).toBeNull();
  });
  it('is today when nothing is left', () => {
    expect(runsOutOn({ used: 1000, limit: 1000, resetsAt: reset, dailyAverage: 0, now })).toBe('2026-11-10');
  });
  it('is none when nothing is spent, or the quota is not known here', () => {
    expect(runsOutOn({ used: 10, limit: 1000, resetsAt: reset, dailyAverage: 0, now })).toBeNull();
    expect(runsOutOn({ used: 10, limit: null, resetsAt: reset, dailyAverage: 50, now })).toBeNull();
  });
  it('counts on an all-time quota that never resets', () => {
    expect(runsOutOn({ used: 0, limit: 70, resetsAt: null, dailyAverage: 10, now })).toBe('2026-11-17');
  });
});

describe('describeForecast', () => {
  it('says the units used, the pace and the day it runs out', () => {
    expect(
      describeForecast({
        sandbox: false,
        used: 900,
        limit: 1000,
        period: 'month',
        resetsAt: reset.toISOString(),
        dailyAverage: 20,
        runsOutOn: '2026-11-15',
        budget: null,
      }),
    ).toBe('900 of 1000 units used this month; 20.0 units a day over the last 7 days; at this pace the quota runs out on 2026-11-15');
    expect(
      describeForecast({
        sandbox: false,
        used: 5,
        limit: 1000,
        period: 'month',
        resetsAt: reset.toISOString(),
        dailyAverage: 1,
        runsOutOn: null,
        budget: { spent: 5, budget: 8, runsOutOn: '2026-11-13' },
      }),
    ).toContain('lasts until it resets (2026-12-01); budget 5 of 8 units this month, spent at this pace on 2026-11-13');
    expect(describeForecast({ sandbox: true, used: 0, limit: null, period: 'month', resetsAt: null, dailyAverage: 0, runsOutOn: null, budget: null })).toBe(
      'sandbox: no quota is spent',
    );
  });
});
