// A real browser for the console's tests: Debian's Chromium (/usr/bin/chromium, installed by .ci/run
// when missing) driven by playwright-core, headless, with the flags DESIGN.md gives (no sandbox as
// root, nothing fetched from the network), and a fresh profile each launch.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { type Browser, type Page, chromium } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium (.ci/run does), or set CHROMIUM_PATH`);
  }
  // playwright gives every launch a new temporary profile (--user-data-dir) of its own.
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS, timeout: 30_000 });
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  readonly id: string;
  readonly impact: string | null;
  readonly help: string;
  readonly nodes: number;
}

/**
 * axe-core's serious and critical violations on the page as it is. The script is added through the
 * DevTools protocol (a page's own CSP forbids inline scripts, and must keep doing so).
 */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  const results = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as {
        axe: { run: (context: unknown) => Promise<{ violations: { id: string; impact: string | null; help: string; nodes: unknown[] }[] }> };
      }
    ).axe;
    const run = await axe.run((globalThis as unknown as { document: unknown }).document);
    return run.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length }));
  });
  return results.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** Where the console's screenshots go (docs/console.md names it); each page at 360 and 1440 px wide. */
export const SCREENSHOT_DIR = path.resolve(import.meta.dirname, '../../screenshots/console');

export async function screenshotAtWidths(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  for (const width of [360, 1440]) {
    await page.setViewportSize({ width, height: 900 });
    writeFileSync(path.join(SCREENSHOT_DIR, `${name}-${width}.png`), await settledScreenshot(page));
  }
}

/**
 * A full-page screenshot, taken again once the page has loaded when it reloaded meanwhile: a live page
 * (a backfill's progress) reloads itself on a new phase, and a screenshot caught in that reload can
 * wait for a frame that never comes (seen on a busy machine: 30 s, then a timeout).
 */
async function settledScreenshot(page: Page): Promise<Buffer> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await page.screenshot({ fullPage: true, timeout: 10_000 });
    } catch (error) {
      if (attempt === 3) throw error;
      await page.waitForLoadState('load');
    }
  }
}

/**
 * The page's links, buttons and form fields that Tab never reaches from the top of the page (each by
 * its tag and text or name): empty when every control is keyboard reachable. Tabs through the page
 * once round (until focus comes back to an element already seen, or 200 presses).
 */
export async function unreachableByKeyboard(page: Page): Promise<string[]> {
  const describe = `(el) => el.tagName.toLowerCase() + ':' + ((el.getAttribute('name') ?? '') || (el.textContent ?? '').trim().slice(0, 40))`;
  const controls: string[] = await page.evaluate(
    `[...document.querySelectorAll('a[href], button, input:not([type=hidden]), select, textarea')].filter((el) => el.getClientRects().length > 0).map(${describe})`,
  );
  await page.evaluate('document.activeElement?.blur?.(); window.scrollTo(0, 0)');
  const reached = new Set<string>();
  for (let i = 0; i < 200; i += 1) {
    await page.keyboard.press('Tab');
    const focused: string | null = await page.evaluate(
      `document.activeElement && document.activeElement !== document.body ? (${describe})(document.activeElement) : null`,
    );
    if (focused === null) continue;
    if (reached.has(focused) && reached.size >= controls.length) break;
    reached.add(focused);
  }
  return controls.filter((control) => !reached.has(control));
}
