// Every page of an installation lists the same navigation in the same order (a newcomer found a
// different set of links on each), with the page one is on marked for screen readers.
import { describe, expect, it } from 'vitest';
import { anInstallation } from '../support/console-fixtures.ts';
import { INSTALLATION_PAGES } from '../../server/http/console/components.tsx';
import { backfillPage } from '../../server/http/console/backfill.tsx';
import { logPage } from '../../server/http/console/log.tsx';
import { type OverviewData, overviewPage } from '../../server/http/console/overview.tsx';
import { playgroundPage } from '../../server/http/console/playground.tsx';
import { settingsPage } from '../../server/http/console/settings.tsx';

const installation = anInstallation();
const chrome = { base: '/console', session: { who: 'HubSpot portal 62515 · one-time link', csrf: 'c' } };
const overview: OverviewData = {
  installation,
  target: 'account acme',
  quota: null,
  forecast: { sandbox: true, used: 0, limit: null, period: 'month', resetsAt: null, dailyAverage: 0, runsOutOn: null, budget: null },
  budget: null,
  days: [],
  outcomes: [],
  failures: [],
  recovered: 0,
  kept: [],
};

/** The links of the page's installation navigation, in order, and which one is marked current. */
function navOf(html: string): { links: string[]; current: string[] } {
  const nav = /<nav aria-label="This installation">(.*?)<\/nav>/s.exec(html)?.[1] ?? '';
  const links = [...nav.matchAll(/<a href="([^"]*)"[^>]*>([^<]*)<\/a>/g)].map((m) => `${m[2]} ${m[1]}`);
  const current = [...nav.matchAll(/<a [^>]*aria-current="page"[^>]*>([^<]*)<\/a>/g)].map((m) => m[1] ?? '');
  return { links, current };
}

describe("an installation's navigation", () => {
  const pages = {
    overview: overviewPage(chrome, overview),
    log: logPage(chrome, { installation, values: {}, errors: {}, entries: [], recordUrl: () => null }),
    settings: settingsPage(chrome, { installation, module: undefined, values: installation.settings, errors: {}, saved: false }),
    backfill: backfillPage(chrome, { installation, spec: undefined, runs: [], values: {}, errors: {} }),
    playground: playgroundPage(chrome, installation, {}, null, null),
  };
  const expected = INSTALLATION_PAGES.map(([, path, label]) => `${label} /console/installations/inst_1${path}`);

  it.each(Object.entries(pages))('is the same on every page of an installation, the page one is on marked (%s)', (page, html) => {
    const nav = navOf(html);
    expect(nav.links).toEqual(expected);
    expect(nav.current).toEqual([INSTALLATION_PAGES.find(([name]) => name === page)?.[2]]);
  });
});
