// The operator's pages: accounts with their entitlements and quota, and their tokens: create one
// (shown once, on the page that answers the form, never again) and revoke one. Operator sessions only.
import { JOB_STATES } from '../../../bridge/job-queue.ts';
import type { Account, TokenRecord } from '../../../core/accounts/model.ts';
import { ENVIRONMENTS, QUOTA_PERIODS } from '../../../core/accounts/model.ts';
import { z } from 'zod';
import { layout } from './components.tsx';
import { type Chrome, escapeHtml, timeHtml } from './format.ts';

export function operatorNav(base: string): string {
  return `<nav><a href="${base}">Installations</a> <a href="${base}/accounts">Accounts</a> <a href="${base}/jobs">Jobs</a> <a href="${base}/snapshots">Snapshots</a></nav>`;
}

function fields(entitlement: Account['householdFields'] | Account['careerFields']): string {
  return entitlement === 'all' ? 'all' : `${entitlement.length}`;
}

export function accountsPage(
  chrome: Chrome,
  accounts: readonly Account[],
  creating: { values: AccountFormValues; errors: Readonly<Record<string, string>> } = {
    values: { rateLimit: '5', quotaLimit: '1000', quotaPeriod: 'month', householdFields: 'all', careerFields: 'all' },
    errors: {},
  },
): string {
  const rows = accounts
    .map(
      (account) =>
        `<tr><td><a href="${chrome.base}/accounts/${encodeURIComponent(account.name)}">${escapeHtml(account.name)}</a></td><td>${account.rateLimit}/s</td><td>${account.quotaLimit.toLocaleString('en-US')} a ${escapeHtml(account.quotaPeriod)}</td><td class="opt">${account.careerIntelligence ? 'yes' : 'no'}</td><td class="opt">${fields(account.householdFields)} / ${fields(account.careerFields)}</td></tr>`,
    )
    .join('\n');
  return layout(
    chrome,
    'Accounts',
    `${operatorNav(chrome.base)}
<div class="scroll"><table id="accounts"><thead><tr><th scope="col">Account</th><th scope="col">Rate</th><th scope="col">Quota</th><th scope="col" class="opt">Career Intelligence</th><th scope="col" class="opt">Household / career fields</th></tr></thead><tbody>
${rows}
</tbody></table></div>
<h2>New account</h2>
${accountForm(`${chrome.base}/accounts`, chrome.session?.csrf ?? '', creating.values, creating.errors, true)}`,
  );
}

export interface AccountView {
  readonly account: Account;
  readonly tokens: readonly { readonly token: TokenRecord; readonly used: number | null }[];
  /** A token just created: its secret, shown this once. */
  readonly created?: { readonly id: string; readonly secret: string };
  /** The edit form as posted and refused, or null for the account as saved. */
  readonly editing?: { values: AccountFormValues; errors: Readonly<Record<string, string>> };
  readonly saved?: boolean;
}

export function accountPage(chrome: Chrome, view: AccountView): string {
  const { account } = view;
  const base = `${chrome.base}/accounts/${encodeURIComponent(account.name)}`;
  const csrf = escapeHtml(chrome.session?.csrf ?? '');
  const rows = view.tokens
    .map(({ token, used }) => {
      const state = token.revokedAt === null ? 'live' : 'revoked';
      const revoke =
        token.revokedAt === null
          ? `<form method="post" action="${base}/tokens/${encodeURIComponent(token.id)}/revoke"><input type="hidden" name="csrf" value="${csrf}"><button type="submit" class="danger" aria-label="Revoke ${escapeHtml(token.id)}">Revoke</button></form>`
          : timeHtml(token.revokedAt);
      return `<tr data-token="${escapeHtml(token.id)}"><td><code>${escapeHtml(token.id)}</code></td><td>${escapeHtml(token.environment)}</td><td class="opt">${timeHtml(token.createdAt)}</td><td>${used === null ? '–' : used.toLocaleString('en-US')}</td><td class="token-state">${state}</td><td>${revoke}</td></tr>`;
    })
    .join('\n');
  const created =
    view.created === undefined
      ? ''
      : `<div class="notice" role="status" id="new-token"><p>Token <code>${escapeHtml(view.created.id)}</code> created. Copy it now: it is not shown again, and only its hash is kept.</p><pre><code id="new-token-secret">${escapeHtml(view.created.secret)}</code></pre></div>`;
  return layout(
    chrome,
    `Account ${account.name}`,
    `${operatorNav(chrome.base)}
${created}
<dl class="card"><dt>Rate limit</dt><dd>${account.rateLimit} requests a second per token</dd><dt>Quota</dt><dd>${account.quotaLimit.toLocaleString('en-US')} a ${escapeHtml(account.quotaPeriod)} per production token</dd><dt>Career Intelligence</dt><dd>${account.careerIntelligence ? 'yes' : 'no'}</dd><dt>Fields (household / career)</dt><dd>${fields(account.householdFields)} / ${fields(account.careerFields)}</dd></dl>
<h2>Tokens</h2>
<div class="scroll"><table id="tokens"><thead><tr><th scope="col">Token</th><th scope="col">Environment</th><th scope="col" class="opt">Created</th><th scope="col">Used this period</th><th scope="col">State</th><th scope="col"><span class="muted">Action</span></th></tr></thead><tbody>
${rows}
</tbody></table></div>
<form method="post" action="${base}/tokens" class="filters"><input type="hidden" name="csrf" value="${csrf}">
<p><label for="environment">New token for</label><br><select name="environment" id="environment">${ENVIRONMENTS.map((environment) => `<option value="${environment}">${environment}</option>`).join('')}</select></p>
<p><button type="submit">Create token</button></p></form>
<h2>Edit the account</h2>
${view.saved === true ? '<div class="notice" role="status"><p>Saved. Every server applies it within 250 ms.</p></div>' : ''}
${accountForm(base, chrome.session?.csrf ?? '', view.editing?.values ?? accountFormValues(account), view.editing?.errors ?? {}, false)}`,
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
  const csrf = escapeHtml(chrome.session?.csrf ?? '');
  const rows = dead
    .map(
      (job) =>
        `<tr data-job="${escapeHtml(job.id)}"><td><code>${escapeHtml(job.id)}</code></td><td class="opt"><a href="${chrome.base}/installations/${encodeURIComponent(job.installationId)}">${escapeHtml(job.installationId)}</a></td><td>${escapeHtml(job.kind)}</td><td class="opt">${job.attempts}</td><td>${escapeHtml((job.lastError ?? '').slice(0, 300))}</td><td><form method="post" action="${chrome.base}/jobs/${encodeURIComponent(job.id)}/retry"><input type="hidden" name="csrf" value="${csrf}"><button type="submit" aria-label="Retry ${escapeHtml(job.id)}">Retry</button></form></td></tr>`,
    )
    .join('\n');
  return layout(
    chrome,
    'Jobs',
    `${operatorNav(chrome.base)}
${retried === null ? '' : `<div class="notice" role="status"><p>${retried} dead job${retried === 1 ? '' : 's'} queued again.</p></div>`}
<p id="counts">${JOB_STATES.map((state) => `${state} <strong data-state="${state}">${(counts[state] ?? 0).toLocaleString('en-US')}</strong>`).join(' · ')}</p>
<h2>Dead jobs</h2>
${
  dead.length === 0
    ? '<p class="muted" id="no-dead">No dead jobs.</p>'
    : `<div class="scroll"><table id="dead"><thead><tr><th scope="col">Job</th><th scope="col" class="opt">Installation</th><th scope="col">Kind</th><th scope="col" class="opt">Attempts</th><th scope="col">Last error</th><th scope="col"><span class="muted">Action</span></th></tr></thead><tbody>
${rows}
</tbody></table></div>
<form method="post" action="${chrome.base}/jobs/retry-all"><input type="hidden" name="csrf" value="${csrf}"><p><button type="submit">Retry every dead job</button></p></form>`
}`,
  );
}

export interface SnapshotRow {
  readonly id: string;
  readonly version: string;
  readonly state: string;
  readonly households: number;
  readonly people: number;
  readonly loadedAt: string | null;
  readonly active: boolean;
  readonly failure: string | null;
}

export function snapshotsPage(chrome: Chrome, snapshots: readonly SnapshotRow[], notice: string | null): string {
  const csrf = escapeHtml(chrome.session?.csrf ?? '');
  const rows = snapshots
    .map(
      (snapshot) =>
        `<tr data-snapshot="${escapeHtml(snapshot.id)}"${snapshot.active ? ' class="active"' : ''}><td>${escapeHtml(snapshot.version)}${snapshot.active ? ' <strong>(active)</strong>' : ''}<br><code>${escapeHtml(snapshot.id)}</code></td><td>${escapeHtml(snapshot.state)}${snapshot.failure === null ? '' : `: ${escapeHtml(snapshot.failure)}`}</td><td class="opt">${snapshot.households.toLocaleString('en-US')}</td><td class="opt">${snapshot.people.toLocaleString('en-US')}</td><td class="opt">${snapshot.loadedAt === null ? '–' : timeHtml(snapshot.loadedAt)}</td></tr>`,
    )
    .join('\n');
  return layout(
    chrome,
    'Data snapshots',
    `${operatorNav(chrome.base)}
${notice === null ? '' : `<div class="notice" role="status"><p>${escapeHtml(notice)}</p></div>`}
${
  snapshots.length === 0
    ? '<p class="muted">No snapshot loaded: production answers 503 until one is (npx enrichbridge data load DIR).</p>'
    : `<div class="scroll"><table id="snapshots"><thead><tr><th scope="col">Version</th><th scope="col">State</th><th scope="col" class="opt">Households</th><th scope="col" class="opt">People</th><th scope="col" class="opt">Loaded</th></tr></thead><tbody>
${rows}
</tbody></table></div>`
}
<h2>Roll back</h2>
<p>Makes the snapshot active before this one active again; every server switches within a second or two. Production answers change with it.</p>
<form method="post" action="${chrome.base}/snapshots/rollback"><input type="hidden" name="csrf" value="${csrf}"><p><button type="submit" class="danger">Roll back to the previous snapshot</button></p></form>`,
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
    householdFields: entitlementText(account.householdFields),
    careerFields: entitlementText(account.careerFields),
  };
}

/** The create or edit form, with each error beside its field. */
export function accountForm(action: string, csrf: string, values: AccountFormValues, errors: Readonly<Record<string, string>>, creating: boolean): string {
  const field = (name: string, label: string, input: string) => {
    const error = errors[name];
    return `<p><label for="a-${name}">${label}</label><br>${input.replace('>', error === undefined ? '>' : ` aria-invalid="true" aria-describedby="a-${name}-error">`)}${error === undefined ? '' : `<span class="error" id="a-${name}-error">${escapeHtml(error)}</span>`}</p>`;
  };
  const value = (name: string) => escapeHtml(values[name] ?? '');
  return `<form method="post" action="${action}" id="${creating ? 'new-account' : 'edit-account'}">
<input type="hidden" name="csrf" value="${escapeHtml(csrf)}">
${errors.form === undefined ? '' : `<div class="notice bad" role="alert"><p>${escapeHtml(errors.form)}</p></div>`}
${creating ? field('name', 'Name', `<input type="text" name="name" id="a-name" value="${value('name')}">`) : ''}
${field('rateLimit', 'Rate limit (requests a second per token)', `<input type="text" inputmode="numeric" name="rateLimit" id="a-rateLimit" value="${value('rateLimit')}">`)}
${field('quotaLimit', 'Quota (production requests per period per token)', `<input type="text" inputmode="numeric" name="quotaLimit" id="a-quotaLimit" value="${value('quotaLimit')}">`)}
${field('quotaPeriod', 'Quota period', `<select name="quotaPeriod" id="a-quotaPeriod">${QUOTA_PERIODS.map((period) => `<option value="${period}"${values.quotaPeriod === period ? ' selected' : ''}>${period}</option>`).join('')}</select>`)}
<div class="check"><input type="checkbox" name="careerIntelligence" id="a-careerIntelligence"${values.careerIntelligence === 'on' ? ' checked' : ''}><label for="a-careerIntelligence">Career Intelligence (career data in answers)</label></div>
${field('householdFields', 'Household fields (all, or names separated by commas)', `<input type="text" name="householdFields" id="a-householdFields" value="${value('householdFields')}">`)}
${field('careerFields', 'Career fields (all, or names separated by commas)', `<input type="text" name="careerFields" id="a-careerFields" value="${value('careerFields')}">`)}
<p><button type="submit">${creating ? 'Create account' : 'Save account'}</button></p>
</form>`;
}
