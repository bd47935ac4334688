// The operator's pages: accounts with their entitlements and quota, and their tokens: create one
// (shown once, on the page that answers the form, never again) and revoke one (asked first when an
// installation enriches with it); the queue's dead jobs; the data snapshots. Operator sessions only.
import type { VNode } from 'preact';
import { z } from 'zod';
import { JOB_STATES } from '../../../bridge/job-queue.ts';
import type { Installation } from '../../../bridge/model.ts';
import type { Account, TokenRecord } from '../../../core/accounts/model.ts';
import { ENVIRONMENTS, QUOTA_PERIODS } from '../../../core/accounts/model.ts';
import { plural } from '../../plural.ts';
import { CsrfField, DataTable, Field, Layout, Notice, Time, renderPage } from './components.tsx';
import type { FieldErrors } from './form-errors.ts';
import { type Chrome, accountName, statusText } from './format.ts';
import { ERROR_WINDOW_DAYS, type InstallationActivity } from './installation-activity.ts';

const number = (n: number) => n.toLocaleString('en-US');

export function OperatorNav({ base }: { readonly base: string }): VNode {
  return (
    <nav>
      <a href={base}>Installations</a> <a href={`${base}/accounts`}>Accounts</a> <a href={`${base}/jobs`}>Jobs</a> <a href={`${base}/snapshots`}>Snapshots</a>{' '}
      <a href={`${base}/suppression`}>Suppression</a>
    </nav>
  );
}

/** The account an installation enriches against: its name with its id, or the endpoint's host. */
function TargetAccount({ base, row }: { readonly base: string; readonly row: InstallationActivity }): VNode {
  const { installation, account } = row;
  if (installation.target.kind === 'remote') return <>{`endpoint ${new URL(installation.target.url).host}`}</>;
  if (account === null) return <></>;
  return account.name === null ? (
    <>
      <code>{account.id}</code> <span class="muted">(no such account)</span>
    </>
  ) : (
    <>
      <a href={`${base}/accounts/${encodeURIComponent(account.name)}`}>{account.name}</a> <code class="muted">{account.id}</code>
    </>
  );
}

/** What went wrong lately: records that failed over the last days (to the log, filtered) and dead jobs (to the jobs page); else none. */
function Errors({ base, row }: { readonly base: string; readonly row: InstallationActivity }): VNode {
  if (row.failed === 0 && row.dead === 0) return <span class="muted">none</span>;
  const log = `${base}/installations/${encodeURIComponent(row.installation.id)}/log?outcome=failed`;
  return (
    <>
      {row.failed === 0 ? null : <a href={log}>{`${plural(row.failed, 'record')} failed in ${ERROR_WINDOW_DAYS} days`}</a>}
      {row.failed === 0 || row.dead === 0 ? null : ', '}
      {row.dead === 0 ? null : <a href={`${base}/jobs`}>{plural(row.dead, 'dead job')}</a>}
    </>
  );
}

/** The operator's home: every installation, its account, when it last enriched anything and what failed lately. */
export function operatorHome(chrome: Chrome, rows: readonly InstallationActivity[]): string {
  return renderPage(
    <Layout chrome={chrome} title="Installations">
      <OperatorNav base={chrome.base} />
      {rows.length === 0 ? (
        <p class="muted">No installations yet.</p>
      ) : (
        <DataTable
          id="installations"
          rows={rows}
          rowAttributes={(row) => ({ 'data-installation': row.installation.id })}
          columns={[
            {
              header: 'Installation',
              cell: ({ installation }) => <a href={`${chrome.base}/installations/${encodeURIComponent(installation.id)}`}>{accountName(installation)}</a>,
            },
            { header: 'Environment', cell: ({ installation }) => installation.environment },
            {
              header: 'Status',
              cell: ({ installation }) => statusText(installation).text,
              cellClass: ({ installation }) => `status-${statusText(installation).kind}`,
            },
            { header: 'Account', cell: (row) => <TargetAccount base={chrome.base} row={row} />, cellClass: () => 'installation-account' },
            {
              header: 'Last activity',
              cell: (row) => (row.lastActivity === null ? <span class="muted">none yet</span> : <Time iso={row.lastActivity} />),
              cellClass: () => 'installation-activity',
            },
            {
              header: 'Errors',
              cell: (row) => <Errors base={chrome.base} row={row} />,
              cellClass: (row) => (row.failed > 0 || row.dead > 0 ? 'installation-errors outcome-failed' : 'installation-errors'),
            },
          ]}
        />
      )}
    </Layout>,
  );
}

function fields(entitlement: Account['householdFields'] | Account['careerFields']): string {
  return entitlement === 'all' ? 'all' : `${entitlement.length}`;
}

const NEW_ACCOUNT: AccountFormValues = { rateLimit: '5', quotaLimit: '1000', quotaPeriod: 'month', householdFields: 'all', careerFields: 'all' };

export function accountsPage(
  chrome: Chrome,
  accounts: readonly Account[],
  creating: { values: AccountFormValues; errors: FieldErrors } = { values: NEW_ACCOUNT, errors: {} },
): string {
  return renderPage(
    <Layout chrome={chrome} title="Accounts">
      <OperatorNav base={chrome.base} />
      <DataTable
        id="accounts"
        rows={accounts}
        columns={[
          { header: 'Account', cell: (account) => <a href={`${chrome.base}/accounts/${encodeURIComponent(account.name)}`}>{account.name}</a> },
          { header: 'Rate', cell: (account) => `${account.rateLimit}/s` },
          { header: 'Quota', cell: (account) => `${number(account.quotaLimit)} a ${account.quotaPeriod}` },
          { header: 'Career Intelligence', class: 'opt', cell: (account) => (account.careerIntelligence ? 'yes' : 'no') },
          { header: 'Household / career fields', class: 'opt', cell: (account) => `${fields(account.householdFields)} / ${fields(account.careerFields)}` },
        ]}
      />
      <h2>New account</h2>
      <AccountForm action={`${chrome.base}/accounts`} csrf={chrome.session?.csrf ?? ''} values={creating.values} errors={creating.errors} creating />
    </Layout>,
  );
}

/** One of an account's tokens, what it has spent this period, and the installations that enrich with it. */
export interface TokenView {
  readonly token: TokenRecord;
  readonly used: number | null;
  /** The installations whose target is this token: revoking it cuts them off. */
  readonly usedBy?: readonly Installation[];
}

export interface AccountView {
  readonly account: Account;
  readonly tokens: readonly TokenView[];
  /** A token just created: its secret, shown this once. */
  readonly created?: { readonly id: string; readonly secret: string };
  /** The edit form as posted and refused, or null for the account as saved. */
  readonly editing?: { values: AccountFormValues; errors: FieldErrors };
  readonly saved?: boolean;
}

/** The installations that enrich with a token: their target names it. */
export function installationsUsing(installations: readonly Installation[], tokenId: string): Installation[] {
  return installations.filter((installation) => installation.target.kind === 'local' && installation.target.tokenId === tokenId);
}

/** Installations by name, each a link to its overview. */
function InstallationLinks({ base, installations }: { readonly base: string; readonly installations: readonly Installation[] }): VNode {
  return (
    <>
      {installations.map((installation, i) => (
        <>
          {i === 0 ? null : ', '}
          <a href={`${base}/installations/${encodeURIComponent(installation.id)}`}>{accountName(installation)}</a>
        </>
      ))}
    </>
  );
}

const names = (installations: readonly Installation[]) => installations.map(accountName).join(', ');

export function accountPage(chrome: Chrome, view: AccountView): string {
  const { account } = view;
  const base = `${chrome.base}/accounts/${encodeURIComponent(account.name)}`;
  const csrf = chrome.session?.csrf ?? '';
  return renderPage(
    <Layout chrome={chrome} title={`Account ${account.name}`}>
      <OperatorNav base={chrome.base} />
      {view.created === undefined ? null : (
        <Notice id="new-token">
          <p>
            Token <code>{view.created.id}</code> created. Copy it now: it is not shown again, and only its hash is kept.
          </p>
          <pre>
            <code id="new-token-secret">{view.created.secret}</code>
          </pre>
        </Notice>
      )}
      <dl class="card">
        <dt>Rate limit</dt>
        <dd>{`${account.rateLimit} requests a second per token`}</dd>
        <dt>Quota</dt>
        <dd>{`${number(account.quotaLimit)} a ${account.quotaPeriod} per production token`}</dd>
        <dt>Career Intelligence</dt>
        <dd>{account.careerIntelligence ? 'yes' : 'no'}</dd>
        <dt>Political data</dt>
        <dd>{account.politicalData ? 'yes' : 'no'}</dd>
        <dt>Fields (household / career)</dt>
        <dd>{`${fields(account.householdFields)} / ${fields(account.careerFields)}`}</dd>
      </dl>
      <h2>Tokens</h2>
      <DataTable
        id="tokens"
        rows={view.tokens}
        rowAttributes={({ token }) => ({ 'data-token': token.id })}
        columns={[
          { header: 'Token', cell: ({ token }) => <code>{token.id}</code> },
          { header: 'Environment', cell: ({ token }) => token.environment },
          { header: 'Created', class: 'opt', cell: ({ token }) => <Time iso={token.createdAt} /> },
          { header: 'Used this period', cell: ({ used }) => (used === null ? '–' : number(used)) },
          {
            header: 'Installation',
            cell: ({ usedBy = [] }) =>
              usedBy.length === 0 ? <span class="muted">none</span> : <InstallationLinks base={chrome.base} installations={usedBy} />,
            cellClass: () => 'token-installation',
          },
          { header: 'State', cell: ({ token }) => (token.revokedAt === null ? 'live' : 'revoked'), cellClass: () => 'token-state' },
          {
            header: 'Action',
            cell: ({ token, usedBy = [] }) =>
              token.revokedAt !== null ? (
                <Time iso={token.revokedAt} />
              ) : (
                <form method="post" action={`${base}/tokens/${encodeURIComponent(token.id)}/revoke`}>
                  <CsrfField token={csrf} />
                  {usedBy.length === 0 ? (
                    <button type="submit" class="danger" aria-label={`Revoke ${token.id}`}>
                      Revoke
                    </button>
                  ) : (
                    // An installation enriches with it: the answer asks first, naming the installation.
                    <button type="submit" class="danger" aria-label={`Revoke ${token.id}, used by ${names(usedBy)}`}>
                      Revoke…
                    </button>
                  )}
                </form>
              ),
          },
        ]}
      />
      <form method="post" action={`${base}/tokens`} class="filters">
        <CsrfField token={csrf} />
        <p>
          <label for="environment">New token for</label>
          <br />
          <select name="environment" id="environment">
            {ENVIRONMENTS.map((environment) => (
              <option value={environment}>{environment}</option>
            ))}
          </select>
        </p>
        <p>
          <button type="submit">Create token</button>
        </p>
      </form>
      <h2>Edit the account</h2>
      {view.saved === true ? (
        <Notice>
          <p>Saved. Every server applies it within 250 ms.</p>
        </Notice>
      ) : null}
      <AccountForm action={base} csrf={csrf} values={view.editing?.values ?? accountFormValues(account)} errors={view.editing?.errors ?? {}} creating={false} />
    </Layout>,
  );
}

/**
 * Before a token an installation enriches with is revoked: which installations it cuts off, and the
 * revoke confirmed (`confirm=yes`) or the token kept.
 */
export function revokeTokenPage(chrome: Chrome, account: Account, token: TokenRecord, usedBy: readonly Installation[]): string {
  const base = `${chrome.base}/accounts/${encodeURIComponent(account.name)}`;
  const them = names(usedBy);
  return renderPage(
    <Layout chrome={chrome} title={`Revoke token ${token.id}?`}>
      <OperatorNav base={chrome.base} />
      <Notice tone="bad" id="token-in-use">
        <p>
          {usedBy.length === 1 ? 'Installation ' : 'Installations '}
          <InstallationLinks base={chrome.base} installations={usedBy} />
          {` ${usedBy.length === 1 ? 'enriches' : 'enrich'} with this token. Once it is revoked, every enrichment ${usedBy.length === 1 ? 'it asks for' : 'they ask for'} is refused until ${usedBy.length === 1 ? 'it is' : 'they are'} connected again with another token.`}
        </p>
      </Notice>
      <form method="post" action={`${base}/tokens/${encodeURIComponent(token.id)}/revoke`} class="actions">
        <CsrfField token={chrome.session?.csrf ?? ''} />
        <input type="hidden" name="confirm" value="yes" />
        <button type="submit" class="danger">{`Revoke it and cut off ${them}`}</button>
        <a href={base}>Keep the token</a>
      </form>
    </Layout>,
  );
}

export interface DeadJob {
  readonly id: string;
  readonly installationId: string;
  readonly kind: string;
  readonly attempts: number;
  readonly lastError: string | null;
  readonly createdAt: string;
}

export function jobsPage(chrome: Chrome, counts: Readonly<Record<string, number>>, dead: readonly DeadJob[], retried: number | null): string {
  const csrf = chrome.session?.csrf ?? '';
  return renderPage(
    <Layout chrome={chrome} title="Jobs">
      <OperatorNav base={chrome.base} />
      {retried === null ? null : (
        <Notice>
          <p>{`${plural(retried, 'dead job')} queued again.`}</p>
        </Notice>
      )}
      <p id="counts">
        {JOB_STATES.map((state, i) => (
          <>
            {i === 0 ? null : ' · '}
            {`${state} `}
            <strong data-state={state}>{number(counts[state] ?? 0)}</strong>
          </>
        ))}
      </p>
      <h2>Dead jobs</h2>
      {dead.length === 0 ? (
        <p class="muted" id="no-dead">
          No dead jobs.
        </p>
      ) : (
        <>
          <DataTable
            id="dead"
            rows={dead}
            rowAttributes={(job) => ({ 'data-job': job.id })}
            columns={[
              { header: 'Job', cell: (job) => <code>{job.id}</code> },
              {
                header: 'Installation',
                class: 'opt',
                cell: (job) => <a href={`${chrome.base}/installations/${encodeURIComponent(job.installationId)}`}>{job.installationId}</a>,
              },
              { header: 'Kind', cell: (job) => job.kind },
              { header: 'Attempts', class: 'opt', cell: (job) => String(job.attempts) },
              { header: 'Last error', cell: (job) => (job.lastError ?? '').slice(0, 300) },
              {
                header: 'Action',
                cell: (job) => (
                  <form method="post" action={`${chrome.base}/jobs/${encodeURIComponent(job.id)}/retry`}>
                    <CsrfField token={csrf} />
                    <button type="submit" aria-label={`Retry ${job.id}`}>
                      Retry
                    </button>
                  </form>
                ),
              },
            ]}
          />
          <form method="post" action={`${chrome.base}/jobs/retry-all`}>
            <CsrfField token={csrf} />
            <p>
              <button type="submit">Retry every dead job</button>
            </p>
          </form>
        </>
      )}
    </Layout>,
  );
}

export interface SnapshotRow {
  readonly id: string;
  readonly version: string;
  readonly state: string;
  readonly households: number;
  readonly people: number;
  readonly loadedAt: string | null;
  /** When it last became the active one; null if it never did. */
  readonly activatedAt: string | null;
  readonly active: boolean;
  readonly failure: string | null;
}

/**
 * The snapshot a rollback makes active again, by the rule the store's rollbackSnapshot follows: the
 * ready, inactive snapshot activated last before the active one was; undefined when there is none.
 */
export function rollbackTarget(snapshots: readonly SnapshotRow[]): SnapshotRow | undefined {
  const current = snapshots.find((snapshot) => snapshot.active);
  const since = current?.activatedAt ?? null;
  return snapshots
    .filter((s) => s.state === 'ready' && !s.active && s.activatedAt !== null && (since === null || s.activatedAt < since))
    .reduce<SnapshotRow | undefined>((latest, s) => (latest === undefined || (latest.activatedAt ?? '') < (s.activatedAt ?? '') ? s : latest), undefined);
}

export function snapshotsPage(chrome: Chrome, snapshots: readonly SnapshotRow[], notice: string | null): string {
  const target = rollbackTarget(snapshots);
  return renderPage(
    <Layout chrome={chrome} title="Data snapshots">
      <OperatorNav base={chrome.base} />
      {notice === null ? null : (
        <Notice>
          <p>{notice}</p>
        </Notice>
      )}
      {snapshots.length === 0 ? (
        <p class="muted">No snapshot loaded: production answers 503 until one is (npx enrichbridge data load DIR).</p>
      ) : (
        <DataTable
          id="snapshots"
          rows={snapshots}
          rowAttributes={(snapshot) => (snapshot.active ? { 'data-snapshot': snapshot.id, class: 'active' } : { 'data-snapshot': snapshot.id })}
          columns={[
            {
              header: 'Version',
              cell: (snapshot) => (
                <>
                  {snapshot.version}
                  {snapshot.active ? (
                    <>
                      {' '}
                      <strong>(active)</strong>
                    </>
                  ) : null}
                  <br />
                  <code>{snapshot.id}</code>
                </>
              ),
            },
            { header: 'State', cell: (snapshot) => `${snapshot.state}${snapshot.failure === null ? '' : `: ${snapshot.failure}`}` },
            { header: 'Households', class: 'opt', cell: (snapshot) => number(snapshot.households) },
            { header: 'People', class: 'opt', cell: (snapshot) => number(snapshot.people) },
            { header: 'Loaded', class: 'opt', cell: (snapshot) => (snapshot.loadedAt === null ? '–' : <Time iso={snapshot.loadedAt} />) },
          ]}
        />
      )}
      <h2>Roll back</h2>
      {target === undefined ? (
        <p class="muted" id="no-rollback">
          There is no earlier snapshot to roll back to.
        </p>
      ) : (
        <>
          <p>
            {`Makes ${target.version} (the snapshot active before this one) active again; every server switches within a second or two. Production answers change with it.`}
          </p>
          <form method="post" action={`${chrome.base}/snapshots/rollback`}>
            <CsrfField token={chrome.session?.csrf ?? ''} />
            <p>
              <button type="submit" class="danger">{`Roll back to ${target.version}`}</button>
            </p>
          </form>
        </>
      )}
    </Layout>,
  );
}

/** The account form as posted: strings, read with zod; core/accounts/admin.ts checks the rest. */
export const AccountFormSchema = z.object({
  csrf: z.string(),
  name: z.string().trim().max(64, 'at most 64 characters').optional(),
  rateLimit: z
    .string()
    .trim()
    .regex(/^\d{1,6}$/, 'a whole number of requests a second, 1 or more')
    .transform(Number)
    .refine((n) => n >= 1, '1 or more'),
  quotaLimit: z
    .string()
    .trim()
    .regex(/^\d{1,12}$/, 'a whole number of requests, 0 or more')
    .transform(Number),
  quotaPeriod: z.enum(QUOTA_PERIODS, { error: 'choose a period' }),
  careerIntelligence: z.literal('on').optional(),
  politicalData: z.literal('on').optional(),
  householdFields: z.string().trim().max(4000).default('all'),
  careerFields: z.string().trim().max(4000).default('all'),
});

export type AccountFormValues = Readonly<Record<string, string>>;

function entitlementText(entitlement: Account['householdFields'] | Account['careerFields']): string {
  return entitlement === 'all' ? 'all' : entitlement.join(',');
}

export function accountFormValues(account: Account): AccountFormValues {
  return {
    name: account.name,
    rateLimit: String(account.rateLimit),
    quotaLimit: String(account.quotaLimit),
    quotaPeriod: account.quotaPeriod,
    careerIntelligence: account.careerIntelligence ? 'on' : '',
    politicalData: account.politicalData ? 'on' : '',
    householdFields: entitlementText(account.householdFields),
    careerFields: entitlementText(account.careerFields),
  };
}

/** The create or edit form, with each error beside its field. */
function AccountForm(props: {
  readonly action: string;
  readonly csrf: string;
  readonly values: AccountFormValues;
  readonly errors: FieldErrors;
  readonly creating: boolean;
}): VNode {
  const { values, errors } = props;
  const text = (name: string, label: string, numeric = false) => (
    <Field
      name={name}
      id={`a-${name}`}
      label={label}
      error={errors[name]}
      input={(field) => <input type="text" {...(numeric ? { inputmode: 'numeric' } : {})} {...field} value={values[name] ?? ''} />}
    />
  );
  return (
    <form method="post" action={props.action} id={props.creating ? 'new-account' : 'edit-account'}>
      <CsrfField token={props.csrf} />
      {errors.form === undefined ? null : (
        <Notice tone="bad">
          <p>{errors.form}</p>
        </Notice>
      )}
      {props.creating ? text('name', 'Name') : null}
      {text('rateLimit', 'Rate limit (requests a second per token)', true)}
      {text('quotaLimit', 'Quota (production requests per period per token)', true)}
      <Field
        name="quotaPeriod"
        id="a-quotaPeriod"
        label="Quota period"
        error={errors.quotaPeriod}
        input={(field) => (
          <select {...field}>
            {QUOTA_PERIODS.map((period) => (
              <option value={period} selected={values.quotaPeriod === period}>
                {period}
              </option>
            ))}
          </select>
        )}
      />
      <div class="check">
        <input type="checkbox" name="careerIntelligence" id="a-careerIntelligence" checked={values.careerIntelligence === 'on'} />
        <label for="a-careerIntelligence">Career Intelligence (career data in answers)</label>
      </div>
      <div class="check">
        <input type="checkbox" name="politicalData" id="a-politicalData" checked={values.politicalData === 'on'} />
        <label for="a-politicalData">Political data (political donor, top political donor and party in answers)</label>
      </div>
      {text('householdFields', 'Household fields (all, or names separated by commas)')}
      {text('careerFields', 'Career fields (all, or names separated by commas)')}
      <p>
        <button type="submit">{props.creating ? 'Create account' : 'Save account'}</button>
      </p>
    </form>
  );
}
