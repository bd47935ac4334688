// The backfill pages: the form that asks for an estimate, a run's page (the estimate with confirm,
// then live progress: read, queued, enriched), cancel and resume. Progress is polled by console.js
// from the run's status address (JSON) while the run is under way; without the script the page says
// the same on each reload.
import type { VNode } from 'preact';
import { z } from 'zod';
import type { BackfillRun, RunJobs } from '../../../bridge/backfill-runs.ts';
import type { CrmBackfill } from '../../../bridge/crm-module.ts';
import type { BudgetState } from '../../../bridge/budget.ts';
import type { Installation } from '../../../bridge/model.ts';
import { plural, pluralOf } from '../../plural.ts';
import { CsrfField, DataTable, Field, InstallationNav, Layout, Notice, Time, renderPage } from './components.tsx';
import type { FieldErrors } from './form-errors.ts';
import { type Chrome, accountName, statusText } from './format.ts';

export const BackfillFormSchema = z.object({
  csrf: z.string().optional(),
  object: z.string().min(1, 'choose what to backfill').max(100),
  limit: z
    .string()
    .trim()
    .max(12)
    .regex(/^\d*$/, 'a whole number of records, or empty for all')
    .transform((text) => (text === '' ? null : Number(text)))
    .refine((n) => n === null || n >= 1, 'at least 1, or empty for all'),
  restart: z.literal('on').optional(),
  flags: z.union([z.string(), z.array(z.string())]).optional(),
});

/** What a run's page and its status address show. */
export interface RunStatus {
  readonly state: BackfillRun['state'];
  /** In words, for the page and for screen readers (the status region is polite). */
  readonly headline: string;
  /** The phase under way is still moving: the page polls. */
  readonly live: boolean;
  readonly read: number;
  readonly scanned: number;
  readonly toEnrich: number;
  readonly enqueued: number;
  readonly enriched: number;
  readonly waiting: number;
  readonly failed: number;
  /** 0–100 of the phase under way (100 once it has finished), or null when its end is not known (an estimate reading). */
  readonly percent: number | null;
  readonly error: string | null;
}

const number = (n: number) => n.toLocaleString('en-US');

export function runStatus(run: BackfillRun, jobs: RunJobs, noun: string): RunStatus {
  const e = jobs.enrichments;
  const enriched = e.done ?? 0;
  const waiting = (e.queued ?? 0) + (e.running ?? 0);
  const failed = e.dead ?? 0;
  const stopped = (jobs.control.dead ?? 0) > 0;
  const base = {
    state: run.state,
    read: run.read,
    scanned: run.scanned,
    toEnrich: run.toEnrich,
    enqueued: run.enqueued,
    enriched,
    waiting,
    failed,
    error: run.error,
  };
  const pct = (n: number, of: number) => (of === 0 ? 100 : Math.min(100, Math.floor((n / of) * 100)));
  switch (run.state) {
    case 'estimating':
      return stopped
        ? { ...base, headline: `The estimate stopped: the CRM could not be read (${run.error ?? 'no reason given'}).`, live: false, percent: null }
        : { ...base, headline: `Estimating: ${pluralOf(run.read, noun)} read so far…`, live: true, percent: null };
    case 'estimated':
      return { ...base, headline: 'Estimate ready: nothing is queued until you confirm.', live: false, percent: null };
    case 'running':
      return stopped
        ? {
            ...base,
            headline: `The backfill stopped: the CRM could not be read (${run.error ?? 'no reason given'}). Resume it to go on from where it stopped.`,
            live: false,
            percent: null,
          }
        : {
            ...base,
            headline: `Queueing: ${number(run.enqueued)} of ${pluralOf(run.toEnrich, noun)} queued…`,
            live: true,
            percent: pct(run.enqueued, run.toEnrich),
          };
    case 'enqueued': {
      const settled = enriched + failed;
      const total = Math.max(run.enqueued, settled + waiting);
      return waiting > 0
        ? {
            ...base,
            headline: `Enriching: ${number(settled)} of ${number(total)} done…`,
            live: true,
            percent: pct(settled, total),
          }
        : {
            ...base,
            headline: `Finished: ${number(enriched)} enriched${failed > 0 ? `, ${number(failed)} failed (see the enrichment log)` : ''}.`,
            live: false,
            percent: 100,
          };
    }
    case 'cancelled':
      return {
        ...base,
        headline: 'Cancelled. Nothing more is queued; what was already enriched stays. Resume to go on from where it stopped.',
        live: false,
        percent: null,
      };
    case 'failed':
      return { ...base, headline: `Failed: ${run.error ?? 'the CRM could not be read'}.`, live: false, percent: null };
  }
}

export interface BackfillPageView {
  readonly installation: Installation;
  readonly spec: CrmBackfill | undefined;
  readonly runs: readonly BackfillRun[];
  readonly values: Readonly<Record<string, string>>;
  readonly errors: FieldErrors;
}

/** The backfill form and the installation's recent runs. */
export function backfillPage(chrome: Chrome, view: BackfillPageView): string {
  const { installation, spec } = view;
  const base = `${chrome.base}/installations/${encodeURIComponent(installation.id)}`;
  const title = `Backfill: ${accountName(installation)}`;
  if (spec === undefined) {
    return renderPage(
      <Layout chrome={chrome} title={title}>
        <InstallationNav base={base} current="backfill" />
        <p>This server cannot read this CRM's records for a backfill.</p>
      </Layout>,
    );
  }
  const objects = Object.entries(spec.nouns);
  const chosen = view.values.object ?? objects[0]?.[0] ?? '';
  const active = view.runs.find((run) => run.state === 'estimating' || run.state === 'running' || run.state === 'estimated');
  const status = statusText(installation);
  const [only] = objects;
  return renderPage(
    <Layout chrome={chrome} title={title}>
      <InstallationNav base={base} current="backfill" />
      <p>
        A backfill enriches the records the CRM had before the installation: first an estimate (the records are read, nothing is enriched and no quota is
        spent), then, once you confirm, the records that need it are queued and enriched at the token's rate. An interrupted backfill resumes where it stopped.
      </p>
      {status.kind === 'active' ? null : (
        <Notice tone="bad">
          <p>
            {`This installation is ${status.text}. `}
            {installation.pauseReason === 'quota' || installation.pauseReason === 'crm_limit'
              ? "A backfill's enrichments wait until the limit resets."
              : 'A backfill can be estimated, but not started until the installation is resumed.'}
          </p>
        </Notice>
      )}
      {active === undefined ? null : (
        <Notice>
          <p>
            A backfill is under way or waiting for confirmation: <a href={`${base}/backfill/${encodeURIComponent(active.id)}`}>see it</a>.
          </p>
        </Notice>
      )}
      {view.errors.form === undefined ? null : (
        <Notice tone="bad">
          <p>{view.errors.form}</p>
        </Notice>
      )}
      <form method="post" action={`${base}/backfill`} class="card">
        <CsrfField token={chrome.session?.csrf ?? ''} />
        {objects.length === 1 && only !== undefined ? (
          <>
            <input type="hidden" name="object" value={only[0]} />
            <p>{`Reads the ${only[1]} the CRM already has.`}</p>
          </>
        ) : (
          <Field
            name="object"
            id="object"
            label="Object"
            error={view.errors.object}
            input={(field) => (
              <select {...field}>
                {objects.map(([key, noun]) => (
                  <option value={key} selected={key === chosen}>
                    {noun}
                  </option>
                ))}
              </select>
            )}
          />
        )}
        {Object.entries(spec.flags ?? {}).map(([flag, help], i) => (
          <div class="check">
            <input type="checkbox" name="flags" value={flag} id={`flag-${i}`} />
            <label for={`flag-${i}`}>{help}</label>
          </div>
        ))}
        <Field
          name="limit"
          id="limit"
          label="At most this many records (empty: all)"
          error={view.errors.limit}
          input={(field) => <input type="text" inputmode="numeric" {...field} value={view.values.limit ?? ''} />}
        />
        <div class="check">
          <input type="checkbox" name="restart" id="restart" checked={view.values.restart === 'on'} />
          <label for="restart">Start from the first record, even if an earlier backfill stopped midway</label>
        </div>
        <p>
          <button type="submit">Estimate</button>
        </p>
      </form>
      <h2>Recent backfills</h2>
      {view.runs.length === 0 ? (
        <p class="muted">None yet.</p>
      ) : (
        <DataTable
          id="runs"
          rows={view.runs}
          columns={[
            {
              header: 'Started',
              cell: (run) => (
                <a href={`${base}/backfill/${encodeURIComponent(run.id)}`}>
                  <Time iso={run.createdAt} />
                </a>
              ),
            },
            { header: 'Object', cell: (run) => spec.nouns[run.object] ?? run.object },
            { header: 'State', cell: (run) => run.state },
            { header: 'To enrich', class: 'opt', cell: (run) => String(run.toEnrich) },
            { header: 'Queued', class: 'opt', cell: (run) => String(run.enqueued) },
          ]}
        />
      )}
    </Layout>,
  );
}

/** A button that posts the run's form token to one of its actions. */
function RunAction(props: { readonly action: string; readonly csrf: string; readonly danger?: boolean; readonly children: string }): VNode {
  return (
    <form method="post" action={props.action}>
      <CsrfField token={props.csrf} />
      <button type="submit" {...(props.danger === true ? { class: 'danger' } : {})}>
        {props.children}
      </button>
    </form>
  );
}

/** The estimate: what was read, what needs enriching, and what it may cost. */
function Estimate(props: { readonly run: BackfillRun; readonly noun: string; readonly sandbox: boolean; readonly budget: BudgetState | null }): VNode {
  const { run, noun, budget } = props;
  return (
    <dl class="card" id="estimate">
      <dt>{`${noun.slice(0, 1).toUpperCase()}${noun.slice(1)} read`}</dt>
      <dd id="est-scanned">{`${run.scanned}${run.resumed ? ' (resuming where the last backfill stopped)' : ''}`}</dd>
      <dt>With a match key (an e-mail, a phone or an address)</dt>
      <dd id="est-match-key">{String(run.withMatchKey)}</dd>
      <dt>Already up to date</dt>
      <dd id="est-up-to-date">{String(run.upToDate)}</dd>
      <dt>To enrich</dt>
      <dd id="est-to-enrich">{String(run.toEnrich)}</dd>
      <dt>Quota units at most</dt>
      <dd id="est-units">{`${run.quotaUnits}${props.sandbox ? ' (sandbox: no quota is spent)' : ''}`}</dd>
      {budget === null ? null : (
        <>
          <dt>Budget left this month</dt>
          <dd id="est-budget">
            {`${number(budget.left)} of ${plural(budget.budget, 'unit')}${
              run.quotaUnits > budget.left ? ' (this backfill may spend more: it is refused unless you tick “queue beyond the budget”)' : ''
            }`}
          </dd>
        </>
      )}
    </dl>
  );
}

/** One run: its estimate, its progress, and what can be done with it now. */
export function runPage(
  chrome: Chrome,
  installation: Installation,
  run: BackfillRun,
  status: RunStatus,
  noun: string,
  notice: string | null,
  budget: BudgetState | null = null,
): string {
  const base = `${chrome.base}/installations/${encodeURIComponent(installation.id)}`;
  const at = `${base}/backfill/${encodeURIComponent(run.id)}`;
  const csrf = chrome.session?.csrf ?? '';
  const sandbox = installation.environment === 'sandbox';
  const records = pluralOf(run.toEnrich, noun);
  const units = plural(run.quotaUnits, 'unit');
  const percent = status.percent;
  const counted = run.state === 'running' || run.state === 'enqueued' || (run.state === 'cancelled' && run.confirmedAt !== null);
  const cancellable = ['estimating', 'estimated', 'running', 'enqueued'].includes(run.state) && !(run.state === 'enqueued' && !status.live);
  const resumable = run.state === 'cancelled' || run.state === 'failed' || (!status.live && (run.state === 'running' || run.state === 'estimating'));
  return renderPage(
    <Layout chrome={chrome} title={`Backfill of ${noun}`}>
      <InstallationNav base={base} current={null} />
      {notice === null ? null : (
        <Notice>
          <p>{notice}</p>
        </Notice>
      )}
      <div id="run" data-status={`${at}/status`} data-live={status.live ? '1' : '0'} data-state={run.state}>
        <p id="headline" role="status" aria-live="polite">
          {status.headline}
        </p>
        {percent === null ? null : (
          <p>
            <label for="progress">Progress</label>
            <br />
            <progress id="progress" max="100" value={percent}>{`${percent}%`}</progress>
          </p>
        )}
      </div>
      {run.state === 'estimating' ? null : <Estimate run={run} noun={noun} sandbox={sandbox} budget={budget} />}
      {counted ? (
        <dl class="card" id="counts">
          <dt>Queued</dt>
          <dd id="n-enqueued">{String(status.enqueued)}</dd>
          <dt>Enriched</dt>
          <dd id="n-enriched">{String(status.enriched)}</dd>
          <dt>Waiting</dt>
          <dd id="n-waiting">{String(status.waiting)}</dd>
          <dt>Failed</dt>
          <dd id="n-failed">{String(status.failed)}</dd>
        </dl>
      ) : null}
      <div class="actions">
        {run.state !== 'estimated' ? null : run.toEnrich === 0 ? (
          <RunAction action={`${at}/confirm`} csrf={csrf}>
            Finish (nothing to enrich)
          </RunAction>
        ) : budget !== null && run.quotaUnits > budget.left ? (
          <form method="post" action={`${at}/confirm`}>
            <CsrfField token={csrf} />
            <div class="check">
              <input type="checkbox" name="overBudget" id="overBudget" />
              <label for="overBudget">Queue beyond the budget (enrichment pauses when it is spent)</label>
            </div>
            <button type="submit">{`Enrich ${records} (at most ${units})`}</button>
          </form>
        ) : (
          <RunAction action={`${at}/confirm`} csrf={csrf}>
            {`Enrich ${records}${sandbox ? '' : ` (at most ${units})`}`}
          </RunAction>
        )}
        {cancellable ? (
          <RunAction action={`${at}/cancel`} csrf={csrf} danger>
            Cancel
          </RunAction>
        ) : null}
        {resumable ? (
          <form method="post" action={`${base}/backfill`}>
            <CsrfField token={csrf} />
            <input type="hidden" name="object" value={run.object} />
            <input type="hidden" name="limit" value={run.limit === null ? '' : String(Math.max(1, run.limit - run.enqueued))} />
            {Object.entries(run.flags)
              .filter(([, on]) => on)
              .map(([flag]) => (
                <input type="hidden" name="flags" value={flag} />
              ))}
            <button type="submit">Resume: estimate the rest</button>
          </form>
        ) : null}
      </div>
      <p class="muted">
        Started <Time iso={run.createdAt} />
        {run.confirmedAt === null ? null : (
          <>
            ; confirmed <Time iso={run.confirmedAt} />
          </>
        )}
        .
      </p>
    </Layout>,
  );
}
