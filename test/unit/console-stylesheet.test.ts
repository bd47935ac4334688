// What the console's stylesheet promises: the chart's colours are classes (the CSP refuses inline
// styles), each with at least 3:1 against the white it is drawn on (WCAG 1.4.11, non-text contrast); and
// headings wrap between their words, never inside one, while ids may wrap anywhere.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { KINDS } from '../../server/http/console/outcome-chart.tsx';
import { CONSOLE_HEADERS } from '../../server/http/console/session.ts';

const css = readFileSync(path.join(import.meta.dirname, '../../server/http/console/assets/console.css'), 'utf8');

/** The declarations of the rule whose selector list is exactly `selector`. */
function rule(selector: string): string {
  const at = css.indexOf(`\n${selector} {`);
  if (at < 0) throw new Error(`no rule ${selector}`);
  return css.slice(at, css.indexOf('}', at));
}
const variables = Object.fromEntries([...css.matchAll(/--([\w-]+):\s*(#[0-9a-f]{6});/g)].map((m) => [m[1], m[2]]));
const colourOf = (declarations: string, property: string) => {
  const value = new RegExp(`${property}:\\s*([^;]+);`).exec(declarations)?.[1]?.trim() ?? '';
  const variable = /^var\(--([\w-]+)\)$/.exec(value)?.[1];
  return variable === undefined ? value : (variables[variable] ?? '');
};

function luminance(hex: string): number {
  const [r = 0, g = 0, b = 0] = [1, 3, 5].map((i) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
const contrastOnWhite = (hex: string) => 1.05 / (luminance(hex) + 0.05);

describe('the console stylesheet', () => {
  it("colours each of the chart's outcome kinds by a class, at least 3:1 against white, its swatch the same", () => {
    expect(CONSOLE_HEADERS['Content-Security-Policy']).toContain("style-src 'self'");
    expect(CONSOLE_HEADERS['Content-Security-Policy']).not.toContain('unsafe-inline');
    const fills = KINDS.map((kind) => colourOf(rule(`rect.k-${kind}`), 'fill'));
    for (const [i, fill] of fills.entries()) {
      expect(fill, KINDS[i]).toMatch(/^#[0-9a-f]{6}$/);
      expect(contrastOnWhite(fill), KINDS[i]).toBeGreaterThanOrEqual(3);
      expect(colourOf(rule(`.swatch.k-${KINDS[i]}`), 'background'), KINDS[i]).toBe(fill);
    }
    expect(new Set(fills).size).toBe(KINDS.length);
    // A white edge parts the stacked segments, so neighbours need no contrast with each other.
    expect(rule('.chart rect')).toContain('stroke: #fff');
  });

  it('wraps headings between their words, never inside one, and ids anywhere', () => {
    expect(rule('body')).toContain('overflow-wrap: break-word');
    expect(css).not.toMatch(/(^|\n)(body|h1|h2|h3|th|dt|legend|summary|caption)[^{]*\{[^}]*overflow-wrap: anywhere/);
    expect(css).not.toMatch(/hyphens: auto/);
    const headings = rule('h1,\nh2,\nh3,\nth,\ndt,\nlegend,\nsummary,\ncaption');
    expect(headings).toContain('overflow-wrap: break-word');
    expect(headings).toContain('hyphens: manual');
    expect(rule('bdi,\ncode')).toContain('overflow-wrap: anywhere');
  });
});
