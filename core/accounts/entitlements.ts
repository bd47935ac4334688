// What an account may see of a match: Career Intelligence gates career data entirely; field
// entitlements trim each object to the purchased fields, keeping the identity fields every match has.
import { ALWAYS_CAREER_FIELDS, ALWAYS_HOUSEHOLD_FIELDS, type Career, type Household } from '../contract/schemas.ts';
import type { Account, FieldEntitlement } from './model.ts';

function pick<T extends object>(record: T, granted: FieldEntitlement<string>, always: readonly string[]): T {
  if (granted === 'all') return record;
  const keep = new Set<string>([...always, ...granted]);
  // Object.fromEntries loses the key type; the keys kept are a subset of T's own keys.
  return Object.fromEntries(Object.entries(record).filter(([key]) => keep.has(key))) as T;
}

export function entitledHousehold(account: Account, household: Household): Household {
  return pick(household, account.householdFields, ALWAYS_HOUSEHOLD_FIELDS);
}

export function entitledCareer(account: Account, career: Career): Career {
  return pick(career, account.careerFields, ALWAYS_CAREER_FIELDS);
}
