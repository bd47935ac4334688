// The console's overview says how many missed CRM events were recovered from the CRM's journal, and
// says nothing of it when none were.
import { describe, expect, it } from 'vitest';
import { InstallationSettingsSchema, type Installation } from '../../bridge/model.ts';
import { type OverviewData, overviewPage } from '../../server/http/console/overview.tsx';

const installation: Installation = {
  id: 'inst_1',
  provider: 'hubspot',
  externalAccountId: '62515',
  environment: 'sandbox',
  target: { kind: 'remote', url: 'https://api.example.com/sandbox/v1' },
  status: 'active',
  pausedUntil: null,
  pauseReason: null,
  settings: InstallationSettingsSchema.parse({}),
  createdAt: '2026-11-27T00:00:00.000Z',
  updatedAt: '2026-11-27T00:00:00.000Z',
};

function page(recovered: number): string {
  const data: OverviewData = {
    installation,
    target: 'endpoint api.example.com',
    quota: null,
    forecast: { sandbox: true, used: 0, limit: null, period: 'month', resetsAt: null, dailyAverage: 0, runsOutOn: null, budget: null },
    budget: null,
    days: ['2026-11-27'],
    outcomes: [],
    failures: [],
    recovered,
  };
  return overviewPage({ base: '/console', session: { who: 'admin', csrf: 'c' } }, data);
}

describe('the overview', () => {
  it('counts the missed events recovered from the CRM journal', () => {
    expect(page(1234)).toContain('<p id="recovered">Missed CRM events recovered from the CRM\'s journal in the last 4 days: <strong>1,234</strong>.</p>');
  });

  it('says nothing of the journal when it recovered nothing', () => {
    expect(page(0)).not.toContain('id="recovered"');
  });
});
