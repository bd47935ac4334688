// The console shows one record as the CRM's card and component do (the same record view), linked from
// its log entry, with the record actions as forms: an admin's Undo and Exclude reach the CRM, are
// logged with who asked, and a refusal says why. The console's router on the pipeline harness (real
// store, queue, service and pipeline; MemoryCrm stands for the CRM), real HTTP, a signed-in admin.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Installation } from '../../bridge/model.ts';
import { SecretBox } from '../../core/secrets/secret-box.ts';
import { PERSONAS } from '../../core/sandbox/personas.ts';
import { propertyName as p } from '../support/memory-crm.ts';
import { type PipelineHarness, startPipeline } from '../support/pipeline-harness.ts';
import { type ConsoleApp, startConsoleApp } from '../support/console-app.ts';

const PUBLIC_URL = 'http://console.test';
const CONTACT = 'contact';
let h: PipelineHarness;
let installation: Installation;
let app: ConsoleApp | undefined;
let url = '';
let cookie = '';
let csrf = '';

beforeAll(async () => {
  h = await startPipeline();
  installation = await h.install({ environment: 'production', account: { quotaLimit: 1000 } });
  const amanda = PERSONAS[0];
  if (amanda === undefined) throw new Error('no persona');
  h.crm.create(CONTACT, 'c-1', { first_name: amanda.first_name, last_name: amanda.last_name, email: amanda.email });
  await h.enqueue(installation, { object: CONTACT, recordId: 'c-1', trigger: 'create' });
  await h.drain();
  const box = new SecretBox(randomBytes(32));
  app = await startConsoleApp({ publicUrl: PUBLIC_URL, box, bridge: h.bridge, store: h.opened.store, service: h.service, queue: h.opened.queue, modules: [] });
  url = app.url;
  ({ cookie, csrf } = await app.signIn({ kind: 'installation', installationId: installation.id }, 'alice.admin@example.org'));
});

afterAll(async () => {
  await app?.close();
  await h?.close();
  if (h !== undefined) rmSync(h.dataDir, { recursive: true, force: true });
});

const recordUrl = () => `${url}/console/installations/${installation.id}/records/${CONTACT}/c-1`;
const act = async (action: string) => {
  const response = await fetch(`${recordUrl()}/${action}`, {
    method: 'POST',
    headers: { cookie, origin: PUBLIC_URL, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf }).toString(),
  });
  return { status: response.status, page: await response.text() };
};

describe('a record in the console', () => {
  it('is linked from its log entry and shows its status, what we wrote with its provenance, and each action with its cost', async () => {
    const [entry] = await h.bridge.pipelineStore.listLog({ installationId: installation.id, recordId: 'c-1' });
    if (entry === undefined) throw new Error('no log entry');
    const entryPage = await (await fetch(`${url}/console/installations/${installation.id}/log/${entry.id}`, { headers: { cookie } })).text();
    expect(entryPage).toContain(`href="/console/installations/${installation.id}/records/contact/c-1"`);

    const response = await fetch(recordUrl(), { headers: { cookie } });
    const page = await response.text();
    expect(response.status).toBe(200);
    expect(page).toMatch(/<dd id="record-status" data-status="enriched">Enriched/);
    expect(page).toContain('<table id="fields">');
    expect(page).toContain('<td class="state-ours">ours</td>');
    expect(page).toMatch(/<li data-action="enrich_now">.*1 quota unit/s);
  });

  it('undoes and excludes from the console, each logged with the admin who asked; a refusal says why', async () => {
    // A colleague's edit since our write: left alone by Undo, and named.
    const edited = p('career.job_title');
    h.crm.edit(CONTACT, 'c-1', { [edited]: 'Chief Giving Officer' });
    const undone = await act('undo');
    expect(undone.status).toBe(200);
    expect(undone.page).toContain('<ul id="left-alone">');
    expect(undone.page).toContain('Chief Giving Officer');
    expect(undone.page).toMatch(/data-status="undone"/);

    const excluded = await act('exclude');
    expect(excluded.status).toBe(200);
    expect(excluded.page).toMatch(/data-status="excluded"/);
    const again = await act('exclude');
    expect(again.status).toBe(409);
    expect(again.page).toContain('id="action-result"');

    const log = await h.bridge.pipelineStore.listLog({ installationId: installation.id, recordId: 'c-1' });
    for (const outcome of ['action:undo', 'action:exclude']) {
      expect(log.find((e) => e.outcome === outcome)).toMatchObject({ actor: { userId: 'console:admin', email: 'alice.admin@example.org' } });
    }
  });

  it('answers an action that does not exist, and a record that does not, with a 404', async () => {
    expect((await act('delete')).status).toBe(404);
    expect((await fetch(`${url}/console/installations/${installation.id}/records/${CONTACT}/nobody`, { headers: { cookie } })).status).toBe(404);
  });
});
