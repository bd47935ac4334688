// What an account may see of a match: Career Intelligence gates career data entirely, the political-data
// entitlement gates the political fields (a special category) the same way, and field entitlements trim
// each object to the purchased fields, keeping the identity fields every match has.
import { ALWAYS_CAREER_FIELDS, ALWAYS_HOUSEHOLD_FIELDS, type Career, type Household, POLITICAL_HOUSEHOLD_FIELDS } from '../contract/schemas.ts';
import type { Account, FieldEntitlement } from './model.ts';

/** Each field list as a set with the fields always kept, made once per list (an account's lists live as long as its cached credential). */
const keptSets = new WeakMap<readonly string[], { readonly always: readonly string[]; readonly set: ReadonlySet<string> }>();
const withheldSets = new WeakMap<readonly string[], ReadonlySet<string>>();

function keptSet(granted: readonly string[], always: readonly string[]): ReadonlySet<string> {
  const cached = keptSets.get(granted);
  if (cached?.always === always) return cached.set;
  const set = new Set([...always, ...granted]);
  keptSets.set(granted, { always, set });
  return set;
}

function withheldSet(withheld: readonly string[]): ReadonlySet<string> {
  let set = withheldSets.get(withheld);
  if (set === undefined) {
    set = new Set(withheld);
    withheldSets.set(withheld, set);
  }
  return set;
}

function pick<T extends object>(record: T, granted: FieldEntitlement<string>, always: readonly string[], withheld: readonly string[] = []): T {
  if (granted === 'all' && withheld.length === 0) return record;
  // Every answer passes here: one pass over the record's own keys, no intermediate arrays.
  const keep = granted === 'all' ? null : keptSet(granted, always);
  const drop = withheldSet(withheld);
  const kept: Record<string, unknown> = {};
  for (const key in record) {
    if (Object.hasOwn(record, key) && !drop.has(key) && (keep === null || keep.has(key))) kept[key] = record[key];
  }
  // The keys kept are a subset of T's own keys.
  return kept as T;
}

/**
 * The household as the account may see it: its granted fields, and the political ones only when it is
 * entitled to political data, whatever its field list says (on production and sandbox answers alike).
 */
export function entitledHousehold(account: Account, household: Household): Household {
  return pick(household, account.householdFields, ALWAYS_HOUSEHOLD_FIELDS, account.politicalData ? [] : POLITICAL_HOUSEHOLD_FIELDS);
}

export function entitledCareer(account: Account, career: Career): Career {
  return pick(career, account.careerFields, ALWAYS_CAREER_FIELDS);
}
