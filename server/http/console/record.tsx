// One record as the console shows it: the same record view the HubSpot card and the Salesforce
// component receive (bridge/record-view.ts), rendered for an admin or the operator, with its actions
// (Enrich now, Undo, Exclude, Include again) as forms, each with its cost, disabled with its reason when
// it does not apply now. An action's answer is shown above the view: what Undo restored and what it
// left alone because someone changed it since.
import type { VNode } from 'preact';
import type { Installation } from '../../../bridge/model.ts';
import type { ActionResult } from '../../../bridge/record-actions.ts';
import type { ActionAvailability, RecordView } from '../../../bridge/record-view.ts';
import { CsrfField, DataTable, InstallationNav, Layout, Notice, RecordId, Time, renderPage } from './components.tsx';
import { fieldNamer } from './field-labels.ts';
import { type Chrome, accountName, recordIdText } from './format.ts';
import { CrmValueText, FieldName } from './log.tsx';
import { plural } from '../../plural.ts';

/** The record actions in the order the page offers them, with the path segment each posts to. */
export const CONSOLE_RECORD_ACTIONS = [
  ['enrich_now', 'enrich', 'Enrich now'],
  ['undo', 'undo', 'Undo'],
  ['exclude', 'exclude', 'Exclude'],
  ['include', 'include', 'Include again'],
] as const;

const STATUS_WORDS: Readonly<Record<RecordView['status']['value'], string>> = {
  enriched: 'Enriched',
  no_match: 'No match',
  undone: 'Enrichment undone',
  excluded: 'Excluded: not enriched',
  pending: 'Waiting to be enriched',
  failed: 'Failed',
  skipped: 'Not enriched',
  never: 'Never enriched',
};

const STATE_WORDS: Readonly<Record<RecordView['fields'][number]['state'], string>> = {
  ours: 'ours',
  edited: 'edited by a person since',
  reused: "ours, from another record's answer",
};

export interface RecordPageView {
  readonly installation: Installation;
  readonly view: RecordView;
  /** The answer of the action just taken, if any. */
  readonly result: ActionResult | null;
  readonly propertyFor: (key: string) => string | null;
  readonly crm: string | null;
}

/** What an action costs, in words. */
function costText(action: ActionAvailability): string {
  const units = action.units === 0 ? 'no quota unit' : plural(action.units, 'quota unit');
  return action.budgetLeft === null ? units : `${units}; ${plural(action.budgetLeft, 'unit')} left in this month's budget`;
}

function ActionResultNotice({ result, named }: { readonly result: ActionResult; readonly named: ReturnType<typeof fieldNamer> }): VNode {
  if (!result.ok) {
    return (
      <Notice tone="bad" id="action-result">
        <p>{result.message}</p>
      </Notice>
    );
  }
  const leftAlone = result.fields?.filter((field) => field.result === 'left_alone') ?? [];
  const done: Record<typeof result.action, string> = {
    enrich_now: result.queued === false ? 'An Enrich now of this record was already waiting.' : 'Queued at the front: the record is enriched within seconds.',
    undo: 'Undone: every value went back to what it replaced.',
    exclude: 'Excluded: this record is not enriched again until it is included.',
    include: 'Included again: this record is enriched again as the installation settings say.',
  };
  return (
    <Notice id="action-result">
      <p>{leftAlone.length === 0 ? done[result.action] : 'Undone, except the values someone changed since, left as they are:'}</p>
      {leftAlone.length === 0 ? null : (
        <ul id="left-alone">
          {leftAlone.map((field) => (
            <li>
              <FieldName name={field.property} field={named(field.property)} />: <CrmValueText value={field.value} />
            </li>
          ))}
        </ul>
      )}
    </Notice>
  );
}

export function recordPage(chrome: Chrome, page: RecordPageView): string {
  const { installation, view } = page;
  const base = `${chrome.base}/installations/${encodeURIComponent(installation.id)}`;
  const here = `${base}/records/${encodeURIComponent(view.object)}/${encodeURIComponent(view.recordId)}`;
  const named = fieldNamer(page.propertyFor);
  const status = view.status;
  return renderPage(
    <Layout chrome={chrome} title={`${view.object} ${recordIdText(view.recordId)}: ${accountName(installation)}`}>
      <InstallationNav base={base} current={null} />
      {page.result === null ? null : <ActionResultNotice result={page.result} named={named} />}
      <dl class="card" id="record">
        <dt>Record</dt>
        <dd>
          {view.object} <RecordId id={view.recordId} />
          {page.crm === null ? null : (
            <>
              {' '}
              <a id="crm-link" href={page.crm} rel="noreferrer noopener" target="_blank">
                open in the CRM
              </a>
            </>
          )}
        </dd>
        <dt>Status</dt>
        <dd id="record-status" data-status={status.value}>
          {STATUS_WORDS[status.value]}
          {status.detail === null ? (status.reason === null ? '' : `: ${status.reason.replace(/_/g, ' ')}`) : `: ${status.detail}`}
          {status.at === null ? null : (
            <>
              {' '}
              (<Time iso={status.at} />)
            </>
          )}
        </dd>
        <dt>Last enriched</dt>
        <dd id="last-enriched">{view.lastEnrichedAt === null ? 'never' : <Time iso={view.lastEnrichedAt} />}</dd>
        <dt>Household</dt>
        <dd>{matchText(view.household)}</dd>
        <dt>Career</dt>
        <dd>{matchText(view.career)}</dd>
        <dt>Data version</dt>
        <dd>{view.dataVersion ?? 'not known'}</dd>
      </dl>
      <h2>Actions</h2>
      <ul id="actions" class="actions">
        {CONSOLE_RECORD_ACTIONS.map(([key, path, label]) => {
          const action = view.actions[key];
          return (
            <li data-action={key}>
              <form method="post" action={`${here}/${path}`}>
                <CsrfField token={chrome.session?.csrf ?? ''} />
                <button type="submit" disabled={!action.allowed} aria-describedby={`${key}-why`}>
                  {label}
                </button>{' '}
                <span id={`${key}-why`} class="muted">
                  {action.allowed ? costText(action) : (action.message ?? action.reason ?? 'not now')}
                </span>
              </form>
            </li>
          );
        })}
      </ul>
      <h2>Properties we manage</h2>
      {view.fields.length === 0 ? (
        <p class="muted">Nothing of ours is on this record.</p>
      ) : (
        <DataTable
          id="fields"
          rows={view.fields}
          columns={[
            { header: 'Field', cell: (field) => <FieldName name={field.property} field={named(field.property)} /> },
            { header: 'Value now', cell: (field) => <CrmValueText value={field.value} /> },
            { header: 'Written', cell: (field) => <Time iso={field.writtenAt} /> },
            { header: 'It replaced', cell: (field) => <CrmValueText value={field.replaced} /> },
            { header: 'Whose', cell: (field) => STATE_WORDS[field.state], cellClass: (field) => `state-${field.state}` },
          ]}
        />
      )}
    </Layout>,
  );
}

function matchText(match: RecordView['household']): string {
  if (!match.matched) return 'not matched';
  return match.confidence === null ? 'matched' : `matched, confidence ${Math.round(match.confidence * 100)} %`;
}
