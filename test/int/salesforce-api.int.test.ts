// The Salesforce API client and token source against recorded-shape Salesforce answers (nock): exact request
// bodies and headers (API version in the path, Sforce-Call-Options), collections retrieve and update with
// per-record SaveResults, SOQL for parent fields, 401 → refresh → retry once, REQUEST_LIMIT_EXCEEDED, the
// Bulk API 2.0 id query, the instance-URL check, PKCE, the code exchange, JWT bearer and the token source.
import { createHash, createVerify, generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import nock from 'nock';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createAccount } from '../../core/accounts/admin.ts';
import { CrmError, type WriteResult } from '../../bridge/connector.ts';
import type { Installations } from '../../bridge/installations.ts';
import {
  CONCURRENT_LIMIT_WAIT_MS,
  REQUEST_LIMIT_PAUSE_MS,
  SALESFORCE_API_VERSION,
  SalesforceApi,
  type SalesforceApiOptions,
  parseLimitInfo,
  requestLimitKind,
} from '../../connectors/salesforce/api.ts';
import {
  JWT_BEARER_GRANT_TYPE,
  SalesforceAuthError,
  SalesforceCredentialsSchema,
  type SalesforceSession,
  SalesforceTokenSource,
  SalesforceUrlError,
  authorizationUrl,
  checkInstanceUrl,
  createPkceVerifier,
  credentialsFromGrant,
  exchangeCode,
  jwtAssertion,
  pkceChallenge,
} from '../../connectors/salesforce/auth.ts';
import { type PipelineHarness, startPipeline } from '../support/pipeline-harness.ts';
import { caught } from '../support/harness.ts';

const INSTANCE = 'https://enrichbridge-dev-ed.develop.my.salesforce.com';
const LOGIN = 'https://login.salesforce.com';
const V = `/services/data/v${SALESFORCE_API_VERSION}`;
const TOKEN = '/services/oauth2/token';
const ORG = '00D5g000004fAkEEAU';
const USER = '0055g00000AbCdEAAV';
const [L1, L2, L3] = ['00Q5g00000LdA01EAF', '00Q5g00000LdA02EAF', '00Q5g00000LdA03EAF'];
const [C1, C2, C3, C4] = ['0035g00000CtA01AAF', '0035g00000CtA02AAF', '0035g00000CtA03AAF', '0035g00000CtA04AAF'];
/** Every call we make carries this, so our own writes can be told apart. */
const OURS = { 'sforce-call-options': 'client=enrichbridge' };

const FixtureSchema = z.object({
  _source: z.string().min(1),
  status: z.number().int(),
  headers: z.record(z.string(), z.string()).default({}),
  body: z.unknown(),
});

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/salesforce/rest');
function fixture(name: string) {
  return FixtureSchema.parse(JSON.parse(readFileSync(path.join(FIXTURES, name), 'utf8')));
}
/** nock reply arguments for a fixture: status, body (a string body, like CSV, as it is), headers. */
function reply(name: string): [number, string, Record<string, string>] {
  const f = fixture(name);
  return [f.status, typeof f.body === 'string' ? f.body : JSON.stringify(f.body), f.headers];
}

/** The first record of the Lead retrieve fixture alone: the answer to a one-id retrieve. */
function oneLead(): [number, string, Record<string, string>] {
  const f = fixture('collections-retrieve-lead-200.json');
  return [200, JSON.stringify(Array.isArray(f.body) ? [f.body[0]] : []), f.headers];
}

const NOW = new Date('2026-05-04T14:10:00.000Z');

const LEAD_FIELDS = ['FirstName', 'LastName', 'Email', 'Phone', 'MobilePhone', 'Street', 'City', 'State', 'PostalCode', 'Company'];
const CONTACT_FIELDS = [
  'FirstName',
  'LastName',
  'Email',
  'Phone',
  'MobilePhone',
  'MailingStreet',
  'MailingCity',
  'MailingState',
  'MailingPostalCode',
  'Account.Name',
];

let orgs = 0;
function apiWith(options: Partial<SalesforceApiOptions> & { token?: string; refreshTo?: string | null } = {}) {
  const sleeps: number[] = [];
  const refusals: SalesforceSession[] = [];
  const { token = 'tok-1', refreshTo, ...rest } = options;
  orgs += 1;
  const api = new SalesforceApi({
    // A limiter of its own per test.
    orgId: `00D5g0000000${String(orgs).padStart(3, '0')}AAA`,
    session: () => Promise.resolve({ instanceUrl: INSTANCE, accessToken: token }),
    ...(refreshTo === undefined
      ? {}
      : {
          refreshSession: (refused: SalesforceSession) => {
            refusals.push(refused);
            return Promise.resolve(refreshTo === null ? null : { instanceUrl: INSTANCE, accessToken: refreshTo });
          },
        }),
    sleep: (ms) => {
      sleeps.push(ms);
      return Promise.resolve();
    },
    now: () => NOW,
    ...rest,
  });
  return { api, sleeps, refusals };
}

beforeAll(() => {
  nock.disableNetConnect();
});
afterEach(() => {
  nock.cleanAll();
});
afterAll(() => {
  nock.enableNetConnect();
});

describe('retrieve', () => {
  it('reads Lead fields with sObject Collections (POST, explicit version, our call options), adds IsConverted, and reports deleted and converted leads as null', async () => {
    const scope = nock(INSTANCE, { reqheaders: OURS })
      .matchHeader('authorization', 'Bearer tok-1')
      .matchHeader('content-type', 'application/json')
      .post(`${V}/composite/sobjects/Lead`, { ids: [L1, L2, L3], fields: [...LEAD_FIELDS, 'IsConverted'] })
      .reply(...reply('collections-retrieve-lead-200.json'));
    const { api } = apiWith();
    const found = await api.retrieve('Lead', [L1, L2, L3], LEAD_FIELDS);
    scope.done();
    expect([...found.keys()]).toEqual([L1, L2, L3]);
    // Exactly the fields asked for: IsConverted was read to decide, not passed on.
    expect(found.get(L1)).toEqual({
      FirstName: 'Amanda',
      LastName: 'Taylor',
      Email: 'amanda.taylor@sandbox.windfall.com',
      Phone: '(404) 555-0142',
      MobilePhone: null,
      Street: '1180 Peachtree St NE\nSuite 400',
      City: 'Atlanta',
      State: 'GA',
      PostalCode: '30309',
      Company: 'Taylor Family Office',
    });
    expect(found.get(L2)).toBeNull();
    expect(found.get(L3)).toBeNull();
    expect(api.apiUsage).toEqual({ used: 18, max: 15000 });
    expect(api.calls).toBe(1);
  });

  it('reads a Contact with Account.Name through one SOQL query built by the query builder, with no describe call', async () => {
    const soql =
      'SELECT Id, FirstName, LastName, Email, Phone, MobilePhone, MailingStreet, MailingCity, MailingState, MailingPostalCode, Account.Name ' +
      `FROM Contact WHERE Id IN ('${C1}', '${C2}', '${C3}')`;
    const scope = nock(INSTANCE, { reqheaders: OURS })
      .matchHeader('authorization', 'Bearer tok-1')
      .get(`${V}/query`)
      .query({ q: soql })
      .reply(...reply('query-contact-200.json'));
    const { api } = apiWith();
    const found = await api.retrieve('Contact', [C1, C2, C3], CONTACT_FIELDS);
    scope.done();
    expect(found.get(C1)).toMatchObject({ FirstName: 'Robin', MailingCity: 'New York', 'Account.Name': 'Avery Household Holdings' });
    expect(found.get(C2)).toMatchObject({ Email: null, 'Account.Name': null });
    // Absent from the answer: deleted (or not visible to us).
    expect(found.get(C3)).toBeNull();
    expect(api.apiUsage).toEqual({ used: 19, max: 15000 });
    expect(api.calls).toBe(1);
  });

  it('matches 15-character ids to the 18-character ids a query answers with', async () => {
    const short = C1.slice(0, 15);
    const scope = nock(INSTANCE)
      .get(`${V}/query`)
      .query({ q: `SELECT Id, Account.Name FROM Contact WHERE Id IN ('${short}')` })
      .reply(...reply('query-contact-200.json'));
    const found = await apiWith().api.retrieve('Contact', [short], ['Account.Name']);
    scope.done();
    expect(found.get(short)).toEqual({ 'Account.Name': 'Avery Household Holdings' });
  });

  it('refuses more than 200 ids, and ids or field names that are not Salesforce names, without calling Salesforce', async () => {
    const { api } = apiWith();
    const many = Array.from({ length: 201 }, (_, i) => `0035g00000Ct${String(i).padStart(3, '0')}AAF`);
    await expect(api.retrieve('Contact', many, ['Email'])).rejects.toThrow(/at most 200/);
    await expect(api.retrieve('Contact', ["0035g00000CtA01') OR Name != ('"], ['Email'])).rejects.toThrow(/not a Salesforce record id/);
    await expect(api.retrieve('Contact', [C1], ['Email FROM User --'])).rejects.toThrow(/not a Salesforce field name/);
    await expect(api.retrieve('Contact/../Lead', [C1], ['Email'])).rejects.toThrow(/not a Salesforce object name/);
    expect(api.calls).toBe(0);
  });
});

describe('update (PATCH /composite/sobjects)', () => {
  const updates = [
    { id: C1, properties: { WF_Enrichment_Status__c: 'enriched', WF_HH_Net_Worth__c: 2500000, WF_Household_Matched__c: true } },
    { id: C2, properties: { WF_Enrichment_Status__c: 'no_match', WF_HH_Net_Worth__c: null, WF_Household_Matched__c: false } },
  ];
  const sent = {
    allOrNone: false,
    records: [
      { id: C1, attributes: { type: 'Contact' }, WF_Enrichment_Status__c: 'enriched', WF_HH_Net_Worth__c: 2500000, WF_Household_Matched__c: true },
      { id: C2, attributes: { type: 'Contact' }, WF_Enrichment_Status__c: 'no_match', WF_HH_Net_Worth__c: null, WF_Household_Matched__c: false },
    ],
  };

  it('sends {allOrNone: false, records: [{id, attributes: {type}, …}]} with our call options and reports every record written', async () => {
    const scope = nock(INSTANCE, { reqheaders: OURS })
      .matchHeader('authorization', 'Bearer tok-1')
      .matchHeader('content-type', 'application/json')
      .patch(`${V}/composite/sobjects`, sent)
      .reply(...reply('collections-update-200.json'));
    const { api } = apiWith();
    const results = await api.update('Contact', updates);
    scope.done();
    expect(results).toEqual([
      { id: C1, ok: true },
      { id: C2, ok: true },
    ]);
    expect(api.apiUsage).toEqual({ used: 20, max: 15000 });
  });

  it('matches SaveResults to records by position and reads statusCode: ok, deleted → not_found, validation → rejected, row lock → transient', async () => {
    const four = [C1, C2, C3, C4].map((id) => ({ id, properties: { WF_HH_Net_Worth__c: -1 } }));
    const scope = nock(INSTANCE, { reqheaders: OURS })
      .patch(`${V}/composite/sobjects`, { allOrNone: false, records: four.map((u) => ({ id: u.id, attributes: { type: 'Contact' }, WF_HH_Net_Worth__c: -1 })) })
      .reply(...reply('collections-update-partial-200.json'));
    const results = await apiWith().api.update('Contact', four);
    scope.done();
    expect(results).toEqual<WriteResult[]>([
      { id: C1, ok: true },
      { id: C2, ok: false, reason: 'not_found', message: 'ENTITY_IS_DELETED' },
      { id: C3, ok: false, reason: 'rejected', message: 'FIELD_CUSTOM_VALIDATION_EXCEPTION: Household net worth cannot be negative. (WF_HH_Net_Worth__c)' },
      { id: C4, ok: false, reason: 'transient', message: 'UNABLE_TO_LOCK_ROW' },
    ]);
  });

  it("keeps a refused record's statusCode and fields, never Salesforce's message quoting the record's values", async () => {
    const one = [{ id: C1, properties: { WF_HH_Net_Worth__c: 5 } }];
    const said = 'Email: invalid email address: jane.marker@example.org';
    const scope = nock(INSTANCE)
      .patch(`${V}/composite/sobjects`, { allOrNone: false, records: [{ id: C1, attributes: { type: 'Contact' }, WF_HH_Net_Worth__c: 5 }] })
      .reply(200, [{ success: false, errors: [{ statusCode: 'INVALID_EMAIL_ADDRESS', message: said, fields: ['Email'] }] }]);
    const results = await apiWith().api.update('Contact', one);
    scope.done();
    expect(results).toEqual<WriteResult[]>([{ id: C1, ok: false, reason: 'rejected', message: 'INVALID_EMAIL_ADDRESS (Email)' }]);
  });

  it('reports a converted Lead (CANNOT_UPDATE_CONVERTED_LEAD) as not_found', async () => {
    const scope = nock(INSTANCE)
      .patch(`${V}/composite/sobjects`, { allOrNone: false, records: [{ id: L3, attributes: { type: 'Lead' }, WF_Enrichment_Status__c: 'enriched' }] })
      .reply(...reply('collections-update-lead-converted-200.json'));
    const results = await apiWith().api.update('Lead', [{ id: L3, properties: { WF_Enrichment_Status__c: 'enriched' } }]);
    scope.done();
    expect(results).toEqual([{ id: L3, ok: false, reason: 'not_found', message: 'CANNOT_UPDATE_CONVERTED_LEAD' }]);
  });

  it('rejects every record when Salesforce refuses the whole call (400 INVALID_FIELD: our fields not deployed)', async () => {
    const scope = nock(INSTANCE)
      .patch(`${V}/composite/sobjects`, sent)
      .reply(...reply('update-400-invalid-field.json'));
    const results = await apiWith().api.update('Contact', updates);
    scope.done();
    expect(results.map((r) => (r.ok ? 'ok' : r.reason))).toEqual(['rejected', 'rejected']);
    expect(results[0]).toMatchObject({ message: expect.stringContaining('INVALID_FIELD') });
  });

  it('throws CrmError transient for a 503 maintenance page, without jsforce retrying', async () => {
    const scope = nock(INSTANCE)
      .patch(`${V}/composite/sobjects`, sent)
      .reply(...reply('503-unavailable.json'));
    const { api } = apiWith();
    const error = await caught(api.update('Contact', updates));
    scope.done();
    expect(error).toBeInstanceOf(CrmError);
    expect(error).toMatchObject({ kind: 'transient', message: expect.stringContaining('503') });
    expect(api.calls).toBe(1);
  });

  it('throws CrmError transient when Salesforce cannot be reached', async () => {
    // No interceptor, net connect disabled: the request fails before any answer.
    const error = await caught(apiWith().api.update('Contact', updates));
    expect(error).toBeInstanceOf(CrmError);
    expect(error).toMatchObject({ kind: 'transient', message: expect.stringContaining('no answer') });
  });

  it('makes no call for no updates and refuses more than 200', async () => {
    const { api } = apiWith();
    expect(await api.update('Contact', [])).toEqual([]);
    const many = Array.from({ length: 201 }, (_, i) => ({
      id: `0035g00000Ct${String(i).padStart(3, '0')}AAF`,
      properties: { WF_Enrichment_Status__c: 'enriched' },
    }));
    await expect(api.update('Contact', many)).rejects.toThrow(/at most 200/);
    expect(api.calls).toBe(0);
  });
});

describe('limits', () => {
  const lead = { ids: [L1], fields: ['Email', 'IsConverted'] };

  it('turns REQUEST_LIMIT_EXCEEDED (the 24-hour allowance) into CrmError limit_exhausted an hour ahead, with the usage it reported', async () => {
    const scope = nock(INSTANCE)
      .post(`${V}/composite/sobjects/Lead`, lead)
      .reply(...reply('403-request-limit-exceeded.json'));
    const { api, sleeps } = apiWith();
    const error = await caught(api.retrieve('Lead', [L1], ['Email']));
    scope.done();
    expect(error).toBeInstanceOf(CrmError);
    expect(error).toMatchObject({ kind: 'limit_exhausted', retryAt: new Date(NOW.getTime() + REQUEST_LIMIT_PAUSE_MS) });
    expect(error).toMatchObject({ message: expect.stringContaining('15000/15000') });
    expect(api.apiUsage).toEqual({ used: 15000, max: 15000 });
    expect(sleeps).toEqual([]);
    expect(api.calls).toBe(1);
  });

  it('turns the concurrent long-running request limit into CrmError rate_limited, shortly ahead', async () => {
    const scope = nock(INSTANCE)
      .post(`${V}/composite/sobjects/Lead`, lead)
      .reply(...reply('403-concurrent-limit.json'));
    const error = await caught(apiWith().api.retrieve('Lead', [L1], ['Email']));
    scope.done();
    expect(error).toMatchObject({ kind: 'rate_limited', retryAt: new Date(NOW.getTime() + CONCURRENT_LIMIT_WAIT_MS) });
  });

  it('reads Sforce-Limit-Info and tells the two REQUEST_LIMIT_EXCEEDED limits apart', () => {
    expect(parseLimitInfo('api-usage=18/15000')).toEqual({ used: 18, max: 15000 });
    expect(parseLimitInfo('api-usage=25/5000, per-app-api-usage=17/250(appName=sample-app)')).toEqual({ used: 25, max: 5000 });
    expect(parseLimitInfo('per-app-api-usage=17/250(appName=sample-app)')).toBeNull();
    expect(parseLimitInfo(undefined)).toBeNull();
    expect(requestLimitKind('TotalRequests Limit exceeded.', null)).toBe('allowance');
    expect(requestLimitKind('ConcurrentPerOrgLongTxn Limit exceeded.', { used: 10, max: 15000 })).toBe('concurrency');
    // Usage at the allowance wins over the message; an unknown message is read as the allowance.
    expect(requestLimitKind('ConcurrentPerOrgLongTxn Limit exceeded.', { used: 15000, max: 15000 })).toBe('allowance');
    expect(requestLimitKind('Something else', null)).toBe('allowance');
  });
});

describe('401', () => {
  const lead = { ids: [L1], fields: ['Email', 'IsConverted'] };

  it('refreshes once after INVALID_SESSION_ID and retries once with the new bearer token', async () => {
    const scope = nock(INSTANCE, { reqheaders: OURS })
      .post(`${V}/composite/sobjects/Lead`, lead)
      .matchHeader('authorization', 'Bearer tok-old')
      .reply(...reply('401-invalid-session.json'))
      .post(`${V}/composite/sobjects/Lead`, lead)
      .matchHeader('authorization', 'Bearer tok-new')
      .reply(...oneLead());
    const { api, refusals } = apiWith({ token: 'tok-old', refreshTo: 'tok-new' });
    const found = await api.retrieve('Lead', [L1], ['Email']);
    scope.done();
    expect(refusals).toEqual([{ instanceUrl: INSTANCE, accessToken: 'tok-old' }]);
    expect(found.get(L1)).toEqual({ Email: 'amanda.taylor@sandbox.windfall.com' });
    expect(api.calls).toBe(2);
  });

  it('gives up with CrmError auth when the refreshed token is refused too (one refresh only)', async () => {
    const scope = nock(INSTANCE)
      .post(`${V}/composite/sobjects/Lead`, lead)
      .matchHeader('authorization', 'Bearer tok-old')
      .reply(...reply('401-invalid-session.json'))
      .post(`${V}/composite/sobjects/Lead`, lead)
      .matchHeader('authorization', 'Bearer tok-new')
      .reply(...reply('401-invalid-session.json'));
    const { api, refusals } = apiWith({ token: 'tok-old', refreshTo: 'tok-new' });
    const error = await caught(api.retrieve('Lead', [L1], ['Email']));
    scope.done();
    expect(error).toBeInstanceOf(CrmError);
    expect(error).toMatchObject({ kind: 'auth', message: expect.stringContaining('INVALID_SESSION_ID') });
    expect(refusals).toHaveLength(1);
  });

  it('answers CrmError auth at once when the session cannot be refreshed', async () => {
    const scope = nock(INSTANCE)
      .post(`${V}/composite/sobjects/Lead`, lead)
      .reply(...reply('401-invalid-session.json'));
    const { api, refusals } = apiWith({ refreshTo: null });
    expect(await caught(api.retrieve('Lead', [L1], ['Email']))).toMatchObject({ kind: 'auth' });
    scope.done();
    expect(refusals).toHaveLength(1);
    expect(api.calls).toBe(1);
  });
});

describe('instance URL check', () => {
  it('accepts Salesforce API hosts and answers their origin', () => {
    expect(checkInstanceUrl('https://acme.my.salesforce.com')).toBe('https://acme.my.salesforce.com');
    expect(checkInstanceUrl('https://acme--uat.sandbox.my.salesforce.com/')).toBe('https://acme--uat.sandbox.my.salesforce.com');
    expect(checkInstanceUrl('https://na139.salesforce.com')).toBe('https://na139.salesforce.com');
    expect(checkInstanceUrl('https://agency.my.salesforce.mil')).toBe('https://agency.my.salesforce.mil');
    expect(checkInstanceUrl('https://acme.my.sfcrmproducts.cn')).toBe('https://acme.my.sfcrmproducts.cn');
    expect(checkInstanceUrl(LOGIN)).toBe(LOGIN);
  });

  it.each([
    ['http://acme.my.salesforce.com', /https/],
    ['https://acme.my.salesforce.com.evil.example', /not a Salesforce host/],
    ['https://evilsalesforce.com', /not a Salesforce host/],
    ['https://salesforce.com', /not a Salesforce host/],
    ['https://acme.lightning.force.com', /UI or org content/],
    ['https://acme--c.visual.force.com', /UI or org content/],
    ['https://acme.my.salesforce.com/services/data', /origin only/],
    ['https://user:pw@acme.my.salesforce.com', /credentials/],
    ['https://acme.my.salesforce.com:8443', /port/],
    ['acme.my.salesforce.com', /absolute URL/],
  ])('refuses %s', (url, why) => {
    expect(() => checkInstanceUrl(url)).toThrow(why);
    expect(() => checkInstanceUrl(url)).toThrow(SalesforceUrlError);
  });

  it('accepts any http(s) host only when overridden (tests, a local fake)', () => {
    expect(() => checkInstanceUrl('http://127.0.0.1:8089')).toThrow(SalesforceUrlError);
    expect(checkInstanceUrl('http://127.0.0.1:8089', { allowAnyHost: true })).toBe('http://127.0.0.1:8089');
    expect(() => checkInstanceUrl('ftp://127.0.0.1', { allowAnyHost: true })).toThrow(/http or https/);
  });

  it('never sends a token to a non-Salesforce instance URL, unless overridden', async () => {
    const fake = 'http://salesforce-fake.test:8089';
    const { api } = apiWith({ session: () => Promise.resolve({ instanceUrl: fake, accessToken: 'tok-1' }) });
    // No interceptor: had a request been made, nock would refuse it with another error.
    const error = await caught(api.retrieve('Lead', [L1], ['Email']));
    expect(error).toBeInstanceOf(SalesforceUrlError);
    expect(error).toMatchObject({ kind: 'auth' });
    expect(api.calls).toBe(0);

    const scope = nock(fake, { reqheaders: OURS })
      .post(`${V}/composite/sobjects/Lead`, { ids: [L1], fields: ['Email', 'IsConverted'] })
      .reply(200, JSON.stringify([null]), { 'content-type': 'application/json;charset=UTF-8' });
    const allowed = apiWith({ session: () => Promise.resolve({ instanceUrl: fake, accessToken: 'tok-1' }), allowAnyHost: true }).api;
    expect((await allowed.retrieve('Lead', [L1], ['Email'])).get(L1)).toBeNull();
    scope.done();
  });
});

describe('bulkQueryIds (Bulk API 2.0 query)', () => {
  const JOB = '750R0000000zlh9IAA';

  it('creates a query job with builder SOQL, polls until JobComplete, and pages the CSV results by locator', async () => {
    const scope = nock(INSTANCE, { reqheaders: OURS })
      .post(`${V}/jobs/query`, { operation: 'query', query: 'SELECT Id FROM Contact WHERE WF_Enriched_At__c = null' })
      .reply(...reply('bulk-query-create-200.json'))
      .get(`${V}/jobs/query/${JOB}`)
      .reply(...reply('bulk-query-job-in-progress-200.json'))
      .get(`${V}/jobs/query/${JOB}`)
      .reply(...reply('bulk-query-job-complete-200.json'))
      .get(`${V}/jobs/query/${JOB}/results`)
      .query({ maxRecords: '2' })
      .reply(...reply('bulk-query-results-page-1.json'))
      .get(`${V}/jobs/query/${JOB}/results`)
      .query({ maxRecords: '2', locator: 'MjAwMDAw' })
      .reply(...reply('bulk-query-results-page-2.json'));
    const { api, sleeps } = apiWith();
    const pages = [];
    for await (const page of api.bulkQueryIds('Contact', true, { pageSize: 2 })) pages.push(page);
    scope.done();
    expect(pages).toEqual([
      { jobId: JOB, ids: [C1, C2], locator: 'MjAwMDAw' },
      { jobId: JOB, ids: [C3], locator: null },
    ]);
    expect(sleeps).toEqual([2_000]);
    expect(api.calls).toBe(5);
    expect(api.apiUsage).toEqual({ used: 26, max: 15000 });
  });

  it('leaves converted Leads out, and resumes a job from a locator without creating another', async () => {
    const created = nock(INSTANCE)
      .post(`${V}/jobs/query`, { operation: 'query', query: 'SELECT Id FROM Lead WHERE IsConverted = false' })
      .reply(...reply('bulk-query-create-200.json'))
      .get(`${V}/jobs/query/${JOB}`)
      .reply(...reply('bulk-query-job-complete-200.json'))
      .get(`${V}/jobs/query/${JOB}/results`)
      .query({ maxRecords: '50000' })
      .reply(...reply('bulk-query-results-page-2.json'));
    const { api } = apiWith();
    const first = await api.bulkQueryIds('Lead', false).next();
    created.done();
    expect(first.value).toEqual({ jobId: JOB, ids: [C3], locator: null });

    const resumed = nock(INSTANCE)
      .get(`${V}/jobs/query/${JOB}`)
      .reply(...reply('bulk-query-job-complete-200.json'))
      .get(`${V}/jobs/query/${JOB}/results`)
      .query({ maxRecords: '50000', locator: 'MjAwMDAw' })
      .reply(...reply('bulk-query-results-page-2.json'));
    const pages = [];
    for await (const page of api.bulkQueryIds('Lead', false, { resume: { jobId: JOB, locator: 'MjAwMDAw' } })) pages.push(page);
    resumed.done();
    expect(pages).toEqual([{ jobId: JOB, ids: [C3], locator: null }]);
    // A job id goes into a path: only a Salesforce id is resumed.
    await expect(api.bulkQueryIds('Lead', false, { resume: { jobId: '../../sobjects/User', locator: null } }).next()).rejects.toThrow(
      /not a Salesforce job id/,
    );
  });

  it('gives a GET answered 503 up at once as CrmError transient (jsforce retries GETs 5 times unless told not to)', async () => {
    const scope = nock(INSTANCE)
      .get(`${V}/jobs/query/${JOB}`)
      .reply(...reply('503-unavailable.json'))
      .get(`${V}/jobs/query/${JOB}/results`)
      .query({ maxRecords: '50000', locator: 'MjAwMDAw' })
      .reply(...reply('bulk-query-results-page-2.json'));
    const { api } = apiWith();
    const error = await caught(api.bulkQueryIds('Contact', true, { resume: { jobId: JOB, locator: 'MjAwMDAw' } }).next());
    expect(error).toMatchObject({ kind: 'transient', message: expect.stringContaining('503') });
    expect(api.calls).toBe(1);
    // The results were never asked for: the status poll was not retried, and its failure ended the query.
    expect(scope.isDone()).toBe(false);
    expect(scope.pendingMocks()).toEqual([`GET ${INSTANCE}:443${V}/jobs/query/${JOB}/results`]);
  });

  it('throws CrmError transient when the job fails', async () => {
    const failed = {
      ...z.record(z.string(), z.unknown()).parse(fixture('bulk-query-job-complete-200.json').body),
      state: 'Failed',
      errorMessage: 'INVALID_FIELD: No such column',
    };
    const scope = nock(INSTANCE)
      .post(`${V}/jobs/query`)
      .reply(...reply('bulk-query-create-200.json'))
      .get(`${V}/jobs/query/${JOB}`)
      .reply(200, JSON.stringify(failed), { 'content-type': 'application/json;charset=UTF-8' });
    const error = await caught(apiWith().api.bulkQueryIds('Contact', true).next());
    scope.done();
    expect(error).toMatchObject({ kind: 'transient', message: expect.stringContaining('Failed: INVALID_FIELD') });
  });
});

describe('OAuth web-server flow with PKCE', () => {
  const APP = { clientId: '3MVG9consumer.key.0001', clientSecret: 'consumer-secret-0001', redirectUri: 'https://bridge.example.com/oauth/salesforce/callback' };

  it('builds the authorization URL with state and the S256 code_challenge of the verifier (never the verifier)', () => {
    const verifier = createPkceVerifier();
    expect(verifier).toMatch(/^[A-Za-z0-9_-]{171}$/);
    const url = new URL(
      authorizationUrl({
        loginUrl: 'https://test.salesforce.com',
        clientId: APP.clientId,
        redirectUri: APP.redirectUri,
        state: 'signed.state.0001',
        codeVerifier: verifier,
      }),
    );
    expect(`${url.origin}${url.pathname}`).toBe('https://test.salesforce.com/services/oauth2/authorize');
    const expected = createHash('sha256').update(verifier).digest('base64').replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '');
    expect(pkceChallenge(verifier)).toBe(expected);
    expect(Object.fromEntries(url.searchParams)).toEqual({
      response_type: 'code',
      client_id: APP.clientId,
      redirect_uri: APP.redirectUri,
      state: 'signed.state.0001',
      scope: 'api refresh_token',
      code_challenge: expected,
    });
    expect(url.search).not.toContain(verifier);
  });

  it('refuses to build an authorization URL on a non-Salesforce login host', () => {
    expect(() =>
      authorizationUrl({ loginUrl: 'https://login.example.com', clientId: APP.clientId, redirectUri: APP.redirectUri, state: 's', codeVerifier: 'v' }),
    ).toThrow(SalesforceUrlError);
  });

  it('exchanges the code with the code_verifier and reads the org and user from the identity URL', async () => {
    const verifier = createPkceVerifier();
    const scope = nock(LOGIN)
      .matchHeader('content-type', 'application/x-www-form-urlencoded')
      .post(TOKEN, {
        grant_type: 'authorization_code',
        code: 'aPrxcode0001',
        client_id: APP.clientId,
        client_secret: APP.clientSecret,
        redirect_uri: APP.redirectUri,
        code_verifier: verifier,
      })
      .reply(...reply('token-authorization-code-200.json'));
    const grant = await exchangeCode({ loginUrl: LOGIN, ...APP, code: 'aPrxcode0001', codeVerifier: verifier });
    scope.done();
    expect(grant).toEqual({
      instanceUrl: INSTANCE,
      accessToken: '00D5g000004fAkE!AQ0AQHvGYlvw.code-access-token-0001',
      refreshToken: '5Aep861code.refresh-token-0001',
      orgId: ORG,
      userId: USER,
      issuedAt: new Date(1777903800000).toISOString(),
      scope: 'refresh_token api',
    });
    // What the callback stores for the installation.
    expect(credentialsFromGrant(grant, { kind: 'oauth', loginUrl: LOGIN, clientId: APP.clientId, clientSecret: APP.clientSecret })).toEqual({
      kind: 'oauth',
      instanceUrl: INSTANCE,
      accessToken: grant.accessToken,
      refreshToken: '5Aep861code.refresh-token-0001',
      issuedAt: grant.issuedAt,
      expiresAt: null,
      clientId: APP.clientId,
      clientSecret: APP.clientSecret,
      loginUrl: LOGIN,
      orgId: ORG,
      userId: USER,
      jwt: null,
    });
  });

  it('refuses a token answer whose instance URL is not a Salesforce host', async () => {
    const answer = {
      ...z.record(z.string(), z.unknown()).parse(fixture('token-authorization-code-200.json').body),
      instance_url: 'https://collector.example.net',
    };
    const scope = nock(LOGIN).post(TOKEN).reply(200, JSON.stringify(answer), { 'content-type': 'application/json;charset=UTF-8' });
    const error = await caught(exchangeCode({ loginUrl: LOGIN, ...APP, code: 'aPrxcode0001', codeVerifier: createPkceVerifier() }));
    scope.done();
    expect(error).toBeInstanceOf(SalesforceUrlError);
  });

  it('answers invalid_grant with a SalesforceAuthError (auth) carrying the OAuth error and the status', async () => {
    const scope = nock(LOGIN)
      .post(TOKEN)
      .reply(...reply('token-400-invalid-grant.json'));
    const error = await caught(exchangeCode({ loginUrl: LOGIN, ...APP, code: 'used-code', codeVerifier: createPkceVerifier() }));
    scope.done();
    expect(error).toBeInstanceOf(SalesforceAuthError);
    expect(error).toMatchObject({ kind: 'auth', status: 400, oauthError: 'invalid_grant', message: expect.stringContaining('expired access/refresh token') });
  });
});

describe('JWT bearer assertion', () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const privateKeyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

  function decode(part: string | undefined): unknown {
    return JSON.parse(Buffer.from(part ?? '', 'base64url').toString('utf8'));
  }

  it('is RS256-signed by the key, with iss = consumer key, sub = username, aud = login URL and exp 3 minutes ahead', () => {
    const assertion = jwtAssertion({ consumerKey: '3MVG9jwt.key', username: 'integration@acme.example', audience: LOGIN, privateKeyPem, now: NOW });
    const [header, claims, signature] = assertion.split('.');
    expect(decode(header)).toEqual({ alg: 'RS256' });
    expect(decode(claims)).toEqual({ iss: '3MVG9jwt.key', sub: 'integration@acme.example', aud: LOGIN, exp: NOW.getTime() / 1000 + 180 });
    const verified = createVerify('RSA-SHA256')
      .update(`${header}.${claims}`)
      .verify(publicKey, Buffer.from(signature ?? '', 'base64url'));
    expect(verified).toBe(true);
    // A tampered claim does not verify.
    const forged = Buffer.from(JSON.stringify({ iss: '3MVG9jwt.key', sub: 'admin@acme.example', aud: LOGIN, exp: NOW.getTime() / 1000 + 180 })).toString(
      'base64url',
    );
    expect(
      createVerify('RSA-SHA256')
        .update(`${header}.${forged}`)
        .verify(publicKey, Buffer.from(signature ?? '', 'base64url')),
    ).toBe(false);
  });

  it('never lives longer than 3 minutes', () => {
    const assertion = jwtAssertion({ consumerKey: 'k', username: 'u', audience: LOGIN, privateKeyPem, now: NOW, lifetimeSeconds: 3600 });
    expect(decode(assertion.split('.')[1])).toMatchObject({ exp: NOW.getTime() / 1000 + 180 });
  });
});

describe('SalesforceTokenSource', () => {
  let pipeline: PipelineHarness;
  let installations: Installations;
  let accounts = 0;
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const privateKeyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

  beforeAll(async () => {
    pipeline = await startPipeline();
    installations = pipeline.bridge.installations;
  });
  afterAll(async () => {
    await pipeline.close();
  });

  const APP = { clientId: '3MVG9consumer.key.0001', clientSecret: 'consumer-secret-0001' };
  const OLD = '00D5g000004fAkE!AQ0AQHold-access-token-0001';
  const NEW = '00D5g000004fAkE!AQ0AQHfresh-access-token-0002';
  const refreshForm = {
    grant_type: 'refresh_token',
    refresh_token: '5Aep861original.refresh-token-0001',
    client_id: APP.clientId,
    client_secret: APP.clientSecret,
  };
  const lead = { ids: [L1], fields: ['Email', 'IsConverted'] };

  async function install(crm: Record<string, unknown>): Promise<string> {
    accounts += 1;
    const name = `salesforce-${accounts}`;
    await createAccount(pipeline.opened.store, name, { careerIntelligence: true });
    // The org id is the credentials'; the installation key only has to be unique in this database.
    const installation = await installations.create({
      provider: 'salesforce',
      externalAccountId: `test-org-${accounts}`,
      environment: 'sandbox',
      target: { kind: 'local', accountName: name },
      crmCredentials: crm,
    });
    return installation.id;
  }

  function oauth(): Record<string, unknown> {
    return {
      kind: 'oauth',
      instanceUrl: INSTANCE,
      accessToken: OLD,
      refreshToken: '5Aep861original.refresh-token-0001',
      ...APP,
      loginUrl: LOGIN,
      orgId: ORG,
      userId: USER,
    };
  }

  async function stored(id: string) {
    return SalesforceCredentialsSchema.parse((await installations.secrets(id)).crm);
  }

  function apiFor(tokens: SalesforceTokenSource): SalesforceApi {
    return new SalesforceApi({ orgId: ORG, session: () => tokens.session(), refreshSession: (refused) => tokens.refreshAfterRefusal(refused), now: () => NOW });
  }

  it('on a 401, refreshes with the refresh token, persists the rotated refresh token before the new access token is used, and retries once', async () => {
    const id = await install(oauth());
    const order: string[] = [];
    const persist = installations.updateCrmCredentials.bind(installations);
    // A slow store: a token used before its write finished would show up as 'used' before 'persisted'.
    const spy = vi.spyOn(installations, 'updateCrmCredentials').mockImplementation(async (installationId, crm) => {
      await new Promise((resolve) => setTimeout(resolve, 150));
      await persist(installationId, crm);
      order.push('persisted');
    });
    try {
      const api = nock(INSTANCE, { reqheaders: OURS })
        .post(`${V}/composite/sobjects/Lead`, lead)
        .matchHeader('authorization', `Bearer ${OLD}`)
        .reply(() => {
          order.push('refused');
          return reply('401-invalid-session.json');
        })
        .post(`${V}/composite/sobjects/Lead`, lead)
        .matchHeader('authorization', `Bearer ${NEW}`)
        .reply(() => {
          order.push('used');
          return oneLead();
        });
      const token = nock(LOGIN)
        .matchHeader('content-type', 'application/x-www-form-urlencoded')
        .post(TOKEN, refreshForm)
        .reply(() => {
          order.push('refreshed');
          return reply('token-refresh-200.json');
        });
      const found = await apiFor(new SalesforceTokenSource(id, installations, { now: () => NOW })).retrieve('Lead', [L1], ['Email']);
      api.done();
      token.done();
      expect(found.get(L1)).toEqual({ Email: 'amanda.taylor@sandbox.windfall.com' });
    } finally {
      spy.mockRestore();
    }
    expect(order).toEqual(['refused', 'refreshed', 'persisted', 'used']);
    const credentials = await stored(id);
    expect(credentials).toMatchObject({
      accessToken: NEW,
      refreshToken: '5Aep861rotated.refresh-token-0002',
      issuedAt: new Date(1777903860000).toISOString(),
      instanceUrl: INSTANCE,
      kind: 'oauth',
      orgId: ORG,
      ...APP,
    });
  });

  it('sends one token request for two concurrent callers of one org, and both retry with the new token', async () => {
    const id = await install(oauth());
    const persisted = vi.spyOn(installations, 'updateCrmCredentials');
    // The token endpoint answers only once both callers have been refused with the old token, so both really
    // are refused before any new token exists (the single flight itself is the next test's).
    let refusedCount = 0;
    let bothRefused: () => void = () => undefined;
    const secondRefusal = new Promise<void>((resolve) => {
      bothRefused = resolve;
    });
    try {
      const api = nock(INSTANCE)
        .post(`${V}/composite/sobjects/Lead`, lead)
        .matchHeader('authorization', `Bearer ${OLD}`)
        .times(2)
        .reply(() => {
          refusedCount += 1;
          if (refusedCount === 2) bothRefused();
          return reply('401-invalid-session.json');
        })
        .post(`${V}/composite/sobjects/Lead`, lead)
        .matchHeader('authorization', `Bearer ${NEW}`)
        .times(2)
        .reply(...oneLead());
      const token = nock(LOGIN)
        .post(TOKEN, refreshForm)
        .once()
        .reply((_uri, _body, callback) => {
          void secondRefusal.then(() => callback(null, reply('token-refresh-200.json')));
        });
      // Separate token sources and clients, as two workers' connectors of one installation would have.
      const results = await Promise.all(
        [1, 2].map(() => apiFor(new SalesforceTokenSource(id, installations, { now: () => NOW })).retrieve('Lead', [L1], ['Email'])),
      );
      api.done();
      token.done();
      expect(results.map((r) => r.get(L1))).toEqual([{ Email: 'amanda.taylor@sandbox.windfall.com' }, { Email: 'amanda.taylor@sandbox.windfall.com' }]);
      expect(persisted).toHaveBeenCalledTimes(1);
    } finally {
      persisted.mockRestore();
    }
  });

  it('refreshes once for 10 concurrent refusals of one installation (single flight), and all get the new session', async () => {
    const id = await install(oauth());
    const persisted = vi.spyOn(installations, 'updateCrmCredentials');
    try {
      const token = nock(LOGIN)
        .post(TOKEN, refreshForm)
        .once()
        .reply(...reply('token-refresh-200.json'));
      const sessions = await Promise.all(
        Array.from({ length: 10 }, () => new SalesforceTokenSource(id, installations).refreshAfterRefusal({ instanceUrl: INSTANCE, accessToken: OLD })),
      );
      token.done();
      expect(new Set(sessions.map((s) => s?.accessToken))).toEqual(new Set([NEW]));
      expect(persisted).toHaveBeenCalledTimes(1);
    } finally {
      persisted.mockRestore();
    }
  });

  it('uses the token another refresher already stored instead of refreshing again', async () => {
    const id = await install(oauth());
    await installations.updateCrmCredentials(id, { ...oauth(), accessToken: NEW, refreshToken: '5Aep861rotated.refresh-token-0002' });
    // No interceptor: a token request would fail.
    const next = await new SalesforceTokenSource(id, installations).refreshAfterRefusal({ instanceUrl: INSTANCE, accessToken: OLD });
    expect(next).toEqual({ instanceUrl: INSTANCE, accessToken: NEW });
  });

  it('re-issues a JWT bearer assertion for a jwt installation (no refresh token involved) and persists the new token', async () => {
    const jwt = { consumerKey: '3MVG9jwt.key.0002', username: 'integration@acme.example', privateKeyPem };
    const id = await install({ kind: 'jwt', instanceUrl: INSTANCE, accessToken: OLD, loginUrl: LOGIN, orgId: ORG, jwt });
    const assertion = jwtAssertion({ ...jwt, audience: LOGIN, now: NOW });
    const token = nock(LOGIN)
      .post(TOKEN, { grant_type: JWT_BEARER_GRANT_TYPE, assertion })
      .reply(...reply('token-jwt-200.json'));
    const next = await new SalesforceTokenSource(id, installations, { now: () => NOW }).refreshAfterRefusal({ instanceUrl: INSTANCE, accessToken: OLD });
    token.done();
    expect(next).toEqual({ instanceUrl: INSTANCE, accessToken: '00D5g000004fAkE!AQ0AQHjwt-access-token-0003' });
    expect(await stored(id)).toMatchObject({ kind: 'jwt', accessToken: '00D5g000004fAkE!AQ0AQHjwt-access-token-0003', refreshToken: null, jwt });
  });

  it('answers invalid_grant during a refresh with CrmError auth through the API call, and leaves the credentials alone', async () => {
    const id = await install(oauth());
    const api = nock(INSTANCE)
      .post(`${V}/composite/sobjects/Lead`, lead)
      .reply(...reply('401-invalid-session.json'));
    const token = nock(LOGIN)
      .post(TOKEN, refreshForm)
      .reply(...reply('token-400-invalid-grant.json'));
    const error = await caught(apiFor(new SalesforceTokenSource(id, installations, { now: () => NOW })).retrieve('Lead', [L1], ['Email']));
    api.done();
    token.done();
    expect(error).toBeInstanceOf(SalesforceAuthError);
    expect(error).toMatchObject({ kind: 'auth', oauthError: 'invalid_grant' });
    expect(await stored(id)).toMatchObject({ accessToken: OLD, refreshToken: '5Aep861original.refresh-token-0001' });
  });

  it('refuses a refreshed token for another org and stores nothing', async () => {
    const other = { ...oauth(), orgId: '00D5g000009ZzZzEAK' };
    const id = await install(other);
    const token = nock(LOGIN)
      .post(TOKEN, refreshForm)
      .reply(...reply('token-refresh-200.json'));
    const error = await caught(new SalesforceTokenSource(id, installations).refreshAfterRefusal({ instanceUrl: INSTANCE, accessToken: OLD }));
    token.done();
    expect(error).toMatchObject({ kind: 'auth', message: expect.stringContaining('not for this installation') });
    expect((await stored(id)).accessToken).toBe(OLD);
  });

  it('never refreshes a static token: refreshAfterRefusal is null, and a 401 is CrmError auth', async () => {
    const id = await install({ kind: 'static', instanceUrl: INSTANCE, accessToken: OLD, orgId: ORG });
    const tokens = new SalesforceTokenSource(id, installations);
    expect(await tokens.session()).toEqual({ instanceUrl: INSTANCE, accessToken: OLD });
    expect(await tokens.refreshAfterRefusal({ instanceUrl: INSTANCE, accessToken: OLD })).toBeNull();
    const api = nock(INSTANCE)
      .post(`${V}/composite/sobjects/Lead`, lead)
      .reply(...reply('401-invalid-session.json'));
    expect(await caught(apiFor(tokens).retrieve('Lead', [L1], ['Email']))).toMatchObject({ kind: 'auth' });
    api.done();
  });

  it('parses credentials: a jwt installation needs its key, an org id is 00D…', () => {
    expect(SalesforceCredentialsSchema.safeParse({ kind: 'jwt', instanceUrl: INSTANCE, accessToken: OLD, orgId: ORG }).success).toBe(false);
    expect(SalesforceCredentialsSchema.safeParse({ ...oauth(), orgId: '001000000000001' }).success).toBe(false);
    expect(SalesforceCredentialsSchema.parse(oauth())).toMatchObject({ issuedAt: null, expiresAt: null, jwt: null, loginUrl: LOGIN });
  });
});
