// A record's do-not-enrich and undo, as the pipeline, backfills and the record view decide them.
// A record is excluded while the CRM's do-not-enrich checkbox (DO_NOT_ENRICH_KEY, read with
// the record) is checked, which a CRM user's Exclude does and an admin may do in bulk with the CRM's
// lists, imports and workflows (for a connector without the checkbox: while a CRM user's Exclude stands). A record whose last enrichment was undone is not
// enriched again automatically until its identity (the hash of its normalized input) changes or someone
// asks for Enrich now.
import type { CrmConnector, CrmRecord } from './connector.ts';
import type { CrmValue, RecordControl } from './model.ts';
import { DO_NOT_ENRICH_KEY } from './write-policy.ts';

/** Whether a CRM value is a checked box: `true` (Salesforce), `"true"` (HubSpot), or the like. */
export function checked(value: CrmValue | undefined): boolean {
  if (value === true) return true;
  if (typeof value === 'string') return ['true', '1', 'yes'].includes(value.trim().toLowerCase());
  if (typeof value === 'number') return value === 1;
  return false;
}

/** Whether the record's do-not-enrich checkbox is checked in the CRM (false when the connector maps none). */
export function doNotEnrichChecked(connector: Pick<CrmConnector, 'propertyFor'>, object: string, record: CrmRecord): boolean {
  const property = connector.propertyFor(object, DO_NOT_ENRICH_KEY);
  return property !== null && checked(record.properties[property]);
}

/**
 * Why a record is excluded, or null when it is not. Where the connector maps the do-not-enrich checkbox,
 * the checkbox is what counts (the two stay in step: Exclude checks it, Include again unchecks it, so
 * an admin unchecking it in the CRM includes the record again, and checking it excludes one never
 * excluded through us); `by` says whether a CRM user's Exclude stands behind it. Without the checkbox, a
 * CRM user's Exclude alone.
 */
export function exclusion(
  connector: Pick<CrmConnector, 'propertyFor'>,
  object: string,
  record: CrmRecord,
  control: RecordControl | undefined,
): { readonly by: 'user' | 'crm_checkbox'; readonly detail: string } | null {
  const byUser = control?.excludedAt != null ? { by: 'user' as const, detail: `excluded ${control.excludedAt}` } : null;
  if (connector.propertyFor(object, DO_NOT_ENRICH_KEY) === null) return byUser;
  if (!doNotEnrichChecked(connector, object, record)) return null;
  return byUser ?? { by: 'crm_checkbox', detail: "the CRM's do-not-enrich checkbox is set" };
}

/** Whether an undo still holds the record back: undone, its identity unchanged, and no Enrich now asked. */
export function heldByUndo(control: RecordControl | undefined, inputHash: string, enrichNow: boolean): boolean {
  if (enrichNow || control?.undoneAt == null) return false;
  return control.undoneInputHash === null || control.undoneInputHash === inputHash;
}
