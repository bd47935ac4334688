// The CrmConnector port: what each CRM (HubSpot, Salesforce) implements so the pipeline can read
// records, map them to a request, map an enrichment to properties, and write those back, in batches.
import type { EnrichmentRequest } from '../core/contract/schemas.ts';
import type { CrmValue } from './model.ts';

export interface CrmRecord {
  readonly id: string;
  /** The properties read, by CRM name; an empty or missing value is null. */
  readonly properties: Readonly<Record<string, CrmValue>>;
}

export interface RecordUpdate {
  readonly id: string;
  readonly properties: Readonly<Record<string, CrmValue>>;
}

export type WriteResult =
  | { readonly id: string; readonly ok: true }
  /**
   * not_found: deleted (or converted) since it was read. rejected: the CRM refused this record's
   * values; retrying will not help. validation: a rule of the CRM account's own (a required or
   * conditionally required property) refused it, and `message` tells the admin what to change.
   * sensitive: a property the account marked as sensitive data, which we may not write. transient:
   * try again later. Only transient is retried.
   */
  | { readonly id: string; readonly ok: false; readonly reason: WriteRefusal; readonly message: string };

export type WriteRefusal = 'not_found' | 'rejected' | 'validation' | 'sensitive' | 'transient';

/** A value of the enrichment before a connector formats it for its CRM. */
export type FieldValue = string | number | boolean | readonly string[];

export type CrmErrorKind =
  /** A short-window limit: wait until `retryAt`, nothing is wrong. */
  | 'rate_limited'
  /** A daily or org-wide limit: pause the installation until `retryAt` (or an operator resumes it). */
  | 'limit_exhausted'
  /** Credentials refused after any refresh: retried with backoff; an admin may need to reconnect. */
  | 'auth'
  /** Anything else worth retrying. */
  | 'transient';

export class CrmError extends Error {
  constructor(
    readonly kind: CrmErrorKind,
    message: string,
    readonly retryAt: Date | null = null,
  ) {
    super(message);
    this.name = 'CrmError';
  }
}

/**
 * A CRM call that did not answer within its timeout (or whose answer stopped coming): retried with the
 * queue's backoff, and the rest of the batch waits too.
 */
export class CrmTimeoutError extends CrmError {
  constructor(message: string) {
    super('transient', message);
    this.name = 'CrmTimeoutError';
  }
}

/** What a caller may pass to every CRM call. */
export interface CallOptions {
  /** Aborts the call in flight (a shutdown past its grace, a lost lease): it rejects at once. */
  readonly signal?: AbortSignal | undefined;
}

/**
 * What the CRM itself says the person asked of those who hold their data, as read with the record
 * (Salesforce's Individual: "Forget this Individual", "Don't Process", "Don't Profile"): forget them
 * (erase what we hold and never enrich them again in this installation), or leave them unprocessed.
 */
export type PrivacyRequest = 'forget' | 'do_not_process';

/**
 * The household record a person belongs to in the CRM (an NPSP household Account), as read with the
 * person's record: where the household section goes when the installation puts it there.
 */
export interface HouseholdRecord {
  /** The CRM object it is (`Account`). */
  readonly object: string;
  readonly id: string;
  /** Its properties we may write, as read with the person (what the write policy compares with). */
  readonly properties: Readonly<Record<string, CrmValue>>;
}

export interface CrmConnector {
  /** Records per read and per write call (HubSpot 100, Salesforce 200). */
  readonly maxBatch: number;
  /** The objects enriched when an installation names none. */
  readonly defaultObjects: readonly string[];
  /** Reads records by id with the properties mapping and write-back need; a missing id is deleted. */
  read(object: string, ids: readonly string[], options?: CallOptions): Promise<Map<string, CrmRecord>>;
  /** Writes properties, one result per update (partial failures are per record, not thrown). */
  write(object: string, updates: readonly RecordUpdate[], options?: CallOptions): Promise<WriteResult[]>;
  /** The enrichment request for a record. */
  toRequest(object: string, record: CrmRecord): EnrichmentRequest;
  /** The CRM property a field key (`household.net_worth`, `status.enriched_at`) goes to; null: not written. */
  propertyFor(object: string, key: string): string | null;
  /** A field's value as the CRM stores it. */
  formatValue(key: string, value: FieldValue): CrmValue;
  /** What clears a property (HubSpot: the empty string; Salesforce: null, the default). */
  readonly emptyValue?: CrmValue;
  /**
   * Whether a property still holds what we wrote there, where the CRM reads a value back otherwise than
   * it was written (Salesforce: an unchecked box as empty, a DateTime in its own format); absent: the
   * same value (sameCrmValue).
   */
  holdsWritten?(property: string, current: CrmValue | undefined, written: CrmValue): boolean;
  /** Whether the record is a person at all (a Salesforce business Account is not); absent: every record is. */
  isPerson?(object: string, record: CrmRecord): boolean;
  /** The person's privacy request the record carries (read with it); absent or null: none. */
  privacyRequest?(object: string, record: CrmRecord): PrivacyRequest | null;
  /**
   * The household record the person belongs to, when the installation puts household fields there
   * (`householdFieldsOn` household or both) and the record has one; absent or null: none.
   */
  householdOf?(object: string, record: CrmRecord): HouseholdRecord | null;
  /** The property a household field key goes to on a household record; null: not written there. */
  householdPropertyFor?(key: string): string | null;
}
