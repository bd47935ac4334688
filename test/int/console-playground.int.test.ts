// The sandbox playground works for every installation: a production installation's holds only a
// production token, which the sandbox endpoint refuses (403) from anyone else; the console's playground
// asks the account's sandbox with it in-process, so a persona is answered there too. The console's
// router on a runtime of its own (SQLite in a temp folder), a signed-in operator, real HTTP. And the
// header of the pages it sends: the portal and who signed in, never an installation id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../core/accounts/admin.ts';
import type { Installation } from '../../bridge/model.ts';
import { personaRequest } from '../../server/http/console/playground.tsx';
import type { Runtime } from '../../server/runtime.ts';
import { type ConsoleApp, runtimeConsole } from '../support/console-app.ts';
import { openFolderRuntime } from '../support/folder-runtime.ts';
import { tempDir } from '../support/harness.ts';

const PUBLIC_URL = 'http://console.test';
let runtime: Runtime;
let app: ConsoleApp | undefined;
let url = '';
let cookie = '';
let csrf = '';
const installations: Record<'production' | 'sandbox', Installation | undefined> = { production: undefined, sandbox: undefined };

beforeAll(async () => {
  runtime = await openFolderRuntime({ DATA_DIR: tempDir('enrichbridge-console-playground-'), PUBLIC_URL });
  await createAccount(runtime.opened.store, 'acme', { quotaLimit: 100 });
  for (const environment of ['production', 'sandbox'] as const) {
    installations[environment] = await runtime.bridge.installations.create({
      provider: 'hubspot',
      externalAccountId: environment === 'production' ? '22334455' : '22334456',
      environment,
      target: { kind: 'local', accountName: 'acme' },
      settings: {},
    });
  }
  app = await runtimeConsole(runtime, PUBLIC_URL);
  url = app.url;
  ({ cookie, csrf } = await app.signIn({ kind: 'operator' }));
});

afterAll(async () => {
  await app?.close();
  await runtime?.close();
});

/** The playground's answer to persona `n`, as the page shows it (`<pre id="answer">`), unescaped. */
async function askPersona(installation: Installation | undefined, n: number): Promise<{ status: number; answer: string; page: string }> {
  if (installation === undefined) throw new Error('no installation');
  const response = await fetch(`${url}/console/installations/${installation.id}/playground`, {
    method: 'POST',
    headers: { cookie, origin: PUBLIC_URL, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ csrf, persona: String(n), request: '', simulate: '' }).toString(),
  });
  const page = await response.text();
  const answer = /<pre id="answer"><code>([\s\S]*?)<\/code><\/pre>/.exec(page)?.[1] ?? '';
  return {
    status: response.status,
    answer: answer
      .replace(/&quot;/g, '"')
      .replace(/&amp;/g, '&')
      .replace(/&lt;/g, '<'),
    page,
  };
}

describe('the sandbox playground', () => {
  it("answers a persona for a production installation: its token asks its account's sandbox, in the console only", async () => {
    const amanda = personaRequest(1);
    const { status, answer, page } = await askPersona(installations.production, 1);
    expect(status).toBe(200);
    expect(answer).toMatch(/^HTTP 200\n/);
    expect(answer).not.toContain('forbidden_environment');
    expect(answer).toContain('"household_matched": true');
    expect(page).toContain('id="production-sandbox"');
    expect(amanda).toMatchObject({ first_name: 'Amanda' });
    // The same token on the sandbox endpoint from anyone else is still refused.
    const { enrichmentToken } = await runtime.bridge.installations.secrets(installations.production?.id ?? '');
    const outside = await runtime.service.enrichRecord({ environment: 'sandbox', token: enrichmentToken, readBody: () => amanda });
    expect(outside.ok ? 200 : outside.error.code).toBe('forbidden_environment');
  });

  it('answers a persona for a sandbox installation as before', async () => {
    const { status, answer, page } = await askPersona(installations.sandbox, 1);
    expect(status).toBe(200);
    expect(answer).toMatch(/^HTTP 200\n/);
    expect(answer).toContain('"household_matched": true');
    expect(page).not.toContain('id="production-sandbox"');
  });
});

describe('the header on the pages the console sends', () => {
  it('names the portal and the person the CRM signed in, or a one-time link, never an installation id', async () => {
    const installation = installations.production;
    if (installation === undefined) throw new Error('no installation');
    const who = async (person?: string) => {
      const { cookie: sealed } = await (app ?? fail()).signIn({ kind: 'installation', installationId: installation.id }, person);
      const page = await (await fetch(`${url}/console/installations/${installation.id}`, { headers: { cookie: sealed } })).text();
      return /<span class="who" id="who">([\s\S]*?)<\/span><form/.exec(page)?.[1]?.replace(/<[^>]+>/g, '');
    };
    expect(await who('jane@example.org')).toBe('Signed in: HubSpot portal 22334455 · jane@example.org');
    expect(await who()).toBe('Signed in: HubSpot portal 22334455 · one-time link');
  });
});

function fail(): never {
  throw new Error('the console is not started');
}
