// NPSP household Accounts: in the Nonprofit Success Pack's Household Account model, the people of one
// household are Contacts under one Account whose `npe01__SYSTEM_AccountType__c` is "Household Account".
// Household data belongs to the household, so an installation may put the household section there
// (`householdFieldsOn`: household, or both), under the same `WF_HH_*__c` names the Contact has (the
// optional manifests/salesforce/households/ project deploys them on Account).
//
// Nothing more is called for it: a Contact's read asks, through its `Account` relationship, for the
// Account's type and our household fields on it; the pipeline writes each household Account once per
// batch, in the same 200-record collection calls as everything else.
// Docs: https://help.salesforce.com/s/articleView?id=sfdo.NPSP_What_is_an_Account_Model.htm
import type { HouseholdRecord } from '../../bridge/connector.ts';
import type { CrmValue, HouseholdPlacement } from '../../bridge/model.ts';
import { HOUSEHOLD_ACCOUNT_OBJECT, readSalesforceValue, salesforceHouseholdAccountFields } from './fields.ts';
import type { SalesforceApi } from './api.ts';
import { toSalesforceId18 } from './ids.ts';

/** NPSP's system field telling a household Account from an organization's. */
export const NPSP_ACCOUNT_TYPE_FIELD = 'npe01__SYSTEM_AccountType__c';
/** Its value on a household Account. */
export const NPSP_HOUSEHOLD_TYPE = 'Household Account';

/** The relationship path a Contact's read reaches its Account's field by. */
const ACCOUNT_PATH = 'Account.';

/** Our household fields on Account, built once: every Contact read and every household check names them. */
const HOUSEHOLD_FIELD_NAMES: readonly string[] = salesforceHouseholdAccountFields().map((field) => field.name);
const READ_FIELDS: readonly string[] = [
  'AccountId',
  `${ACCOUNT_PATH}${NPSP_ACCOUNT_TYPE_FIELD}`,
  ...HOUSEHOLD_FIELD_NAMES.map((name) => `${ACCOUNT_PATH}${name}`),
];

/** Read with each Contact when household fields may go to its household Account. */
export function householdReadFields(): readonly string[] {
  return READ_FIELDS;
}

/** Whether the placement puts household fields on a household record at all. */
export function usesHouseholdRecord(placement: HouseholdPlacement | undefined): boolean {
  return placement === 'household' || placement === 'both';
}

/**
 * The Contact's household Account, from the fields householdReadFields added to its read; null when
 * its Account is none, or not a household (an organization's Account keeps the fields on the Contact).
 */
export function householdAccountOf(properties: Readonly<Record<string, CrmValue>>): HouseholdRecord | null {
  const accountId = properties['AccountId'];
  if (typeof accountId !== 'string' || properties[`${ACCOUNT_PATH}${NPSP_ACCOUNT_TYPE_FIELD}`] !== NPSP_HOUSEHOLD_TYPE) return null;
  const id = toSalesforceId18(accountId);
  if (id === null) return null;
  const current: Record<string, CrmValue> = {};
  for (const name of HOUSEHOLD_FIELD_NAMES) current[name] = readSalesforceValue(name, properties[`${ACCOUNT_PATH}${name}`] ?? null);
  return { object: HOUSEHOLD_ACCOUNT_OBJECT, id, properties: current };
}

/** Whether an org can take household fields on its household Accounts, and what is missing if not. */
export interface HouseholdReadiness {
  /** Account has NPSP's account type (the Household Account model's marker). */
  readonly npsp: boolean;
  /** Account has our household fields (the households/ project is deployed and readable). */
  readonly fields: boolean;
  /** What an admin must do first; null: ready. */
  readonly missing: string | null;
}

/** Asks the org (one describe of Account) whether household Accounts can be written. */
export async function householdReadiness(api: Pick<SalesforceApi, 'fieldNames'>): Promise<HouseholdReadiness> {
  const names = await api.fieldNames(HOUSEHOLD_ACCOUNT_OBJECT);
  const npsp = names.has(NPSP_ACCOUNT_TYPE_FIELD);
  const absent = HOUSEHOLD_FIELD_NAMES.filter((name) => !names.has(name));
  const fields = absent.length === 0;
  const missing = !npsp
    ? `Account has no ${NPSP_ACCOUNT_TYPE_FIELD}: the org does not use NPSP's Household Account model`
    : !fields
      ? `Account lacks ${absent.length} of our household fields (${absent.slice(0, 3).join(', ')}…): deploy manifests/salesforce/households and give the integration user its permission set`
      : null;
  return { npsp, fields, missing };
}
