// manifests/hubspot/ is data the code depends on: these tests keep it in sync with the code. The
// properties and the workflow action are generated from the code, the app declares exactly the scopes
// the code asks for, the webhooks subscribe to exactly the identity properties, and every URL points
// at a route the server mounts from connectors/hubspot/paths.ts.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HUBSPOT_ACTION_OUTPUT_FIELDS, hubspotActionOutputDefinitions, hubspotActionOutputs } from '../../connectors/hubspot/action-fields.ts';
import { HUBSPOT_PROPERTY_GROUP, formatHubSpotValue, hubspotProperties, hubspotPropertyFor } from '../../connectors/hubspot/fields.ts';
import type { FieldValue } from '../../bridge/connector.ts';
import { HUBSPOT_ENRICH_ACTION_ROUTE, HUBSPOT_OAUTH_CALLBACK_ROUTE, HUBSPOT_WEBHOOK_ROUTE } from '../../connectors/hubspot/paths.ts';
import { HUBSPOT_IDENTITY_PROPERTIES, HUBSPOT_OPTIONAL_SCOPES, HUBSPOT_REQUIRED_SCOPES, HUBSPOT_SIGN_IN_SCOPES } from '../../connectors/hubspot/scopes.ts';
import { fieldsFromResponse } from '../../bridge/write-policy.ts';
import { PERSONAS } from '../../core/sandbox/personas.ts';
import {
  CARD_CONFIG,
  ENRICH_ACTION_MANIFEST,
  HUBSPOT_MANIFEST_DIR,
  PROPERTIES_MANIFEST,
  PUBLIC_BASE_PLACEHOLDER,
  generatedManifests,
} from '../../scripts/hubspot-manifest.ts';

const read = (file: string): string => readFileSync(path.join(HUBSPOT_MANIFEST_DIR, file), 'utf8');
const parse = <T extends z.ZodType>(schema: T, file: string): z.infer<T> => schema.parse(JSON.parse(read(file)));

const Subscription = z.object({ subscriptionType: z.string(), propertyName: z.string().optional(), active: z.boolean() }).strict();

const HsProject = z.object({ name: z.string().min(1), srcDir: z.literal('src'), platformVersion: z.literal('2025.2') }).strict();

const App = z.object({
  uid: z.string().min(1),
  type: z.literal('app'),
  config: z.object({
    name: z.string().min(1),
    description: z.string().min(1),
    distribution: z.literal('marketplace'),
    auth: z
      .object({
        type: z.literal('oauth'),
        redirectUrls: z.array(z.string()),
        requiredScopes: z.array(z.string()),
        optionalScopes: z.array(z.string()),
        conditionallyRequiredScopes: z.array(z.string()),
      })
      .strict(),
    permittedUrls: z.object({ fetch: z.array(z.string()), iframe: z.array(z.string()), img: z.array(z.string()) }).strict(),
    support: z.object({ supportEmail: z.string().min(1) }),
  }),
});

const Webhooks = z.object({
  uid: z.string().min(1),
  type: z.literal('webhooks'),
  config: z.object({
    settings: z.object({ targetUrl: z.string(), maxConcurrentRequests: z.number().int() }).strict(),
    subscriptions: z
      .object({ legacyCrmObjects: z.array(Subscription), hubEvents: z.array(Subscription), crmObjects: z.array(Subscription).optional() })
      .strict(),
  }),
});

const Option = z.object({ label: z.string(), value: z.string() }).strict();
const WorkflowAction = z.object({
  uid: z.string().min(1),
  type: z.literal('workflow-action'),
  config: z
    .object({
      actionUrl: z.string(),
      isPublished: z.boolean(),
      supportedClients: z.array(z.object({ client: z.string() })),
      inputFields: z.array(z.object({ isRequired: z.boolean() }).loose()).optional(),
      outputFields: z.array(
        z.object({
          typeDefinition: z.object({ name: z.string(), type: z.string(), fieldType: z.string(), options: z.array(Option).optional() }).strict(),
        }),
      ),
      objectTypes: z.array(z.string()),
      labels: z.object({
        en: z.object({
          actionName: z.string().min(1),
          actionDescription: z.string().min(1),
          actionCardContent: z.string().min(1),
          outputFieldLabels: z.record(z.string(), z.string()),
        }),
      }),
    })
    .strict(),
});

const PropertiesFile = z.object({ group: z.object({ name: z.string(), label: z.string() }), properties: z.array(z.unknown()) }).strict();

const Card = z.object({
  uid: z.string().min(1),
  type: z.literal('card'),
  config: z
    .object({
      name: z.string().min(1),
      description: z.string().min(1),
      location: z.literal('crm.record.sidebar'),
      entrypoint: z.string(),
      objectTypes: z.array(z.string()),
    })
    .strict(),
});

const APP = 'src/app/app-hsmeta.json';
const CARD = 'src/app/cards/enrichment-card-hsmeta.json';
const WEBHOOKS = 'src/app/webhooks/webhooks-hsmeta.json';

describe('HubSpot project files', () => {
  it('parse as JSON, with one hsproject.json for platform version 2025.2', () => {
    expect(parse(HsProject, 'hsproject.json').platformVersion).toBe('2025.2');
    const files = readdirSync(HUBSPOT_MANIFEST_DIR, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.json'));
    expect(files.length).toBeGreaterThanOrEqual(5);
    for (const file of files) expect(() => JSON.parse(read(file)), file).not.toThrow();
  });

  it('give every component its own uid', () => {
    const uids = [parse(App, APP).uid, parse(Webhooks, WEBHOOKS).uid, parse(WorkflowAction, ENRICH_ACTION_MANIFEST).uid, parse(Card, CARD).uid];
    expect(new Set(uids).size).toBe(uids.length);
  });

  it('are regenerated from the code (npm run manifests:hubspot)', () => {
    for (const [file, content] of generatedManifests()) expect(read(file), `manifests/hubspot/${file} is stale`).toBe(content);
  });
});

describe('properties/contact-properties.json', () => {
  it('holds exactly the group and hubspotProperties()', () => {
    const file = parse(PropertiesFile, PROPERTIES_MANIFEST);
    expect(file.group).toEqual(HUBSPOT_PROPERTY_GROUP);
    expect(file.properties).toEqual(hubspotProperties());
  });
});

describe('src/app/app-hsmeta.json', () => {
  const app = parse(App, APP);

  it('declares exactly the scopes the code requests', () => {
    expect(app.config.auth.requiredScopes).toEqual([...HUBSPOT_REQUIRED_SCOPES]);
    // The install's optional scopes, then those only a console sign-in asks for (HubSpot grants only declared ones).
    expect(app.config.auth.optionalScopes).toEqual([...HUBSPOT_OPTIONAL_SCOPES, ...HUBSPOT_SIGN_IN_SCOPES]);
    expect(app.config.auth.conditionallyRequiredScopes).toEqual([]);
    const all = [...app.config.auth.requiredScopes, ...app.config.auth.optionalScopes];
    expect(new Set(all).size).toBe(all.length);
  });

  it('requests what contacts, properties and workflow callbacks need', () => {
    expect(HUBSPOT_REQUIRED_SCOPES).toEqual(
      expect.arrayContaining(['oauth', 'crm.objects.contacts.read', 'crm.objects.contacts.write', 'crm.schemas.contacts.read', 'crm.schemas.contacts.write']),
    );
    // POST /automation/actions/callbacks/{version}/complete requires `automation`.
    expect([...HUBSPOT_REQUIRED_SCOPES, ...HUBSPOT_OPTIONAL_SCOPES]).toContain('automation');
  });

  it('never requests a sensitive-data scope (they forbid hubspot.fetch, which the record card needs)', () => {
    const all = [...app.config.auth.requiredScopes, ...app.config.auth.optionalScopes, ...app.config.auth.conditionallyRequiredScopes];
    expect(all.filter((scope) => /sensitive/i.test(scope))).toEqual([]);
  });

  it('redirects OAuth to the callback route, on the placeholder host', () => {
    expect(app.config.auth.redirectUrls).toEqual([`${PUBLIC_BASE_PLACEHOLDER}${HUBSPOT_OAUTH_CALLBACK_ROUTE}`]);
    expect(app.config.auth.redirectUrls[0]?.endsWith(HUBSPOT_OAUTH_CALLBACK_ROUTE)).toBe(true);
  });
});

describe('src/app/cards/', () => {
  const card = parse(Card, CARD).config;

  it('puts the card in the contact record sidebar, with an entry point that exists in the folder', () => {
    expect(card.objectTypes).toEqual(['contacts']);
    expect(card.entrypoint).toMatch(/^\/app\/cards\/[^/]+\.tsx$/);
    expect(() => read(`src${card.entrypoint}`)).not.toThrow();
  });

  it('lets the card fetch from exactly the public URL its config calls', () => {
    expect(parse(App, APP).config.permittedUrls.fetch).toEqual([PUBLIC_BASE_PLACEHOLDER]);
    expect(read(CARD_CONFIG)).toContain(`'${PUBLIC_BASE_PLACEHOLDER}'`);
  });

  it('builds with the React and @hubspot/ui-extensions versions HubSpot pairs (react exactly 18.3.1)', () => {
    const cardPackage = z
      .object({ dependencies: z.record(z.string(), z.string()) })
      .loose()
      .parse(JSON.parse(read('src/app/cards/package.json')));
    expect(cardPackage.dependencies).toEqual({ '@hubspot/ui-extensions': '0.17.0', react: '18.3.1' });
  });
});

describe('src/app/webhooks/webhooks-hsmeta.json', () => {
  const webhooks = parse(Webhooks, WEBHOOKS);
  const { legacyCrmObjects, hubEvents, crmObjects } = webhooks.config.subscriptions;

  it('sends webhooks to the webhook route, at most 10 at a time', () => {
    expect(webhooks.config.settings.targetUrl).toBe(`${PUBLIC_BASE_PLACEHOLDER}${HUBSPOT_WEBHOOK_ROUTE}`);
    expect(webhooks.config.settings.targetUrl.endsWith(HUBSPOT_WEBHOOK_ROUTE)).toBe(true);
    expect(webhooks.config.settings.maxConcurrentRequests).toBe(10);
  });

  it('subscribes to a property change on exactly the identity properties', () => {
    const changes = legacyCrmObjects.filter((s) => s.subscriptionType === 'contact.propertyChange').map((s) => s.propertyName);
    expect([...changes].sort()).toEqual([...HUBSPOT_IDENTITY_PROPERTIES].sort());
    expect(new Set(changes).size).toBe(changes.length);
    expect(HUBSPOT_IDENTITY_PROPERTIES).toHaveLength(11);
  });

  it('subscribes to creation, deletion, merge and privacy deletion in the contact.* form', () => {
    const types = legacyCrmObjects.filter((s) => s.subscriptionType !== 'contact.propertyChange').map((s) => s.subscriptionType);
    expect([...types].sort()).toEqual(['contact.creation', 'contact.deletion', 'contact.merge']);
    expect(hubEvents.map((s) => s.subscriptionType)).toEqual(['contact.privacyDeletion']);
    // object.* subscriptions would deliver a different payload shape than the intake parses.
    expect(crmObjects ?? []).toEqual([]);
    for (const s of [...legacyCrmObjects, ...hubEvents]) {
      expect(s.active, s.subscriptionType).toBe(true);
      expect(s.propertyName === undefined, s.subscriptionType).toBe(s.subscriptionType !== 'contact.propertyChange');
    }
  });
});

describe('src/app/workflow-actions/enrich-contact-hsmeta.json', () => {
  const action = parse(WorkflowAction, ENRICH_ACTION_MANIFEST).config;

  it('is an "Enrich contact" action for contacts at the action route, with no required input', () => {
    expect(action.actionUrl).toBe(`${PUBLIC_BASE_PLACEHOLDER}${HUBSPOT_ENRICH_ACTION_ROUTE}`);
    expect(action.actionUrl.endsWith(HUBSPOT_ENRICH_ACTION_ROUTE)).toBe(true);
    expect(action.objectTypes).toEqual(['CONTACT']);
    expect(action.supportedClients).toEqual([{ client: 'WORKFLOWS' }]);
    expect(action.labels.en.actionName).toBe('Enrich contact');
    expect((action.inputFields ?? []).filter((f) => f.isRequired)).toEqual([]);
  });

  it('outputs exactly HUBSPOT_ACTION_OUTPUT_FIELDS, typed like the properties of the same keys', () => {
    const names = HUBSPOT_ACTION_OUTPUT_FIELDS.map((f) => f.name);
    expect(action.outputFields.map((f) => f.typeDefinition.name)).toEqual(names);
    expect(action.outputFields).toEqual(hubspotActionOutputDefinitions());
    expect(Object.keys(action.labels.en.outputFieldLabels)).toEqual(names);
    const properties = new Map(hubspotProperties().map((p) => [p.name, p]));
    for (const { name, key } of HUBSPOT_ACTION_OUTPUT_FIELDS) {
      const output = action.outputFields.find((f) => f.typeDefinition.name === name)?.typeDefinition;
      const property = properties.get(hubspotPropertyFor(key) ?? '');
      expect(output?.type, name).toBe(property?.type);
      expect(output?.fieldType, name).toBe(property?.fieldType);
    }
  });

  it('offers the outputs a workflow branches on', () => {
    expect(HUBSPOT_ACTION_OUTPUT_FIELDS.map((f) => f.name)).toEqual([
      'household_matched',
      'career_matched',
      'net_worth',
      'job_level',
      'job_title',
      'windfall_id',
      'confidence',
      'enrichment_status',
    ]);
    const type = (name: string) => action.outputFields.find((f) => f.typeDefinition.name === name)?.typeDefinition.type;
    expect(type('household_matched')).toBe('bool');
    expect(type('career_matched')).toBe('bool');
    expect(type('net_worth')).toBe('number');
    expect(type('enrichment_status')).toBe('enumeration');
  });
});

describe('workflow action output values', () => {
  const enrichedAt = new Date('2026-01-02T03:04:05.678Z');
  /** The contact's properties after an enrichment wrote these field values, as HubSpot holds them. */
  const written = (values: ReadonlyMap<string, FieldValue>) =>
    Object.fromEntries([...values].map(([key, value]) => [hubspotPropertyFor(key) ?? key, formatHubSpotValue(key, value)]));

  it('carry the matched flags, net worth, job level and status of an enrichment, formatted as the properties', () => {
    const amanda = PERSONAS.find((p) => p.email === 'amanda.taylor@sandbox.windfall.com');
    if (amanda?.household === undefined || amanda.career === undefined) throw new Error('persona 1 has household and career');
    const fields = fieldsFromResponse({ household_matched: true, career_matched: true, household: amanda.household, career: amanda.career }, 0, enrichedAt);
    expect(hubspotActionOutputs(written(fields.values))).toEqual({
      household_matched: 'true',
      career_matched: 'true',
      net_worth: String(amanda.household.net_worth),
      job_level: amanda.career.job_level,
      job_title: amanda.career.job_title,
      windfall_id: amanda.household.windfall_id,
      confidence: String(amanda.household.confidence),
      enrichment_status: 'enriched',
    });
  });

  it('leave out what a no-match does not have', () => {
    const fields = fieldsFromResponse({ household_matched: false, career_matched: false }, 0, enrichedAt);
    expect(hubspotActionOutputs(written(fields.values))).toEqual({
      household_matched: 'false',
      career_matched: 'false',
      enrichment_status: 'no_match',
    });
  });
});

describe('manifests/hubspot/README.md', () => {
  const readme = read('README.md');

  it('names every scope, identity property and output field the manifests declare', () => {
    for (const word of [...HUBSPOT_REQUIRED_SCOPES, ...HUBSPOT_OPTIONAL_SCOPES, ...HUBSPOT_SIGN_IN_SCOPES, ...HUBSPOT_IDENTITY_PROPERTIES]) {
      expect(readme, word).toContain(`\`${word}\``);
    }
    for (const { name } of HUBSPOT_ACTION_OUTPUT_FIELDS) expect(readme, name).toContain(`\`${name}\``);
    expect(readme).toContain('YOUR_PUBLIC_HOST');
    expect(readme).toContain('hs project upload');
  });
});
