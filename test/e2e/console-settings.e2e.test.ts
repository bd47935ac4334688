// The console's settings through the pipeline, as a HubSpot admin uses them: a portal connected to the
// server (`npm start`, in-server workers) against a fake HubSpot; the admin signs in in Chromium,
// unticks a field and picks an overwrite mode; contacts created in HubSpot afterwards reach the
// webhook, are enriched from the sandbox, and are written without that field and around a human's
// value, until the admin picks `always` and an edit brings one back. The overview then shows what the
// pipeline's log holds, for every outcome. Form errors, pause and resume, another installation and
// disconnect. The portals are connected in-process and admins sign in with links minted in-process
// (test/support/console-portal.ts); what the log and the installations hold is read in-process too.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { z } from 'zod';
import { hubspotPropertyFor } from '../../connectors/hubspot/fields.ts';
import { HUBSPOT_IDENTITY_PROPERTIES } from '../../connectors/hubspot/scopes.ts';
import { openStorage } from '../../bridge/storage.ts';
import { KyselyPipelineStore } from '../../bridge/store/kysely-pipeline-store.ts';
import { PERSONAS } from '../../core/sandbox/personas.ts';
import { screenshotAtWidths, seriousViolations, unreachableByKeyboard } from '../support/chromium.ts';
import { type ConsolePortal, PORTAL_ID, startConsolePortal } from '../support/console-portal.ts';
import type { FakeHubSpot, WebhookEvent } from '../support/fake-hubspot.ts';
import { asJson } from '../support/folder-runtime.ts';
import { until } from '../support/processes.ts';
import { HUBSPOT_PATHS } from '../../connectors/hubspot/version.ts';

const OTHER_PORTAL_ID = '99999';
const NET_WORTH = hubspotPropertyFor('household.net_worth') ?? 'missing';
const HOUSEHOLD_ID = hubspotPropertyFor('household.windfall_id') ?? 'missing';
const JOB_TITLE = hubspotPropertyFor('career.job_title') ?? 'missing';
const AMANDA = PERSONAS.find((persona) => persona.email === 'amanda.taylor@sandbox.windfall.com');
const HUMAN_TITLE = 'Head of Everything (typed by a sales rep)';
const REFUSAL = 'Contact is locked by a validation rule';

let portal: ConsolePortal;
let fake: FakeHubSpot;
let publicUrl = '';
let installationId = '';
let otherId = '';
/** The contacts the enrichment test creates, one per outcome; the overview test reads their log. */
const contactIds = { amanda: '', nobody: '', keyless: '', refused: '' };

beforeAll(async () => {
  // Webhooks are sent by the tests (sendEvents), for the properties the app's manifest subscribes to.
  portal = await startConsolePortal({
    folderPrefix: 'enrichbridge-console-settings-',
    rateLimit: 100,
    subscribedProperties: HUBSPOT_IDENTITY_PROPERTIES,
    otherPortals: [OTHER_PORTAL_ID],
  });
  ({ fake, publicUrl } = portal);
  installationId = portal.installationIds.get(PORTAL_ID) ?? '';
  otherId = portal.installationIds.get(OTHER_PORTAL_ID) ?? '';
}, 90_000);

afterAll(async () => {
  await portal?.close();
});

function signIn(): Promise<Page> {
  return portal.signIn(installationId);
}

/** Runs `read` on the pipeline's store in the data folder, beside the running server. */
async function readStore<T>(read: (store: KyselyPipelineStore) => Promise<T>): Promise<T> {
  const opened = await openStorage(path.join(portal.env.DATA_DIR ?? '', 'enrichbridge.db'));
  try {
    return await read(new KyselyPipelineStore(opened.db));
  } finally {
    await opened.store.close();
  }
}

/** The installation of each portal, as `installations list` lists them (read in-process). */
async function installationIds(): Promise<Map<string, string>> {
  return readStore(async (store) => new Map((await store.listInstallations()).map((i) => [i.externalAccountId, i.id])));
}

/** The installation's settings as saved (read from the data folder, beside the running server). */
async function settingsNow(id: string) {
  return readStore(async (store) => (await store.findInstallation(id))?.settings);
}

/** The fake's events about these contacts, delivered to the server's webhook as one signed batch. */
async function deliver(ids: readonly string[], subscriptionType: WebhookEvent['subscriptionType']): Promise<void> {
  const events = fake.events.filter((event) => event.subscriptionType === subscriptionType && ids.includes(String(event.objectId)));
  expect(events.length).toBeGreaterThanOrEqual(ids.length);
  expect((await fake.sendEvents(events, { url: `${publicUrl}/webhooks/hubspot` })).status).toBe(200);
}

/** Waits until each record has `count` log entries (read from the data folder, beside the running server). */
async function loggedFor(counts: Readonly<Record<string, number>>): Promise<void> {
  await readStore(async (store) => {
    await until(
      `log entries ${JSON.stringify(counts)}`,
      async () => {
        const log = await store.listLog({ installationId, limit: 1000 });
        return Object.entries(counts).every(([id, n]) => log.filter((entry) => entry.recordId === id).length >= n) ? true : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 100, context: () => portal.server.output().slice(-4000) },
    );
  });
}

/** The contact property values of every batch update the fake received for a contact, in order. */
function writesTo(id: string): Record<string, string>[] {
  const Body = z.object({ inputs: z.array(z.object({ id: z.string(), properties: z.record(z.string(), z.string()) })) });
  return fake.requests
    .filter((request) => request.method === 'POST' && request.path === HUBSPOT_PATHS.contactsBatchUpdate)
    .flatMap((request) => Body.parse(request.body).inputs)
    .filter((input) => input.id === id)
    .map((input) => input.properties);
}

describe('console settings', () => {
  it('shows a form error next to its field and saves nothing', async () => {
    const page = await signIn();
    await page.goto(`${publicUrl}/console/installations/${installationId}/settings`);
    await page.fill('#reenrichAfterDays', 'soon');
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Save settings")')]);
    expect(await page.getAttribute('#reenrichAfterDays', 'aria-invalid')).toBe('true');
    expect(await page.textContent('#reenrichAfterDays-error')).toContain('whole number of days');
    expect(await page.textContent('[role=alert]')).toContain('Nothing was saved');
    expect((await settingsNow(installationId))?.reenrichAfterDays).toBe(30);
    expect(await seriousViolations(page)).toEqual([]);
    await page.context().close();
  });

  it('a field unticked and an overwrite mode chosen change what the next webhook-driven enrichments write', async () => {
    const page = await signIn();
    /** Picks an overwrite mode on the settings page shown, with whatever else was changed there, and saves. */
    const saveSettings = async (mode: string) => {
      await page.check(`#mode-${mode}`);
      await Promise.all([page.waitForNavigation(), page.click('button:has-text("Save settings")')]);
      expect(await page.textContent('[role=status]')).toContain('Saved');
      expect(await page.isChecked(`#mode-${mode}`)).toBe(true);
    };
    await page.goto(`${publicUrl}/console/installations/${installationId}/settings`);
    expect(await page.textContent(`label[for="field-household-net-worth"]`)).toContain(NET_WORTH);
    await page.uncheck('#field-household-net-worth');
    await saveSettings('fill_empty');
    expect(await page.isChecked('#field-household-net-worth')).toBe(false);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshotAtWidths(page, 'settings');
    expect(await unreachableByKeyboard(page)).toEqual([]);

    // Contacts created in HubSpot afterwards, in one go: a persona whose career title a human already
    // typed into our property, an e-mail that is no persona, a name with no match key, and a persona
    // whose write HubSpot refuses. One webhook batch; the workers enrich and write them back.
    const amanda = AMANDA;
    if (amanda === undefined) throw new Error('no Amanda Taylor among the sandbox personas');
    const [withTitle, nobody, keyless, refused] = await Promise.all([
      fake.createContact({ firstname: amanda.first_name, lastname: amanda.last_name, email: amanda.email, [JOB_TITLE]: HUMAN_TITLE }),
      fake.createContact({ firstname: 'Nora', lastname: 'Nobody', email: 'nora.nobody@sandbox.windfall.com' }),
      fake.createContact({ firstname: 'Nadia', lastname: 'Keyless' }),
      fake.createContact({ firstname: 'Daniel', lastname: 'Garcia', email: 'daniel.garcia@sandbox.windfall.com' }),
    ]);
    Object.assign(contactIds, { amanda: withTitle.id, nobody: nobody.id, keyless: keyless.id, refused: refused.id });
    fake.refuseWrites(contactIds.refused, { message: REFUSAL });
    await deliver(Object.values(contactIds), 'contact.creation');
    await loggedFor({ [contactIds.amanda]: 1, [contactIds.nobody]: 1, [contactIds.keyless]: 1, [contactIds.refused]: 1 });

    // fill_empty: the household is written, the unticked net worth is not, and the human's title stays.
    const [first] = writesTo(contactIds.amanda);
    expect(first?.[HOUSEHOLD_ID]).toBe(amanda.household?.windfall_id);
    expect(first).not.toHaveProperty(NET_WORTH);
    expect(first).not.toHaveProperty(JOB_TITLE);
    expect(fake.contacts.get(contactIds.amanda)?.properties[JOB_TITLE]).toBe(HUMAN_TITLE);

    // always: an edit of an identity property (the phone added) enriches the contact again, and now the
    // sandbox's title replaces the human's; the net worth stays unwritten.
    await page.goto(`${publicUrl}/console/installations/${installationId}/settings`);
    await saveSettings('always');
    await fake.updateContact(contactIds.amanda, { phone: amanda.phone });
    await deliver([contactIds.amanda], 'contact.propertyChange');
    await loggedFor({ [contactIds.amanda]: 2 });
    const writes = writesTo(contactIds.amanda);
    expect(writes).toHaveLength(2);
    expect(writes[1]?.[JOB_TITLE]).toBe(amanda.career?.job_title);
    expect(writes[1]).not.toHaveProperty(NET_WORTH);
    expect(fake.contacts.get(contactIds.amanda)?.properties[JOB_TITLE]).toBe(amanda.career?.job_title);
    expect(fake.contacts.get(contactIds.amanda)?.properties[NET_WORTH] ?? null).toBeNull();
    await page.context().close();
  });

  it("shows on the overview what the pipeline's log holds, for every outcome: totals, days, skip reasons and failures", async () => {
    const LogSchema = z.array(z.object({ recordId: z.string(), at: z.string(), outcome: z.string(), detail: z.string().nullable() }));
    // What `log --installation ID --json` prints (its newest 50), read in-process.
    const log = LogSchema.parse(asJson(await readStore((store) => store.listLog({ installationId, limit: 50 }))));
    const page = await signIn();
    // Each contact of the test above ended as it was made to; the refused one was sent and not kept.
    const outcomesOf = (id: string) => log.filter((entry) => entry.recordId === id).map((entry) => entry.outcome);
    expect(outcomesOf(contactIds.amanda)).toEqual(['enriched', 'enriched']);
    expect(outcomesOf(contactIds.nobody)).toEqual(['no_match']);
    expect(outcomesOf(contactIds.keyless)).toEqual(['skipped:no_match_key']);
    expect(outcomesOf(contactIds.refused)).toEqual(['failed:crm_validation']);
    expect(log).toHaveLength(5);
    expect(writesTo(contactIds.refused)).toHaveLength(1);
    expect(fake.contacts.get(contactIds.refused)?.properties[HOUSEHOLD_ID]).toBeUndefined();

    const kind = (outcome: string) => (outcome.startsWith('skipped:') ? 'skipped' : outcome.startsWith('failed:') ? 'failed' : outcome);
    const kinds = ['enriched', 'no_match', 'skipped', 'failed'];
    const count = (entries: typeof log, k: string) => entries.filter((entry) => kind(entry.outcome) === k).length;

    await page.goto(`${publicUrl}/console/installations/${installationId}`);
    for (const k of kinds) expect(await page.textContent(`#totals strong[data-kind=${k}]`), k).toBe(String(count(log, k)));
    // The chart's table: one row per day, each day's counts as the log's entries of that (UTC) day.
    const rows = await page.$$eval('#days tbody tr', (trs) =>
      trs.map((tr) => [...tr.querySelectorAll('th, td')].slice(0, 5).map((cell) => cell.textContent.trim())),
    );
    expect(rows).toHaveLength(30);
    for (const [day = '', ...counts] of rows) {
      const ofDay = log.filter((entry) => entry.at.slice(0, 10) === day);
      expect(counts, day).toEqual(kinds.map((k) => String(count(ofDay, k))));
    }
    expect(rows.filter(([, ...counts]) => counts.some((n) => n !== '0'))).toHaveLength(new Set(log.map((entry) => entry.at.slice(0, 10))).size);
    expect(await page.textContent('p:has-text("Skipped by reason")')).toBe('Skipped by reason: no match key 1.');
    // The latest failures, newest first, with their reasons as logged.
    const failures = await page.$$eval('#failures tbody tr', (trs) =>
      trs.map((tr) => ({
        at: tr.querySelector('time')?.getAttribute('datetime'),
        cells: [...tr.querySelectorAll('td')].slice(1).map((cell) => cell.textContent.trim()),
      })),
    );
    const failed = log.filter((entry) => kind(entry.outcome) === 'failed').reverse();
    expect(failures).toEqual(
      failed.map((entry) => ({ at: entry.at, cells: [`contact ${entry.recordId}`, `${entry.outcome.slice('failed:'.length)}: ${entry.detail ?? ''}`] })),
    );
    // HubSpot's own words can echo the record's values: the admin reads its codes, never its text.
    expect(failures[0]?.cells[1]).not.toContain(REFUSAL);
    expect(failures[0]?.cells[1]).toContain('VALIDATION_ERROR');
    // A portal's validation rule: the admin reads what refused it and what to change, and that it is not retried.
    expect(failures[0]?.cells[1]).toMatch(/^crm_validation: HubSpot's validation rules for this portal refused .*Change the rule in HubSpot .*not retried\.$/);
    await page.context().close();
  });

  it("pauses and resumes, and keeps the admin out of another installation's settings and actions", async () => {
    const page = await signIn();
    await page.goto(`${publicUrl}/console/installations/${installationId}/settings`);
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Pause")')]);
    expect(await page.textContent('#status')).toBe('paused by an admin');
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Resume")')]);
    expect(await page.textContent('#status')).toBe('active');

    const csrf = (await page.getAttribute('input[name=csrf]', 'value')) ?? '';
    const cookie = (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
    const post = (path: string, body: string) =>
      fetch(`${publicUrl}/console/installations/${otherId}/${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, origin: publicUrl, 'content-type': 'application/x-www-form-urlencoded' },
        body,
      });
    expect((await post('settings', `csrf=${csrf}&overwriteMode=always&reenrichAfterDays=1&minConfidence=0.5&fields=household.windfall_id`)).status).toBe(404);
    expect((await post('pause', `csrf=${csrf}`)).status).toBe(404);
    expect((await post('disconnect', `csrf=${csrf}`)).status).toBe(404);
    expect((await fetch(`${publicUrl}/console/installations/${otherId}/settings`, { headers: { cookie } })).status).toBe(404);
    expect((await settingsNow(otherId))?.overwriteMode).toBe('tracked');
    expect((await installationIds()).get(OTHER_PORTAL_ID)).toBe(otherId);
    await page.context().close();
  });

  it('disconnects after a confirmation that says what is removed, and signs the admin out', async () => {
    const page = await signIn();
    await page.goto(`${publicUrl}/console/installations/${installationId}/settings`);
    await page.click('a:has-text("Disconnect")');
    expect(await page.textContent('main')).toContain('Nothing already written to the CRM is removed');
    expect(await seriousViolations(page)).toEqual([]);
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Disconnect")')]);
    expect(await page.textContent('h1')).toBe('Disconnected');
    expect((await installationIds()).has(PORTAL_ID)).toBe(false);
    expect((await page.goto(`${publicUrl}/console/installations/${installationId}`))?.status()).toBe(401);
    await page.context().close();
  });
});
