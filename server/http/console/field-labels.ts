// What the console calls a field the bridge writes: its label from the shared field catalogue
// (`Household: Net worth`), with the CRM's property name (`wf_hh_net_worth`, `WF_HH_Net_Worth__c`)
// beside it. The log names a field by its CRM property, or (entries logged before) by its pipeline key.
import { FIELD_CATALOGUE } from '../../../connectors/kit/field-catalogue.ts';
import { STATUS_KEYS } from '../../../bridge/write-policy.ts';

type StatusKey = (typeof STATUS_KEYS)[number];

/** The status fields' labels, as both CRMs label them without their prefix. */
const STATUS_LABELS: Readonly<Record<StatusKey, string>> = {
  'status.enriched_at': 'Enriched at',
  'status.household_matched': 'Household matched',
  'status.career_matched': 'Career matched',
  'status.enrichment_status': 'Enrichment status',
};

const GROUP_LABELS = { household: 'Household', career: 'Career' } as const;

/** Every field key the bridge writes, with its label. */
const LABELS: ReadonlyMap<string, string> = new Map([
  ...STATUS_KEYS.map((key): [string, string] => [key, STATUS_LABELS[key]]),
  ...FIELD_CATALOGUE.map(({ key, group, label }): [string, string] => [key, `${GROUP_LABELS[group]}: ${label}`]),
]);

export interface NamedField {
  /** The field's label; null for a property that is none of ours. */
  readonly label: string | null;
  /** The CRM's property name; null when the CRM writes the key nowhere. */
  readonly property: string | null;
}

/**
 * How a log names its fields for a CRM (its module's `propertyFor`): a property name, or a field key
 * as entries logged before properties were, each to its label and property.
 */
export function fieldNamer(propertyFor: (key: string) => string | null): (name: string) => NamedField {
  const keyOfProperty = new Map<string, string>();
  for (const key of LABELS.keys()) {
    const property = propertyFor(key);
    if (property !== null) keyOfProperty.set(property, key);
  }
  return (name) => {
    const label = LABELS.get(name);
    if (label !== undefined) return { label, property: propertyFor(name) };
    const key = keyOfProperty.get(name);
    return { label: key === undefined ? null : (LABELS.get(key) ?? null), property: name };
  };
}
