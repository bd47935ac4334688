// The console names a CRM account as its CRM does, everywhere ("HubSpot portal 22334455", "Salesforce
// org 00D…", one helper), and its header says whose console it is and who signed in: the person when the
// CRM signed them in (kept in the sealed session cookie, no database column), "one-time link" otherwise;
// never an installation id.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { h } from 'preact';
import { render } from 'preact-render-to-string';
import { anInstallation } from '../support/console-fixtures.ts';
import { SecretBox } from '../../core/secrets/secret-box.ts';
import { Layout } from '../../server/http/console/components.tsx';
import { accountName, signedInText } from '../../server/http/console/format.ts';
import { logPage } from '../../server/http/console/log.tsx';
import { playgroundPage } from '../../server/http/console/playground.tsx';
import { disconnectPage, settingsPage } from '../../server/http/console/settings.tsx';
import { type OverviewData, overviewPage } from '../../server/http/console/overview.tsx';
import { operatorHome } from '../../server/http/console/operator.tsx';
import { sessionCookie, sessionCookieOf, sessionIdOf } from '../../server/http/console/session.ts';

const portal = anInstallation({ provider: 'hubspot', externalAccountId: '22334455' });
const org = anInstallation({ id: 'inst_2', provider: 'salesforce', externalAccountId: '00D5g000004AbCdEAK' });
const chrome = { base: '/console', session: { who: 'HubSpot portal 22334455 · jane@example.org', csrf: 'c' } };
const h1 = (html: string) => /<h1>([^<]*)<\/h1>/.exec(html)?.[1];

describe('the account name', () => {
  it("names a HubSpot portal and a Salesforce org as their CRMs do, another CRM's account as an account", () => {
    expect(accountName(portal)).toBe('HubSpot portal 22334455');
    expect(accountName(org)).toBe('Salesforce org 00D5g000004AbCdEAK');
    expect(accountName({ provider: 'pipedrive', externalAccountId: '7' })).toBe('pipedrive account 7');
  });

  it("is what every installation page's heading and the operator's list say, never `hubspot 22334455`", () => {
    const data: OverviewData = {
      installation: portal,
      target: 'account acme',
      quota: null,
      forecast: { sandbox: true, used: 0, limit: null, period: 'month', resetsAt: null, dailyAverage: 0, runsOutOn: null, budget: null },
      budget: null,
      days: [],
      outcomes: [],
      failures: [],
      recovered: 0,
      kept: [],
    };
    expect(h1(overviewPage(chrome, data))).toBe('HubSpot portal 22334455');
    expect(h1(logPage(chrome, { installation: portal, values: {}, errors: {}, entries: [], recordUrl: () => null }))).toBe(
      'Enrichment log: HubSpot portal 22334455',
    );
    expect(h1(settingsPage(chrome, { installation: org, module: undefined, values: org.settings, errors: {}, saved: false }))).toBe(
      'Settings: Salesforce org 00D5g000004AbCdEAK',
    );
    expect(h1(disconnectPage(chrome, org))).toBe('Disconnect Salesforce org 00D5g000004AbCdEAK?');
    expect(h1(playgroundPage(chrome, portal, {}, null, null))).toBe('Sandbox playground: HubSpot portal 22334455');
    const home = operatorHome(
      chrome,
      [portal, org].map((installation) => ({ installation, account: null, lastActivity: null, failed: 0, dead: 0 })),
    );
    expect(home).toContain('>HubSpot portal 22334455</a>');
    expect(home).toContain('>Salesforce org 00D5g000004AbCdEAK</a>');
    for (const html of [overviewPage(chrome, data), home]) expect(html).not.toMatch(/hubspot 22334455|salesforce 00D/);
  });
});

describe('who the header says is signed in', () => {
  it('names the portal or org and the person the CRM signed in, or says a one-time link let them in', () => {
    expect(signedInText({ kind: 'installation', account: portal }, 'jane@example.org')).toBe('HubSpot portal 22334455 · jane@example.org');
    expect(signedInText({ kind: 'installation', account: portal }, null)).toBe('HubSpot portal 22334455 · one-time link');
    expect(signedInText({ kind: 'installation', account: org }, 'user 0055g00000AbCdEAAV')).toBe('Salesforce org 00D5g000004AbCdEAK · user 0055g00000AbCdEAAV');
    expect(signedInText({ kind: 'operator' }, null)).toBe('operator');
  });

  it('shows it in the header, with no installation id', () => {
    const html = render(h(Layout, { chrome, title: 't' }));
    expect(html).toContain('<span class="who" id="who"><span class="visually-hidden">Signed in: </span>HubSpot portal 22334455 · jane@example.org</span>');
    expect(html).not.toContain('inst_');
  });

  it('keeps the person in the sealed session cookie, and reads a cookie without one as a one-time link', () => {
    const box = new SecretBox(randomBytes(32));
    const header = (set: string) => set.split(';')[0] ?? '';
    const withPerson = header(sessionCookie(box, 'https://x.example', 'sess-1', 'jane@example.org'));
    expect(withPerson).not.toContain('jane');
    expect(sessionCookieOf(box, withPerson)).toEqual({ id: 'sess-1', person: 'jane@example.org' });
    expect(sessionIdOf(box, withPerson)).toBe('sess-1');
    const linkOnly = header(sessionCookie(box, 'https://x.example', 'sess-2'));
    expect(sessionCookieOf(box, linkOnly)).toEqual({ id: 'sess-2', person: null });
    expect(sessionCookieOf(new SecretBox(randomBytes(32)), withPerson)).toBeUndefined();
  });
});
