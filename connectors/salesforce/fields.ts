// The Salesforce custom fields enrichbridge writes on Contact and Lead, one per entry of the kit's field
// catalogue (a new household or career field gets its field without anyone listing it) and per status
// key, the field key → API name mapping the pipeline uses, and how each value is formatted for Salesforce.
//
// Types per catalogue kind (docs/reference/crm-platforms.md section 10 for the metadata rules):
//   integer             → Number(18, 0). Net worth too: a Currency field is read in the record's
//                         currency in a multi-currency org, so a dollar figure on a EUR contact would
//                         show as euros; the descriptions say "US dollars" instead.
//   decimal             → Number with the precision and scale of DECIMALS below; a decimal field with
//                         no entry there throws at load, so a new one cannot slip in unsized.
//   boolean             → Checkbox, default false. Salesforce has no unset checkbox: "false" and "not
//                         provided" look the same (the matched flags and WF_Enrichment_Status__c tell
//                         them apart), and readSalesforceValue reads an unchecked box as empty so the
//                         overwrite policy can still fill it.
//   date                → Date (YYYY-MM-DD); datetime (the enriched_at status) → DateTime.
//   enum                → Picklist with the enum's values, unrestricted (see PICKLIST_RESTRICTED).
//   list                → Text(255), entries joined with "; " (the kit's LIST_SEPARATOR): filterable in
//                         list views and reports, which a Long Text Area is not, and ten NTEE codes or
//                         regions fit easily.
//   text with url       → Url (clickable; Salesforce adds the scheme when it shows one without).
//   any other text      → Text(255).
// A value a field cannot hold (too long, out of range, not a listed picklist value) is refused — the
// formatter returns null and the pipeline leaves the field alone — rather than truncated: a cut-off
// value would look like real data, and Salesforce would reject the whole record's update for it.
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
import { DO_NOT_ENRICH_KEY, STATUS_KEYS, sameCrmValue } from '../../bridge/write-policy.ts';

/** The objects enrichbridge enriches; each gets the same set of fields. */
export const SALESFORCE_OBJECTS = ['Contact', 'Lead'] as const;
export type SalesforceObject = (typeof SALESFORCE_OBJECTS)[number];

/**
 * The fields the mapping reads to build an enrichment request. `Account.Name` is a
 * relationship path: readable through the REST API, but not a field of the Contact itself.
 */
export const SALESFORCE_IDENTITY_FIELDS: Record<SalesforceObject, readonly string[]> = {
  Contact: ['FirstName', 'LastName', 'Email', 'Phone', 'MobilePhone', 'MailingStreet', 'MailingCity', 'MailingState', 'MailingPostalCode', 'Account.Name'],
  Lead: ['FirstName', 'LastName', 'Email', 'Phone', 'MobilePhone', 'Street', 'City', 'State', 'PostalCode', 'Company'],
};

/**
 * What each outbound message carries: the record Id and the identity fields of the object itself. An
 * outbound message can only send the object's own fields, so a Contact's `Account.Name` is read
 * through the API afterwards.
 */
export const SALESFORCE_OUTBOUND_MESSAGE_FIELDS: Record<SalesforceObject, readonly string[]> = {
  Contact: ['Id', ...SALESFORCE_IDENTITY_FIELDS.Contact.filter((field) => !field.includes('.'))],
  Lead: ['Id', ...SALESFORCE_IDENTITY_FIELDS.Lead.filter((field) => !field.includes('.'))],
};

/** Salesforce's limits: API name before `__c`, label, description, help text, Text length. */
export const SALESFORCE_LIMITS = { apiName: 40, label: 40, description: 1000, inlineHelpText: 510, text: 255, precision: 18 } as const;

/**
 * Picklists are unrestricted: if the contract gains a value before an org redeploys the metadata, a
 * restricted picklist would make Salesforce refuse the whole record's update. The formatter still
 * writes only the values listed here.
 */
export const PICKLIST_RESTRICTED = false;

export type SalesforceFieldType = 'Checkbox' | 'Date' | 'DateTime' | 'Number' | 'Picklist' | 'Text' | 'Url';

export interface SalesforcePicklistValue {
  readonly value: string;
  readonly label: string;
}

/** One custom field on one object, as its `.field-meta.xml` describes it. */
export interface SalesforceFieldDefinition {
  readonly object: SalesforceObject | typeof HOUSEHOLD_ACCOUNT_OBJECT;
  /** The API name, `WF_HH_Net_Worth__c` (the `fullName` inside the field file). */
  readonly name: string;
  readonly label: string;
  readonly description: string;
  /** Shown to users next to the field; the description, cut to 510 characters at a sentence. */
  readonly inlineHelpText: string;
  readonly type: SalesforceFieldType;
  /** Text only. */
  readonly length?: number;
  /** Number only. */
  readonly precision?: number;
  readonly scale?: number;
  /** Checkbox only: unchecked unless we write true. */
  readonly defaultValue?: false;
  /** Picklist only, in display order. */
  readonly picklistValues?: readonly SalesforcePicklistValue[];
}

/**
 * Precision (total digits) and scale (digits after the point) of each decimal field, by field name.
 * - confidence: 0.1 to 1.0 in the contract; four decimals are more than the scores carry.
 * - loan_to_value: a ratio, e.g. 0.42, above 1.0 for an owner who owes more than the property is
 *   worth; two integer digits leave room up to 99.9999.
 */
export const DECIMALS: Readonly<Record<string, { readonly precision: number; readonly scale: number }>> = {
  confidence: { precision: 5, scale: 4 },
  loan_to_value: { precision: 6, scale: 4 },
};

type Kind =
  | { readonly type: 'Number'; readonly precision: number; readonly scale: number }
  | { readonly type: 'Checkbox' | 'Date' | 'DateTime' | 'Url' }
  | { readonly type: 'Text'; readonly list: boolean }
  | { readonly type: 'Picklist'; readonly values: readonly SalesforcePicklistValue[] };

interface Field {
  readonly key: string;
  readonly name: string;
  readonly label: string;
  readonly description: string;
  readonly kind: Kind;
}

/** 32-bit FNV-1a in base 36, five characters: a short, stable tag for a shortened name. */
function shortHash(text: string): string {
  let hash = 0x811c9dc5;
  for (const char of text) {
    hash ^= char.codePointAt(0) ?? 0;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(36).toUpperCase().padStart(7, '0').slice(-5);
}

/**
 * The API name for a snake_case field under a prefix: `WF_HH_` + `net_worth` → `WF_HH_Net_Worth__c`.
 * Salesforce allows 40 characters before `__c`, starting with a letter, no double or trailing
 * underscore. A longer name keeps its first 34 characters (no trailing underscore) and ends in `_`
 * and a five-character hash of the full name, so it stays unique and is the same on every run.
 */
export function salesforceApiName(prefix: string, field: string): string {
  if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(prefix) || !/^[a-z0-9_]+$/.test(field)) {
    throw new Error(`cannot name a Salesforce field from ${prefix} + ${field}`);
  }
  const words = field.split('_').filter((word) => word !== '');
  const full = `${prefix.replace(/_+$/, '')}_${words.map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join('_')}`;
  if (full.length <= SALESFORCE_LIMITS.apiName) return `${full}__c`;
  const suffix = `_${shortHash(full)}`;
  const kept = full.slice(0, SALESFORCE_LIMITS.apiName - suffix.length).replace(/_+$/, '');
  return `${kept}${suffix}__c`;
}

/** `prefix` + `text`, dropping words from the end of `text` until it fits the 40-character label limit. */
export function salesforceLabel(prefix: string, text: string): string {
  const words = text.split(' ');
  while (words.length > 1 && `${prefix}${words.join(' ')}`.length > SALESFORCE_LIMITS.label) words.pop();
  return `${prefix}${words.join(' ')}`.slice(0, SALESFORCE_LIMITS.label).trimEnd();
}

/** A catalogue kind as Salesforce stores it; a decimal field with no DECIMALS entry throws. */
function salesforceKind(kind: FieldKind, field: string, key: string): Kind {
  switch (kind.type) {
    case 'integer':
      return { type: 'Number', precision: SALESFORCE_LIMITS.precision, scale: 0 };
    case 'decimal': {
      const decimal = DECIMALS[field];
      if (decimal === undefined) throw new Error(`${key} is a decimal: give it a precision and scale in DECIMALS`);
      return { type: 'Number', ...decimal };
    }
    case 'boolean':
      return { type: 'Checkbox' };
    case 'date':
      return { type: 'Date' };
    case 'datetime':
      return { type: 'DateTime' };
    case 'enum':
      return { type: 'Picklist', values: kind.values.map((value) => ({ value, label: value })) };
    case 'list':
      return { type: 'Text', list: true };
    case 'text':
      return kind.url ? { type: 'Url' } : { type: 'Text', list: false };
  }
}

/** What a description adds for a field type whose stored value needs explaining. */
function typeNote(kind: Kind): string {
  if (kind.type === 'Checkbox') return ' Unchecked means false or not provided.';
  if (kind.type === 'Text' && kind.list) return ` ${LIST_NOTE}`;
  return '';
}

/** Per catalogue group: the API name prefix, the label prefix, whose data the description says it is. */
const GROUPS = {
  household: { name: 'WF_HH_', label: 'WF Household: ', source: 'Windfall household data' },
  career: { name: 'WF_Career_', label: 'WF Career: ', source: 'Windfall career data' },
} as const;

function contractField({ group, field, key, label, description, kind: catalogueKind }: CatalogueField): Field {
  const prefixes = GROUPS[group];
  const kind = salesforceKind(catalogueKind, field, key);
  // The shared date description says nothing the field type does not.
  const detail = description === null || /^Date, YYYY-MM-DD\.?$/.test(description) ? '' : ` — ${description}`;
  // Net worth is a Number, not a Currency (see the top of this file): say which currency it is.
  const money = /net_worth$/.test(field) && !/dollar/i.test(detail) ? ' In US dollars.' : '';
  return {
    key,
    name: salesforceApiName(prefixes.name, field),
    label: salesforceLabel(prefixes.label, label),
    description: `${prefixes.source}: ${label}${detail === '' ? '.' : detail}${money}${typeNote(kind)}`,
    kind,
  };
}

type StatusKey = (typeof STATUS_KEYS)[number];

const STATUS_FIELDS: Record<StatusKey, Omit<Field, 'key'>> = {
  'status.enriched_at': {
    name: 'WF_Enriched_At__c',
    label: 'WF Enriched at',
    description: 'When enrichbridge last enriched this record.',
    kind: { type: 'DateTime' },
  },
  'status.household_matched': {
    name: 'WF_Household_Matched__c',
    label: 'WF Household matched',
    description: 'Whether the last enrichment found household data at or above the minimum confidence.',
    kind: { type: 'Checkbox' },
  },
  'status.career_matched': {
    name: 'WF_Career_Matched__c',
    label: 'WF Career matched',
    description: 'Whether the last enrichment found career data at or above the minimum confidence.',
    kind: { type: 'Checkbox' },
  },
  'status.enrichment_status': {
    name: 'WF_Enrichment_Status__c',
    label: 'WF Enrichment status',
    description:
      'Outcome of the last enrichment: enriched, no match, or matched below the minimum confidence set for this org; or why the record was not enriched: nothing to match on, excluded, or undone. Empty: never enriched.',
    kind: { type: 'Picklist', values: enrichmentStatusOptions() },
  },
};

/** The field the record-triggered flows test: a record already enriched (e.g. a converted lead) is not sent again. */
export const ENRICHED_AT_FIELD = STATUS_FIELDS['status.enriched_at'].name;

/** The do-not-enrich checkbox: read with every record, never written by an enrichment; Exclude and Include again set it. */
const DO_NOT_ENRICH: Field = {
  key: DO_NOT_ENRICH_KEY,
  name: 'WF_Do_Not_Enrich__c',
  label: `WF ${DO_NOT_ENRICH_FIELD.label}`,
  description: DO_NOT_ENRICH_FIELD.description,
  kind: { type: 'Checkbox' },
};

const FIELDS: readonly Field[] = [...STATUS_KEYS.map((key) => ({ key, ...STATUS_FIELDS[key] })), ...FIELD_CATALOGUE.map(contractField), DO_NOT_ENRICH];

const BY_KEY = new Map(FIELDS.map((field) => [field.key, field]));
const BY_NAME = new Map(FIELDS.map((field) => [field.name, field]));
if (BY_NAME.size !== FIELDS.length) throw new Error('two Salesforce fields share an API name');

/** Every field key we write: the status keys, then `household.*`, then `career.*`. */
export const SALESFORCE_FIELD_KEYS: readonly string[] = FIELDS.map((field) => field.key);

/** Our API names, in the same order (the same on Contact and on Lead). */
export const SALESFORCE_FIELD_NAMES: readonly string[] = FIELDS.map((field) => field.name);

/** Cuts a description to the help-text limit at the last full sentence that fits. */
function helpText(description: string): string {
  if (description.length <= SALESFORCE_LIMITS.inlineHelpText) return description;
  const cut = description.slice(0, SALESFORCE_LIMITS.inlineHelpText);
  const end = cut.lastIndexOf('. ');
  return end > 0 ? cut.slice(0, end + 1) : cut;
}

function definition(object: SalesforceFieldDefinition['object'], field: Field): SalesforceFieldDefinition {
  const base = {
    object,
    name: field.name,
    label: field.label,
    description: field.description,
    inlineHelpText: helpText(field.description),
    type: field.kind.type,
  };
  switch (field.kind.type) {
    case 'Number':
      return { ...base, precision: field.kind.precision, scale: field.kind.scale };
    case 'Text':
      return { ...base, length: SALESFORCE_LIMITS.text };
    case 'Checkbox':
      return { ...base, defaultValue: false };
    case 'Picklist':
      return { ...base, picklistValues: field.kind.values };
    default:
      return base;
  }
}

/** The field definitions to deploy: every field on Contact, then the same set on Lead. */
export function salesforceFields(): SalesforceFieldDefinition[] {
  return SALESFORCE_OBJECTS.flatMap((object) => FIELDS.map((field) => definition(object, field)));
}

/**
 * An NPSP household Account (npsp-households.ts) holds the household section under the same API names
 * as the Contact: `WF_HH_Net_Worth__c` on the Account is the household's net worth. Status, career and
 * control fields stay on the person's record.
 */
export const HOUSEHOLD_ACCOUNT_OBJECT = 'Account';

/** Whether a field key belongs on a household Account (the household section). */
export function isHouseholdKey(key: string): boolean {
  return key.startsWith('household.');
}

/** The household section's field definitions on Account, deployed by the optional households/ project. */
export function salesforceHouseholdAccountFields(): SalesforceFieldDefinition[] {
  return FIELDS.filter((field) => isHouseholdKey(field.key)).map((field) => definition(HOUSEHOLD_ACCOUNT_OBJECT, field));
}

/** The API name a field key (`household.net_worth`, `status.enriched_at`) is written to; null: none. */
export function salesforceFieldFor(key: string): string | null {
  return BY_KEY.get(key)?.name ?? null;
}

/** The field key an API name of ours holds (the inverse of salesforceFieldFor); null: not ours. */
export function fieldKeyForSalesforceField(name: string): string | null {
  return BY_NAME.get(name)?.key ?? null;
}

/** The Salesforce type a field key is stored as; null for a key we do not write. */
export function salesforceFieldType(key: string): SalesforceFieldType | null {
  return BY_KEY.get(key)?.kind.type ?? null;
}

/** A finite number rounded to the field's scale, or null when its integer part has too many digits. */
function fitNumber(value: number, precision: number, scale: number): number | null {
  if (!Number.isFinite(value)) return null;
  const factor = 10 ** scale;
  const rounded = Math.round(value * factor) / factor;
  return Math.abs(rounded) < 10 ** (precision - scale) ? rounded : null;
}

const fitText = (value: string, limit: number): string | null => (value.length <= limit ? value : null);

/**
 * A value as Salesforce takes it, or null when there is nothing the field can hold (the pipeline then
 * leaves the field alone):
 * - Checkbox: booleans as booleans;
 * - Number: rounded to the field's scale; null when not finite or too large for its precision;
 * - Date: `YYYY-MM-DD` (a datetime is cut to its date); DateTime: the ISO instant;
 * - Picklist: one of the listed values, as it is; anything else is refused;
 * - Text: as it is, lists joined with "; " without empty entries; null when empty or longer than 255;
 * - Url: as it is, null when longer than 255.
 * A value of the wrong type for its field (a string for a Checkbox, say) and a key we do not write give null.
 */
export function formatSalesforceValue(key: string, value: FieldValue): CrmValue {
  const field = BY_KEY.get(key);
  if (field === undefined) return null;
  const { kind } = field;
  switch (kind.type) {
    case 'Checkbox':
      return typeof value === 'boolean' ? value : null;
    case 'Number':
      return typeof value === 'number' ? fitNumber(value, kind.precision, kind.scale) : null;
    case 'Date':
      return typeof value === 'string' && /^\d{4}-\d{2}-\d{2}(?:$|T)/.test(value) ? value.slice(0, 10) : null;
    case 'DateTime': {
      if (typeof value !== 'string') return null;
      const instant = new Date(value);
      return Number.isNaN(instant.getTime()) ? null : instant.toISOString();
    }
    case 'Picklist':
      return typeof value === 'string' && kind.values.some((option) => option.value === value) ? value : null;
    case 'Url':
      return typeof value === 'string' && value.trim() !== '' ? fitText(value, SALESFORCE_LIMITS.text) : null;
    case 'Text': {
      if (typeof value === 'string') return value.trim() === '' ? null : fitText(value, SALESFORCE_LIMITS.text);
      if (typeof value === 'number' || typeof value === 'boolean') return null;
      const joined = joinList(value);
      return joined === null ? null : fitText(joined, SALESFORCE_LIMITS.text);
    }
  }
}

/**
 * A value of one of our fields as read from Salesforce, for the overwrite policy: an unchecked
 * Checkbox is empty (null), because Salesforce cannot tell "false" from "never written" and the
 * policy must still be able to fill it; everything else as read. A field that is not ours passes through.
 */
export function readSalesforceValue(name: string, value: CrmValue): CrmValue {
  const field = BY_NAME.get(name);
  if (field?.kind.type === 'Checkbox' && value === false) return null;
  return value;
}

/**
 * Whether one of our fields still holds what we wrote, as Salesforce reads it back: an unchecked box we
 * wrote (false) reads as empty, and a DateTime comes back in Salesforce's own format
 * (`2026-11-27T10:26:18.000+0000` for `2026-11-27T10:26:18.631Z`), the same instant to the second.
 */
export function sameSalesforceValue(name: string, current: CrmValue | undefined, written: CrmValue): boolean {
  const field = BY_NAME.get(name);
  if (field?.kind.type === 'DateTime' && typeof current === 'string' && typeof written === 'string') {
    const [a, b] = [Date.parse(current), Date.parse(written)];
    if (!Number.isNaN(a) && !Number.isNaN(b)) return Math.floor(a / 1000) === Math.floor(b / 1000);
  }
  return sameCrmValue(current, readSalesforceValue(name, written));
}
