// A small stateful fake of the HubSpot endpoints enrichbridge calls, as a real HTTP server on 127.0.0.1,
// for cross-process end-to-end tests and QA: contacts (batch read/update, list, get), contact properties
// and groups, OAuth (the authorize page, tokens, token introspection), the portal's users, account info
// and workflow-action callbacks, with bearer-token and scope checks, the portal's validation rules and
// sensitive properties, fault injection, a request log, and signed webhook batches for every change made
// in it. It serves the date-based paths of HUBSPOT_API_VERSION only: any numbered path (`/crm/v3`,
// `/oauth/v1`, …) answers 410, as HubSpot will once they are retired, so a legacy call fails its test.
//
// Shapes follow test/fixtures/hubspot/ (HubSpot's documented and captured responses). Where HubSpot's
// exact answer is not on record, the fake says so next to the code; see also the notes on merges.
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import { z } from 'zod';
import { HUBSPOT_API_VERSION as V, NUMBERED_HUBSPOT_PATH } from '../../connectors/hubspot/version.ts';

export type ContactProperties = Record<string, string | null>;

export interface FakeContact {
  readonly id: string;
  /** Every value as HubSpot keeps it: a string, or null when empty. */
  readonly properties: ContactProperties;
  createdAt: string;
  updatedAt: string;
}

export interface FakePropertyOption {
  label: string;
  value: string;
  displayOrder: number;
  hidden: boolean;
  description?: string | undefined;
}

export interface FakeProperty {
  name: string;
  label: string;
  type: string;
  fieldType: string;
  groupName: string;
  description: string;
  displayOrder: number;
  options: FakePropertyOption[];
  formField: boolean;
  hidden: boolean;
  hasUniqueValue: boolean;
  hubspotDefined: boolean;
  calculated: boolean;
  externalOptions: boolean;
  readOnlyValue: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface FakeGroup {
  name: string;
  label: string;
  displayOrder: number;
}

export interface FakeRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Readonly<Record<string, readonly string[]>>;
  readonly headers: Readonly<Record<string, string>>;
  /** Parsed JSON or form body; the raw text when it parsed as neither; null when empty. */
  body: unknown;
  /** The bearer token sent, if any. */
  readonly token: string | null;
  status: number;
  readonly at: string;
}

/** A legacy `contact.*` webhook event, as HubSpot posts it (numbers where HubSpot sends numbers). */
export interface WebhookEvent {
  eventId: number;
  subscriptionId: number;
  portalId: number;
  appId: number;
  occurredAt: number;
  subscriptionType: string;
  attemptNumber: number;
  objectId: number;
  changeSource: string;
  sourceId?: string;
  changeFlag?: string;
  propertyName?: string;
  propertyValue?: string;
  primaryObjectId?: number;
  mergedObjectIds?: number[];
  newObjectId?: number;
  numberOfPropertiesMoved?: number;
}

export interface WebhookDelivery {
  readonly url: string;
  readonly events: readonly WebhookEvent[];
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The target's HTTP status; null when it could not be reached in 5 s. */
  readonly status: number | null;
  readonly error: string | null;
}

export interface CallbackCompletion {
  readonly callbackId: string;
  readonly body: unknown;
}

/**
 * HubSpot's burst limit, its daily limit, a refused token, or its property-value validation refusing an
 * e-mail address (400 VALIDATION_ERROR, the value quoted in its message, as HubSpot quotes it).
 */
export type FaultKind = 'TEN_SECONDLY_ROLLING' | 'DAILY' | 'UNAUTHORIZED' | 'INVALID_EMAIL';

export interface FaultOptions {
  /** Sent as `Retry-After` (HubSpot itself sends none with its 429s). */
  readonly retryAfterSeconds?: number;
  /** Only API requests whose path starts with this (or matches it) fail; default: any API request. */
  readonly path?: string | RegExp;
  /** The address an INVALID_EMAIL refusal quotes (default: one of example.org). */
  readonly value?: string;
}

/** A journal subscription (`ObjectSubscriptionUpsertRequest`), as made through the API. */
export interface JournalSubscription {
  readonly id: number;
  readonly subscriptionType: string;
  readonly portalId: number;
  readonly objectTypeId: string;
  readonly actions: readonly string[];
  readonly properties: readonly string[];
}

/** One journal entry: its offset and the file of events it points at. */
export interface JournalEntry {
  readonly offset: string;
  readonly portalId: string;
  readonly file: { readonly offset: string; readonly journalEvents: readonly Record<string, unknown>[]; readonly publishedAt: string };
}

/** A rule of the portal's (a required or conditionally required property): a write that leaves it empty is refused. */
export interface ValidationRule {
  readonly property: string;
  /** `per-input` (default): a 207, the others written. `request`: the whole request refused with 400, naming no record. */
  readonly answer?: 'per-input' | 'request';
  readonly code?: string;
  readonly message?: string;
}

export interface ChangeOptions {
  /** `changeSource` of the events: CRM (a user, the default for these methods), INTEGRATION, IMPORT, … */
  readonly source?: string;
  /** Default: `userId:<n>` for CRM, the app id for INTEGRATION. */
  readonly sourceId?: string;
  /** false: change the store without any webhook event (seeding). */
  readonly notify?: boolean;
}

export interface IssuedToken {
  readonly accessToken: string;
  readonly refreshToken: string;
  /** null for the static (private app) token. */
  readonly expiresAt: Date | null;
  readonly scopes: readonly string[];
}

export interface FakeTokens {
  /** A private/static app token, valid until revoked. */
  readonly staticToken: string;
  /** OAuth token pairs handed out by the token endpoint (or `issue`), oldest first. */
  readonly issued: readonly IssuedToken[];
  /** Token endpoint calls by grant type, in order (`authorization_code`, `refresh_token`). */
  readonly grants: readonly string[];
  /** An authorization code for the `authorization_code` grant (single use), as HubSpot's consent screen gives. */
  authorizationCode(options?: { redirectUri?: string; scopes?: readonly string[] }): string;
  /** An OAuth token pair without a token request, to seed an installation. */
  issue(options?: { ttlSeconds?: number; scopes?: readonly string[] }): IssuedToken;
  /** Access or refresh token: unknown from now on (401 / invalid_grant). */
  revoke(token: string): void;
  /** The access token expires now (401 EXPIRED_AUTHENTICATION). */
  expire(accessToken: string): void;
  isValid(accessToken: string): boolean;
}

/** A user of the portal, as the user provisioning API answers it; `superAdmin` is the console sign-in's switch. */
export interface FakeHubSpotUser {
  readonly id: string;
  readonly email: string;
  superAdmin: boolean;
}

export interface FakeHubSpotOptions {
  readonly portalId?: string;
  /** `hub_id` in token responses (default: the portal id). */
  readonly hubId?: string;
  readonly appId?: string;
  readonly clientId?: string;
  readonly clientSecret?: string;
  readonly staticToken?: string;
  /** Scopes of the static token and of authorization codes (default: all the connector uses, and `automation`). */
  readonly scopes?: readonly string[];
  /** Access token lifetime (HubSpot: 1800). */
  readonly tokenTtlSeconds?: number;
  /** Hand out a new refresh token on every refresh (HubSpot keeps the same one; rotation is for tests). */
  readonly rotateRefreshTokens?: boolean;
  /** Where signed webhook batches go (also `setWebhookUrl`); null: events are only recorded. */
  readonly webhookUrl?: string | null;
  /** Properties whose changes raise `contact.propertyChange`; default all (so our own writes come back). */
  readonly subscribedProperties?: readonly string[] | 'all';
  /** Events raised within this many ms go out together, at most `maxEventsPerRequest` per POST. */
  readonly batchWindowMs?: number;
  readonly maxEventsPerRequest?: number;
  /** A properties batch/create naming an existing property: 207 per property (default) or 409 for the batch. */
  readonly batchCreateConflict?: 'multi-status' | 'conflict';
  readonly accountType?: string;
  readonly firstContactId?: number;
  readonly now?: () => Date;
  readonly port?: number;
}

export interface FakeHubSpot {
  readonly url: string;
  readonly portalId: string;
  readonly hubId: string;
  readonly appId: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Live contacts by id (deleted and merged-away ones are gone). Changing it directly raises no event. */
  readonly contacts: Map<string, FakeContact>;
  /** Merged-away id → surviving id: reads and writes of the old id reach the survivor, as in HubSpot. */
  readonly mergedInto: Map<string, string>;
  readonly properties: Map<string, FakeProperty>;
  readonly groups: Map<string, FakeGroup>;
  readonly requests: FakeRequest[];
  /** Every webhook event raised, delivered or not. */
  readonly events: WebhookEvent[];
  readonly deliveries: WebhookDelivery[];
  readonly callbacks: CallbackCompletion[];
  readonly tokens: FakeTokens;
  /** The portal's users by id (a Super Admin, `admin@…`, to begin with). */
  readonly users: Map<string, FakeHubSpotUser>;
  /**
   * Who is logged in to HubSpot in the browser that reaches the authorize page (default: the first user),
   * and the portal they pick there (default: this fake's hub id), which tokens it issues then belong to.
   */
  signInAs(userId: string, portalId?: string): void;
  setWebhookUrl(url: string | null): void;
  /** Stores a contact and raises `contact.creation`; resolves once its webhook batch was answered. */
  createContact(properties: ContactProperties, options?: ChangeOptions): Promise<FakeContact>;
  /** Stores changed values and raises one `contact.propertyChange` per changed property. */
  updateContact(id: string, properties: ContactProperties, options?: ChangeOptions): Promise<FakeContact>;
  /** Removes a contact: `contact.deletion`, and with `privacy` also `contact.privacyDeletion`. */
  deleteContact(id: string, options?: ChangeOptions & { privacy?: boolean }): Promise<void>;
  /** Merges `mergedId` into `primaryId` (the primary's values win, its empty ones are filled): `contact.merge`. */
  mergeContacts(primaryId: string, mergedId: string, options?: ChangeOptions): Promise<FakeContact>;
  /** The next `count` API requests (not token requests) answer with this fault. */
  failNext(count: number, kind: FaultKind, options?: FaultOptions): void;
  /**
   * Batch updates naming this contact leave it unwritten from now on: 207, the others written, and an
   * error naming its id (a refusal of one record, where `failNext` fails whole calls).
   */
  refuseWrites(id: string, refusal?: { readonly category?: string; readonly message?: string }): void;
  /** Journal subscriptions made through the API, and the entries the journal keeps (oldest first). */
  readonly journalSubscriptions: readonly JournalSubscription[];
  readonly journal: readonly JournalEntry[];
  /** Adds a validation rule of the portal's (HubSpot applies them to API writes from 2026-09 on). */
  addValidationRule(rule: ValidationRule): void;
  /** Marks a property as sensitive data: this app, without sensitive-data scopes, may not write it. */
  markSensitive(property: string): void;
  /** The enrollment behind this callback id expired: completing it is refused. */
  expireCallback(callbackId: string): void;
  /** Posts events as one signed batch, now (bad signatures: pass another `secret`). */
  sendEvents(events: readonly WebhookEvent[], overrides?: { secret?: string; timestamp?: number; url?: string }): Promise<WebhookDelivery>;
  /** HubSpot's retry of a delivery: the same events with attemptNumber + 1, signed afresh. */
  redeliver(delivery: WebhookDelivery): Promise<WebhookDelivery>;
  /** Resolves when no event is waiting or being delivered. */
  webhooksIdle(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The sealed credentials of a portal connected to this fake with its static (private app) token, as
 * `hubspot connect` stores them: the secret verifies webhooks, the app id tells our own writes apart.
 */
export function staticCredentials(fake: Pick<FakeHubSpot, 'tokens' | 'url'>, clientSecret: string, appId: string) {
  return {
    kind: 'static' as const,
    accessToken: fake.tokens.staticToken,
    refreshToken: null,
    expiresAt: null,
    clientId: null,
    clientSecret,
    appId,
    apiBaseUrl: fake.url,
  };
}

/** v3 signature: base64 HMAC-SHA256 with the client secret over method + URI + raw body + timestamp. */
export function hubspotV3Signature(secret: string, method: string, url: string, body: string, timestamp: number): string {
  // HubSpot decodes these escapes (and only these) in the URI before signing.
  const uri = url.replace(/%(3A|2F|3F|40|21|24|27|28|29|2A|2C|3B)/gi, (_e, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  return createHmac('sha256', secret).update(`${method}${uri}${body}${timestamp}`, 'utf8').digest('base64');
}

/** v1 signature (webhooks still send it): hex SHA-256 of client secret + raw body. */
export function hubspotV1Signature(secret: string, body: string): string {
  return createHash('sha256').update(`${secret}${body}`, 'utf8').digest('hex');
}

export const FAKE_HUBSPOT_SCOPES = [
  'oauth',
  'crm.objects.contacts.read',
  'crm.objects.contacts.write',
  'crm.schemas.contacts.read',
  'crm.schemas.contacts.write',
  'automation',
] as const;

const BATCH_LIMIT = 100;
const NOT_FOUND_MESSAGE = 'Could not get some CONTACT objects, they may be deleted or not exist. Check that ids are valid.';

/** type → the fieldTypes HubSpot's v3 validation accepts with it (docs/reference/crm-platforms.md section 4). */
const FIELD_TYPES: Readonly<Record<string, readonly string[]>> = {
  string: ['text', 'textarea', 'file', 'phonenumber', 'html'],
  number: ['number'],
  bool: ['booleancheckbox'],
  date: ['date'],
  datetime: ['date'],
  enumeration: ['select', 'radio', 'checkbox', 'booleancheckbox'],
};

const BUILT_IN: readonly [name: string, label: string, type: string, fieldType: string, readOnly?: boolean][] = [
  ['firstname', 'First Name', 'string', 'text'],
  ['lastname', 'Last Name', 'string', 'text'],
  ['email', 'Email', 'string', 'text'],
  ['hs_additional_emails', 'Additional email addresses', 'string', 'textarea'],
  ['phone', 'Phone Number', 'string', 'phonenumber'],
  ['mobilephone', 'Mobile Phone Number', 'string', 'phonenumber'],
  ['address', 'Street Address', 'string', 'text'],
  ['city', 'City', 'string', 'text'],
  ['state', 'State/Region', 'string', 'text'],
  ['zip', 'Postal Code', 'string', 'text'],
  ['country', 'Country/Region', 'string', 'text'],
  ['company', 'Company Name', 'string', 'text'],
  ['jobtitle', 'Job Title', 'string', 'text'],
  ['createdate', 'Create Date', 'datetime', 'date', true],
  ['lastmodifieddate', 'Last Modified Date', 'datetime', 'date', true],
  ['hs_object_id', 'Record ID', 'number', 'number', true],
];
/** What HubSpot returns when a read names no properties. */
const DEFAULT_READ = ['firstname', 'lastname', 'email'];
const ALWAYS_READ = ['createdate', 'hs_object_id', 'lastmodifieddate'];

const SUBSCRIPTION_IDS: Readonly<Record<string, number>> = {
  'contact.creation': 4001,
  'contact.propertyChange': 4002,
  'contact.deletion': 4003,
  'contact.privacyDeletion': 4004,
  'contact.merge': 4005,
};

// Request bodies, parsed as strictly as HubSpot's validation (unknown keys are allowed, as there).
const IdInputSchema = z.object({ id: z.union([z.string(), z.number()]).transform(String) });
const BatchReadSchema = z.object({
  inputs: z.array(IdInputSchema),
  properties: z.array(z.string()).default([]),
  propertiesWithHistory: z.array(z.string()).default([]),
  idProperty: z.string().optional(),
});
const PropertyValueSchema = z.union([z.string(), z.number(), z.boolean(), z.null()]).transform((v) => (v === null ? '' : String(v)));
const BatchUpdateSchema = z.object({
  inputs: z.array(IdInputSchema.extend({ properties: z.record(z.string(), PropertyValueSchema) })),
});
const OptionSchema = z.object({
  label: z.string(),
  value: z.string(),
  displayOrder: z.number().int().default(0),
  hidden: z.boolean().default(false),
  description: z.string().optional(),
});
const PropertyCreateSchema = z.object({
  name: z.string(),
  label: z.string(),
  type: z.string(),
  fieldType: z.string(),
  groupName: z.string(),
  description: z.string().default(''),
  displayOrder: z.number().int().default(-1),
  options: z.array(OptionSchema).default([]),
  formField: z.boolean().default(false),
  hidden: z.boolean().default(false),
  hasUniqueValue: z.boolean().default(false),
});
const PropertyUpdateSchema = PropertyCreateSchema.omit({ name: true, hasUniqueValue: true }).partial();
const GroupCreateSchema = z.object({ name: z.string(), label: z.string(), displayOrder: z.number().int().default(-1) });
const IntrospectFormSchema = z.object({
  client_id: z.string().optional(),
  client_secret: z.string().optional(),
  token: z.string(),
  token_type_hint: z.string().optional(),
});
const JournalSubscriptionSchema = z.object({
  subscriptionType: z.literal('OBJECT'),
  portalId: z.number().int(),
  objectTypeId: z.string(),
  actions: z.array(z.enum(['CREATE', 'UPDATE', 'DELETE', 'MERGE', 'RESTORE', 'GDPR_DELETE'])).min(1),
  properties: z.array(z.string()),
  objectIds: z.array(z.number().int()),
});
const CallbackBatchSchema = z.object({
  inputs: z
    .array(z.object({ callbackId: z.string(), outputFields: z.record(z.string(), z.string()), typedOutputs: z.record(z.string(), z.unknown()) }))
    .max(BATCH_LIMIT),
});
const TokenFormSchema = z.object({
  grant_type: z.string().optional(),
  client_id: z.string().optional(),
  client_secret: z.string().optional(),
  code: z.string().optional(),
  redirect_uri: z.string().optional(),
  refresh_token: z.string().optional(),
  scope: z.string().optional(),
});

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof body.message === 'string' ? body.message : `HTTP ${status}`);
  }
}

function hubspotError(status: number, category: string, message: string, extra: Record<string, unknown> = {}): HttpError {
  return new HttpError(status, { status: 'error', message, correlationId: randomUUID(), category, ...extra });
}

const validation = (message: string, extra: Record<string, unknown> = {}) => hubspotError(400, 'VALIDATION_ERROR', message, extra);

/**
 * A refusal by one of the portal's validation rules, for one record. HubSpot's changelog gives the
 * status (400) and category (VALIDATION_ERROR) of these refusals; the rest of the body (the sub-error's
 * code, `context.propertyName`) is the fake's own reading of HubSpot's `StandardError` shape, since no
 * full answer is on record.
 */
function ruleError(rule: ValidationRule, properties: readonly string[], id: string): Record<string, unknown> {
  const message = rule.message ?? `Property "${rule.property}" is required by a validation rule of this portal`;
  return {
    status: 'error',
    category: 'VALIDATION_ERROR',
    message,
    errors: properties.map((property) => ({
      message,
      code: rule.code ?? 'REQUIRED_PROPERTY_MISSING',
      in: 'properties',
      context: { propertyName: [property] },
    })),
    context: { ids: [id] },
  };
}

function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    throw validation(`Invalid input JSON: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  }
  return parsed.data;
}

interface Token {
  readonly accessToken: string;
  expiresAt: Date | null;
  readonly scopes: readonly string[];
  /** The user who authorized it (the authorize page); null for the static token and seeded pairs. */
  readonly userId: string | null;
}

interface Fault {
  readonly kind: FaultKind;
  readonly options: FaultOptions;
}

interface Route {
  readonly method: string;
  readonly pattern: RegExp;
  /** null: no bearer token (the token endpoint); '' : any valid token. */
  readonly scope: string | null;
  readonly handle: (ctx: RouteContext) => RouteAnswer | Promise<RouteAnswer>;
}

interface RouteAnswer {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

interface RouteContext {
  readonly params: readonly string[];
  readonly query: URLSearchParams;
  readonly body: unknown;
  readonly token: string | null;
}

export async function startFakeHubSpot(options: FakeHubSpotOptions = {}): Promise<FakeHubSpot> {
  const now = options.now ?? (() => new Date());
  const portalId = options.portalId ?? '62515';
  const hubId = options.hubId ?? portalId;
  const appId = options.appId ?? '1160452';
  const clientId = options.clientId ?? `client-${randomBytes(6).toString('hex')}`;
  const clientSecret = options.clientSecret ?? randomUUID();
  const defaultScopes = options.scopes ?? FAKE_HUBSPOT_SCOPES;
  const ttlSeconds = options.tokenTtlSeconds ?? 1800;
  const batchWindowMs = options.batchWindowMs ?? 0;
  const maxEvents = options.maxEventsPerRequest ?? BATCH_LIMIT;
  const subscribed = options.subscribedProperties ?? 'all';
  let webhookUrl = options.webhookUrl ?? null;

  const contacts = new Map<string, FakeContact>();
  const mergedInto = new Map<string, string>();
  const properties = new Map<string, FakeProperty>();
  const groups = new Map<string, FakeGroup>();
  const requests: FakeRequest[] = [];
  const events: WebhookEvent[] = [];
  const deliveries: WebhookDelivery[] = [];
  const callbacks: CallbackCompletion[] = [];
  const faults: Fault[] = [];
  const refusedWrites = new Map<string, { category: string; message: string }>();
  const validationRules: ValidationRule[] = [];
  const sensitiveProperties = new Set<string>();
  const expiredCallbacks = new Set<string>();
  const journalSubscriptions: JournalSubscription[] = [];
  const journal: JournalEntry[] = [];
  let fakeUrl = () => '';
  const accessTokens = new Map<string, Token>();
  const refreshTokens = new Map<string, { scopes: readonly string[]; userId: string | null }>();
  const codes = new Map<string, { redirectUri: string | null; scopes: readonly string[]; userId: string | null; hubId: string }>();
  /** The portal an access token was issued for, where the authorize page's pick was not this fake's hub id. */
  const tokenHubs = new Map<string, string>();
  let pickedHub = hubId;
  const users = new Map<string, FakeHubSpotUser>([['4701001', { id: '4701001', email: 'admin@portal.example', superAdmin: true }]]);
  let signedInUser = '4701001';
  const issued: IssuedToken[] = [];
  const grants: string[] = [];
  let nextContactId = options.firstContactId ?? 75310501;
  let nextEventId = 1;

  const iso = () => now().toISOString();
  for (const [index, [name, label, type, fieldType, readOnly]] of BUILT_IN.entries()) {
    properties.set(name, {
      name,
      label,
      type,
      fieldType,
      groupName: 'contactinformation',
      description: '',
      displayOrder: index,
      options: [],
      formField: !readOnly,
      hidden: false,
      hasUniqueValue: false,
      hubspotDefined: true,
      calculated: false,
      externalOptions: false,
      readOnlyValue: readOnly === true,
      createdAt: '2019-08-06T02:41:52.000Z',
      updatedAt: '2019-08-06T02:41:52.000Z',
    });
  }
  groups.set('contactinformation', { name: 'contactinformation', label: 'Contact information', displayOrder: 0 });

  const staticToken = options.staticToken ?? `pat-na1-${randomUUID()}`;
  accessTokens.set(staticToken, { accessToken: staticToken, expiresAt: null, scopes: defaultScopes, userId: null });

  function issueTokens(scopes: readonly string[], refreshToken?: string, ttl = ttlSeconds, userId: string | null = null): IssuedToken {
    const accessToken = `CNa1-${randomBytes(24).toString('base64url')}`;
    const refresh = refreshToken ?? `na1-${randomUUID()}`;
    const expiresAt = new Date(now().getTime() + ttl * 1000);
    accessTokens.set(accessToken, { accessToken, expiresAt, scopes, userId });
    refreshTokens.set(refresh, { scopes, userId });
    const token: IssuedToken = { accessToken, refreshToken: refresh, expiresAt, scopes };
    issued.push(token);
    return token;
  }

  // ---- Contacts ----

  const resolve = (id: string): FakeContact | undefined => {
    let current = id;
    for (let hops = 0; hops < 100; hops += 1) {
      const survivor = mergedInto.get(current);
      if (survivor === undefined) break;
      current = survivor;
    }
    return contacts.get(current);
  };

  function contactJson(contact: FakeContact, names: readonly string[]) {
    const wanted = [...new Set([...(names.length === 0 ? DEFAULT_READ : names), ...ALWAYS_READ])].sort();
    return {
      id: contact.id,
      properties: Object.fromEntries(wanted.map((name) => [name, contact.properties[name] ?? null])),
      createdAt: contact.createdAt,
      updatedAt: contact.updatedAt,
      archived: false,
    };
  }

  function propertyNames(query: URLSearchParams): string[] {
    return query
      .getAll('properties')
      .flatMap((value) => value.split(','))
      .map((name) => name.trim())
      .filter((name) => name !== '');
  }

  /** HubSpot's whole-batch validation of property values: names, read-only, options, numbers, dates. */
  function checkValues(values: Readonly<Record<string, string>>): void {
    const problems: Record<string, unknown>[] = [];
    for (const [name, value] of Object.entries(values)) {
      const property = properties.get(name);
      const problem = (error: string, message: string) => problems.push({ isValid: false, message, error, name, localizedErrorMessage: message });
      if (property === undefined) {
        problem('PROPERTY_DOESNT_EXIST', `Property "${name}" does not exist`);
        continue;
      }
      if (property.readOnlyValue) {
        problem('READ_ONLY_VALUE', `"${name}" is a read only property; its value cannot be set.`);
        continue;
      }
      if (value === '') continue;
      if (property.type === 'bool' || property.type === 'enumeration') {
        const allowed = property.options.map((o) => o.value);
        const given = property.fieldType === 'checkbox' ? value.split(';') : [value];
        const bad = given.find((v) => !allowed.includes(v));
        if (bad !== undefined) problem('INVALID_OPTION', `${bad} was not one of the allowed options: [${allowed.join(', ')}]`);
      } else if (property.type === 'number' && !/^-?\d+(\.\d+)?$/.test(value)) {
        // The error code for numbers and dates is the fake's own; HubSpot's wording is not on record.
        problem('INVALID_NUMBER', `${value} is not a valid number`);
      } else if (property.type === 'date' && !/^\d{4}-\d{2}-\d{2}$/.test(value) && !(/^\d+$/.test(value) && Number(value) % 86_400_000 === 0)) {
        problem('INVALID_DATE', `${value} is not a valid date (YYYY-MM-DD or midnight UTC in epoch ms)`);
      } else if (property.type === 'datetime' && !/^\d+$/.test(value) && Number.isNaN(Date.parse(value))) {
        problem('INVALID_DATE', `${value} is not a valid datetime`);
      }
    }
    if (problems.length > 0) throw validation(`Property values were not valid: ${JSON.stringify(problems)}`);
  }

  function sourceOf(options: ChangeOptions | undefined, fallback: string): { changeSource: string; sourceId: string } {
    const changeSource = options?.source ?? fallback;
    return { changeSource, sourceId: options?.sourceId ?? (changeSource === 'INTEGRATION' ? appId : 'userId:9012345') };
  }

  function baseEvent(subscriptionType: string, objectId: string, source: { changeSource: string; sourceId: string }): WebhookEvent {
    const event: WebhookEvent = {
      eventId: nextEventId,
      subscriptionId: SUBSCRIPTION_IDS[subscriptionType] ?? 4000,
      portalId: Number(portalId),
      appId: Number(appId),
      occurredAt: now().getTime(),
      subscriptionType,
      attemptNumber: 0,
      objectId: Number(objectId),
      changeSource: source.changeSource,
      sourceId: source.sourceId,
    };
    nextEventId += 1;
    return event;
  }

  /** Applies values; returns the events for the properties that changed. */
  function applyChanges(contact: FakeContact, values: Readonly<Record<string, string | null>>, source: { changeSource: string; sourceId: string }) {
    const raised: WebhookEvent[] = [];
    for (const [name, raw] of Object.entries(values)) {
      const value = raw === null || raw === '' ? null : raw;
      if ((contact.properties[name] ?? null) === value) continue;
      contact.properties[name] = value;
      if (subscribed === 'all' || subscribed.includes(name)) {
        raised.push({ ...baseEvent('contact.propertyChange', contact.id, source), propertyName: name, propertyValue: value ?? '' });
      }
    }
    if (raised.length > 0) {
      contact.updatedAt = iso();
      contact.properties.lastmodifieddate = contact.updatedAt;
    }
    return raised;
  }

  // ---- Webhooks ----

  let pending: { event: WebhookEvent; done: () => void }[] = [];
  let timer: NodeJS.Timeout | null = null;
  const inFlight = new Set<Promise<unknown>>();

  async function post(url: string, batch: readonly WebhookEvent[], secret = clientSecret, timestamp = now().getTime()): Promise<WebhookDelivery> {
    const body = JSON.stringify(batch);
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'HubSpot Connect 2.0 (http://dev.hubspot.com/) - WebhooksExecutorDaemon-executor',
      'x-hubspot-signature': hubspotV1Signature(secret, body),
      'x-hubspot-signature-version': 'v1',
      'x-hubspot-signature-v3': hubspotV3Signature(secret, 'POST', url, body, timestamp),
      'x-hubspot-request-timestamp': String(timestamp),
      'x-hubspot-timeout-millis': '10000',
    };
    let status: number | null = null;
    let error: string | null = null;
    try {
      const response = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(5_000) });
      status = response.status;
      await response.arrayBuffer();
    } catch (e) {
      error = e instanceof Error ? e.message : String(e);
    }
    const delivery: WebhookDelivery = { url, events: batch, body, headers, status, error };
    deliveries.push(delivery);
    return delivery;
  }

  function track<T>(promise: Promise<T>): Promise<T> {
    inFlight.add(promise);
    const forget = () => inFlight.delete(promise);
    promise.then(forget, forget);
    return promise;
  }

  async function flush(): Promise<void> {
    timer = null;
    const batch = pending;
    pending = [];
    const url = webhookUrl;
    for (let i = 0; i < batch.length; i += maxEvents) {
      const chunk = batch.slice(i, i + maxEvents);
      if (url !== null)
        await post(
          url,
          chunk.map((p) => p.event),
        );
      for (const p of chunk) p.done();
    }
  }

  /** Records events and queues them for the next batch; resolves once that batch was answered. */
  function raise(raised: readonly WebhookEvent[]): Promise<void> {
    events.push(...raised);
    journalize(raised);
    if (raised.length === 0) return Promise.resolve();
    const delivered = Promise.all(raised.map((event) => new Promise<void>((done) => pending.push({ event, done })))).then(() => undefined);
    timer ??= setTimeout(() => void track(flush()), batchWindowMs);
    return track(delivered);
  }

  // ---- Webhooks Journal ----

  /**
   * Events of portals with a journal subscription for contacts, one file per change raised, kept
   * whether or not the webhook was delivered. The file's layout follows a published description of
   * HubSpot's (its documents do not give one); journal.ts reads it leniently.
   */
  function journalize(raised: readonly WebhookEvent[]): void {
    const kept: Record<string, unknown>[] = [];
    for (const event of raised) {
      const subscription = journalSubscriptions.find((s) => String(s.portalId) === String(event.portalId) && s.objectTypeId === '0-1');
      if (subscription === undefined) continue;
      const action = {
        'contact.creation': 'CREATE',
        'contact.propertyChange': 'UPDATE',
        'contact.deletion': 'DELETE',
        'contact.privacyDeletion': 'GDPR_DELETE',
        'contact.merge': 'MERGE',
      }[event.subscriptionType];
      if (action === undefined || !subscription.actions.includes(action)) continue;
      if (action === 'UPDATE' && !subscription.properties.includes(event.propertyName ?? '')) continue;
      kept.push({
        type: 'OBJECT',
        portalId: event.portalId,
        objectTypeId: '0-1',
        objectId: event.objectId,
        action,
        occurredAt: event.occurredAt,
        ...(action === 'UPDATE' ? { propertyChanges: [{ propertyName: event.propertyName, newValue: event.propertyValue ?? '' }] } : {}),
      });
    }
    if (kept.length === 0) return;
    const offset = randomUUID();
    journal.push({ offset, portalId: String(kept[0]?.portalId ?? portalId), file: { offset, journalEvents: kept, publishedAt: iso() } });
  }

  function journalBatch(entries: readonly JournalEntry[]) {
    const expiresAt = new Date(now().getTime() + 3600_000).toISOString();
    return {
      status: 'COMPLETE',
      results: entries.map((e) => ({ currentOffset: e.offset, expiresAt, url: `${fakeUrl()}/journal-files/${e.offset}` })),
      startedAt: iso(),
      completedAt: iso(),
    };
  }

  // ---- Faults and auth ----

  function takeFault(path: string): Fault | undefined {
    const index = faults.findIndex((f) => {
      const match = f.options.path;
      return match === undefined || (typeof match === 'string' ? path.startsWith(match) : match.test(path));
    });
    return index === -1 ? undefined : faults.splice(index, 1)[0];
  }

  function faultError(fault: Fault): HttpError {
    const retryAfter = fault.options.retryAfterSeconds === undefined ? {} : { 'retry-after': String(fault.options.retryAfterSeconds) };
    if (fault.kind === 'UNAUTHORIZED') {
      return hubspotError(401, 'EXPIRED_AUTHENTICATION', 'The OAuth token used to make this call expired 0 second(s) ago.');
    }
    if (fault.kind === 'INVALID_EMAIL') {
      // HubSpot's property-value validation (the shape checkValues answers): the problems as JSON inside
      // the message, each quoting the value it refused.
      const value = fault.options.value ?? 'someone@example.org';
      const said = `Email address ${value} is invalid`;
      const problems = [{ isValid: false, message: said, error: 'INVALID_EMAIL', name: 'email', localizedErrorMessage: said }];
      return validation(`Property values were not valid: ${JSON.stringify(problems)}`);
    }
    const daily = fault.kind === 'DAILY';
    const body = {
      status: 'error',
      message: daily ? 'You have reached your daily limit.' : 'You have reached your ten_secondly_rolling limit.',
      errorType: 'RATE_LIMIT',
      correlationId: randomUUID(),
      policyName: fault.kind,
    };
    const limitHeaders = daily
      ? {}
      : { 'x-hubspot-ratelimit-interval-milliseconds': '10000', 'x-hubspot-ratelimit-max': '110', 'x-hubspot-ratelimit-remaining': '0' };
    return new HttpError(429, body, { ...limitHeaders, ...retryAfter });
  }

  function authorize(token: string | null, scope: string): void {
    const known = token === null ? undefined : accessTokens.get(token);
    if (known === undefined) {
      throw hubspotError(
        401,
        'INVALID_AUTHENTICATION',
        'Authentication credentials not found. This API supports OAuth 2.0 authentication and you can find more details at https://developers.hubspot.com/docs/methods/auth/oauth-overview',
      );
    }
    if (known.expiresAt !== null && known.expiresAt.getTime() <= now().getTime()) {
      const ago = Math.floor((now().getTime() - known.expiresAt.getTime()) / 1000);
      throw hubspotError(401, 'EXPIRED_AUTHENTICATION', `The OAuth token used to make this call expired ${ago} second(s) ago.`, {
        context: { expired_at: [known.expiresAt.toISOString()] },
      });
    }
    if (scope !== '' && !known.scopes.includes(scope)) {
      throw hubspotError(
        403,
        'MISSING_SCOPES',
        "This app hasn't been granted all required scopes to make this call. Read more about required scopes here: https://developers.hubspot.com/scopes.",
        {
          errors: [{ message: 'One or more of the following scopes are required.', context: { requiredGranularScopes: [scope] } }],
          links: { scopes: 'https://developers.hubspot.com/scopes' },
        },
      );
    }
  }

  // ---- Properties ----

  function checkDefinition(type: string, fieldType: string, options: readonly FakePropertyOption[]): void {
    if (!(FIELD_TYPES[type] ?? []).includes(fieldType)) {
      throw validation(`Property type ${type} is not compatible with field type ${fieldType}`);
    }
    if (type === 'bool') {
      const values = options.map((o) => o.value).sort();
      if (values.length !== 2 || values[0] !== 'false' || values[1] !== 'true') {
        throw validation("Boolean properties must have exactly two options; one with a value of 'true', the other with a value of 'false'.");
      }
    }
  }

  function createProperty(input: z.infer<typeof PropertyCreateSchema>): FakeProperty {
    if (!/^[a-z][a-z0-9_]*$/.test(input.name)) throw validation(`Property name ${input.name} is not valid`);
    if (properties.has(input.name)) throw hubspotError(409, 'OBJECT_ALREADY_EXISTS', `Property named '${input.name}' already exists.`);
    if (!groups.has(input.groupName)) throw validation(`group with name ${input.groupName} does not exist`);
    checkDefinition(input.type, input.fieldType, input.options);
    const at = iso();
    const property: FakeProperty = {
      ...input,
      hubspotDefined: false,
      calculated: false,
      externalOptions: false,
      readOnlyValue: false,
      createdAt: at,
      updatedAt: at,
    };
    properties.set(property.name, property);
    return property;
  }

  function propertyJson(p: FakeProperty) {
    const { readOnlyValue, ...rest } = p;
    return {
      ...rest,
      archived: false,
      modificationMetadata: { archivable: !p.hubspotDefined, readOnlyDefinition: p.hubspotDefined, readOnlyValue },
    };
  }

  const groupJson = (g: FakeGroup) => ({ ...g, archived: false });

  function batchResult(results: unknown[], errors: unknown[], startedAt: string) {
    const base = { status: 'COMPLETE', results, startedAt, completedAt: iso() };
    return errors.length === 0 ? { status: 200, body: base } : { status: 207, body: { ...base, numErrors: errors.length, errors } };
  }

  function tokenResponse(token: IssuedToken) {
    return {
      status: 200,
      body: {
        token_type: 'bearer',
        refresh_token: token.refreshToken,
        hub_id: Number(tokenHubs.get(token.accessToken) ?? hubId),
        scopes: [...token.scopes],
        access_token: token.accessToken,
        expires_in: ttlSeconds,
      },
    };
  }

  const oauthError = (status: number, error: string, description: string, legacyStatus: string) =>
    new HttpError(status, { error, error_description: description, status: legacyStatus, message: description });

  function grantToken(body: unknown) {
    const form = parseBody(TokenFormSchema, body);
    grants.push(form.grant_type ?? '');
    if (form.client_id !== clientId || form.client_secret !== clientSecret) {
      throw oauthError(400, 'invalid_client', 'missing or unknown client id or secret', 'BAD_CLIENT_ID');
    }
    if (form.grant_type === 'authorization_code') {
      const code = form.code === undefined ? undefined : codes.get(form.code);
      if (form.code === undefined || code === undefined) throw oauthError(400, 'invalid_grant', 'missing or unknown auth code', 'BAD_AUTH_CODE');
      if (code.redirectUri !== null && code.redirectUri !== form.redirect_uri) {
        throw oauthError(400, 'invalid_grant', 'redirect_uri does not match initial auth code URI', 'BAD_REDIRECT_URI');
      }
      codes.delete(form.code);
      const token = issueTokens(code.scopes, undefined, ttlSeconds, code.userId);
      if (code.hubId !== hubId) tokenHubs.set(token.accessToken, code.hubId);
      return tokenResponse(token);
    }
    if (form.grant_type === 'client_credentials') {
      // The app's own token (no user, no portal, no refresh token), for the Webhooks Journal.
      const scopes = (form.scope ?? '').split(' ').filter((scope) => scope !== '');
      const token = issueTokens(scopes, undefined, ttlSeconds, null);
      refreshTokens.delete(token.refreshToken);
      return { status: 200, body: { token_type: 'bearer', token_use: 'client_credentials', access_token: token.accessToken, expires_in: ttlSeconds, scopes } };
    }
    if (form.grant_type === 'refresh_token') {
      const known = form.refresh_token === undefined ? undefined : refreshTokens.get(form.refresh_token);
      if (form.refresh_token === undefined || known === undefined) {
        throw oauthError(400, 'invalid_grant', 'refresh token is invalid, expired or revoked', 'BAD_REFRESH_TOKEN');
      }
      if (options.rotateRefreshTokens === true) {
        refreshTokens.delete(form.refresh_token);
        return tokenResponse(issueTokens(known.scopes, undefined, ttlSeconds, known.userId));
      }
      return tokenResponse(issueTokens(known.scopes, form.refresh_token, ttlSeconds, known.userId));
    }
    throw oauthError(400, 'unsupported_grant_type', `grant_type ${form.grant_type ?? '(none)'} is not supported`, 'BAD_GRANT_TYPE');
  }

  // ---- Routes ----

  const READ = 'crm.objects.contacts.read';
  const WRITE = 'crm.objects.contacts.write';
  const SCHEMA_READ = 'crm.schemas.contacts.read';
  const SCHEMA_WRITE = 'crm.schemas.contacts.write';

  const routes: Route[] = [
    // Docs: https://developers.hubspot.com/docs/api-reference/latest/authentication/oauth-tokens/exchange-oauth-tokens
    { method: 'POST', pattern: new RegExp(`^/oauth/${V}/token$`), scope: null, handle: ({ body }) => grantToken(body) },
    {
      // The consent screen, as an admin who approves at once sees it: straight back to the redirect URI with a
      // code for the user logged in here (signInAs) and the scopes asked for, optional ones included.
      method: 'GET',
      pattern: /^\/oauth\/authorize$/,
      scope: null,
      handle: ({ query }) => {
        const redirectUri = query.get('redirect_uri');
        if (query.get('client_id') !== clientId || redirectUri === null)
          throw oauthError(400, 'invalid_client', 'unknown client id or no redirect_uri', 'BAD_CLIENT_ID');
        const scopes = [
          ...new Set([...(query.get('scope') ?? '').split(' '), ...(query.get('optional_scope') ?? '').split(' ')].filter((scope) => scope !== '')),
        ];
        const code = `code-${randomBytes(12).toString('hex')}`;
        codes.set(code, { redirectUri, scopes, userId: signedInUser, hubId: pickedHub });
        const back = new URL(redirectUri);
        back.searchParams.set('code', code);
        const state = query.get('state');
        if (state !== null) back.searchParams.set('state', state);
        return { status: 302, headers: { location: back.toString() } };
      },
    },
    {
      // Token introspection (2026-03 `PublicAccessTokenInfoResponse`; the 2026-09 document names only
      // its base, `active`). The app's credentials and the token come as a form; an unknown or expired
      // token is `{active: false}` with 200, as OAuth introspection answers.
      // Docs: https://developers.hubspot.com/docs/api-reference/latest/authentication/oauth-tokens/introspect-oauth-token
      method: 'POST',
      pattern: new RegExp(`^/oauth/${V}/token/introspect$`),
      scope: null,
      handle: ({ body }) => {
        const form = parseBody(IntrospectFormSchema, body);
        if (form.client_id !== clientId || form.client_secret !== clientSecret) {
          throw oauthError(400, 'invalid_client', 'missing or unknown client id or secret', 'BAD_CLIENT_ID');
        }
        const token = accessTokens.get(form.token);
        if (token === undefined || (token.expiresAt !== null && token.expiresAt.getTime() <= now().getTime())) return { status: 200, body: { active: false } };
        const user = token.userId === null ? undefined : users.get(token.userId);
        return {
          status: 200,
          body: {
            active: true,
            token: token.accessToken,
            token_use: 'access_token',
            ...(user === undefined ? {} : { user: user.email, user_id: Number(user.id) }),
            hub_domain: `${portalId}.hubspot.com`,
            scopes: [...token.scopes],
            hub_id: Number(tokenHubs.get(token.accessToken) ?? hubId),
            app_id: Number(appId),
            client_id: clientId,
            is_private_distribution: false,
            expires_in: token.expiresAt === null ? 0 : Math.max(0, Math.floor((token.expiresAt.getTime() - now().getTime()) / 1000)),
            token_type: 'bearer',
          },
        };
      },
    },
    {
      // Docs: https://developers.hubspot.com/docs/api-reference/latest/settings/user-provisioning/users/get-user
      method: 'GET',
      pattern: new RegExp(`^/settings/users/${V}/([^/]+)$`),
      scope: 'settings.users.read',
      handle: ({ params }) => {
        const user = users.get(decodeURIComponent(params[0] ?? ''));
        if (user === undefined) throw hubspotError(404, 'OBJECT_NOT_FOUND', 'User not found');
        return { status: 200, body: { id: user.id, email: user.email, roleIds: [], superAdmin: user.superAdmin, secondaryTeamIds: [] } };
      },
    },
    {
      method: 'GET',
      pattern: new RegExp(`^/account-info/${V}/details$`),
      scope: '',
      handle: () => ({
        status: 200,
        body: {
          portalId: Number(portalId),
          accountType: options.accountType ?? 'STANDARD',
          timeZone: 'US/Eastern',
          companyCurrency: 'USD',
          additionalCurrencies: [],
          utcOffset: '-04:00',
          utcOffsetMilliseconds: -14_400_000,
          uiDomain: 'app.hubspot.com',
          dataHostingLocation: 'na1',
        },
      }),
    },
    {
      method: 'POST',
      pattern: new RegExp(`^/crm/objects/${V}/contacts/batch/read$`),
      scope: READ,
      handle: ({ body }) => {
        const startedAt = iso();
        const input = parseBody(BatchReadSchema, body);
        if (input.inputs.length > BATCH_LIMIT) throw validation(`Batch input size ${input.inputs.length} exceeds the limit of ${BATCH_LIMIT}`);
        const results = new Map<string, unknown>();
        const missing: string[] = [];
        for (const { id } of input.inputs) {
          const contact = resolve(id);
          if (contact === undefined) missing.push(id);
          else results.set(contact.id, contactJson(contact, input.properties));
        }
        const errors = missing.length === 0 ? [] : [{ status: 'error', category: 'OBJECT_NOT_FOUND', message: NOT_FOUND_MESSAGE, context: { ids: missing } }];
        return batchResult([...results.values()], errors, startedAt);
      },
    },
    {
      method: 'POST',
      pattern: new RegExp(`^/crm/objects/${V}/contacts/batch/update$`),
      scope: WRITE,
      handle: ({ body }) => {
        const startedAt = iso();
        const input = parseBody(BatchUpdateSchema, body);
        if (input.inputs.length > BATCH_LIMIT) throw validation(`Batch input size ${input.inputs.length} exceeds the limit of ${BATCH_LIMIT}`);
        const ids = input.inputs.map((i) => i.id);
        const duplicates = [...new Set(ids.filter((id, i) => ids.indexOf(id) !== i))];
        if (duplicates.length > 0) {
          throw validation(`Duplicate IDs found in batch input: [${duplicates.join(', ')}]. IDs must be unique`, { context: { ids: duplicates } });
        }
        for (const item of input.inputs) checkValues(item.properties);
        // A property the portal marked sensitive: this app holds no sensitive-data scope, so the whole
        // request is refused (403 MISSING_SCOPES naming the scope, HubSpot's documented shape for a
        // missing scope; its exact answer for a sensitive property is not on record).
        const sensitive = [...new Set(input.inputs.flatMap((item) => Object.keys(item.properties).filter((name) => sensitiveProperties.has(name))))];
        if (sensitive.length > 0) {
          throw hubspotError(403, 'MISSING_SCOPES', `This app hasn't been granted the scopes to write sensitive data: ${sensitive.join(', ')}`, {
            errors: [
              {
                message: 'One or more of the following scopes are required.',
                context: { requiredGranularScopes: ['crm.objects.contacts.sensitive.write.v2'], propertyName: sensitive },
              },
            ],
          });
        }
        // The portal's own validation rules (HubSpot applies them to API writes from 2026-09 on).
        const ruleRefusals = new Map<string, Record<string, unknown>>();
        for (const item of input.inputs) {
          const contact = resolve(item.id);
          if (contact === undefined) continue;
          const broken = validationRules.filter((rule) => {
            const after = item.properties[rule.property] ?? contact.properties[rule.property] ?? '';
            return after === '';
          });
          const first = broken[0];
          if (first === undefined) continue;
          ruleRefusals.set(
            item.id,
            ruleError(
              first,
              broken.map((rule) => rule.property),
              item.id,
            ),
          );
        }
        const firstRefusal = [...ruleRefusals.values()][0];
        if (firstRefusal !== undefined && validationRules.some((rule) => rule.answer === 'request')) {
          // Refused whole, naming the property but not the record: nothing is written.
          throw new HttpError(400, { ...firstRefusal, context: {}, correlationId: randomUUID() });
        }
        // A write through the API with the app's token: HubSpot reports it as the app's own change.
        const source = { changeSource: 'INTEGRATION', sourceId: appId };
        const results: unknown[] = [];
        const missing: string[] = [];
        const raised: WebhookEvent[] = [];
        const refused: unknown[] = [...ruleRefusals.values()];
        for (const item of input.inputs) {
          if (ruleRefusals.has(item.id)) continue;
          const refusal = refusedWrites.get(item.id);
          if (refusal !== undefined) {
            // The shape of batch-update-207.json's error; HubSpot's per-record refusals other than a
            // missing record are not on record, so the category is the test's to choose.
            refused.push({ status: 'error', category: refusal.category, message: refusal.message, context: { ids: [item.id] } });
            continue;
          }
          const contact = resolve(item.id);
          if (contact === undefined) {
            missing.push(item.id);
            continue;
          }
          raised.push(...applyChanges(contact, item.properties, source));
          results.push(contactJson(contact, Object.keys(item.properties)));
        }
        void raise(raised);
        const errors = missing.length === 0 ? [] : [{ status: 'error', category: 'OBJECT_NOT_FOUND', message: NOT_FOUND_MESSAGE, context: { ids: missing } }];
        return batchResult(results, [...refused, ...errors], startedAt);
      },
    },
    {
      method: 'GET',
      pattern: new RegExp(`^/crm/objects/${V}/contacts$`),
      scope: READ,
      handle: ({ query }) => {
        const limit = Math.min(Math.max(Number(query.get('limit') ?? '10') || 10, 1), BATCH_LIMIT);
        const after = query.get('after');
        const names = propertyNames(query);
        const sorted = query.get('archived') === 'true' ? [] : [...contacts.values()].sort((a, b) => Number(a.id) - Number(b.id));
        const start = after === null ? 0 : sorted.findIndex((c) => Number(c.id) >= Number(after));
        const page = start === -1 ? [] : sorted.slice(start, start + limit);
        const next = start === -1 ? undefined : sorted[start + limit];
        const link = new URL(`/crm/objects/${V}/contacts`, 'https://api.hubapi.com');
        link.search = query.toString();
        if (next !== undefined) link.searchParams.set('after', next.id);
        return {
          status: 200,
          body: {
            results: page.map((c) => contactJson(c, names)),
            ...(next === undefined ? {} : { paging: { next: { after: next.id, link: link.toString() } } }),
          },
        };
      },
    },
    {
      method: 'GET',
      pattern: new RegExp(`^/crm/objects/${V}/contacts/(\\d+)$`),
      scope: READ,
      handle: ({ params, query }) => {
        const contact = resolve(params[0] ?? '');
        if (contact === undefined) throw hubspotError(404, 'OBJECT_NOT_FOUND', 'resource not found');
        return { status: 200, body: contactJson(contact, propertyNames(query)) };
      },
    },
    {
      method: 'GET',
      pattern: new RegExp(`^/crm/properties/${V}/contacts/groups$`),
      scope: SCHEMA_READ,
      handle: () => ({ status: 200, body: { results: [...groups.values()].map(groupJson) } }),
    },
    {
      method: 'POST',
      pattern: new RegExp(`^/crm/properties/${V}/contacts/groups$`),
      scope: SCHEMA_WRITE,
      handle: ({ body }) => {
        const input = parseBody(GroupCreateSchema, body);
        if (groups.has(input.name)) throw hubspotError(409, 'OBJECT_ALREADY_EXISTS', `Property group named '${input.name}' already exists.`);
        groups.set(input.name, input);
        return { status: 201, body: groupJson(input) };
      },
    },
    {
      method: 'GET',
      pattern: new RegExp(`^/crm/properties/${V}/contacts/groups/([^/]+)$`),
      scope: SCHEMA_READ,
      handle: ({ params }) => {
        const group = groups.get(params[0] ?? '');
        if (group === undefined) throw hubspotError(404, 'OBJECT_NOT_FOUND', `Unable to find property group ${params[0] ?? ''}`);
        return { status: 200, body: groupJson(group) };
      },
    },
    {
      method: 'DELETE',
      pattern: new RegExp(`^/crm/properties/${V}/contacts/groups/([^/]+)$`),
      scope: SCHEMA_WRITE,
      handle: ({ params }) => {
        if (!groups.delete(params[0] ?? '')) throw hubspotError(404, 'OBJECT_NOT_FOUND', `Unable to find property group ${params[0] ?? ''}`);
        return { status: 204 };
      },
    },
    {
      method: 'GET',
      pattern: new RegExp(`^/crm/properties/${V}/contacts$`),
      scope: SCHEMA_READ,
      handle: () => ({ status: 200, body: { results: [...properties.values()].map(propertyJson) } }),
    },
    {
      method: 'POST',
      pattern: new RegExp(`^/crm/properties/${V}/contacts$`),
      scope: SCHEMA_WRITE,
      handle: ({ body }) => ({ status: 201, body: propertyJson(createProperty(parseBody(PropertyCreateSchema, body))) }),
    },
    {
      method: 'POST',
      pattern: new RegExp(`^/crm/properties/${V}/contacts/batch/create$`),
      scope: SCHEMA_WRITE,
      handle: ({ body }) => {
        const startedAt = iso();
        const { inputs } = parseBody(z.object({ inputs: z.array(PropertyCreateSchema) }), body);
        const existing = inputs.filter((i) => properties.has(i.name)).map((i) => i.name);
        if (existing.length > 0 && options.batchCreateConflict === 'conflict') {
          throw hubspotError(409, 'OBJECT_ALREADY_EXISTS', `Property named '${existing[0] ?? ''}' already exists.`, { context: { name: existing } });
        }
        // Validation errors refuse the whole batch; existing names are reported per property (207).
        const fresh = inputs.filter((i) => !properties.has(i.name));
        for (const input of fresh) {
          if (!groups.has(input.groupName)) throw validation(`group with name ${input.groupName} does not exist`);
          checkDefinition(input.type, input.fieldType, input.options);
        }
        const results = fresh.map((input) => propertyJson(createProperty(input)));
        const errors = existing.map((name) => ({
          status: 'error',
          category: 'OBJECT_ALREADY_EXISTS',
          message: `Property named '${name}' already exists.`,
          context: { name: [name] },
        }));
        const answer = batchResult(results, errors, startedAt);
        return { status: answer.status === 200 ? 201 : 207, body: answer.body };
      },
    },
    {
      method: 'GET',
      pattern: new RegExp(`^/crm/properties/${V}/contacts/([a-z0-9_]+)$`),
      scope: SCHEMA_READ,
      handle: ({ params }) => {
        const property = properties.get(params[0] ?? '');
        if (property === undefined) throw hubspotError(404, 'OBJECT_NOT_FOUND', `Unable to find property ${params[0] ?? ''}`);
        return { status: 200, body: propertyJson(property) };
      },
    },
    {
      method: 'PATCH',
      pattern: new RegExp(`^/crm/properties/${V}/contacts/([a-z0-9_]+)$`),
      scope: SCHEMA_WRITE,
      handle: ({ params, body }) => {
        const property = properties.get(params[0] ?? '');
        if (property === undefined) throw hubspotError(404, 'OBJECT_NOT_FOUND', `Unable to find property ${params[0] ?? ''}`);
        if (property.hubspotDefined) throw validation(`${property.name} is a HubSpot defined property and cannot be changed`);
        const changes = parseBody(PropertyUpdateSchema, body);
        const next = { ...property, ...Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined)) };
        if (changes.groupName !== undefined && !groups.has(changes.groupName)) throw validation(`group with name ${changes.groupName} does not exist`);
        checkDefinition(next.type, next.fieldType, next.options);
        Object.assign(property, next, { updatedAt: iso() });
        return { status: 200, body: propertyJson(property) };
      },
    },
    {
      method: 'DELETE',
      pattern: new RegExp(`^/crm/properties/${V}/contacts/([a-z0-9_]+)$`),
      scope: SCHEMA_WRITE,
      handle: ({ params }) => {
        const property = properties.get(params[0] ?? '');
        if (property === undefined) throw hubspotError(404, 'OBJECT_NOT_FOUND', `Unable to find property ${params[0] ?? ''}`);
        if (property.hubspotDefined) throw validation(`${property.name} is a HubSpot defined property and cannot be archived`);
        properties.delete(property.name);
        return { status: 204 };
      },
    },
    {
      // Docs: https://developers.hubspot.com/docs/api-reference/latest/webhooks-journal/guide
      method: 'GET',
      pattern: new RegExp(`^/webhooks-journal/subscriptions/${V}$`),
      scope: 'developer.webhooks_journal.subscriptions.read',
      handle: () => ({ status: 200, body: { results: journalSubscriptions } }),
    },
    {
      method: 'POST',
      pattern: new RegExp(`^/webhooks-journal/subscriptions/${V}$`),
      scope: 'developer.webhooks_journal.subscriptions.write',
      handle: ({ body }) => {
        const input = parseBody(JournalSubscriptionSchema, body);
        const subscription: JournalSubscription = { id: 9000 + journalSubscriptions.length, ...input };
        journalSubscriptions.push(subscription);
        return { status: 201, body: subscription };
      },
    },
    {
      method: 'GET',
      pattern: new RegExp(`^/webhooks-journal/journal-local/${V}/batch/earliest/(\\d+)$`),
      scope: 'developer.webhooks_journal.read',
      handle: ({ params, query }) => {
        const ofPortal = journal.filter((e) => e.portalId === (query.get('installPortalId') ?? e.portalId));
        return { status: 200, body: journalBatch(ofPortal.slice(0, Number(params[0] ?? '1'))) };
      },
    },
    {
      method: 'GET',
      pattern: new RegExp(`^/webhooks-journal/journal-local/${V}/batch/([^/]+)/next/(\\d+)$`),
      scope: 'developer.webhooks_journal.read',
      handle: ({ params, query }) => {
        const ofPortal = journal.filter((e) => e.portalId === (query.get('installPortalId') ?? e.portalId));
        const at = ofPortal.findIndex((e) => e.offset === decodeURIComponent(params[0] ?? ''));
        if (at === -1) throw hubspotError(404, 'OBJECT_NOT_FOUND', 'Offset not found or expired');
        return { status: 200, body: journalBatch(ofPortal.slice(at + 1, at + 1 + Number(params[1] ?? '1'))) };
      },
    },
    {
      // A journal entry's pre-signed file: fetched without a token.
      method: 'GET',
      pattern: /^\/journal-files\/([0-9a-f-]+)$/,
      scope: null,
      handle: ({ params }) => {
        const entry = journal.find((e) => e.offset === params[0]);
        if (entry === undefined) throw hubspotError(404, 'OBJECT_NOT_FOUND', 'No such file');
        return { status: 200, body: entry.file };
      },
    },
    {
      // Batch completion: `{inputs: [{callbackId, outputFields, typedOutputs}]}`, 204.
      // Docs: https://developers.hubspot.com/docs/api-reference/latest/automation/actions-v4/callbacks/complete-batch
      method: 'POST',
      pattern: new RegExp(`^/automation/actions/callbacks/${V}/complete$`),
      scope: 'automation',
      handle: ({ body }) => {
        const { inputs } = parseBody(CallbackBatchSchema, body);
        const unknown = inputs.filter((input) => expiredCallbacks.has(input.callbackId)).map((input) => input.callbackId);
        // Whether HubSpot refuses the whole batch for one expired callback is not on record; the fake
        // does (the stricter case), naming it.
        if (unknown.length > 0)
          throw hubspotError(400, 'VALIDATION_ERROR', `Callback ids not found or expired: ${unknown.join(', ')}`, { context: { callbackIds: unknown } });
        for (const input of inputs) callbacks.push({ callbackId: input.callbackId, body: { outputFields: input.outputFields } });
        return { status: 204 };
      },
    },
  ];

  // ---- HTTP ----

  async function readBody(req: IncomingMessage): Promise<unknown> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
    const text = Buffer.concat(chunks).toString('utf8');
    if (text === '') return null;
    const type = req.headers['content-type'] ?? '';
    if (type.includes('application/x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(text));
    try {
      return JSON.parse(text);
    } catch {
      if (type.includes('json')) throw validation('Invalid input JSON: the body is not valid JSON');
      return text;
    }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake-hubspot.local');
    const method = req.method ?? 'GET';
    const authorization = req.headers.authorization ?? '';
    const token = /^Bearer\s+(.+)$/i.exec(authorization)?.[1]?.trim() ?? null;
    const query: Record<string, string[]> = {};
    for (const [key, value] of url.searchParams) (query[key] ??= []).push(value);
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]));
    const entry: FakeRequest = { method, path: url.pathname, query, headers, body: null, token, status: 0, at: iso() };
    requests.push(entry);
    let status: number;
    let body: unknown;
    let extraHeaders: Record<string, string> = {};
    try {
      const parsedBody = await readBody(req);
      entry.body = parsedBody;
      // Every numbered API (`/crm/v3`, `/oauth/v1`, `/automation/v4`, …) is past its sunset here, so a
      // legacy call anywhere fails its test. HubSpot's own answer after a sunset is not on record.
      if (NUMBERED_HUBSPOT_PATH.test(url.pathname)) throw hubspotError(410, 'GONE', `${url.pathname} is a retired API version; use /…/${V}/…`);
      let route: Route | undefined;
      let params: string[] = [];
      for (const candidate of routes) {
        const match = candidate.pattern.exec(url.pathname);
        if (match === null) continue;
        if (candidate.method !== method) continue;
        route = candidate;
        params = match.slice(1);
        break;
      }
      if (route === undefined) throw hubspotError(404, 'OBJECT_NOT_FOUND', `No route for ${method} ${url.pathname}`);
      if (route.scope !== null) {
        const fault = takeFault(url.pathname);
        if (fault !== undefined) throw faultError(fault);
        authorize(token, route.scope);
      }
      const answer = await route.handle({ params, query: url.searchParams, body: parsedBody, token });
      ({ status, body } = answer);
      extraHeaders = answer.headers ?? {};
    } catch (error) {
      if (!(error instanceof HttpError)) throw error;
      status = error.status;
      body = error.body;
      extraHeaders = error.headers;
    }
    entry.status = status;
    const correlation = { 'x-hubspot-correlation-id': randomUUID() };
    if (body === undefined) {
      res.writeHead(status, { ...correlation, ...extraHeaders });
      res.end();
      return;
    }
    res.writeHead(status, { 'content-type': 'application/json;charset=utf-8', ...correlation, ...extraHeaders });
    res.end(JSON.stringify(body));
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json;charset=utf-8' });
      res.end(JSON.stringify({ status: 'error', message: error instanceof Error ? error.message : String(error), category: 'INTERNAL_ERROR' }));
    });
  });
  await new Promise<void>((done) => server.listen(options.port ?? 0, '127.0.0.1', done));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  fakeUrl = () => `http://127.0.0.1:${port}`;

  const tokens: FakeTokens = {
    staticToken,
    issued,
    grants,
    authorizationCode(o = {}) {
      const code = `code-${randomBytes(12).toString('hex')}`;
      codes.set(code, { redirectUri: o.redirectUri ?? null, scopes: o.scopes ?? defaultScopes, userId: signedInUser, hubId });
      return code;
    },
    issue: (o = {}) => issueTokens(o.scopes ?? defaultScopes, undefined, o.ttlSeconds ?? ttlSeconds),
    revoke(token) {
      accessTokens.delete(token);
      refreshTokens.delete(token);
    },
    expire(accessToken) {
      const known = accessTokens.get(accessToken);
      if (known !== undefined) known.expiresAt = new Date(now().getTime() - 1_000);
    },
    isValid(accessToken) {
      const known = accessTokens.get(accessToken);
      return known !== undefined && (known.expiresAt === null || known.expiresAt.getTime() > now().getTime());
    },
  };

  const fake: FakeHubSpot = {
    url: `http://127.0.0.1:${port}`,
    portalId,
    hubId,
    appId,
    clientId,
    clientSecret,
    contacts,
    mergedInto,
    properties,
    groups,
    requests,
    events,
    deliveries,
    callbacks,
    tokens,
    users,
    journalSubscriptions,
    journal,
    signInAs(userId, portal = hubId) {
      if (!users.has(userId)) throw new Error(`fake HubSpot has no user ${userId}`);
      signedInUser = userId;
      pickedHub = portal;
    },
    setWebhookUrl(url) {
      webhookUrl = url;
    },
    async createContact(values, o) {
      const id = String(nextContactId);
      nextContactId += 1;
      const at = iso();
      const contact: FakeContact = { id, properties: { createdate: at, lastmodifieddate: at, hs_object_id: id }, createdAt: at, updatedAt: at };
      for (const [name, value] of Object.entries(values)) contact.properties[name] = value === '' ? null : value;
      contacts.set(id, contact);
      if (o?.notify !== false) {
        await raise([{ ...baseEvent('contact.creation', id, sourceOf(o, 'CRM')), changeFlag: 'CREATED' }]);
      }
      return structuredClone(contact);
    },
    async updateContact(id, values, o) {
      const contact = resolve(id);
      if (contact === undefined) throw new Error(`fake HubSpot has no contact ${id}`);
      const raised = applyChanges(contact, values, sourceOf(o, 'CRM'));
      if (o?.notify !== false) await raise(raised);
      return structuredClone(contact);
    },
    async deleteContact(id, o) {
      if (!contacts.delete(id)) throw new Error(`fake HubSpot has no contact ${id}`);
      for (const [from, to] of mergedInto) if (to === id) mergedInto.delete(from);
      if (o?.notify === false) return;
      const source = sourceOf(o, 'CRM');
      const deletion = { ...baseEvent('contact.deletion', id, source), changeFlag: 'DELETED' };
      // A privacy deletion raises both; HubSpot may deliver them in either order and in separate batches.
      await raise(o?.privacy === true ? [{ ...baseEvent('contact.privacyDeletion', id, source), changeFlag: 'DELETED' }, deletion] : [deletion]);
    },
    async mergeContacts(primaryId, mergedId, o) {
      const primary = contacts.get(primaryId);
      const merged = contacts.get(mergedId);
      if (primary === undefined || merged === undefined || primaryId === mergedId) {
        throw new Error(`fake HubSpot cannot merge ${mergedId} into ${primaryId}`);
      }
      let moved = 0;
      for (const [name, value] of Object.entries(merged.properties)) {
        if (ALWAYS_READ.includes(name) || value === null || (primary.properties[name] ?? null) !== null) continue;
        primary.properties[name] = value;
        moved += 1;
      }
      primary.updatedAt = iso();
      primary.properties.lastmodifieddate = primary.updatedAt;
      contacts.delete(mergedId);
      mergedInto.set(mergedId, primaryId);
      if (o?.notify !== false) {
        await raise([
          {
            ...baseEvent('contact.merge', primaryId, sourceOf(o, 'CRM')),
            primaryObjectId: Number(primaryId),
            mergedObjectIds: [Number(mergedId)],
            newObjectId: Number(primaryId),
            numberOfPropertiesMoved: moved,
          },
        ]);
      }
      return structuredClone(primary);
    },
    failNext(count, kind, o = {}) {
      for (let i = 0; i < count; i += 1) faults.push({ kind, options: o });
    },
    addValidationRule(rule) {
      validationRules.push(rule);
    },
    markSensitive(property) {
      sensitiveProperties.add(property);
    },
    expireCallback(callbackId) {
      expiredCallbacks.add(callbackId);
    },
    refuseWrites(id, refusal = {}) {
      refusedWrites.set(id, { category: refusal.category ?? 'VALIDATION_ERROR', message: refusal.message ?? `Contact ${id} cannot be updated` });
    },
    async sendEvents(batch, overrides = {}) {
      const url = overrides.url ?? webhookUrl;
      if (url === null) throw new Error('fake HubSpot has no webhook URL');
      return track(post(url, batch, overrides.secret, overrides.timestamp));
    },
    async redeliver(delivery) {
      return track(
        post(
          delivery.url,
          delivery.events.map((e) => ({ ...e, attemptNumber: e.attemptNumber + 1 })),
        ),
      );
    },
    async webhooksIdle() {
      while (inFlight.size > 0 || pending.length > 0 || timer !== null) {
        if (inFlight.size > 0) await Promise.allSettled([...inFlight]);
        else await new Promise((done) => setTimeout(done, Math.max(batchWindowMs, 1)));
      }
    },
    async close() {
      if (timer !== null) clearTimeout(timer);
      timer = null;
      for (const p of pending) p.done();
      pending = [];
      await Promise.allSettled([...inFlight]);
      server.closeAllConnections();
      await new Promise<void>((done, fail) => server.close((error) => (error === undefined ? done() : fail(error))));
    },
  };
  return fake;
}
