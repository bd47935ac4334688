// The sandbox playground works for every installation: a production installation's holds only a
// production token, which the sandbox endpoint refuses (403) from anyone else; the console's playground
// asks the account's sandbox with it in-process, so a persona is answered there too. The console's
// router on a runtime of its own (SQLite in a temp folder), a signed-in operator, real HTTP. And the
// header of the pages it sends: the portal and who signed in, never an installation id.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../../core/accounts/admin.ts';
import type { Installation } from '../../bridge/model.ts';
import { consoleRouter } from '../../server/http/console/routes.ts';
import { csrfToken, sessionCookie } from '../../server/http/console/session.ts';
import { personaRequest } from '../../server/http/console/playground.tsx';
import type { Runtime } from '../../server/runtime.ts';
import { createLogger } from '../../server/logger.ts';
import { openFolderRuntime } from '../support/folder-runtime.ts';
import { tempDir } from '../support/harness.ts';

const PUBLIC_URL = 'http://console.test';
let runtime: Runtime;
let server: Server;
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
  const app = express();
  app.use(
    consoleRouter({
      publicUrl: PUBLIC_URL,
      box: runtime.box,
      bridge: runtime.bridge,
      store: runtime.opened.store,
      service: runtime.service,
      queue: runtime.opened.queue,
      modules: runtime.modules,
      log: createLogger('silent'),
    }),
  );
  server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const session = await runtime.bridge.consoleSessions.create({ kind: 'operator' });
  cookie = sessionCookie(runtime.box, PUBLIC_URL, session.id).split(';')[0] ?? '';
  csrf = csrfToken(session.id);
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
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
    const session = await runtime.bridge.consoleSessions.create({ kind: 'installation', installationId: installation.id });
    const who = async (person?: string) => {
      const sealed = sessionCookie(runtime.box, PUBLIC_URL, session.id, person).split(';')[0] ?? '';
      const page = await (await fetch(`${url}/console/installations/${installation.id}`, { headers: { cookie: sealed } })).text();
      return /<span class="who" id="who">([\s\S]*?)<\/span><form/.exec(page)?.[1]?.replace(/<[^>]+>/g, '');
    };
    expect(await who('jane@example.org')).toBe('Signed in: HubSpot portal 22334455 · jane@example.org');
    expect(await who()).toBe('Signed in: HubSpot portal 22334455 · one-time link');
  });
});
