// Person Accounts: in an org that has them (Nonprofit Cloud is built on them), a person is an Account with
// `IsPersonAccount` true, backed by a hidden Contact. Every custom Contact field shows on the person
// Account under the same name ending in `__pc` (ours: `WF_…__pc`), so nothing more is deployed for them;
// the person's own fields are the Account's `FirstName`, `LastName`, `PersonEmail`, `Phone`,
// `PersonMobilePhone` and `PersonMailing*`; their Individual is `PersonIndividual`.
// Docs: https://developer.salesforce.com/docs/atlas.en-us.object_reference.meta/object_reference/sforce_api_objects_account.htm
//
// The object is `Account`, which an installation enriches only when it is among its objects. A business
// Account (IsPersonAccount false) is never written: the pipeline skips it as `not_a_person`. A person
// Account's `Name` is Salesforce's own (it refuses a write to it), and we never write it.
import { type EnrichmentRequest, STRING_LIMITS } from '../../core/contract/schemas.ts';
import type { CrmValue } from '../../bridge/model.ts';
import { requestText as text, uniqueValues as unique } from '../../bridge/request-fields.ts';

export const PERSON_ACCOUNT = 'Account';

/** Read with every person Account: whether it is one, and the person's identity. */
export const PERSON_ACCOUNT_IDENTITY_FIELDS = [
  'IsPersonAccount',
  'FirstName',
  'LastName',
  'PersonEmail',
  'Phone',
  'PersonMobilePhone',
  'PersonMailingStreet',
  'PersonMailingCity',
  'PersonMailingState',
  'PersonMailingPostalCode',
] as const;

/** The person's Individual's privacy flags (privacy.ts), through the person Account's PersonIndividualId. */
export const PERSON_ACCOUNT_PRIVACY_FIELDS = [
  'PersonIndividual.ShouldForget',
  'PersonIndividual.HasOptedOutProcessing',
  'PersonIndividual.HasOptedOutProfiling',
] as const;

/** A Contact field of ours as the person Account shows it: `WF_HH_Net_Worth__c` → `WF_HH_Net_Worth__pc`. */
export function personAccountFieldName(contactField: string): string {
  return contactField.endsWith('__c') ? `${contactField.slice(0, -3)}__pc` : contactField;
}

/** The Contact field a person Account's `__pc` field is: the inverse of personAccountFieldName. */
export function contactFieldName(field: string): string {
  return field.endsWith('__pc') ? `${field.slice(0, -4)}__c` : field;
}

/** Whether an Account read with PERSON_ACCOUNT_IDENTITY_FIELDS is a person. */
export function isPersonAccount(fields: Readonly<Record<string, CrmValue>>): boolean {
  return fields['IsPersonAccount'] === true;
}

/** A person Account → an enrichment request (a person Account has no company of its own). */
export function personAccountToRequest(fields: Readonly<Record<string, CrmValue>>): EnrichmentRequest {
  const rawStreet = fields['PersonMailingStreet'];
  // A multi-line street (Salesforce keeps its line breaks) becomes one line, as the contract asks.
  const streetLine = typeof rawStreet === 'string' ? rawStreet.replace(/\s*[\r\n]+\s*/g, ' ') : rawStreet;
  const address = {
    address: text(streetLine, STRING_LIMITS.address),
    city: text(fields['PersonMailingCity'], STRING_LIMITS.city),
    state: text(fields['PersonMailingState'], STRING_LIMITS.state),
    zipcode: text(fields['PersonMailingPostalCode'], STRING_LIMITS.zipcode),
  };
  const email = text(fields['PersonEmail'], STRING_LIMITS.email);
  return {
    first_name: text(fields['FirstName'], STRING_LIMITS.name),
    last_name: text(fields['LastName'], STRING_LIMITS.name),
    emails: email === null ? [] : [email],
    phones: unique([text(fields['Phone'], STRING_LIMITS.phone), text(fields['PersonMobilePhone'], STRING_LIMITS.phone)]),
    addresses: Object.values(address).some((v) => v !== null) ? [address] : [],
    company_name: null,
  };
}
