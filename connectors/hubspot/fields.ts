// The HubSpot contact properties enrichbridge writes, one per entry of the kit's field catalogue (so a
// new household or career field gets its property without anyone listing it) and per status key, the
// field key → property mapping the pipeline uses, and how each value is formatted for HubSpot.
//
// Types per catalogue kind:
//   integer or decimal → number/number          boolean  → bool/booleancheckbox, options true/false
//   date               → date/date (YYYY-MM-DD)  enum     → enumeration/select with the enum's values
//   list               → string/textarea, the entries joined with "; " (the kit's LIST_SEPARATOR)
//   text (url or not)  → string/text
// Lists are joined text rather than a multi-select enumeration: their values (NTEE codes, regions) are
// open-ended, and HubSpot refuses a value that is not one of an enumeration's options.
import {
  DO_NOT_ENRICH_FIELD,
  FIELD_CATALOGUE,
  LIST_NOTE,
  enrichmentStatusOptions,
  joinList,
  type CatalogueField,
  type FieldKind,
} from '../kit/field-catalogue.ts';
import type { FieldValue } from '../../bridge/connector.ts';
import type { CrmValue } from '../../bridge/model.ts';
import { DO_NOT_ENRICH_KEY, STATUS_KEYS } from '../../bridge/write-policy.ts';

/** The contact property group all our properties live in. */
export const HUBSPOT_PROPERTY_GROUP = { name: 'enrichbridge', label: 'Windfall enrichment' } as const;

/** Every label starts with this, so an admin can find our properties among the portal's own. */
export const LABEL_PREFIX = 'Windfall';

export type HubSpotPropertyType = 'string' | 'number' | 'bool' | 'date' | 'datetime' | 'enumeration';
export type HubSpotFieldType = 'text' | 'textarea' | 'number' | 'booleancheckbox' | 'date' | 'select';

export interface HubSpotPropertyOption {
  readonly label: string;
  readonly value: string;
  readonly displayOrder: number;
  readonly hidden: boolean;
}

/** A `POST /crm/properties/{version}/contacts` body (a subset of HubSpot's PropertyCreate). */
export interface HubSpotPropertyDefinition {
  readonly name: string;
  readonly label: string;
  readonly description: string;
  readonly groupName: string;
  readonly type: HubSpotPropertyType;
  readonly fieldType: HubSpotFieldType;
  readonly displayOrder: number;
  /** Not offered on HubSpot forms: these values come from enrichment, not from visitors. */
  readonly formField: boolean;
  /** For `bool` and `enumeration` only. */
  readonly options?: readonly HubSpotPropertyOption[];
}

/** How a field is stored; decides the HubSpot type pair and the value format. */
export type HubSpotFieldKind = 'number' | 'boolean' | 'date' | 'datetime' | 'enum' | 'list' | 'text';

/** A catalogue kind as HubSpot stores it: both kinds of number alike, a URL as plain text. */
const hubspotKind = (kind: FieldKind): HubSpotFieldKind => (kind.type === 'integer' || kind.type === 'decimal' ? 'number' : kind.type);

const PAIRS: Record<HubSpotFieldKind, { type: HubSpotPropertyType; fieldType: HubSpotFieldType }> = {
  number: { type: 'number', fieldType: 'number' },
  boolean: { type: 'bool', fieldType: 'booleancheckbox' },
  date: { type: 'date', fieldType: 'date' },
  datetime: { type: 'datetime', fieldType: 'date' },
  enum: { type: 'enumeration', fieldType: 'select' },
  list: { type: 'string', fieldType: 'textarea' },
  text: { type: 'string', fieldType: 'text' },
};

/** HubSpot stores a bool as the strings "true" and "false"; the options must say so. */
const BOOLEAN_OPTIONS: readonly { label: string; value: string }[] = [
  { label: 'Yes', value: 'true' },
  { label: 'No', value: 'false' },
];

interface Field {
  readonly key: string;
  readonly property: string;
  readonly kind: HubSpotFieldKind;
  readonly label: string;
  readonly description: string;
  readonly options: readonly { label: string; value: string }[];
}

type StatusKey = (typeof STATUS_KEYS)[number];

const STATUS_FIELDS: Record<StatusKey, Omit<Field, 'key' | 'property'>> = {
  'status.enrichment_status': {
    kind: 'enum',
    label: 'Enrichment status',
    description:
      'Outcome of the last enrichment: enriched, no match, or matched below the minimum confidence set for this portal; or why the contact was not enriched: no e-mail, phone or address to match on, excluded (do not enrich), or its enrichment undone.',
    options: enrichmentStatusOptions().map(({ value, label }) => ({ label, value })),
  },
  'status.enriched_at': {
    kind: 'datetime',
    label: 'Enriched at',
    description: 'When enrichbridge last enriched this contact.',
    options: [],
  },
  'status.household_matched': {
    kind: 'boolean',
    label: 'Household matched',
    description: 'Whether the last enrichment found household data at or above the minimum confidence.',
    options: BOOLEAN_OPTIONS,
  },
  'status.career_matched': {
    kind: 'boolean',
    label: 'Career matched',
    description: 'Whether the last enrichment found career data at or above the minimum confidence.',
    options: BOOLEAN_OPTIONS,
  },
};

/** Per catalogue group: the property name prefix, the label prefix, the description when the contract has none. */
const GROUPS = {
  household: { property: 'wf_hh_', label: `${LABEL_PREFIX}: `, fallback: 'Household data from Windfall.' },
  career: { property: 'wf_career_', label: `${LABEL_PREFIX} career: `, fallback: 'Career data from Windfall.' },
} as const;

function contractField({ group, field, key, label, description, kind }: CatalogueField): Field {
  const prefixes = GROUPS[group];
  const hubspot = hubspotKind(kind);
  const enumOptions = kind.type === 'enum' ? kind.values.map((value) => ({ label: value, value })) : [];
  return {
    key,
    property: `${prefixes.property}${field}`,
    kind: hubspot,
    label: `${prefixes.label}${label}`,
    description: `${description ?? prefixes.fallback}${hubspot === 'list' ? ` ${LIST_NOTE}` : ''}`,
    options: hubspot === 'boolean' ? BOOLEAN_OPTIONS : enumOptions,
  };
}

const FIELDS: readonly Field[] = [
  ...STATUS_KEYS.map((key) => ({
    key,
    property: `wf_${key.slice('status.'.length)}`,
    ...STATUS_FIELDS[key],
    label: `${LABEL_PREFIX}: ${STATUS_FIELDS[key].label}`,
  })),
  ...FIELD_CATALOGUE.map(contractField),
  // Read with every contact, never written by an enrichment: Exclude and Include again set it.
  {
    key: DO_NOT_ENRICH_KEY,
    property: 'wf_do_not_enrich',
    kind: 'boolean',
    label: `${LABEL_PREFIX}: ${DO_NOT_ENRICH_FIELD.label}`,
    description: DO_NOT_ENRICH_FIELD.description,
    options: BOOLEAN_OPTIONS,
  },
];

const BY_KEY = new Map(FIELDS.map((field) => [field.key, field]));
const BY_PROPERTY = new Map(FIELDS.map((field) => [field.property, field]));

/** Every field key we write: the status keys, then `household.*`, then `career.*`, then the do-not-enrich checkbox. */
export const HUBSPOT_FIELD_KEYS: readonly string[] = FIELDS.map((field) => field.key);

/** The property definitions to provision, in display order, all in HUBSPOT_PROPERTY_GROUP. */
export function hubspotProperties(): HubSpotPropertyDefinition[] {
  return FIELDS.map((field, index) => ({
    name: field.property,
    label: field.label,
    description: field.description,
    groupName: HUBSPOT_PROPERTY_GROUP.name,
    ...PAIRS[field.kind],
    displayOrder: index + 1,
    formField: false,
    ...(field.options.length === 0 ? {} : { options: field.options.map((option, order) => ({ ...option, displayOrder: order, hidden: false })) }),
  }));
}

/** The property a field key (`household.net_worth`, `status.enriched_at`) is written to; null: none. */
export function hubspotPropertyFor(key: string): string | null {
  return BY_KEY.get(key)?.property ?? null;
}

/** The field key a property of ours holds (the inverse of hubspotPropertyFor); null: not ours. */
export function fieldKeyForHubSpotProperty(property: string): string | null {
  return BY_PROPERTY.get(property)?.key ?? null;
}

/** How a field key is stored; null for a key we do not write. */
export function hubspotFieldKind(key: string): HubSpotFieldKind | null {
  return BY_KEY.get(key)?.kind ?? null;
}

/**
 * A value as HubSpot takes it: booleans as "true"/"false", numbers as numbers (null when not finite),
 * lists joined with "; " (null when empty), dates cut to YYYY-MM-DD, the enriched_at datetime and
 * enum values as they are.
 */
export function formatHubSpotValue(key: string, value: FieldValue): CrmValue {
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string') return joinList(value);
  if (hubspotFieldKind(key) === 'date' && /^\d{4}-\d{2}-\d{2}/.test(value)) return value.slice(0, 10);
  return value;
}
