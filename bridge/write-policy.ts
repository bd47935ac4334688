// What to write back, decided field by field: the enrichment's values, the installation's exclusions
// and minimum confidence, the overwrite mode, the record's current values and what we last wrote.
import { CAREER_FIELDS, type EnrichmentResponse, HOUSEHOLD_FIELDS } from '../core/contract/schemas.ts';
import type { CrmConnector, FieldValue } from './connector.ts';
import type { CrmValue, LoggedChange, OverwriteMode } from './model.ts';

/** The status fields are ours alone: written on every enrichment, whatever the overwrite mode. */
export const STATUS_KEYS = ['status.enriched_at', 'status.household_matched', 'status.career_matched', 'status.enrichment_status'] as const;

export type EnrichmentStatus = 'enriched' | 'no_match' | 'below_min_confidence';

/**
 * Every value the status property (`status.enrichment_status`) takes: an enrichment's outcome, or why a
 * record was not enriched, where the record could be written: nothing to match on
 * (`no_match_key`), excluded by a CRM user or the CRM's do-not-enrich checkbox (`excluded`), its last
 * enrichment undone (`undone`).
 */
export type RecordStatusValue = EnrichmentStatus | 'no_match_key' | 'excluded' | 'undone';

/**
 * The do-not-enrich checkbox we provision on every enriched object (`wf_do_not_enrich`, a CRM boolean):
 * read with the record, never written by an enrichment; Exclude checks it and Include again unchecks it.
 */
export const DO_NOT_ENRICH_KEY = 'control.do_not_enrich';

export interface FieldsToWrite {
  readonly status: EnrichmentStatus;
  /** Household data at or above the minimum confidence. */
  readonly householdUsed: boolean;
  readonly careerUsed: boolean;
  /** Field key → value, empty values left out. */
  readonly values: ReadonlyMap<string, FieldValue>;
}

function isEmpty(value: FieldValue | CrmValue | undefined): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value === 'string') return value.trim() === '';
  if (Array.isArray(value)) return value.length === 0;
  return false;
}

/** The field values an enrichment yields: household and career below `minConfidence` are dropped. */
export function fieldsFromResponse(response: EnrichmentResponse, minConfidence: number, enrichedAt: Date): FieldsToWrite {
  const household = response.household != null && response.household.confidence >= minConfidence ? response.household : null;
  const career = response.career != null && response.career.confidence >= minConfidence ? response.career : null;
  const matchedAny = response.household != null || response.career != null;
  const status: EnrichmentStatus = household !== null || career !== null ? 'enriched' : matchedAny ? 'below_min_confidence' : 'no_match';
  const values = new Map<string, FieldValue>();
  for (const [prefix, data] of [
    ['household', household],
    ['career', career],
  ] as const) {
    if (data === null) continue;
    for (const [field, value] of Object.entries(data) as [string, FieldValue | undefined][]) {
      if (value !== undefined && !isEmpty(value)) values.set(`${prefix}.${field}`, value);
    }
  }
  values.set('status.enriched_at', enrichedAt.toISOString());
  values.set('status.household_matched', household !== null);
  values.set('status.career_matched', career !== null);
  values.set('status.enrichment_status', status);
  return { status, householdUsed: household !== null, careerUsed: career !== null, values };
}

/** Whether two CRM values are the same value: numbers as numbers, strings trimmed, empty as empty. */
export function sameCrmValue(a: CrmValue | undefined, b: CrmValue | undefined): boolean {
  if (isEmpty(a) || isEmpty(b)) return isEmpty(a) && isEmpty(b);
  const left = String(a).trim();
  const right = String(b).trim();
  if (left === right) return true;
  const numbers = /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/;
  return numbers.test(left) && numbers.test(right) && Number(left) === Number(right);
}

/** Whether a property still holds what we wrote there, as the CRM reads our value back (`holdsWritten`). */
export function stillWritten(connector: Pick<CrmConnector, 'holdsWritten'>, property: string, current: CrmValue | undefined, written: CrmValue): boolean {
  return connector.holdsWritten === undefined ? sameCrmValue(current, written) : connector.holdsWritten(property, current, written);
}

export interface WriteDecision {
  /** CRM property → value to send; empty when nothing changes. */
  readonly properties: Record<string, CrmValue>;
  /** Field keys that go out in `properties`. */
  readonly keys: readonly string[];
  /** CRM property → our value there after the write: what `tracked` compares with next time. */
  readonly written: Record<string, CrmValue>;
}

/**
 * Which of the values we wrote before no longer describe the record's person: the household's when
 * the new answer matches no household or another one (another windfall_id), the career's when it
 * matches no career or the household turned out to be someone else's.
 */
export interface StaleSections {
  readonly household: boolean;
  readonly career: boolean;
}

/** What the last enrichment matched, as the record state keeps it. */
export interface PreviousMatch {
  readonly householdMatched: boolean;
  readonly careerMatched: boolean;
  readonly windfallId: string | null;
}

export function staleSections(previous: PreviousMatch | undefined, response: EnrichmentResponse): StaleSections {
  if (previous === undefined) return { household: false, career: false };
  const otherHousehold = previous.windfallId !== null && response.household != null && response.household.windfall_id !== previous.windfallId;
  return {
    household: previous.householdMatched && (response.household == null || otherHousehold),
    career: previous.careerMatched && (response.career == null || otherHousehold),
  };
}

export interface DecideInput {
  readonly fields: FieldsToWrite;
  readonly object: string;
  readonly connector: Pick<CrmConnector, 'propertyFor' | 'formatValue'> & { readonly emptyValue?: CrmValue };
  readonly mode: OverwriteMode;
  readonly excluded: ReadonlySet<string>;
  /** The record's properties as read. */
  readonly current: Readonly<Record<string, CrmValue>>;
  /** What we last wrote to this record, by property (empty when never enriched). */
  readonly lastWritten: Readonly<Record<string, CrmValue>>;
  /** Sections whose values we wrote describe someone else now (default: none). */
  readonly stale?: StaleSections;
}

/**
 * The overwrite rules, field by field:
 * - an empty value is never written (a no-match or a missing field does not clear what is there);
 * - an excluded field, or one the connector does not map, is never written;
 * - `fill_empty` writes only into an empty property;
 * - `tracked` writes into an empty property, or one still holding what we last wrote there, so a
 *   human's edit is never overwritten;
 * - `always` writes whatever is there;
 * - a property already holding the value is not sent (no write, no change event), but is ours now;
 * - after a re-enrichment that matches nobody or someone else (`stale`), a value we wrote that nobody
 *   has edited since is replaced by the new person's in any mode, or cleared (the connector's
 *   `emptyValue`) when the new answer has none; a value a human edited stays.
 */
export function decideWrites(input: DecideInput): WriteDecision {
  const properties: Record<string, CrmValue> = {};
  const keys: string[] = [];
  const written: Record<string, CrmValue> = { ...input.lastWritten };
  // Properties still holding what we wrote for a person this record is no longer matched to.
  const staleOurs = new Set<string>();
  // Properties ours no more: cleared below, or a human's now (a replaced one is ours again).
  const dropped = new Set<string>();
  const staleKeys = [
    ...(input.stale?.household === true ? HOUSEHOLD_FIELDS.map((f) => `household.${f}`) : []),
    ...(input.stale?.career === true ? CAREER_FIELDS.map((f) => `career.${f}`) : []),
  ];
  for (const key of staleKeys) {
    const property = input.connector.propertyFor(input.object, key);
    if (property === null || input.excluded.has(key) || !(property in input.lastWritten)) continue;
    if (!isEmpty(input.current[property]) && sameCrmValue(input.current[property], input.lastWritten[property])) staleOurs.add(property);
    dropped.add(property);
  }
  for (const [key, raw] of input.fields.values) {
    if (input.excluded.has(key)) continue;
    const property = input.connector.propertyFor(input.object, key);
    if (property === null) continue;
    const value = input.connector.formatValue(key, raw);
    if (isEmpty(value)) continue;
    const current = input.current[property];
    if (sameCrmValue(current, value)) {
      written[property] = value;
      staleOurs.delete(property);
      dropped.delete(property);
      continue;
    }
    const ours = key.startsWith('status.');
    const allowed =
      ours ||
      staleOurs.has(property) ||
      input.mode === 'always' ||
      isEmpty(current) ||
      (input.mode === 'tracked' && property in input.lastWritten && sameCrmValue(current, input.lastWritten[property]));
    if (!allowed) continue;
    properties[property] = value;
    keys.push(key);
    written[property] = value;
    staleOurs.delete(property);
    dropped.delete(property);
  }
  for (const property of staleOurs) {
    if (property in properties) continue;
    properties[property] = input.connector.emptyValue ?? null;
    const key = staleKeys.find((k) => input.connector.propertyFor(input.object, k) === property);
    if (key !== undefined) keys.push(key);
  }
  return { properties, keys, written: Object.fromEntries(Object.entries(written).filter(([property]) => !dropped.has(property))) };
}

/**
 * What the enrichment log keeps of a write: per property sent, the value and what the record held
 * before it (null when the property was empty or missing), so the console can show what was replaced.
 */
export function replacedValues(properties: Readonly<Record<string, CrmValue>>, current: Readonly<Record<string, CrmValue>>): Record<string, LoggedChange> {
  const changes: Record<string, LoggedChange> = {};
  for (const [property, value] of Object.entries(properties)) {
    const before = current[property];
    changes[property] = { value, replaced: before === undefined || isEmpty(before) ? null : before };
  }
  return changes;
}
