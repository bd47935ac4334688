// The overview's 30 days are a chart: inline SVG bars, one a day, stacked by outcome kind, coloured by
// classes of the console's stylesheet (the CSP refuses inline styles), one image to a screen reader with
// its summary; the table of the same numbers stays in the page, in a collapsed "Show as a table".
import { describe, expect, it } from 'vitest';
import { anInstallation } from '../support/console-fixtures.ts';
import type { DailyOutcome } from '../../bridge/store.ts';
import { type OverviewData, overviewPage } from '../../server/http/console/overview.tsx';
import { KINDS, chartSummary, noCounts } from '../../server/http/console/outcome-chart.tsx';

const DAYS = Array.from({ length: 30 }, (_, i) => new Date(Date.UTC(2026, 10, 27 - i)).toISOString().slice(0, 10));

function page(outcomes: readonly DailyOutcome[]): string {
  const data: OverviewData = {
    installation: anInstallation(),
    target: 'endpoint api.example.com',
    quota: null,
    forecast: { sandbox: true, used: 0, limit: null, period: 'month', resetsAt: null, dailyAverage: 0, runsOutOn: null, budget: null },
    budget: null,
    days: DAYS,
    outcomes,
    failures: [],
    recovered: 0,
    kept: [],
  };
  return overviewPage({ base: '/console', session: { who: 'operator', csrf: 'c' } }, data);
}

const OUTCOMES: DailyOutcome[] = [
  { day: '2026-11-27', outcome: 'enriched', count: 3, quotaConsumed: 3 },
  { day: '2026-11-27', outcome: 'failed:crm_error', count: 1, quotaConsumed: 0 },
  { day: '2026-11-26', outcome: 'no_match', count: 1, quotaConsumed: 1 },
  { day: '2026-11-25', outcome: 'skipped:unchanged', count: 2, quotaConsumed: 0 },
];

/** The chart's SVG, from the page. */
const svgOf = (html: string) => /<svg id="days-chart"[\s\S]*?<\/svg>/.exec(html)?.[0] ?? '';

describe('the overview chart', () => {
  it('draws one stacked bar a day, oldest on the left, each segment an outcome kind coloured by class, never by an inline style', () => {
    const html = page(OUTCOMES);
    const svg = svgOf(html);
    expect(svg).not.toBe('');
    expect(html).not.toMatch(/\sstyle=/);
    expect(svg.match(/<g data-day=/g)).toHaveLength(30);
    // Left to right: the oldest day first, the newest last.
    const order = [...svg.matchAll(/<g data-day="([\d-]+)"/g)].map((m) => m[1]);
    expect(order).toEqual([...DAYS].reverse());
    const today = /<g data-day="2026-11-27">([\s\S]*?)<\/g>/.exec(svg)?.[1] ?? '';
    expect(today).toContain('<title>2026-11-27: 3 enriched, 0 no match, 0 skipped, 1 failed</title>');
    const rects = [...today.matchAll(/<rect class="k-(\w+)" data-kind="\w+" x="[\d.]+" y="([\d.]+)" width="[\d.]+" height="([\d.]+)"/g)];
    expect(rects.map((m) => m[1])).toEqual(['enriched', 'failed']);
    // The busiest day's bar fills the plot: its segments' heights add up to it, in proportion 3 : 1.
    const [enriched, failed] = rects.map((m) => Number(m[3]));
    expect((enriched ?? 0) + (failed ?? 0)).toBeCloseTo(134, 1);
    expect((enriched ?? 0) / (failed ?? 1)).toBeCloseTo(3, 1);
    // A day with nothing draws nothing.
    expect(/<g data-day="2026-11-01">([\s\S]*?)<\/g>/.exec(svg)?.[1]).not.toContain('<rect');
  });

  it('is one image to a screen reader, its summary the totals and the busiest day', () => {
    const svg = svgOf(page(OUTCOMES));
    expect(svg).toContain('role="img"');
    expect(svg).toContain(
      'aria-label="Records per day (UTC), 2026-10-29 to 2026-11-27: 3 enriched, 1 no match, 2 skipped, 1 failed in all; the busiest day, 2026-11-27, had 4."',
    );
    expect(chartSummary(DAYS.map((day) => ({ day, counts: noCounts() })))).toBe('Records per day (UTC), 2026-11-27 to 2026-10-29: no records.');
  });

  it('keeps the table of the same numbers in the page, in a collapsed "Show as a table"', () => {
    const html = page(OUTCOMES);
    const details = /<details id="days-table">([\s\S]*?)<\/details>/.exec(html)?.[1] ?? '';
    expect(/<details id="days-table"[^>]*>/.exec(html)?.[0]).toBe('<details id="days-table">');
    expect(details.startsWith('<summary>Show as a table</summary>')).toBe(true);
    expect(details.match(/<tr><th scope="row" class="day">/g)).toHaveLength(30);
    expect(details).toContain('<tr><th scope="row" class="day">2026-11-27</th><td>3</td><td>0</td><td>0</td><td>1</td></tr>');
    expect(details).toContain('<caption class="muted">Records per day (UTC)</caption>');
    // The kinds the chart stacks are the table's columns, in the same order.
    expect([...details.matchAll(/<th scope="col"[^>]*>([^<]+)<\/th>/g)].map((m) => m[1])).toEqual(['Day', 'Enriched', 'No match', 'Skipped', 'Failed']);
    expect(KINDS).toEqual(['enriched', 'no_match', 'skipped', 'failed']);
  });
});
