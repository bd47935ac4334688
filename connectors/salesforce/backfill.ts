// The Salesforce side of a backfill: which Contacts or Leads exist comes from one Bulk API 2.0 query job
// (its id list paged by locator, a results call per 50,000 ids instead of a REST query call per 2,000
// records), and each page of ≤ 200 of those ids is read with the connector (one call) for the identity
// fields a plan needs to count match keys and input hashes. The cursor is a position in the job's results,
// so an interrupted backfill resumes the same job; a job Salesforce has deleted meanwhile is queried anew.
import { z } from 'zod';
import { BackfillRecordIdError, type RecordSource } from '../../bridge/backfill.ts';
import type { CrmRecord } from '../../bridge/connector.ts';
import type { CrmBackfill } from '../../bridge/crm-module.ts';
import { InstallationError } from '../../bridge/installations.ts';
import { type BulkIdPage, DEFAULT_ENRICHED_AT_FIELD, SALESFORCE_API_VERSION, SALESFORCE_BATCH_LIMIT, type SalesforceApi, SalesforceApiError } from './api.ts';
import { SalesforceConnector, type SalesforceEnrichedObject, isSalesforceObject, salesforceApiFor } from './connector.ts';
import { PERSON_ACCOUNT, personAccountFieldName } from './person-accounts.ts';
import { SALESFORCE_KEY_PREFIXES, SalesforceIdSchema, recordIdMatchesObject } from './ids.ts';

/**
 * Where a backfill stands in a bulk query job's results: the `locator` of the results page holding the
 * next id (null: the job's first page) and the `offset` of that id in the page. Salesforce keeps a locator
 * valid for as long as the job exists, and a page starting at a locator always starts at the same record,
 * whatever maxRecords is, so a rerun fetches that page again and skips `offset` ids. The filter and the API
 * version travel with it: a job is resumed only for the same question, and results are only served to the
 * API version that created the job (another one gets a 409).
 * Docs: https://developer.salesforce.com/docs/atlas.en-us.api_asynch.meta/api_asynch/query_get_job_results.htm
 */
const BulkCursorSchema = z.object({
  jobId: z.string().min(1),
  locator: z.string().min(1).nullable(),
  offset: z.number().int().nonnegative(),
  whereNotEnriched: z.boolean(),
  apiVersion: z.string().min(1),
});
export type SalesforceBackfillCursor = z.infer<typeof BulkCursorSchema>;

export function encodeBackfillCursor(cursor: SalesforceBackfillCursor): string {
  // Fixed key order: the cursor handed out is compared as a string when the next page is asked for.
  const { jobId, locator, offset, whereNotEnriched, apiVersion } = cursor;
  return JSON.stringify({ jobId, locator, offset, whereNotEnriched, apiVersion });
}

export function decodeBackfillCursor(text: string): SalesforceBackfillCursor | null {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return null;
  }
  const parsed = BulkCursorSchema.safeParse(json);
  return parsed.success ? parsed.data : null;
}

/** Why a saved position could not be resumed, so the query started over from the first record. */
export interface Requery {
  readonly jobId: string;
  /** `gone`: Salesforce answered 404 (jobs are deleted about 7 days after they are created). */
  readonly reason: 'gone' | 'api_version';
}

export interface SalesforceRecordSourceOptions {
  readonly api: Pick<SalesforceApi, 'bulkQueryIds'>;
  readonly connector: Pick<SalesforceConnector, 'read'>;
  readonly object: SalesforceEnrichedObject;
  /** Only records whose enriched-at field is empty, filtered in the bulk query itself. */
  readonly whereNotEnriched: boolean;
  /** Ids per bulk results page (maxRecords); the API's default, 50,000, unless a test says otherwise. */
  readonly bulkPageSize?: number;
  readonly enrichedAtField?: string;
  /** Told when a saved position is not resumable and a new job reads from the first record instead. */
  readonly onRequery?: (requery: Requery) => void;
}

/** The bulk page being read: the generator that yields the job's next pages, and the locator this one came from. */
interface OpenJob {
  readonly pages: AsyncGenerator<BulkIdPage>;
  readonly jobId: string;
  readonly locator: string | null;
  readonly page: BulkIdPage;
}

/**
 * A RecordSource over a bulk query job's ids, ≤ 200 records a page read with the connector in id order.
 * Within one run the job's pages are read once each, in turn; a cursor from another run (a resumed backfill)
 * opens the job again at its locator. Records deleted, not visible or (Leads) converted since the query are
 * left out of their page.
 */
export function salesforceRecordSource(options: SalesforceRecordSourceOptions): RecordSource {
  const { api, connector, object, whereNotEnriched } = options;
  const bulkOptions = {
    ...(options.bulkPageSize === undefined ? {} : { pageSize: options.bulkPageSize }),
    ...(options.enrichedAtField === undefined ? {} : { enrichedAtField: options.enrichedAtField }),
  };
  /** The job page the last successful call read from (null after a failure). */
  let open: OpenJob | null = null;
  /** The cursor this source handed out last, and how to serve it from the open job without a call. */
  let handedOut: { readonly cursor: string; readonly offset: number; readonly nextPage: boolean } | null = null;

  async function first(pages: AsyncGenerator<BulkIdPage>, locator: string | null): Promise<OpenJob> {
    const result = await pages.next();
    // bulkQueryIds yields at least one page, possibly empty, for every job.
    if (result.done === true) throw new Error(`the bulk query of ${object} ended without a results page`);
    return { pages, jobId: result.value.jobId, locator, page: result.value };
  }

  const newJob = () => first(api.bulkQueryIds(object, whereNotEnriched, bulkOptions), null);

  async function resume(at: SalesforceBackfillCursor): Promise<{ job: OpenJob; offset: number }> {
    if (at.whereNotEnriched !== whereNotEnriched) {
      const was = at.whereNotEnriched ? 'with' : 'without';
      throw new InstallationError(
        `the ${object} backfill that stopped midway ran ${was} --where-not-enriched: run it the same way to resume it, or pass --restart to start over`,
      );
    }
    if (at.apiVersion !== SALESFORCE_API_VERSION) {
      options.onRequery?.({ jobId: at.jobId, reason: 'api_version' });
      return { job: await newJob(), offset: 0 };
    }
    try {
      const job = await first(api.bulkQueryIds(object, whereNotEnriched, { ...bulkOptions, resume: { jobId: at.jobId, locator: at.locator } }), at.locator);
      return { job, offset: at.offset };
    } catch (error) {
      if (!(error instanceof SalesforceApiError && error.status === 404)) throw error;
      options.onRequery?.({ jobId: at.jobId, reason: 'gone' });
      return { job: await newJob(), offset: 0 };
    }
  }

  async function position(cursor: string | null, current: OpenJob | null): Promise<{ job: OpenJob; offset: number }> {
    if (cursor !== null && current !== null && handedOut !== null && cursor === handedOut.cursor) {
      if (!handedOut.nextPage) return { job: current, offset: handedOut.offset };
      return { job: await first(current.pages, current.page.locator), offset: 0 };
    }
    if (cursor === null) return { job: await newJob(), offset: 0 };
    const at = decodeBackfillCursor(cursor);
    if (at === null)
      throw new InstallationError(`the saved position of the last ${object} backfill is not one this version reads: pass --restart to start over`);
    return resume(at);
  }

  return async (cursor) => {
    // Forgotten until this page is read: a results call that failed has finished the job's generator, so a
    // caller asking again with the same cursor gets the job opened anew at that position.
    const previous = open;
    open = null;
    const { job, offset } = await position(cursor, previous);
    const ids = job.page.ids.slice(offset, offset + SALESFORCE_BATCH_LIMIT);
    // Only ids an outbound message or a callout would take (checksum, the object's key prefix), checked
    // before any is read or queued.
    const refused = ids.find((id) => {
      const parsed = SalesforceIdSchema.safeParse(id);
      return !parsed.success || !recordIdMatchesObject(object, parsed.data);
    });
    if (refused !== undefined) {
      throw new BackfillRecordIdError('Salesforce', object, refused, `${SALESFORCE_KEY_PREFIXES[object]}…, 15 or 18 letters and digits with a valid checksum`);
    }
    const end = offset + ids.length;
    const at = (locator: string | null, from: number) =>
      encodeBackfillCursor({ jobId: job.jobId, locator, offset: from, whereNotEnriched, apiVersion: SALESFORCE_API_VERSION });
    const next =
      end < job.page.ids.length
        ? { cursor: at(job.locator, end), offset: end, nextPage: false }
        : job.page.locator !== null
          ? { cursor: at(job.page.locator, 0), offset: 0, nextPage: true }
          : null;
    const found = ids.length === 0 ? new Map<string, CrmRecord>() : await connector.read(object, ids);
    const records = ids.flatMap((id) => {
      const record = found.get(id);
      return record === undefined ? [] : [record];
    });
    open = job;
    handedOut = next;
    return { records, next: next === null ? null : next.cursor };
  };
}

const NOUNS: Readonly<Record<SalesforceEnrichedObject, string>> = { Contact: 'contacts', Lead: 'leads', Account: 'person accounts' };
const WHERE_NOT_ENRICHED = '--where-not-enriched';

/** `enrichbridge backfill salesforce --object Contact|Lead`: an object's records, listed by one bulk query. */
export function salesforceBackfill(options: { readonly allowAnyHost: boolean }): CrmBackfill {
  return {
    description: 'list the ids of an object’s records with a Bulk API 2.0 query job, read them 200 per call, and enqueue those that need enriching',
    nouns: NOUNS,
    flags: { [WHERE_NOT_ENRICHED]: `only records whose ${DEFAULT_ENRICHED_AT_FIELD} is empty (filtered in the bulk query)` },
    open: ({ installation, installations, object, flags, notice }) => {
      if (!isSalesforceObject(object)) throw new InstallationError(`a Salesforce backfill reads Contacts, Leads or person Accounts (Account), not ${object}`);
      // A person Account shows our Contact field as `__pc`; the bulk query keeps to person Accounts.
      const enrichedAtField = object === PERSON_ACCOUNT ? personAccountFieldName(DEFAULT_ENRICHED_AT_FIELD) : DEFAULT_ENRICHED_AT_FIELD;
      const whereNotEnriched = flags[WHERE_NOT_ENRICHED] === true;
      const api = salesforceApiFor(installation, installations, { allowAnyHost: options.allowAnyHost });
      const connector = new SalesforceConnector(api, { privacyFlags: false }); // a plan counts; the pipeline reads the flags
      let requeried = false;
      const source = salesforceRecordSource({
        api,
        connector,
        object,
        whereNotEnriched,
        enrichedAtField,
        onRequery: ({ jobId, reason }) => {
          requeried = true;
          const why = reason === 'gone' ? 'Salesforce no longer has it' : `it was made with another API version than ${SALESFORCE_API_VERSION}`;
          notice(`the bulk query job ${jobId} of the last backfill cannot be resumed (${why}): querying again`);
        },
      });
      return Promise.resolve({
        connector,
        source,
        scanned: whereNotEnriched ? `${NOUNS[object]} with an empty ${enrichedAtField}` : NOUNS[object],
        summary: () => {
          const usage = api.apiUsage === null ? '' : ` (the org has used ${api.apiUsage.used} of ${api.apiUsage.max} in 24 h)`;
          return { restarted: requeried, lines: [`  Salesforce API calls:   ${api.calls}${usage}`] };
        },
      });
    },
  };
}
