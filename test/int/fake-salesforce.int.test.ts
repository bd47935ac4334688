// The Salesforce fake (test/support/fake-salesforce.ts) driven by our own client, so the fake and SalesforceApi
// agree: collections retrieve, SOQL with Account.Name (and its paging), collections update with per-record
// SaveResults, a 401, the limit header and faults; and its outbound messages read by our parser.
import { type Server, createServer } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CrmError } from '../../bridge/connector.ts';
import { SalesforceApi } from '../../connectors/salesforce/api.ts';
import { SalesforceConnector, readFields } from '../../connectors/salesforce/connector.ts';
import { OUTBOUND_ACK_XML, parseOutboundMessage, soapFault } from '../../connectors/salesforce/outbound-xml.ts';
import { toSalesforceId18 } from '../../connectors/salesforce/ids.ts';
import { PRIVACY_FIELDS } from '../../connectors/salesforce/privacy.ts';
import { type FakeSalesforce, startFakeSalesforce } from '../support/fake-salesforce.ts';
import { persona } from '../support/requests.ts';
import { caught } from '../support/harness.ts';

let fake: FakeSalesforce;
let receiver: Server;
let receiverUrl: string;
/** What the receiver answers the next outbound message with. */
let reply: { status: number; type: string; body: string } = { status: 200, type: 'text/xml; charset=utf-8', body: OUTBOUND_ACK_XML };
const received: string[] = [];
let orgs = 0;

function api(token?: string): SalesforceApi {
  orgs += 1;
  return new SalesforceApi({
    // A limiter of its own per client.
    orgId: `${fake.orgId}-${orgs}`,
    session: () => Promise.resolve({ instanceUrl: fake.url, accessToken: token ?? fake.accessToken }),
    allowAnyHost: true,
    sleep: () => Promise.resolve(),
  });
}

const amanda = persona('Amanda Taylor');
const daniel = persona('Daniel Garcia');

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(reply.status, { 'content-type': reply.type }).end(reply.body);
    });
  });
  await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
  const address = receiver.address();
  receiverUrl = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}/webhooks/salesforce/outbound-message`;
  fake = await startFakeSalesforce({ outboundUrl: receiverUrl, queryPageSize: 2 });
});
afterEach(() => {
  received.length = 0;
  reply = { status: 200, type: 'text/xml; charset=utf-8', body: OUTBOUND_ACK_XML };
});
afterAll(async () => {
  await fake.close();
  await new Promise<void>((done) => receiver.close(() => done()));
});

describe('the Salesforce fake, through SalesforceApi', () => {
  it('hands out canonical 18-character ids with the key prefix of each object', async () => {
    const account = fake.createAccount('Magnolia Crossing Logistics');
    const contact = await fake.createContact({ LastName: 'Id' }, { notify: false });
    const lead = await fake.createLead({ LastName: 'Id', Company: 'X' }, { notify: false });
    for (const [record, prefix] of [
      [account, '001'],
      [contact, '003'],
      [lead, '00Q'],
    ] as const) {
      expect(record.id).toHaveLength(18);
      expect(record.id.startsWith(prefix)).toBe(true);
      expect(toSalesforceId18(record.id.slice(0, 15))).toBe(record.id);
    }
    expect(toSalesforceId18(fake.orgId)).toBe(fake.orgId);
  });

  it('reads Contacts with Account.Name and Leads, each with their Individual’s privacy flags, through SOQL (paged); deleted and converted are gone', async () => {
    const account = fake.createAccount('Magnolia Crossing Logistics');
    const contacts = await fake.createRecords(
      'Contact',
      [amanda, daniel, persona('Michelle Robinson')].map((p) => ({ FirstName: p.first_name, LastName: p.last_name, Email: p.email, AccountId: account.id })),
      { notify: false },
    );
    const [c1, c2, c3] = contacts.map((c) => c.id);
    const gone = await fake.createContact({ LastName: 'Gone' }, { notify: false });
    fake.deleteRecord(gone.id);
    const connector = new SalesforceConnector(api());

    // 15-character ids are answered by their records too (the fake pages 2 rows at a time).
    const ids = [c1 ?? '', (c2 ?? '').slice(0, 15), c3 ?? '', gone.id];
    const read = await connector.read('Contact', ids);
    expect([...read.keys()]).toEqual(ids.slice(0, 3));
    expect(read.get(c1 ?? '')?.properties).toMatchObject({
      FirstName: 'Amanda',
      Email: amanda.email,
      'Account.Name': 'Magnolia Crossing Logistics',
      WF_HH_Net_Worth__c: null,
    });
    const queries = fake.requests.filter((r) => r.path.startsWith('/services/data/v62.0/query'));
    expect(queries.map((r) => r.status)).toEqual([200, 200]);
    expect(queries[0]?.query['q']).toMatch(/^SELECT Id, FirstName, .*Account\.Name.* FROM Contact WHERE Id IN \('/);

    const lead = await fake.createLead(
      { FirstName: daniel.first_name, LastName: daniel.last_name, Email: daniel.email, Company: 'Bluebonnet' },
      { notify: false },
    );
    const converted = await fake.createLead({ LastName: 'Converted', Company: 'C' }, { notify: false });
    await fake.convertLead(converted.id, { notify: false });
    const leads = await connector.read('Lead', [lead.id, converted.id]);
    expect([...leads.keys()]).toEqual([lead.id]);
    expect(leads.get(lead.id)?.properties).toMatchObject({ Email: daniel.email, Company: 'Bluebonnet' });
    // With the Individual's privacy flags (a relationship path), a Lead is read by SOQL too: one call.
    const leadRead = fake.requests.at(-1);
    expect(leadRead).toMatchObject({ method: 'GET', path: '/services/data/v62.0/query', status: 200 });
    expect(leadRead?.query['q']).toBe(
      `SELECT Id, ${[...readFields('Lead'), ...PRIVACY_FIELDS, 'IsConverted'].join(', ')} FROM Lead WHERE Id IN ('${lead.id}', '${converted.id}')`,
    );
  });

  it('updates with per-record SaveResults: success, ENTITY_IS_DELETED, CANNOT_UPDATE_CONVERTED_LEAD, a value too long', async () => {
    const client = api();
    const live = await fake.createContact({ LastName: 'Live' }, { notify: false });
    const deleted = await fake.createContact({ LastName: 'Deleted' }, { notify: false });
    fake.deleteRecord(deleted.id);
    const results = await client.update('Contact', [
      {
        id: live.id,
        properties: {
          WF_Enrichment_Status__c: 'enriched',
          WF_HH_Net_Worth__c: 2_400_000,
          WF_Household_Matched__c: true,
          WF_Enriched_At__c: '2026-05-04T14:10:00.000Z',
        },
      },
      { id: deleted.id, properties: { WF_Enrichment_Status__c: 'enriched' } },
      { id: live.id, properties: { WF_Career_Job_Title__c: 'x'.repeat(256) } },
    ]);
    expect(results).toEqual([
      { id: live.id, ok: true },
      // Salesforce's codes and the fields they name; never its words, which can echo the values sent.
      { id: deleted.id, ok: false, reason: 'not_found', message: 'ENTITY_IS_DELETED' },
      { id: live.id, ok: false, reason: 'rejected', message: 'STRING_TOO_LONG (WF_Career_Job_Title__c)' },
    ]);
    // Stored as Salesforce answers it: a DateTime with +0000.
    expect(fake.record(live.id).fields).toMatchObject({
      WF_HH_Net_Worth__c: 2_400_000,
      WF_Household_Matched__c: true,
      WF_Enriched_At__c: '2026-05-04T14:10:00.000+0000',
    });
    expect(fake.record(live.id).lastModifiedBy).toBe('enrichbridge');
    expect(fake.updatesOf(live.id)).toHaveLength(1);
    expect(fake.updatesOf(live.id)[0]?.callOptions).toBe('client=enrichbridge');
    expect(client.apiUsage).toEqual({ used: fake.apiUsage.used, max: 15_000 });

    const lead = await fake.createLead({ LastName: 'Converted', Company: 'C' }, { notify: false });
    await fake.convertLead(lead.id, { notify: false });
    expect(await client.update('Lead', [{ id: lead.id, properties: { WF_Enrichment_Status__c: 'enriched' } }])).toEqual([
      { id: lead.id, ok: false, reason: 'not_found', message: 'CANNOT_UPDATE_CONVERTED_LEAD' },
    ]);

    // A field that is not deployed refuses the whole call (400 INVALID_FIELD).
    fake.schema.get('Contact')?.delete('wf_hh_boat_owner__c');
    const refused = await client.update('Contact', [{ id: live.id, properties: { WF_HH_Boat_Owner__c: true } }]);
    expect(refused).toEqual([{ id: live.id, ok: false, reason: 'rejected', message: expect.stringContaining('INVALID_FIELD') }]);
  });

  it('answers a refused token with 401 INVALID_SESSION_ID, and injected faults as Salesforce does', async () => {
    const before = fake.requests.length;
    const refused = await caught(api('not-a-token').send('check', { method: 'GET', url: '/services/data/v62.0/' }));
    expect(refused).toBeInstanceOf(CrmError);
    expect(refused).toMatchObject({ kind: 'auth', message: expect.stringContaining('401 INVALID_SESSION_ID') });
    expect(fake.requests.slice(before).map((r) => [r.status, r.token, r.headers['sforce-call-options']])).toEqual([
      [401, 'not-a-token', 'client=enrichbridge'],
    ]);

    fake.failNext(1, 'UNAVAILABLE');
    expect(await caught(api().send('check', { method: 'GET', url: '/services/data/v62.0/' }))).toMatchObject({ kind: 'transient' });
    fake.failNext(1, 'REQUEST_LIMIT_EXCEEDED');
    expect(await caught(api().send('check', { method: 'GET', url: '/services/data/v62.0/' }))).toMatchObject({ kind: 'limit_exhausted' });
    fake.apiUsage.used = 0;
    // The default API version of jsforce (50.0) is not one this org answers.
    expect(await caught(api().send('check', { method: 'GET', url: '/services/data/v50.0/' }))).toMatchObject({ status: 404, errorCode: 'NOT_FOUND' });
  });
});

describe("the fake's outbound messages", () => {
  it('are envelopes our parser reads, up to 100 notifications, each with a fresh notification id; an Ack is told from anything else', async () => {
    const leads = await fake.createRecords(
      'Lead',
      Array.from({ length: 101 }, (_, i) => ({ LastName: `Lead ${i}`, Company: 'Bulk', Email: i === 0 ? 'a&b@example.com' : null })),
    );
    const sent = fake.deliveries.slice(-2);
    expect(sent.map((d) => [d.trigger, d.notifications.length, d.acked])).toEqual([
      ['create', 100, true],
      ['create', 1, true],
    ]);
    const message = parseOutboundMessage(received[0] ?? '');
    expect(message.organizationId).toBe(fake.orgId);
    expect(message.notifications.map((n) => n.recordId)).toEqual(leads.slice(0, 100).map((l) => l.id));
    expect(new Set(message.notifications.map((n) => n.id)).size).toBe(100);
    expect(message.notifications[0]?.fields).toMatchObject({ Id: leads[0]?.id, Email: 'a&b@example.com', Company: 'Bulk', FirstName: null });

    // A record whose WF_Enriched_At__c is set fires nothing (the flows' filter).
    await fake.createContact({ LastName: 'Enriched', WF_Enriched_At__c: '2026-01-01T00:00:00Z' });
    expect(received).toHaveLength(2);

    reply = { status: 200, type: 'text/plain', body: 'OK' };
    const plain = await fake.fire(leads.slice(0, 1));
    expect(plain).toMatchObject({ status: 200, acked: false, fault: null });
    reply = { status: 500, type: 'text/xml', body: soapFault('nope') };
    expect(await fake.redeliver(plain)).toMatchObject({ status: 500, acked: false, fault: 'nope', trigger: 'redelivery', body: plain.body });
  });

  it('fire on creation only with the deployed flows; with an update trigger, our write (WF_Enriched_At__c set) still fires none', async () => {
    const client = api();
    const contact = await fake.createContact({ LastName: 'Once' });
    expect(fake.deliveriesOf(contact.id)).toHaveLength(1);
    await client.update('Contact', [{ id: contact.id, properties: { WF_Enrichment_Status__c: 'enriched' } }]);
    expect(fake.deliveriesOf(contact.id)).toHaveLength(1);

    const onSave = await startFakeSalesforce({ outboundUrl: receiverUrl, triggerOn: 'createOrUpdate' });
    try {
      const other = new SalesforceApi({
        orgId: onSave.orgId,
        session: () => Promise.resolve({ instanceUrl: onSave.url, accessToken: onSave.accessToken }),
        allowAnyHost: true,
      });
      const record = await onSave.createContact({ LastName: 'Saved' });
      await other.update('Contact', [{ id: record.id, properties: { WF_Enrichment_Status__c: 'no_match' } }]);
      await onSave.outboundIdle();
      expect(onSave.deliveriesOf(record.id).map((d) => d.trigger)).toEqual(['create', 'update']);
      await other.update('Contact', [{ id: record.id, properties: { WF_Enriched_At__c: '2026-05-04T14:10:00Z' } }]);
      await other.update('Contact', [{ id: record.id, properties: { WF_Enrichment_Status__c: 'enriched' } }]);
      await onSave.outboundIdle();
      expect(onSave.deliveriesOf(record.id).map((d) => d.trigger)).toEqual(['create', 'update']);
    } finally {
      await onSave.close();
    }
  });
});
