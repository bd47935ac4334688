// The "Enrich contact" workflow action's output fields: the values a workflow can branch on after the
// action ran, their HubSpot types (the same as the contact properties holding the same field keys),
// and the outputFields values of one enrichment. manifests/hubspot/ declares exactly these.
import type { CrmValue } from '../../bridge/model.ts';
import type { HubSpotFieldType, HubSpotPropertyType } from './fields.ts';
import { hubspotProperties, hubspotPropertyFor } from './fields.ts';

/**
 * The output fields, each carrying the value of one field key:
 * - `household_matched`, `career_matched`: matched at or above the portal's minimum confidence;
 * - `net_worth`, `windfall_id`, `confidence`: from the household (so `confidence` is the household
 *   match confidence, absent when only the career matched);
 * - `job_level`, `job_title`: from the career data (`job_level` is text: the contract does not close
 *   its values);
 * - `enrichment_status`: `enriched`, `no_match` or `below_min_confidence`.
 * A field without a value is left out of the response, as HubSpot expects for an empty output.
 */
export const HUBSPOT_ACTION_OUTPUT_FIELDS = [
  { name: 'household_matched', key: 'status.household_matched', label: 'Household matched' },
  { name: 'career_matched', key: 'status.career_matched', label: 'Career matched' },
  { name: 'net_worth', key: 'household.net_worth', label: 'Net worth' },
  { name: 'job_level', key: 'career.job_level', label: 'Job level' },
  { name: 'job_title', key: 'career.job_title', label: 'Job title' },
  { name: 'windfall_id', key: 'household.windfall_id', label: 'Windfall ID' },
  { name: 'confidence', key: 'household.confidence', label: 'Household match confidence' },
  { name: 'enrichment_status', key: 'status.enrichment_status', label: 'Enrichment status' },
] as const;

export type HubSpotActionOutputName = (typeof HUBSPOT_ACTION_OUTPUT_FIELDS)[number]['name'];

/** One entry of a workflow action's `outputFields` (the v4 OutputFieldDefinition). */
export interface HubSpotActionOutputDefinition {
  readonly typeDefinition: {
    readonly name: string;
    readonly type: HubSpotPropertyType;
    readonly fieldType: HubSpotFieldType;
    readonly options?: readonly { readonly label: string; readonly value: string }[];
  };
}

/** The `outputFields` of the action definition, typed like the properties of the same field keys. */
export function hubspotActionOutputDefinitions(): HubSpotActionOutputDefinition[] {
  const properties = new Map(hubspotProperties().map((property) => [property.name, property]));
  return HUBSPOT_ACTION_OUTPUT_FIELDS.map(({ name, key }) => {
    const property = properties.get(hubspotPropertyFor(key) ?? '');
    if (property === undefined) throw new Error(`workflow output ${name}: ${key} has no HubSpot property`);
    const options = property.options?.map(({ label, value }) => ({ label, value }));
    return {
      typeDefinition: {
        name,
        type: property.type,
        fieldType: property.fieldType,
        ...(options === undefined ? {} : { options }),
      },
    };
  });
}

/** `labels.en.outputFieldLabels` of the action definition. */
export function hubspotActionOutputLabels(): Record<HubSpotActionOutputName, string> {
  return Object.fromEntries(HUBSPOT_ACTION_OUTPUT_FIELDS.map(({ name, label }) => [name, label])) as Record<HubSpotActionOutputName, string>;
}

/**
 * The action's `outputFields` for a contact, from its properties as they stand after our write (the
 * values we wrote, or those already there): each output's property, formatted as HubSpot stores it;
 * an empty one is left out. The caller adds `hs_execution_state`.
 */
export function hubspotActionOutputs(properties: Readonly<Record<string, CrmValue>>): Partial<Record<HubSpotActionOutputName, string>> {
  const out: Partial<Record<HubSpotActionOutputName, string>> = {};
  for (const { name, key } of HUBSPOT_ACTION_OUTPUT_FIELDS) {
    const property = hubspotPropertyFor(key);
    const value = property === null ? null : properties[property];
    if (value === undefined || value === null || String(value).trim() === '') continue;
    out[name] = String(value);
  }
  return out;
}
