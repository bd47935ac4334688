// Regenerates the generated files of manifests/hubspot/ from the code: the contact property
// definitions, the "Enrich contact" workflow action, and the public URL the record card calls (its
// config constant and the app's `permittedUrls.fetch`, which must list every URL hubspot.fetch calls). `npm run manifests:hubspot` writes them;
// `npm run manifests:hubspot -- --check` only reports (exit 1) when a file is out of date.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import { hubspotActionOutputDefinitions, hubspotActionOutputLabels } from '../connectors/hubspot/action-fields.ts';
import { HUBSPOT_PROPERTY_GROUP, hubspotProperties } from '../connectors/hubspot/fields.ts';
import { HUBSPOT_ENRICH_ACTION_ROUTE } from '../connectors/hubspot/paths.ts';

export const HUBSPOT_MANIFEST_DIR = path.resolve(import.meta.dirname, '../manifests/hubspot');

/** The operator replaces this with the host enrichbridge is reachable at (manifests/hubspot/README.md). */
export const PUBLIC_BASE_PLACEHOLDER = 'https://YOUR_PUBLIC_HOST';

export const PROPERTIES_MANIFEST = 'properties/contact-properties.json';
export const ENRICH_ACTION_MANIFEST = 'src/app/workflow-actions/enrich-contact-hsmeta.json';
export const APP_MANIFEST = 'src/app/app-hsmeta.json';
export const CARD_CONFIG = 'src/app/cards/config.ts';

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

/** properties/contact-properties.json: the group and every property enrichbridge provisions. */
export function renderPropertiesManifest(): string {
  return json({ group: HUBSPOT_PROPERTY_GROUP, properties: hubspotProperties() });
}

/** The "Enrich contact" workflow action: no inputs, the outputs of HUBSPOT_ACTION_OUTPUT_FIELDS. */
export function renderEnrichActionManifest(): string {
  return json({
    uid: 'enrichbridge_enrich_contact',
    type: 'workflow-action',
    config: {
      actionUrl: `${PUBLIC_BASE_PLACEHOLDER}${HUBSPOT_ENRICH_ACTION_ROUTE}`,
      isPublished: true,
      supportedClients: [{ client: 'WORKFLOWS' }],
      outputFields: hubspotActionOutputDefinitions(),
      objectTypes: ['CONTACT'],
      labels: {
        en: {
          actionName: 'Enrich contact',
          actionDescription:
            'Enriches the enrolled contact with Windfall household and career data, writes the Windfall properties, and outputs the match flags, net worth, job level and status for later branches.',
          actionCardContent: 'Enrich the contact with Windfall household and career data',
          outputFieldLabels: hubspotActionOutputLabels(),
        },
      },
    },
  });
}

/**
 * The record card's config: the public URL its hubspot.fetch calls go to (the same placeholder as every
 * other URL here, which the operator replaces with the server's PUBLIC_URL before uploading: README),
 * and our properties, which the card reads itself and sends with its view request.
 */
export function renderCardConfig(): string {
  const names = hubspotProperties().map((property) => `  '${property.name}',`);
  return [
    '// Written by `npm run manifests:hubspot` (scripts/hubspot-manifest.ts): edit the script, not this file.',
    "// enrichbridge's public URL (its PUBLIC_URL), which every hubspot.fetch call of the card goes to; the",
    "// app's permittedUrls.fetch (app-hsmeta.json) lists the same URL.",
    `export const ENRICHBRIDGE_PUBLIC_URL = '${PUBLIC_BASE_PLACEHOLDER}';`,
    '',
    "// The contact properties enrichbridge manages: the card reads them with HubSpot's own call",
    '// (fetchCrmObjectProperties) and sends them with its view request, so a view costs no call on the',
    "// portal's API budget.",
    'export const ENRICHBRIDGE_PROPERTIES: readonly string[] = [',
    ...names,
    '];',
    '',
  ].join('\n');
}

/** app-hsmeta.json as written by hand, with `permittedUrls.fetch` set to the URL the card calls. */
export function renderAppManifest(current: string): string {
  // Parsed as records, not objects, so the keys keep their order in the file.
  const app = z.record(z.string(), z.unknown()).parse(JSON.parse(current));
  const config = z.record(z.string(), z.unknown()).parse(app.config);
  const permittedUrls = z.record(z.string(), z.unknown()).optional().parse(config.permittedUrls);
  return json({ ...app, config: { ...config, permittedUrls: { ...permittedUrls, fetch: [PUBLIC_BASE_PLACEHOLDER] } } });
}

/** Each generated file, relative to HUBSPOT_MANIFEST_DIR, with the content it should have. */
export function generatedManifests(): ReadonlyMap<string, string> {
  return new Map([
    [PROPERTIES_MANIFEST, renderPropertiesManifest()],
    [ENRICH_ACTION_MANIFEST, renderEnrichActionManifest()],
    [APP_MANIFEST, renderAppManifest(readFileSync(path.join(HUBSPOT_MANIFEST_DIR, APP_MANIFEST), 'utf8'))],
    [CARD_CONFIG, renderCardConfig()],
  ]);
}

function main(check: boolean): number {
  let stale = 0;
  for (const [file, content] of generatedManifests()) {
    const target = path.join(HUBSPOT_MANIFEST_DIR, file);
    const current = existsSync(target) ? readFileSync(target, 'utf8') : null;
    if (current === content) continue;
    stale += 1;
    if (check) process.stderr.write(`out of date: manifests/hubspot/${file}\n`);
    else {
      writeFileSync(target, content);
      process.stdout.write(`wrote manifests/hubspot/${file}\n`);
    }
  }
  if (stale === 0) process.stdout.write('manifests/hubspot: up to date\n');
  return check && stale > 0 ? 1 : 0;
}

const invokedPath = process.argv[1];
if (invokedPath !== undefined && import.meta.url === pathToFileURL(invokedPath).href) {
  process.exitCode = main(process.argv.includes('--check'));
}
