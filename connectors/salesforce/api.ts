// The Salesforce REST API as the connector uses it, through a jsforce Connection at an explicit API version
// with jsforce's refresh and retries off: pacing is ours (one Bottleneck per org), and so is the reading of
// Salesforce's answers: a 401 refreshes once, REQUEST_LIMIT_EXCEEDED pauses, SaveResults are split per record.
import Bottleneck from 'bottleneck';
import { type Pacer, pacer } from '../../core/limits/pacing.ts';
import { crmCalls, rateLimited } from '../../core/observe/metrics.ts';
import type { Connection, HttpRequest, HttpResponse } from 'jsforce';
import { loadJsforce } from './jsforce.ts';
import { SALESFORCE_ID_SHAPE, toSalesforceId18 } from './ids.ts';
import { ENRICHED_AT_FIELD } from './fields.ts';
import { z } from 'zod';
import { abortable, outboundTimeouts } from '../../core/client/timeouts.ts';
import { maskPersonalText } from '../../core/observe/loggable-errors.ts';
import { type CallOptions, CrmError, CrmTimeoutError, type RecordUpdate, type WriteResult } from '../../bridge/connector.ts';
import type { CrmValue } from '../../bridge/model.ts';
import { type SalesforceSession, checkInstanceUrl, observedTransport } from './auth.ts';
import { SALESFORCE_API_VERSION } from './version.ts';
import { type ApiBudget, budgetMessage, orgUsage } from './api-budget.ts';

/** The REST API version every call names in its path (set explicitly: jsforce would use 50.0). */
export { SALESFORCE_API_VERSION };
/** Records per sObject Collections update (and per retrieve, to keep reads and writes in step). */
export const SALESFORCE_BATCH_LIMIT = 200;
/** Our `Sforce-Call-Options: client=…`: CDC's changeOrigin and the audit trail name our writes by it. */
export const SALESFORCE_CALL_CLIENT = 'enrichbridge';
/**
 * Pacing per org. Salesforce has no per-second REST limit: what it counts is the org's rolling 24-hour
 * allowance (REQUEST_LIMIT_EXCEEDED, below) and concurrent requests running 20 s or longer (5 in Developer
 * Edition and trial orgs, 25 in production and sandboxes). At most 5 of our calls at a time keeps a slow org's
 * long-running calls under the smallest of those caps and leaves room for the org's other integrations; 50 ms
 * between starts (≤ 20 calls/s, 4,000 records/s at 200 a call) only smooths bursts such as a queue's retries.
 * Docs: https://developer.salesforce.com/docs/platform/salesforce-app-limits-cheatsheet/guide/salesforce-app-limits-platform-api.html
 */
export const DEFAULT_SALESFORCE_PACING = { maxConcurrent: 5, minTime: 50 } as const;
export type SalesforcePacing = { readonly maxConcurrent?: number; readonly minTime?: number };
/**
 * How long the org's 24-hour allowance running out pauses an installation before we look again. The window
 * rolls (calls age out one by one), so capacity comes back gradually: an hour costs at most one refused call
 * per hour per installation, and Sforce-Limit-Info on the next answer shows how much came back.
 */
export const REQUEST_LIMIT_PAUSE_MS = 60 * 60_000;
/** How long too many long-running concurrent requests hold a batch back (they last 20 s or more). */
export const CONCURRENT_LIMIT_WAIT_MS = 30_000;
/** The field that says a record was enriched (the backfill's `--where-not-enriched`). */
export const DEFAULT_ENRICHED_AT_FIELD = ENRICHED_AT_FIELD;

const RECORD_ID = SALESFORCE_ID_SHAPE;
const OBJECT_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;
const FIELD_PATH = /^[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)*$/;

/** One limiter per org in this process: every API call of an installation goes through it. */
const orgLimiters = new Bottleneck.Group({ ...DEFAULT_SALESFORCE_PACING });

export function orgLimiter(orgId: string, pacing: SalesforcePacing = {}): Pacer {
  const limiter = orgLimiters.key(orgId);
  const settings = { ...DEFAULT_SALESFORCE_PACING, ...pacing };
  limiter.updateSettings(settings);
  // Shared across processes with REDIS_URL (core/limits/pacing.ts).
  return pacer(limiter, `salesforce:${orgId}`, settings.minTime);
}

/** The org's API usage from the last `Sforce-Limit-Info: api-usage=N/M`. */
export interface ApiUsage {
  readonly used: number;
  readonly max: number;
}

/** `api-usage=18/15000` of a Sforce-Limit-Info header; null when there is none. */
export function parseLimitInfo(header: string | undefined): ApiUsage | null {
  const match = header === undefined ? null : /(?:^|[\s,;])api-usage=(\d+)\/(\d+)/.exec(header);
  if (match === null || match[1] === undefined || match[2] === undefined) return null;
  return { used: Number(match[1]), max: Number(match[2]) };
}

/**
 * REQUEST_LIMIT_EXCEEDED names two limits (REST API errorcodes): the org's 24-hour allowance ("TotalRequests
 * Limit exceeded.") and its concurrent long-running requests ("ConcurrentPerOrgLongTxn Limit exceeded.").
 * The error code is the same, so this is the one place a Salesforce message is read; usage at or over the
 * allowance, or a message that is not the concurrency one, counts as the allowance (the safe reading).
 */
export function requestLimitKind(message: string, usage: ApiUsage | null): 'allowance' | 'concurrency' {
  if (usage !== null && usage.used >= usage.max) return 'allowance';
  return /^\s*Concurrent/i.test(message) ? 'concurrency' : 'allowance';
}

/**
 * A Salesforce answer other than 401/403/5xx (a 400 INVALID_FIELD, a 404), with its status and error code.
 * Its message names those only: Salesforce's text can quote the values sent (a JSON_PARSER_ERROR, a
 * MALFORMED_ID, an INVALID_EMAIL_ADDRESS), which are personal data.
 */
export class SalesforceApiError extends CrmError {
  constructor(
    what: string,
    readonly status: number,
    readonly errorCode: string | null,
  ) {
    // Retried by the queue with backoff, then dead-lettered: a 4xx that persists ends there for an operator.
    super('transient', [`Salesforce ${what}:`, status, errorCode ?? 'error'].join(' '));
    this.name = 'SalesforceApiError';
  }
}

/** What jsforce's HttpApiError carries, as far as we read it. */
const HttpApiErrorSchema = z.object({ errorCode: z.string(), message: z.string() });

function describe(error: unknown): string {
  return error instanceof Error ? error.message.slice(0, 300) : String(error).slice(0, 300);
}

/** SaveResult statusCodes for a record that is gone: deleted (or merged away), or a Lead since converted. */
const GONE_STATUS_CODES = new Set(['ENTITY_IS_DELETED', 'INVALID_CROSS_REFERENCE_KEY', 'CANNOT_UPDATE_CONVERTED_LEAD']);
/**
 * SaveResult statusCodes that refuse this record's values or our access to it: sending again will not help.
 * Anything else (UNABLE_TO_LOCK_ROW, UNKNOWN_EXCEPTION, REQUEST_RUNNING_TOO_LONG, …) is worth retrying.
 * Docs: https://developer.salesforce.com/docs/atlas.en-us.api.meta/api/sforce_api_calls_concepts_core_data_objects.htm#statuscode
 */
const REJECTED_STATUS_CODES = new Set([
  'FIELD_CUSTOM_VALIDATION_EXCEPTION',
  'FIELD_INTEGRITY_EXCEPTION',
  'FIELD_FILTER_VALIDATION_EXCEPTION',
  'INVALID_FIELD',
  'INVALID_FIELD_FOR_INSERT_UPDATE',
  'INVALID_TYPE_ON_FIELD_IN_RECORD',
  'INVALID_OR_NULL_FOR_RESTRICTED_PICKLIST',
  'INVALID_EMAIL_ADDRESS',
  'STRING_TOO_LONG',
  'NUMBER_OUTSIDE_VALID_RANGE',
  'REQUIRED_FIELD_MISSING',
  'DUPLICATE_VALUE',
  'DUPLICATES_DETECTED',
  'MALFORMED_ID',
  'INVALID_ID_FIELD',
  'INSUFFICIENT_ACCESS_OR_READONLY',
  'INSUFFICIENT_ACCESS_ON_CROSS_REFERENCE_ENTITY',
  'ENTITY_IS_LOCKED',
  'CANNOT_EXECUTE_FLOW_TRIGGER',
  'CANNOT_INSERT_UPDATE_ACTIVATE_ENTITY',
]);

/**
 * A SaveResult error as kept: its statusCode and the fields it names. Salesforce's message is kept only
 * for a validation rule of the org's (FIELD_CUSTOM_VALIDATION_EXCEPTION), whose text an admin wrote and
 * which says which rule refused (masked still); any other message can quote the record's values
 * ("invalid email address: …", "duplicate value found: …").
 */
function saveErrorText(error: { readonly statusCode: string; readonly message: string; readonly fields: readonly string[] }): string {
  const said = error.statusCode === 'FIELD_CUSTOM_VALIDATION_EXCEPTION' && error.message !== '' ? `: ${maskPersonalText(error.message)}` : '';
  return `${error.statusCode}${said}${error.fields.length > 0 ? ` (${error.fields.join(', ')})` : ''}`;
}

const SaveResultSchema = z.object({
  id: z.string().nullish(),
  success: z.boolean(),
  errors: z.array(z.object({ statusCode: z.string(), message: z.string().default(''), fields: z.array(z.string()).default([]) }).loose()).default([]),
});

/** An sObject as Salesforce answers it: fields by name, a parent through a relationship as a nested object. */
const SObjectSchema = z.record(z.string(), z.unknown());

/** An sObject describe, as far as we read it: its fields' names. */
const DescribeSchema = z.object({ fields: z.array(z.object({ name: z.string() }).loose()) }).loose();

const QueryResultSchema = z.object({
  totalSize: z.number().int(),
  done: z.boolean(),
  nextRecordsUrl: z.string().optional(),
  records: z.array(SObjectSchema),
});

const BulkJobSchema = z.object({
  /** A job id goes into paths: a Salesforce id (750…) and nothing else. */
  id: z.string().regex(RECORD_ID),
  state: z.enum(['Open', 'UploadComplete', 'InProgress', 'Aborted', 'JobComplete', 'Failed']),
  errorMessage: z.string().optional(),
});

/** One page of a Bulk API 2.0 query's ids; `locator` resumes after it (null: this was the last page). */
export interface BulkIdPage {
  readonly jobId: string;
  readonly ids: readonly string[];
  readonly locator: string | null;
}

export interface BulkQueryOptions {
  /** Records per results page (Salesforce's maxRecords). */
  readonly pageSize?: number;
  readonly enrichedAtField?: string;
  /** Resume a job already created: its id and the locator of the next page. */
  readonly resume?: { readonly jobId: string; readonly locator: string | null };
}

/** How long a bulk query job is polled before it is given up (large orgs take minutes). */
const BULK_QUERY_MAX_WAIT_MS = 30 * 60_000;

export interface SalesforceApiOptions {
  /** The org (00D…): the key of its limiter. */
  readonly orgId: string;
  /** The session to call with (the token source's). */
  readonly session: () => Promise<SalesforceSession>;
  /** Called after a 401 with the refused session: a new one, or null when there is no way to get one. */
  readonly refreshSession?: (refused: SalesforceSession) => Promise<SalesforceSession | null>;
  readonly pacing?: SalesforcePacing;
  /** Tests and local fakes only: an instance URL on any http(s) host. */
  readonly allowAnyHost?: boolean;
  /** Per call, the answer's body included (default: the process's SALESFORCE_TIMEOUT_MS). */
  readonly timeoutMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly now?: () => Date;
  /** The share of the org's daily API allowance these calls may take (api-budget.ts); absent: no limit but Salesforce's. */
  readonly budget?: ApiBudget;
}

/** A successful answer: the parsed body (JSON, or CSV rows) and the response headers (lower-case names). */
export interface SalesforceAnswer {
  readonly body: unknown;
  readonly headers: Readonly<Record<string, string>>;
}

/** The Individual as a Contact or Lead (Individual) or a person Account (PersonIndividual) reaches it. */
const individualOf = (object: string) => (object === 'Account' ? 'PersonIndividual' : 'Individual');

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const path = (rest: string) => `/services/data/v${SALESFORCE_API_VERSION}${rest}`;

let builder: Connection | undefined;

/** Builds SOQL only (jsforce's query builder); it never sends a request. */
async function soqlBuilder(): Promise<Connection> {
  if (builder === undefined) {
    const { Connection } = await loadJsforce();
    builder = new Connection({ version: SALESFORCE_API_VERSION });
  }
  return builder;
}

export class SalesforceApi {
  private readonly limiter: Pacer;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly now: () => Date;
  private usage: ApiUsage | null = null;
  /** API calls made (each attempt), for the enrichment figures. */
  calls = 0;

  constructor(private readonly options: SalesforceApiOptions) {
    this.limiter = orgLimiter(options.orgId, options.pacing);
    this.sleep = options.sleep ?? realSleep;
    this.now = options.now ?? (() => new Date());
  }

  /** The org's API usage as the last answer reported it (Sforce-Limit-Info); null before any. */
  get apiUsage(): ApiUsage | null {
    return this.usage;
  }

  /**
   * One REST call: paced, through a Connection built for this attempt (no refresh delegate: no client id and no
   * refresh token are given to it; jsforce's retries off), with Salesforce's answers turned into what the
   * pipeline acts on.
   */
  async send(what: string, request: HttpRequest, options: CallOptions = {}): Promise<SalesforceAnswer> {
    const { signal } = options;
    const { budget, orgId } = this.options;
    if (budget === undefined) return abortable(this.sendPaced(what, request, signal), signal);
    this.withinBudget(what, budget);
    orgUsage.begin(orgId);
    try {
      return await abortable(this.sendPaced(what, request, signal), signal);
    } finally {
      orgUsage.end(orgId);
    }
  }

  /**
   * Refuses a call that would take the org past enrichbridge's share of its allowance (a limit_exhausted
   * CrmError: the installation waits an hour). The usage is what the org's answers said last
   * (Sforce-Limit-Info, on every one); /limits is not asked, as it needs View Setup and Configuration,
   * which the integration user otherwise does without, and costs a call of its own.
   */
  private withinBudget(what: string, budget: ApiBudget): void {
    const spent = orgUsage.exhausted(this.options.orgId, budget, this.now().getTime());
    if (spent !== null) throw new CrmError('limit_exhausted', budgetMessage(what, spent, budget), new Date(this.now().getTime() + REQUEST_LIMIT_PAUSE_MS));
  }

  private async sendPaced(what: string, request: HttpRequest, signal: AbortSignal | undefined): Promise<SalesforceAnswer> {
    const timeoutMs = this.options.timeoutMs ?? outboundTimeouts().salesforceMs;
    let session = await this.options.session();
    let refreshed = false;
    for (;;) {
      if (signal?.aborted) throw signal.reason as Error;
      let timeout: AbortSignal | null = null;
      // Set by the transport: jsforce's errors carry neither the status nor the headers.
      const seen: { response: HttpResponse | null } = { response: null };
      try {
        const instanceUrl = checkInstanceUrl(session.instanceUrl, { allowAnyHost: this.options.allowAnyHost === true });
        const { Connection } = await loadJsforce();
        const conn = new Connection({
          instanceUrl,
          accessToken: session.accessToken,
          version: SALESFORCE_API_VERSION,
          callOptions: { client: SALESFORCE_CALL_CLIENT },
        });
        // jsforce's own timeout ends at the response headers: ours covers the body too, and fires first
        // (jsforce's, a second later, then closes the socket of a request still waiting for headers).
        const transport = observedTransport(conn._transport, timeoutMs + 1_000, (r) => {
          seen.response = r;
          const reported = parseLimitInfo(r.headers['sforce-limit-info']);
          if (reported !== null) {
            this.usage = reported;
            orgUsage.observe(this.options.orgId, reported, this.now().getTime());
          }
        });
        this.calls += 1;
        const body = await this.limiter.schedule(() => {
          timeout = AbortSignal.timeout(timeoutMs);
          return abortable(conn.request<unknown>(request, { transport }), signal === undefined ? timeout : AbortSignal.any([timeout, signal]));
        });
        crmCalls.inc({ provider: 'salesforce', status: String(seen.response?.statusCode ?? '2xx') });
        return { body, headers: seen.response?.headers ?? {} };
      } catch (error) {
        if (error instanceof CrmError || signal?.aborted) throw error;
        if ((timeout as AbortSignal | null)?.aborted === true) {
          crmCalls.inc({ provider: 'salesforce', status: 'timeout' });
          throw new CrmTimeoutError(`Salesforce ${what}: no answer within ${timeoutMs} ms`);
        }
        const status = seen.response?.statusCode ?? null;
        crmCalls.inc({ provider: 'salesforce', status: status === null ? 'error' : String(status) });
        if (status === 429) rateLimited.inc({ direction: 'received', peer: 'salesforce' });
        const api = HttpApiErrorSchema.safeParse(error);
        const errorCode = api.success ? api.data.errorCode : null;
        const message = api.success ? api.data.message.slice(0, 300) : describe(error);
        if (status === 401 && !refreshed && this.options.refreshSession !== undefined) {
          const next = await this.options.refreshSession(session);
          if (next !== null) {
            session = next;
            refreshed = true;
            continue;
          }
        }
        if (errorCode === 'REQUEST_LIMIT_EXCEEDED') throw this.limitError(what, message);
        // An answer is told by its status and error code; Salesforce's text is kept only when there is no
        // answer (a socket error of our own client), never an answer's, which can quote values.
        const said = errorCode ?? (status === null ? maskPersonalText(message) : null);
        const detail = [`Salesforce ${what}:`, status ?? 'no answer', said].filter((part) => part !== null && part !== '').join(' ');
        if (status === 401 || status === 403) throw new CrmError('auth', detail);
        if (status === null || status >= 500) throw new CrmError('transient', detail);
        throw new SalesforceApiError(what, status, errorCode);
      }
    }
  }

  private limitError(what: string, message: string): CrmError {
    const now = this.now().getTime();
    if (requestLimitKind(message, this.usage) === 'concurrency') {
      return new CrmError(
        'rate_limited',
        `Salesforce ${what}: too many long-running requests (REQUEST_LIMIT_EXCEEDED)`,
        new Date(now + CONCURRENT_LIMIT_WAIT_MS),
      );
    }
    const usage = this.usage === null ? '' : ` (${this.usage.used}/${this.usage.max} calls in 24 h)`;
    return new CrmError('limit_exhausted', `Salesforce ${what}: the org's API request allowance is used up${usage}`, new Date(now + REQUEST_LIMIT_PAUSE_MS));
  }

  /**
   * Reads records (≤ 200) with exactly `fields`, one call. Every id asked for is a key: a record, or null when
   * it is deleted, not visible to us, or (a Lead) converted. Fields of the object itself go through sObject
   * Collections retrieve; a parent field (`Account.Name`) is not a field of the object, which Collections
   * retrieve does not document, so such a read is a SOQL query built with jsforce's query builder from validated
   * ids and field names. Always explicit fields: no describe call is ever made.
   */
  async retrieve(
    object: string,
    ids: readonly string[],
    fields: readonly string[],
    options: CallOptions = {},
  ): Promise<Map<string, Record<string, CrmValue> | null>> {
    checkNames(object, ids, fields);
    if (ids.length > SALESFORCE_BATCH_LIMIT) throw new Error(`at most ${SALESFORCE_BATCH_LIMIT} records per read`);
    const found = new Map<string, Record<string, CrmValue> | null>();
    if (ids.length === 0) return found;
    // A converted Lead is a Contact now: it is read to tell, and reported gone.
    const asked = object === 'Lead' && !fields.includes('IsConverted') ? [...fields, 'IsConverted'] : [...fields];
    const lookup = asked.some((f) => f.includes('.'))
      ? await this.query(object, ids, asked, options)
      : await this.collectionsRetrieve(object, ids, asked, options);
    for (const [index, id] of ids.entries()) {
      const record = lookup(id, index);
      found.set(id, record === null || (object === 'Lead' && record['IsConverted'] === true) ? null : pick(record, fields));
    }
    return found;
  }

  /**
   * Docs: https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/resources_composite_sobjects_collections_retrieve_post.htm
   * One sObject or null per id, in the order asked.
   */
  private async collectionsRetrieve(
    object: string,
    ids: readonly string[],
    fields: readonly string[],
    options: CallOptions,
  ): Promise<(id: string, index: number) => Record<string, unknown> | null> {
    const { body } = await this.send(
      `retrieve ${object}`,
      {
        method: 'POST',
        url: path(`/composite/sobjects/${object}`),
        body: JSON.stringify({ ids, fields }),
        headers: { 'content-type': 'application/json' },
      },
      options,
    );
    const parsed = z.array(SObjectSchema.nullable()).safeParse(body);
    if (!parsed.success || parsed.data.length !== ids.length)
      throw new CrmError('transient', `Salesforce retrieve ${object}: an answer that is not one record or null per id`);
    const records = parsed.data;
    return (_id, index) => records[index] ?? null;
  }

  /**
   * Docs: https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/resources_query.htm
   * `SELECT <fields> FROM <object> WHERE Id IN (…)`; an id missing from the answer is gone.
   */
  private async query(
    object: string,
    ids: readonly string[],
    fields: readonly string[],
    options: CallOptions,
  ): Promise<(id: string, index: number) => Record<string, unknown> | null> {
    const soql = await (
      await soqlBuilder()
    )
      .sobject(object)
      .find({ Id: { $in: [...ids] } }, fields.includes('Id') ? [...fields] : ['Id', ...fields])
      .toSOQL();
    const byId = new Map<string, Record<string, unknown>>();
    for await (const records of this.queryPages(object, soql, options)) {
      for (const record of records) {
        if (typeof record['Id'] === 'string') byId.set(toSalesforceId18(record['Id']) ?? record['Id'], record);
      }
    }
    // Both sides canonical (18 characters, case restored): an upper-cased 18-character id still matches.
    return (id) => byId.get(toSalesforceId18(id) ?? id) ?? null;
  }

  /** A SOQL query's records, a page (up to 2,000) per call. */
  private async *queryPages(object: string, soql: string, options: CallOptions): AsyncGenerator<Record<string, unknown>[]> {
    let url: string | null = path(`/query?q=${encodeURIComponent(soql)}`);
    while (url !== null) {
      const { body } = await this.send(`query ${object}`, { method: 'GET', url }, options);
      const parsed = QueryResultSchema.safeParse(body);
      if (!parsed.success) throw new CrmError('transient', `Salesforce query ${object}: an answer that is not a query result`);
      yield parsed.data.records;
      url = parsed.data.done || parsed.data.nextRecordsUrl === undefined ? null : parsed.data.nextRecordsUrl;
    }
  }

  /**
   * The records whose Individual (Data Protection and Privacy) asks to forget the person, changed at or
   * after `since` (all when null), oldest change first, with `fields` and the change's time
   * (`Individual.LastModifiedDate`): a page per call. An org without Data Protection and Privacy, or an
   * integration user who cannot read Individual, is refused with INVALID_FIELD (a SalesforceApiError).
   * Docs: https://developer.salesforce.com/docs/atlas.en-us.object_reference.meta/object_reference/sforce_api_objects_individual.htm
   */
  async *forgetRequests(
    object: string,
    fields: readonly string[],
    since: Date | null,
    options: CallOptions = {},
  ): AsyncGenerator<{ readonly id: string; readonly fields: Record<string, CrmValue>; readonly changedAt: string | null }[]> {
    checkNames(object, [], fields);
    const { SfDate } = await loadJsforce();
    const changedField = `${individualOf(object)}.LastModifiedDate`;
    const conditions: Record<string, unknown> = { [`${individualOf(object)}.ShouldForget`]: true };
    if (since !== null) conditions[changedField] = { $gte: SfDate.toDateTimeLiteral(since) };
    const selected = [...new Set(['Id', changedField, ...fields])];
    const soql = await (
      await soqlBuilder()
    )
      .sobject(object)
      .find(conditions, selected)
      .sort({ [changedField]: 1 })
      .toSOQL();
    for await (const records of this.queryPages(object, soql, options)) {
      yield records.flatMap((record) => {
        const id = typeof record['Id'] === 'string' ? toSalesforceId18(record['Id']) : null;
        if (id === null) return [];
        const changedAt = pick(record, [changedField])[changedField];
        return [{ id, fields: pick(record, fields), changedAt: typeof changedAt === 'string' ? changedAt : null }];
      });
    }
  }

  /**
   * Whether the org has Person Accounts: its Account describes an `IsPersonAccount` field. One call.
   * Docs: https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/resources_sobject_describe.htm
   */
  async hasPersonAccounts(options: CallOptions = {}): Promise<boolean> {
    return (await this.fieldNames('Account', options)).has('IsPersonAccount');
  }

  /**
   * The API names of an object's fields the integration user can see (a describe: one call).
   * Docs: https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/resources_sobject_describe.htm
   */
  async fieldNames(object: string, options: CallOptions = {}): Promise<Set<string>> {
    checkNames(object, [], []);
    const { body } = await this.send(`describe ${object}`, { method: 'GET', url: path(`/sobjects/${object}/describe`) }, options);
    const parsed = DescribeSchema.safeParse(body);
    if (!parsed.success) throw new CrmError('transient', `Salesforce describe ${object}: an answer that is not a describe result`);
    return new Set(parsed.data.fields.map((field) => field.name));
  }

  /**
   * Updates records (≤ 200) with sObject Collections, `allOrNone: false`: one result per record, in the order
   * given (SaveResults come back in request order; a failed one has no id). A whole call refused for a reason
   * of ours (a 400 such as INVALID_FIELD) rejects every record; limits, auth and outages are thrown.
   * Docs: https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/resources_composite_sobjects_collections_update.htm
   */
  async update(object: string, records: readonly RecordUpdate[], options: CallOptions = {}): Promise<WriteResult[]> {
    checkNames(
      object,
      records.map((r) => r.id),
      records.flatMap((r) => Object.keys(r.properties)),
    );
    if (records.length > SALESFORCE_BATCH_LIMIT) throw new Error(`at most ${SALESFORCE_BATCH_LIMIT} records per update`);
    if (records.length === 0) return [];
    let body: unknown;
    try {
      ({ body } = await this.send(
        `update ${object}`,
        {
          method: 'PATCH',
          url: path('/composite/sobjects'),
          body: JSON.stringify({
            allOrNone: false,
            records: records.map((r) => ({ id: r.id, attributes: { type: object }, ...r.properties })),
          }),
          headers: { 'content-type': 'application/json' },
        },
        options,
      ));
    } catch (error) {
      if (error instanceof SalesforceApiError) return records.map((r) => ({ id: r.id, ok: false, reason: 'rejected', message: error.message }));
      throw error;
    }
    const parsed = z.array(z.unknown()).safeParse(body);
    const results = parsed.success ? parsed.data : [];
    return records.map((record, index): WriteResult => {
      const result = SaveResultSchema.safeParse(results[index]);
      if (!result.success) return { id: record.id, ok: false, reason: 'transient', message: 'Salesforce returned no SaveResult for the record' };
      if (result.data.success) return { id: record.id, ok: true };
      const codes = result.data.errors.map((e) => e.statusCode);
      const reason = codes.some((c) => GONE_STATUS_CODES.has(c)) ? 'not_found' : codes.some((c) => REJECTED_STATUS_CODES.has(c)) ? 'rejected' : 'transient';
      const message = result.data.errors.map(saveErrorText).join('; ');
      return { id: record.id, ok: false, reason, message: message === '' ? 'Salesforce refused the record without an error' : message };
    });
  }

  /**
   * The ids of every `object` record (Leads: not converted), or of those not enriched yet, with a Bulk API 2.0
   * query job, page by page: large objects are read without spending a REST call per 2,000 records. Polls,
   * job creation and every results page are one call each, paced like the rest.
   * Docs: https://developer.salesforce.com/docs/atlas.en-us.api_asynch.meta/api_asynch/queries.htm
   */
  async *bulkQueryIds(object: string, whereNotEnriched: boolean, options: BulkQueryOptions = {}): AsyncGenerator<BulkIdPage> {
    const enrichedAt = options.enrichedAtField ?? DEFAULT_ENRICHED_AT_FIELD;
    checkNames(object, [], [enrichedAt]);
    const pageSize = options.pageSize ?? 50_000;
    if (!Number.isInteger(pageSize) || pageSize < 1) throw new Error(`a page size is a positive whole number, not ${pageSize}`);
    let jobId: string;
    let locator: string | null;
    if (options.resume === undefined) {
      const conditions: Record<string, null | boolean> = {};
      if (whereNotEnriched) conditions[enrichedAt] = null;
      if (object === 'Lead') conditions['IsConverted'] = false;
      // Accounts are enriched only where they are people (person-accounts.ts): a business Account is never listed.
      if (object === 'Account') conditions['IsPersonAccount'] = true;
      const soql = await (await soqlBuilder()).sobject(object).find(conditions, ['Id']).toSOQL();
      // Docs: https://developer.salesforce.com/docs/atlas.en-us.api_asynch.meta/api_asynch/query_create_job.htm
      const { body } = await this.send(`bulk query ${object}`, {
        method: 'POST',
        url: path('/jobs/query'),
        body: JSON.stringify({ operation: 'query', query: soql }),
        headers: { 'content-type': 'application/json' },
      });
      jobId = parseJob(body, object).id;
      locator = null;
    } else {
      ({ jobId, locator } = options.resume);
      if (!RECORD_ID.test(jobId)) throw new Error(`not a Salesforce job id: ${jobId.slice(0, 40)}`);
    }
    await this.awaitJob(object, jobId);
    for (;;) {
      // Docs: https://developer.salesforce.com/docs/atlas.en-us.api_asynch.meta/api_asynch/query_get_job_results.htm
      const params = new URLSearchParams({ maxRecords: String(pageSize), ...(locator === null ? {} : { locator }) });
      const { body, headers } = await this.send(`bulk query ${object} results`, {
        method: 'GET',
        url: path(`/jobs/query/${jobId}/results?${params.toString()}`),
      });
      // jsforce parses the text/csv answer into one object per row.
      const rows = z.array(z.object({ Id: z.string().regex(RECORD_ID) }).loose()).safeParse(body === '' ? [] : body);
      if (!rows.success) throw new CrmError('transient', `Salesforce bulk query ${object}: results that are not a CSV of ids`);
      const next = headers['sforce-locator'];
      locator = next === undefined || next === '' || next === 'null' ? null : next;
      yield { jobId, ids: rows.data.map((r) => r.Id), locator };
      if (locator === null) return;
    }
  }

  /** Docs: https://developer.salesforce.com/docs/atlas.en-us.api_asynch.meta/api_asynch/query_get_one_job.htm */
  private async awaitJob(object: string, jobId: string): Promise<void> {
    let waited = 0;
    for (let wait = 2_000; ; wait = Math.min(wait * 2, 30_000)) {
      const { body } = await this.send(`bulk query ${object} status`, { method: 'GET', url: path(`/jobs/query/${jobId}`) });
      const job = parseJob(body, object);
      if (job.state === 'JobComplete') return;
      if (job.state === 'Failed' || job.state === 'Aborted') {
        throw new CrmError(
          'transient',
          `Salesforce bulk query ${object}: job ${jobId} ${job.state}${job.errorMessage === undefined ? '' : `: ${maskPersonalText(job.errorMessage)}`}`,
        );
      }
      if (waited >= BULK_QUERY_MAX_WAIT_MS)
        throw new CrmError('transient', `Salesforce bulk query ${object}: job ${jobId} still ${job.state} after ${waited / 60_000} minutes`);
      await this.sleep(wait);
      waited += wait;
    }
  }
}

function parseJob(body: unknown, object: string): z.infer<typeof BulkJobSchema> {
  const job = BulkJobSchema.safeParse(body);
  if (!job.success) throw new CrmError('transient', `Salesforce bulk query ${object}: an answer that is not a query job`);
  return job.data;
}

/** Names go into paths and SOQL: only what Salesforce's own names can be. */
function checkNames(object: string, ids: readonly string[], fields: readonly string[]): void {
  if (!OBJECT_NAME.test(object)) throw new Error(`not a Salesforce object name: ${object}`);
  const badId = ids.find((id) => !RECORD_ID.test(id));
  if (badId !== undefined) throw new Error(`not a Salesforce record id: ${badId.slice(0, 40)}`);
  const badField = fields.find((f) => !FIELD_PATH.test(f));
  if (badField !== undefined) throw new Error(`not a Salesforce field name: ${badField.slice(0, 80)}`);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Exactly `fields` of a record, a parent's field (`Account.Name`) read through its relationship; missing is null. */
function pick(record: Record<string, unknown>, fields: readonly string[]): Record<string, CrmValue> {
  const out: Record<string, CrmValue> = {};
  for (const field of fields) {
    let value: unknown = record;
    for (const segment of field.split('.')) {
      value = isObject(value) ? value[segment] : undefined;
    }
    out[field] = typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? value : null;
  }
  return out;
}
