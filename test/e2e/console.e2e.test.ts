// The admin console in a real browser (Debian's Chromium through playwright-core) against the server
// as `npm start` runs it, signed in with one-time links: an installation's overview with the
// numbers of its enrichment log, the operator's list, one-time and expiring links, one admin kept out
// of another installation, CSRF and Origin checks, sign-out, and the session ending with its
// installation. axe-core checks each page; screenshots at 360 and 1440 px go to screenshots/console.
// `enrichbridge console-link` prints the first test's link and is refused in the last; the other links
// are minted in-process with the server's key (the command's own consoleLinkUrl): each CLI start costs
// seconds of CPU.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Browser } from 'playwright-core';
import { createAccount, describeAccount } from '../../core/accounts/admin.ts';
import { currentPeriod } from '../../core/limits/quota-period.ts';
import { newLogId } from '../../bridge/store.ts';
import type { LogEntry } from '../../bridge/model.ts';
import { snapshotsDir } from '../../server/runtime.ts';
import { loadSnapshot } from '../../core/snapshot/storage/loader.ts';
import { household, person, writeSnapshot } from '../support/snapshot-fixture.ts';
import { screenshotAtWidths, seriousViolations, unreachableByKeyboard } from '../support/chromium.ts';
import { type ConsoleServer, addInstallation, startConsoleServer } from '../support/console-portal.ts';
import { asJson, withFolderRuntime } from '../support/folder-runtime.ts';
import { tempDir } from '../support/harness.ts';
import { cli } from '../support/processes.ts';

let app: ConsoleServer<void>;
let publicUrl = '';
let env: Readonly<Record<string, string>> = {};
let browser: Browser;
const ids = { a: '', b: '', c: '' };
/** When installation A's failed entry (rec-7) happened, as stored. */
let failedAt = '';
/** One of installation B's log entries and a backfill estimate of B's: ids an admin of A might type. */
const ofB = { entry: '', run: 'bf_b_estimate' };

/** A value a CRM user can write (a record id, a property's value) that would run script if it were markup. */
const MARKUP = '<img src=x onerror=alert(1)>';

/** Log lines for installation A: 3 enriched today, 1 no match yesterday, 2 skipped, 1 failed. */
function seededLog(installationId: string): LogEntry[] {
  const now = Date.now();
  const entry = (n: number, outcome: LogEntry['outcome'], daysAgo: number, quota: number, detail: string | null = null): LogEntry => {
    const at = new Date(now - daysAgo * 86_400_000 - n * 1000);
    return {
      id: newLogId(at),
      installationId,
      object: 'contact',
      recordId: `rec-${n}`,
      at: at.toISOString(),
      outcome,
      fieldsWritten: [],
      changes: {},
      quotaConsumed: quota,
      latencyMs: 12,
      detail,
    };
  };
  // One enrichment that replaced a human's value (markup in it, to be shown as text) and filled an empty property.
  const replacing: LogEntry = {
    ...entry(1, 'enriched', 0, 1),
    fieldsWritten: ['wf_career_job_title', 'wf_hh_net_worth'],
    changes: { wf_career_job_title: { value: 'CFO', replaced: '<b>Chief</b> & Bean' }, wf_hh_net_worth: { value: 2400000, replaced: null } },
  };
  return [
    replacing,
    entry(2, 'enriched', 0, 1),
    entry(3, 'enriched', 0, 1),
    entry(4, 'no_match', 1, 1),
    entry(5, 'skipped:no_match_key', 2, 0),
    entry(6, 'skipped:unchanged', 2, 0),
    entry(7, 'failed:crm_error', 0, 0, 'HTTP 502 from the CRM'),
  ];
}

/** The data folder the server starts on (opened in-process with the server's env, sealed with its key). */
async function seed(folder: Readonly<Record<string, string>>): Promise<void> {
  await withFolderRuntime(folder, async (runtime) => {
    await createAccount(runtime.opened.store, 'acme', { quotaLimit: 100 });
    const a = await addInstallation(runtime, 'hubspot', '62515', 'acme');
    const b = await addInstallation(runtime, 'hubspot', '77777', 'acme');
    ids.a = a.id;
    ids.b = b.id;
    const logOfA = seededLog(a.id);
    failedAt = logOfA.find((entry) => entry.recordId === 'rec-7')?.at ?? '';
    await runtime.bridge.pipelineStore.saveOutcomes([], logOfA);
    // Installation B: 60 enriched records yesterday, for the log's pages.
    const yesterday = Date.now() - 86_400_000;
    const entriesOfB = Array.from({ length: 60 }, (_, i): LogEntry => {
      const at = new Date(yesterday + i * 1000);
      return {
        id: newLogId(at),
        installationId: b.id,
        object: 'contact',
        recordId: `b-${i}`,
        at: at.toISOString(),
        outcome: 'enriched',
        fieldsWritten: ['household.net_worth'],
        changes: {},
        quotaConsumed: 1,
        latencyMs: 40,
        detail: null,
      };
    });
    await runtime.bridge.pipelineStore.saveOutcomes([], entriesOfB);
    ofB.entry = entriesOfB[0]?.id ?? '';
    // A backfill estimate of B's waiting for its confirmation (written as the estimate job leaves it).
    const at = new Date().toISOString();
    await runtime.opened.db
      .insertInto('backfill_runs')
      .values({
        ...{ id: ofB.run, installation_id: b.id, object: 'contact', flags: '{}', record_limit: null, restart: 0, state: 'estimated', resumed: 0 },
        ...{
          scanned: 3,
          with_match_key: 3,
          up_to_date: 0,
          to_enrich: 3,
          quota_units: 0,
          read: 3,
          enqueued: 0,
          error: null,
          created_at: at,
          updated_at: at,
          confirmed_at: null,
        },
      })
      .execute();
    // A job that died (one attempt, failed for good), and two data snapshots loaded one after the other.
    const queue = runtime.opened.queue;
    await queue.enqueue({ installationId: a.id, kind: 'console-test', payload: {}, maxAttempts: 1 });
    const [claimed] = await queue.claimBatch({ workerId: 'console-test:1', limit: 1, leaseMs: 60_000 });
    if (claimed === undefined) throw new Error('nothing claimed');
    expect(await queue.fail(claimed.id, 'console-test:1', 'HTTP 500 from the CRM', { retryable: false })).toBe('dead');
    const home = household([{ address: '1 Elm Street', zipcode: '30301' }]);
    for (const version of ['week-1', 'week-2']) {
      await loadSnapshot(
        runtime.opened.store,
        snapshotsDir(folder.DATA_DIR ?? ''),
        writeSnapshot(path.join(tempDir(), `source-${version}`), { version, households: [home], people: [person('p-1', 'Ann', 'Lee', home)] }),
      );
    }
    if (a.target.kind !== 'local') throw new Error('local target expected');
    const period = currentPeriod('month', new Date());
    for (let i = 0; i < 4; i += 1) await runtime.opened.store.takeQuota(a.target.tokenId, period.key, 100);
  });
  // Installation C's credentials sealed under another key (a key rotated by hand): unreadable here.
  await withFolderRuntime({ ...folder, ENRICHBRIDGE_SECRET_KEY: randomBytes(32).toString('hex') }, async (other) => {
    const c = await addInstallation(other, 'hubspot', '55555', 'acme');
    ids.c = c.id;
    await other.bridge.pipelineStore.saveOutcomes(
      [],
      [
        {
          id: newLogId(),
          installationId: c.id,
          object: 'contact',
          // A record whose id and values a CRM user wrote as markup: every page shows them as text.
          recordId: MARKUP,
          at: new Date().toISOString(),
          outcome: 'enriched',
          fieldsWritten: ['wf_career_job_title'],
          changes: { wf_career_job_title: { value: MARKUP, replaced: MARKUP } },
          quotaConsumed: 1,
          latencyMs: 5,
          detail: null,
        },
      ],
    );
  });
}

beforeAll(async () => {
  app = await startConsoleServer({ folderPrefix: 'enrichbridge-console-', env: { WORKER_CONCURRENCY: '0' }, seed });
  ({ publicUrl, env, browser } = app);
}, 60_000);

afterAll(async () => {
  await app?.close();
});

/**
 * The headings' words the page splits across lines (each as `tag: word`): a word of a heading (h1–h3, a
 * table's or a card's header, a legend, a summary, a caption) whose text range takes more than one line.
 * Ids (in <bdi> or <code>) may wrap anywhere and are left out. Run as a string: nothing of the test's
 * own transform reaches the browser.
 */
const SPLIT_HEADING_WORDS = `(() => {
  const split = [];
  for (const heading of document.querySelectorAll('h1, h2, h3, th, dt, legend, summary, caption')) {
    if (heading.getClientRects().length === 0) continue;
    const walker = document.createTreeWalker(heading, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
      if (node.parentElement.closest('bdi, code') !== null) continue;
      for (const match of node.data.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const lines = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top)));
        if (lines.size > 1) split.push(heading.tagName.toLowerCase() + ': ' + match[0]);
      }
    }
  }
  return split;
})()`;

/** The link `enrichbridge console-link` prints, from the command itself. */
async function cliLink(args: string[]): Promise<string> {
  return (await cli(['console-link', ...args], env)).stdout.trim();
}

/** As `console-link --installation ID` makes it, minted in-process with the server's key. */
const adminLink = (installationId: string) => app.link({ kind: 'installation', installationId });
/** As `console-link --operator` makes it. */
const operatorLink = () => app.link({ kind: 'operator' });

describe('the console in a browser', () => {
  it("signs an installation's admin in with a one-time link and shows its overview with the log's numbers", async () => {
    const context = await browser.newContext({ timezoneId: 'America/Chicago', locale: 'en-US' });
    const page = await context.newPage();
    const response = await page.goto(await cliLink(['--installation', ids.a]));
    expect(response?.status()).toBe(200);
    expect(new URL(page.url()).pathname).toBe(`/console/installations/${ids.a}`);
    expect(await page.textContent('h1')).toBe('HubSpot portal 62515');
    // Signed in by a one-time link: the header names the portal and how, never the installation's id.
    expect(await page.textContent('header .who')).toBe('Signed in: HubSpot portal 62515 · one-time link');
    expect(await page.textContent('#status')).toBe('active');
    expect(await page.textContent('#enrich-on-create')).toBe('on');
    const totals = Object.fromEntries(await page.$$eval('#totals strong', (nodes) => nodes.map((node) => [node.getAttribute('data-kind'), node.textContent])));
    expect(totals).toEqual({ enriched: '3', no_match: '1', skipped: '2', failed: '1', units: '4' });
    expect(await page.textContent('#quota')).toBe('4 used of 100, 96 left');
    expect(await page.textContent('#failures')).toContain('crm_error: HTTP 502 from the CRM');
    expect(await page.locator('#days tbody tr').count()).toBe(30);
    // The response's headers: nothing inline, nothing framed, no referrer.
    expect(response?.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(response?.headers()['content-security-policy']).not.toContain('unsafe-inline');
    expect(response?.headers()['referrer-policy']).toBe('no-referrer');
    // The stylesheet and the script: files under an address that names their content, cached for good.
    for (const selector of ['link[rel=stylesheet]', 'script[src]']) {
      const href = (await page.getAttribute(selector, selector.startsWith('link') ? 'href' : 'src')) ?? '';
      expect(href).toMatch(/^\/console\/assets\/console\.[\w-]{16}\.(css|js)$/);
      const asset = await fetch(`${publicUrl}${href}`);
      expect(asset.status).toBe(200);
      expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(asset.headers.get('content-security-policy')).not.toContain('unsafe-inline');
    }
    const cookie = (await context.cookies()).find((c) => c.name === 'eb_console');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/console' });
    expect(await seriousViolations(page)).toEqual([]);
    await page.setViewportSize({ width: 360, height: 800 });
    expect(
      await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth),
    ).toBeLessThanOrEqual(360);
    // At 360 px no heading splits a word: not the title, not the tables' or the cards' headers.
    expect(await page.evaluate(SPLIT_HEADING_WORDS)).toEqual([]);
    // The 30 days are a chart the CSP let draw (its colours are classes), the table behind it collapsed.
    expect(await page.locator('#days-chart').isVisible()).toBe(true);
    expect(await page.getAttribute('#days-chart', 'role')).toBe('img');
    expect(await page.locator('#days-chart rect.k-enriched').count()).toBeGreaterThan(0);
    expect(await page.$eval('#days-chart rect.k-failed', (rect) => getComputedStyle(rect).fill)).toBe('rgb(180, 35, 24)');
    expect(await page.locator('#days').isVisible()).toBe(false);
    await page.click('#days-table summary');
    expect(await page.locator('#days').isVisible()).toBe(true);
    expect(await page.evaluate(SPLIT_HEADING_WORDS)).toEqual([]);
    for (const path of ['log', 'settings', 'playground']) {
      await page.goto(`${publicUrl}/console/installations/${ids.a}/${path}`);
      expect(await page.evaluate(SPLIT_HEADING_WORDS), path).toEqual([]);
    }
    await page.goto(`${publicUrl}/console/installations/${ids.a}`);
    await screenshotAtWidths(page, 'overview');
    expect(await unreachableByKeyboard(page)).toEqual([]);
    await context.close();
  });

  it("shows an event's time the same on the overview, in the log and in its detail: in UTC, named, whatever the viewer's zone", async () => {
    // A viewer six hours behind UTC: the time must not move into their zone on one page and not another.
    const context = await browser.newContext({ timezoneId: 'America/Chicago', locale: 'en-US' });
    const page = await context.newPage();
    await page.goto(adminLink(ids.a));
    const expected = `${failedAt.slice(0, 19).replace('T', ' ')} UTC`;
    const onOverview = await page.textContent('#failures time');
    await page.goto(`${publicUrl}/console/installations/${ids.a}/log?record=rec-7`);
    const inLog = await page.textContent('#log time');
    await Promise.all([page.waitForNavigation(), page.click('#log tbody a >> nth=0')]);
    const inDetail = await page.textContent('main dl time');
    expect({ onOverview, inLog, inDetail }).toEqual({ onOverview: expected, inLog: expected, inDetail: expected });
    await context.close();
  });

  it('refuses a link used once already, and one that has expired', async () => {
    const url = adminLink(ids.a);
    const first = await browser.newContext();
    expect((await (await first.newPage()).goto(url))?.status()).toBe(200);
    const second = await browser.newContext();
    const page = await second.newPage();
    expect((await page.goto(url))?.status()).toBe(400);
    expect(await page.textContent('main')).toContain('used already');
    expect(await seriousViolations(page)).toEqual([]);
    const stale = app.link({ kind: 'installation', installationId: ids.a }, new Date(Date.now() - 16 * 60_000));
    expect((await page.goto(stale))?.status()).toBe(400);
    expect(await page.textContent('main')).toContain('expired');
    const altered = new URL(url);
    altered.searchParams.set('t', `${altered.searchParams.get('t') ?? ''}x`);
    expect((await page.goto(altered.toString()))?.status()).toBe(400);
    expect(await page.textContent('main')).toContain('not valid');
    await first.close();
    await second.close();
  });

  it("keeps one installation's admin out of another installation, whatever address they type", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(adminLink(ids.a));
    for (const path of [`/console/installations/${ids.b}`, `/console/installations/${encodeURIComponent(ids.b)}?id=${ids.a}`, '/console/installations/nope']) {
      const response = await page.goto(`${publicUrl}${path}`);
      expect(response?.status()).toBe(404);
      expect(await page.textContent('main')).not.toContain('77777');
    }
    // The console's home sends an admin to their own installation, not to the list of all.
    await page.goto(`${publicUrl}/console`);
    expect(new URL(page.url()).pathname).toBe(`/console/installations/${ids.a}`);

    // Every installation route, with B's id in the address, or B's entry or run under A's: 404, and
    // nothing of B's changes.
    const csrf = (await page.getAttribute('input[name=csrf]', 'value')) ?? '';
    const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const b = `/console/installations/${ids.b}`;
    const a = `/console/installations/${ids.a}`;
    const views = [
      b,
      `${b}/settings`,
      `${b}/log`,
      `${b}/log/${ofB.entry}`,
      `${b}/playground`,
      `${b}/disconnect`,
      `${b}/backfill`,
      `${b}/backfill/${ofB.run}`,
      `${b}/backfill/${ofB.run}/status`,
    ];
    for (const path of [...views, `${a}/log/${ofB.entry}`, `${a}/backfill/${ofB.run}`, `${a}/backfill/${ofB.run}/status`]) {
      const response = await fetch(`${publicUrl}${path}`, { headers: { cookie }, redirect: 'manual' });
      expect({ path, status: response.status }).toEqual({ path, status: 404 });
      expect(await response.text()).not.toContain('77777');
    }
    const posts: [string, string][] = [
      [`${b}/settings`, `overwriteMode=always&reenrichAfterDays=1&minConfidence=0.5&fields=household.windfall_id`],
      [`${b}/pause`, ''],
      [`${b}/resume`, ''],
      [`${b}/playground`, 'persona=1&request=&simulate='],
      [`${b}/backfill`, 'object=contact&limit='],
      [`${b}/backfill/${ofB.run}/confirm`, ''],
      [`${b}/backfill/${ofB.run}/cancel`, ''],
      [`${a}/backfill/${ofB.run}/confirm`, ''],
      [`${a}/backfill/${ofB.run}/cancel`, ''],
      [`${b}/disconnect`, ''],
    ];
    for (const [path, body] of posts) {
      const response = await fetch(`${publicUrl}${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, origin: publicUrl, 'content-type': 'application/x-www-form-urlencoded' },
        body: `csrf=${encodeURIComponent(csrf)}${body === '' ? '' : `&${body}`}`,
      });
      expect({ path, status: response.status }).toEqual({ path, status: 404 });
    }
    // B is as it was: still there, its settings and its estimate untouched (seen by the operator).
    const operator = await browser.newContext();
    const view = await operator.newPage();
    await view.goto(operatorLink());
    await view.goto(`${publicUrl}${b}/settings`);
    expect(await view.isChecked('#mode-tracked')).toBe(true);
    await view.goto(`${publicUrl}${b}/backfill/${ofB.run}`);
    expect(await view.textContent('#headline')).toContain('Estimate ready');
    await operator.close();
    await context.close();
  });

  it('shows the enrichment log filtered by outcome, record and dates, an entry in detail with its CRM link, and refuses a bad filter beside its field', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(adminLink(ids.a));
    const log = `${publicUrl}/console/installations/${ids.a}/log`;
    await page.goto(log);
    expect(await page.locator('#log tbody tr').count()).toBe(7);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshotAtWidths(page, 'log');
    expect(await unreachableByKeyboard(page)).toEqual([]);
    await page.selectOption('#f-outcome', 'failed');
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Filter")')]);
    expect(await page.locator('#log tbody tr').count()).toBe(1);
    expect(await page.textContent('#log tbody')).toContain('failed:crm_error');
    await page.goto(`${log}?record=rec-4`);
    expect(await page.textContent('#log tbody')).toContain('no_match');
    const today = new Date().toISOString().slice(0, 10);
    await page.goto(`${log}?from=${today}&to=${today}`);
    expect(await page.locator('#log tbody tr').count()).toBe(4);
    const refused = await page.goto(`${log}?from=yesterday`);
    expect(refused?.status()).toBe(400);
    expect(await page.getAttribute('#f-from', 'aria-invalid')).toBe('true');
    expect(await page.textContent('#f-from-error')).toContain('yyyy-mm-dd');
    // An entry in detail: the reason, and the record in HubSpot.
    await page.goto(`${log}?outcome=failed`);
    await Promise.all([page.waitForNavigation(), page.click('#log tbody a >> nth=0')]);
    expect(await page.textContent('#outcome')).toBe('failed: crm error');
    expect(await page.textContent('#detail')).toBe('HTTP 502 from the CRM');
    expect(await page.getAttribute('#crm-link', 'href')).toBe('https://app.hubspot.com/contacts/62515/record/0-1/rec-7');
    expect(await page.locator('#changes').count()).toBe(0);
    expect(await seriousViolations(page)).toEqual([]);
    // An enrichment in detail: each field by its label and property, with the value written and the value it replaced.
    await page.goto(`${log}?record=rec-1`);
    await Promise.all([page.waitForNavigation(), page.click('#log tbody a >> nth=0')]);
    const cells = (row: number) => page.locator('#changes tbody tr').nth(row).locator('td').allTextContents();
    expect(await page.locator('#changes tbody tr').count()).toBe(2);
    expect(await cells(0)).toEqual(['Career: Job title wf_career_job_title', 'CFO', '<b>Chief</b> & Bean']);
    expect(await cells(1)).toEqual(['Household: Net worth wf_hh_net_worth', '2400000', 'empty']);
    expect(await page.textContent('main')).not.toContain('not recorded');
    expect(await seriousViolations(page)).toEqual([]);
    // Another installation's log, or one of its entries under this installation's address: 404.
    expect((await page.goto(`${publicUrl}/console/installations/${ids.b}/log`))?.status()).toBe(404);
    await context.close();
  });

  it("pages the operator through an installation's log, 50 entries at a time", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(operatorLink());
    await page.goto(`${publicUrl}/console/installations/${ids.b}/log`);
    expect(await page.locator('#log tbody tr').count()).toBe(50);
    expect(await page.textContent('#log tbody tr >> nth=0')).toContain('b-59');
    await Promise.all([page.waitForNavigation(), page.click('#older')]);
    expect(await page.locator('#log tbody tr').count()).toBe(10);
    expect(await page.textContent('#log tbody tr >> nth=9')).toContain('b-0');
    expect(await page.locator('#older').count()).toBe(0);
    // An installation whose CRM credentials this server cannot open: its log shows, without links.
    expect((await page.goto(`${publicUrl}/console/installations/${ids.c}/log`))?.status()).toBe(200);
    expect(await page.locator('#log tbody tr').count()).toBe(1);
    expect(await page.locator('#log tbody a[target=_blank]').count()).toBe(0);
    await context.close();
  });

  it('shows a CRM value carrying markup as text in the log and in its entry, never as markup', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await page.goto(operatorLink());
    await page.goto(`${publicUrl}/console/installations/${ids.c}/log`);
    expect(await page.textContent('#log tbody tr >> nth=0 >> td >> nth=1')).toBe(`contact ${MARKUP}`);
    expect(await page.locator('img').count()).toBe(0);
    await Promise.all([page.waitForNavigation(), page.click('#log tbody a >> nth=0')]);
    expect(await page.textContent('h1')).toContain(MARKUP);
    expect(await page.locator('#changes tbody tr').nth(0).locator('td').allTextContents()).toEqual(['Career: Job title wf_career_job_title', MARKUP, MARKUP]);
    expect(await page.locator('img').count()).toBe(0);
    expect(dialogs).toEqual([]);
    await context.close();
  });

  it("tries the sandbox from the playground with the installation's token and entitlements, the error simulator, and a request of one's own", async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(adminLink(ids.a));
    await page.click('nav a:has-text("Sandbox playground")');
    await page.selectOption('#persona', '1');
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Send")')]);
    const sent = (await page.textContent('#sent')) ?? '';
    const answer = (await page.textContent('#answer')) ?? '';
    expect(sent).toContain('POST /sandbox/v1');
    expect(sent).toContain("X-WF-Auth-Token: (this installation's token, tok_");
    expect(sent).not.toMatch(/(sbx|prod)_[A-Za-z0-9_-]{20,}/);
    expect(answer).toMatch(/^HTTP 200/);
    expect(answer).toContain('RateLimit-Limit: 5');
    expect(answer).toContain('"household_matched": true');
    // acme has no Career Intelligence: the sandbox answers without the career, as it would over HTTP.
    expect(answer).toContain('"career_matched": false');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshotAtWidths(page, 'playground');
    expect(await unreachableByKeyboard(page)).toEqual([]);
    await page.selectOption('#simulate', '503');
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Send")')]);
    expect(await page.textContent('#answer')).toMatch(/^HTTP 503[\s\S]*Simulated downstream service unavailable/);
    await page.selectOption('#simulate', '');
    await page.fill('#request', '{"first_name": ');
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Send")')]);
    expect(await page.textContent('#answer')).toMatch(/^HTTP 400[\s\S]*not valid JSON/);
    await context.close();
  });

  it('refuses a sign-out without the form token or from another origin, and ends the session with the button', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(adminLink(ids.a));
    const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const noToken = await fetch(`${publicUrl}/console/signout`, {
      method: 'POST',
      headers: { cookie, origin: publicUrl, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'csrf=wrong',
    });
    expect(noToken.status).toBe(403);
    const csrf = await page.getAttribute('input[name=csrf]', 'value');
    const elsewhere = await fetch(`${publicUrl}/console/signout`, {
      method: 'POST',
      headers: { cookie, origin: 'http://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
      body: `csrf=${csrf ?? ''}`,
    });
    expect(elsewhere.status).toBe(403);
    const opaque = await fetch(`${publicUrl}/console/signout`, {
      method: 'POST',
      headers: { cookie, origin: 'null', 'sec-fetch-site': 'cross-site', 'content-type': 'application/x-www-form-urlencoded' },
      body: `csrf=${csrf ?? ''}`,
    });
    expect(opaque.status).toBe(403);
    // Still signed in after both refusals.
    expect((await page.reload())?.status()).toBe(200);
    await page.click('button[type=submit]');
    expect(await page.textContent('h1')).toBe('Signed out');
    expect((await page.goto(`${publicUrl}/console/installations/${ids.a}`))?.status()).toBe(401);
    // The old cookie is dead on the server too, not only dropped by the browser.
    const replay = await fetch(`${publicUrl}/console/installations/${ids.a}`, { headers: { cookie } });
    expect(replay.status).toBe(401);
    await context.close();
  });

  it("shows the operator every installation, and ends an admin's session when their installation is disconnected", async () => {
    const operator = await browser.newContext();
    const page = await operator.newPage();
    await page.goto(operatorLink());
    expect(await page.textContent('h1')).toBe('Installations');
    expect(await page.locator('#installations tbody tr').count()).toBe(3);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshotAtWidths(page, 'operator-installations');
    expect(await unreachableByKeyboard(page)).toEqual([]);
    await page.click(`a[href="/console/installations/${ids.b}"]`);
    expect(await page.textContent('h1')).toBe('HubSpot portal 77777');

    const admin = await browser.newContext();
    const adminPage = await admin.newPage();
    await adminPage.goto(adminLink(ids.b));
    expect(await adminPage.textContent('h1')).toBe('HubSpot portal 77777');
    await withFolderRuntime(env, ({ bridge }) => bridge.installations.remove(ids.b));
    expect((await adminPage.reload())?.status()).toBe(401);
    await operator.close();
    await admin.close();
  });

  it('lets the operator create a token, shown once, that works at once, and revoke it; an admin reaches none of it', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(operatorLink());
    await page.click('a:has-text("Accounts")');
    expect(await page.textContent('#accounts')).toContain('acme');
    await page.click('#accounts a:has-text("acme")');
    await page.selectOption('#environment', 'sandbox');
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Create token")')]);
    const id = (await page.textContent('#new-token code')) ?? '';
    const secret = (await page.textContent('#new-token-secret')) ?? '';
    expect(secret.length).toBeGreaterThan(20);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshotAtWidths(page, 'operator-account');
    expect(await unreachableByKeyboard(page)).toEqual([]);
    const amanda = { first_name: 'Amanda', last_name: 'Taylor', emails: ['amanda.taylor@sandbox.windfall.com'] };
    const ask = () =>
      fetch(`${publicUrl}/sandbox/v1`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-wf-auth-token': secret },
        body: JSON.stringify(amanda),
      });
    expect((await ask()).status).toBe(200);
    // Shown once: the account's page afterwards names the token, never its secret.
    await page.goto(`${publicUrl}/console/accounts/acme`);
    expect(await page.content()).not.toContain(secret);
    await Promise.all([page.waitForNavigation(), page.click(`tr[data-token="${id}"] button:has-text("Revoke")`)]);
    expect(await page.textContent(`tr[data-token="${id}"] .token-state`)).toBe('revoked');
    await vi.waitFor(async () => expect((await ask()).status).toBe(401), { timeout: 2_000, interval: 100 });

    const admin = await browser.newContext();
    const adminPage = await admin.newPage();
    await adminPage.goto(adminLink(ids.a));
    expect((await adminPage.goto(`${publicUrl}/console/accounts`))?.status()).toBe(404);
    expect((await adminPage.goto(`${publicUrl}/console/accounts/acme`))?.status()).toBe(404);
    const csrf = (await adminPage.getAttribute('input[name=csrf]', 'value')) ?? '';
    const cookie = (await admin.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const minted = await fetch(`${publicUrl}/console/accounts/acme/tokens`, {
      method: 'POST',
      headers: { cookie, origin: publicUrl, 'content-type': 'application/x-www-form-urlencoded' },
      body: `csrf=${csrf}&environment=production`,
    });
    expect(minted.status).toBe(404);
    expect(await minted.text()).not.toContain('prod_');
    await admin.close();
    await context.close();
  });

  it('lets the operator create an account and change its entitlements and quota, each refusal beside its field', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(operatorLink());
    await page.goto(`${publicUrl}/console/accounts`);
    await page.fill('#a-name', 'acme');
    await page.fill('#a-rateLimit', 'fast');
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Create account")')]);
    expect(await page.textContent('#a-rateLimit-error')).toContain('whole number');
    await page.fill('#a-rateLimit', '7');
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Create account")')]);
    expect(await page.getAttribute('#a-name', 'aria-invalid')).toBe('true');
    expect(await page.textContent('#a-name-error')).toContain('acme');
    await page.fill('#a-name', 'beta');
    await page.check('#a-careerIntelligence');
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Create account")')]);
    expect(await page.textContent('h1')).toBe('Account beta');
    expect(await page.textContent('main dl')).toContain('7 requests a second');
    expect(await seriousViolations(page)).toEqual([]);
    await page.fill('#a-quotaLimit', '50');
    await page.selectOption('#a-quotaPeriod', 'day');
    await page.fill('#a-householdFields', 'net_worth,nonsense');
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Save account")')]);
    expect(await page.textContent('#a-householdFields-error')).toContain('nonsense');
    await page.fill('#a-householdFields', 'net_worth');
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Save account")')]);
    expect(await page.textContent('[role=status]')).toContain('Saved');
    expect(await page.textContent('main dl')).toContain('50 a day');
    // What `accounts show beta --json` prints, read in-process.
    const shown = await withFolderRuntime(env, ({ opened }) => describeAccount(opened.store, 'beta'));
    expect(asJson(shown)).toMatchObject({ account: { quotaLimit: 50, quotaPeriod: 'day', careerIntelligence: true, householdFields: ['net_worth'] } });
    await context.close();
  });

  it('lets the operator retry a dead job and roll back the data snapshot; an admin reaches neither', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(operatorLink());
    await page.click('nav a:has-text("Jobs")');
    expect(await page.textContent('#counts strong[data-state=dead]')).toBe('1');
    expect(await page.textContent('#dead')).toContain('HTTP 500 from the CRM');
    expect(await seriousViolations(page)).toEqual([]);
    await Promise.all([page.waitForNavigation(), page.click('#dead button:has-text("Retry")')]);
    expect(await page.textContent('[role=status]')).toContain('1 dead job queued again');
    expect(await page.textContent('#counts strong[data-state=dead]')).toBe('0');
    expect(await page.textContent('#counts strong[data-state=queued]')).toBe('1');

    await page.click('nav a:has-text("Snapshots")');
    expect(await page.textContent('#snapshots tr.active')).toContain('week-2');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshotAtWidths(page, 'operator-snapshots');
    expect(await unreachableByKeyboard(page)).toEqual([]);
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Roll back")')]);
    expect(await page.textContent('[role=status]')).toContain('Rolled back');
    expect(await page.textContent('#snapshots tr.active')).toContain('week-1');

    const admin = await browser.newContext();
    const adminPage = await admin.newPage();
    await adminPage.goto(adminLink(ids.a));
    expect((await adminPage.goto(`${publicUrl}/console/jobs`))?.status()).toBe(404);
    expect((await adminPage.goto(`${publicUrl}/console/snapshots`))?.status()).toBe(404);
    await admin.close();
    await context.close();
  });

  it('lets the operator suppress a person by name and address, the audit trail saying who; an admin does not reach it', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(operatorLink());
    await page.click('nav a:has-text("Suppression")');
    expect(await page.textContent('#suppression-counts')).toContain('0 entries on the list');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshotAtWidths(page, 'operator-suppression');
    expect(await unreachableByKeyboard(page)).toEqual([]);
    await page.fill('#s-firstName', 'Ann');
    await page.fill('#s-lastName', 'Lee');
    await page.fill('#s-address', '1 Elm Street');
    await page.fill('#s-zipcode', '30301');
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Suppress")')]);
    expect(await page.textContent('[role=status]')).toContain('1 person of the active snapshot');
    expect(await page.inputValue('#s-lastName')).toBe('');
    expect(await page.textContent('#audit tbody tr')).toContain('added');
    expect(await seriousViolations(page)).toEqual([]);

    const admin = await browser.newContext();
    const adminPage = await admin.newPage();
    await adminPage.goto(adminLink(ids.a));
    expect((await adminPage.goto(`${publicUrl}/console/suppression`))?.status()).toBe(404);
    await admin.close();
    await context.close();
  });

  it('prints no link without PUBLIC_URL, or for an installation that does not exist', async () => {
    // Three refusals that change nothing: side by side.
    await Promise.all([
      expect(cli(['console-link', '--operator'], { ...env, PUBLIC_URL: '' })).rejects.toMatchObject({ stderr: expect.stringContaining('PUBLIC_URL') }),
      expect(cli(['console-link', '--installation', 'nope'], env)).rejects.toMatchObject({ stderr: expect.stringContaining('no installation nope') }),
      expect(cli(['console-link'], env)).rejects.toMatchObject({ stderr: expect.stringContaining('exactly one') }),
    ]);
  });
});
