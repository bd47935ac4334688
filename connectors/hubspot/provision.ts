// Property provisioning on install: the `enrichbridge` group and one contact property per field,
// idempotently. What exists is left alone when it matches and updated when its label, description
// or options drifted; what is missing is created in one batch call; a 409 (created meanwhile by
// another install attempt) counts as "exists". Nothing is ever duplicated.
import { z } from 'zod';
import { HubSpotApi, HubSpotApiError, Ignored } from './api.ts';
import { HUBSPOT_PROPERTY_GROUP, type HubSpotPropertyDefinition, hubspotProperties } from './fields.ts';
import { HUBSPOT_PATHS } from './version.ts';

export interface ProvisionReport {
  readonly groupCreated: boolean;
  readonly created: readonly string[];
  readonly updated: readonly string[];
  readonly unchanged: readonly string[];
  /** Exists with another type: HubSpot does not allow changing it, so it is reported, not touched. */
  readonly conflicting: readonly string[];
}

interface ExistingProperty {
  readonly name: string;
  readonly label: string;
  readonly description: string;
  readonly type: string;
  readonly fieldType: string;
  readonly groupName: string;
  readonly options: readonly { label: string; value: string }[];
}

function sameOptions(definition: HubSpotPropertyDefinition, existing: ExistingProperty): boolean {
  const wanted = (definition.options ?? []).map((o) => `${o.value}=${o.label}`).sort();
  const have = existing.options.map((o) => `${o.value}=${o.label}`).sort();
  return wanted.length === have.length && wanted.every((w, i) => w === have[i]);
}

/** The property as HubSpot's create and update calls take it (`PropertyCreate`), in HubSpot's own type and fieldType strings. */
function input(definition: HubSpotPropertyDefinition) {
  return {
    name: definition.name,
    label: definition.label,
    description: definition.description,
    groupName: definition.groupName,
    type: definition.type,
    fieldType: definition.fieldType,
    displayOrder: definition.displayOrder,
    formField: definition.formField,
    ...(definition.options === undefined
      ? {}
      : { options: definition.options.map((o) => ({ label: o.label, value: o.value, hidden: false, displayOrder: o.displayOrder ?? 0 })) }),
  };
}

// `Property` and its list, batch and group answers, as far as provisioning reads them.
const PropertySchema = z
  .object({
    name: z.string(),
    label: z.string(),
    description: z.string().default(''),
    type: z.string(),
    fieldType: z.string(),
    groupName: z.string(),
    options: z.array(z.object({ label: z.string(), value: z.string() }).loose()).default([]),
  })
  .loose();
const PropertiesSchema = z.object({ results: z.array(PropertySchema) }).loose();
const GroupsSchema = z.object({ results: z.array(z.object({ name: z.string() }).loose()) }).loose();

/**
 * The portal's contact properties (not archived), by name. HubSpot lists only non-sensitive ones by
 * default: one of ours that the portal marked sensitive is missing here, and its create answers 409,
 * which counts as "exists".
 * Docs: https://developers.hubspot.com/docs/api-reference/latest/crm/properties/core/list-properties
 */
async function existingProperties(api: HubSpotApi): Promise<Map<string, ExistingProperty>> {
  const list = await api.call('list properties', { method: 'GET', path: HUBSPOT_PATHS.properties, query: { archived: 'false' } }, PropertiesSchema);
  return new Map<string, ExistingProperty>(list.results.map((p) => [p.name, { ...p, options: p.options.map((o) => ({ label: o.label, value: o.value })) }]));
}

/** Creates one property: POST …/properties/{version}/contacts. */
async function createProperty(api: HubSpotApi, definition: HubSpotPropertyDefinition): Promise<void> {
  await api.call(`create property ${definition.name}`, { method: 'POST', path: HUBSPOT_PATHS.properties, body: input(definition) }, Ignored);
}

/** Same name, another type: someone else's property, which we neither change nor archive. */
function isConflicting(definition: HubSpotPropertyDefinition, existing: ExistingProperty): boolean {
  return existing.type !== definition.type || existing.fieldType !== definition.fieldType;
}

export async function provisionHubSpotProperties(api: HubSpotApi): Promise<ProvisionReport> {
  // Docs: https://developers.hubspot.com/docs/api-reference/latest/crm/properties/groups/list-property-groups
  const groups = await api.call('list property groups', { method: 'GET', path: HUBSPOT_PATHS.groups }, GroupsSchema);
  let groupCreated = false;
  if (!groups.results.some((g) => g.name === HUBSPOT_PROPERTY_GROUP.name)) {
    try {
      await api.call(
        'create property group',
        { method: 'POST', path: HUBSPOT_PATHS.groups, body: { name: HUBSPOT_PROPERTY_GROUP.name, label: HUBSPOT_PROPERTY_GROUP.label } },
        Ignored,
      );
      groupCreated = true;
    } catch (error) {
      if (!(error instanceof HubSpotApiError && error.status === 409)) throw error;
    }
  }
  const existing = await existingProperties(api);
  const created: string[] = [];
  const updated: string[] = [];
  const unchanged: string[] = [];
  const conflicting: string[] = [];
  const missing: HubSpotPropertyDefinition[] = [];
  for (const definition of hubspotProperties()) {
    const have = existing.get(definition.name);
    if (have === undefined) {
      missing.push(definition);
      continue;
    }
    if (isConflicting(definition, have)) {
      conflicting.push(definition.name);
      continue;
    }
    if (
      have.label === definition.label &&
      have.description === definition.description &&
      have.groupName === definition.groupName &&
      sameOptions(definition, have)
    ) {
      unchanged.push(definition.name);
      continue;
    }
    const changes = {
      label: definition.label,
      description: definition.description,
      groupName: definition.groupName,
      displayOrder: definition.displayOrder,
      formField: definition.formField,
      ...(definition.options === undefined ? {} : { options: input(definition).options }),
    };
    // Docs: https://developers.hubspot.com/docs/api-reference/latest/crm/properties/core/update-property
    await api.call(`update property ${definition.name}`, { method: 'PATCH', path: HUBSPOT_PATHS.property(definition.name), body: changes }, Ignored);
    updated.push(definition.name);
  }
  if (missing.length > 0) {
    try {
      // Docs: https://developers.hubspot.com/docs/api-reference/latest/crm/properties/batch/create-properties
      const response = await api.call(
        'create properties',
        { method: 'POST', path: HUBSPOT_PATHS.propertiesBatchCreate, body: { inputs: missing.map((d) => input(d)) } },
        PropertiesSchema,
      );
      const made = new Set(response.results.map((p) => p.name));
      created.push(...missing.filter((d) => made.has(d.name)).map((d) => d.name));
      // A 207: the ones HubSpot did not create exist already (a concurrent install) or were refused;
      // one by one, a 409 says which, and any other refusal stops the install with its reason.
      for (const definition of missing.filter((d) => !made.has(d.name))) {
        try {
          await createProperty(api, definition);
          created.push(definition.name);
        } catch (inner) {
          if (!(inner instanceof HubSpotApiError && inner.status === 409)) throw inner;
          unchanged.push(definition.name);
        }
      }
    } catch (error) {
      if (!(error instanceof HubSpotApiError && error.status === 409)) throw error;
      // Some exist already (a concurrent install): create the rest one by one, 409 meaning "exists".
      for (const definition of missing) {
        try {
          await createProperty(api, definition);
          created.push(definition.name);
        } catch (inner) {
          if (!(inner instanceof HubSpotApiError && inner.status === 409)) throw inner;
          unchanged.push(definition.name);
        }
      }
    }
  }
  return { groupCreated, created, updated, unchanged, conflicting };
}

/**
 * Uninstall with --remove-properties: archives our properties and the group. A property of one of our
 * names but another type is not ours (provisioning reported it as conflicting and left it alone), so
 * it stays; one already gone is skipped, and a 404 from one archived meanwhile is tolerated.
 */
export async function removeHubSpotProperties(api: HubSpotApi): Promise<number> {
  const existing = await existingProperties(api);
  let removed = 0;
  for (const definition of hubspotProperties()) {
    const have = existing.get(definition.name);
    if (have === undefined || isConflicting(definition, have)) continue;
    try {
      // Docs: https://developers.hubspot.com/docs/api-reference/latest/crm/properties/core/archive-property
      await api.call(`archive property ${definition.name}`, { method: 'DELETE', path: HUBSPOT_PATHS.property(definition.name) }, Ignored);
      removed += 1;
    } catch (error) {
      if (!(error instanceof HubSpotApiError && error.status === 404)) throw error;
    }
  }
  try {
    await api.call('archive property group', { method: 'DELETE', path: HUBSPOT_PATHS.group(HUBSPOT_PROPERTY_GROUP.name) }, Ignored);
  } catch (error) {
    if (!(error instanceof HubSpotApiError && error.status === 404)) throw error;
  }
  return removed;
}
