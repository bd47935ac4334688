// The console's settings through the pipeline, as a HubSpot admin uses them: a portal connected to the
// server (`npm start`, in-server workers) against a fake HubSpot; the admin signs in in Chromium,
// unticks a field and picks an overwrite mode; a contact created in HubSpot afterwards reaches the
// webhook, is enriched from the sandbox, and is written without that field. The overview then counts
// what the pipeline's log holds. Form errors, pause and resume, another installation and disconnect.
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { z } from 'zod';
import { hubspotPropertyFor } from '../../connectors/hubspot/fields.ts';
import { openStorage } from '../../connectors/pipeline/storage.ts';
import { KyselyPipelineStore } from '../../connectors/pipeline/store.ts';
import { launchChromium, screenshotAtWidths, seriousViolations } from '../support/chromium.ts';
import { type FakeHubSpot, startFakeHubSpot } from '../support/fake-hubspot.ts';
import { tempDir } from '../support/harness.ts';
import { type Proc, cli, freePort, startServerProcess, until } from '../support/processes.ts';

const APP_ID = '1160452';
const PORTAL_ID = '62515';
const NET_WORTH = hubspotPropertyFor('household.net_worth') ?? 'missing';
const HOUSEHOLD_ID = hubspotPropertyFor('household.windfall_id') ?? 'missing';

let fake: FakeHubSpot;
let server: Proc;
let browser: Browser;
let publicUrl = '';
let env: Record<string, string> = {};
let installationId = '';
let otherId = '';

async function installationIds(): Promise<Map<string, string>> {
  const out = (await cli(['installations', 'list'], env)).stdout;
  return new Map(out.split('\n').filter((line) => line.startsWith('inst_')).map((line) => {
    const [id = '', , account = ''] = line.split(/\s+/);
    return [account, id];
  }));
}

beforeAll(async () => {
  const clientSecret = randomUUID();
  fake = await startFakeHubSpot({ webhookUrl: null, appId: APP_ID, portalId: PORTAL_ID, clientSecret, subscribedProperties: [] });
  const port = await freePort();
  publicUrl = `http://127.0.0.1:${port}`;
  env = {
    DATA_DIR: tempDir('enrichbridge-console-settings-'),
    ENRICHBRIDGE_SECRET_KEY: randomBytes(32).toString('hex'),
    PUBLIC_URL: publicUrl,
    PORT: String(port),
    HUBSPOT_API_BASE_URL: fake.url,
    LOG_LEVEL: 'info',
  };
  await cli(['accounts', 'create', 'e2e', '--career-intelligence', '--rate-limit', '100'], env);
  const connect = (portal: string) =>
    cli(
      [
        ...['hubspot', 'connect', '--portal-id', portal, '--access-token', fake.tokens.staticToken, '--client-secret', clientSecret],
        ...['--app-id', APP_ID, '--account', 'e2e', '--env', 'sandbox', '--api-base-url', fake.url],
      ],
      env,
    );
  await connect(PORTAL_ID);
  await connect('99999');
  const ids = await installationIds();
  installationId = ids.get(PORTAL_ID) ?? '';
  otherId = ids.get('99999') ?? '';
  ({ proc: server } = await startServerProcess(env));
  browser = await launchChromium();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await fake?.close();
});

async function signIn(): Promise<Page> {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto((await cli(['console-link', '--installation', installationId], env)).stdout.trim());
  return page;
}

/** The installation's settings as saved (read from the data folder, beside the running server). */
async function settingsNow(id: string) {
  const opened = await openStorage(path.join(env.DATA_DIR ?? '', 'enrichbridge.db'));
  try {
    return (await new KyselyPipelineStore(opened.db).findInstallation(id))?.settings;
  } finally {
    await opened.store.close();
  }
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

  it('a field unticked and an overwrite mode chosen change what the next webhook-driven enrichment writes', async () => {
    const page = await signIn();
    await page.goto(`${publicUrl}/console/installations/${installationId}/settings`);
    expect(await page.textContent(`label[for="field-household-net-worth"]`)).toContain(NET_WORTH);
    await page.uncheck('#field-household-net-worth');
    await page.check('#mode-fill_empty');
    await Promise.all([page.waitForNavigation(), page.click('button:has-text("Save settings")')]);
    expect(await page.textContent('[role=status]')).toContain('Saved');
    expect(await page.isChecked('#field-household-net-worth')).toBe(false);
    expect(await page.isChecked('#mode-fill_empty')).toBe(true);
    expect(await seriousViolations(page)).toEqual([]);
    await screenshotAtWidths(page, 'settings');

    // A contact created in HubSpot afterwards: the creation webhook, the worker, the write-back.
    const contact = await fake.createContact({ firstname: 'Amanda', lastname: 'Taylor', email: 'amanda.taylor@sandbox.windfall.com' });
    const creation = fake.events.filter((event) => event.subscriptionType === 'contact.creation' && String(event.objectId) === contact.id);
    expect((await fake.sendEvents(creation, { url: `${publicUrl}/webhooks/hubspot` })).status).toBe(200);
    const written = await until('the contact enriched', () => {
      const properties = fake.contacts.get(contact.id)?.properties ?? {};
      return properties[HOUSEHOLD_ID] === undefined ? undefined : properties;
    }, { timeoutMs: 30_000, intervalMs: 200 });
    expect(written[HOUSEHOLD_ID]).not.toBe('');
    expect(written[NET_WORTH]).toBeUndefined();

    // The overview counts what the pipeline's log holds.
    const log = z.array(z.object({ outcome: z.string() })).parse(JSON.parse((await cli(['log', '--installation', installationId, '--json'], env)).stdout));
    const enriched = log.filter((entry) => entry.outcome === 'enriched').length;
    expect(enriched).toBeGreaterThan(0);
    await page.goto(`${publicUrl}/console/installations/${installationId}`);
    expect(await page.textContent('#totals strong[data-kind=enriched]')).toBe(String(enriched));
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
      fetch(`${publicUrl}/console/installations/${otherId}/${path}`, { method: 'POST', redirect: 'manual', headers: { cookie, origin: publicUrl, 'content-type': 'application/x-www-form-urlencoded' }, body });
    expect((await post('settings', `csrf=${csrf}&overwriteMode=always&reenrichAfterDays=1&minConfidence=0.5&fields=household.windfall_id`)).status).toBe(404);
    expect((await post('pause', `csrf=${csrf}`)).status).toBe(404);
    expect((await post('disconnect', `csrf=${csrf}`)).status).toBe(404);
    expect((await fetch(`${publicUrl}/console/installations/${otherId}/settings`, { headers: { cookie } })).status).toBe(404);
    expect((await settingsNow(otherId))?.overwriteMode).toBe('tracked');
    expect((await installationIds()).get('99999')).toBe(otherId);
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
