// What an account may see of a match: Career Intelligence gates career data entirely, the political-data
// entitlement gates the political fields (a special category) the same way, and field entitlements trim
// each object to the purchased fields, keeping the identity fields every match has.
import { ALWAYS_CAREER_FIELDS, ALWAYS_HOUSEHOLD_FIELDS, type Career, type Household, POLITICAL_HOUSEHOLD_FIELDS } from '../contract/schemas.ts';
import type { Account, FieldEntitlement } from './model.ts';

function pick<T extends object>(record: T, granted: FieldEntitlement<string>, always: readonly string[], withheld: readonly string[] = []): T {
  if (granted === 'all' && withheld.length === 0) return record;
  const keep = granted === 'all' ? null : new Set<string>([...always, ...granted]);
  const drop = new Set<string>(withheld);
  // Object.fromEntries loses the key type; the keys kept are a subset of T's own keys.
  return Object.fromEntries(Object.entries(record).filter(([key]) => !drop.has(key) && (keep === null || keep.has(key)))) as T;
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
