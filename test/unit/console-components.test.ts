// The console's views are components that escape by default: a value a CRM user can write (a record id,
// an object name, a value written or replaced, a failure's detail) reaches the page as text, never as
// markup, whichever page or component shows it.
import { describe, expect, it } from 'vitest';
import { anInstallation } from '../support/console-fixtures.ts';
import { h } from 'preact';
import { render } from 'preact-render-to-string';
import type { LogEntry } from '../../bridge/model.ts';
import { CsrfField, DataTable, Field, Layout, Pager, messagePage } from '../../server/http/console/components.tsx';
import { logEntryPage, logPage } from '../../server/http/console/log.tsx';
import { type OverviewData, overviewPage } from '../../server/http/console/overview.tsx';

const MARKUP = '<img src=x onerror=alert(1)>';
const AS_TEXT = '&lt;img src=x onerror=alert(1)>';
const chrome = { base: '/console', session: { who: `"${MARKUP}`, csrf: `c"${MARKUP}` } };

const installation = anInstallation({ externalAccountId: MARKUP });

const entry: LogEntry = {
  id: 'log_01JDZ0000000000000000000AA',
  installationId: installation.id,
  object: MARKUP,
  recordId: MARKUP,
  at: '2026-11-27T10:00:00.000Z',
  outcome: 'failed:crm_error',
  fieldsWritten: ['household_income'],
  changes: { [MARKUP]: { value: MARKUP, replaced: MARKUP } },
  quotaConsumed: 1,
  latencyMs: 12,
  detail: MARKUP,
  reusedFrom: `contact/${MARKUP}`,
};

/**
 * No element of the markup made it into the page as an element or an attribute: with the quoted
 * attribute values taken out (a `"` in a value is `&quot;`), no tag holds `onerror`.
 */
const noMarkup = (html: string) => {
  expect(html).not.toContain('<img');
  expect(html.replace(/"[^"]*"/g, '""')).not.toMatch(/<[^>]*onerror/);
};

describe('console components', () => {
  it('render a CRM value carrying markup as text in a table cell, a field, its error and the CSRF field', () => {
    const html = [
      render(h(DataTable<string>, { id: 't', rows: [MARKUP], columns: [{ header: MARKUP, cell: (row) => row }] })),
      render(h(Field, { name: 'record', label: MARKUP, error: MARKUP, input: (field) => h('input', { type: 'text', ...field, value: MARKUP }) })),
      render(h(CsrfField, { token: `"${MARKUP}` })),
      render(h(Pager, { newest: `/x?q="${MARKUP}`, older: null })),
    ].join('');
    noMarkup(html);
    expect(html).toContain(`<td>${AS_TEXT}</td>`);
    expect(html).toContain(`<span class="error" id="f-record-error">${AS_TEXT}</span>`);
    expect(html).toContain('aria-invalid="true" aria-describedby="f-record-error"');
    expect(html).toContain(`<input type="hidden" name="csrf" value="&quot;${AS_TEXT}"/>`);
  });

  it('render the title and who is signed in as text in the layout', () => {
    const html = render(h(Layout, { chrome, title: MARKUP }));
    noMarkup(html);
    expect(html).toContain(`<title>${AS_TEXT} · enrichbridge console</title>`);
    expect(html).toContain(`<h1>${AS_TEXT}</h1>`);
  });

  it('render a whole page after its doctype, a message page escaping its title and lines', () => {
    const html = messagePage(chrome, MARKUP, [MARKUP], 'bad');
    noMarkup(html);
    expect(html.startsWith('<!doctype html>\n<html lang="en">')).toBe(true);
  });

  it('show CRM values carrying markup as text in the log, a log entry and the overview', () => {
    const log = logPage(chrome, {
      installation,
      values: { record: MARKUP },
      errors: { record: MARKUP },
      entries: [entry],
      recordUrl: () => `https://crm.example/"${MARKUP}`,
    });
    noMarkup(log);
    expect(log).toContain(
      `<td><a href="https://crm.example/&quot;${AS_TEXT}" rel="noreferrer noopener" target="_blank">${AS_TEXT} <bdi>${AS_TEXT}</bdi></a></td>`,
    );

    const detail = logEntryPage(chrome, installation, entry, null, () => MARKUP);
    noMarkup(detail);
    expect(detail).toContain(`<code>${AS_TEXT}</code></td><td>${AS_TEXT}</td><td>${AS_TEXT}</td>`);
    expect(detail).toContain(`<dd id="detail">${AS_TEXT}</dd>`);

    const data: OverviewData = {
      installation,
      target: MARKUP,
      quota: null,
      forecast: { sandbox: true, used: 0, limit: null, period: 'month', resetsAt: null, dailyAverage: 0, runsOutOn: null, budget: null },
      budget: null,
      days: ['2026-11-27'],
      outcomes: [{ day: '2026-11-27', outcome: `skipped:${MARKUP}`, count: 1, quotaConsumed: 0 }],
      failures: [entry],
      recovered: 0,
      kept: [],
    };
    const overview = overviewPage(chrome, data);
    noMarkup(overview);
    expect(overview).toContain(`<td>${AS_TEXT} <bdi>${AS_TEXT}</bdi></td>`);
  });
});
