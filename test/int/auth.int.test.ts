// The spec's Authentication section over real HTTP: the X-WF-Auth-Token header, 401 and 403, the
// sandbox_ prefix, tokens stored only as hashes, revocation, and HTTPS enforcement behind a proxy.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeToken } from '../../core/accounts/admin.ts';
import { hashToken } from '../../core/accounts/tokens.ts';
import { type TestServer, post, startTestServer } from '../support/harness.ts';
import { UNTHROTTLED, byEmail, persona, sleep } from '../support/requests.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

const amanda = persona('Amanda Taylor');

describe('Authentication rules 1 and 5: every request carries X-WF-Auth-Token; missing or invalid gives 401', () => {
  it('answers a missing, empty or unknown token with 401 on both endpoints', async () => {
    for (const url of [`${server.url}/v1/`, `${server.url}/sandbox/v1`]) {
      for (const headers of [{}, { 'X-WF-Auth-Token': '' }, { 'X-WF-Auth-Token': 'sandbox_nope' }, { 'X-WF-Auth-Token': 'prod_nope' }]) {
        const reply = await post(url, byEmail(amanda), headers);
        expect(reply.status, `${url} ${JSON.stringify(headers)}`).toBe(401);
      }
    }
    const reply = await post(`${server.url}/v1/`, {}, { 'X-WF-Auth-Token': 'nope' });
    expect(reply.body).toEqual({ error: 'unauthorized', message: 'Invalid or revoked X-WF-Auth-Token.' });
  });
});

describe('Authentication rule 6: sandbox tokens begin with sandbox_', () => {
  it('issues sandbox tokens with the prefix and production tokens without it', async () => {
    const sandbox = await server.account('auth-prefix', {}, 'sandbox');
    const production = await server.token('auth-prefix', 'production');
    expect(sandbox).toMatch(/^sandbox_[A-Za-z0-9_-]{43}$/);
    expect(production.startsWith('sandbox_')).toBe(false);
  });
});

describe('Authentication rule 7: a token used on the other environment gives 403', () => {
  it('refuses a production token on the sandbox and a sandbox token on production', async () => {
    const sandbox = await server.account('auth-env', { ...UNTHROTTLED }, 'sandbox');
    const production = await server.token('auth-env', 'production');
    const onSandbox = await post(`${server.url}/sandbox/v1`, byEmail(amanda), { 'X-WF-Auth-Token': production });
    expect(onSandbox.status).toBe(403);
    expect(onSandbox.body).toEqual({ message: expect.any(String) });
    const onProduction = await post(`${server.url}/v1/`, byEmail(amanda), { 'X-WF-Auth-Token': sandbox });
    expect(onProduction.status).toBe(403);
    expect(onProduction.body).toEqual({ error: 'forbidden_environment', message: expect.any(String) });
  });

  it('reports the rate limit on a 403 without charging the wrong-environment call to it', async () => {
    const sandbox = await server.account('auth-env-rate', {}, 'sandbox');
    for (let i = 0; i < 8; i += 1) {
      const refused = await post(`${server.url}/v1/`, {}, { 'X-WF-Auth-Token': sandbox });
      expect(refused.status).toBe(403);
      expect(refused.headers.get('ratelimit-limit')).toBe('5');
    }
    const replies = await Promise.all(Array.from({ length: 5 }, () => post(`${server.url}/sandbox/v1`, {}, { 'X-WF-Auth-Token': sandbox })));
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
  });
});

describe('Tokens are stored only as a hash and are revocable', () => {
  it('keeps no token text in the database file, only its SHA-256', async () => {
    const token = await server.account('auth-hash', {}, 'production');
    const file = readFileSync(server.dbFile).toString('latin1') + readFileSync(`${server.dbFile}-wal`).toString('latin1');
    expect(file.includes(token)).toBe(false);
    expect(file.includes(hashToken(token))).toBe(true);
  });

  it('refuses a revoked token within a second', async () => {
    const token = await server.account('auth-revoke', {}, 'sandbox');
    expect((await post(`${server.url}/sandbox/v1`, {}, { 'X-WF-Auth-Token': token })).status).toBe(200);
    await revokeToken(server.store, token);
    const deadline = Date.now() + 1000;
    let status = 200;
    while (Date.now() < deadline && status === 200) {
      await sleep(50);
      status = (await post(`${server.url}/sandbox/v1`, {}, { 'X-WF-Auth-Token': token })).status;
    }
    expect(status).toBe(401);
  });
});

describe('Authentication rule 3: all requests must use HTTPS', () => {
  it('answers plain HTTP with 403 https_required when HTTPS is required', async () => {
    const strict = await startTestServer({ requireHttps: true });
    const token = await strict.account('auth-https', {}, 'production');
    const sandbox = await strict.token('auth-https', 'sandbox');
    const production = await post(`${strict.url}/v1/`, {}, { 'X-WF-Auth-Token': token });
    expect(production.status).toBe(403);
    expect(production.body).toEqual({ error: 'https_required', message: 'HTTPS is required.' });
    const sandboxReply = await post(`${strict.url}/sandbox/v1`, {}, { 'X-WF-Auth-Token': sandbox });
    expect(sandboxReply.status).toBe(403);
    expect(sandboxReply.body).toEqual({ message: 'HTTPS is required.' });
    // An X-Forwarded-Proto from a client that is not a configured proxy is not believed.
    const spoofed = await post(`${strict.url}/sandbox/v1`, {}, { 'X-WF-Auth-Token': sandbox, 'X-Forwarded-Proto': 'https' });
    expect(spoofed.status).toBe(403);
    await strict.close();
  });

  it('trusts X-Forwarded-Proto only from a configured proxy', async () => {
    const proxied = await startTestServer({ requireHttps: true, trustProxy: 'loopback' });
    const sandbox = await proxied.account('auth-proxy', {}, 'sandbox');
    const viaProxy = await post(`${proxied.url}/sandbox/v1`, byEmail(amanda), { 'X-WF-Auth-Token': sandbox, 'X-Forwarded-Proto': 'https' });
    expect(viaProxy.status).toBe(200);
    const plain = await post(`${proxied.url}/sandbox/v1`, byEmail(amanda), { 'X-WF-Auth-Token': sandbox, 'X-Forwarded-Proto': 'http' });
    expect(plain.status).toBe(403);
    await proxied.close();
  });
});
