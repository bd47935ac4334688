// Every HubSpot call on the one date-based version: no numbered API path (`/crm/v3`, `/oauth/v1`,
// `/automation/v4`, `/settings/v3`, `/account-info/v3`) anywhere in shipped code, and every path the
// connector builds carries HUBSPOT_API_VERSION.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { HUBSPOT_API_VERSION, HUBSPOT_PATHS, NUMBERED_HUBSPOT_PATH } from '../../connectors/hubspot/version.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** What ships: the layers and the CLI's entry points (tests, benchmarks and docs do not). */
const SHIPPED = ['core', 'connectors', 'server', 'bin', 'manifests', 'scripts'];

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? filesUnder(full) : /\.(ts|js|mjs|json|md|sh|xml)$/.test(name) ? [full] : [];
  });
}

/** HubSpot API areas, numbered: the legacy paths that stop working in 2027. */
const LEGACY = /\/(?:crm|oauth|automation|settings|account-info|webhooks|properties|contacts|integrations|events)(?:\/[a-z-]+)*\/v\d+\b/g;
/** The one file that names the numbered paths, to say what they were and to recognise them. */
const DEFINES = path.join('connectors', 'hubspot', 'version.ts');

describe('the HubSpot API version', () => {
  it('is date-based, and names every path the connector calls', () => {
    expect(HUBSPOT_API_VERSION).toMatch(/^\d{4}-(03|09)$/);
    const built = [
      HUBSPOT_PATHS.property('x'),
      HUBSPOT_PATHS.group('x'),
      HUBSPOT_PATHS.user('1'),
      HUBSPOT_PATHS.journalEarliest(1),
      HUBSPOT_PATHS.journalNext('o', 1),
    ];
    const paths = [...Object.values(HUBSPOT_PATHS).filter((p) => typeof p === 'string'), ...built];
    expect(paths).toHaveLength(Object.keys(HUBSPOT_PATHS).length);
    for (const p of paths) {
      expect(p, p).toContain(`/${HUBSPOT_API_VERSION}/`.replace(/\/$/, ''));
      expect(NUMBERED_HUBSPOT_PATH.test(p), p).toBe(false);
    }
  });

  it('recognises the numbered paths it replaces', () => {
    for (const legacy of [
      '/oauth/v1/token',
      '/crm/v3/objects/contacts/batch/update',
      '/automation/v4/actions/callbacks/complete',
      '/settings/v3/users/1',
      '/account-info/v3/details',
      '/oauth/v1/access-tokens/x',
    ]) {
      expect(NUMBERED_HUBSPOT_PATH.test(legacy), legacy).toBe(true);
    }
  });

  it('finds no numbered HubSpot API path in shipped code', () => {
    const files = SHIPPED.flatMap((dir) => filesUnder(path.join(ROOT, dir))).filter((file) => path.relative(ROOT, file) !== DEFINES);
    expect(files.length).toBeGreaterThan(100);
    const found = files.flatMap((file) => [...readFileSync(file, 'utf8').matchAll(LEGACY)].map((m) => `${path.relative(ROOT, file)}: ${m[0]}`));
    expect(found).toEqual([]);
  });
});
