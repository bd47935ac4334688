// A CRM record id in the console is shown in a bidi isolate, its own bidi controls written as their
// codes: an id of right-to-left characters, or one crafted to reorder text, cannot move the words around
// it on its line (the overview's failures, the log's rows, a log entry's title and its reused answer).
import { describe, expect, it } from 'vitest';
import { anInstallation } from '../support/console-fixtures.ts';
import type { LogEntry } from '../../bridge/model.ts';
import { logEntryPage, logPage } from '../../server/http/console/log.tsx';
import { h } from 'preact';
import { render } from 'preact-render-to-string';
import { RecordId } from '../../server/http/console/components.tsx';
import { recordIdText } from '../../server/http/console/format.ts';
import { type OverviewData, overviewPage } from '../../server/http/console/overview.tsx';

const chrome = { base: '/console', session: { who: 'operator', csrf: 'c' } };

const installation = anInstallation();

/**
 * An id that closes whatever isolate it is put in (PDI), then overrides the direction of the rest of the
 * line (RLO), with right-to-left letters of its own.
 */
const CRAFTED = '1011\u2069\u202e\u05d0\u05d1 gnp.exe';
/** What a page shows of it: the controls as their codes, the letters as they are. */
const SHOWN = '1011\\u{2069}\\u{202e}\u05d0\u05d1 gnp.exe';

const entry: LogEntry = {
  id: 'log_01JDZ0000000000000000000AA',
  installationId: installation.id,
  object: 'contact',
  recordId: CRAFTED,
  at: '2026-11-27T10:00:00.000Z',
  outcome: 'failed:crm_error',
  fieldsWritten: [],
  changes: {},
  quotaConsumed: 0,
  latencyMs: 12,
  detail: 'HTTP 502 from the CRM',
  reusedFrom: `contact/${CRAFTED}`,
};

/** Every bidi control in a page, in order, as code points. */
const controlsIn = (html: string): string[] =>
  [...html.matchAll(/[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu)].map((m) => (m[0].codePointAt(0) ?? 0).toString(16));

describe('record ids in the console', () => {
  it('are wrapped in <bdi>, their own bidi controls shown as codes, in markup', () => {
    expect(render(h(RecordId, { id: CRAFTED }))).toBe(`<bdi>${SHOWN}</bdi>`);
    expect(render(h(RecordId, { id: '<b>&' }))).toBe('<bdi>&lt;b>&amp;</bdi>');
  });

  it('are between FIRST STRONG ISOLATE and POP DIRECTIONAL ISOLATE in text that cannot hold markup', () => {
    expect(recordIdText(CRAFTED)).toBe(`\u2068${SHOWN}\u2069`);
  });

  it('are isolated in the log, and no control of theirs reaches the page', () => {
    const html = logPage(chrome, {
      installation,
      values: {},
      errors: {},
      entries: [entry],
      recordUrl: () => 'https://app.hubspot.com/contacts/62515/record/0-1/1011',
    });

    expect(html).toContain(
      `<a href="https://app.hubspot.com/contacts/62515/record/0-1/1011" rel="noreferrer noopener" target="_blank">contact <bdi>${SHOWN}</bdi></a>`,
    );
    expect(controlsIn(html)).toEqual([]);
  });

  it("are isolated in a log entry's title and its reused answer; the only isolate in the page is the title's own", () => {
    const html = logEntryPage(chrome, installation, entry, null, () => null);

    expect(html).toContain(`<title>contact \u2068${SHOWN}\u2069 · enrichbridge console</title>`);
    expect(html).toContain(`<h1>contact \u2068${SHOWN}\u2069</h1>`);
    expect(html).toContain(`reused from <bdi>contact/${SHOWN}</bdi>, which asked the same`);
    expect(controlsIn(html)).toEqual(['2068', '2069', '2068', '2069']);
  });

  it("are isolated in the overview's latest failures", () => {
    const data: OverviewData = {
      installation,
      target: 'endpoint api.example.com',
      quota: null,
      forecast: { sandbox: true, used: 0, limit: null, period: 'month', resetsAt: null, dailyAverage: 0, runsOutOn: null, budget: null },
      budget: null,
      days: ['2026-11-27'],
      outcomes: [],
      failures: [entry],
      recovered: 0,
      kept: [],
    };

    const html = overviewPage(chrome, data);

    expect(html).toContain(`<td>contact <bdi>${SHOWN}</bdi></td>`);
    expect(controlsIn(html)).toEqual([]);
  });
});
