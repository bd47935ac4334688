// The console's overview of an installation (status, target, quota and its forecast, the last 30 days
// by outcome, the latest failures, what is kept and for how long) and the operator's list of installations.
import { maskPersonalText } from '../../../core/observe/loggable-errors.ts';
import type { VNode } from 'preact';
import type { DailyOutcome } from '../../../bridge/store.ts';
import type { Installation, LogEntry } from '../../../bridge/model.ts';
import { FORECAST_DAYS, type UsageForecast } from '../../../bridge/forecast.ts';
import type { BudgetState } from '../../../bridge/budget.ts';
import type { Kept } from '../../../bridge/retention.ts';
import { orgChangeNotice } from '../../../bridge/installations.ts';
import { CsrfField, DataTable, InstallationNav, Layout, Notice, RecordId, Time, renderPage } from './components.tsx';
import { type Chrome, accountName, outcomeKind, statusText } from './format.ts';
import { type Kind, type KindCounts, KINDS, KIND_LABELS, OutcomeChart, noCounts } from './outcome-chart.tsx';

const number = (n: number) => n.toLocaleString('en-US');

/** At 80 % of the month's budget a warning; at 100 % why enrichment waits and until when. */
function BudgetNotice({ budget }: { readonly budget: BudgetState | null }): VNode | null {
  if (budget === null || !budget.warning) return null;
  const spent = `${number(budget.spent)} of ${number(budget.budget)} units`;
  return budget.reached ? (
    <Notice tone="bad" id="budget-notice">
      <p>
        This month's budget is spent ({spent}): enrichment waits until <Time iso={budget.resetsAt} /> or a larger budget (Settings). Nothing is dropped.
      </p>
    </Notice>
  ) : (
    <Notice id="budget-notice">
      <p>
        {Math.floor(budget.ratio * 100)} % of this month's budget is spent ({spent}).
      </p>
    </Notice>
  );
}

/**
 * Messages come from another org on the installation's host (a refreshed sandbox's new org id): what the CLI
 * says, and for the operator a button that makes the OAuth link moving the installation to that org.
 */
function OrgChangeNotice({
  installation,
  base,
  csrf,
  operator,
}: {
  readonly installation: Installation;
  readonly base: string;
  readonly csrf: string;
  readonly operator: boolean;
}): VNode | null {
  const text = orgChangeNotice(installation);
  if (text === null) return null;
  return (
    <Notice tone="bad" id="org-changed">
      <p>{text}</p>
      {operator ? (
        <form method="post" action={`${base}/reconnect`}>
          <CsrfField token={csrf} />
          <p>
            <button type="submit">Reconnect to the new org</button> makes a link (7 days) for the org's admin: once they authorise the new org, this
            installation moves to it with its settings, secrets, log and state.
          </p>
        </form>
      ) : null}
    </Notice>
  );
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
  /** What is kept for the installation, and for how long (retention.ts). */
  readonly kept: readonly Kept[];
  /** The operator is looking (the org-changed notice's Reconnect button is theirs); absent: a CRM admin. */
  readonly operator?: boolean;
}

export function overviewPage(chrome: Chrome, data: OverviewData): string {
  const { installation } = data;
  const status = statusText(installation);
  const totals = noCounts();
  const perDay = new Map<string, KindCounts>();
  const skippedByReason = new Map<string, number>();
  let units = 0;
  for (const row of data.outcomes) {
    const kind = outcomeKind(row.outcome);
    // A record action is in the log with who asked, but it is not an enrichment's outcome to count.
    if (kind === 'action') continue;
    totals[kind] += row.count;
    units += row.quotaConsumed;
    const day = perDay.get(row.day) ?? noCounts();
    day[kind] += row.count;
    perDay.set(row.day, day);
    if (kind === 'skipped') {
      const reason = row.outcome.slice('skipped:'.length);
      skippedByReason.set(reason, (skippedByReason.get(reason) ?? 0) + row.count);
    }
  }
  const days = data.days.map((day) => ({ day, counts: perDay.get(day) ?? noCounts() }));
  const base = `${chrome.base}/installations/${encodeURIComponent(installation.id)}`;
  const quota = data.quota;
  return renderPage(
    <Layout chrome={chrome} title={accountName(installation)}>
      <InstallationNav base={base} current="overview" />
      <OrgChangeNotice installation={installation} base={base} csrf={chrome.session?.csrf ?? ''} operator={data.operator === true} />
      <BudgetNotice budget={data.budget} />
      <div class="cards">
        <dl class="card">
          <dt>Status</dt>
          <dd id="status" class={`status-${status.kind}`}>
            {status.text}
          </dd>
          <dt>Enrich on create</dt>
          <dd id="enrich-on-create">{installation.settings.enrichOnCreate ? 'on' : 'off'}</dd>
        </dl>
        <dl class="card">
          <dt>Target</dt>
          <dd>{data.target}</dd>
          <dt>Environment</dt>
          <dd>{installation.environment}</dd>
        </dl>
        <dl class="card">
          {quota === null ? (
            <>
              <dt>Quota</dt>
              <dd>kept by the remote endpoint</dd>
            </>
          ) : (
            <>
              <dt>{`Quota this ${quota.period}`}</dt>
              <dd id="quota">{`${number(quota.used)} used of ${number(quota.limit)}, ${number(Math.max(0, quota.limit - quota.used))} left`}</dd>
              <dt>Resets</dt>
              <dd>{quota.resetsAt === null ? 'never (all-time quota)' : <Time iso={quota.resetsAt} />}</dd>
              <dt>Forecast</dt>
              <dd id="forecast">{forecastText(data.forecast)}</dd>
            </>
          )}
          {data.budget === null ? null : (
            <>
              <dt>Budget this month</dt>
              <dd id="budget">{`${number(data.budget.spent)} of ${number(data.budget.budget)} units, ${number(data.budget.left)} left`}</dd>
            </>
          )}
        </dl>
      </div>
      <h2>Last 30 days</h2>
      <p id="totals">
        {KINDS.map((kind) => (
          <>
            {KIND_LABELS[kind]} <strong data-kind={kind}>{number(totals[kind])}</strong> ·{' '}
          </>
        ))}
        quota units <strong data-kind="units">{number(units)}</strong>
      </p>
      {skippedByReason.size === 0 ? null : (
        <p>{`Skipped by reason: ${[...skippedByReason].map(([reason, n]) => `${reason.replace(/_/g, ' ')} ${n}`).join(', ')}.`}</p>
      )}
      {data.recovered === 0 ? null : (
        <p id="recovered">
          Missed CRM events recovered from the CRM's journal in the last 4 days: <strong>{number(data.recovered)}</strong>.
        </p>
      )}
      {/* The chart reads left to right, oldest day first; the table keeps the newest first. */}
      <OutcomeChart days={[...days].reverse()} />
      <details id="days-table">
        <summary>Show as a table</summary>
        <DataTable
          id="days"
          caption="Records per day (UTC)"
          rows={days}
          columns={[
            { header: 'Day', rowHeader: true, class: 'day', cell: (row) => row.day },
            ...KINDS.map((kind: Kind) => ({ header: KIND_LABELS[kind], cell: (row: { counts: KindCounts }) => String(row.counts[kind]) })),
          ]}
        />
      </details>
      <h2>Latest failures</h2>
      {data.failures.length === 0 ? (
        <p class="muted">No failures.</p>
      ) : (
        <DataTable
          id="failures"
          rows={data.failures}
          columns={[
            { header: 'When', cell: (entry) => <Time iso={entry.at} /> },
            {
              header: 'Record',
              cell: (entry) => (
                <>
                  {entry.object} <RecordId id={entry.recordId} />
                </>
              ),
            },
            {
              header: 'Reason',
              cell: (entry) => `${entry.outcome.slice('failed:'.length)}${entry.detail === null ? '' : `: ${maskPersonalText(entry.detail)}`}`,
            },
          ]}
        />
      )}
      <h2>What is kept, and for how long</h2>
      <dl class="card" id="kept">
        {data.kept.map((item) => (
          <>
            <dt>{item.what}</dt>
            <dd>{item.kept}</dd>
          </>
        ))}
      </dl>
    </Layout>,
  );
}

/** The operator's reconnect link, to open as the org's admin or to send to them. */
export function reconnectLinkPage(chrome: Chrome, installation: Installation, url: string, orgId: string | null): string {
  const base = `${chrome.base}/installations/${encodeURIComponent(installation.id)}`;
  return renderPage(
    <Layout chrome={chrome} title={`Reconnect ${accountName(installation)}`}>
      <InstallationNav base={base} current="overview" />
      <Notice id="reconnect-link">
        <p>
          {`This link (valid 7 days) takes the org's admin through the CRM's consent for ${
            orgId === null ? 'the org' : `org ${orgId}`
          }; when it completes, installation ${installation.id} moves from org ${installation.externalAccountId} to it, keeping its settings, secrets (the URLs and secrets the CRM was given stay the same), log and state. Open it yourself if you are that admin, or send it to them.`}
        </p>
        <p>
          <a id="reconnect-url" href={url}>
            {url}
          </a>
        </p>
      </Notice>
    </Layout>,
  );
}
