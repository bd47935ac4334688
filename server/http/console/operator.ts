// The operator's pages: accounts with their entitlements and quota, and their tokens: create one
// (shown once, on the page that answers the form, never again) and revoke one. Operator sessions only.
import type { Account, TokenRecord } from '../../../core/accounts/model.ts';
import { ENVIRONMENTS } from '../../../core/accounts/model.ts';
import { type Chrome, escapeHtml, layout, timeHtml } from './pages.ts';

export function operatorNav(base: string): string {
  return `<nav><a href="${base}">Installations</a> <a href="${base}/accounts">Accounts</a></nav>`;
}

function fields(entitlement: Account['householdFields'] | Account['careerFields']): string {
  return entitlement === 'all' ? 'all' : `${entitlement.length}`;
}

export function accountsPage(chrome: Chrome, accounts: readonly Account[]): string {
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
</tbody></table></div>`,
  );
}

export interface AccountView {
  readonly account: Account;
  readonly tokens: readonly { readonly token: TokenRecord; readonly used: number | null }[];
  /** A token just created: its secret, shown this once. */
  readonly created?: { readonly id: string; readonly secret: string };
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
<p><button type="submit">Create token</button></p></form>`,
  );
}
