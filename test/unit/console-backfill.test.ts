// The backfill pages as components: a count reads as English says it ("1 contact (at most 1 unit)"),
// a finished run's progress bar is full (at its end, and as wide as the page), and a CRM value carrying
// markup is text, in the form and on a run's page.
import { describe, expect, it } from 'vitest';
import type { BackfillRun } from '../../bridge/backfill-runs.ts';
import type { CrmBackfill } from '../../bridge/crm-module.ts';
import { CONSOLE_ASSETS } from '../../server/http/console/assets.ts';
import { backfillPage, runPage, runStatus } from '../../server/http/console/backfill.tsx';
import { anInstallation } from '../support/console-fixtures.ts';

const chrome = { base: '/console', session: { who: 'operator', csrf: 'c' } };
const production = anInstallation({ environment: 'production', target: { kind: 'local', accountId: 'acct_1', tokenId: 'tok_1' } });
const spec: CrmBackfill = {
  description: 'contacts',
  nouns: { contact: 'contacts' },
  open: () => {
    throw new Error('not read in a view test');
  },
};

function aRun(overrides: Partial<BackfillRun> = {}): BackfillRun {
  return {
    id: 'bf_1',
    installationId: production.id,
    object: 'contact',
    flags: {},
    limit: null,
    restart: false,
    state: 'estimated',
    resumed: false,
    scanned: 1,
    withMatchKey: 1,
    upToDate: 0,
    toEnrich: 1,
    quotaUnits: 1,
    read: 1,
    enqueued: 0,
    error: null,
    createdAt: '2026-11-27T10:00:00.000Z',
    updatedAt: '2026-11-27T10:00:00.000Z',
    confirmedAt: null,
    ...overrides,
  };
}

const page = (run: BackfillRun, jobs = { enrichments: {}, control: {} }) =>
  runPage(chrome, production, run, runStatus(run, jobs, 'contacts'), 'contacts', null);

describe('the backfill pages', () => {
  it('say "1 contact (at most 1 unit)", never "1 contacts (at most 1 units)"', () => {
    const one = page(aRun());
    expect(one).toContain('<button type="submit">Enrich 1 contact (at most 1 unit)</button>');
    expect(one).not.toMatch(/1 contacts|1 units/);
    const many = page(aRun({ toEnrich: 1234, quotaUnits: 2 }));
    expect(many).toContain('Enrich 1,234 contacts (at most 2 units)');
    const queueing = aRun({ state: 'running', confirmedAt: '2026-11-27T10:01:00.000Z', toEnrich: 1 });
    expect(runStatus(queueing, { enrichments: {}, control: {} }, 'contacts').headline).toBe('Queueing: 0 of 1 contact queued…');
    expect(runStatus(aRun({ state: 'estimating', read: 1 }), { enrichments: {}, control: {} }, 'contacts').headline).toBe('Estimating: 1 contact read so far…');
  });

  it("show a finished backfill's progress bar full: at its end, and as wide as the page", () => {
    const finished = aRun({ state: 'enqueued', confirmedAt: '2026-11-27T10:01:00.000Z', toEnrich: 2, enqueued: 2 });
    const html = page(finished, { enrichments: { done: 1, dead: 1 }, control: {} });
    expect(html).toContain('<p id="headline" role="status" aria-live="polite">Finished: 1 enriched, 1 failed (see the enrichment log).</p>');
    expect(html).toContain('<progress id="progress" max="100" value="100">100%</progress>');
    // The bar spans the width the cards below it take: no cap that leaves a full bar at half the page.
    const css = CONSOLE_ASSETS.css.body.toString('utf8');
    const rule = /(?:^|\n)progress\s*\{([^}]*)\}/.exec(css)?.[1] ?? '';
    expect(rule).toContain('width: 100%');
    expect(rule).not.toMatch(/max-width/);
  });

  it('show a CRM value carrying markup as text in the form and on a run page', () => {
    const MARKUP = '<img src=x onerror=alert(1)>';
    const form = backfillPage(chrome, {
      installation: production,
      spec: { ...spec, nouns: { contact: MARKUP, lead: 'leads' }, flags: { '--x': MARKUP } },
      runs: [aRun({ object: 'contact' })],
      values: { limit: `"${MARKUP}` },
      errors: { limit: MARKUP, form: MARKUP },
    });
    const run = runPage(
      chrome,
      production,
      aRun({ object: MARKUP, flags: { [MARKUP]: true }, state: 'failed', error: MARKUP }),
      runStatus(aRun({ state: 'failed', error: MARKUP }), { enrichments: {}, control: {} }, MARKUP),
      MARKUP,
      MARKUP,
    );
    for (const html of [form, run]) {
      expect(html).not.toContain('<img');
      expect(html.replace(/"[^"]*"/g, '""')).not.toMatch(/<[^>]*onerror/);
    }
    expect(form).toContain('<span class="error" id="limit-error">&lt;img src=x onerror=alert(1)></span>');
    expect(form).toContain('aria-invalid="true" aria-describedby="limit-error"');
  });
});
