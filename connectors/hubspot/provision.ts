// Property provisioning on install: the `enrichbridge` group and one contact property per field,
// idempotently. What exists is left alone when it matches and updated when its label, description
// or options drifted; what is missing is created in one batch call; a 409 (created meanwhile by
// another install attempt) counts as "exists". Nothing is ever duplicated.
import { HubSpotApi, HubSpotApiError } from './api.ts';
import { HUBSPOT_PROPERTY_GROUP, type HubSpotPropertyDefinition, hubspotProperties } from './fields.ts';

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

/**
 * The property as HubSpot's create and update calls take it. Our definitions use HubSpot's own type
 * and fieldType strings; the SDK declares them as TypeScript enums with the same values, hence the
 * `as never` at the two call sites (the strings are exactly what goes over the wire).
 */
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

/** The portal's contact properties (not archived), by name. */
async function existingProperties(api: HubSpotApi): Promise<Map<string, ExistingProperty>> {
  const all = await api.call('list properties', (client, sdk) => client.crm.properties.coreApi.getAll('contacts', false, undefined, sdk));
  return new Map<string, ExistingProperty>(
    all.results.map((p) => [
      p.name,
      {
        name: p.name,
        label: p.label,
        description: p.description,
        type: String(p.type),
        fieldType: String(p.fieldType),
        groupName: p.groupName,
        options: p.options.map((o) => ({ label: o.label, value: o.value })),
      },
    ]),
  );
}

/** Same name, another type: someone else's property, which we neither change nor archive. */
function isConflicting(definition: HubSpotPropertyDefinition, existing: ExistingProperty): boolean {
  return existing.type !== definition.type || existing.fieldType !== definition.fieldType;
}

export async function provisionHubSpotProperties(api: HubSpotApi): Promise<ProvisionReport> {
  const groups = await api.call('list property groups', (client, sdk) => client.crm.properties.groupsApi.getAll('contacts', sdk));
  let groupCreated = false;
  if (!groups.results.some((g) => g.name === HUBSPOT_PROPERTY_GROUP.name)) {
    try {
      await api.call('create property group', (client) =>
        client.crm.properties.groupsApi.create('contacts', { name: HUBSPOT_PROPERTY_GROUP.name, label: HUBSPOT_PROPERTY_GROUP.label }),
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
    if (have.label === definition.label && have.description === definition.description && have.groupName === definition.groupName && sameOptions(definition, have)) {
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
    await api.call(`update property ${definition.name}`, (client, sdk) => client.crm.properties.coreApi.update('contacts', definition.name, changes as never, sdk));
    updated.push(definition.name);
  }
  if (missing.length > 0) {
    try {
      const response = await api.call('create properties', (client, sdk) =>
        client.crm.properties.batchApi.create('contacts', { inputs: missing.map((d) => input(d)) as never }, sdk),
      );
      const made = new Set(response.results.map((p) => p.name));
      created.push(...missing.filter((d) => made.has(d.name)).map((d) => d.name));
      // A 207: the ones HubSpot did not create exist already (a concurrent install) or were refused;
      // one by one, a 409 says which, and any other refusal stops the install with its reason.
      for (const definition of missing.filter((d) => !made.has(d.name))) {
        try {
          await api.call(`create property ${definition.name}`, (client, sdk) => client.crm.properties.coreApi.create('contacts', input(definition) as never, sdk));
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
          await api.call(`create property ${definition.name}`, (client, sdk) => client.crm.properties.coreApi.create('contacts', input(definition) as never, sdk));
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
      await api.call(`archive property ${definition.name}`, (client, sdk) => client.crm.properties.coreApi.archive('contacts', definition.name, sdk));
      removed += 1;
    } catch (error) {
      if (!(error instanceof HubSpotApiError && error.status === 404)) throw error;
    }
  }
  try {
    await api.call('archive property group', (client, sdk) => client.crm.properties.groupsApi.archive('contacts', HUBSPOT_PROPERTY_GROUP.name, sdk));
  } catch (error) {
    if (!(error instanceof HubSpotApiError && error.status === 404)) throw error;
  }
  return removed;
}
