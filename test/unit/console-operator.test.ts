// The operator's pages as components: the installations list names each installation's account, its
// last activity and its recent errors; the tokens list names the installation that enriches with each
// token, and revoking such a token asks first, naming it; "Roll back" is offered only when there is an
// earlier snapshot to go back to; a value carrying markup is text on every one of them.
import { describe, expect, it } from 'vitest';
import type { Account, TokenRecord } from '../../core/accounts/model.ts';
import { installationActivity, type InstallationActivity } from '../../server/http/console/installation-activity.ts';
import {
  type SnapshotRow,
  accountPage,
  accountsPage,
  installationsUsing,
  jobsPage,
  operatorHome,
  revokeTokenPage,
  rollbackTarget,
  snapshotsPage,
} from '../../server/http/console/operator.tsx';
import { anInstallation } from '../support/console-fixtures.ts';

const chrome = { base: '/console', session: { who: 'operator', csrf: 'c' } };
const account: Account = {
  id: 'acct_1',
  name: 'acme',
  careerIntelligence: false,
  politicalData: false,
  householdFields: 'all',
  careerFields: 'all',
  rateLimit: 5,
  quotaLimit: 1000,
  quotaPeriod: 'month',
  createdAt: '2026-11-01T00:00:00.000Z',
};
const portal = anInstallation({ target: { kind: 'local', accountId: 'acct_1', tokenId: 'tok_portal' } });
const remote = anInstallation({ id: 'inst_2', provider: 'salesforce', externalAccountId: '00D5g000004AbCdEAK' });
const token = (id: string, revokedAt: string | null = null): TokenRecord => ({
  id,
  accountId: 'acct_1',
  environment: 'sandbox',
  createdAt: '2026-11-01T00:00:00.000Z',
  revokedAt,
});

function snapshot(version: string, overrides: Partial<SnapshotRow> = {}): SnapshotRow {
  return {
    id: `snap_${version}`,
    version,
    state: 'ready',
    households: 10,
    people: 20,
    loadedAt: '2026-11-01T00:00:00.000Z',
    activatedAt: null,
    active: false,
    failure: null,
    ...overrides,
  };
}

const row = (tr: string, html: string) => new RegExp(`<tr ${tr}>(.*?)</tr>`).exec(html)?.[1] ?? '';

describe("the operator's installations", () => {
  const rows: InstallationActivity[] = [
    { installation: portal, account: { id: 'acct_1', name: 'acme' }, lastActivity: '2026-11-27T09:30:00.000Z', failed: 3, dead: 1 },
    { installation: remote, account: null, lastActivity: null, failed: 0, dead: 0 },
  ];

  it('show each installation with its account by name, its last activity and its errors', () => {
    const html = operatorHome(chrome, rows);
    const first = row('data-installation="inst_1"', html);
    expect(first).toContain('<a href="/console/installations/inst_1">HubSpot portal 62515</a>');
    expect(first).toContain('<td class="installation-account"><a href="/console/accounts/acme">acme</a> <code class="muted">acct_1</code></td>');
    expect(first).toContain('<td class="installation-activity"><time datetime="2026-11-27T09:30:00.000Z">2026-11-27 09:30:00 UTC</time></td>');
    expect(first).toContain(
      '<a href="/console/installations/inst_1/log?outcome=failed">3 records failed in 7 days</a>, <a href="/console/jobs">1 dead job</a>',
    );
    expect(first).toContain('class="installation-errors outcome-failed"');
    const second = row('data-installation="inst_2"', html);
    expect(second).toContain('<td class="installation-account">endpoint api.example.com</td>');
    expect(second).toContain('<span class="muted">none yet</span>');
    expect(second).toContain('<td class="installation-errors"><span class="muted">none</span></td>');
  });

  it('read the account, last activity and errors from what the stores answer (failed outcomes of 7 days, dead jobs)', async () => {
    const since: string[] = [];
    const activity = await installationActivity(
      {
        pipelineStore: {
          listInstallations: async () => [portal, remote, anInstallation({ id: 'inst_3', target: { kind: 'local', accountId: 'acct_gone', tokenId: 't' } })],
          searchLog: async (search) =>
            search.installationId === portal.id
              ? [
                  {
                    id: 'log_1',
                    installationId: portal.id,
                    object: 'contact',
                    recordId: '1',
                    at: '2026-11-27T09:30:00.000Z',
                    outcome: 'enriched',
                    fieldsWritten: [],
                    changes: {},
                    quotaConsumed: 1,
                    latencyMs: 1,
                    detail: null,
                  },
                ]
              : [],
          dailyOutcomes: async (installationId, sinceIso) => {
            since.push(sinceIso);
            return installationId === portal.id
              ? [
                  { day: '2026-11-26', outcome: 'failed:crm_error', count: 2, quotaConsumed: 0 },
                  { day: '2026-11-27', outcome: 'failed:timeout', count: 1, quotaConsumed: 0 },
                  { day: '2026-11-27', outcome: 'enriched', count: 9, quotaConsumed: 9 },
                  { day: '2026-11-27', outcome: 'skipped:unchanged', count: 4, quotaConsumed: 0 },
                ]
              : [];
          },
        },
        store: { listAccounts: async () => [account] },
        queue: {
          list: async () =>
            [portal.id, portal.id, remote.id].map((installationId, i) => ({
              id: `job_${i}`,
              installationId,
              kind: 'enrich',
              payload: null,
              dedupeKey: null,
              state: 'dead' as const,
              attempts: 3,
              maxAttempts: 3,
              runAt: '',
              leaseOwner: null,
              leaseExpiresAt: null,
              lastError: 'x',
              createdAt: '',
            })),
        },
      },
      new Date('2026-11-27T12:00:00.000Z'),
    );
    expect(since).toEqual(['2026-11-20T12:00:00.000Z', '2026-11-20T12:00:00.000Z', '2026-11-20T12:00:00.000Z']);
    expect(activity.map(({ installation, ...rest }) => ({ id: installation.id, ...rest }))).toEqual([
      { id: 'inst_1', account: { id: 'acct_1', name: 'acme' }, lastActivity: '2026-11-27T09:30:00.000Z', failed: 3, dead: 2 },
      { id: 'inst_2', account: null, lastActivity: null, failed: 0, dead: 1 },
      { id: 'inst_3', account: { id: 'acct_gone', name: null }, lastActivity: null, failed: 0, dead: 0 },
    ]);
  });
});

describe("an account's tokens", () => {
  const view = {
    account,
    tokens: [
      { token: token('tok_portal'), used: null, usedBy: installationsUsing([portal, remote], 'tok_portal') },
      { token: token('tok_spare'), used: 7, usedBy: installationsUsing([portal, remote], 'tok_spare') },
      { token: token('tok_old', '2026-11-20T00:00:00.000Z'), used: null },
    ],
  };

  it('name the installation that enriches with each token', () => {
    const html = accountPage(chrome, view);
    expect(html).toContain('<th scope="col">Installation</th>');
    expect(row('data-token="tok_portal"', html)).toContain(
      '<td class="token-installation"><a href="/console/installations/inst_1">HubSpot portal 62515</a></td>',
    );
    expect(row('data-token="tok_spare"', html)).toContain('<td class="token-installation"><span class="muted">none</span></td>');
  });

  it('ask before revoking a token an installation uses, naming the installation, and revoke one no installation uses at once', () => {
    const html = accountPage(chrome, view);
    // The in-use token's button says more comes (…), and names what it cuts off to a screen reader.
    expect(row('data-token="tok_portal"', html)).toContain(
      '<button type="submit" class="danger" aria-label="Revoke tok_portal, used by HubSpot portal 62515">Revoke…</button>',
    );
    expect(row('data-token="tok_portal"', html)).not.toContain('name="confirm"');
    expect(row('data-token="tok_spare"', html)).toContain('<button type="submit" class="danger" aria-label="Revoke tok_spare">Revoke</button>');

    const ask = revokeTokenPage(chrome, account, token('tok_portal'), [portal]);
    expect(ask).toContain('<h1>Revoke token tok_portal?</h1>');
    expect(ask).toContain(
      '<div class="notice bad" role="alert" id="token-in-use"><p>Installation <a href="/console/installations/inst_1">HubSpot portal 62515</a> enriches with this token.',
    );
    expect(ask).toContain('<form method="post" action="/console/accounts/acme/tokens/tok_portal/revoke" class="actions">');
    expect(ask).toContain('<input type="hidden" name="confirm" value="yes"/>');
    expect(ask).toContain('<button type="submit" class="danger">Revoke it and cut off HubSpot portal 62515</button>');
    expect(ask).toContain('<a href="/console/accounts/acme">Keep the token</a>');
  });

  it('are owned by an installation only through its local target', () => {
    expect(installationsUsing([portal, remote], 'tok_portal')).toEqual([portal]);
    expect(installationsUsing([portal, remote], 'tok_other')).toEqual([]);
  });
});

describe('the snapshots page', () => {
  it('does not offer Roll back when there is no earlier snapshot to roll back to', () => {
    const cases: SnapshotRow[][] = [
      [],
      [snapshot('week-1', { active: true, activatedAt: '2026-11-01T00:00:00.000Z' })],
      // The earlier one was rolled back from, failed, or never became active.
      [
        snapshot('week-3', { active: true, activatedAt: '2026-11-15T00:00:00.000Z' }),
        snapshot('week-2', { state: 'rolled_back', activatedAt: '2026-11-08T00:00:00.000Z' }),
        snapshot('week-1', { state: 'failed', failure: 'bad file' }),
        snapshot('week-0', { activatedAt: null }),
      ],
    ];
    for (const snapshots of cases) {
      const html = snapshotsPage(chrome, snapshots, null);
      expect(rollbackTarget(snapshots)).toBeUndefined();
      expect(html).not.toContain('/snapshots/rollback');
      expect(html).not.toMatch(/<button[^>]*>Roll back/);
      expect(html).toContain('<p class="muted" id="no-rollback">There is no earlier snapshot to roll back to.</p>');
    }
  });

  it('offers Roll back to the snapshot active before the current one, by name', () => {
    const snapshots = [
      snapshot('week-3', { active: true, activatedAt: '2026-11-15T00:00:00.000Z' }),
      snapshot('week-2', { activatedAt: '2026-11-08T00:00:00.000Z' }),
      snapshot('week-1', { activatedAt: '2026-11-01T00:00:00.000Z' }),
    ];
    expect(rollbackTarget(snapshots)?.version).toBe('week-2');
    const html = snapshotsPage(chrome, snapshots, null);
    expect(html).toContain('<form method="post" action="/console/snapshots/rollback">');
    expect(html).toContain('<button type="submit" class="danger">Roll back to week-2</button>');
    expect(html).toContain('<tr data-snapshot="snap_week-3" class="active">');
  });
});

describe("the operator's pages", () => {
  it('show a value carrying markup as text', () => {
    const MARKUP = '<img src=x onerror=alert(1)>';
    const marked = { ...account, name: MARKUP };
    const pages = [
      accountsPage(chrome, [marked], { values: { name: MARKUP }, errors: { name: MARKUP, form: MARKUP } }),
      accountPage(chrome, {
        account: marked,
        tokens: [{ token: token(MARKUP), used: 1, usedBy: [anInstallation({ externalAccountId: MARKUP })] }],
        created: { id: MARKUP, secret: MARKUP },
      }),
      revokeTokenPage(chrome, marked, token(MARKUP), [anInstallation({ externalAccountId: MARKUP })]),
      jobsPage(chrome, {}, [{ id: MARKUP, installationId: MARKUP, kind: MARKUP, attempts: 1, lastError: MARKUP, createdAt: '' }], 1),
      snapshotsPage(chrome, [snapshot(MARKUP, { failure: MARKUP })], MARKUP),
      operatorHome(chrome, [
        { installation: anInstallation({ externalAccountId: MARKUP }), account: { id: MARKUP, name: MARKUP }, lastActivity: MARKUP, failed: 1, dead: 1 },
      ]),
    ];
    for (const html of pages) {
      expect(html).not.toContain('<img');
      expect(html.replace(/"[^"]*"/g, '""')).not.toMatch(/<[^>]*onerror/);
    }
    expect(pages[1]).toContain('<code id="new-token-secret">&lt;img src=x onerror=alert(1)></code>');
  });
});

describe("an account's political data", () => {
  const checkbox = (html: string) => /<input type="checkbox" name="politicalData" id="a-politicalData"( checked)?\/>/.exec(html);

  it('new accounts are not entitled to political fields by default: the new-account form leaves the box unticked', () => {
    const box = checkbox(accountsPage(chrome, []));
    expect(box?.[0]).toBeDefined();
    expect(box?.[1]).toBeUndefined();
  });

  it("an account's page says whether it is entitled, and its form ticks the box as saved", () => {
    const entitled = accountPage(chrome, { account: { ...account, politicalData: true }, tokens: [] });
    expect(entitled).toContain('<dt>Political data</dt><dd>yes</dd>');
    expect(checkbox(entitled)?.[1]).toBe(' checked');
    const not = accountPage(chrome, { account, tokens: [] });
    expect(not).toContain('<dt>Political data</dt><dd>no</dd>');
    expect(checkbox(not)?.[1]).toBeUndefined();
  });
});
