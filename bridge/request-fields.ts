// Building an enrichment request from CRM values, the same way for every connector: trimmed text
// within the contract's limits, and de-duplicated lists of at most the contract's length.
import { MAX_LIST_ENTRIES } from '../core/contract/schemas.ts';
import type { CrmValue } from './model.ts';

/**
 * A trimmed value, null when empty or longer than the contract allows for its field: one over-long
 * property would make the whole request invalid, and cutting it would change the identity it names.
 */
export function requestText(value: CrmValue | undefined, max: number): string | null {
  if (value === undefined || value === null) return null;
  const s = String(value).trim();
  return s === '' || s.length > max ? null : s;
}

/** Non-empty values, case-insensitively unique, at most the contract's list length. */
export function uniqueValues(values: readonly (string | null)[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const value of values) {
    if (value === null) continue;
    const key = value.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(value);
  }
  return out.slice(0, MAX_LIST_ENTRIES);
}
