// The HubSpot fake (test/support/fake-hubspot.ts) driven by our own client, so the fake and HubSpotApi
// agree: batch read/update with missing ids, paging, properties, 429s and a 401 refreshed through the
// fake's token endpoint, and signed webhook batches (checked with @hubspot/api-client's Signature).
import { type IncomingHttpHeaders, type Server, createServer } from 'node:http';
import { Signature } from '@hubspot/api-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HubSpotApi, HubSpotApiError, Ignored } from '../../connectors/hubspot/api.ts';
import { HUBSPOT_PATHS } from '../../connectors/hubspot/version.ts';
import { requestToken } from '../../connectors/hubspot/auth.ts';
import { CrmError } from '../../bridge/connector.ts';
import { type FakeHubSpot, startFakeHubSpot } from '../support/fake-hubspot.ts';

interface Received {
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

let fake: FakeHubSpot;
let receiver: Server;
let targetUrl: string;
const received: Received[] = [];
let portals = 0;
/** A list or batch answer, as far as these tests read it. */
const Results = z.object({ results: z.array(z.looseObject({ name: z.string() })), errors: z.array(z.unknown()).optional() }).loose();

function api(token: () => Promise<string> = () => Promise.resolve(fake.tokens.staticToken), refresh?: () => Promise<string | null>) {
  const sleeps: number[] = [];
  portals += 1;
  const client = new HubSpotApi({
    portalId: `fake-${portals}`,
    apiBaseUrl: fake.url,
    accessToken: token,
    ...(refresh === undefined ? {} : { refreshAccessToken: refresh }),
    sleep: (ms) => {
      sleeps.push(ms);
      return Promise.resolve();
    },
  });
  return { client, sleeps };
}

const EventsSchema = z.array(
  z
    .object({
      subscriptionType: z.string(),
      objectId: z.number(),
      portalId: z.number(),
      appId: z.number(),
      changeSource: z.string(),
      sourceId: z.string().optional(),
      propertyName: z.string().optional(),
      propertyValue: z.string().optional(),
    })
    .loose(),
);

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
  const address = receiver.address();
  targetUrl = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}/webhooks/hubspot`;
  fake = await startFakeHubSpot({ webhookUrl: targetUrl });
});
afterEach(() => {
  received.length = 0;
});
afterAll(async () => {
  await fake.close();
  await new Promise<void>((done) => receiver.close(() => done()));
});

describe('the HubSpot fake, through HubSpotApi', () => {
  it('batch-reads, batch-updates (207 for a missing id) and lists with paging', async () => {
    const a = await fake.createContact({ email: 'a@example.com', firstname: 'Ada' }, { notify: false });
    const b = await fake.createContact({ email: 'b@example.com', firstname: 'Bo' }, { notify: false });
    const { client } = api();

    const found = await client.readContacts([a.id, '999999999', b.id], ['email', 'firstname', 'phone']);
    expect([...found.keys()]).toEqual([a.id, b.id]);
    expect(found.get(a.id)).toEqual({ email: 'a@example.com', firstname: 'Ada', phone: null });

    const written = await client.updateContacts([
      { id: a.id, properties: { company: 'Example Holdings', phone: 4045550142 } },
      { id: '999999999', properties: { company: 'Nobody Inc' } },
    ]);
    expect(written).toEqual([
      { id: a.id, ok: true },
      { id: '999999999', ok: false, reason: 'not_found', message: 'OBJECT_NOT_FOUND' },
    ]);
    expect(fake.contacts.get(a.id)?.properties).toMatchObject({ company: 'Example Holdings', phone: '4045550142' });

    const first = await client.listContacts(null, ['email'], 1);
    expect(first.contacts.map((c) => c.id)).toEqual([a.id]);
    const second = await client.listContacts(first.after, ['email'], 1);
    expect(second.contacts).toEqual([{ id: b.id, properties: { email: 'b@example.com' } }]);
  });

  it('refuses a value for a property that does not exist until it is created, and answers 409 for a second create', async () => {
    const contact = await fake.createContact({ email: 'p@example.com' }, { notify: false });
    const { client } = api();
    const refused = await client.updateContacts([{ id: contact.id, properties: { wf_household_matched: 'true' } }]);
    expect(refused).toEqual([{ id: contact.id, ok: false, reason: 'validation', message: expect.stringContaining('PROPERTY_DOESNT_EXIST') }]);

    await client.call('create group', { method: 'POST', path: HUBSPOT_PATHS.groups, body: { name: 'enrichbridge', label: 'Windfall enrichment' } }, Ignored);
    const definition = {
      name: 'wf_household_matched',
      label: 'Windfall: Household matched',
      groupName: 'enrichbridge',
      type: 'bool',
      fieldType: 'booleancheckbox',
      options: [
        { label: 'Yes', value: 'true', displayOrder: 0, hidden: false },
        { label: 'No', value: 'false', displayOrder: 1, hidden: false },
      ],
    };
    await client.call('create property', { method: 'POST', path: HUBSPOT_PATHS.properties, body: definition }, Ignored);
    const again = await client
      .call('create property', { method: 'POST', path: HUBSPOT_PATHS.properties, body: definition }, Ignored)
      .catch((error: unknown) => error);
    expect(again).toBeInstanceOf(HubSpotApiError);
    expect(again).toMatchObject({ status: 409, category: 'OBJECT_ALREADY_EXISTS' });

    expect(await client.updateContacts([{ id: contact.id, properties: { wf_household_matched: 'yes' } }])).toEqual([
      { id: contact.id, ok: false, reason: 'validation', message: expect.stringContaining('INVALID_OPTION') },
    ]);
    expect(await client.updateContacts([{ id: contact.id, properties: { wf_household_matched: true } }])).toEqual([{ id: contact.id, ok: true }]);
    const all = await client.call('list properties', { method: 'GET', path: HUBSPOT_PATHS.properties }, Results);
    expect(all.results.find((p) => p.name === 'wf_household_matched')).toMatchObject({ type: 'bool', fieldType: 'booleancheckbox', groupName: 'enrichbridge' });
  });

  it('answers injected 429s the way HubSpot does: burst waited out, daily a limit', async () => {
    const contact = await fake.createContact({ email: 'r@example.com' }, { notify: false });
    const { client, sleeps } = api();
    fake.failNext(1, 'TEN_SECONDLY_ROLLING');
    expect((await client.readContacts([contact.id], ['email'])).size).toBe(1);
    expect(sleeps).toEqual([10_000]);

    fake.failNext(1, 'DAILY');
    const error = await client.readContacts([contact.id], ['email']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CrmError);
    expect(error).toMatchObject({ kind: 'limit_exhausted' });
  });

  it('issues tokens for a code, refuses an expired one with 401, and the client refreshes and retries', async () => {
    const code = fake.tokens.authorizationCode({ redirectUri: 'https://bridge.example.test/oauth/hubspot/callback' });
    const form = { client_id: fake.clientId, client_secret: fake.clientSecret };
    const first = await requestToken(fake.url, {
      ...form,
      grant_type: 'authorization_code',
      code,
      redirect_uri: 'https://bridge.example.test/oauth/hubspot/callback',
    });
    expect(first).toMatchObject({ hub_id: Number(fake.hubId), expires_in: 1800, scopes: expect.arrayContaining(['crm.objects.contacts.write']) });

    let current = first.access_token;
    const { client } = api(
      () => Promise.resolve(current),
      async () => {
        current = (await requestToken(fake.url, { ...form, grant_type: 'refresh_token', refresh_token: first.refresh_token ?? '' })).access_token;
        return current;
      },
    );
    fake.tokens.expire(first.access_token);
    const contact = await fake.createContact({ email: 't@example.com' }, { notify: false });
    expect((await client.readContacts([contact.id], ['email'])).size).toBe(1);
    expect(current).not.toBe(first.access_token);
    expect(
      fake.requests
        .filter((r) => r.path.endsWith('/batch/read'))
        .slice(-2)
        .map((r) => r.status),
    ).toEqual([401, 200]);
    await expect(requestToken(fake.url, { ...form, grant_type: 'authorization_code', code })).rejects.toThrow(/missing or unknown auth code/);
  });

  it('posts signed webhook batches: CRM changes as CRM, our API writes as INTEGRATION with our app id, one batch per burst', async () => {
    const contact = await fake.createContact({ email: 'w@example.com', firstname: 'Wes' });
    expect(received).toHaveLength(1);
    const [delivery] = received;
    const timestamp = Number(delivery?.headers['x-hubspot-request-timestamp']);
    expect(
      Signature.isValid({
        signatureVersion: 'v3',
        signature: String(delivery?.headers['x-hubspot-signature-v3']),
        clientSecret: fake.clientSecret,
        requestBody: delivery?.body ?? '',
        url: targetUrl,
        method: 'POST',
        timestamp,
      }),
    ).toBe(true);
    expect(EventsSchema.parse(JSON.parse(delivery?.body ?? '[]'))).toEqual([
      expect.objectContaining({ subscriptionType: 'contact.creation', objectId: Number(contact.id), portalId: Number(fake.portalId), changeSource: 'CRM' }),
    ]);

    const other = await fake.createContact({ email: 'x@example.com' }, { notify: false });
    received.length = 0;
    const { client } = api();
    await client.updateContacts([
      { id: contact.id, properties: { company: 'Acme', jobtitle: 'CFO' } },
      { id: other.id, properties: { company: 'Acme', jobtitle: 'CEO' } },
    ]);
    await fake.webhooksIdle();
    expect(received).toHaveLength(1);
    const ours = EventsSchema.parse(JSON.parse(received[0]?.body ?? '[]'));
    expect(ours).toHaveLength(4);
    expect(ours.every((e) => e.subscriptionType === 'contact.propertyChange' && e.changeSource === 'INTEGRATION' && e.sourceId === fake.appId)).toBe(true);

    received.length = 0;
    await fake.updateContact(contact.id, { firstname: 'Wesley' });
    expect(EventsSchema.parse(JSON.parse(received[0]?.body ?? '[]'))).toEqual([
      expect.objectContaining({ propertyName: 'firstname', propertyValue: 'Wesley', changeSource: 'CRM', sourceId: expect.stringMatching(/^userId:/) }),
    ]);
  });

  it('serves the rest of what install, provisioning and workflow actions call: batch create, update, archive, groups, account info, callbacks, scopes', async () => {
    const { client } = api();
    await client.call('create group', { method: 'POST', path: HUBSPOT_PATHS.groups, body: { name: 'extra', label: 'Extra' } }, Ignored);
    const text = (name: string) => ({ name, label: name, groupName: 'extra', type: 'string', fieldType: 'text' });
    await client.call('create', { method: 'POST', path: HUBSPOT_PATHS.properties, body: text('wf_one') }, Ignored);
    const batch = await client.call(
      'batch create',
      { method: 'POST', path: HUBSPOT_PATHS.propertiesBatchCreate, body: { inputs: [text('wf_one'), text('wf_two')] } },
      Results,
    );
    expect(batch.results.map((p) => p.name)).toEqual(['wf_two']);
    expect(batch.errors).toEqual([expect.objectContaining({ category: 'OBJECT_ALREADY_EXISTS', context: { name: ['wf_one'] } })]);
    expect(await client.call('update', { method: 'PATCH', path: HUBSPOT_PATHS.property('wf_two'), body: { label: 'Two' } }, z.unknown())).toMatchObject({
      name: 'wf_two',
      label: 'Two',
    });
    await client.call('archive', { method: 'DELETE', path: HUBSPOT_PATHS.property('wf_two') }, Ignored);
    const gone = await client.call('archive', { method: 'DELETE', path: HUBSPOT_PATHS.property('wf_two') }, Ignored).catch((e: unknown) => e);
    expect(gone).toMatchObject({ status: 404 });
    expect((await client.call('groups', { method: 'GET', path: HUBSPOT_PATHS.groups }, Results)).results.map((g) => g.name)).toContain('extra');
    await client.call('archive group', { method: 'DELETE', path: HUBSPOT_PATHS.group('extra') }, Ignored);
    expect(fake.groups.has('extra')).toBe(false);

    const details = await fetch(`${fake.url}${HUBSPOT_PATHS.accountDetails}`, { headers: { authorization: `Bearer ${fake.tokens.staticToken}` } });
    expect(await details.json()).toMatchObject({ portalId: Number(fake.portalId) });

    await client.call(
      'complete',
      {
        method: 'POST',
        path: HUBSPOT_PATHS.callbacksComplete,
        body: { inputs: [{ callbackId: 'cb-42', outputFields: { hs_execution_state: 'SUCCESS' }, typedOutputs: {} }] },
      },
      Ignored,
    );
    expect(fake.callbacks).toEqual([{ callbackId: 'cb-42', body: { outputFields: { hs_execution_state: 'SUCCESS' } } }]);

    const narrow = fake.tokens.issue({ scopes: ['oauth', 'crm.objects.contacts.read'] });
    const readOnly = api(() => Promise.resolve(narrow.accessToken)).client;
    expect(await readOnly.updateContacts([{ id: '1', properties: { company: 'x' } }]).catch((e: unknown) => e)).toMatchObject({ kind: 'auth' });
    expect(
      await api(() => Promise.resolve('not-a-token'))
        .client.readContacts(['1'], ['email'])
        .catch((e: unknown) => e),
    ).toMatchObject({ kind: 'auth' });
  });

  it('raises deletion, privacy deletion and merge events, resolves a merged-away id to its survivor, and redelivers with attemptNumber + 1', async () => {
    const keep = await fake.createContact({ email: 'keep@example.com' }, { notify: false });
    const lose = await fake.createContact({ email: 'lose@example.com', phone: '555' }, { notify: false });
    await fake.mergeContacts(keep.id, lose.id);
    expect(fake.contacts.get(keep.id)?.properties).toMatchObject({ email: 'keep@example.com', phone: '555' });
    const { client } = api();
    expect([...(await client.readContacts([lose.id, keep.id], ['email'])).keys()]).toEqual([keep.id]);
    await fake.deleteContact(keep.id, { privacy: true });
    const types = received.flatMap((r) => EventsSchema.parse(JSON.parse(r.body)).map((e) => e.subscriptionType));
    expect(types).toEqual(['contact.merge', 'contact.privacyDeletion', 'contact.deletion']);
    expect(EventsSchema.parse(JSON.parse(received[0]?.body ?? '[]'))[0]).toMatchObject({
      primaryObjectId: Number(keep.id),
      mergedObjectIds: [Number(lose.id)],
    });
    expect((await client.readContacts([keep.id], ['email'])).size).toBe(0);

    const last = fake.deliveries.at(-1);
    if (last === undefined) throw new Error('no delivery');
    const again = await fake.redeliver(last);
    expect(again.status).toBe(204);
    expect(again.events.map((e) => e.attemptNumber)).toEqual([1, 1]);
    expect(again.events.map((e) => e.eventId)).toEqual(last.events.map((e) => e.eventId));
  });

  it('answers 410 to every numbered (legacy) API path, as HubSpot will once they are retired', async () => {
    for (const [method, path] of [
      ['POST', '/oauth/v1/token'],
      ['GET', '/oauth/v1/access-tokens/CNa1-x'],
      ['POST', '/crm/v3/objects/contacts/batch/update'],
      ['GET', '/crm/v3/properties/contacts'],
      ['POST', '/automation/v4/actions/callbacks/complete'],
      ['GET', '/settings/v3/users/1'],
      ['GET', '/account-info/v3/details'],
    ] as const) {
      const response = await fetch(`${fake.url}${path}`, { method, headers: { authorization: `Bearer ${fake.tokens.staticToken}` } });
      expect([path, response.status]).toEqual([path, 410]);
    }
  });
});
