// The console's enrichment log: an installation's entries newest first, filtered by outcome, object,
// record and dates (UTC), 50 a page; each entry's detail (each value written and the value it
// replaced), and a link to the record in the CRM.
import { z } from 'zod';
import type { LogSearch } from '../../../bridge/store.ts';
import type { CrmValue, Installation, LogEntry } from '../../../bridge/model.ts';
import { type Chrome, escapeHtml, layout, outcomeKind, recordIdHtml, recordIdText, timeHtml } from './pages.ts';

export const LOG_PAGE_SIZE = 50;

const OUTCOME_FILTERS = ['', 'enriched', 'no_match', 'skipped', 'failed'] as const;
const OUTCOME_PREFIX: Record<(typeof OUTCOME_FILTERS)[number], string | undefined> = {
  '': undefined,
  enriched: 'enriched',
  no_match: 'no_match',
  skipped: 'skipped:',
  failed: 'failed:',
};

/** The log page's query string; every filter optional, all validated. */
export const LogFilterSchema = z.object({
  outcome: z.enum(OUTCOME_FILTERS, { error: 'choose an outcome from the list' }).default(''),
  object: z.string().trim().max(80, 'at most 80 characters').default(''),
  record: z.string().trim().max(128, 'at most 128 characters').default(''),
  from: z.union([z.literal(''), z.iso.date({ error: 'a date, yyyy-mm-dd' })]).default(''),
  to: z.union([z.literal(''), z.iso.date({ error: 'a date, yyyy-mm-dd' })]).default(''),
  before: z
    .string()
    .regex(/^log_[0-9A-HJKMNP-TV-Z]{26}$/, 'not a log position')
    .optional(),
});
export type LogFilter = z.infer<typeof LogFilterSchema>;

/** The query as strings (what a refused filter shows back), from express's parsed query. */
export function rawFilter(query: unknown): Record<string, string> {
  const raw: Record<string, string> = {};
  if (typeof query !== 'object' || query === null) return raw;
  for (const [key, value] of Object.entries(query)) if (typeof value === 'string') raw[key] = value;
  return raw;
}

export function logSearch(installationId: string, filter: LogFilter): LogSearch {
  const dayAfter = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString();
  const prefix = OUTCOME_PREFIX[filter.outcome];
  return {
    installationId,
    limit: LOG_PAGE_SIZE,
    ...(prefix === undefined ? {} : { outcomePrefix: prefix }),
    ...(filter.object === '' ? {} : { object: filter.object }),
    ...(filter.record === '' ? {} : { recordId: filter.record }),
    ...(filter.from === '' ? {} : { from: `${filter.from}T00:00:00.000Z` }),
    ...(filter.to === '' ? {} : { to: dayAfter(filter.to) }),
    ...(filter.before === undefined ? {} : { before: filter.before }),
  };
}

function filterQuery(values: Readonly<Record<string, string>>, before?: string): string {
  const params = new URLSearchParams();
  for (const key of ['outcome', 'object', 'record', 'from', 'to']) {
    const value = values[key];
    if (value !== undefined && value !== '') params.set(key, value);
  }
  if (before !== undefined) params.set('before', before);
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

export interface LogView {
  readonly installation: Installation;
  readonly values: Readonly<Record<string, string>>;
  readonly errors: Readonly<Record<string, string>>;
  readonly entries: readonly LogEntry[];
  readonly recordUrl: (entry: LogEntry) => string | null;
}

export function logPage(chrome: Chrome, view: LogView): string {
  const { installation, values, errors } = view;
  const base = `${chrome.base}/installations/${encodeURIComponent(installation.id)}`;
  const field = (name: string, label: string, input: string) => {
    const error = errors[name];
    return `<p><label for="f-${name}">${label}</label><br>${input.replace('>', error === undefined ? '>' : ` aria-invalid="true" aria-describedby="f-${name}-error">`)}${error === undefined ? '' : `<span class="error" id="f-${name}-error">${escapeHtml(error)}</span>`}</p>`;
  };
  const value = (name: string) => escapeHtml(values[name] ?? '');
  const outcomeOptions = OUTCOME_FILTERS.map(
    (outcome) =>
      `<option value="${outcome}"${(values.outcome ?? '') === outcome ? ' selected' : ''}>${outcome === '' ? 'any' : outcome.replace('_', ' ')}</option>`,
  ).join('');
  const rows = view.entries
    .map((entry) => {
      const crm = view.recordUrl(entry);
      const record = `${escapeHtml(entry.object)} ${recordIdHtml(entry.recordId)}`;
      return `<tr><td><a href="${base}/log/${encodeURIComponent(entry.id)}">${timeHtml(entry.at)}</a></td><td>${crm === null ? record : `<a href="${escapeHtml(crm)}" rel="noreferrer noopener" target="_blank">${record}</a>`}</td><td class="outcome-${outcomeKind(entry.outcome)}">${escapeHtml(entry.outcome)}</td><td class="opt">${entry.fieldsWritten.length}</td><td class="opt">${entry.quotaConsumed}</td><td class="opt">${entry.latencyMs === null ? '–' : `${entry.latencyMs} ms`}</td></tr>`;
    })
    .join('\n');
  const last = view.entries.at(-1);
  const older =
    view.entries.length === LOG_PAGE_SIZE && last !== undefined ? `<a id="older" href="${base}/log${filterQuery(values, last.id)}">Older entries</a>` : '';
  const newest = values.before === undefined ? '' : `<a href="${base}/log${filterQuery(values)}">Newest entries</a>`;
  return layout(
    chrome,
    `Enrichment log: ${installation.provider} ${installation.externalAccountId}`,
    `<nav><a href="${base}">Overview</a> <a href="${base}/settings">Settings</a></nav>
${Object.keys(errors).length > 0 ? '<div class="notice bad" role="alert"><p>The filter was not applied: see the fields marked below.</p></div>' : ''}
<form method="get" action="${base}/log" class="filters">
${field('outcome', 'Outcome', `<select name="outcome" id="f-outcome">${outcomeOptions}</select>`)}
${field('object', 'Object', `<input type="text" name="object" id="f-object" value="${value('object')}">`)}
${field('record', 'Record id', `<input type="text" name="record" id="f-record" value="${value('record')}">`)}
${field('from', 'From (UTC day)', `<input type="date" name="from" id="f-from" value="${value('from')}">`)}
${field('to', 'To (UTC day)', `<input type="date" name="to" id="f-to" value="${value('to')}">`)}
<p><button type="submit">Filter</button> <a href="${base}/log">Clear</a></p>
</form>
${
  view.entries.length === 0
    ? '<p class="muted" id="no-entries">No entries match.</p>'
    : `<div class="scroll"><table id="log"><thead><tr><th scope="col">When</th><th scope="col">Record</th><th scope="col">Outcome</th><th scope="col" class="opt">Fields</th><th scope="col" class="opt">Units</th><th scope="col" class="opt">Latency</th></tr></thead><tbody>
${rows}
</tbody></table></div>`
}
<div class="actions">${newest}${older}</div>`,
  );
}

/** A CRM value in a cell: an empty one (null, blank text) says so. */
function crmValueHtml(value: CrmValue): string {
  if (value === null || (typeof value === 'string' && value.trim() === '')) return '<span class="muted">empty</span>';
  return escapeHtml(String(value));
}

export function logEntryPage(
  chrome: Chrome,
  installation: Installation,
  entry: LogEntry,
  crm: string | null,
  propertyFor: (key: string) => string | null,
): string {
  const base = `${chrome.base}/installations/${encodeURIComponent(installation.id)}`;
  const kind = outcomeKind(entry.outcome);
  const reason = kind === 'skipped' || kind === 'failed' ? entry.outcome.slice(entry.outcome.indexOf(':') + 1).replace(/_/g, ' ') : null;
  const changes = Object.entries(entry.changes);
  const fields =
    changes.length > 0
      ? `<div class="scroll"><table id="changes"><thead><tr><th scope="col">Property</th><th scope="col">Value written</th><th scope="col">Value it replaced</th></tr></thead><tbody>${changes
          .map(
            ([property, change]) => `<tr><td>${escapeHtml(property)}</td><td>${crmValueHtml(change.value)}</td><td>${crmValueHtml(change.replaced)}</td></tr>`,
          )
          .join('')}</tbody></table></div>`
      : entry.fieldsWritten.length === 0
        ? '<p class="muted">Nothing was written.</p>'
        : // Logged before the log kept values (migration 0015): the properties only.
          `<ul id="fields">${entry.fieldsWritten
            .map((key) => {
              const property = propertyFor(key);
              return `<li>${escapeHtml(key)}${property === null ? '' : ` <code>${escapeHtml(property)}</code>`}</li>`;
            })
            .join('')}</ul><p class="muted" id="no-values">Logged before the log kept the values written and replaced.</p>`;
  return layout(
    chrome,
    `${entry.object} ${recordIdText(entry.recordId)}`,
    `<nav><a href="${base}/log">Enrichment log</a></nav>
<dl class="card">
<dt>When</dt><dd>${timeHtml(entry.at)}</dd>
<dt>Outcome</dt><dd id="outcome">${escapeHtml(kind.replace('_', ' '))}${reason === null ? '' : `: ${escapeHtml(reason)}`}</dd>
${entry.detail === null ? '' : `<dt>Detail</dt><dd id="detail">${escapeHtml(entry.detail)}</dd>`}
<dt>Quota units</dt><dd>${entry.quotaConsumed}</dd>
${entry.reusedFrom === undefined ? '' : `<dt>Answer</dt><dd id="reused-from">reused from ${recordIdHtml(entry.reusedFrom)}, which asked the same (no lookup, no unit)</dd>`}
<dt>Latency</dt><dd>${entry.latencyMs === null ? 'not measured' : `${entry.latencyMs} ms`}</dd>
<dt>In the CRM</dt><dd>${crm === null ? 'no link for this record' : `<a id="crm-link" href="${escapeHtml(crm)}" rel="noreferrer noopener" target="_blank">open the record</a>`}</dd>
</dl>
<h2>Properties written</h2>
${fields}`,
  );
}
