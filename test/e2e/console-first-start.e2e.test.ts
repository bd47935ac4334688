// The console as a newcomer meets it, with the README only: `npm start` on a fresh data folder and no
// PUBLIC_URL (outside production mode it defaults to the address the server listens on), the
// first-start banner's operator link and the command it names, a browser opening / pointed to the
// console and the API document, and the favicon every page asks for. Debian's Chromium through
// playwright-core.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext } from 'playwright-core';
import { seriousViolations } from '../support/chromium.ts';
import { startServerAndBrowser } from '../support/console-portal.ts';
import { tempDir } from '../support/harness.ts';
import { type Proc, cli } from '../support/processes.ts';

const dataDir = tempDir('enrichbridge-first-start-');
let server: Proc;
let url = '';
let browser: Browser;

beforeAll(async () => {
  ({ server, url, browser } = await startServerAndBrowser({ DATA_DIR: dataDir, WORKER_CONCURRENCY: '0' }));
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** The responses of 400 and above a browser context saw, by address. */
function failuresOf(context: BrowserContext): string[] {
  const failed: string[] = [];
  context.on('response', (response) => {
    if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
  });
  return failed;
}

describe('npm start, then the console, with nothing configured', () => {
  it('serves the console at the address the server listens on, and the banner prints a one-time operator link that signs in', async () => {
    const link = (await server.waitFor(/^\s*console: (http\S+)$/m))[1] ?? '';
    expect(new URL(link).origin).toBe(url);
    const context = await browser.newContext();
    const page = await context.newPage();
    // Not "Console not configured": the sign-in page.
    expect((await page.goto(`${url}/console`))?.status()).toBe(200);
    expect(await page.textContent('main')).not.toContain('not configured');
    expect((await page.goto(link))?.status()).toBe(200);
    expect(await page.textContent('h1')).toBe('Installations');
    await context.close();
  });

  it('names the command that prints a new link, with the PUBLIC_URL the server took, and that command works', async () => {
    const command = (await server.waitFor(/^A new link later: (.+)$/m))[1] ?? '';
    const match = /^PUBLIC_URL=(\S+) npx enrichbridge (console-link --operator)$/.exec(command);
    expect(match?.[1]).toBe(url);
    const { stdout } = await cli((match?.[2] ?? '').split(' '), { DATA_DIR: dataDir, PUBLIC_URL: match?.[1] ?? '' });
    const context = await browser.newContext();
    const page = await context.newPage();
    expect((await page.goto(stdout.trim()))?.status()).toBe(200);
    expect(await page.textContent('h1')).toBe('Installations');
    await context.close();
  });

  it('points a browser opening / to the console and the API document, with its favicon and no 404 on the way', async () => {
    const context = await browser.newContext();
    const failed = failuresOf(context);
    const page = await context.newPage();
    expect((await page.goto(`${url}/`))?.status()).toBe(200);
    expect(await seriousViolations(page)).toEqual([]);
    expect(await page.getAttribute('#to-docs', 'href')).toBe('openapi.json');
    expect((await page.goto(`${url}/openapi.json`))?.status()).toBe(200);
    await page.goto(`${url}/`);
    await Promise.all([page.waitForNavigation(), page.click('#to-console')]);
    expect(new URL(page.url()).pathname).toBe('/console');
    // The console's layout links the icon; the browser decodes what it gets there.
    const icon = await page.getAttribute('link[rel=icon]', 'href');
    expect(icon).toBe('/favicon.ico');
    // A string: the tests' types know no DOM.
    const width: number = await page.evaluate(
      `(async () => { const image = new Image(); image.src = ${JSON.stringify(icon)}; await image.decode(); return image.naturalWidth; })()`,
    );
    expect(width).toBeGreaterThanOrEqual(16);
    expect(failed).toEqual([]);
    await context.close();
  });
});
