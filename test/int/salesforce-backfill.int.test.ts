// The Salesforce backfill against recorded-shape Salesforce answers (nock): the ids from a Bulk API 2.0 query
// job (create with builder SOQL, poll until JobComplete, CSV results paged by Sforce-Locator), the identity
// fields read 200 ids per call, on the pipeline's real SQLite store and queue. What a plan counts and prices,
// --limit, resuming the same job after an interruption, a job Salesforce has deleted, a failed or aborted job,
// --where-not-enriched in the SOQL; and `enrichbridge backfill salesforce` itself, run in-process.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Connection } from 'jsforce';
import nock from 'nock';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createAccount } from '../../core/accounts/admin.ts';
import { CrmError } from '../../bridge/connector.ts';
import { BackfillProgress, BackfillRecordIdError, type RecordSource, planBackfill, runBackfill } from '../../bridge/backfill.ts';
import { inputHash as inputHashFor } from '../../bridge/input.ts';
import { InstallationError } from '../../bridge/installations.ts';
import type { Installation } from '../../bridge/model.ts';
import { SALESFORCE_API_VERSION, SalesforceApi } from '../../connectors/salesforce/api.ts';
import type { SalesforceCredentials } from '../../connectors/salesforce/auth.ts';
import {
  type Requery,
  type SalesforceBackfillCursor,
  decodeBackfillCursor,
  encodeBackfillCursor,
  salesforceRecordSource,
} from '../../connectors/salesforce/backfill.ts';
import { SALESFORCE_PROVIDER, SalesforceConnector, readFields } from '../../connectors/salesforce/connector.ts';
import type { SalesforceObject } from '../../connectors/salesforce/fields.ts';
import { toSalesforceId18 } from '../../connectors/salesforce/ids.ts';
import { backfillCommands } from '../../server/cli/backfill.ts';
import { withRuntime } from '../../server/runtime.ts';
import { tempDir } from '../support/harness.ts';
import { type PipelineHarness, startPipeline } from '../support/pipeline-harness.ts';

const INSTANCE = 'https://enrichbridge-dev-ed.develop.my.salesforce.com';
const V = `/services/data/v${SALESFORCE_API_VERSION}`;
const ORG = '00D5g000004fAkEEAU';
/** The fixtures' job, and the one a new query gets. */
const JOB = '750R0000000zlh9IAA';
const JOB2 = '750R0000000zlhAIAQ';
/** Every call we make carries this, so our own writes can be told apart. */
const OURS = { 'sforce-call-options': 'client=enrichbridge' };
const JSON_HEADERS = { 'content-type': 'application/json;charset=UTF-8' };
const DAY_MS = 86_400_000;

const FixtureSchema = z.object({ body: z.record(z.string(), z.unknown()) });
const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/salesforce/rest');
/** A query job as Salesforce describes it (the recorded fixture), with another id, state or message. */
function job(id: string, state: string, extra: Record<string, unknown> = {}): string {
  const recorded = FixtureSchema.parse(JSON.parse(readFileSync(path.join(FIXTURES, 'bulk-query-job-complete-200.json'), 'utf8'))).body;
  return JSON.stringify({ ...recorded, id, state, ...extra });
}

/** Salesforce's locators are opaque; these look like its (base64 of the row they start at). */
const locatorAt = (row: number) => Buffer.from(String(row)).toString('base64');

// ---------------------------------------------------------------------------------------------------
// A fake org: Leads (or Contacts) by id, and the answers Salesforce would give about them.

type Fields = Record<string, string | null>;

interface Org {
  readonly object: SalesforceObject;
  readonly ids: string[];
  readonly records: Map<string, Fields>;
}

/**
 * `count` records, 18-character ids in order. Each has an e-mail (a match key) unless `keyless(i)`; a keyless
 * one has a first and last name only, which no matching rule can use.
 */
function makeOrg(object: SalesforceObject, count: number, keyless: (i: number) => boolean = () => false): Org {
  const prefix = object === 'Lead' ? '00Q5g00000Ld' : '0035g00000Ct';
  const ids: string[] = [];
  const records = new Map<string, Fields>();
  for (let i = 1; i <= count; i += 1) {
    // 18 characters as Salesforce answers: the 15-character id and its case checksum.
    const id = toSalesforceId18(`${prefix}${String(i).padStart(3, '0')}`);
    if (id === null) throw new Error(`no id for ${i}`);
    ids.push(id);
    records.set(
      id,
      keyless(i)
        ? { FirstName: 'Solo', LastName: `Only${i}` }
        : { FirstName: 'Pat', LastName: `Doe${i}`, Email: `pat.doe${i}@example.com`, [object === 'Lead' ? 'Company' : 'Account.Name']: 'Doe Ventures' },
    );
  }
  return { object, ids, records };
}

/** The Bulk API 2.0 results pages of `ids` at `pageSize`: where each starts and the locator of the next. */
function bulkPages(ids: readonly string[], pageSize: number): { locator: string | null; ids: string[]; next: string | null }[] {
  const pages = [];
  for (let start = 0; start === 0 || start < ids.length; start += pageSize) {
    const end = Math.min(start + pageSize, ids.length);
    pages.push({ locator: start === 0 ? null : locatorAt(start), ids: ids.slice(start, end), next: end < ids.length ? locatorAt(end) : null });
  }
  return pages;
}

function csv(ids: readonly string[]): string {
  return `"Id"\n${ids.map((id) => `"${id}"\n`).join('')}`;
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** POST /jobs/query with exactly this SOQL, answered with a new job. */
function expectCreate(scope: nock.Scope, soql: string, jobId = JOB): void {
  // Docs: https://developer.salesforce.com/docs/atlas.en-us.api_asynch.meta/api_asynch/query_create_job.htm
  scope.post(`${V}/jobs/query`, { operation: 'query', query: soql }).reply(200, job(jobId, 'UploadComplete'), JSON_HEADERS);
}

/** GET /jobs/query/{id}, once per state given. */
function expectPolls(scope: nock.Scope, states: readonly string[], jobId = JOB, extra: Record<string, unknown> = {}): void {
  for (const state of states) scope.get(`${V}/jobs/query/${jobId}`).reply(200, job(jobId, state, extra), JSON_HEADERS);
}

/** GET /jobs/query/{id}/results for one page: CSV, Sforce-Locator naming the next page (the string null after the last). */
function expectResults(scope: nock.Scope, page: { locator: string | null; ids: readonly string[]; next: string | null }, pageSize: number, jobId = JOB): void {
  // Docs: https://developer.salesforce.com/docs/atlas.en-us.api_asynch.meta/api_asynch/query_get_job_results.htm
  scope
    .get(`${V}/jobs/query/${jobId}/results`)
    .query(page.locator === null ? { maxRecords: String(pageSize) } : { maxRecords: String(pageSize), locator: page.locator })
    .reply(200, csv(page.ids), {
      'content-type': 'text/csv',
      'sforce-locator': page.next ?? 'null',
      'sforce-numberofrecords': String(page.ids.length),
      'sforce-limit-info': 'api-usage=25/15000',
    });
}

/** One collections retrieve per chunk of Lead ids, exactly the fields the connector reads; `gone` ids answer null. */
function expectLeadReads(scope: nock.Scope, org: Org, idChunks: readonly (readonly string[])[], gone: ReadonlySet<string> = new Set()): void {
  const fields = [...readFields('Lead'), 'IsConverted'];
  for (const ids of idChunks) {
    // Docs: https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/resources_composite_sobjects_collections_retrieve_post.htm
    scope.post(`${V}/composite/sobjects/Lead`, { ids: [...ids], fields }).reply(
      200,
      JSON.stringify(
        ids.map((id) => {
          const record = org.records.get(id);
          if (record === undefined || gone.has(id)) return null;
          const values = Object.fromEntries(fields.map((f) => [f, f === 'IsConverted' ? false : (record[f] ?? null)]));
          return { attributes: { type: 'Lead', url: `${V}/sobjects/Lead/${id}` }, ...values };
        }),
      ),
      { ...JSON_HEADERS, 'sforce-limit-info': 'api-usage=26/15000' },
    );
  }
}

/** Each bulk page's ids read 200 at a time (a page's last chunk may be shorter). */
function readChunks(pages: readonly { ids: readonly string[] }[]): string[][] {
  return pages.flatMap((p) => chunks(p.ids, 200));
}

// ---------------------------------------------------------------------------------------------------

let orgs = 0;
function apiWith() {
  const sleeps: number[] = [];
  orgs += 1;
  const api = new SalesforceApi({
    // A limiter of its own per test.
    orgId: `00D5g0000001${String(orgs).padStart(3, '0')}AAA`,
    session: () => Promise.resolve({ instanceUrl: INSTANCE, accessToken: 'tok-1' }),
    sleep: (ms) => {
      sleeps.push(ms);
      return Promise.resolve();
    },
  });
  return { api, sleeps, connector: new SalesforceConnector(api, { privacyFlags: false }) };
}

const cleanups: (() => Promise<void> | void)[] = [];
beforeAll(() => {
  nock.disableNetConnect();
});
afterEach(async () => {
  nock.cleanAll();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(() => {
  nock.enableNetConnect();
});

async function pipeline(): Promise<PipelineHarness> {
  const h = await startPipeline();
  cleanups.push(() => h.close());
  return h;
}

const PayloadSchema = z.object({ object: z.string(), recordId: z.string(), trigger: z.string().optional() });

async function queued(h: PipelineHarness, installation: Installation) {
  const jobs = await h.opened.queue.list({ state: 'queued' });
  return jobs.filter((j) => j.installationId === installation.id).map((j) => PayloadSchema.parse(j.payload));
}

async function backfillRow(h: PipelineHarness, installation: Installation, object: string) {
  return h.opened.db.selectFrom('backfills').selectAll().where('installation_id', '=', installation.id).where('object', '=', object).executeTakeFirst();
}

function cursorOf(text: string | null | undefined): SalesforceBackfillCursor | null {
  return text === null || text === undefined ? null : decodeBackfillCursor(text);
}

/** A plan over a Salesforce source of this run (a new source per run, as each CLI run makes its own). */
function planner(h: PipelineHarness, installation: Installation, object: SalesforceObject) {
  const progress = new BackfillProgress(h.opened.db);
  const requeries: Requery[] = [];
  const plan = (
    api: ReturnType<typeof apiWith>,
    options: { whereNotEnriched?: boolean; bulkPageSize?: number; limit?: number; restart?: boolean; source?: RecordSource } = {},
  ) => {
    const { whereNotEnriched = false, bulkPageSize = 50_000, source, ...rest } = options;
    return planBackfill({
      installation,
      object,
      connector: api.connector,
      source:
        source ??
        salesforceRecordSource({ api: api.api, connector: api.connector, object, whereNotEnriched, bulkPageSize, onRequery: (r) => requeries.push(r) }),
      store: h.bridge.pipelineStore,
      progress,
      now: h.clock.now,
      ...rest,
    });
  };
  return { plan, progress, requeries };
}

describe('planning a Salesforce backfill from a Bulk API 2.0 query', () => {
  it('creates the job with builder SOQL, polls until JobComplete, pages the CSV ids by locator, reads them 200 per call, and counts match keys and up-to-date records', async () => {
    const h = await pipeline();
    const installation = await h.install({ environment: 'production' });
    // 450 Leads; every tenth has no match key; Lead 5 was deleted after the query ran.
    const org = makeOrg('Lead', 450, (i) => i % 10 === 0);
    const deleted = org.ids[4] ?? '';
    const pages = bulkPages(org.ids, 300);
    const sf = nock(INSTANCE, { reqheaders: OURS });
    expectCreate(sf, 'SELECT Id FROM Lead WHERE IsConverted = false');
    expectPolls(sf, ['InProgress', 'JobComplete']);
    for (const page of pages) expectResults(sf, page, 300);
    expectLeadReads(sf, org, readChunks(pages), new Set([deleted]));
    const api = apiWith();
    // Leads 1 to 3 were enriched yesterday with the input they still have.
    await h.bridge.pipelineStore.saveOutcomes(
      org.ids.slice(0, 3).map((recordId) => ({
        installationId: installation.id,
        object: 'Lead',
        recordId,
        householdMatched: true,
        careerMatched: false,
        windfallId: null,
        confidence: null,
        enrichedAt: new Date(h.clock.now.getTime() - DAY_MS).toISOString(),
        inputHash: inputHashOf(api.connector, org, recordId, installation.environment),
        written: {},
      })),
      [],
    );
    const { plan } = planner(h, installation, 'Lead');

    const result = await plan(api, { bulkPageSize: 300 });
    sf.done();

    expect(result).toMatchObject({ startCursor: null, scanned: 449, withMatchKey: 404, upToDate: 3, toEnrich: 401, quotaUnits: 401 });
    const expected = org.ids.filter((id, index) => index >= 3 && id !== deleted && (index + 1) % 10 !== 0);
    expect(result.pages.flatMap((p) => p.ids)).toEqual(expected);
    // Three pages of records (200 and 100 from the first results page, 150 from the second), each resumable.
    expect(result.pages.map((p) => cursorOf(p.resumeAt))).toEqual([
      { jobId: JOB, locator: null, offset: 200, whereNotEnriched: false, apiVersion: SALESFORCE_API_VERSION },
      { jobId: JOB, locator: locatorAt(300), offset: 0, whereNotEnriched: false, apiVersion: SALESFORCE_API_VERSION },
      null,
    ]);
    expect(result.pages.at(-1)).toMatchObject({ resumeAt: null, last: true });
    // One create, two polls (one wait between them), two results pages, three reads: no REST query paging.
    expect(api.sleeps).toEqual([2_000]);
    expect(api.api.calls).toBe(8);
    expect(api.api.apiUsage).toEqual({ used: 26, max: 15000 });
    // A plan reads only.
    expect(await queued(h, installation)).toEqual([]);
    expect(await backfillRow(h, installation, 'Lead')).toBeUndefined();
  });

  it('prices one quota unit per record to enrich in production and none in the sandbox', async () => {
    const h = await pipeline();
    const org = makeOrg('Lead', 5, (i) => i === 2);
    const runs: [Installation, number][] = [
      [await h.install({ environment: 'production' }), 4],
      [await h.install({ environment: 'sandbox' }), 0],
    ];
    for (const [installation, units] of runs) {
      const sf = nock(INSTANCE, { reqheaders: OURS });
      expectCreate(sf, 'SELECT Id FROM Lead WHERE IsConverted = false');
      expectPolls(sf, ['JobComplete']);
      expectResults(sf, { locator: null, ids: org.ids, next: null }, 50_000);
      expectLeadReads(sf, org, [org.ids]);
      const result = await planner(h, installation, 'Lead').plan(apiWith());
      sf.done();
      expect(result).toMatchObject({ scanned: 5, withMatchKey: 4, toEnrich: 4, quotaUnits: units });
    }
  });

  it('a bulk query of Accounts lists person Accounts only, by their __pc enriched-at field', async () => {
    const soql = 'SELECT Id FROM Account WHERE WF_Enriched_At__pc = null AND IsPersonAccount = true';
    const sf = nock(INSTANCE, { reqheaders: OURS });
    expectCreate(sf, soql);
    expectPolls(sf, ['JobComplete']);
    expectResults(sf, { locator: null, ids: [], next: null }, 50_000);
    const pages = apiWith().api.bulkQueryIds('Account', true, { enrichedAtField: 'WF_Enriched_At__pc' });
    expect((await pages.next()).value).toMatchObject({ jobId: JOB, ids: [] });
    sf.done();
  });

  it('--where-not-enriched filters in the bulk query, with SOQL from jsforce’s builder for both objects; a Contact page is read with one SOQL call', async () => {
    const h = await pipeline();
    const installation = await h.install();
    const builder = new Connection({ version: SALESFORCE_API_VERSION });
    const leadSoql = 'SELECT Id FROM Lead WHERE WF_Enriched_At__c = null AND IsConverted = false';
    const contactSoql = 'SELECT Id FROM Contact WHERE WF_Enriched_At__c = null';
    expect(await builder.sobject('Lead').find({ WF_Enriched_At__c: null, IsConverted: false }, ['Id']).toSOQL()).toBe(leadSoql);
    expect(await builder.sobject('Contact').find({ WF_Enriched_At__c: null }, ['Id']).toSOQL()).toBe(contactSoql);

    const leads = makeOrg('Lead', 2);
    const sf = nock(INSTANCE, { reqheaders: OURS });
    expectCreate(sf, leadSoql);
    expectPolls(sf, ['JobComplete']);
    expectResults(sf, { locator: null, ids: leads.ids, next: null }, 50_000);
    expectLeadReads(sf, leads, [leads.ids]);
    expect(await planner(h, installation, 'Lead').plan(apiWith(), { whereNotEnriched: true })).toMatchObject({ scanned: 2, toEnrich: 2 });
    sf.done();

    // Contacts: Account.Name is a parent's field, so the 3 ids are read with one query built by the same builder.
    const contacts = makeOrg('Contact', 3, (i) => i === 3);
    const fields = readFields('Contact');
    const readSoql = `SELECT Id, ${fields.join(', ')} FROM Contact WHERE Id IN (${contacts.ids.map((id) => `'${id}'`).join(', ')})`;
    const sfc = nock(INSTANCE, { reqheaders: OURS });
    expectCreate(sfc, contactSoql);
    expectPolls(sfc, ['JobComplete']);
    expectResults(sfc, { locator: null, ids: contacts.ids, next: null }, 50_000);
    // Docs: https://developer.salesforce.com/docs/atlas.en-us.api_rest.meta/api_rest/resources_query.htm
    sfc
      .get(`${V}/query`)
      .query({ q: readSoql })
      .reply(
        200,
        JSON.stringify({
          totalSize: 3,
          done: true,
          records: contacts.ids.map((id) => {
            const record = contacts.records.get(id) ?? {};
            const own = Object.fromEntries(fields.filter((f) => !f.includes('.')).map((f) => [f, record[f] ?? null]));
            const account = record['Account.Name'];
            return {
              attributes: { type: 'Contact', url: `${V}/sobjects/Contact/${id}` },
              Id: id,
              ...own,
              Account: account === undefined ? null : { attributes: { type: 'Account', url: `${V}/sobjects/Account/0015g00000AcA01AAF` }, Name: account },
            };
          }),
        }),
        JSON_HEADERS,
      );
    const api = apiWith();
    expect(await planner(h, installation, 'Contact').plan(api, { whereNotEnriched: true })).toMatchObject({ scanned: 3, withMatchKey: 2, toEnrich: 2 });
    sfc.done();
    expect(api.api.calls).toBe(4);
  });

  it('takes no field name into the SOQL that is not a Salesforce name (nothing is interpolated)', async () => {
    const { api, connector } = apiWith();
    const source = salesforceRecordSource({
      api,
      connector,
      object: 'Lead',
      whereNotEnriched: true,
      enrichedAtField: "WF_Enriched_At__c = null OR Name != ''",
    });
    // No interceptor: a request would fail with nock's NetConnectNotAllowedError instead.
    await expect(source(null)).rejects.toThrow(/not a Salesforce field name/);
    expect(api.calls).toBe(0);
  });
});

/** The input hash a record has in the org now (what a plan compares the saved state with). */
function inputHashOf(connector: SalesforceConnector, org: Org, id: string, environment: string): string {
  const fields = org.records.get(id) ?? {};
  const properties = Object.fromEntries(readFields(org.object).map((f) => [f, fields[f] ?? null]));
  return inputHashFor(connector.toRequest(org.object, { id, properties }), environment);
}

describe('record ids in a Salesforce backfill', () => {
  const lead = (n: number) => toSalesforceId18(`00Q5g00000Ld${String(n).padStart(3, '0')}`) ?? '';
  it.each([
    ["a Contact's", toSalesforceId18('0035g00000Ct001') ?? ''],
    ['a wrong checksum', `${lead(2).slice(0, 15)}999`],
  ])(
    'accepts only ids an outbound message would (checksum, key prefix): a Lead listed with %s id is refused by it before any is read, and nothing is queued',
    async (_what, bad) => {
      const h = await pipeline();
      const installation = await h.install();
      const sf = nock(INSTANCE, { reqheaders: OURS });
      expectCreate(sf, 'SELECT Id FROM Lead WHERE IsConverted = false');
      expectPolls(sf, ['JobComplete']);
      expectResults(sf, { locator: null, ids: [lead(1), bad, lead(3)], next: null }, 50_000);
      const { plan, progress } = planner(h, installation, 'Lead');

      const planned = plan(apiWith());

      await expect(planned).rejects.toBeInstanceOf(BackfillRecordIdError);
      await expect(planned).rejects.toThrow(`Salesforce listed a Lead under the id "${bad}", which is not a Salesforce Lead id (00Q…`);
      // No read of the page's records was asked for.
      sf.done();
      expect(await queued(h, installation)).toEqual([]);
      expect(await progress.cursor(installation.id, 'Lead')).toBeUndefined();
    },
  );
});

describe('--limit and resuming the same job', () => {
  it('--limit stops reading once it has enough, mid results page; the next run resumes that job at the saved position without creating another', async () => {
    const h = await pipeline();
    const installation = await h.install();
    const org = makeOrg('Lead', 450);
    const pages = bulkPages(org.ids, 300);
    const [firstPage, secondPage] = pages;
    if (firstPage === undefined || secondPage === undefined) throw new Error('two results pages expected');
    const sf = nock(INSTANCE, { reqheaders: OURS });
    expectCreate(sf, 'SELECT Id FROM Lead WHERE IsConverted = false');
    expectPolls(sf, ['JobComplete']);
    // Only the first results page and its first 300 records are asked for.
    expectResults(sf, firstPage, 300);
    expectLeadReads(sf, org, chunks(firstPage.ids, 200));
    const { plan, progress } = planner(h, installation, 'Lead');

    const limited = await plan(apiWith(), { bulkPageSize: 300, limit: 250 });
    sf.done();
    expect(limited).toMatchObject({ scanned: 250, toEnrich: 250 });
    // The page cut short resumes at its own start: record 201, in the job's first results page.
    const cut = { jobId: JOB, locator: null, offset: 200, whereNotEnriched: false, apiVersion: SALESFORCE_API_VERSION };
    expect(cursorOf(limited.pages.at(-1)?.resumeAt)).toEqual(cut);
    expect(await runBackfill(limited, { queue: h.opened.queue, progress })).toEqual({ enqueued: 250, duplicates: 0 });
    expect(cursorOf((await backfillRow(h, installation, 'Lead'))?.cursor)).toEqual(cut);

    // The next run: the job's state, its first page again (records 201 to 300 after skipping 200), then the next page.
    const again = nock(INSTANCE, { reqheaders: OURS });
    expectPolls(again, ['JobComplete']);
    expectResults(again, firstPage, 300);
    expectResults(again, secondPage, 300);
    expectLeadReads(again, org, [firstPage.ids.slice(200), secondPage.ids]);
    const resumed = await plan(apiWith(), { bulkPageSize: 300 });
    again.done();
    expect(cursorOf(resumed.startCursor)).toEqual(cut);
    expect(resumed).toMatchObject({ scanned: 250, toEnrich: 250 });
    // Records 201 to 250 were queued by the limited run: the queue keeps one job per record.
    expect(await runBackfill(resumed, { queue: h.opened.queue, progress })).toEqual({ enqueued: 200, duplicates: 50 });
    const jobs = await queued(h, installation);
    expect(jobs.map((j) => j.recordId).sort()).toEqual(org.ids);
    expect(jobs.every((j) => j.object === 'Lead' && j.trigger === 'backfill')).toBe(true);
    expect(await backfillRow(h, installation, 'Lead')).toMatchObject({ cursor: null, state: 'done' });
  });

  it('interrupted while enqueueing, a rerun continues the same job from the next locator, with no duplicate beyond the record in flight', async () => {
    const h = await pipeline();
    const installation = await h.install();
    const org = makeOrg('Lead', 500);
    // Results pages of 200: one read per results page, so the saved position after a page is the next locator.
    const pages = bulkPages(org.ids, 200);
    expect(pages.map((p) => p.ids.length)).toEqual([200, 200, 100]);
    const sf = nock(INSTANCE, { reqheaders: OURS });
    expectCreate(sf, 'SELECT Id FROM Lead WHERE IsConverted = false');
    expectPolls(sf, ['JobComplete']);
    for (const page of pages) expectResults(sf, page, 200);
    expectLeadReads(sf, org, readChunks(pages));
    const { plan, progress } = planner(h, installation, 'Lead');
    const first = await plan(apiWith(), { bulkPageSize: 200 });
    sf.done();
    expect(first.toEnrich).toBe(500);

    // Stopped (Ctrl-C, a crash) while enqueueing the second page's first record.
    const interrupted = await runBackfill(first, {
      queue: h.opened.queue,
      progress,
      onProgress: (done) => {
        if (done === 201) throw new Error('interrupted');
      },
    }).catch((e: unknown) => e);
    expect(interrupted).toEqual(new Error('interrupted'));
    const saved = { jobId: JOB, locator: locatorAt(200), offset: 0, whereNotEnriched: false, apiVersion: SALESFORCE_API_VERSION };
    expect(await backfillRow(h, installation, 'Lead')).toMatchObject({ state: 'running', enqueued: 200 });
    expect(cursorOf((await backfillRow(h, installation, 'Lead'))?.cursor)).toEqual(saved);
    expect(await queued(h, installation)).toHaveLength(201);

    // A new process: the same job (no POST), results from the saved locator on.
    const rest = pages.slice(1);
    const again = nock(INSTANCE, { reqheaders: OURS });
    expectPolls(again, ['JobComplete']);
    for (const page of rest) expectResults(again, page, 200);
    expectLeadReads(again, org, readChunks(rest));
    const resumed = await plan(apiWith(), { bulkPageSize: 200 });
    again.done();
    expect(cursorOf(resumed.startCursor)).toEqual(saved);
    expect(resumed).toMatchObject({ scanned: 300, toEnrich: 300 });
    expect(await runBackfill(resumed, { queue: h.opened.queue, progress })).toEqual({ enqueued: 299, duplicates: 1 });
    expect((await queued(h, installation)).map((j) => j.recordId).sort()).toEqual(org.ids);
    expect(await backfillRow(h, installation, 'Lead')).toMatchObject({ cursor: null, state: 'done' });
  });

  it('a saved job Salesforce no longer has (404) is queried anew from the first record, and so is one made with another API version', async () => {
    const h = await pipeline();
    const installation = await h.install();
    const org = makeOrg('Lead', 3);
    const { plan, progress, requeries } = planner(h, installation, 'Lead');
    const gone = encodeBackfillCursor({ jobId: JOB, locator: locatorAt(200), offset: 0, whereNotEnriched: false, apiVersion: SALESFORCE_API_VERSION });
    await progress.save(installation.id, 'Lead', gone, 200, false);

    const sf = nock(INSTANCE, { reqheaders: OURS });
    // Docs: https://developer.salesforce.com/docs/atlas.en-us.api_asynch.meta/api_asynch/query_get_one_job.htm (an unknown job)
    sf.get(`${V}/jobs/query/${JOB}`).reply(404, JSON.stringify([{ errorCode: 'NOT_FOUND', message: 'The requested resource does not exist' }]), JSON_HEADERS);
    expectCreate(sf, 'SELECT Id FROM Lead WHERE IsConverted = false', JOB2);
    expectPolls(sf, ['JobComplete'], JOB2);
    expectResults(sf, { locator: null, ids: org.ids, next: null }, 50_000, JOB2);
    expectLeadReads(sf, org, [org.ids]);
    const result = await plan(apiWith());
    sf.done();
    expect(requeries).toEqual([{ jobId: JOB, reason: 'gone' }]);
    expect(result).toMatchObject({ startCursor: gone, scanned: 3, toEnrich: 3 });

    // A position saved by a build speaking another API version: Salesforce would refuse its results (409).
    const older = encodeBackfillCursor({ jobId: JOB, locator: locatorAt(200), offset: 0, whereNotEnriched: false, apiVersion: '58.0' });
    await progress.save(installation.id, 'Lead', older, 200, false);
    const sf2 = nock(INSTANCE, { reqheaders: OURS });
    expectCreate(sf2, 'SELECT Id FROM Lead WHERE IsConverted = false', JOB2);
    expectPolls(sf2, ['JobComplete'], JOB2);
    expectResults(sf2, { locator: null, ids: org.ids, next: null }, 50_000, JOB2);
    expectLeadReads(sf2, org, [org.ids]);
    expect(await plan(apiWith())).toMatchObject({ scanned: 3, toEnrich: 3 });
    sf2.done();
    expect(requeries.at(-1)).toEqual({ jobId: JOB, reason: 'api_version' });
  });

  it('resuming with the other --where-not-enriched setting is refused with a way out; --restart queries anew; a position it cannot read says to restart', async () => {
    const h = await pipeline();
    const installation = await h.install();
    const { plan, progress } = planner(h, installation, 'Lead');
    await progress.save(
      installation.id,
      'Lead',
      encodeBackfillCursor({ jobId: JOB, locator: null, offset: 200, whereNotEnriched: false, apiVersion: SALESFORCE_API_VERSION }),
      200,
      false,
    );
    // No interceptor: a request would fail with nock's NetConnectNotAllowedError instead.
    const refused = plan(apiWith(), { whereNotEnriched: true });
    await expect(refused).rejects.toThrow(InstallationError);
    await expect(refused).rejects.toThrow(
      'the Lead backfill that stopped midway ran without --where-not-enriched: run it the same way to resume it, or pass --restart to start over',
    );

    const org = makeOrg('Lead', 2);
    const sf = nock(INSTANCE, { reqheaders: OURS });
    expectCreate(sf, 'SELECT Id FROM Lead WHERE WF_Enriched_At__c = null AND IsConverted = false');
    expectPolls(sf, ['JobComplete']);
    expectResults(sf, { locator: null, ids: org.ids, next: null }, 50_000);
    expectLeadReads(sf, org, [org.ids]);
    expect(await plan(apiWith(), { whereNotEnriched: true, restart: true })).toMatchObject({ startCursor: null, scanned: 2 });
    sf.done();

    await progress.save(installation.id, 'Lead', 'c-004', 3, false);
    await expect(plan(apiWith())).rejects.toThrow('the saved position of the last Lead backfill is not one this version reads: pass --restart to start over');
  });
});

describe('a bulk query job that does not complete', () => {
  it.each([
    [
      'Failed',
      ['Failed'],
      { errorMessage: "INVALID_FIELD: No such column 'WF_Enriched_At__c' on entity 'Lead'." },
      /job 750R0000000zlh9IAA Failed: INVALID_FIELD: No such column 'WF_Enriched_At__c'/,
    ],
    ['Aborted', ['InProgress', 'Aborted'], {}, /job 750R0000000zlh9IAA Aborted$/],
  ] as const)(
    '%s: the plan fails with the job, its state and Salesforce’s reason, and nothing is read, enqueued or saved',
    async (_state, states, extra, message) => {
      const h = await pipeline();
      const installation = await h.install();
      const sf = nock(INSTANCE, { reqheaders: OURS });
      expectCreate(sf, 'SELECT Id FROM Lead WHERE WF_Enriched_At__c = null AND IsConverted = false');
      expectPolls(sf, states, JOB, extra);
      const api = apiWith();

      const error = await planner(h, installation, 'Lead')
        .plan(api, { whereNotEnriched: true })
        .catch((e: unknown) => e);
      sf.done();

      expect(error).toBeInstanceOf(CrmError);
      expect(error).toMatchObject({ message: expect.stringMatching(message) });
      expect(error).toMatchObject({ message: expect.stringMatching(/^Salesforce bulk query Lead: /) });
      expect(api.api.calls).toBe(1 + states.length);
      expect(await queued(h, installation)).toEqual([]);
      expect(await backfillRow(h, installation, 'Lead')).toBeUndefined();
    },
  );
});

// ---------------------------------------------------------------------------------------------------
// `enrichbridge backfill salesforce`, run in-process on a data folder of its own (the Salesforce answers
// from nock need the same process); cross-process runs are in test/e2e/salesforce-backfill.e2e.test.ts.

interface Cli {
  run(args: readonly string[]): Promise<{ stdout: string; stderr: string; error: unknown }>;
  installation(environment: 'sandbox' | 'production'): Promise<string>;
  queued(): Promise<z.infer<typeof PayloadSchema>[]>;
  row(id: string): Promise<{ cursor: string | null; state: string } | undefined>;
}

async function cli(): Promise<Cli> {
  const dataDir = tempDir('enrichbridge-sf-backfill-');
  vi.stubEnv('DATA_DIR', dataDir);
  vi.stubEnv('ENRICHBRIDGE_SECRET_KEY', 'ab'.repeat(32));
  vi.stubEnv('SALESFORCE_ALLOW_ANY_HOST', undefined);
  cleanups.push(() => {
    vi.unstubAllEnvs();
  });
  await withRuntime(async (_bridge, { store }) => {
    await createAccount(store, 'owner', { careerIntelligence: true });
  });
  let orgNumber = 0;
  return {
    async run(args) {
      let stdout = '';
      let stderr = '';
      const log = vi.spyOn(console, 'log').mockImplementation((...parts: unknown[]) => {
        stdout += `${parts.map(String).join(' ')}\n`;
      });
      const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
        stderr += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
        return true;
      });
      let error: unknown = null;
      try {
        await backfillCommands().parseAsync([...args], { from: 'user' });
      } catch (e) {
        error = e;
      } finally {
        log.mockRestore();
        write.mockRestore();
      }
      return { stdout, stderr, error };
    },
    async installation(environment) {
      orgNumber += 1;
      const orgId = `${ORG.slice(0, 12)}${String(orgNumber).padStart(3, '0')}AAA`;
      const credentials: SalesforceCredentials = {
        kind: 'static',
        instanceUrl: INSTANCE,
        accessToken: 'tok-cli',
        refreshToken: null,
        issuedAt: null,
        expiresAt: null,
        clientId: null,
        clientSecret: null,
        loginUrl: 'https://login.salesforce.com',
        orgId,
        userId: null,
        jwt: null,
      };
      return withRuntime(async ({ installations }) => {
        const created = await installations.create({
          provider: SALESFORCE_PROVIDER,
          externalAccountId: orgId,
          environment,
          target: { kind: 'local', accountName: 'owner' },
          crmCredentials: credentials,
        });
        return created.id;
      });
    },
    queued: () => withRuntime(async (_bridge, { queue }) => (await queue.list({ state: 'queued' })).map((j) => PayloadSchema.parse(j.payload))),
    row: (id) =>
      withRuntime(async (_bridge, { db }) =>
        db.selectFrom('backfills').select(['cursor', 'state']).where('installation_id', '=', id).where('object', '=', 'Lead').executeTakeFirst(),
      ),
  };
}

/** One whole job over `org` answered once: create (with `soql`), one poll, its results in pages of 50,000, the reads. */
function expectWholeJob(org: Org, soql: string, jobId = JOB): nock.Scope {
  const sf = nock(INSTANCE, { reqheaders: { ...OURS, authorization: 'Bearer tok-cli' } });
  expectCreate(sf, soql, jobId);
  expectPolls(sf, ['JobComplete'], jobId);
  const pages = bulkPages(org.ids, 50_000);
  for (const page of pages) expectResults(sf, page, 50_000, jobId);
  expectLeadReads(sf, org, readChunks(pages));
  return sf;
}

function lines(text: string): string[] {
  return text.split('\n').filter((line) => line !== '');
}

/** A stream as a pipe (cron, CI) or a terminal, for one test. */
function setTTY(stream: NodeJS.ReadStream | NodeJS.WriteStream, value: boolean): void {
  const before = Object.getOwnPropertyDescriptor(stream, 'isTTY');
  Object.defineProperty(stream, 'isTTY', { value, configurable: true });
  cleanups.push(() => {
    if (before === undefined) Reflect.deleteProperty(stream, 'isTTY');
    else Object.defineProperty(stream, 'isTTY', before);
  });
}

describe('enrichbridge backfill salesforce (in-process)', () => {
  it('--dry-run prints the counts, the quota units and the API calls it took, and enqueues and saves nothing', async () => {
    const c = await cli();
    const production = await c.installation('production');
    const sandbox = await c.installation('sandbox');
    const org = makeOrg('Lead', 5, (i) => i === 3);

    let sf = expectWholeJob(org, 'SELECT Id FROM Lead WHERE IsConverted = false');
    const dry = await c.run(['salesforce', production, '--object', 'Lead', '--dry-run']);
    sf.done();
    expect(dry.error).toBeNull();
    expect(lines(dry.stdout)).toEqual([
      'scanned 5 leads',
      '  with a match key:       4',
      '  already up to date:     0',
      '  to enrich:              4',
      '  quota units at most:    4',
      // create, poll, one results page, one read
      '  Salesforce API calls:   4 (the org has used 26 of 15000 in 24 h)',
      'dry run: nothing enqueued',
    ]);

    sf = expectWholeJob(org, 'SELECT Id FROM Lead WHERE WF_Enriched_At__c = null AND IsConverted = false');
    const filtered = await c.run(['salesforce', sandbox, '--object', 'Lead', '--where-not-enriched', '--dry-run', '--limit', '2']);
    sf.done();
    expect(filtered.error).toBeNull();
    expect(lines(filtered.stdout).slice(0, 5)).toEqual([
      'scanned 2 leads with an empty WF_Enriched_At__c',
      '  with a match key:       2',
      '  already up to date:     0',
      '  to enrich:              2',
      '  quota units at most:    0 (sandbox: no quota is spent)',
    ]);

    expect(await c.queued()).toEqual([]);
    expect(await c.row(production)).toBeUndefined();
    expect(await c.row(sandbox)).toBeUndefined();
  });

  it('refuses to enqueue without --yes when stdin is not a terminal; --yes enqueues with progress; --limit then a rerun resumes the same job', async () => {
    const c = await cli();
    const id = await c.installation('sandbox');
    const org = makeOrg('Lead', 250, (i) => i === 3);
    setTTY(process.stdin, false);
    // The progress as lines, not a redrawn bar.
    setTTY(process.stderr, false);

    let sf = expectWholeJob(org, 'SELECT Id FROM Lead WHERE IsConverted = false');
    const refused = await c.run(['salesforce', id, '--object', 'Lead']);
    sf.done();
    expect(refused.error).toBeInstanceOf(InstallationError);
    expect(refused.error).toMatchObject({ message: 'not a terminal: pass --yes to enqueue without confirmation' });
    expect(refused.stdout).toContain('  to enrich:              249\n');
    expect(await c.queued()).toEqual([]);

    sf = expectWholeJob(org, 'SELECT Id FROM Lead WHERE IsConverted = false');
    const limited = await c.run(['salesforce', id, '--object', 'Lead', '--yes', '--limit', '210']);
    sf.done();
    expect(limited.error).toBeNull();
    expect(limited.stdout).toMatch(/^enqueued 210 leads; the workers enrich them at the token's rate$/m);
    expect(limited.stderr).toContain('enqueue: 100% (210 of 210)');
    const saved = await c.row(id);
    expect(saved).toMatchObject({ state: 'running' });
    expect(cursorOf(saved?.cursor)).toEqual({ jobId: JOB, locator: null, offset: 200, whereNotEnriched: false, apiVersion: SALESFORCE_API_VERSION });

    // 199 of the first 200 (Lead 3 has no match key) and 11 of the next read page were enqueued. The rerun: the
    // same job's first results page again, records 201 on, and no new job.
    const again = nock(INSTANCE, { reqheaders: OURS });
    expectPolls(again, ['JobComplete']);
    expectResults(again, { locator: null, ids: org.ids, next: null }, 50_000);
    expectLeadReads(again, org, [org.ids.slice(200)]);
    const resumed = await c.run(['salesforce', id, '--object', 'Lead', '--yes']);
    again.done();
    expect(resumed.error).toBeNull();
    expect(resumed.stdout).toMatch(/^scanned 50 leads \(resuming after the last backfill stopped\)$/m);
    expect(resumed.stdout).toMatch(/^enqueued 39 leads \(11 were already queued\); /m);
    const jobs = await c.queued();
    expect(jobs.map((j) => j.recordId).sort()).toEqual(org.ids.filter((_, index) => index !== 2));
    expect(jobs.every((j) => j.object === 'Lead' && j.trigger === 'backfill')).toBe(true);
    expect(await c.row(id)).toMatchObject({ cursor: null, state: 'done' });
  });

  it('says so when the last backfill’s job is gone and it reads from the first record again', async () => {
    const c = await cli();
    const id = await c.installation('sandbox');
    const cursor = encodeBackfillCursor({ jobId: JOB, locator: locatorAt(200), offset: 0, whereNotEnriched: false, apiVersion: SALESFORCE_API_VERSION });
    await withRuntime(async (_bridge, { db }) => new BackfillProgress(db).save(id, 'Lead', cursor, 200, false));
    const org = makeOrg('Lead', 3);
    const sf = expectWholeJob(org, 'SELECT Id FROM Lead WHERE IsConverted = false', JOB2);
    sf.get(`${V}/jobs/query/${JOB}`).reply(404, JSON.stringify([{ errorCode: 'NOT_FOUND', message: 'The requested resource does not exist' }]), JSON_HEADERS);

    const dry = await c.run(['salesforce', id, '--object', 'Lead', '--dry-run']);
    sf.done();
    expect(dry.error).toBeNull();
    expect(dry.stderr).toBe(`the bulk query job ${JOB} of the last backfill cannot be resumed (Salesforce no longer has it): querying again\n`);
    expect(lines(dry.stdout)[0]).toBe('scanned 3 leads (the last backfill stopped midway, but its query can no longer be read: from the first record again)');
    // A dry run saves nothing: the old position stays until a run enqueues.
    expect(await c.row(id)).toMatchObject({ cursor, state: 'running' });
  });

  it('a failed bulk job ends the command with its reason; the installation must be a Salesforce one', async () => {
    const c = await cli();
    const id = await c.installation('sandbox');
    const sf = nock(INSTANCE, { reqheaders: OURS });
    expectCreate(sf, 'SELECT Id FROM Lead WHERE WF_Enriched_At__c = null AND IsConverted = false');
    expectPolls(sf, ['Failed'], JOB, { errorMessage: "INVALID_FIELD: No such column 'WF_Enriched_At__c' on entity 'Lead'." });
    const failed = await c.run(['salesforce', id, '--object', 'Lead', '--where-not-enriched', '--yes']);
    sf.done();
    expect(failed.error).toBeInstanceOf(CrmError);
    expect(failed.error).toMatchObject({
      message: `Salesforce bulk query Lead: job ${JOB} Failed: INVALID_FIELD: No such column 'WF_Enriched_At__c' on entity 'Lead'.`,
    });
    expect(failed.stdout).toBe('');
    expect(await c.queued()).toEqual([]);

    const hubspot = await c.run(['hubspot', id, '--dry-run']);
    expect(hubspot.error).toMatchObject({ message: `${id} is not a HubSpot installation` });
    const unknown = await c.run(['salesforce', 'inst_missing', '--object', 'Lead', '--dry-run']);
    expect(unknown.error).toBeInstanceOf(InstallationError);
  });
});
