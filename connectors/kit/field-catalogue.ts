// The part of the field catalogue both CRMs show the same way: the values of the enrichment status and
// their labels. Each CRM's fields.ts / properties.ts derives its own names and types from here and from
// the contract's field lists (core/contract/schemas.ts).
import { z } from 'zod';
import type { EnrichmentStatus } from '../pipeline/write-policy.ts';

/** Every value of `status.enrichment_status`; the type check below fails if one is missing. */
export const ENRICHMENT_STATUSES = ['enriched', 'no_match', 'below_min_confidence'] as const satisfies readonly EnrichmentStatus[];
const allStatusesListed: Exclude<EnrichmentStatus, (typeof ENRICHMENT_STATUSES)[number]> extends never ? true : never = true;
void allStatusesListed;

export const ENRICHMENT_STATUS_LABELS: Readonly<Record<EnrichmentStatus, string>> = {
  enriched: 'Enriched',
  no_match: 'No match',
  below_min_confidence: 'Below minimum confidence',
};

/** The status picklist's options, in display order, as `{ value, label }`. */
export function enrichmentStatusOptions(): { value: EnrichmentStatus; label: string }[] {
  return ENRICHMENT_STATUSES.map((value) => ({ value, label: ENRICHMENT_STATUS_LABELS[value] }));
}

/**
 * A contract field's schema without its optional and nullable wrappers, and its description (which may
 * sit on a wrapper or on the inner type: the outermost one wins). Each CRM maps the inner type to its
 * own kinds.
 */
export function unwrapContractField(schema: z.core.$ZodType): { readonly inner: z.core.$ZodType; readonly description: string | null } {
  let description: string | null = null;
  let current = schema;
  while (current instanceof z.ZodOptional || current instanceof z.ZodNullable) {
    description ??= z.globalRegistry.get(current)?.description ?? null;
    current = current.unwrap();
  }
  description ??= z.globalRegistry.get(current)?.description ?? null;
  return { inner: current, description };
}

const ACRONYMS: Readonly<Record<string, string>> = { id: 'ID', url: 'URL', naics: 'NAICS', linkedin: 'LinkedIn' };
/** Labels a word-by-word reading would leave unclear. */
const FIELD_LABELS: Readonly<Record<string, string>> = { confidence: 'Match confidence' };

/** A contract field's label, the same in every CRM: `company_naics_code` → `Company NAICS code`. */
export function fieldLabel(field: string): string {
  const fixed = FIELD_LABELS[field];
  if (fixed !== undefined) return fixed;
  const words = field.split('_').filter((word) => word !== '').map((word) => ACRONYMS[word] ?? word);
  const [first = '', ...rest] = words;
  return [first.charAt(0).toUpperCase() + first.slice(1), ...rest].join(' ');
}
