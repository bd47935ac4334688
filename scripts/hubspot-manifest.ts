// Regenerates the generated files of manifests/hubspot/ from the code: the contact property
// definitions and the "Enrich contact" workflow action. `npm run manifests:hubspot` writes them;
// `npm run manifests:hubspot -- --check` only reports (exit 1) when a file is out of date.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { hubspotActionOutputDefinitions, hubspotActionOutputLabels } from '../connectors/hubspot/action-fields.ts';
import { HUBSPOT_PROPERTY_GROUP, hubspotProperties } from '../connectors/hubspot/fields.ts';
import { HUBSPOT_ENRICH_ACTION_ROUTE } from '../connectors/hubspot/paths.ts';

export const HUBSPOT_MANIFEST_DIR = path.resolve(import.meta.dirname, '../manifests/hubspot');

/** The operator replaces this with the host enrichbridge is reachable at (manifests/hubspot/README.md). */
export const PUBLIC_BASE_PLACEHOLDER = 'https://YOUR_PUBLIC_HOST';

export const PROPERTIES_MANIFEST = 'properties/contact-properties.json';
export const ENRICH_ACTION_MANIFEST = 'src/app/workflow-actions/enrich-contact-hsmeta.json';

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

/** Each generated file, relative to HUBSPOT_MANIFEST_DIR, with the content it should have. */
export function generatedManifests(): ReadonlyMap<string, string> {
  return new Map([
    [PROPERTIES_MANIFEST, renderPropertiesManifest()],
    [ENRICH_ACTION_MANIFEST, renderEnrichActionManifest()],
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
