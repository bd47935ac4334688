// The HubSpot API client and token source against recorded-shape HubSpot answers (nock): exact request
// bodies as the SDK sends them, 200/207/400 per record, both kinds of 429, 401 → refresh → retry, paging,
// and the OAuth token refresh (ahead of expiry, single flight, rotated token persisted, v1 fallback).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import nock from 'nock';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createAccount } from '../../core/accounts/admin.ts';
import { HubSpotApi, type HubSpotApiOptions, HubSpotApiError } from '../../connectors/hubspot/api.ts';
import { HubSpotAuthError, HubSpotCredentialsSchema, HubSpotTokenSource, REFRESH_AHEAD_MS, requestToken } from '../../connectors/hubspot/auth.ts';
import { CrmError, type WriteResult } from '../../bridge/connector.ts';
import type { Installations } from '../../bridge/installations.ts';
import { type PipelineHarness, startPipeline } from '../support/pipeline-harness.ts';
import { caught } from '../support/harness.ts';
import { HUBSPOT_PATHS } from '../../connectors/hubspot/version.ts';

const BASE = 'https://api.hubapi.com';
const READ = HUBSPOT_PATHS.contactsBatchRead;
const UPDATE = HUBSPOT_PATHS.contactsBatchUpdate;
const LIST = HUBSPOT_PATHS.contacts;
const TOKEN = HUBSPOT_PATHS.token;

const FixtureSchema = z.object({
  status: z.number().int(),
  headers: z.record(z.string(), z.string()).default({}),
  body: z.unknown(),
});
type Fixture = z.infer<typeof FixtureSchema>;

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/hubspot');
function fixture(name: string): Fixture {
  return FixtureSchema.parse(JSON.parse(readFileSync(path.join(FIXTURES, name), 'utf8')));
}
/** nock reply arguments for a fixture: status, body, headers. */
function reply(name: string, extraHeaders: Record<string, string> = {}): [number, string, Record<string, string>] {
  const f = fixture(name);
  return [f.status, JSON.stringify(f.body), { ...f.headers, ...extraHeaders }];
}

const NOW = new Date('2026-05-04T14:10:00.000Z');
const IDENTITY = ['email', 'firstname', 'lastname', 'phone'];

interface Harness {
  api: HubSpotApi;
  sleeps: number[];
  refreshes: () => number;
}

let portal = 0;
function apiWith(options: Partial<HubSpotApiOptions> & { token?: string; refreshTo?: string | null } = {}): Harness {
  const sleeps: number[] = [];
  let refreshes = 0;
  const { token = 'tok-1', refreshTo, ...rest } = options;
  portal += 1;
  const api = new HubSpotApi({
    portalId: `nock-${portal}`,
    accessToken: () => Promise.resolve(token),
    ...(refreshTo === undefined
      ? {}
      : {
          refreshAccessToken: () => {
            refreshes += 1;
            return Promise.resolve(refreshTo);
          },
        }),
    sleep: (ms) => {
      sleeps.push(ms);
      return Promise.resolve();
    },
    now: () => NOW,
    ...rest,
  });
  return { api, sleeps, refreshes: () => refreshes };
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

describe('readContacts (POST /crm/objects/{version}/contacts/batch/read)', () => {
  it('sends {inputs:[{id}], properties, propertiesWithHistory: []} with archived=false and the bearer token, and keeps exactly the properties asked for', async () => {
    const scope = nock(BASE)
      .matchHeader('authorization', 'Bearer tok-1')
      .post(READ, { inputs: [{ id: '75310501' }, { id: '75310502' }], properties: IDENTITY, propertiesWithHistory: [] })
      .query({ archived: 'false' })
      .reply(...reply('batch-read-200.json'));
    const { api } = apiWith();
    const found = await api.readContacts(['75310501', '75310502'], IDENTITY);
    scope.done();
    expect([...found.keys()]).toEqual(['75310501', '75310502']);
    expect(found.get('75310501')).toEqual({
      email: 'amanda.taylor@sandbox.windfall.com',
      firstname: 'Amanda',
      lastname: 'Taylor',
      phone: '(404) 555-0142',
    });
    // HubSpot's null for an empty property stays null; HubSpot's extra properties are not passed on.
    expect(found.get('75310502')).toEqual({ email: 'j.doe@example.org', firstname: 'Jordan', lastname: 'Doe', phone: null });
    expect(api.calls).toBe(1);
  });

  it('leaves a contact HubSpot reports OBJECT_NOT_FOUND (207) out of the map, and fills properties HubSpot did not return with null', async () => {
    const scope = nock(BASE)
      .post(READ, { inputs: [{ id: '75310501' }, { id: '75310599' }], properties: IDENTITY, propertiesWithHistory: [] })
      .query({ archived: 'false' })
      .reply(...reply('batch-read-207-not-found.json'));
    const found = await apiWith().api.readContacts(['75310501', '75310599'], IDENTITY);
    scope.done();
    expect([...found.keys()]).toEqual(['75310501']);
    expect(found.get('75310501')).toEqual({ email: 'amanda.taylor@sandbox.windfall.com', firstname: 'Amanda', lastname: 'Taylor', phone: null });
  });

  it('treats a merged-away id as absent even though HubSpot answers its survivor', async () => {
    const scope = nock(BASE)
      .post(READ, { inputs: [{ id: '75310503' }, { id: '75310502' }], properties: ['email'], propertiesWithHistory: [] })
      .query({ archived: 'false' })
      .reply(...reply('batch-read-200-merged.json'));
    const found = await apiWith().api.readContacts(['75310503', '75310502'], ['email']);
    scope.done();
    expect([...found.keys()]).toEqual(['75310502']);
    expect(found.has('75310777')).toBe(false);
  });

  it('refuses more than 100 ids without calling HubSpot', async () => {
    const ids = Array.from({ length: 101 }, (_, i) => String(75310000 + i));
    const { api } = apiWith();
    await expect(api.readContacts(ids, IDENTITY)).rejects.toThrow(/at most 100/);
    expect(api.calls).toBe(0);
  });
});

describe('updateContacts (POST /crm/objects/{version}/contacts/batch/update)', () => {
  const updates = [
    { id: '75310501', properties: { wf_enrichment_status: 'enriched', wf_hh_net_worth: 2500000, wf_household_matched: 'true' } },
    { id: '75310502', properties: { wf_enrichment_status: 'no_match', wf_hh_net_worth: null, wf_household_matched: 'false' } },
  ];
  // What HubSpot receives: every value a string, null cleared with "".
  const sent = [
    { id: '75310501', properties: { wf_enrichment_status: 'enriched', wf_hh_net_worth: '2500000', wf_household_matched: 'true' } },
    { id: '75310502', properties: { wf_enrichment_status: 'no_match', wf_hh_net_worth: '', wf_household_matched: 'false' } },
  ];

  it('sends {inputs:[{id, properties}]} with string values and reports every record written on a 200', async () => {
    const scope = nock(BASE)
      .matchHeader('authorization', 'Bearer tok-1')
      .post(UPDATE, { inputs: sent })
      .reply(...reply('batch-update-200.json'));
    const results = await apiWith().api.updateContacts(updates);
    scope.done();
    expect(results).toEqual([
      { id: '75310501', ok: true },
      { id: '75310502', ok: true },
    ]);
  });

  it('matches a 207 to its records: the written one ok, the OBJECT_NOT_FOUND one not_found, one with neither transient', async () => {
    const three = [...updates, { id: '75310599', properties: { wf_enrichment_status: 'enriched' } }];
    const scope = nock(BASE)
      .post(UPDATE, { inputs: [...sent, { id: '75310599', properties: { wf_enrichment_status: 'enriched' } }] })
      .reply(...reply('batch-update-207.json'));
    const results = await apiWith().api.updateContacts(three);
    scope.done();
    expect(results).toEqual<WriteResult[]>([
      { id: '75310501', ok: true },
      { id: '75310502', ok: false, reason: 'transient', message: expect.any(String) },
      {
        id: '75310599',
        ok: false,
        reason: 'not_found',
        message: 'OBJECT_NOT_FOUND',
      },
    ]);
  });

  it('on a whole-batch 400 naming ids, reports those not_found and sends the rest again', async () => {
    const gone = { id: '75310599', properties: { wf_enrichment_status: 'enriched' } };
    const scope = nock(BASE)
      .post(UPDATE, { inputs: [sent[0], gone] })
      .reply(...reply('batch-update-400-not-found.json'))
      .post(UPDATE, { inputs: [sent[0]] })
      .reply(200, {
        status: 'COMPLETE',
        results: [{ id: '75310501', properties: {}, createdAt: '2026-05-04T14:02:11.480Z', updatedAt: '2026-05-04T14:10:30.000Z', archived: false }],
        startedAt: '2026-05-04T14:10:30.000Z',
        completedAt: '2026-05-04T14:10:30.020Z',
      });
    const { api } = apiWith();
    const results = await api.updateContacts([updates[0] ?? gone, gone]);
    scope.done();
    expect(results).toEqual([
      { id: '75310599', ok: false, reason: 'not_found', message: expect.stringContaining('400') },
      { id: '75310501', ok: true },
    ]);
    expect(api.calls).toBe(2);
  });

  it('on a whole-batch 400 for a property that does not exist, refuses every record that writes it (crm validation), in one call', async () => {
    const scope = nock(BASE)
      .post(UPDATE, { inputs: sent })
      .reply(...reply('batch-update-400-property.json'));
    const { api } = apiWith();
    const results = await api.updateContacts(updates);
    scope.done();
    expect(api.calls).toBe(1);
    expect(results.map((r) => (r.ok ? 'ok' : r.reason))).toEqual(['validation', 'validation']);
    expect(results[0]).toMatchObject({ message: expect.stringContaining('PROPERTY_DOESNT_EXIST') });
  });

  it("a 400 VALIDATION_ERROR quoting an e-mail address is kept by its codes and correlation id, never HubSpot's text with the address", async () => {
    const said = 'Email address jane.marker@example.org is invalid';
    const problems = [{ isValid: false, message: said, error: 'INVALID_EMAIL', name: 'email', localizedErrorMessage: said }];
    const body = {
      status: 'error',
      message: `Property values were not valid: ${JSON.stringify(problems)}`,
      correlationId: '5d1f3a9e-0b7c-4e2a-9f61-2c8d4b7e0a13',
      category: 'VALIDATION_ERROR',
    };
    const one = updates.slice(0, 1);
    const scope = nock(BASE)
      .post(UPDATE, { inputs: sent.slice(0, 1) })
      .reply(400, body);
    const results = await apiWith().api.updateContacts(one);
    scope.done();
    expect(results).toHaveLength(1);
    const [result] = results;
    if (result === undefined || result.ok) throw new Error('expected a refusal');
    expect(result.reason).toBe('validation');
    expect(result.message).toContain('INVALID_EMAIL');
    expect(result.message).toContain('5d1f3a9e-0b7c-4e2a-9f61-2c8d4b7e0a13');
    expect(result.message).not.toContain('jane.marker');
  });

  it('on a 5xx, reports every record transient', async () => {
    const scope = nock(BASE)
      .post(UPDATE, { inputs: sent })
      .reply(502, { status: 'error', message: 'Bad Gateway', correlationId: 'c0ffee00-0000-4000-8000-000000000502', category: 'INTERNAL_ERROR' });
    const results = await apiWith().api.updateContacts(updates);
    scope.done();
    expect(results.map((r) => (r.ok ? 'ok' : r.reason))).toEqual(['transient', 'transient']);
  });

  it('makes no call for no updates and refuses more than 100', async () => {
    const { api } = apiWith();
    expect(await api.updateContacts([])).toEqual([]);
    const many = Array.from({ length: 101 }, (_, i) => ({ id: String(i + 1), properties: { wf_enrichment_status: 'enriched' } }));
    await expect(api.updateContacts(many)).rejects.toThrow(/at most 100/);
    expect(api.calls).toBe(0);
  });
});

describe('updateContacts: refusals of one record', () => {
  const write = (id: string, properties: Record<string, string>) => ({ id, properties });
  const ok = (ids: readonly string[]) => ({
    status: 'COMPLETE',
    results: ids.map((id) => ({ id, properties: {}, createdAt: '2026-05-04T14:02:11.480Z', updatedAt: '2026-05-04T14:10:30.000Z', archived: false })),
    startedAt: '2026-05-04T14:10:30.000Z',
    completedAt: '2026-05-04T14:10:30.020Z',
  });
  const ruleRefusal = {
    status: 'error',
    category: 'VALIDATION_ERROR',
    message: 'Property "phone" is required',
    correlationId: 'c0ffee00-0000-4000-8000-000000000400',
    errors: [{ message: 'Property "phone" is required', code: 'REQUIRED_PROPERTY_MISSING', in: 'properties', context: { propertyName: ['phone'] } }],
  };

  it('a property the portal marked sensitive refuses only the records that write it (sensitive, with the property named); the others are sent again and written', async () => {
    const sensitive = write('75310501', { wf_hh_net_worth: '2500000', wf_enrichment_status: 'enriched' });
    const plain = write('75310502', { wf_enrichment_status: 'no_match' });
    const scope = nock(BASE)
      .post(UPDATE, { inputs: [sensitive, plain] })
      .reply(403, {
        status: 'error',
        category: 'MISSING_SCOPES',
        message: "This app hasn't been granted all required scopes to make this call.",
        correlationId: 'c0ffee00-0000-4000-8000-000000000403',
        errors: [
          {
            message: 'One or more of the following scopes are required.',
            context: { requiredGranularScopes: ['crm.objects.contacts.sensitive.write.v2'], propertyName: ['wf_hh_net_worth'] },
          },
        ],
      })
      .post(UPDATE, { inputs: [plain] })
      .reply(200, ok([plain.id]));
    const { api, refreshes } = apiWith({ refreshTo: 'tok-new' });
    const results = await api.updateContacts([sensitive, plain]);
    scope.done();
    expect(refreshes()).toBe(0);
    expect(results).toEqual([
      { id: sensitive.id, ok: false, reason: 'sensitive', message: expect.stringContaining('"wf_hh_net_worth"') },
      { id: plain.id, ok: true },
    ]);
  });

  it('a 403 for a missing scope that is not a sensitive-data one stays an auth error for the whole call', async () => {
    const scope = nock(BASE)
      .post(UPDATE)
      .reply(...reply('403-missing-scopes.json'));
    expect(await caught(apiWith().api.updateContacts([write('75310501', { wf_enrichment_status: 'enriched' })]))).toMatchObject({ kind: 'auth' });
    scope.done();
  });

  it('reads a 207 whose error carries an object subCategory (as HubSpot documents StandardError) per record, the written ones ok', async () => {
    const scope = nock(BASE)
      .post(UPDATE)
      .reply(207, {
        ...ok(['75310501']),
        numErrors: 1,
        errors: [
          {
            status: 'error',
            category: 'VALIDATION_ERROR',
            subCategory: { reason: 'CONDITIONAL' },
            message: 'Property "phone" is required',
            context: { ids: ['75310502'], propertyName: ['phone'] },
            errors: [],
            links: {},
          },
        ],
      });
    const results = await apiWith().api.updateContacts([
      write('75310501', { wf_enrichment_status: 'enriched' }),
      write('75310502', { wf_enrichment_status: 'enriched' }),
    ]);
    scope.done();
    expect(results).toEqual([
      { id: '75310501', ok: true },
      { id: '75310502', ok: false, reason: 'validation', message: expect.stringContaining('"phone"') },
    ]);
  });

  it('keeps what narrowing learnt when a later call fails (a daily 429): the found records keep their answer, the rest are transient, nothing is thrown', async () => {
    const [a, b, c, d] = ['1', '2', '3', '4'].map((id) => write(id, { wf_enrichment_status: 'enriched' }));
    if (a === undefined || b === undefined || c === undefined || d === undefined) throw new Error('no writes');
    const scope = nock(BASE)
      .post(UPDATE, { inputs: [a, b, c, d] })
      .reply(400, ruleRefusal)
      .post(UPDATE, { inputs: [a, b] })
      .reply(400, ruleRefusal)
      .post(UPDATE, { inputs: [a] })
      .reply(400, ruleRefusal)
      .post(UPDATE, { inputs: [b] })
      .reply(200, ok(['2']))
      .post(UPDATE, { inputs: [c, d] })
      .reply(...reply('429-daily.json'));
    const results = await apiWith().api.updateContacts([a, b, c, d]);
    scope.done();
    expect(results.map((r) => (r.ok ? 'ok' : r.reason))).toEqual(['validation', 'ok', 'transient', 'transient']);
  });

  it('spends a bounded number of calls narrowing a rule that refuses every record, and hands the records it could not tell apart back as transient', async () => {
    const hundred = Array.from({ length: 100 }, (_, i) => write(String(75310600 + i), { wf_enrichment_status: 'enriched' }));
    const scope = nock(BASE).post(UPDATE).times(100).reply(400, ruleRefusal);
    const { api } = apiWith();
    const results = await api.updateContacts(hundred);
    expect(api.calls).toBeLessThanOrEqual(25);
    expect(results).toHaveLength(100);
    const reasons = new Set(results.map((r) => (r.ok ? 'ok' : r.reason)));
    expect([...reasons].sort()).toEqual(['transient', 'validation']);
    // Far fewer calls than the 100 the interceptor would answer (2n − 1 = 199 to narrow them all).
    expect(scope.pendingMocks()).toHaveLength(1);
  });
});

describe('429s', () => {
  const body = { inputs: [{ id: '75310501' }], properties: ['email'], propertiesWithHistory: [] };

  it('waits out a TEN_SECONDLY_ROLLING 429 (10 s without Retry-After) and goes on', async () => {
    const scope = nock(BASE)
      .post(READ, body)
      .query({ archived: 'false' })
      .reply(...reply('429-ten-secondly.json'))
      .post(READ, body)
      .query({ archived: 'false' })
      .reply(...reply('batch-read-207-not-found.json'));
    const { api, sleeps } = apiWith();
    const found = await api.readContacts(['75310501'], ['email']);
    scope.done();
    expect(sleeps).toEqual([10_000]);
    expect(found.get('75310501')).toEqual({ email: 'amanda.taylor@sandbox.windfall.com' });
    expect(api.calls).toBe(2);
  });

  it('waits as long as Retry-After says when HubSpot sends it', async () => {
    const scope = nock(BASE)
      .post(READ, body)
      .query({ archived: 'false' })
      .reply(...reply('429-ten-secondly.json', { 'Retry-After': '3' }))
      .post(READ, body)
      .query({ archived: 'false' })
      .reply(...reply('batch-read-207-not-found.json'));
    const { sleeps, api } = apiWith();
    await api.readContacts(['75310501'], ['email']);
    scope.done();
    expect(sleeps).toEqual([3_000]);
  });

  it('gives up after three waits with CrmError rate_limited and a retryAt one wait ahead', async () => {
    const scope = nock(BASE)
      .post(READ, body)
      .query({ archived: 'false' })
      .times(4)
      .reply(...reply('429-ten-secondly.json'));
    const { api, sleeps } = apiWith();
    const error = await caught(api.readContacts(['75310501'], ['email']));
    scope.done();
    expect(error).toBeInstanceOf(CrmError);
    expect(error).toMatchObject({ kind: 'rate_limited', retryAt: new Date(NOW.getTime() + 10_000) });
    expect(sleeps).toEqual([10_000, 10_000, 10_000]);
    expect(api.calls).toBe(4);
  });

  it('turns a DAILY 429 into CrmError limit_exhausted with retryAt an hour ahead, without waiting or retrying', async () => {
    const scope = nock(BASE)
      .post(UPDATE)
      .reply(...reply('429-daily.json'));
    const { api, sleeps } = apiWith();
    const error = await caught(api.updateContacts([{ id: '75310501', properties: { wf_enrichment_status: 'enriched' } }]));
    scope.done();
    expect(error).toBeInstanceOf(CrmError);
    expect(error).toMatchObject({ kind: 'limit_exhausted', retryAt: new Date(NOW.getTime() + 60 * 60_000) });
    expect(sleeps).toEqual([]);
    expect(api.calls).toBe(1);
  });
});

describe('401 and 403', () => {
  const body = { inputs: [{ id: '75310501' }], properties: ['email'], propertiesWithHistory: [] };

  it('refreshes once after a 401 and retries with the new bearer token', async () => {
    const scope = nock(BASE)
      .post(READ, body)
      .query({ archived: 'false' })
      .matchHeader('authorization', 'Bearer tok-old')
      .reply(...reply('401-expired.json'))
      .post(READ, body)
      .query({ archived: 'false' })
      .matchHeader('authorization', 'Bearer tok-new')
      .reply(...reply('batch-read-207-not-found.json'));
    const { api, refreshes } = apiWith({ token: 'tok-old', refreshTo: 'tok-new' });
    const found = await api.readContacts(['75310501'], ['email']);
    scope.done();
    expect(refreshes()).toBe(1);
    expect(found.size).toBe(1);
  });

  it('gives up with CrmError auth when the refreshed token is refused too (one refresh only)', async () => {
    const scope = nock(BASE)
      .post(READ, body)
      .query({ archived: 'false' })
      .matchHeader('authorization', 'Bearer tok-old')
      .reply(...reply('401-expired.json'))
      .post(READ, body)
      .query({ archived: 'false' })
      .matchHeader('authorization', 'Bearer tok-new')
      .reply(...reply('401-expired.json'));
    const { api, refreshes } = apiWith({ token: 'tok-old', refreshTo: 'tok-new' });
    const error = await caught(api.readContacts(['75310501'], ['email']));
    scope.done();
    expect(error).toBeInstanceOf(CrmError);
    expect(error).toMatchObject({ kind: 'auth' });
    expect(refreshes()).toBe(1);
  });

  it('answers CrmError auth at once when the token cannot be refreshed', async () => {
    const scope = nock(BASE)
      .post(READ, body)
      .query({ archived: 'false' })
      .reply(...reply('401-expired.json'));
    const { api, refreshes } = apiWith({ refreshTo: null });
    expect(await caught(api.readContacts(['75310501'], ['email']))).toMatchObject({ kind: 'auth' });
    scope.done();
    expect(refreshes()).toBe(1);
    expect(api.calls).toBe(1);
  });

  it('answers CrmError auth for a 403 (missing scope) without refreshing', async () => {
    const scope = nock(BASE)
      .post(UPDATE)
      .reply(...reply('403-missing-scopes.json'));
    const { api, refreshes } = apiWith({ refreshTo: 'tok-new' });
    const error = await caught(api.updateContacts([{ id: '75310501', properties: { wf_enrichment_status: 'enriched' } }]));
    scope.done();
    expect(error).toBeInstanceOf(CrmError);
    expect(error).toMatchObject({ kind: 'auth' });
    expect(error).not.toBeInstanceOf(HubSpotApiError);
    expect(refreshes()).toBe(0);
  });
});

describe('listContacts (GET /crm/objects/{version}/contacts)', () => {
  it('pages with `after` until HubSpot sends no paging', async () => {
    const scope = nock(BASE)
      .get(LIST)
      .query({ limit: '2', properties: ['email', 'firstname'], archived: 'false' })
      .reply(...reply('list-page-1.json'))
      .get(LIST)
      .query({ limit: '2', after: '75310503', properties: ['email', 'firstname'], archived: 'false' })
      .reply(...reply('list-page-2.json'));
    const { api } = apiWith();
    const first = await api.listContacts(null, ['email', 'firstname'], 2);
    expect(first.after).toBe('75310503');
    expect(first.contacts).toEqual([
      { id: '75310501', properties: { email: 'amanda.taylor@sandbox.windfall.com', firstname: 'Amanda' } },
      { id: '75310502', properties: { email: 'j.doe@example.org', firstname: 'Jordan' } },
    ]);
    const second = await api.listContacts(first.after, ['email', 'firstname'], 2);
    scope.done();
    expect(second).toEqual({ contacts: [{ id: '75310503', properties: { email: null, firstname: 'Robin' } }], after: null });
  });
});

describe('OAuth tokens', () => {
  let pipeline: PipelineHarness;
  let installations: Installations;
  let accounts = 0;

  beforeAll(async () => {
    pipeline = await startPipeline();
    installations = pipeline.bridge.installations;
  });
  afterAll(async () => {
    await pipeline.close();
  });

  const APP = { clientId: 'client-0001', clientSecret: 'secret-0001', appId: '1160452' };

  async function install(crm: Record<string, unknown>): Promise<string> {
    accounts += 1;
    const name = `hubspot-${accounts}`;
    await createAccount(pipeline.opened.store, name, { careerIntelligence: true });
    const installation = await installations.create({
      provider: 'hubspot',
      externalAccountId: String(62515 + accounts),
      environment: 'sandbox',
      target: { kind: 'local', accountName: name },
      crmCredentials: crm,
    });
    return installation.id;
  }

  /** An OAuth installation whose access token expires `inMs` after NOW. */
  function oauth(inMs: number, apiBaseUrl = BASE): Record<string, unknown> {
    return {
      kind: 'oauth',
      accessToken: 'CNa1-old-access-token-0001',
      refreshToken: 'na1-rt01-0000-4000-8000-original0001',
      expiresAt: new Date(NOW.getTime() + inMs).toISOString(),
      ...APP,
      apiBaseUrl,
    };
  }

  const refreshForm = {
    grant_type: 'refresh_token',
    client_id: APP.clientId,
    client_secret: APP.clientSecret,
    refresh_token: 'na1-rt01-0000-4000-8000-original0001',
  };

  async function stored(id: string) {
    return HubSpotCredentialsSchema.parse((await installations.secrets(id)).crm);
  }

  it('uses a token with more than 5 minutes left as it is', async () => {
    const id = await install(oauth(REFRESH_AHEAD_MS + 60_000));
    const tokens = new HubSpotTokenSource(id, installations, () => NOW);
    expect(await tokens.accessToken()).toBe('CNa1-old-access-token-0001');
  });

  it('refreshes a token expiring within 5 minutes before it is used, and the API call carries the new one', async () => {
    const id = await install(oauth(REFRESH_AHEAD_MS - 1_000));
    const tokens = new HubSpotTokenSource(id, installations, () => NOW);
    const scope = nock(BASE)
      .post(TOKEN, refreshForm)
      .matchHeader('content-type', 'application/x-www-form-urlencoded')
      .reply(...reply('token-200.json'))
      .post(READ, { inputs: [{ id: '75310501' }], properties: ['email'], propertiesWithHistory: [] })
      .query({ archived: 'false' })
      .matchHeader('authorization', 'Bearer CNa1-fresh-access-token-0002')
      .reply(...reply('batch-read-207-not-found.json'));
    const api = new HubSpotApi({
      portalId: 'token-portal',
      accessToken: () => tokens.accessToken(),
      refreshAccessToken: () => tokens.refreshAfterRefusal(),
      now: () => NOW,
    });
    await api.readContacts(['75310501'], ['email']);
    scope.done();
    expect(await stored(id)).toMatchObject({
      accessToken: 'CNa1-fresh-access-token-0002',
      expiresAt: new Date(NOW.getTime() + 1800 * 1000).toISOString(),
    });
  });

  it('sends one token request for 10 concurrent callers of one installation (single flight)', async () => {
    const id = await install(oauth(60_000));
    const scope = nock(BASE)
      .post(TOKEN, refreshForm)
      .once()
      .reply(...reply('token-200.json'));
    // Separate token sources, as separate API clients of one installation would have.
    const tokens = await Promise.all(Array.from({ length: 10 }, () => new HubSpotTokenSource(id, installations, () => NOW).accessToken()));
    scope.done();
    expect(new Set(tokens)).toEqual(new Set(['CNa1-fresh-access-token-0002']));
  });

  it('persists a rotated refresh token before the new access token is used', async () => {
    const id = await install(oauth(60_000));
    const order: string[] = [];
    const persist = installations.updateCrmCredentials.bind(installations);
    const spy = vi.spyOn(installations, 'updateCrmCredentials').mockImplementation(async (installationId, crm) => {
      await persist(installationId, crm);
      order.push('persisted');
    });
    try {
      const scope = nock(BASE)
        .post(TOKEN, refreshForm)
        .reply(...reply('token-200.json'))
        .post(READ)
        .query({ archived: 'false' })
        .matchHeader('authorization', 'Bearer CNa1-fresh-access-token-0002')
        .reply(() => {
          order.push('used');
          return reply('batch-read-207-not-found.json');
        });
      const tokens = new HubSpotTokenSource(id, installations, () => NOW);
      const api = new HubSpotApi({ portalId: 'rotation-portal', accessToken: () => tokens.accessToken(), now: () => NOW });
      await api.readContacts(['75310501'], ['email']);
      scope.done();
    } finally {
      spy.mockRestore();
    }
    expect(order).toEqual(['persisted', 'used']);
    const credentials = await stored(id);
    expect(credentials.refreshToken).toBe('na1-rt02-0000-4000-8000-rotated00002');
    expect(credentials.accessToken).toBe('CNa1-fresh-access-token-0002');
    // Nothing else in the sealed credentials changed.
    expect(credentials).toMatchObject({ kind: 'oauth', ...APP, apiBaseUrl: BASE });
  });

  it('refreshes even a fresh-looking token after HubSpot refused it (refreshAfterRefusal)', async () => {
    const id = await install(oauth(REFRESH_AHEAD_MS + 60_000));
    const scope = nock(BASE)
      .post(TOKEN, refreshForm)
      .reply(...reply('token-200.json'));
    expect(await new HubSpotTokenSource(id, installations, () => NOW).refreshAfterRefusal()).toBe('CNa1-fresh-access-token-0002');
    scope.done();
  });

  it('refreshes on the date-based token endpoint only: a 404 there is an error, with no legacy fallback', async () => {
    const id = await install(oauth(60_000));
    const scope = nock(BASE)
      .post(TOKEN, refreshForm)
      .reply(404, { status: 'error', message: 'Resource not found', correlationId: 'c0ffee00-0000-4000-8000-000000000404', category: 'OBJECT_NOT_FOUND' });
    const error = await caught(new HubSpotTokenSource(id, installations, () => NOW).accessToken());
    scope.done();
    expect(error).toBeInstanceOf(HubSpotAuthError);
    expect(error).toMatchObject({ status: 404, message: expect.stringContaining('answered 404') });
  });

  it('keeps the path of a base URL (a proxy or a fake) for the token endpoint, as the SDK does for API calls', async () => {
    const scope = nock('https://egress.example.test')
      .post(`/hubspot${HUBSPOT_PATHS.token}`, refreshForm)
      .reply(...reply('token-200.json'));
    const token = await requestToken('https://egress.example.test/hubspot/', refreshForm);
    scope.done();
    expect(token).toMatchObject({ access_token: 'CNa1-fresh-access-token-0002', hub_id: 62515, expires_in: 1800 });
  });

  it('answers invalid_grant with a HubSpotAuthError carrying the description, an auth CrmError, and leaves the credentials alone', async () => {
    const id = await install(oauth(60_000));
    const scope = nock(BASE)
      .post(TOKEN, refreshForm)
      .reply(...reply('token-400-invalid-grant.json'));
    const error = await caught(new HubSpotTokenSource(id, installations, () => NOW).accessToken());
    scope.done();
    expect(error).toBeInstanceOf(HubSpotAuthError);
    expect(error).toBeInstanceOf(CrmError);
    expect(error).toMatchObject({ status: 400, kind: 'auth', message: expect.stringContaining('refresh token is invalid, expired or revoked') });
    expect(await stored(id)).toMatchObject({ accessToken: 'CNa1-old-access-token-0001', refreshToken: 'na1-rt01-0000-4000-8000-original0001' });
  });

  it('reports a refresh refused inside an API call as CrmError auth, not as an unknown error', async () => {
    const id = await install(oauth(REFRESH_AHEAD_MS + 60_000));
    const tokens = new HubSpotTokenSource(id, installations, () => NOW);
    const scope = nock(BASE)
      .post(READ)
      .query({ archived: 'false' })
      .reply(...reply('401-expired.json'))
      .post(TOKEN, refreshForm)
      .reply(...reply('token-400-invalid-grant.json'));
    const api = new HubSpotApi({
      portalId: 'refused-portal',
      accessToken: () => tokens.accessToken(),
      refreshAccessToken: () => tokens.refreshAfterRefusal(),
      now: () => NOW,
    });
    const error = await caught(api.readContacts(['75310501'], ['email']));
    scope.done();
    expect(error).toBeInstanceOf(CrmError);
    expect(error).toMatchObject({ kind: 'auth' });
  });

  it('never refreshes a static (private app) token: used as it is, and refreshAfterRefusal is null', async () => {
    const id = await install({ kind: 'static', accessToken: 'pat-na1-static-0001', ...APP, clientId: null });
    const tokens = new HubSpotTokenSource(id, installations, () => new Date('2099-01-01T00:00:00.000Z'));
    // No interceptor: any token request would fail (net connect is disabled).
    expect(await tokens.accessToken()).toBe('pat-na1-static-0001');
    expect(await tokens.refreshAfterRefusal()).toBeNull();
    expect(nock.pendingMocks()).toEqual([]);
    expect((await stored(id)).accessToken).toBe('pat-na1-static-0001');
  });
});
