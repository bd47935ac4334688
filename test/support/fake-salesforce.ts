// A small stateful fake of the Salesforce org enrichbridge talks to, as a real HTTP server on 127.0.0.1: the
// REST endpoints the connector calls (API v62.0: versions root, sObject Collections retrieve and update, a
// minimal SOQL query, the running user's UserPermissionAccess), the OAuth web-server flow with PKCE (the
// authorize page and the code exchange, as the org's login host), and what the org itself does when a
// Contact or Lead is created: the record-triggered flow's Outbound Message (SOAP), posted to a configured URL.
//
// The org has our metadata deployed: the custom fields, their types and lengths, and the outbound messages'
// field lists are read from manifests/salesforce/, so a write of a field that is not deployed, or of a value
// its type cannot hold, fails here as it would in a real org. Shapes follow test/fixtures/salesforce/; where
// Salesforce's exact answer is not on record, the code says so.
import type { Persona } from '../../core/sandbox/personas.ts';
import { createHash, randomBytes, randomInt } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import path from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { z } from 'zod';

export const FAKE_SALESFORCE_API_VERSION = '62.0';
/** What the flows in manifests/salesforce filter on: a record already enriched is not sent. */
export const FAKE_ENRICHED_AT_FIELD = 'WF_Enriched_At__c';

const REPO = path.resolve(import.meta.dirname, '../..');
const METADATA = path.join(REPO, 'manifests/salesforce/force-app/main/default');
/** The optional households/ project's metadata (our household section on Account). */
const HOUSEHOLDS_METADATA = path.join(REPO, 'manifests/salesforce/households/force-app/main/default');

export type FakeObject = 'Contact' | 'Lead' | 'Account' | 'Individual';
export type FakeValue = string | number | boolean | null;

export type FakeFieldType = 'Id' | 'Text' | 'TextArea' | 'Email' | 'Phone' | 'Reference' | 'Checkbox' | 'Number' | 'Date' | 'DateTime' | 'Picklist' | 'Url';

export interface FakeField {
  readonly name: string;
  readonly type: FakeFieldType;
  readonly updatable: boolean;
  /** Text-like fields: the most characters it holds. */
  readonly length?: number;
  readonly precision?: number;
  readonly scale?: number;
  /** Picklist: the listed values, and whether others are refused. */
  readonly values?: readonly string[];
  readonly restricted?: boolean;
  /** Reference: the parent object and the relationship name SOQL reaches it by (`AccountId` → `Account`). */
  readonly references?: FakeObject;
  readonly relationship?: string;
}

export interface FakeRecord {
  /** 18 characters, key prefix 003 (Contact), 00Q (Lead) or 001 (Account). */
  readonly id: string;
  readonly object: FakeObject;
  /** Values by API name, as a read answers them (DateTime as Salesforce formats it, `…000+0000`). */
  readonly fields: Record<string, FakeValue>;
  /** In the recycle bin: reads answer null, updates ENTITY_IS_DELETED. */
  deleted: boolean;
  /** `client=…` of the Sforce-Call-Options of the last API update; null when never updated through the API. */
  lastModifiedBy: string | null;
}

export interface FakeSalesforceRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  /** Parsed JSON, the raw text when it is not JSON, null when empty. */
  readonly body: unknown;
  readonly token: string | null;
  status: number;
  readonly at: string;
}

/** One record of one sObject Collections update, with the call's Sforce-Call-Options. */
export interface FakeUpdate {
  readonly object: string;
  readonly id: string;
  readonly fields: Readonly<Record<string, unknown>>;
  /** The raw `Sforce-Call-Options` header of the call; null when it had none. */
  readonly callOptions: string | null;
  readonly success: boolean;
  readonly statusCode: string | null;
  readonly at: string;
}

export interface OutboundNotificationSent {
  readonly id: string;
  readonly object: FakeObject;
  readonly recordId: string;
}

export interface OutboundDelivery {
  readonly url: string;
  readonly body: string;
  readonly organizationId: string;
  readonly notifications: readonly OutboundNotificationSent[];
  /** Why it was sent: a record created or changed in the org, or a test posting by hand. */
  readonly trigger: 'create' | 'update' | 'manual' | 'redelivery';
  /** HTTP status; null when the target could not be reached. */
  readonly status: number | null;
  readonly contentType: string | null;
  readonly response: string;
  /** Salesforce's test: HTTP 200 with `<notificationsResponse><Ack>true</Ack>` in the outbound namespace. */
  readonly acked: boolean;
  /** The faultstring of a SOAP fault answer. */
  readonly fault: string | null;
  readonly error: string | null;
}

/** A maintenance 503 (HTML), a refused session (401 INVALID_SESSION_ID), or the org's 24-hour allowance used up (403). */
export type FakeSalesforceFault = 'UNAVAILABLE' | 'INVALID_SESSION_ID' | 'REQUEST_LIMIT_EXCEEDED';

export interface FaultOptions {
  /** Only requests whose path starts with this string (or matches this pattern); default: any REST request. */
  readonly path?: string | RegExp;
  /** Only queries whose SOQL matches this pattern (a read of one object, not the privacy sweep's). */
  readonly soql?: RegExp;
  readonly method?: string;
}

/** A user of the org with the two system permissions that make an admin for the console sign-in. */
export interface FakeSalesforceUser {
  /** 18 characters, key prefix 005. */
  readonly id: string;
  readonly username: string;
  modifyAllData: boolean;
  customizeApplication: boolean;
}

export interface FakeSalesforceOptions {
  /** 15 or 18 characters, 00D…; default: a new one. */
  readonly orgId?: string;
  readonly accessToken?: string;
  /** Where outbound messages go (also `setOutboundUrl`); null: records are created without any message. */
  readonly outboundUrl?: string | null;
  /** When the flows fire: on creation (the deployed flows), or on every save (to show a filter holding). */
  readonly triggerOn?: 'create' | 'createOrUpdate';
  /** The org's 24-hour API allowance (a Developer Edition has 15,000). */
  readonly apiLimit?: number;
  /** Records per query page before `nextRecordsUrl` (Salesforce: 2,000). */
  readonly queryPageSize?: number;
  /** The host EnterpriseUrl and PartnerUrl name (the parser wants https, as Salesforce sends). */
  readonly soapHost?: string;
  readonly deliveryTimeoutMs?: number;
  /**
   * Whether Data Protection and Privacy is on (default): Contacts and Leads then have IndividualId and the
   * Individual relationship; off, a query naming them fails with INVALID_FIELD, as in an org without it.
   */
  readonly dataProtection?: boolean;
  /**
   * Whether the org has Person Accounts (default off): Account then has IsPersonAccount, the person's
   * fields (PersonEmail, PersonMailing*, …), PersonIndividualId, and every deployed Contact field as `__pc`.
   */
  readonly personAccounts?: boolean;
  /**
   * Whether the org has the Nonprofit Success Pack (default off): Account then has NPSP's
   * `npe01__SYSTEM_AccountType__c` ("Household Account" on a household), and the optional households/
   * project's fields (our household section on Account) are deployed.
   */
  readonly npsp?: boolean;
  /** The External Client App's consumer key (and secret, if it requires one) the token endpoint accepts; default: any. */
  readonly clientId?: string;
  readonly clientSecret?: string;
  readonly port?: number;
}

export interface CreateOptions {
  /** false: no outbound message, whatever the flow says (seeding). Default: as the flow decides. */
  readonly notify?: boolean;
}

export interface FakeSalesforce {
  readonly url: string;
  readonly orgId: string;
  readonly accessToken: string;
  /** Every record, deleted ones too, by 18-character id. */
  readonly records: Map<string, FakeRecord>;
  /** Field definitions by object (standard ones and the deployed custom fields); deleting one "undeploys" it. */
  readonly schema: Map<FakeObject, Map<string, FakeField>>;
  readonly requests: FakeSalesforceRequest[];
  readonly updates: FakeUpdate[];
  readonly deliveries: OutboundDelivery[];
  /** API calls counted against the 24-hour allowance; set it to `apiLimit` to use the allowance up. */
  apiUsage: { used: number; max: number };
  /** Tokens the org accepts; `accessToken` is one of them until revoked. */
  readonly tokens: Set<string>;
  /** The org's users by id: a System Administrator (both permissions) to begin with. */
  readonly users: Map<string, FakeSalesforceUser>;
  /** Who is logged in to Salesforce in the browser that reaches the authorize page (default: the first user). */
  signInAs(userId: string): void;
  /** Adds a user with these permissions (none by default) and gives it back. */
  addUser(username: string, permissions?: { modifyAllData?: boolean; customizeApplication?: boolean }): FakeSalesforceUser;
  setOutboundUrl(url: string | null): void;
  /** An Account; with `{ npe01__SYSTEM_AccountType__c: 'Household Account' }` (npsp: true), an NPSP household. */
  createAccount(name: string, fields?: Record<string, FakeValue>): FakeRecord;
  /** A person Account (the org needs `personAccounts: true`): its Name is First Last, as Salesforce makes it. */
  createPersonAccount(fields: Record<string, FakeValue>): FakeRecord;
  createContact(fields: Record<string, FakeValue>, options?: CreateOptions): Promise<FakeRecord>;
  createLead(fields: Record<string, FakeValue>, options?: CreateOptions): Promise<FakeRecord>;
  /** Many records of one object; the flow's messages carry up to 100 notifications each. */
  createRecords(object: 'Contact' | 'Lead', fields: readonly Record<string, FakeValue>[], options?: CreateOptions): Promise<FakeRecord[]>;
  /** Converts a Lead: IsConverted, a new Contact with the Lead's values (our fields mapped), a new Account. */
  convertLead(id: string, options?: CreateOptions): Promise<FakeRecord>;
  deleteRecord(id: string): void;
  /**
   * Sets values on a Contact's or Lead's Individual (made, named as the person, and linked when it has
   * none), as an admin recording a privacy request would: `{ ShouldForget: true }`. No outbound message.
   */
  setIndividual(recordId: string, values: Record<string, FakeValue>): FakeRecord;
  record(id: string): FakeRecord;
  /** The outbound message the flow would send for these records, each with a fresh notification id. */
  envelope(
    records: readonly FakeRecord[],
    overrides?: { organizationId?: string; notificationIds?: readonly string[] },
  ): { body: string; notifications: OutboundNotificationSent[] };
  /** Posts a fresh outbound message for existing records (up to 100), as the org would. */
  fire(records: readonly FakeRecord[], overrides?: { organizationId?: string; url?: string }): Promise<OutboundDelivery>;
  /** Salesforce's retry of a message: the same body, the same notification ids. */
  redeliver(delivery: OutboundDelivery): Promise<OutboundDelivery>;
  /** Posts any body to the outbound URL (a malformed envelope, say). */
  post(body: string, overrides?: { url?: string }): Promise<OutboundDelivery>;
  /** The next `count` REST requests (matching `options`) answer with this fault. */
  failNext(count: number, kind: FakeSalesforceFault, options?: FaultOptions): void;
  /** Resolves once no outbound message an update scheduled is still on its way. */
  outboundIdle(): Promise<void>;
  /** The successful API updates of a record. */
  updatesOf(id: string): FakeUpdate[];
  /** The outbound messages that carried a record. */
  deliveriesOf(id: string): OutboundDelivery[];
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------------
// Ids: written here again rather than imported, so the fake and connectors/salesforce check each other.

export const KEY_PREFIXES: Readonly<Record<FakeObject, string>> = { Contact: '003', Lead: '00Q', Account: '001', Individual: '0PK' };
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const SUFFIX = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ012345';

/** The 18-character form of a 15-character id: 5 bits per 5-character chunk, set where a letter is upper-case. */
export function fakeId18(id15: string): string {
  let suffix = '';
  for (let chunk = 0; chunk < 3; chunk++) {
    let bits = 0;
    for (let i = 0; i < 5; i++) {
      const c = id15.charAt(chunk * 5 + i);
      if (c >= 'A' && c <= 'Z') bits |= 1 << i;
    }
    suffix += SUFFIX.charAt(bits);
  }
  return id15 + suffix;
}

function base62(n: number, width: number): string {
  let out = '';
  for (let rest = n; out.length < width; rest = Math.floor(rest / 62)) out = BASE62.charAt(rest % 62) + out;
  return out;
}

const ID_SHAPE = /^[0-9A-Za-z]{15}(?:[0-9A-Za-z]{3})?$/;
const FIELD_PATH = /^[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)?$/;

// ---------------------------------------------------------------------------------------------------
// Schema: the standard fields enrichbridge touches, and the custom fields from the deployed metadata.

const text = (name: string, length: number, type: FakeFieldType = 'Text'): FakeField => ({ name, type, updatable: true, length });
const readOnly = (name: string, type: FakeFieldType): FakeField => ({ name, type, updatable: false });
const reference = (name: string, references: FakeObject, relationship: string, updatable = true): FakeField => ({
  name,
  type: 'Reference',
  updatable,
  references,
  relationship,
});

const STANDARD_FIELDS: Readonly<Record<FakeObject, readonly FakeField[]>> = {
  Contact: [
    readOnly('Id', 'Id'),
    text('FirstName', 40),
    text('LastName', 80),
    readOnly('Name', 'Text'),
    text('Email', 80, 'Email'),
    text('Phone', 40, 'Phone'),
    text('MobilePhone', 40, 'Phone'),
    text('MailingStreet', 255, 'TextArea'),
    text('MailingCity', 40),
    text('MailingState', 80),
    text('MailingPostalCode', 20),
    text('MailingCountry', 80),
    reference('AccountId', 'Account', 'Account'),
    reference('IndividualId', 'Individual', 'Individual'),
    readOnly('CreatedDate', 'DateTime'),
    readOnly('LastModifiedDate', 'DateTime'),
  ],
  Lead: [
    readOnly('Id', 'Id'),
    text('FirstName', 40),
    text('LastName', 80),
    readOnly('Name', 'Text'),
    text('Email', 80, 'Email'),
    text('Phone', 40, 'Phone'),
    text('MobilePhone', 40, 'Phone'),
    text('Street', 255, 'TextArea'),
    text('City', 40),
    text('State', 80),
    text('PostalCode', 20),
    text('Country', 80),
    text('Company', 255),
    { name: 'Status', type: 'Picklist', updatable: true, values: ['Open - Not Contacted', 'Working - Contacted', 'Closed - Converted'], restricted: false },
    readOnly('IsConverted', 'Checkbox'),
    reference('ConvertedContactId', 'Contact', 'ConvertedContact', false),
    reference('ConvertedAccountId', 'Account', 'ConvertedAccount', false),
    reference('IndividualId', 'Individual', 'Individual'),
    readOnly('CreatedDate', 'DateTime'),
    readOnly('LastModifiedDate', 'DateTime'),
  ],
  Account: [readOnly('Id', 'Id'), text('Name', 255), readOnly('CreatedDate', 'DateTime'), readOnly('LastModifiedDate', 'DateTime')],
  // Data Protection and Privacy: a person's privacy preferences, which Contacts and Leads point to (IndividualId).
  // Docs: https://developer.salesforce.com/docs/atlas.en-us.object_reference.meta/object_reference/sforce_api_objects_individual.htm
  Individual: [
    readOnly('Id', 'Id'),
    text('FirstName', 40),
    text('LastName', 80),
    { name: 'ShouldForget', type: 'Checkbox', updatable: true },
    { name: 'HasOptedOutProcessing', type: 'Checkbox', updatable: true },
    { name: 'HasOptedOutProfiling', type: 'Checkbox', updatable: true },
    { name: 'HasOptedOutSolicit', type: 'Checkbox', updatable: true },
    readOnly('CreatedDate', 'DateTime'),
    readOnly('LastModifiedDate', 'DateTime'),
  ],
};

const xml = new XMLParser({ ignoreAttributes: true, parseTagValue: false, isArray: (name) => ['value', 'fields', 'outboundMessages'].includes(name) });

const FieldMetaSchema = z.object({
  CustomField: z.object({
    fullName: z.string(),
    type: z.enum(['Checkbox', 'Date', 'DateTime', 'Number', 'Picklist', 'Text', 'Url']),
    length: z.coerce.number().int().optional(),
    precision: z.coerce.number().int().optional(),
    scale: z.coerce.number().int().optional(),
    valueSet: z.object({ restricted: z.string().optional(), valueSetDefinition: z.object({ value: z.array(z.object({ fullName: z.string() })) }) }).optional(),
  }),
});

/** The custom fields of manifests/salesforce for one object, as the org would have them after a deploy. */
/**
 * NPSP's account type on Account, and our household section on it as the optional households/ project
 * deploys it. Docs: https://help.salesforce.com/s/articleView?id=sfdo.NPSP_What_is_an_Account_Model.htm
 */
function npspAccountFields(): FakeField[] {
  return [text('npe01__SYSTEM_AccountType__c', 255), ...deployedFields('Account', HOUSEHOLDS_METADATA)];
}

export function deployedFields(object: 'Contact' | 'Lead' | 'Account', metadata: string = METADATA): FakeField[] {
  const dir = path.join(metadata, 'objects', object, 'fields');
  return readdirSync(dir)
    .filter((file) => file.endsWith('.field-meta.xml'))
    .map((file) => {
      const { CustomField: f } = FieldMetaSchema.parse(xml.parse(readFileSync(path.join(dir, file), 'utf8')));
      const base = { name: f.fullName, type: f.type, updatable: true } as const;
      if (f.type === 'Text') return { ...base, length: f.length ?? 255 };
      // A Url field has no length in its metadata; Salesforce holds 255 characters.
      if (f.type === 'Url') return { ...base, length: 255 };
      if (f.type === 'Number') return { ...base, precision: f.precision ?? 18, scale: f.scale ?? 0 };
      if (f.type === 'Picklist') {
        return { ...base, values: f.valueSet?.valueSetDefinition.value.map((v) => v.fullName) ?? [], restricted: f.valueSet?.restricted === 'true' };
      }
      return base;
    });
}

/**
 * A person Account's own fields (Person Accounts enabled), and the Contact's custom fields as `__pc`.
 * Docs: https://developer.salesforce.com/docs/atlas.en-us.object_reference.meta/object_reference/sforce_api_objects_account.htm
 */
function personAccountFields(dataProtection: boolean): FakeField[] {
  return [
    readOnly('IsPersonAccount', 'Checkbox'),
    text('FirstName', 40),
    text('LastName', 80),
    text('PersonEmail', 80, 'Email'),
    text('Phone', 40, 'Phone'),
    text('PersonMobilePhone', 40, 'Phone'),
    text('PersonMailingStreet', 255, 'TextArea'),
    text('PersonMailingCity', 40),
    text('PersonMailingState', 80),
    text('PersonMailingPostalCode', 20),
    ...(dataProtection ? [reference('PersonIndividualId', 'Individual', 'PersonIndividual')] : []),
    ...deployedFields('Contact').map((f) => ({ ...f, name: f.name.replace(/__c$/, '__pc') })),
  ];
}

const WorkflowSchema = z.object({ Workflow: z.object({ outboundMessages: z.array(z.object({ fields: z.array(z.string()) })).min(1) }) });

/** The fields the deployed outbound message of an object sends (manifests/salesforce/…/workflows). */
export function outboundMessageFields(object: 'Contact' | 'Lead'): string[] {
  const file = path.join(METADATA, 'workflows', `${object}.workflow-meta.xml`);
  const parsed = WorkflowSchema.parse(xml.parse(readFileSync(file, 'utf8')));
  return parsed.Workflow.outboundMessages[0]?.fields ?? ['Id'];
}

// ---------------------------------------------------------------------------------------------------
// Answers

class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: string,
    message: string,
  ) {
    super(message);
  }
}

interface SaveError {
  readonly statusCode: string;
  readonly message: string;
  readonly fields: readonly string[];
}

const JSON_TYPE = 'application/json;charset=UTF-8';
const SOAP_ENVELOPE_NS = 'http://schemas.xmlsoap.org/soap/envelope/';
const OUTBOUND_NS = 'http://soap.sforce.com/2005/09/outbound';
const MAINTENANCE_PAGE =
  '<html><head><title>Service Unavailable</title></head><body><h1>Service Unavailable</h1><p>The server is temporarily unable to service your request. Please try again later.</p></body></html>';

/** `2026-05-04T14:10:00.000+0000`: how Salesforce's REST API answers a DateTime. */
/** Whether a value read compares to a SOQL literal as Salesforce would (DateTimes as instants). */
function compares(value: unknown, op: string, literal: string): boolean {
  let wanted: unknown;
  if (/^(true|false)$/i.test(literal)) wanted = literal.toLowerCase() === 'true';
  else if (/^null$/i.test(literal)) wanted = null;
  else if (literal.startsWith("'")) wanted = literal.slice(1, -1);
  else wanted = Date.parse(literal.replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
  const actual = typeof wanted === 'number' && typeof value === 'string' ? Date.parse(value.replace(/([+-]\d{2})(\d{2})$/, '$1:$2')) : (value ?? null);
  switch (op) {
    case '=':
      return actual === wanted;
    case '!=':
      return actual !== wanted;
    default: {
      if (typeof actual !== 'number' || typeof wanted !== 'number') return false;
      return op === '>=' ? actual >= wanted : op === '<=' ? actual <= wanted : op === '>' ? actual > wanted : actual < wanted;
    }
  }
}

function salesforceDateTime(date: Date): string {
  return date.toISOString().replace('Z', '+0000');
}

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:?\d{2})$/;

function validDate(value: string): boolean {
  const m = ISO_DATE.exec(value);
  if (m === null) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
}

/**
 * A JSON value written to a field: what the field stores, a per-record error, or (a value of the wrong JSON type,
 * which Salesforce's deserializer refuses for the whole request) an ApiError thrown.
 */
function storedValue(field: FakeField, value: unknown, object: string): FakeValue | SaveError {
  const wrongType = () =>
    new ApiError(
      400,
      'JSON_PARSER_ERROR',
      `Cannot deserialize instance of ${field.type.toLowerCase()} from ${JSON.stringify(value)} for ${object}.${field.name}`,
    );
  if (value === null) return field.type === 'Checkbox' ? false : null;
  switch (field.type) {
    case 'Checkbox':
      if (typeof value !== 'boolean') throw wrongType();
      return value;
    case 'Number': {
      if (typeof value !== 'number' || !Number.isFinite(value)) throw wrongType();
      const scale = field.scale ?? 0;
      const rounded = Math.round(value * 10 ** scale) / 10 ** scale;
      if (Math.abs(rounded) >= 10 ** ((field.precision ?? 18) - scale)) {
        return {
          statusCode: 'NUMBER_OUTSIDE_VALID_RANGE',
          message: `${field.name}: value outside of valid range on numeric field: ${value}`,
          fields: [field.name],
        };
      }
      return rounded;
    }
    case 'Date':
      if (typeof value !== 'string' || !validDate(value)) throw wrongType();
      return value;
    case 'DateTime': {
      if (typeof value !== 'string' || !ISO_DATE_TIME.test(value) || Number.isNaN(Date.parse(value))) throw wrongType();
      return salesforceDateTime(new Date(value));
    }
    case 'Picklist':
      if (typeof value !== 'string') throw wrongType();
      if (field.restricted === true && !(field.values ?? []).includes(value)) {
        return {
          statusCode: 'INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST',
          message: `${field.name}: bad value for restricted picklist field: ${value}`,
          fields: [field.name],
        };
      }
      return value;
    default: {
      if (typeof value !== 'string') throw wrongType();
      if (value.length > (field.length ?? 255)) {
        return {
          statusCode: 'STRING_TOO_LONG',
          message: `${field.name}: data value too large: ${value.slice(0, 40)}… (max length=${field.length ?? 255})`,
          fields: [field.name],
        };
      }
      // Salesforce keeps an empty text as null.
      return value === '' ? null : value;
    }
  }
}

function isSaveError(value: FakeValue | SaveError): value is SaveError {
  return typeof value === 'object' && value !== null;
}

// Request bodies as the REST API reads them.
const RetrieveBodySchema = z.object({ ids: z.array(z.string()).min(1).max(2000), fields: z.array(z.string()).min(1) });
const UpdateBodySchema = z.object({ allOrNone: z.boolean().optional(), records: z.array(z.record(z.string(), z.unknown())).min(1) });
const AttributesSchema = z.object({ type: z.string() }).loose();

const SOQL =
  /^\s*SELECT\s+(.+?)\s+FROM\s+([A-Za-z][A-Za-z0-9_]*)(?:\s+WHERE\s+(.+?))?(?:\s+ORDER\s+BY\s+([A-Za-z0-9_.]+)(?:\s+(ASC|DESC))?)?(?:\s+LIMIT\s+(\d+))?\s*$/is;
/** A comparison of a field (or `Relationship.Field`) with a literal: true, false, null, a quoted string, or a DateTime. */
const WHERE_COMPARE =
  /^([A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)?)\s*(=|!=|>=|<=|>|<)\s*(true|false|null|'[^']*'|\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2}))$/i;
const WHERE_IN = /^Id\s+IN\s*\(\s*('[0-9A-Za-z]{15,18}'(?:\s*,\s*'[0-9A-Za-z]{15,18}')*)\s*\)$/is;
const WHERE_EQ = /^Id\s*=\s*'([0-9A-Za-z]{15,18})'$/is;

/** Which of the Ack's parts an answer has: the exact namespaces and `Ack` true, or a SOAP fault's faultstring. */
export function readOutboundAnswer(body: string): { acked: boolean; fault: string | null } {
  let doc: unknown;
  try {
    doc = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@', parseTagValue: false }).parse(body);
  } catch {
    return { acked: false, fault: null };
  }
  const envelope = child(doc, {}, SOAP_ENVELOPE_NS, 'Envelope');
  const body_ = envelope === null ? null : child(envelope.node, envelope.scope, SOAP_ENVELOPE_NS, 'Body');
  if (body_ === null) return { acked: false, fault: null };
  const fault = child(body_.node, body_.scope, SOAP_ENVELOPE_NS, 'Fault');
  if (fault !== null) {
    const faultString = isRecord(fault.node) ? fault.node['faultstring'] : undefined;
    return { acked: false, fault: typeof faultString === 'string' ? faultString : '' };
  }
  const response = child(body_.node, body_.scope, OUTBOUND_NS, 'notificationsResponse');
  const ack = response === null ? null : child(response.node, response.scope, OUTBOUND_NS, 'Ack');
  const value = ack === null ? null : isRecord(ack.node) ? ack.node['#text'] : ack.node;
  return { acked: typeof value === 'string' && value.trim() === 'true', fault: null };
}

function only<T>(list: readonly T[]): T {
  const [first] = list;
  if (first === undefined || list.length !== 1) throw new Error(`expected one, got ${list.length}`);
  return first;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The one child element `local` in namespace `ns` of a parsed element, with the namespace scope inside it. */
function child(parent: unknown, scope: Readonly<Record<string, string>>, ns: string, local: string): { node: unknown; scope: Record<string, string> } | null {
  if (!isRecord(parent)) return null;
  for (const [name, node] of Object.entries(parent)) {
    if (name.startsWith('@') || name.startsWith('#') || name.startsWith('?')) continue;
    const inner: Record<string, string> = { ...scope };
    if (isRecord(node)) {
      for (const [attr, value] of Object.entries(node)) {
        if (attr === '@xmlns' && typeof value === 'string') inner[''] = value;
        else if (attr.startsWith('@xmlns:') && typeof value === 'string') inner[attr.slice('@xmlns:'.length)] = value;
      }
    }
    const colon = name.indexOf(':');
    const prefix = colon < 0 ? '' : name.slice(0, colon);
    if (name.slice(colon + 1) === local && inner[prefix] === ns) return { node, scope: inner };
  }
  return null;
}

function escapeXml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c] ?? c);
}

// ---------------------------------------------------------------------------------------------------

export async function startFakeSalesforce(options: FakeSalesforceOptions = {}): Promise<FakeSalesforce> {
  const version = FAKE_SALESFORCE_API_VERSION;
  const base = `/services/data/v${version}`;
  let next = randomInt(62 ** 4, 62 ** 5 / 2);
  const newId = (prefix: string) => fakeId18(`${prefix}8a00000${base62(next++, 5)}`);
  const orgId =
    options.orgId === undefined
      ? fakeId18(`00D8a00000${base62(randomInt(62 ** 4, 62 ** 5), 5)}`)
      : options.orgId.length === 15
        ? fakeId18(options.orgId)
        : options.orgId;
  const accessToken = options.accessToken ?? `00D!fake.${base62(randomInt(62 ** 5), 20)}`;
  const soapHost = options.soapHost ?? 'https://enrichbridge-fake.my.salesforce.com';
  const pageSize = options.queryPageSize ?? 2000;
  const triggerOn = options.triggerOn ?? 'create';
  const actionIds: Record<'Contact' | 'Lead' | 'Account', string> = { Contact: newId('04k'), Lead: newId('04k'), Account: newId('04k') };
  let outboundUrl = options.outboundUrl ?? null;

  const schema = new Map<FakeObject, Map<string, FakeField>>();
  const dataProtection = options.dataProtection ?? true;
  for (const object of ['Contact', 'Lead', 'Account', 'Individual'] as const) {
    if (object === 'Individual' && !dataProtection) continue;
    const custom = object === 'Contact' || object === 'Lead' ? deployedFields(object) : [];
    const standard = STANDARD_FIELDS[object].filter((f) => dataProtection || f.references !== 'Individual');
    const person = object === 'Account' && options.personAccounts === true ? personAccountFields(dataProtection) : [];
    const npsp = object === 'Account' && options.npsp === true ? npspAccountFields() : [];
    schema.set(object, new Map([...standard, ...custom, ...person, ...npsp].map((f) => [f.name.toLowerCase(), f])));
  }
  // An admin's own flow on person Accounts (none is deployed): the person's fields, as the connector reads them.
  const outboundFields = {
    Contact: outboundMessageFields('Contact'),
    Lead: outboundMessageFields('Lead'),
    Account: [
      'Id',
      'FirstName',
      'LastName',
      'PersonEmail',
      'Phone',
      'PersonMailingStreet',
      'PersonMailingCity',
      'PersonMailingState',
      'PersonMailingPostalCode',
    ],
  };

  const records = new Map<string, FakeRecord>();
  const requests: FakeSalesforceRequest[] = [];
  const updates: FakeUpdate[] = [];
  const deliveries: OutboundDelivery[] = [];
  const tokens = new Set([accessToken]);
  const users = new Map<string, FakeSalesforceUser>();
  const addUser = (username: string, permissions: { modifyAllData?: boolean; customizeApplication?: boolean } = {}): FakeSalesforceUser => {
    const user = {
      id: newId('005'),
      username,
      modifyAllData: permissions.modifyAllData === true,
      customizeApplication: permissions.customizeApplication === true,
    };
    users.set(user.id, user);
    return user;
  };
  let signedInUser = addUser('admin@org.example', { modifyAllData: true, customizeApplication: true }).id;
  /** Who each token issued by the code exchange acts as (`accessToken`, the integration user's, is in no map). */
  const tokenUsers = new Map<string, string>();
  const codes = new Map<string, { clientId: string; redirectUri: string; challenge: string; userId: string; scope: string }>();
  const faults: { remaining: number; kind: FakeSalesforceFault; options: FaultOptions }[] = [];
  const cursors = new Map<string, Record<string, unknown>[]>();
  let cursorCount = 0;
  /** Outbound messages scheduled by an update and not answered yet. */
  let pending = 0;

  const fieldOf = (object: FakeObject, name: string): FakeField | undefined => schema.get(object)?.get(name.toLowerCase());

  /** A live record by a 15- or 18-character id (18: case-insensitive; 15: case-sensitive), of `object` if given. */
  function find(id: string, object?: string): FakeRecord | undefined {
    let found: FakeRecord | undefined;
    if (id.length === 18) found = records.get(id) ?? [...records.values()].find((r) => r.id.toLowerCase() === id.toLowerCase());
    else if (id.length === 15) found = records.get(fakeId18(id));
    return found !== undefined && (object === undefined || found.object === object) ? found : undefined;
  }

  function objectName(raw: string): FakeObject {
    const object = (['Contact', 'Lead', 'Account', 'Individual'] as const).find((o) => o.toLowerCase() === raw.toLowerCase() && schema.has(o));
    if (object === undefined) throw new ApiError(404, 'NOT_FOUND', `The requested resource does not exist: sObject type '${raw}' is not supported.`);
    return object;
  }

  function recordUrl(record: FakeRecord): string {
    return `${base}/sobjects/${record.object}/${record.id}`;
  }

  /** A field (or `Relationship.Field`) of a record as a read answers it: the value, or the parent as a nested sObject. */
  function readInto(out: Record<string, unknown>, record: FakeRecord, fieldPath: string): void {
    const [first = '', second] = fieldPath.split('.');
    if (second === undefined) {
      const field = fieldOf(record.object, first);
      if (field === undefined) throw new ApiError(400, 'INVALID_FIELD', `No such column '${first}' on entity '${record.object}'.`);
      out[field.name] = record.fields[field.name] ?? null;
      return;
    }
    const lookup = [...(schema.get(record.object)?.values() ?? [])].find((f) => f.relationship?.toLowerCase() === first.toLowerCase());
    if (lookup === undefined || lookup.references === undefined || lookup.relationship === undefined) {
      throw new ApiError(
        400,
        'INVALID_FIELD',
        `Didn't understand relationship '${first}' in field path. If you are attempting to use a custom relationship, be sure to append the '__r' after the custom relationship name.`,
      );
    }
    const parentField = fieldOf(lookup.references, second);
    if (parentField === undefined) throw new ApiError(400, 'INVALID_FIELD', `No such column '${second}' on entity '${lookup.references}'.`);
    const parentId = record.fields[lookup.name];
    const parent = typeof parentId === 'string' ? find(parentId, lookup.references) : undefined;
    if (parent === undefined || parent.deleted) {
      out[lookup.relationship] = null;
      return;
    }
    const existing = out[lookup.relationship];
    const nested = isRecord(existing) ? existing : { attributes: { type: parent.object, url: recordUrl(parent) } };
    nested[parentField.name] = parent.fields[parentField.name] ?? null;
    out[lookup.relationship] = nested;
  }

  // Docs: https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/resources_composite_sobjects_collections_retrieve_post.htm
  function retrieve(object: FakeObject, body: unknown): unknown {
    const parsed = RetrieveBodySchema.safeParse(body);
    if (!parsed.success) throw new ApiError(400, 'JSON_PARSER_ERROR', 'The request body must have ids (1 to 2,000) and fields.');
    // Collections retrieve documents fields of the object only; a relationship path is refused here (not on record
    // what Salesforce does with one), so a client that sent one would be caught.
    const dotted = parsed.data.fields.find((f) => f.includes('.'));
    if (dotted !== undefined) throw new ApiError(400, 'INVALID_FIELD', `No such column '${dotted}' on entity '${object}'.`);
    for (const id of parsed.data.ids) if (!ID_SHAPE.test(id)) throw new ApiError(400, 'MALFORMED_ID', `Invalid id: ${id}`);
    return parsed.data.ids.map((id) => {
      const record = find(id, object);
      if (record === undefined || record.deleted) return null;
      const out: Record<string, unknown> = { attributes: { type: object, url: recordUrl(record) } };
      for (const field of parsed.data.fields) readInto(out, record, field);
      return out;
    });
  }

  /** A field's (or a parent's field's) value on a record, as a query reads it. */
  function valueAt(record: FakeRecord, fieldPath: string): unknown {
    const out: Record<string, unknown> = {};
    readInto(out, record, fieldPath);
    const [first = '', second] = fieldPath.split('.');
    const top = Object.entries(out).find(([name]) => name.toLowerCase() === first.toLowerCase())?.[1];
    if (second === undefined) return top;
    return isRecord(top) ? Object.entries(top).find(([name]) => name.toLowerCase() === second.toLowerCase())?.[1] : null;
  }

  // Docs: https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/resources_query.htm
  function query(soql: string, token: string): unknown {
    const m = SOQL.exec(soql);
    if (m === null) throw new ApiError(400, 'MALFORMED_QUERY', `unexpected token in: ${soql.slice(0, 200)}`);
    const [, select = '', from = '', where, orderBy, direction, limit] = m;
    if (from.toLowerCase() === 'userpermissionaccess') return permissionAccess(select, where, token);
    const object = objectName(from);
    const selected = select.split(',').map((f) => f.trim());
    if (selected.some((f) => !FIELD_PATH.test(f))) throw new ApiError(400, 'MALFORMED_QUERY', `unexpected token in the field list: ${select.slice(0, 200)}`);
    if (new Set(selected.map((f) => f.toLowerCase())).size !== selected.length) throw new ApiError(400, 'MALFORMED_QUERY', 'duplicate field selected');
    let ids: string[] | null = null;
    const comparisons: { path: string; op: string; literal: string }[] = [];
    // Conditions joined by AND: Id IN ('…') or Id = '…', and comparisons with a literal.
    for (const condition of where === undefined ? [] : where.trim().split(/\s+AND\s+/i)) {
      const inList = WHERE_IN.exec(condition);
      const equal = WHERE_EQ.exec(condition);
      const compare = WHERE_COMPARE.exec(condition);
      if (inList?.[1] !== undefined) ids = inList[1].split(',').map((s) => s.trim().slice(1, -1));
      else if (equal?.[1] !== undefined) ids = [equal[1]];
      else if (compare !== null) comparisons.push({ path: compare[1] ?? '', op: compare[2] ?? '=', literal: compare[3] ?? '' });
      else
        throw new ApiError(
          400,
          'MALFORMED_QUERY',
          `this fake reads only Id IN ('…'), Id = '…' and comparisons with a literal, not: ${condition.slice(0, 200)}`,
        );
    }
    let matched = [...records.values()].filter((r) => r.object === object && !r.deleted);
    if (ids !== null) {
      const wanted = new Set(ids.map((id) => find(id, object)?.id).filter((id) => id !== undefined));
      matched = matched.filter((r) => wanted.has(r.id));
    }
    for (const { path: fieldPath, op, literal } of comparisons) matched = matched.filter((r) => compares(valueAt(r, fieldPath), op, literal));
    if (orderBy !== undefined) {
      const sign = direction?.toUpperCase() === 'DESC' ? -1 : 1;
      const key = (r: FakeRecord) => String(valueAt(r, orderBy) ?? '');
      matched = [...matched].sort((a, b) => sign * key(a).localeCompare(key(b)));
    }
    if (limit !== undefined) matched = matched.slice(0, Number(limit));
    const rows = matched.map((record) => {
      const out: Record<string, unknown> = { attributes: { type: object, url: recordUrl(record) } };
      for (const field of selected) readInto(out, record, field);
      return out;
    });
    return page(rows, rows.length);
  }

  /**
   * The running user's effective permissions: one row, whoever asks (no View Setup needed). The fake knows
   * two permissions; the token the org was connected with acts as an integration user holding neither.
   * Docs: https://developer.salesforce.com/docs/atlas.en-us.object_reference.meta/object_reference/sforce_api_objects_userpermissionaccess.htm
   */
  function permissionAccess(select: string, where: string | undefined, token: string): unknown {
    if (where !== undefined) throw new ApiError(400, 'MALFORMED_QUERY', 'this fake reads UserPermissionAccess without a WHERE');
    const userId = tokenUsers.get(token);
    const user = userId === undefined ? undefined : users.get(userId);
    const held: Record<string, boolean> = {
      PermissionsModifyAllData: user?.modifyAllData === true,
      PermissionsCustomizeApplication: user?.customizeApplication === true,
    };
    const row: Record<string, unknown> = {
      attributes: { type: 'UserPermissionAccess', url: `${base}/sobjects/UserPermissionAccess/${userId ?? '000000000000000AAA'}` },
    };
    for (const field of select.split(',').map((f) => f.trim())) {
      const known = Object.keys(held).find((name) => name.toLowerCase() === field.toLowerCase());
      if (known === undefined) throw new ApiError(400, 'INVALID_FIELD', `No such column '${field}' on entity 'UserPermissionAccess'.`);
      row[known] = held[known];
    }
    return { totalSize: 1, done: true, records: [row] };
  }

  // ---- OAuth: the web-server flow with PKCE, as the org's login host answers it ----

  const oauthError = (status: number, error: string, description: string) => ({ status, body: { error, error_description: description } });

  /**
   * The authorize page, as a user who approves at once sees it: straight back to the redirect URI with a code
   * for the user logged in here (signInAs). Docs: https://help.salesforce.com/s/articleView?id=xcloud.remoteaccess_oauth_web_server_flow.htm&type=5
   */
  function authorizePage(search: URLSearchParams): { status: number; body: unknown; location?: string } {
    const redirectUri = search.get('redirect_uri');
    const clientId = search.get('client_id');
    const challenge = search.get('code_challenge');
    if (search.get('response_type') !== 'code' || clientId === null || redirectUri === null)
      return oauthError(400, 'invalid_request', 'response_type=code, client_id and redirect_uri are required');
    if (options.clientId !== undefined && clientId !== options.clientId) return oauthError(400, 'invalid_client_id', 'client identifier invalid');
    // S256 is the only method Salesforce takes, and what it assumes when none is named (jsforce names none).
    const method = search.get('code_challenge_method');
    if (challenge === null || (method !== null && method !== 'S256')) return oauthError(400, 'invalid_request', 'this fake wants PKCE with S256');
    const code = `aPrx${randomBytes(24).toString('base64url')}`;
    codes.set(code, { clientId, redirectUri, challenge, userId: signedInUser, scope: search.get('scope') ?? 'api' });
    const back = new URL(redirectUri);
    back.searchParams.set('code', code);
    const state = search.get('state');
    if (state !== null) back.searchParams.set('state', state);
    return { status: 302, body: '', location: back.toString() };
  }

  /** The code exchange (`grant_type=authorization_code` with the verifier); no refresh token unless asked for. */
  function grantToken(raw: unknown): { status: number; body: unknown } {
    const form = new URLSearchParams(typeof raw === 'string' ? raw : '');
    if (form.get('grant_type') !== 'authorization_code') return oauthError(400, 'unsupported_grant_type', 'grant type not supported');
    const code = codes.get(form.get('code') ?? '');
    if (code === undefined) return oauthError(400, 'invalid_grant', 'invalid authorization code');
    codes.delete(form.get('code') ?? '');
    if (form.get('client_id') !== code.clientId || (options.clientSecret !== undefined && form.get('client_secret') !== options.clientSecret)) {
      return oauthError(400, 'invalid_client', 'invalid client credentials');
    }
    if (form.get('redirect_uri') !== code.redirectUri) return oauthError(400, 'redirect_uri_mismatch', 'redirect_uri must match configuration');
    const verifier = form.get('code_verifier') ?? '';
    if (createHash('sha256').update(verifier).digest('base64url') !== code.challenge) return oauthError(400, 'invalid_grant', 'invalid code verifier');
    const token = `00D!fake.${randomBytes(24).toString('base64url')}`;
    tokens.add(token);
    tokenUsers.set(token, code.userId);
    const scopes = code.scope.split(' ');
    return {
      status: 200,
      body: {
        access_token: token,
        ...(scopes.includes('refresh_token') ? { refresh_token: `5Aep${randomBytes(24).toString('base64url')}` } : {}),
        signature: randomBytes(32).toString('base64'),
        scope: code.scope,
        instance_url: url,
        id: `${url}/id/${orgId}/${code.userId}`,
        token_type: 'Bearer',
        issued_at: String(Date.now()),
      },
    };
  }

  function page(rows: Record<string, unknown>[], totalSize: number): unknown {
    if (rows.length <= pageSize) return { totalSize, done: true, records: rows };
    const cursor = `01gFAKE${String(++cursorCount).padStart(8, '0')}-${pageSize}`;
    cursors.set(cursor, rows.slice(pageSize));
    return { totalSize, done: false, nextRecordsUrl: `${base}/query/${cursor}`, records: rows.slice(0, pageSize) };
  }

  // Docs: https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/resources_composite_sobjects_collections_update.htm
  async function update(body: unknown, callOptions: string | null): Promise<unknown> {
    const parsed = UpdateBodySchema.safeParse(body);
    if (!parsed.success) throw new ApiError(400, 'JSON_PARSER_ERROR', 'The request body must have records.');
    if (parsed.data.records.length > 200)
      throw new ApiError(400, 'EXCEEDED_ID_LIMIT', 'record limit reached. cannot submit more than 200 records into this call');
    // First what refuses the whole call (a type Salesforce does not know, a field not deployed, a value of the
    // wrong JSON type), then each record on its own.
    const planned = parsed.data.records.map((raw) => {
      const attributes = AttributesSchema.safeParse(raw['attributes']);
      if (!attributes.success) throw new ApiError(400, 'INVALID_TYPE', 'Must send a concrete entity type.');
      const object = objectName(attributes.data.type);
      const idKey = Object.keys(raw).find((k) => k.toLowerCase() === 'id');
      const rawId = idKey === undefined ? undefined : raw[idKey];
      const values: [FakeField, FakeValue | SaveError][] = [];
      const sent: Record<string, unknown> = {};
      for (const [name, value] of Object.entries(raw)) {
        if (name === 'attributes' || name === idKey) continue;
        const field = fieldOf(object, name);
        if (field === undefined) throw new ApiError(400, 'INVALID_FIELD', `No such column '${name}' on sobject of type ${object}`);
        sent[field.name] = value;
        values.push([
          field,
          field.updatable
            ? storedValue(field, value, object)
            : {
                statusCode: 'INVALID_FIELD_FOR_INSERT_UPDATE',
                message: `Unable to create/update fields: ${field.name}. Please check the security settings of this field and verify that it is read/write for your profile or permission set.`,
                fields: [field.name],
              },
        ]);
      }
      return { object, rawId, values, sent };
    });
    const results = planned.map(({ object, rawId, values }) => {
      const errors: SaveError[] = [];
      const record = typeof rawId === 'string' && ID_SHAPE.test(rawId) ? find(rawId) : undefined;
      if (typeof rawId !== 'string') errors.push({ statusCode: 'MISSING_ARGUMENT', message: 'Id not specified in an update call', fields: [] });
      else if (!ID_SHAPE.test(rawId))
        errors.push({ statusCode: 'MALFORMED_ID', message: `${object} ID: id value of incorrect type: ${rawId}`, fields: ['Id'] });
      else if (record === undefined) errors.push({ statusCode: 'INVALID_CROSS_REFERENCE_KEY', message: 'invalid cross reference id', fields: [] });
      else if (record.object !== object)
        errors.push({ statusCode: 'MALFORMED_ID', message: `${object} ID: id value of incorrect type: ${rawId}`, fields: ['Id'] });
      else if (record.deleted) errors.push({ statusCode: 'ENTITY_IS_DELETED', message: 'entity is deleted', fields: [] });
      else if (record.object === 'Lead' && record.fields['IsConverted'] === true)
        errors.push({ statusCode: 'CANNOT_UPDATE_CONVERTED_LEAD', message: 'cannot reference converted lead', fields: [] });
      for (const [, value] of values) if (isSaveError(value)) errors.push(value);
      // A person Account's Name is Salesforce's (First Last); its __pc fields are a business Account's to leave empty.
      const personal = record?.object === 'Account' && record.fields['IsPersonAccount'] === true;
      for (const [field] of values) {
        if (personal && field.name === 'Name')
          errors.push({ statusCode: 'INVALID_FIELD_FOR_INSERT_UPDATE', message: 'Unable to create/update fields: Name.', fields: ['Name'] });
        if (record?.object === 'Account' && !personal && field.name.endsWith('__pc'))
          errors.push({ statusCode: 'INVALID_FIELD_FOR_INSERT_UPDATE', message: `Unable to create/update fields: ${field.name}.`, fields: [field.name] });
      }
      return { record, errors };
    });
    const rollBack = parsed.data.allOrNone === true && results.some((r) => r.errors.length > 0);
    const at = new Date();
    const changed: FakeRecord[] = [];
    const answer = results.map(({ record, errors }, index) => {
      const plan = planned[index];
      const rawId = typeof plan?.rawId === 'string' ? plan.rawId : '';
      const fail = (list: SaveError[]) => {
        updates.push({
          object: plan?.object ?? '',
          id: record?.id ?? rawId,
          fields: plan?.sent ?? {},
          callOptions,
          success: false,
          statusCode: list[0]?.statusCode ?? null,
          at: at.toISOString(),
        });
        return { success: false, errors: list };
      };
      if (errors.length > 0) return fail(errors);
      if (record === undefined || plan === undefined) return fail([{ statusCode: 'UNKNOWN_EXCEPTION', message: 'no record', fields: [] }]);
      if (rollBack) {
        return fail([
          {
            statusCode: 'ALL_OR_NONE_OPERATION_ROLLED_BACK',
            message: 'Record rolled back because not all records were valid and the request was using AllOrNone header',
            fields: [],
          },
        ]);
      }
      for (const [field, value] of plan.values) if (!isSaveError(value)) record.fields[field.name] = value;
      record.fields['LastModifiedDate'] = salesforceDateTime(at);
      record.lastModifiedBy = /(?:^|[,;\s])client=([^,;\s]+)/.exec(callOptions ?? '')?.[1] ?? null;
      updates.push({ object: record.object, id: record.id, fields: plan.sent, callOptions, success: true, statusCode: null, at: at.toISOString() });
      changed.push(record);
      return { id: record.id, success: true, errors: [] };
    });
    // The answer is sent first: Salesforce queues outbound messages and sends them after the transaction.
    if (triggerOn === 'createOrUpdate' && changed.length > 0) {
      pending += 1;
      setImmediate(() => {
        notify(changed, 'update')
          .catch(() => undefined)
          .finally(() => {
            pending -= 1;
          });
      });
    }
    return answer;
  }

  function route(
    method: string,
    pathname: string,
    search: URLSearchParams,
    body: unknown,
    callOptions: string | null,
    token: string,
  ): Promise<unknown> | unknown {
    if (!pathname.startsWith(`${base}/`)) throw new ApiError(404, 'NOT_FOUND', 'The requested resource does not exist');
    const rest = pathname.slice(base.length);
    if (method === 'GET' && rest === '/') {
      const resources = ['sobjects', 'query', 'queryAll', 'composite', 'limits', 'jobs', 'tooling', 'metadata', 'search', 'recent'];
      return Object.fromEntries(resources.map((r) => [r, `${base}/${r}`]));
    }
    // Docs: https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/resources_sobject_describe.htm
    const described = /^\/sobjects\/([A-Za-z]+)\/describe$/.exec(rest)?.[1];
    if (method === 'GET' && described !== undefined) {
      const object = objectName(described);
      return {
        name: object,
        fields: [...(schema.get(object)?.values() ?? [])].map((f) => ({ name: f.name, type: f.type.toLowerCase(), updateable: f.updatable })),
      };
    }
    if (method === 'GET' && rest === '/query') {
      const q = search.get('q');
      if (q === null) throw new ApiError(400, 'MALFORMED_QUERY', 'A query string has to be specified');
      return query(q, token);
    }
    const cursor = /^\/query\/([A-Za-z0-9-]+)$/.exec(rest)?.[1];
    if (method === 'GET' && cursor !== undefined) {
      const rows = cursors.get(cursor);
      if (rows === undefined) throw new ApiError(400, 'INVALID_QUERY_LOCATOR', 'invalid query locator');
      cursors.delete(cursor);
      return page(rows, rows.length);
    }
    const retrieveOf = /^\/composite\/sobjects\/([A-Za-z][A-Za-z0-9_]*)$/.exec(rest)?.[1];
    if (method === 'POST' && retrieveOf !== undefined) return retrieve(objectName(retrieveOf), body);
    if (method === 'PATCH' && rest === '/composite/sobjects') return update(body, callOptions);
    throw new ApiError(404, 'NOT_FOUND', 'The requested resource does not exist');
  }

  function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    const payload = typeof body === 'string' ? body : JSON.stringify(body);
    res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/html' : JSON_TYPE, ...headers });
    res.end(payload);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown = null;
    if (raw !== '') {
      try {
        body = JSON.parse(raw);
      } catch {
        body = raw;
      }
    }
    const url = new URL(req.url ?? '/', 'http://fake');
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]));
    const token = /^Bearer (.+)$/i.exec(headers['authorization'] ?? '')?.[1] ?? null;
    const method = req.method ?? 'GET';
    const entry: FakeSalesforceRequest = {
      method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers,
      body,
      token,
      status: 0,
      at: new Date().toISOString(),
    };
    requests.push(entry);
    const answer = (status: number, payload: unknown, extra: Record<string, string> = {}) => {
      entry.status = status;
      send(res, status, payload, extra);
    };
    // The login host's OAuth endpoints: no bearer token, no API allowance, no REST fault.
    if (method === 'GET' && url.pathname === '/services/oauth2/authorize') {
      const consent = authorizePage(url.searchParams);
      return answer(consent.status, consent.body, consent.location === undefined ? {} : { location: consent.location });
    }
    if (method === 'POST' && url.pathname === '/services/oauth2/token') {
      const granted = grantToken(body);
      return answer(granted.status, granted.body);
    }
    const limitInfo = () => ({ 'sforce-limit-info': `api-usage=${state.apiUsage.used}/${state.apiUsage.max}` });

    const fault = faults.find(
      (f) =>
        f.remaining > 0 &&
        (f.options.method === undefined || f.options.method.toUpperCase() === method) &&
        (f.options.path === undefined || (typeof f.options.path === 'string' ? url.pathname.startsWith(f.options.path) : f.options.path.test(url.pathname))) &&
        (f.options.soql === undefined || f.options.soql.test(url.searchParams.get('q') ?? '')),
    );
    if (fault !== undefined) {
      fault.remaining -= 1;
      if (fault.kind === 'UNAVAILABLE') return answer(503, MAINTENANCE_PAGE);
      if (fault.kind === 'INVALID_SESSION_ID')
        return answer(401, [{ message: 'Session expired or invalid', errorCode: 'INVALID_SESSION_ID' }], { 'www-authenticate': 'Token' });
      state.apiUsage.used = Math.max(state.apiUsage.used, state.apiUsage.max);
      return answer(403, [{ message: 'TotalRequests Limit exceeded.', errorCode: 'REQUEST_LIMIT_EXCEEDED' }], limitInfo());
    }
    if (token === null || !tokens.has(token)) {
      return answer(401, [{ message: 'Session expired or invalid', errorCode: 'INVALID_SESSION_ID' }], { 'www-authenticate': 'Token' });
    }
    if (state.apiUsage.used >= state.apiUsage.max)
      return answer(403, [{ message: 'TotalRequests Limit exceeded.', errorCode: 'REQUEST_LIMIT_EXCEEDED' }], limitInfo());
    state.apiUsage.used += 1;
    try {
      const result = await route(method, url.pathname, url.searchParams, body, headers['sforce-call-options'] ?? null, token);
      answer(200, result, limitInfo());
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      answer(error.status, [{ message: error.message, errorCode: error.errorCode }], limitInfo());
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) send(res, 500, [{ message: error instanceof Error ? error.message : String(error), errorCode: 'UNKNOWN_EXCEPTION' }]);
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;

  // ------------------------------------------------------------------------------------------------
  // The org side: records made in the UI, the flows' outbound messages.

  function envelope(list: readonly FakeRecord[], overrides: { organizationId?: string; notificationIds?: readonly string[] } = {}) {
    if (list.length === 0 || list.length > 100) throw new Error(`an outbound message carries 1 to 100 notifications, not ${list.length}`);
    const object = list[0]?.object;
    const personal = (r: FakeRecord) => r.object === 'Account' && r.fields['IsPersonAccount'] === true;
    if (object === undefined || object === 'Individual' || (object === 'Account' && !list.every(personal)) || list.some((r) => r.object !== object))
      throw new Error('one outbound message is for Contacts, for Leads or for person Accounts');
    const org = overrides.organizationId ?? orgId;
    const notifications = list.map((record, i) => ({ id: overrides.notificationIds?.[i] ?? newId('04l'), object, recordId: record.id }));
    // Id first, then the others in alphabetical order, as Salesforce writes them.
    const fields = ['Id', ...outboundFields[object].filter((f) => f !== 'Id').sort()];
    const sObject = (record: FakeRecord) =>
      fields
        .map((name) => {
          const value = name === 'Id' ? record.id : (record.fields[name] ?? null);
          return value === null ? `<sf:${name} xsi:nil="true"/>` : `<sf:${name}>${escapeXml(String(value))}</sf:${name}>`;
        })
        .join('\n     ');
    const body = [
      '<?xml version="1.0" encoding="UTF-8"?>',
      `<soapenv:Envelope xmlns:soapenv="${SOAP_ENVELOPE_NS}" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">`,
      ' <soapenv:Body>',
      `  <notifications xmlns="${OUTBOUND_NS}">`,
      `   <OrganizationId>${escapeXml(org)}</OrganizationId>`,
      `   <ActionId>${actionIds[object]}</ActionId>`,
      '   <SessionId xsi:nil="true"/>',
      `   <EnterpriseUrl>${soapHost}/services/Soap/c/${version}/${org.slice(0, 15)}</EnterpriseUrl>`,
      `   <PartnerUrl>${soapHost}/services/Soap/u/${version}/${org.slice(0, 15)}</PartnerUrl>`,
      ...list.map((record, i) =>
        [
          '   <Notification>',
          `    <Id>${notifications[i]?.id ?? ''}</Id>`,
          `    <sObject xsi:type="sf:${object}" xmlns:sf="urn:sobject.enterprise.soap.sforce.com">`,
          `     ${sObject(record)}`,
          '    </sObject>',
          '   </Notification>',
        ].join('\n'),
      ),
      '  </notifications>',
      ' </soapenv:Body>',
      '</soapenv:Envelope>',
    ].join('\n');
    return { body, notifications };
  }

  async function deliver(
    target: string | null,
    body: string,
    organizationId: string,
    notifications: OutboundNotificationSent[],
    trigger: OutboundDelivery['trigger'],
  ): Promise<OutboundDelivery> {
    if (target === null) throw new Error('no outbound URL: give outboundUrl or call setOutboundUrl');
    let delivery: OutboundDelivery;
    try {
      const response = await fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'text/xml; charset=utf-8', soapaction: '""', 'user-agent': 'Jakarta Commons-HttpClient/3.1' },
        body,
        signal: AbortSignal.timeout(options.deliveryTimeoutMs ?? 10_000),
      });
      const text = await response.text();
      const contentType = response.headers.get('content-type');
      const read = readOutboundAnswer(text);
      delivery = {
        url: target,
        body,
        organizationId,
        notifications,
        trigger,
        status: response.status,
        contentType,
        response: text,
        acked: response.status === 200 && read.acked,
        fault: read.fault,
        error: null,
      };
    } catch (error) {
      delivery = {
        url: target,
        body,
        organizationId,
        notifications,
        trigger,
        status: null,
        contentType: null,
        response: '',
        acked: false,
        fault: null,
        error: error instanceof Error ? error.message : String(error),
      };
    }
    deliveries.push(delivery);
    return delivery;
  }

  /** What the flows do after a save: one message per 100 records whose WF_Enriched_At__c is empty. */
  async function notify(list: readonly FakeRecord[], trigger: 'create' | 'update'): Promise<OutboundDelivery[]> {
    const due = list.filter((r) => r.object !== 'Account' && !r.deleted && (r.fields[FAKE_ENRICHED_AT_FIELD] ?? null) === null);
    if (outboundUrl === null || due.length === 0) return [];
    const sent: OutboundDelivery[] = [];
    for (const object of ['Contact', 'Lead'] as const) {
      const ofObject = due.filter((r) => r.object === object);
      for (let i = 0; i < ofObject.length; i += 100) {
        const { body, notifications } = envelope(ofObject.slice(i, i + 100));
        sent.push(await deliver(outboundUrl, body, orgId, notifications, trigger));
      }
    }
    return sent;
  }

  function insert(object: FakeObject, values: Record<string, FakeValue>): FakeRecord {
    const now = salesforceDateTime(new Date());
    const fields: Record<string, FakeValue> = {};
    for (const field of schema.get(object)?.values() ?? []) fields[field.name] = field.type === 'Checkbox' ? false : null;
    for (const [name, value] of Object.entries(values)) {
      const field = fieldOf(object, name);
      if (field === undefined) throw new Error(`${object} has no field ${name}`);
      const stored = field.updatable ? storedValue(field, value, object) : value;
      if (isSaveError(stored)) throw new Error(stored.message);
      fields[field.name] = stored;
    }
    const id = newId(KEY_PREFIXES[object]);
    if (object !== 'Account') fields['Name'] = [fields['FirstName'], fields['LastName']].filter((v) => typeof v === 'string').join(' ');
    Object.assign(fields, { Id: id, CreatedDate: now, LastModifiedDate: now });
    const record: FakeRecord = { id, object, fields, deleted: false, lastModifiedBy: null };
    records.set(id, record);
    return record;
  }

  async function create(object: 'Contact' | 'Lead', list: readonly Record<string, FakeValue>[], createOptions: CreateOptions): Promise<FakeRecord[]> {
    const created = list.map((values) => insert(object, values));
    if (createOptions.notify !== false) await notify(created, 'create');
    return created;
  }

  function record(id: string): FakeRecord {
    const found = find(id);
    if (found === undefined) throw new Error(`the fake org has no record ${id}`);
    return found;
  }

  const state: FakeSalesforce = {
    url,
    orgId,
    accessToken,
    records,
    schema,
    requests,
    updates,
    deliveries,
    apiUsage: { used: 0, max: options.apiLimit ?? 15_000 },
    tokens,
    users,
    signInAs(userId) {
      if (!users.has(userId)) throw new Error(`the fake org has no user ${userId}`);
      signedInUser = userId;
    },
    addUser,
    setOutboundUrl(next) {
      outboundUrl = next;
    },
    createAccount: (name, fields = {}) => insert('Account', { ...fields, Name: name }),
    createPersonAccount(fields) {
      if (fieldOf('Account', 'IsPersonAccount') === undefined) throw new Error('this fake org has no Person Accounts (personAccounts: true)');
      const created = insert('Account', { ...fields, IsPersonAccount: true });
      created.fields['Name'] = [created.fields['FirstName'], created.fields['LastName']].filter((v) => typeof v === 'string').join(' ');
      return created;
    },
    setIndividual(recordId, values) {
      const person = record(recordId);
      if (!schema.has('Individual')) throw new Error('this fake org has no Data Protection and Privacy (dataProtection: false)');
      // A person Account points to its Individual through PersonIndividualId.
      const lookup = person.object === 'Account' ? 'PersonIndividualId' : 'IndividualId';
      const current = person.fields[lookup];
      const linked = typeof current === 'string' ? find(current, 'Individual') : undefined;
      const individual = linked ?? insert('Individual', { FirstName: person.fields['FirstName'] ?? null, LastName: person.fields['LastName'] ?? null });
      person.fields[lookup] = individual.id;
      for (const [name, value] of Object.entries(values)) {
        const field = fieldOf('Individual', name);
        if (field === undefined) throw new Error(`Individual has no field ${name}`);
        const stored = storedValue(field, value, 'Individual');
        if (isSaveError(stored)) throw new Error(stored.message);
        individual.fields[field.name] = stored;
      }
      individual.fields['LastModifiedDate'] = salesforceDateTime(new Date());
      return individual;
    },
    createContact: async (fields, createOptions = {}) => only(await create('Contact', [fields], createOptions)),
    createLead: async (fields, createOptions = {}) => only(await create('Lead', [{ Status: 'Open - Not Contacted', ...fields }], createOptions)),
    createRecords: (object, list, createOptions = {}) =>
      create(object, object === 'Lead' ? list.map((f) => ({ Status: 'Open - Not Contacted', ...f })) : list, createOptions),
    async convertLead(id, createOptions = {}) {
      const lead = record(id);
      if (lead.object !== 'Lead' || lead.deleted || lead.fields['IsConverted'] === true) throw new Error(`${id} is not a live unconverted Lead`);
      const account = insert('Account', { Name: typeof lead.fields['Company'] === 'string' ? lead.fields['Company'] : 'Converted' });
      const values: Record<string, FakeValue> = { AccountId: account.id };
      const pairs: [string, string][] = [
        ['FirstName', 'FirstName'],
        ['LastName', 'LastName'],
        ['Email', 'Email'],
        ['Phone', 'Phone'],
        ['MobilePhone', 'MobilePhone'],
        ['Street', 'MailingStreet'],
        ['City', 'MailingCity'],
        ['State', 'MailingState'],
        ['PostalCode', 'MailingPostalCode'],
      ];
      for (const [from, to] of pairs) values[to] = lead.fields[from] ?? null;
      // The lead field mapping of manifests/salesforce: each WF_ field of the Lead to the Contact's field of that name.
      for (const [name, value] of Object.entries(lead.fields)) if (name.startsWith('WF_') && fieldOf('Contact', name) !== undefined) values[name] = value;
      const contact = only(await create('Contact', [values], createOptions));
      Object.assign(lead.fields, { IsConverted: true, ConvertedContactId: contact.id, ConvertedAccountId: account.id, Status: 'Closed - Converted' });
      return contact;
    },
    deleteRecord(id) {
      record(id).deleted = true;
    },
    record,
    envelope,
    async fire(list, overrides = {}) {
      const organizationId = overrides.organizationId ?? orgId;
      const { body, notifications } = envelope(list, { organizationId });
      return deliver(overrides.url ?? outboundUrl, body, organizationId, notifications, 'manual');
    },
    redeliver: (delivery) => deliver(delivery.url, delivery.body, delivery.organizationId, [...delivery.notifications], 'redelivery'),
    post: (body, overrides = {}) => deliver(overrides.url ?? outboundUrl, body, orgId, [], 'manual'),
    failNext(count, kind, faultOptions = {}) {
      faults.push({ remaining: count, kind, options: faultOptions });
    },
    async outboundIdle() {
      while (pending > 0) await new Promise((resolve) => setTimeout(resolve, 10));
    },
    updatesOf: (id) => updates.filter((u) => u.success && u.id === id),
    deliveriesOf: (id) => deliveries.filter((d) => d.notifications.some((n) => n.recordId === id)),
    close() {
      return new Promise<void>((resolve, reject) => {
        server.close((error) => (error === undefined ? resolve() : reject(error)));
        server.closeAllConnections();
      });
    },
  };
  return state;
}

/** A sandbox persona as a person Account's fields (createPersonAccount). */
export function personaPersonAccount(p: Persona, extra: Record<string, FakeValue> = {}): Record<string, FakeValue> {
  return {
    FirstName: p.first_name,
    LastName: p.last_name,
    PersonEmail: p.email,
    Phone: p.phone,
    PersonMailingStreet: p.address,
    PersonMailingCity: p.city,
    PersonMailingState: p.state,
    PersonMailingPostalCode: p.zipcode,
    ...extra,
  };
}

/** A sandbox persona as a Contact's fields (an Account, or anything else, through `extra`). */
export function personaContact(p: Persona, extra: Record<string, FakeValue> = {}): Record<string, FakeValue> {
  return {
    FirstName: p.first_name,
    LastName: p.last_name,
    Email: p.email,
    Phone: p.phone,
    MailingStreet: p.address,
    MailingCity: p.city,
    MailingState: p.state,
    MailingPostalCode: p.zipcode,
    ...extra,
  };
}
