// The console's overview says how many missed CRM events were recovered from the CRM's journal, and
// says nothing of it when none were.
import { describe, expect, it } from 'vitest';
import { anInstallation } from '../support/console-fixtures.ts';
import { type OverviewData, overviewPage } from '../../server/http/console/overview.tsx';

const installation = anInstallation();

function page(recovered: number, outcomes: OverviewData['outcomes'] = []): string {
  const data: OverviewData = {
    installation,
    target: 'endpoint api.example.com',
    quota: null,
    forecast: { sandbox: true, used: 0, limit: null, period: 'month', resetsAt: null, dailyAverage: 0, runsOutOn: null, budget: null },
    budget: null,
    days: ['2026-11-27'],
    outcomes,
    failures: [],
    recovered,
    kept: [],
  };
  return overviewPage({ base: '/console', session: { who: 'admin', csrf: 'c' } }, data);
}

describe('the overview', () => {
  it('counts the missed events recovered from the CRM journal', () => {
    expect(page(1234)).toContain('<p id="recovered">Missed CRM events recovered from the CRM\'s journal in the last 4 days: <strong>1,234</strong>.</p>');
  });

  it("does not count a CRM user's record actions as failures (or as any enrichment's outcome)", () => {
    const html = page(0, [
      { day: '2026-11-27', outcome: 'enriched', count: 2, quotaConsumed: 2 },
      { day: '2026-11-27', outcome: 'action:undo', count: 1, quotaConsumed: 0 },
      { day: '2026-11-27', outcome: 'action:exclude', count: 3, quotaConsumed: 0 },
    ]);
    expect(html).toContain('<strong data-kind="failed">0</strong>');
    expect(html).toContain('<strong data-kind="enriched">2</strong>');
  });

  it('says nothing of the journal when it recovered nothing', () => {
    expect(page(0)).not.toContain('id="recovered"');
  });
});
