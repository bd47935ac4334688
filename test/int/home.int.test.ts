// The server's root and favicon over real HTTP: a browser opening / is pointed to the console and the
// API document, an API client asking there still gets the JSON 404, and /favicon.ico is the icon
// committed beside the server's code, with a long cache.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestServer, startTestServer } from '../support/harness.ts';
import { REPO } from '../support/processes.ts';

/** What Chromium sends when a person opens a page. */
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

describe('GET /', () => {
  it('answers a browser with a page that links to the console and the API document', async () => {
    const response = await fetch(`${server.url}/`, { headers: { accept: BROWSER_ACCEPT } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.headers.get('vary')).toMatch(/Accept/);
    expect(response.headers.get('content-security-policy')).not.toContain('unsafe-inline');
    const html = await response.text();
    expect(html).toMatch(/<a id="to-console" href="console">/);
    expect(html).toMatch(/<a id="to-docs" href="openapi.json">/);
    expect(html).toContain('<link rel="icon" href="favicon.ico"');
  });

  it.each([
    ['application/json', 'application/json'],
    ['*/* (curl)', '*/*'],
    ['no Accept at all', undefined],
  ])('still answers an API client asking for %s with the JSON 404', async (_name, accept) => {
    const response = await fetch(`${server.url}/`, { headers: accept === undefined ? {} : { accept } });
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('vary')).toMatch(/Accept/);
    expect(await response.json()).toEqual({ error: 'not_found', message: 'Not found.' });
  });
});

describe('GET /favicon.ico', () => {
  it('answers the icon committed with the server, as an icon, cached for at least a day', async () => {
    const response = await fetch(`${server.url}/favicon.ico`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/x-icon');
    const maxAge = Number(/max-age=(\d+)/.exec(response.headers.get('cache-control') ?? '')?.[1] ?? 0);
    expect(maxAge).toBeGreaterThanOrEqual(86_400);
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(bytes.equals(readFileSync(path.join(REPO, 'server/http/assets/favicon.ico')))).toBe(true);
    // An ICO directory (reserved 0, type 1) of at least one image.
    expect([bytes.readUInt16LE(0), bytes.readUInt16LE(2)]).toEqual([0, 1]);
    expect(bytes.readUInt16LE(4)).toBeGreaterThan(0);
  });
});
