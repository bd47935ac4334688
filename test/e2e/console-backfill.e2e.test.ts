// A backfill from the console, as a HubSpot admin runs it: the portal's existing contacts in a fake
// HubSpot, the server as `npm start` runs it (in-server workers), the admin in Chromium. The estimate
// (read, counted, nothing queued), a cancel and a resume, the confirmation, live progress polled by the
// page until it finishes by itself, and what reached HubSpot and the enrichment log. A redelivered run
// resuming at its saved cursor after a failure is test/int/backfill-runs.int.test.ts.
// The portal is connected in-process and the admin signs in with a link minted in-process
// (test/support/console-portal.ts); the log is read in-process.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { z } from 'zod';
import { hubspotPropertyFor } from '../../connectors/hubspot/fields.ts';
import { screenshotAtWidths, seriousViolations, unreachableByKeyboard } from '../support/chromium.ts';
import { type ConsolePortal, PORTAL_ID, startConsolePortal } from '../support/console-portal.ts';
import type { FakeHubSpot } from '../support/fake-hubspot.ts';
import { asJson, withFolderRuntime } from '../support/folder-runtime.ts';

const HOUSEHOLD_ID = hubspotPropertyFor('household.windfall_id') ?? 'missing';
/** Sandbox personas (docs/reference/contract.md), people the sandbox does not know, and names alone (no match key). */
const PERSONAS = ['amanda.taylor', 'daniel.garcia', 'michelle.robinson', 'jane.doe', 'robert.smith'];
const STRANGERS = 6;
const NAME_ONLY = 3;

let portal: ConsolePortal;
let fake: FakeHubSpot;
let installationId = '';

beforeAll(async () => {
  // Four requests a second: the enrichments take a few seconds, so the page shows them moving.
  portal = await startConsolePortal({ folderPrefix: 'enrichbridge-console-backfill-', rateLimit: 4, subscribedProperties: [] });
  fake = portal.fake;
  installationId = portal.installationIds.get(PORTAL_ID) ?? '';
  // The portal's contacts from before the first backfill (no webhook reaches anyone: none is set).
  for (const name of PERSONAS) {
    const [first = '', last = ''] = name.split('.');
    await fake.createContact({ firstname: first, lastname: last, email: `${name}@sandbox.windfall.com` });
  }
  for (let i = 0; i < STRANGERS; i += 1) await fake.createContact({ firstname: 'Pat', lastname: `Nobody${i}`, email: `pat.nobody${i}@example.com` });
  for (let i = 0; i < NAME_ONLY; i += 1) await fake.createContact({ firstname: 'Name', lastname: `Only${i}` });
}, 90_000);

afterAll(async () => {
  await portal?.close();
});

function signIn(): Promise<Page> {
  return portal.signIn(installationId);
}

const WITH_KEY = PERSONAS.length + STRANGERS;

describe('console backfill', () => {
  it('estimates without queueing, cancels and resumes, then runs with live progress to the end, with each record in the log', async () => {
    const page = await signIn();
    await page.click('nav a:has-text("Backfill")');
    expect(await page.textContent('h1')).toContain('Backfill');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshotAtWidths(page, 'backfill');
    expect(await unreachableByKeyboard(page)).toEqual([]);

    // A bad limit is refused beside its field; nothing starts.
    await page.fill('#limit', 'many');
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Estimate")')]);
    expect(await page.getAttribute('#limit', 'aria-invalid')).toBe('true');
    expect(await page.textContent('#limit-error')).toContain('whole number');
    expect(await page.$('#runs')).toBeNull();

    // The estimate: read and counted, nothing queued, nothing written.
    await page.fill('#limit', '');
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Estimate")')]);
    await page.waitForSelector('#estimate', { timeout: 30_000 });
    expect(await page.textContent('#headline')).toContain('nothing is queued until you confirm');
    expect(await page.textContent('#est-scanned')).toBe(String(WITH_KEY + NAME_ONLY));
    expect(await page.textContent('#est-match-key')).toBe(String(WITH_KEY));
    expect(await page.textContent('#est-to-enrich')).toBe(String(WITH_KEY));
    expect(await page.textContent('#est-units')).toContain('sandbox: no quota is spent');
    expect(await seriousViolations(page)).toEqual([]);
    await screenshotAtWidths(page, 'backfill-estimate');
    expect(await unreachableByKeyboard(page)).toEqual([]);
    expect([...fake.contacts.values()].filter((c) => c.properties[HOUSEHOLD_ID] !== undefined)).toEqual([]);

    // Cancelled, then resumed: a new estimate of the same.
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Cancel")')]);
    expect(await page.textContent('#headline')).toContain('Cancelled');
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Resume")')]);
    await page.waitForSelector('#estimate', { timeout: 30_000 });
    expect(await page.textContent('#est-to-enrich')).toBe(String(WITH_KEY));

    // Confirmed: the page follows the run by itself (console.js polls the status and reloads on a new phase).
    await Promise.all([page.waitForNavigation(), page.click(`button:has-text("Enrich ${WITH_KEY} contacts")`)]);
    await page.waitForSelector('#progress', { timeout: 30_000 });
    expect(await page.getAttribute('#run', 'data-live')).toBe('1');
    await screenshotAtWidths(page, 'backfill-progress');
    await page.waitForSelector('#headline:has-text("Finished")', { timeout: 60_000 });
    expect(await page.textContent('#headline')).toBe(`Finished: ${WITH_KEY} enriched.`);
    expect(await page.getAttribute('#progress', 'value')).toBe('100');
    expect(await page.textContent('#n-enriched')).toBe(String(WITH_KEY));
    expect(await page.textContent('#n-waiting')).toBe('0');
    expect(await seriousViolations(page)).toEqual([]);

    // What reached HubSpot and the log: the personas written, every record with a key logged once.
    const written = [...fake.contacts.values()].filter((c) => (c.properties[HOUSEHOLD_ID] ?? '') !== '');
    expect(written.map((c) => c.properties.email).sort()).toEqual(PERSONAS.map((name) => `${name}@sandbox.windfall.com`).sort());
    // What `log --installation ID --json` prints (its newest 50), read in-process.
    const logged = await withFolderRuntime(portal.env, ({ bridge }) => bridge.pipelineStore.listLog({ installationId, limit: 50 }));
    const log = z.array(z.object({ outcome: z.string(), recordId: z.string() })).parse(asJson(logged));
    expect(new Set(log.map((entry) => entry.recordId)).size).toBe(WITH_KEY);
    expect(log.filter((entry) => entry.outcome === 'enriched')).toHaveLength(PERSONAS.length);
    expect(log.filter((entry) => entry.outcome === 'no_match')).toHaveLength(STRANGERS);

    // The backfill page lists the run; another estimate finds everything up to date.
    await page.click('nav a:has-text("Backfill")');
    expect(await page.textContent('#runs')).toContain('enqueued');
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Estimate")')]);
    await page.waitForSelector('#estimate', { timeout: 30_000 });
    expect(await page.textContent('#est-up-to-date')).toBe(String(WITH_KEY));
    expect(await page.textContent('#est-to-enrich')).toBe('0');
    await page.context().close();
  });
});
