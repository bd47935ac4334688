// The field catalogue both CRMs share: each household and career field of the contract with its key,
// label, description and kind (decided here, once, from its zod schema), how a list becomes one text
// value, and the enrichment status values. Each CRM's fields.ts maps a kind to its own types.
import { z } from 'zod';
import { CAREER_FIELDS, CareerSchema, HOUSEHOLD_FIELDS, HouseholdSchema } from '../../core/contract/schemas.ts';
import type { RecordStatusValue } from '../../bridge/write-policy.ts';

/**
 * Every value of `status.enrichment_status`: an enrichment's outcome, or why a record was not enriched
 * (no match key, excluded, undone); the type check below fails if one is missing.
 */
export const ENRICHMENT_STATUSES = [
  'enriched',
  'no_match',
  'below_min_confidence',
  'no_match_key',
  'excluded',
  'undone',
] as const satisfies readonly RecordStatusValue[];
const allStatusesListed: Exclude<RecordStatusValue, (typeof ENRICHMENT_STATUSES)[number]> extends never ? true : never = true;
void allStatusesListed;

export const ENRICHMENT_STATUS_LABELS: Readonly<Record<RecordStatusValue, string>> = {
  enriched: 'Enriched',
  no_match: 'No match',
  below_min_confidence: 'Below minimum confidence',
  no_match_key: 'Not enriched: no e-mail, phone or address',
  excluded: 'Excluded: do not enrich',
  undone: 'Enrichment undone',
};

/** The do-not-enrich checkbox (DO_NOT_ENRICH_KEY): its label and description in every CRM, before its prefix. */
export const DO_NOT_ENRICH_FIELD = {
  label: 'Do not enrich',
  description:
    'Checked: enrichbridge never enriches this record (webhooks, workflows, backfills, scheduled refresh). Set it in bulk with lists, imports or workflows; Exclude and Include again on the record set it too.',
} as const;

/** The status picklist's options, in display order, as `{ value, label }`. */
export function enrichmentStatusOptions(): { value: RecordStatusValue; label: string }[] {
  return ENRICHMENT_STATUSES.map((value) => ({ value, label: ENRICHMENT_STATUS_LABELS[value] }));
}

/** Joins a list field's entries into one text value, in every CRM. */
export const LIST_SEPARATOR = '; ';

/** What a list field's description adds: how its entries are joined. */
export const LIST_NOTE = `Entries are joined with "${LIST_SEPARATOR}".`;

/** A list value as one text value: entries trimmed, empty ones dropped, joined; null when none is left. */
export function joinList(entries: readonly string[]): string | null {
  const kept = entries.map((entry) => entry.trim()).filter((entry) => entry !== '');
  return kept.length === 0 ? null : kept.join(LIST_SEPARATOR);
}

/**
 * How a contract field is stored, from its zod schema:
 * - integer: a number with `.int()`; decimal: any other number;
 * - date: an ISO date (YYYY-MM-DD); datetime: an ISO instant;
 * - enum: one of `values`, in the schema's order;
 * - list: an array of strings, stored as one text value (joinList);
 * - text: any other string; `url` for a `*_url` or `*_domain` field, which a CRM may show as a link.
 */
export type FieldKind =
  | { readonly type: 'integer' | 'decimal' | 'boolean' | 'date' | 'datetime' | 'list' }
  | { readonly type: 'enum'; readonly values: readonly string[] }
  | { readonly type: 'text'; readonly url: boolean };

/** One household or career field of the contract. */
export interface CatalogueField {
  readonly group: 'household' | 'career';
  /** The contract's name, `net_worth`. */
  readonly field: string;
  /** The pipeline's field key, `household.net_worth`. */
  readonly key: string;
  /** The same in every CRM, before its prefix: `Company NAICS code`. */
  readonly label: string;
  /** The schema's description; null when the contract gives none. */
  readonly description: string | null;
  readonly kind: FieldKind;
}

/**
 * A contract field's schema without its optional and nullable wrappers, and its description (which may
 * sit on a wrapper or on the inner type: the outermost one wins).
 */
function unwrapContractField(schema: z.core.$ZodType): { readonly inner: z.core.$ZodType; readonly description: string | null } {
  let description: string | null = null;
  let current = schema;
  while (current instanceof z.ZodOptional || current instanceof z.ZodNullable) {
    description ??= z.globalRegistry.get(current)?.description ?? null;
    current = current.unwrap();
  }
  description ??= z.globalRegistry.get(current)?.description ?? null;
  return { inner: current, description };
}

/** The kind of a field's unwrapped schema; throws on a shape we have no rule for. */
function fieldKind(schema: z.core.$ZodType, field: string, key: string): FieldKind {
  if (schema instanceof z.ZodNumber) return { type: schema.isInt ? 'integer' : 'decimal' };
  if (schema instanceof z.ZodBoolean) return { type: 'boolean' };
  if (schema instanceof z.ZodISODate) return { type: 'date' };
  if (schema instanceof z.ZodISODateTime) return { type: 'datetime' };
  if (schema instanceof z.ZodEnum) return { type: 'enum', values: schema.options.map(String) };
  if (schema instanceof z.ZodArray && schema.element instanceof z.ZodString) return { type: 'list' };
  if (schema instanceof z.ZodString) return { type: 'text', url: /(_url|_domain)$/.test(field) };
  throw new Error(`no field kind for ${key} (zod type ${schema._zod.def.type})`);
}

const ACRONYMS: Readonly<Record<string, string>> = { id: 'ID', url: 'URL', naics: 'NAICS', linkedin: 'LinkedIn' };
/** Labels a word-by-word reading would leave unclear. */
const FIELD_LABELS: Readonly<Record<string, string>> = { confidence: 'Match confidence' };

/** A contract field's label: `company_naics_code` → `Company NAICS code`. */
function fieldLabel(field: string): string {
  const fixed = FIELD_LABELS[field];
  if (fixed !== undefined) return fixed;
  const words = field
    .split('_')
    .filter((word) => word !== '')
    .map((word) => ACRONYMS[word] ?? word);
  const [first = '', ...rest] = words;
  return [first.charAt(0).toUpperCase() + first.slice(1), ...rest].join(' ');
}

function catalogue(group: CatalogueField['group'], fields: readonly string[], shape: Readonly<Record<string, z.core.$ZodType>>): CatalogueField[] {
  return fields.map((field) => {
    const key = `${group}.${field}`;
    const schema = shape[field];
    if (schema === undefined) throw new Error(`${key} is listed but has no schema`);
    const { inner, description } = unwrapContractField(schema);
    return { group, field, key, label: fieldLabel(field), description, kind: fieldKind(inner, field, key) };
  });
}

/** Every contract field, in the contract's order: the household fields, then the career fields. */
export const FIELD_CATALOGUE: readonly CatalogueField[] = [
  ...catalogue('household', HOUSEHOLD_FIELDS, HouseholdSchema.shape),
  ...catalogue('career', CAREER_FIELDS, CareerSchema.shape),
];
