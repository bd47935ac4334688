// The Salesforce CrmConnector: Contacts, Leads and person Accounts (person-accounts.ts) read and written
// 200 at a time through the paced REST client, mapped to requests and to `WF_*__c` fields (`WF_*__pc` on
// a person Account). Each read carries the person's privacy flags (their Individual's; privacy.ts) where
// the org lets us read them. Contacts and Leads are enriched by default; person Accounts when an
// installation names `Account` among its objects.
import type { EnrichmentRequest } from '../../core/contract/schemas.ts';
import type { CallOptions, CrmConnector, CrmRecord, FieldValue, HouseholdRecord, PrivacyRequest, RecordUpdate, WriteResult } from '../../bridge/connector.ts';
import type { Installations } from '../../bridge/installations.ts';
import type { CrmValue, HouseholdPlacement, Installation } from '../../bridge/model.ts';
import { SALESFORCE_BATCH_LIMIT, SalesforceApi } from './api.ts';
import { SalesforceTokenSource } from './auth.ts';
import {
  SALESFORCE_IDENTITY_FIELDS,
  SALESFORCE_OBJECTS,
  formatSalesforceValue,
  isHouseholdKey,
  readSalesforceValue,
  sameSalesforceValue,
  salesforceFieldFor,
  salesforceFields,
} from './fields.ts';
import { salesforceRecordToRequest } from './mapping.ts';
import { householdAccountOf, householdReadFields, usesHouseholdRecord } from './npsp-households.ts';
import { PRIVACY_FIELDS, individualAccess, isInvalidField, privacyRequestOf } from './privacy.ts';
import {
  PERSON_ACCOUNT,
  PERSON_ACCOUNT_IDENTITY_FIELDS,
  PERSON_ACCOUNT_PRIVACY_FIELDS,
  contactFieldName,
  isPersonAccount,
  personAccountFieldName,
  personAccountToRequest,
} from './person-accounts.ts';

export const SALESFORCE_PROVIDER = 'salesforce';

/** The objects the connector enriches: Contacts and Leads (the fields deployed on them), and person Accounts. */
export const SALESFORCE_ENRICHED_OBJECTS = [...SALESFORCE_OBJECTS, PERSON_ACCOUNT] as const;
export type SalesforceEnrichedObject = (typeof SALESFORCE_ENRICHED_OBJECTS)[number];

export function isSalesforceObject(object: string): object is SalesforceEnrichedObject {
  return (SALESFORCE_ENRICHED_OBJECTS as readonly string[]).includes(object);
}

/** What a read asks for: the identity fields, and ours on that object (the overwrite policy compares them). */
export function readFields(object: SalesforceEnrichedObject): string[] {
  if (object === PERSON_ACCOUNT) {
    return [
      ...PERSON_ACCOUNT_IDENTITY_FIELDS,
      ...salesforceFields()
        .filter((f) => f.object === 'Contact')
        .map((f) => personAccountFieldName(f.name)),
    ];
  }
  return [
    ...SALESFORCE_IDENTITY_FIELDS[object],
    ...salesforceFields()
      .filter((f) => f.object === object)
      .map((f) => f.name),
  ];
}

export interface SalesforceReadOptions {
  /** Whose org's Individual readability is remembered (privacy.ts); absent, each read finds out. */
  readonly installationId?: string;
  /** false: records are read without the privacy flags (a backfill's plan counts records, it enriches none). Default true. */
  readonly privacyFlags?: boolean;
  /** Where the installation puts household fields; household or both: a Contact is read with its NPSP household Account. */
  readonly householdFieldsOn?: HouseholdPlacement;
}

export class SalesforceConnector implements CrmConnector {
  readonly maxBatch = SALESFORCE_BATCH_LIMIT;
  readonly defaultObjects = SALESFORCE_OBJECTS;

  constructor(
    readonly api: SalesforceApi,
    private readonly options: SalesforceReadOptions = {},
  ) {}

  private object(object: string): SalesforceEnrichedObject {
    if (!isSalesforceObject(object)) throw new Error(`the Salesforce connector enriches Contacts, Leads and person Accounts, not ${object}`);
    return object;
  }

  async read(object: string, ids: readonly string[], options: CallOptions = {}): Promise<Map<string, CrmRecord>> {
    const households = object === 'Contact' && usesHouseholdRecord(this.options.householdFieldsOn);
    const fields = [...readFields(this.object(object)), ...(households ? householdReadFields() : [])];
    const flags = object === PERSON_ACCOUNT ? PERSON_ACCOUNT_PRIVACY_FIELDS : PRIVACY_FIELDS;
    const { installationId, privacyFlags = true } = this.options;
    let found: Map<string, Record<string, CrmValue> | null>;
    if (privacyFlags && (installationId === undefined || individualAccess.readable(installationId))) {
      try {
        found = await this.api.retrieve(object, ids, [...fields, ...flags], options);
      } catch (error) {
        if (!isInvalidField(error)) throw error;
        // Our own fields read alone: if they fail too, that error is the one to see (metadata not deployed).
        found = await this.api.retrieve(object, ids, fields, options);
        if (installationId !== undefined) individualAccess.markUnreadable(installationId);
      }
    } else {
      found = await this.api.retrieve(object, ids, fields, options);
    }
    const records = new Map<string, CrmRecord>();
    for (const [id, fields] of found) {
      if (fields === null) continue; // deleted, or a Lead converted since: gone
      // An unchecked box reads as empty: Checkbox fields start out false, and the overwrite policy
      // must not take that default for a value someone set.
      const properties = Object.fromEntries(Object.entries(fields).map(([name, value]) => [name, readSalesforceValue(contactFieldName(name), value)]));
      records.set(id, { id, properties });
    }
    return records;
  }

  async write(object: string, updates: readonly RecordUpdate[], options: CallOptions = {}): Promise<WriteResult[]> {
    return this.api.update(this.object(object), updates, options);
  }

  toRequest(object: string, record: CrmRecord): EnrichmentRequest {
    const known = this.object(object);
    return known === PERSON_ACCOUNT ? personAccountToRequest(record.properties) : salesforceRecordToRequest(known, record.properties);
  }

  /** A business Account is not a person: never enriched, never written. */
  isPerson(object: string, record: CrmRecord): boolean {
    return object !== PERSON_ACCOUNT || isPersonAccount(record.properties);
  }

  /** Salesforce clears a field set to null. */
  readonly emptyValue = null;

  /** Whether a field still holds what we wrote, as Salesforce reads it back (an unchecked box empty, a DateTime in its own format). */
  holdsWritten(property: string, current: CrmValue | undefined, written: CrmValue): boolean {
    return sameSalesforceValue(contactFieldName(property), current, written);
  }

  /** A Contact's NPSP household Account, read with it, when the installation puts household fields there. */
  householdOf(object: string, record: CrmRecord): HouseholdRecord | null {
    if (object !== 'Contact' || !usesHouseholdRecord(this.options.householdFieldsOn)) return null;
    return householdAccountOf(record.properties);
  }

  /** On a household Account, the household section goes under the Contact's names (`WF_HH_*__c`). */
  householdPropertyFor(key: string): string | null {
    return isHouseholdKey(key) ? salesforceFieldFor(key) : null;
  }

  /** The person's privacy request, from the Individual flags the read carried. */
  privacyRequest(_object: string, record: CrmRecord): PrivacyRequest | null {
    return privacyRequestOf(record.properties);
  }

  propertyFor(object: string, key: string): string | null {
    const field = salesforceFieldFor(key);
    return field !== null && object === PERSON_ACCOUNT ? personAccountFieldName(field) : field;
  }

  formatValue(key: string, value: FieldValue): CrmValue {
    return formatSalesforceValue(key, value);
  }
}

export interface SalesforceConnectorOptions {
  /** Tests and local fakes only: accept an instance URL on any host. */
  readonly allowAnyHost?: boolean;
  /**
   * false: the calls are not held to the installation's share of the org's API allowance (a privacy
   * request is a duty, not an enrichment). Default true.
   */
  readonly withinApiShare?: boolean;
}

/** The REST client of an installation, with its token source. */
export function salesforceApiFor(installation: Installation, installations: Installations, options: SalesforceConnectorOptions = {}): SalesforceApi {
  const tokens = new SalesforceTokenSource(installation.id, installations, { allowAnyHost: options.allowAnyHost ?? false });
  return new SalesforceApi({
    orgId: installation.externalAccountId,
    session: () => tokens.session(),
    refreshSession: (refused) => tokens.refreshAfterRefusal(refused),
    allowAnyHost: options.allowAnyHost ?? false,
    // A share of 1 holds nothing back: Salesforce's own REQUEST_LIMIT_EXCEEDED is the limit then.
    ...(options.withinApiShare === false || installation.settings.crmApiShare >= 1 ? {} : { budget: { share: installation.settings.crmApiShare } }),
  });
}

export function salesforceConnectorFactory(options: SalesforceConnectorOptions = {}) {
  return (installation: Installation, installations: Installations): Promise<SalesforceConnector> =>
    Promise.resolve(
      new SalesforceConnector(salesforceApiFor(installation, installations, options), {
        installationId: installation.id,
        householdFieldsOn: installation.settings.householdFieldsOn,
      }),
    );
}
