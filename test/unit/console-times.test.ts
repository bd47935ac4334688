// One rule for times in the console: UTC, to the second, with the zone named, wherever a time is shown
// (a log entry's, a quota's reset, the end of a pause), and the same text for the same moment however
// it was stored; the forecast's days are named as UTC days. The browser leaves them as they are.
import { describe, expect, it } from 'vitest';
import { InstallationSettingsSchema, type Installation } from '../../bridge/model.ts';
import { CONSOLE_JS } from '../../server/http/console/assets.ts';
import { h } from 'preact';
import { render } from 'preact-render-to-string';
import { Time } from '../../server/http/console/components.tsx';
import { statusText, utcText } from '../../server/http/console/format.ts';
import { type OverviewData, overviewPage } from '../../server/http/console/overview.tsx';

const installation: Installation = {
  id: 'inst_1',
  provider: 'hubspot',
  externalAccountId: '62515',
  environment: 'production',
  target: { kind: 'local', accountId: 'acct_1', tokenId: 'tok_1' },
  status: 'paused',
  pausedUntil: '2026-12-01T00:00:00.000Z',
  pauseReason: 'quota',
  settings: InstallationSettingsSchema.parse({}),
  createdAt: '2026-11-27T00:00:00.000Z',
  updatedAt: '2026-11-27T00:00:00.000Z',
};

describe('times in the console', () => {
  it('are shown in UTC to the second, with the zone named, the same for the same moment', () => {
    expect(utcText('2026-11-25T08:02:13.456Z')).toBe('2026-11-25 08:02:13 UTC');
    expect(utcText('2026-11-25T02:02:13-06:00')).toBe('2026-11-25 08:02:13 UTC');
    expect(render(h(Time, { iso: '2026-11-25T08:02:13.456Z' }))).toBe('<time datetime="2026-11-25T08:02:13.456Z">2026-11-25 08:02:13 UTC</time>');
  });

  it('shows a text that is not a time as it is (escaped where it is markup)', () => {
    expect(utcText('soon')).toBe('soon');
    expect(render(h(Time, { iso: '<b>' }))).toBe('<time datetime="&lt;b>">&lt;b></time>');
  });

  it('name the end of a pause in UTC too', () => {
    expect(statusText(installation).text).toBe('paused for quota until 2026-12-01 00:00:00 UTC');
  });

  it("name the forecast's days as UTC days, and the quota's reset in UTC", () => {
    const data: OverviewData = {
      installation,
      target: 'account acme',
      quota: { used: 2, limit: 3, period: 'month', resetsAt: '2026-12-01T00:00:00.000Z' },
      forecast: {
        sandbox: false,
        used: 2,
        limit: 3,
        period: 'month',
        resetsAt: '2026-12-01T00:00:00.000Z',
        dailyAverage: 0.3,
        runsOutOn: '2026-11-28',
        budget: null,
      },
      budget: null,
      days: ['2026-11-27'],
      outcomes: [],
      failures: [],
      recovered: 0,
      kept: [],
    };
    const html = overviewPage({ base: '/console', session: { who: 'admin', csrf: 'c' } }, data);
    expect(html).toContain('the quota runs out on 2026-11-28 (UTC)');
    expect(html).toContain('<dt>Resets</dt><dd><time datetime="2026-12-01T00:00:00.000Z">2026-12-01 00:00:00 UTC</time></dd>');
  });

  it("are left as the server wrote them by the console script (no rewrite into the viewer's zone)", () => {
    expect(CONSOLE_JS).not.toMatch(/toLocale|time\[datetime\]/);
  });
});
