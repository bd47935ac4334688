// The console's pages as HTML strings: one layout, every value escaped, no inline script or style.
import type { DailyOutcome } from '../../../bridge/store.ts';
import type { Installation, LogEntry } from '../../../bridge/model.ts';
import { FORECAST_DAYS, type UsageForecast } from '../../../bridge/forecast.ts';
import type { BudgetState } from '../../../bridge/budget.ts';

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Characters that open or close a bidi embedding, override or isolate, or mark a direction. */
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;

/** A CRM record id with its bidi controls written as their codes: none of them can end the isolate it is shown in. */
function visibleRecordId(id: string): string {
  return id.replace(BIDI_CONTROLS, (c) => `\\u{${(c.codePointAt(0) ?? 0).toString(16)}}`);
}

/**
 * A CRM record id in a page: in a bidi isolate (`<bdi>`), so an id of right-to-left characters, or one
 * crafted to reorder text, cannot move the words around it on its line.
 */
export function recordIdHtml(id: string): string {
  return `<bdi>${escapeHtml(visibleRecordId(id))}</bdi>`;
}

/** The same for text that cannot hold markup (a page's title): between FIRST STRONG ISOLATE and POP DIRECTIONAL ISOLATE. */
export function recordIdText(id: string): string {
  return `\u2068${visibleRecordId(id)}\u2069`;
}

/**
 * One rule for times in the console: every time is shown in UTC, to the second, with the zone named
 * (`2026-11-25 08:02:13 UTC`), on every page and whatever the viewer's own zone, so the same event
 * reads the same on the overview, in the log and in its detail, and beside the UTC days of the filters
 * and the daily table. A text that is not a time is shown as it is.
 */
export function utcText(iso: string): string {
  const when = new Date(iso);
  if (Number.isNaN(when.getTime())) return iso;
  return `${when.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** A time as utcText shows it, marked up for machines too (`<time datetime>`). */
export function timeHtml(iso: string): string {
  return `<time datetime="${escapeHtml(iso)}">${escapeHtml(utcText(iso))}</time>`;
}

export interface Chrome {
  /** The console's path under PUBLIC_URL: `/console`, or `/prefix/console`. */
  readonly base: string;
  /** Who is signed in, and the token the sign-out form carries; null on pages before sign-in. */
  readonly session: { readonly who: string; readonly csrf: string } | null;
}

/** The server's root under PUBLIC_URL (where /favicon.ico is): the console's path without `/console`. */
function siteRoot(chrome: Chrome): string {
  return chrome.base.replace(/\/console$/, '');
}

export function layout(chrome: Chrome, title: string, main: string): string {
  const session = chrome.session;
  const signOut =
    session === null
      ? ''
      : `<span class="who">Signed in: ${escapeHtml(session.who)}</span>
<form method="post" action="${chrome.base}/signout"><input type="hidden" name="csrf" value="${escapeHtml(session.csrf)}"><button type="submit">Sign out</button></form>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · enrichbridge console</title>
<link rel="icon" href="${siteRoot(chrome)}/favicon.ico" sizes="16x16 32x32">
<link rel="stylesheet" href="${chrome.base}/assets/console.css">
<script src="${chrome.base}/assets/console.js" defer></script>
</head>
<body>
<header><a href="${chrome.base}">enrichbridge console</a>${signOut}</header>
<main>
<h1>${escapeHtml(title)}</h1>
${main}
</main>
</body>
</html>`;
}

/** A page with one message: a refusal, or where to go next. */
export function messagePage(chrome: Chrome, title: string, lines: readonly string[], tone: 'info' | 'bad' = 'info'): string {
  return layout(
    chrome,
    title,
    `<div class="notice${tone === 'bad' ? ' bad' : ''}" role="${tone === 'bad' ? 'alert' : 'status'}">${lines.map((line) => `<p>${escapeHtml(line)}</p>`).join('')}</div>`,
  );
}

/** At 80 % of the month's budget a warning; at 100 % why enrichment waits and until when. */
function budgetNotice(budget: BudgetState | null): string {
  if (budget === null || !budget.warning) return '';
  const spent = `${budget.spent.toLocaleString('en-US')} of ${budget.budget.toLocaleString('en-US')} units`;
  return budget.reached
    ? `<div class="notice bad" role="alert" id="budget-notice"><p>This month's budget is spent (${spent}): enrichment waits until ${timeHtml(budget.resetsAt)} or a larger budget (Settings). Nothing is dropped.</p></div>`
    : `<div class="notice" role="status" id="budget-notice"><p>${Math.floor(budget.ratio * 100)} % of this month's budget is spent (${spent}).</p></div>`;
}

/** The forecast card's words: the pace, and the (UTC) day the quota runs out at it (or that it lasts). */
function forecastText(forecast: UsageForecast): string {
  if (forecast.sandbox) return 'sandbox: no quota is spent';
  const pace = `${forecast.dailyAverage.toFixed(1)} units a day over the last ${FORECAST_DAYS} days`;
  const quota = forecast.runsOutOn !== null ? `at this pace the quota runs out on ${forecast.runsOutOn} (UTC)` : 'at this pace it lasts until the quota resets';
  const budget =
    forecast.budget === null
      ? ''
      : forecast.budget.runsOutOn === null
        ? '; the budget lasts the month'
        : `; the budget is spent on ${forecast.budget.runsOutOn} (UTC)`;
  return `${pace}: ${quota}${budget}`;
}

export function statusText(installation: Installation): { text: string; kind: 'active' | 'paused' | 'disabled' } {
  if (installation.status === 'disabled') return { text: 'disabled', kind: 'disabled' };
  if (installation.status === 'paused') {
    const until = installation.pausedUntil === null ? '' : ` until ${utcText(installation.pausedUntil)}`;
    if (installation.pauseReason === 'quota') return { text: `paused for quota${until}`, kind: 'paused' };
    if (installation.pauseReason === 'crm_limit') return { text: `paused for the CRM's limit${until}`, kind: 'paused' };
    if (installation.pauseReason === 'budget') return { text: `paused: the month's budget is spent${until}`, kind: 'paused' };
    return { text: `paused by an admin${until}`, kind: 'paused' };
  }
  return { text: 'active', kind: 'active' };
}

export interface OverviewData {
  readonly installation: Installation;
  /** What the installation enriches against, in words (an account's name, or an endpoint's host). */
  readonly target: string;
  readonly quota: { readonly used: number; readonly limit: number; readonly period: string; readonly resetsAt: string | null } | null;
  /** The pace of the last seven days and when the quota runs out at it. */
  readonly forecast: UsageForecast;
  /** The installation's monthly budget this month; null when it has none. */
  readonly budget: BudgetState | null;
  readonly days: readonly string[];
  readonly outcomes: readonly DailyOutcome[];
  readonly failures: readonly LogEntry[];
  /** Events the CRM's webhooks did not bring that its own journal did (HubSpot), over the ledger's days. */
  readonly recovered: number;
}

/** The outcome kinds the overview counts by: skipped and failed ones by reason below. */
export function outcomeKind(outcome: string): 'enriched' | 'no_match' | 'skipped' | 'failed' {
  if (outcome === 'enriched' || outcome === 'no_match') return outcome;
  return outcome.startsWith('skipped:') ? 'skipped' : 'failed';
}

const KINDS = ['enriched', 'no_match', 'skipped', 'failed'] as const;
const KIND_LABELS: Record<(typeof KINDS)[number], string> = { enriched: 'Enriched', no_match: 'No match', skipped: 'Skipped', failed: 'Failed' };

export function overviewPage(chrome: Chrome, data: OverviewData): string {
  const { installation } = data;
  const status = statusText(installation);
  const totals = { enriched: 0, no_match: 0, skipped: 0, failed: 0 };
  const perDay = new Map<string, Record<(typeof KINDS)[number], number>>();
  const skippedByReason = new Map<string, number>();
  let units = 0;
  for (const row of data.outcomes) {
    const kind = outcomeKind(row.outcome);
    totals[kind] += row.count;
    units += row.quotaConsumed;
    const day = perDay.get(row.day) ?? { enriched: 0, no_match: 0, skipped: 0, failed: 0 };
    day[kind] += row.count;
    perDay.set(row.day, day);
    if (kind === 'skipped')
      skippedByReason.set(row.outcome.slice('skipped:'.length), (skippedByReason.get(row.outcome.slice('skipped:'.length)) ?? 0) + row.count);
  }
  const busiest = Math.max(1, ...[...perDay.values()].map((day) => KINDS.reduce((sum, kind) => sum + day[kind], 0)));
  const quota =
    data.quota === null
      ? '<dt>Quota</dt><dd>kept by the remote endpoint</dd>'
      : `<dt>Quota this ${escapeHtml(data.quota.period)}</dt><dd id="quota">${data.quota.used.toLocaleString('en-US')} used of ${data.quota.limit.toLocaleString('en-US')}, ${Math.max(0, data.quota.limit - data.quota.used).toLocaleString('en-US')} left</dd>` +
        (data.quota.resetsAt === null ? '<dt>Resets</dt><dd>never (all-time quota)</dd>' : `<dt>Resets</dt><dd>${timeHtml(data.quota.resetsAt)}</dd>`) +
        `<dt>Forecast</dt><dd id="forecast">${escapeHtml(forecastText(data.forecast))}</dd>`;
  const dayRows = data.days
    .map((day) => {
      const counts = perDay.get(day) ?? { enriched: 0, no_match: 0, skipped: 0, failed: 0 };
      const total = KINDS.reduce((sum, kind) => sum + counts[kind], 0);
      const width = Math.round((total / busiest) * 100);
      return `<tr><th scope="row">${escapeHtml(day)}</th>${KINDS.map((kind) => `<td>${counts[kind]}</td>`).join('')}<td class="opt"><span class="bar w${width}" aria-hidden="true"></span></td></tr>`;
    })
    .join('\n');
  const failures =
    data.failures.length === 0
      ? '<p class="muted">No failures.</p>'
      : `<div class="scroll"><table id="failures"><thead><tr><th scope="col">When</th><th scope="col">Record</th><th scope="col">Reason</th></tr></thead><tbody>${data.failures
          .map(
            (entry) =>
              `<tr><td>${timeHtml(entry.at)}</td><td>${escapeHtml(entry.object)} ${recordIdHtml(entry.recordId)}</td><td>${escapeHtml(entry.outcome.slice('failed:'.length))}${entry.detail === null ? '' : `: ${escapeHtml(entry.detail)}`}</td></tr>`,
          )
          .join('')}</tbody></table></div>`;
  const skipped =
    skippedByReason.size === 0
      ? ''
      : `<p>Skipped by reason: ${[...skippedByReason].map(([reason, n]) => `${escapeHtml(reason.replace(/_/g, ' '))} ${n}`).join(', ')}.</p>`;
  const recovered =
    data.recovered === 0
      ? ''
      : `<p id="recovered">Missed CRM events recovered from the CRM's journal in the last 4 days: <strong>${data.recovered.toLocaleString('en-US')}</strong>.</p>`;
  return layout(
    chrome,
    `${installation.provider} ${installation.externalAccountId}`,
    `<nav><a href="${chrome.base}/installations/${encodeURIComponent(installation.id)}/log">Enrichment log</a> <a href="${chrome.base}/installations/${encodeURIComponent(installation.id)}/settings">Settings</a> <a href="${chrome.base}/installations/${encodeURIComponent(installation.id)}/backfill">Backfill</a> <a href="${chrome.base}/installations/${encodeURIComponent(installation.id)}/playground">Sandbox playground</a></nav>
${budgetNotice(data.budget)}
<div class="cards">
<dl class="card"><dt>Status</dt><dd id="status" class="status-${status.kind}">${escapeHtml(status.text)}</dd><dt>Enrich on create</dt><dd id="enrich-on-create">${installation.settings.enrichOnCreate ? 'on' : 'off'}</dd></dl>
<dl class="card"><dt>Target</dt><dd>${escapeHtml(data.target)}</dd><dt>Environment</dt><dd>${escapeHtml(installation.environment)}</dd></dl>
<dl class="card">${quota}${data.budget === null ? '' : `<dt>Budget this month</dt><dd id="budget">${data.budget.spent.toLocaleString('en-US')} of ${data.budget.budget.toLocaleString('en-US')} units, ${data.budget.left.toLocaleString('en-US')} left</dd>`}</dl>
</div>
<h2>Last 30 days</h2>
<p id="totals">${KINDS.map((kind) => `${KIND_LABELS[kind]} <strong data-kind="${kind}">${totals[kind].toLocaleString('en-US')}</strong>`).join(' · ')} · quota units <strong data-kind="units">${units.toLocaleString('en-US')}</strong></p>
${skipped}
${recovered}
<div class="scroll"><table id="days"><caption class="muted">Records per day (UTC)</caption><thead><tr><th scope="col">Day</th>${KINDS.map((kind) => `<th scope="col">${KIND_LABELS[kind]}</th>`).join('')}<th scope="col" class="opt">Volume</th></tr></thead><tbody>
${dayRows}
</tbody></table></div>
<h2>Latest failures</h2>
${failures}`,
  );
}

export function operatorHome(chrome: Chrome, installations: readonly Installation[]): string {
  const rows = installations
    .map((installation) => {
      const status = statusText(installation);
      return `<tr><td><a href="${chrome.base}/installations/${encodeURIComponent(installation.id)}">${escapeHtml(installation.provider)} ${escapeHtml(installation.externalAccountId)}</a></td><td>${escapeHtml(installation.environment)}</td><td class="status-${status.kind}">${escapeHtml(status.text)}</td></tr>`;
    })
    .join('\n');
  return layout(
    chrome,
    'Installations',
    `<nav><a href="${chrome.base}">Installations</a> <a href="${chrome.base}/accounts">Accounts</a> <a href="${chrome.base}/jobs">Jobs</a> <a href="${chrome.base}/snapshots">Snapshots</a></nav>` +
      (installations.length === 0
        ? '<p class="muted">No installations yet.</p>'
        : `<div class="scroll"><table id="installations"><thead><tr><th scope="col">Installation</th><th scope="col">Environment</th><th scope="col">Status</th></tr></thead><tbody>${rows}</tbody></table></div>`),
  );
}
