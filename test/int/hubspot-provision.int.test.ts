// Property provisioning over real HTTP against the fake HubSpot (and, for the 409 path, against
// HubSpot's documented answer shapes with nock): the group and every property on first install, nothing
// sent on a second run, drift repaired, a same-named property of another type reported and left alone,
// a concurrent install's properties (207 or 409 on batch create) counted as existing, and removal.
import nock from 'nock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HubSpotApi, HubSpotApiError, type HubSpotRequest } from '../../connectors/hubspot/api.ts';
import { HUBSPOT_PATHS } from '../../connectors/hubspot/version.ts';
import type { CallOptions } from '../../bridge/connector.ts';
import { HUBSPOT_PROPERTY_GROUP, type HubSpotPropertyDefinition, hubspotProperties } from '../../connectors/hubspot/fields.ts';
import { provisionHubSpotProperties, removeHubSpotProperties } from '../../connectors/hubspot/provision.ts';
import { type FakeHubSpot, type FakeProperty, type FakeRequest, startFakeHubSpot } from '../support/fake-hubspot.ts';

const DEFINITIONS = hubspotProperties();
const NAMES = DEFINITIONS.map((d) => d.name);
const PROPERTIES_PATH = HUBSPOT_PATHS.properties;
const BATCH_CREATE_PATH = `${PROPERTIES_PATH}/batch/create`;

const fakes: FakeHubSpot[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
});

async function fakeHubSpot(options: Parameters<typeof startFakeHubSpot>[0] = {}): Promise<FakeHubSpot> {
  const fake = await startFakeHubSpot(options);
  fakes.push(fake);
  return fake;
}

let portals = 0;
/** Pacing well above HubSpot's so the one-by-one paths stay fast; each test is a portal of its own. */
function apiOptions(fake: FakeHubSpot) {
  portals += 1;
  return {
    portalId: `provision-${portals}`,
    apiBaseUrl: fake.url,
    accessToken: () => Promise.resolve(fake.tokens.staticToken),
    requestsPer10s: 100_000,
    sleep: () => Promise.resolve(),
  };
}

function apiFor(fake: FakeHubSpot): HubSpotApi {
  return new HubSpotApi(apiOptions(fake));
}

/**
 * Someone else changing the portal just before one of our calls (named as HubSpotApi.call names it):
 * another install creating properties between our list and our batch create (the one moment a 207 or
 * 409 can come back), or an admin archiving one between our list and our archive (a 404).
 */
class RacedApi extends HubSpotApi {
  constructor(
    fake: FakeHubSpot,
    private readonly before: string,
    private readonly race: () => void,
  ) {
    super(apiOptions(fake));
  }

  override call<T>(what: string, request: HubSpotRequest, schema: z.ZodType<T>, options?: CallOptions): Promise<T> {
    if (what === this.before) this.race();
    return super.call(what, request, schema, options);
  }
}

/** Requests that change the portal's properties or groups (anything but reads). */
function propertyWrites(fake: FakeHubSpot): FakeRequest[] {
  return fake.requests.filter((r) => r.path.startsWith(PROPERTIES_PATH) && r.method !== 'GET');
}

function definition(name: string): HubSpotPropertyDefinition {
  const found = DEFINITIONS.find((d) => d.name === name);
  if (found === undefined) throw new Error(`no definition ${name}`);
  return found;
}

function property(fake: FakeHubSpot, name: string): FakeProperty {
  const found = fake.properties.get(name);
  if (found === undefined) throw new Error(`the fake has no property ${name}`);
  return found;
}

/** What another install would have made: the property exactly as we define it. */
function asWeDefineIt(name: string): FakeProperty {
  const d = definition(name);
  return {
    name: d.name,
    label: d.label,
    type: d.type,
    fieldType: d.fieldType,
    groupName: d.groupName,
    description: d.description,
    displayOrder: d.displayOrder,
    options: (d.options ?? []).map((o) => ({ label: o.label, value: o.value, displayOrder: o.displayOrder, hidden: o.hidden })),
    formField: d.formField,
    hidden: false,
    hasUniqueValue: false,
    hubspotDefined: false,
    calculated: false,
    externalOptions: false,
    readOnlyValue: false,
    createdAt: '2026-05-04T14:00:00.000Z',
    updatedAt: '2026-05-04T14:00:00.000Z',
  };
}

const optionValues = (p: { options: readonly { value: string }[] }) => p.options.map((o) => o.value).sort();

describe('provisionHubSpotProperties against the fake HubSpot', () => {
  it('first install creates the group and every property with its type, fieldType and options, in one batch', async () => {
    const fake = await fakeHubSpot();
    const report = await provisionHubSpotProperties(apiFor(fake));

    expect(report.groupCreated).toBe(true);
    expect([...report.created].sort()).toEqual([...NAMES].sort());
    expect(report).toMatchObject({ updated: [], unchanged: [], conflicting: [] });
    expect(fake.groups.get(HUBSPOT_PROPERTY_GROUP.name)).toMatchObject({ label: HUBSPOT_PROPERTY_GROUP.label });

    for (const d of DEFINITIONS) {
      const made = property(fake, d.name);
      expect(made, d.name).toMatchObject({
        type: d.type,
        fieldType: d.fieldType,
        groupName: 'enrichbridge',
        label: d.label,
        description: d.description,
        formField: false,
      });
      expect(optionValues(made), d.name).toEqual((d.options ?? []).map((o) => o.value).sort());
    }
    // Spelled out, not derived: the pairs HubSpot's v3 validation accepts, and bools as "true"/"false".
    expect(property(fake, 'wf_household_matched')).toMatchObject({ type: 'bool', fieldType: 'booleancheckbox' });
    expect(optionValues(property(fake, 'wf_household_matched'))).toEqual(['false', 'true']);
    expect(property(fake, 'wf_hh_net_worth')).toMatchObject({ type: 'number', fieldType: 'number' });
    expect(property(fake, 'wf_enriched_at')).toMatchObject({ type: 'datetime', fieldType: 'date' });
    expect(property(fake, 'wf_hh_net_worth_last_calculated')).toMatchObject({ type: 'date', fieldType: 'date' });
    expect(property(fake, 'wf_hh_philanthropic_cause')).toMatchObject({ type: 'string', fieldType: 'textarea' });
    expect(property(fake, 'wf_career_job_title')).toMatchObject({ type: 'string', fieldType: 'text' });
    expect(property(fake, 'wf_enrichment_status')).toMatchObject({ type: 'enumeration', fieldType: 'select' });
    expect(optionValues(property(fake, 'wf_enrichment_status'))).toEqual([
      'below_min_confidence',
      'enriched',
      'excluded',
      'no_match',
      'no_match_key',
      'undone',
    ]);

    const writes = propertyWrites(fake).map((r) => `${r.method} ${r.path} ${r.status}`);
    expect(writes).toEqual([`POST ${PROPERTIES_PATH}/groups 201`, `POST ${BATCH_CREATE_PATH} 201`]);
  });

  it('a second run sends no create or update and duplicates nothing', async () => {
    const fake = await fakeHubSpot();
    const api = apiFor(fake);
    await provisionHubSpotProperties(api);
    const before = fake.requests.length;
    const snapshot = structuredClone([...fake.properties.values()]);

    const again = await provisionHubSpotProperties(api);

    expect(again.groupCreated).toBe(false);
    expect(again).toMatchObject({ created: [], updated: [], conflicting: [] });
    expect([...again.unchanged].sort()).toEqual([...NAMES].sort());
    const second = fake.requests.slice(before);
    expect(second.map((r) => r.method)).toEqual(['GET', 'GET']);
    expect([...fake.properties.values()]).toEqual(snapshot);
    expect([...fake.groups.keys()].filter((g) => g === HUBSPOT_PROPERTY_GROUP.name)).toHaveLength(1);
  });

  it('a drifted label, description or option list is updated in place (PATCH), and nothing else is sent', async () => {
    const fake = await fakeHubSpot();
    const api = apiFor(fake);
    await provisionHubSpotProperties(api);
    property(fake, 'wf_hh_net_worth').label = 'Net worth (old label)';
    property(fake, 'wf_career_job_title').description = 'Edited by an admin';
    property(fake, 'wf_enrichment_status').options = property(fake, 'wf_enrichment_status').options.filter((o) => o.value !== 'no_match');
    const before = fake.requests.length;

    const report = await provisionHubSpotProperties(api);

    expect([...report.updated].sort()).toEqual(['wf_career_job_title', 'wf_enrichment_status', 'wf_hh_net_worth']);
    expect(report).toMatchObject({ created: [], conflicting: [], groupCreated: false });
    expect(report.unchanged).toHaveLength(NAMES.length - 3);
    expect(property(fake, 'wf_hh_net_worth').label).toBe(definition('wf_hh_net_worth').label);
    expect(property(fake, 'wf_career_job_title').description).toBe(definition('wf_career_job_title').description);
    expect(optionValues(property(fake, 'wf_enrichment_status'))).toEqual([
      'below_min_confidence',
      'enriched',
      'excluded',
      'no_match',
      'no_match_key',
      'undone',
    ]);
    const writes = fake.requests.slice(before).filter((r) => r.method !== 'GET');
    expect(writes.map((r) => `${r.method} ${r.path} ${r.status}`).sort()).toEqual([
      `PATCH ${PROPERTIES_PATH}/wf_career_job_title 200`,
      `PATCH ${PROPERTIES_PATH}/wf_enrichment_status 200`,
      `PATCH ${PROPERTIES_PATH}/wf_hh_net_worth 200`,
    ]);
  });

  it('a property of the same name with another type is reported as conflicting and left untouched', async () => {
    const fake = await fakeHubSpot();
    const theirs: FakeProperty = {
      ...asWeDefineIt('wf_hh_net_worth'),
      label: 'Net worth (our own text field)',
      type: 'string',
      fieldType: 'text',
      groupName: 'contactinformation',
      description: 'Typed in by the sales team',
    };
    fake.properties.set('wf_hh_net_worth', structuredClone(theirs));

    const report = await provisionHubSpotProperties(apiFor(fake));

    expect(report.conflicting).toEqual(['wf_hh_net_worth']);
    expect(report.created).not.toContain('wf_hh_net_worth');
    expect(report.created).toHaveLength(NAMES.length - 1);
    expect(fake.properties.get('wf_hh_net_worth')).toEqual(theirs);
    const touching = fake.requests.filter(
      (r) => r.method !== 'GET' && (r.path.endsWith('/wf_hh_net_worth') || JSON.stringify(r.body).includes('"wf_hh_net_worth"')),
    );
    expect(touching).toEqual([]);

    // And a second run still leaves it alone.
    const again = await provisionHubSpotProperties(apiFor(fake));
    expect(again.conflicting).toEqual(['wf_hh_net_worth']);
    expect(fake.properties.get('wf_hh_net_worth')).toEqual(theirs);
  });

  it('a batch create answered 409 (another install made some meanwhile) → one by one: those count as existing, the rest are created', async () => {
    const fake = await fakeHubSpot({ batchCreateConflict: 'conflict' });
    const raced = ['wf_hh_net_worth', 'wf_enriched_at', 'wf_career_job_title'];
    const api = new RacedApi(fake, 'create properties', () => {
      for (const name of raced) fake.properties.set(name, asWeDefineIt(name));
    });

    const report = await provisionHubSpotProperties(api);

    expect([...report.unchanged].sort()).toEqual([...raced].sort());
    expect([...report.created].sort()).toEqual(NAMES.filter((n) => !raced.includes(n)).sort());
    expect(report).toMatchObject({ updated: [], conflicting: [] });
    const batch = fake.requests.filter((r) => r.path === BATCH_CREATE_PATH);
    expect(batch.map((r) => r.status)).toEqual([409]);
    const single = fake.requests.filter((r) => r.method === 'POST' && r.path === PROPERTIES_PATH);
    expect(single).toHaveLength(NAMES.length);
    expect(single.filter((r) => r.status === 409)).toHaveLength(raced.length);
    expect(NAMES.every((n) => fake.properties.has(n))).toBe(true);
    expect([...fake.properties.keys()].filter((n) => n.startsWith('wf_'))).toHaveLength(NAMES.length);
  });

  it('a batch create answered 207 for the ones another install made → those count as existing, the rest are created', async () => {
    const fake = await fakeHubSpot({ batchCreateConflict: 'multi-status' });
    const raced = ['wf_household_matched', 'wf_hh_political_party'];
    const api = new RacedApi(fake, 'create properties', () => {
      for (const name of raced) fake.properties.set(name, asWeDefineIt(name));
    });

    const report = await provisionHubSpotProperties(api);

    expect([...report.unchanged].sort()).toEqual([...raced].sort());
    expect([...report.created].sort()).toEqual(NAMES.filter((n) => !raced.includes(n)).sort());
    expect(fake.requests.filter((r) => r.path === BATCH_CREATE_PATH).map((r) => r.status)).toEqual([207]);
    // Only the ones the 207 did not create are tried again, and they answer 409.
    const single = fake.requests.filter((r) => r.method === 'POST' && r.path === PROPERTIES_PATH);
    expect(single.map((r) => r.status)).toEqual([409, 409]);
    expect([...fake.properties.keys()].filter((n) => n.startsWith('wf_'))).toHaveLength(NAMES.length);
  });

  it('a refusal other than 409 on the one-by-one create stops the install with its reason', async () => {
    const fake = await fakeHubSpot({ batchCreateConflict: 'conflict' });
    const api = new RacedApi(fake, 'create properties', () => {
      fake.properties.set('wf_enriched_at', asWeDefineIt('wf_enriched_at'));
      // The group vanishes too: every later create is a 400.
      fake.groups.delete(HUBSPOT_PROPERTY_GROUP.name);
    });

    const error = await provisionHubSpotProperties(api).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(HubSpotApiError);
    // Its reason by HubSpot's category (HubSpot's own words are never kept: they can echo values).
    expect(error).toMatchObject({ status: 400, message: expect.stringContaining('VALIDATION_ERROR') });
  });
});

describe('removeHubSpotProperties against the fake HubSpot', () => {
  it('archives every property of ours and the group, tolerating ones already gone (404), and leaves the portal’s own', async () => {
    const fake = await fakeHubSpot();
    await provisionHubSpotProperties(apiFor(fake));
    fake.properties.delete('wf_hh_boat_owner');
    // Archived by an admin after our list, before our archive: HubSpot answers 404.
    const api = new RacedApi(fake, 'archive property wf_career_job_title', () => fake.properties.delete('wf_career_job_title'));
    const builtIns = [...fake.properties.values()].filter((p) => p.hubspotDefined).map((p) => p.name);

    const removed = await removeHubSpotProperties(api);

    expect(removed).toBe(NAMES.length - 2);
    expect(NAMES.filter((n) => fake.properties.has(n))).toEqual([]);
    expect(fake.groups.has(HUBSPOT_PROPERTY_GROUP.name)).toBe(false);
    expect([...fake.properties.keys()].sort()).toEqual(builtIns.sort());
    expect(fake.groups.has('contactinformation')).toBe(true);
    const deletes = fake.requests.filter((r) => r.method === 'DELETE').map((r) => `${r.path} ${r.status}`);
    expect(deletes).toContain(`${PROPERTIES_PATH}/wf_career_job_title 404`);
    expect(deletes).toContain(`${PROPERTIES_PATH}/groups/enrichbridge 204`);
    expect(deletes.filter((d) => d.endsWith(' 204'))).toHaveLength(NAMES.length - 2 + 1);

    // Nothing left: a second removal archives nothing and does not fail.
    expect(await removeHubSpotProperties(api)).toBe(0);
    // And a reinstall after removal provisions everything again.
    const report = await provisionHubSpotProperties(api);
    expect(report.groupCreated).toBe(true);
    expect(report.created).toHaveLength(NAMES.length);
  });

  it('leaves a same-named property of another type alone: provisioning reported it as not ours', async () => {
    const fake = await fakeHubSpot();
    const theirs: FakeProperty = {
      ...asWeDefineIt('wf_hh_net_worth'),
      type: 'string',
      fieldType: 'text',
      groupName: 'contactinformation',
      label: 'Their net worth',
    };
    fake.properties.set('wf_hh_net_worth', structuredClone(theirs));
    const api = apiFor(fake);
    await provisionHubSpotProperties(api);

    const removed = await removeHubSpotProperties(api);

    expect(removed).toBe(NAMES.length - 1);
    expect(fake.properties.get('wf_hh_net_worth')).toEqual(theirs);
    expect(fake.requests.filter((r) => r.method === 'DELETE' && r.path.endsWith('/wf_hh_net_worth'))).toEqual([]);
    expect(fake.groups.has(HUBSPOT_PROPERTY_GROUP.name)).toBe(false);
  });
});

// ---- HubSpot's own answer shapes (nock) ----

const BASE = 'https://api.hubapi.com';
const CORRELATION = { 'content-type': 'application/json;charset=utf-8', 'x-hubspot-correlation-id': '2dea5219-07f2-40ce-82ec-9c2e302317a4' };

/** A property as GET /crm/properties/{version}/contacts returns it (the fields HubSpot sends, in its order). */
function listed(d: HubSpotPropertyDefinition) {
  return {
    updatedAt: '2026-05-04T14:00:00.000Z',
    createdAt: '2026-05-04T14:00:00.000Z',
    name: d.name,
    label: d.label,
    type: d.type,
    fieldType: d.fieldType,
    description: d.description,
    groupName: d.groupName,
    options: (d.options ?? []).map((o) => ({ label: o.label, value: o.value, displayOrder: o.displayOrder, hidden: false })),
    createdUserId: '9012345',
    updatedUserId: '9012345',
    displayOrder: d.displayOrder,
    calculated: false,
    externalOptions: false,
    archived: false,
    hasUniqueValue: false,
    hidden: false,
    modificationMetadata: { archivable: true, readOnlyDefinition: false, readOnlyValue: false },
    formField: d.formField,
    dataSensitivity: 'non_sensitive',
  };
}

/** The body the SDK sends for one of our properties (PropertyCreate), spelled out. */
function createBody(d: HubSpotPropertyDefinition) {
  return {
    name: d.name,
    label: d.label,
    description: d.description,
    groupName: 'enrichbridge',
    type: d.type,
    fieldType: d.fieldType,
    displayOrder: d.displayOrder,
    formField: false,
    ...(d.options === undefined ? {} : { options: d.options.map((o) => ({ label: o.label, value: o.value, hidden: false, displayOrder: o.displayOrder })) }),
  };
}

/** HubSpot's answer to creating a property whose name is taken (409 Conflict, category OBJECT_ALREADY_EXISTS). */
function exists(name: string) {
  return {
    status: 'error',
    message: `Property named '${name}' already exists.`,
    correlationId: '2dea5219-07f2-40ce-82ec-9c2e302317a4',
    category: 'OBJECT_ALREADY_EXISTS',
  };
}

describe('provisionHubSpotProperties against HubSpot’s answer shapes (nock)', () => {
  // Only here: the tests above talk to the fake on loopback.
  beforeEach(() => {
    nock.disableNetConnect();
  });
  afterEach(() => {
    nock.cleanAll();
    nock.enableNetConnect();
  });

  it('a 409 on batch create → each one created alone, where 409 means it exists', async () => {
    const [first, second] = [definition('wf_enriched_at'), definition('wf_household_matched')];
    const present = DEFINITIONS.filter((d) => d !== first && d !== second);
    const email = {
      ...listed({
        name: 'email',
        label: 'Email',
        description: '',
        groupName: 'contactinformation',
        type: 'string',
        fieldType: 'text',
        displayOrder: 3,
        formField: true,
      }),
      hubspotDefined: true,
      modificationMetadata: { archivable: false, readOnlyDefinition: true, readOnlyValue: false },
    };
    const scope = nock(BASE)
      .matchHeader('authorization', 'Bearer pat-na1-test')
      .get(HUBSPOT_PATHS.groups)
      .reply(
        200,
        {
          results: [
            { name: 'contactinformation', label: 'Contact information', displayOrder: 0, archived: false },
            { name: 'enrichbridge', label: 'Windfall enrichment', displayOrder: 5, archived: false },
          ],
        },
        CORRELATION,
      )
      .get(HUBSPOT_PATHS.properties)
      .query({ archived: 'false' })
      .reply(200, { results: [email, ...present.map(listed)] }, CORRELATION)
      .post(HUBSPOT_PATHS.propertiesBatchCreate, { inputs: [createBody(first), createBody(second)] })
      .reply(409, exists(first.name), CORRELATION)
      .post(HUBSPOT_PATHS.properties, createBody(first))
      .reply(409, exists(first.name), CORRELATION)
      .post(HUBSPOT_PATHS.properties, createBody(second))
      .reply(201, listed(second), CORRELATION);

    const api = new HubSpotApi({ portalId: 'nock-provision', accessToken: () => Promise.resolve('pat-na1-test'), requestsPer10s: 100_000 });
    const report = await provisionHubSpotProperties(api);

    scope.done();
    expect(report.groupCreated).toBe(false);
    expect(report.created).toEqual([second.name]);
    expect(report.unchanged).toContain(first.name);
    expect(report.unchanged).toHaveLength(NAMES.length - 1);
    expect(report).toMatchObject({ updated: [], conflicting: [] });
  });
});
