// The backfill pages: the form that asks for an estimate, a run's page (the estimate with confirm,
// then live progress: read, queued, enriched), cancel and resume. Progress is polled by console.js
// from the run's status address (JSON) while the run is under way; without the script the page says
// the same on each reload.
import { z } from 'zod';
import type { BackfillRun, RunJobs } from '../../../bridge/backfill-runs.ts';
import type { CrmBackfill } from '../../../bridge/crm-module.ts';
import type { BudgetState } from '../../../bridge/budget.ts';
import type { Installation } from '../../../bridge/model.ts';
import { layout } from './components.tsx';
import type { FieldErrors } from './form-errors.ts';
import { type Chrome, escapeHtml, statusText, timeHtml } from './format.ts';

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
  /** 0–100 of the phase under way, or null when its end is not known (an estimate reading). */
  readonly percent: number | null;
  readonly error: string | null;
}

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
        : { ...base, headline: `Estimating: ${run.read.toLocaleString('en-US')} ${noun} read so far…`, live: true, percent: null };
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
            headline: `Queueing: ${run.enqueued.toLocaleString('en-US')} of ${run.toEnrich.toLocaleString('en-US')} ${noun} queued…`,
            live: true,
            percent: pct(run.enqueued, run.toEnrich),
          };
    case 'enqueued': {
      const settled = enriched + failed;
      const total = Math.max(run.enqueued, settled + waiting);
      return waiting > 0
        ? {
            ...base,
            headline: `Enriching: ${settled.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} done…`,
            live: true,
            percent: pct(settled, total),
          }
        : {
            ...base,
            headline: `Finished: ${enriched.toLocaleString('en-US')} enriched${failed > 0 ? `, ${failed} failed (see the enrichment log)` : ''}.`,
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

function fieldError(errors: FieldErrors, name: string): { attrs: string; html: string } {
  const message = errors[name];
  if (message === undefined) return { attrs: '', html: '' };
  return { attrs: ` aria-invalid="true" aria-describedby="${name}-error"`, html: `<p class="error" id="${name}-error">${escapeHtml(message)}</p>` };
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
  const csrf = escapeHtml(chrome.session?.csrf ?? '');
  const nav = `<nav><a href="${base}">Overview</a> <a href="${base}/log">Enrichment log</a> <a href="${base}/settings">Settings</a></nav>`;
  const title = `Backfill: ${installation.provider} ${installation.externalAccountId}`;
  if (spec === undefined) return layout(chrome, title, `${nav}<p>This server cannot read this CRM's records for a backfill.</p>`);
  const objects = Object.entries(spec.nouns);
  const object = fieldError(view.errors, 'object');
  const limit = fieldError(view.errors, 'limit');
  const chosen = view.values.object ?? objects[0]?.[0] ?? '';
  const objectField =
    objects.length === 1
      ? `<input type="hidden" name="object" value="${escapeHtml(objects[0]?.[0] ?? '')}"><p>Reads the ${escapeHtml(objects[0]?.[1] ?? 'records')} the CRM already has.</p>`
      : `<p><label for="object">Object</label><br><select name="object" id="object"${object.attrs}>${objects
          .map(([key, noun]) => `<option value="${escapeHtml(key)}"${key === chosen ? ' selected' : ''}>${escapeHtml(noun)}</option>`)
          .join('')}</select></p>${object.html}`;
  const flags = Object.entries(spec.flags ?? {})
    .map(
      ([flag, help], i) =>
        `<div class="check"><input type="checkbox" name="flags" value="${escapeHtml(flag)}" id="flag-${i}"><label for="flag-${i}">${escapeHtml(help)}</label></div>`,
    )
    .join('');
  const active = view.runs.find((run) => run.state === 'estimating' || run.state === 'running' || run.state === 'estimated');
  const status = statusText(installation);
  const rows = view.runs
    .map(
      (run) =>
        `<tr><td><a href="${base}/backfill/${encodeURIComponent(run.id)}">${timeHtml(run.createdAt)}</a></td><td>${escapeHtml(spec.nouns[run.object] ?? run.object)}</td><td>${escapeHtml(run.state)}</td><td class="opt">${run.toEnrich}</td><td class="opt">${run.enqueued}</td></tr>`,
    )
    .join('');
  return layout(
    chrome,
    title,
    `${nav}
<p>A backfill enriches the records the CRM had before the installation: first an estimate (the records are read, nothing is enriched and no quota is spent), then, once you confirm, the records that need it are queued and enriched at the token's rate. An interrupted backfill resumes where it stopped.</p>
${status.kind === 'active' ? '' : `<div class="notice bad" role="alert"><p>This installation is ${escapeHtml(status.text)}. ${installation.pauseReason === 'quota' || installation.pauseReason === 'crm_limit' ? "A backfill's enrichments wait until the limit resets." : 'A backfill can be estimated, but not started until the installation is resumed.'}</p></div>`}
${active === undefined ? '' : `<div class="notice" role="status"><p>A backfill is under way or waiting for confirmation: <a href="${base}/backfill/${encodeURIComponent(active.id)}">see it</a>.</p></div>`}
${view.errors.form === undefined ? '' : `<div class="notice bad" role="alert"><p>${escapeHtml(view.errors.form)}</p></div>`}
<form method="post" action="${base}/backfill" class="card">
<input type="hidden" name="csrf" value="${csrf}">
${objectField}
${flags}
<p><label for="limit">At most this many records (empty: all)</label><br><input type="text" inputmode="numeric" name="limit" id="limit" value="${escapeHtml(view.values.limit ?? '')}"${limit.attrs}></p>${limit.html}
<div class="check"><input type="checkbox" name="restart" id="restart"${view.values.restart === 'on' ? ' checked' : ''}><label for="restart">Start from the first record, even if an earlier backfill stopped midway</label></div>
<p><button type="submit">Estimate</button></p>
</form>
<h2>Recent backfills</h2>
${rows === '' ? '<p class="muted">None yet.</p>' : `<div class="scroll"><table id="runs"><thead><tr><th scope="col">Started</th><th scope="col">Object</th><th scope="col">State</th><th scope="col" class="opt">To enrich</th><th scope="col" class="opt">Queued</th></tr></thead><tbody>${rows}</tbody></table></div>`}`,
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
  const csrf = escapeHtml(chrome.session?.csrf ?? '');
  const button = (action: string, label: string, danger = false) =>
    `<form method="post" action="${at}/${action}"><input type="hidden" name="csrf" value="${csrf}"><button type="submit"${danger ? ' class="danger"' : ''}>${label}</button></form>`;
  const sandbox = installation.environment === 'sandbox';
  const estimate =
    run.state === 'estimating'
      ? ''
      : `<dl class="card" id="estimate">
<dt>${escapeHtml(noun[0]?.toUpperCase() ?? '')}${escapeHtml(noun.slice(1))} read</dt><dd id="est-scanned">${run.scanned}${run.resumed ? ' (resuming where the last backfill stopped)' : ''}</dd>
<dt>With a match key (an e-mail, a phone or an address)</dt><dd id="est-match-key">${run.withMatchKey}</dd>
<dt>Already up to date</dt><dd id="est-up-to-date">${run.upToDate}</dd>
<dt>To enrich</dt><dd id="est-to-enrich">${run.toEnrich}</dd>
<dt>Quota units at most</dt><dd id="est-units">${run.quotaUnits}${sandbox ? ' (sandbox: no quota is spent)' : ''}</dd>
${budget === null ? '' : `<dt>Budget left this month</dt><dd id="est-budget">${budget.left} of ${budget.budget} units${run.quotaUnits > budget.left ? ' (this backfill may spend more: it is refused unless you tick “queue beyond the budget”)' : ''}</dd>`}
</dl>`;
  const progress =
    status.percent === null
      ? ''
      : `<p><label for="progress">Progress</label><br><progress id="progress" max="100" value="${status.percent}">${status.percent}%</progress></p>`;
  const counts =
    run.state === 'running' || run.state === 'enqueued' || (run.state === 'cancelled' && run.confirmedAt !== null)
      ? `<dl class="card" id="counts"><dt>Queued</dt><dd id="n-enqueued">${status.enqueued}</dd><dt>Enriched</dt><dd id="n-enriched">${status.enriched}</dd><dt>Waiting</dt><dd id="n-waiting">${status.waiting}</dd><dt>Failed</dt><dd id="n-failed">${status.failed}</dd></dl>`
      : '';
  const actions: string[] = [];
  if (run.state === 'estimated') {
    actions.push(
      run.toEnrich === 0
        ? button('confirm', 'Finish (nothing to enrich)')
        : budget !== null && run.quotaUnits > budget.left
          ? `<form method="post" action="${at}/confirm"><input type="hidden" name="csrf" value="${csrf}"><div class="check"><input type="checkbox" name="overBudget" id="overBudget"><label for="overBudget">Queue beyond the budget (enrichment pauses when it is spent)</label></div><button type="submit">Enrich ${run.toEnrich} ${escapeHtml(noun)} (at most ${run.quotaUnits} units)</button></form>`
          : button('confirm', `Enrich ${run.toEnrich} ${escapeHtml(noun)}${sandbox ? '' : ` (at most ${run.quotaUnits} units)`}`),
    );
  }
  if (['estimating', 'estimated', 'running', 'enqueued'].includes(run.state) && !(run.state === 'enqueued' && !status.live))
    actions.push(button('cancel', 'Cancel', true));
  const resumable = run.state === 'cancelled' || run.state === 'failed' || (!status.live && (run.state === 'running' || run.state === 'estimating'));
  if (resumable) {
    actions.push(
      `<form method="post" action="${base}/backfill"><input type="hidden" name="csrf" value="${csrf}"><input type="hidden" name="object" value="${escapeHtml(run.object)}"><input type="hidden" name="limit" value="${run.limit === null ? '' : String(Math.max(1, run.limit - run.enqueued))}">${Object.entries(
        run.flags,
      )
        .filter(([, on]) => on)
        .map(([flag]) => `<input type="hidden" name="flags" value="${escapeHtml(flag)}">`)
        .join('')}<button type="submit">Resume: estimate the rest</button></form>`,
    );
  }
  return layout(
    chrome,
    `Backfill of ${noun}`,
    `<nav><a href="${base}">Overview</a> <a href="${base}/backfill">Backfill</a> <a href="${base}/log">Enrichment log</a></nav>
${notice === null ? '' : `<div class="notice" role="status"><p>${escapeHtml(notice)}</p></div>`}
<div id="run" data-status="${at}/status" data-live="${status.live ? '1' : '0'}" data-state="${escapeHtml(run.state)}">
<p id="headline" role="status" aria-live="polite">${escapeHtml(status.headline)}</p>
${progress}
</div>
${estimate}
${counts}
<div class="actions">${actions.join('')}</div>
<p class="muted">Started ${timeHtml(run.createdAt)}${run.confirmedAt === null ? '' : `; confirmed ${timeHtml(run.confirmedAt)}`}.</p>`,
  );
}
