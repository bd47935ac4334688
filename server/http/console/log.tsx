// The console's enrichment log: an installation's entries newest first, filtered by outcome, object,
// record and dates (UTC), 50 a page; each entry's detail (each value written and the value it
// replaced), and a link to the record in the CRM.
import type { VNode } from 'preact';
import { z } from 'zod';
import { maskPersonalText } from '../../../core/observe/loggable-errors.ts';
import type { LogSearch } from '../../../bridge/store.ts';
import type { CrmValue, Installation, LogEntry } from '../../../bridge/model.ts';
import { DataTable, Field, InstallationNav, Layout, Notice, Pager, RecordId, Time, renderPage } from './components.tsx';
import { type Chrome, accountName, outcomeKind, recordIdText } from './format.ts';
import { type NamedField, fieldNamer } from './field-labels.ts';

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
  from: z.union([z.literal(''), z.iso.date({ error: 'not a date: choose a day with the date picker (in an address, yyyy-mm-dd)' })]).default(''),
  to: z.union([z.literal(''), z.iso.date({ error: 'not a date: choose a day with the date picker (in an address, yyyy-mm-dd)' })]).default(''),
  before: z
    .string()
    .regex(/^log_[0-9A-HJKMNP-TV-Z]{26}$/, 'not a log position')
    .optional(),
});
export type LogFilter = z.infer<typeof LogFilterSchema>;

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

/** A record as the log names it: its object and id, linked to the record in the CRM when there is a link. */
function RecordCell({ entry, crm }: { readonly entry: LogEntry; readonly crm: string | null }): VNode {
  const record = (
    <>
      {entry.object} <RecordId id={entry.recordId} />
    </>
  );
  return crm === null ? (
    record
  ) : (
    <a href={crm} rel="noreferrer noopener" target="_blank">
      {record}
    </a>
  );
}

export function logPage(chrome: Chrome, view: LogView): string {
  const { installation, values, errors } = view;
  const base = `${chrome.base}/installations/${encodeURIComponent(installation.id)}`;
  const last = view.entries.at(-1);
  const text = (name: string, label: string, type: 'text' | 'date') => (
    <Field
      name={name}
      label={label}
      error={errors[name]}
      input={(field) =>
        type === 'text' ? <input type="text" {...field} value={values[name] ?? ''} /> : <input type="date" {...field} value={values[name] ?? ''} />
      }
    />
  );
  return renderPage(
    <Layout chrome={chrome} title={`Enrichment log: ${accountName(installation)}`}>
      <InstallationNav base={base} current="log" />
      {Object.keys(errors).length > 0 ? (
        <Notice tone="bad">
          <p>The filter was not applied: see the fields marked below.</p>
        </Notice>
      ) : null}
      <form method="get" action={`${base}/log`} class="filters">
        <Field
          name="outcome"
          label="Outcome"
          error={errors.outcome}
          input={(field) => (
            <select {...field}>
              {OUTCOME_FILTERS.map((outcome) => (
                <option value={outcome} selected={(values.outcome ?? '') === outcome}>
                  {outcome === '' ? 'any' : outcome.replace('_', ' ')}
                </option>
              ))}
            </select>
          )}
        />
        {text('object', 'Object', 'text')}
        {text('record', 'Record id', 'text')}
        {text('from', 'From (UTC day)', 'date')}
        {text('to', 'To (UTC day)', 'date')}
        <p>
          <button type="submit">Filter</button> <a href={`${base}/log`}>Clear</a>
        </p>
      </form>
      {view.entries.length === 0 ? (
        <p class="muted" id="no-entries">
          No entries match.
        </p>
      ) : (
        <DataTable
          id="log"
          rows={view.entries}
          columns={[
            {
              header: 'When',
              cell: (entry) => (
                <a href={`${base}/log/${encodeURIComponent(entry.id)}`}>
                  <Time iso={entry.at} />
                </a>
              ),
            },
            { header: 'Record', cell: (entry) => <RecordCell entry={entry} crm={view.recordUrl(entry)} /> },
            { header: 'Outcome', cell: (entry) => entry.outcome, cellClass: (entry) => `outcome-${outcomeKind(entry.outcome)}` },
            { header: 'Fields', class: 'opt', cell: (entry) => String(entry.fieldsWritten.length) },
            { header: 'Units', class: 'opt', cell: (entry) => String(entry.quotaConsumed) },
            { header: 'Latency', class: 'opt', cell: (entry) => (entry.latencyMs === null ? '–' : `${entry.latencyMs} ms`) },
          ]}
        />
      )}
      <Pager
        newest={values.before === undefined ? null : `${base}/log${filterQuery(values)}`}
        older={view.entries.length === LOG_PAGE_SIZE && last !== undefined ? `${base}/log${filterQuery(values, last.id)}` : null}
      />
    </Layout>,
  );
}

/** A field as the log shows it: its label, its CRM property name beside it (or the name alone, when it is none of ours). */
export function FieldName({ name, field }: { readonly name: string; readonly field: NamedField }): VNode {
  if (field.label === null) return <code>{name}</code>;
  return (
    <>
      <span class="field-label">{field.label}</span>
      {field.property === null ? null : (
        <>
          {' '}
          <code>{field.property}</code>
        </>
      )}
    </>
  );
}

/** A CRM value in a cell: an empty one (null, blank text) says so. */
export function CrmValueText({ value }: { readonly value: CrmValue }): VNode {
  if (value === null || (typeof value === 'string' && value.trim() === '')) return <span class="muted">empty</span>;
  return <>{String(value)}</>;
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
  const named = fieldNamer(propertyFor);
  return renderPage(
    <Layout chrome={chrome} title={`${entry.object} ${recordIdText(entry.recordId)}`}>
      <InstallationNav base={base} current={null} />
      <dl class="card">
        <dt>When</dt>
        <dd>
          <Time iso={entry.at} />
        </dd>
        <dt>Outcome</dt>
        <dd id="outcome">{`${kind.replace('_', ' ')}${reason === null ? '' : `: ${reason}`}`}</dd>
        {entry.detail === null ? null : (
          <>
            <dt>Detail</dt>
            {/* Masked again as shown: an entry saved before details were kept free of personal data may hold some. */}
            <dd id="detail">{maskPersonalText(entry.detail)}</dd>
          </>
        )}
        <dt>Quota units</dt>
        <dd>{String(entry.quotaConsumed)}</dd>
        {entry.reusedFrom === undefined ? null : (
          <>
            <dt>Answer</dt>
            <dd id="reused-from">
              reused from <RecordId id={entry.reusedFrom} />, which asked the same (no lookup, no unit)
            </dd>
          </>
        )}
        <dt>Latency</dt>
        <dd>{entry.latencyMs === null ? 'not measured' : `${entry.latencyMs} ms`}</dd>
        <dt>Now</dt>
        <dd>
          <a id="record-link" href={`${base}/records/${encodeURIComponent(entry.object)}/${encodeURIComponent(entry.recordId)}`}>
            the record as it is now: status, what we wrote, Undo and Exclude
          </a>
        </dd>
        <dt>In the CRM</dt>
        <dd>
          {crm === null ? (
            'no link for this record'
          ) : (
            <a id="crm-link" href={crm} rel="noreferrer noopener" target="_blank">
              open the record
            </a>
          )}
        </dd>
      </dl>
      <h2>Properties written</h2>
      {changes.length > 0 ? (
        <DataTable
          id="changes"
          rows={changes}
          columns={[
            { header: 'Field', cell: ([property]) => <FieldName name={property} field={named(property)} /> },
            { header: 'Value written', cell: ([, change]) => <CrmValueText value={change.value} /> },
            { header: 'Value it replaced', cell: ([, change]) => <CrmValueText value={change.replaced} /> },
          ]}
        />
      ) : entry.fieldsWritten.length === 0 ? (
        <p class="muted">Nothing was written.</p>
      ) : (
        // Values purged past the retention period, or logged before the log kept them: the properties only.
        <>
          <ul id="fields">
            {entry.fieldsWritten.map((name) => (
              <li>
                <FieldName name={name} field={named(name)} />
              </li>
            ))}
          </ul>
          <p class="muted" id="no-values">
            {entry.valuesPurgedAt === undefined ? (
              'Logged before the log kept the values written and replaced.'
            ) : (
              <>
                The values written and replaced were purged on <Time iso={entry.valuesPurgedAt} />, past the log's retention period.
              </>
            )}
          </p>
        </>
      )}
    </Layout>,
  );
}
