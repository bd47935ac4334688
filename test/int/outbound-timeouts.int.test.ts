// Every outbound call has a timeout, and a caller's signal aborts it at once: HubSpot's API (the SDK
// sets no timeout of its own), Salesforce's REST API (jsforce's timeout ends at the headers), the OAuth
// token endpoints of both, and a remote enrichment endpoint. Against loopback servers that accept the
// connection and never answer, or answer headers and stall the body.
import { afterEach, describe, expect, it } from 'vitest';
import { HttpEnricher } from '../../core/client/http-enricher.ts';
import { DEFAULT_OUTBOUND_TIMEOUTS, setOutboundTimeouts } from '../../core/client/timeouts.ts';
import { CrmTimeoutError } from '../../bridge/connector.ts';
import { HubSpotApi } from '../../connectors/hubspot/api.ts';
import { HubSpotAuthError, requestToken } from '../../connectors/hubspot/auth.ts';
import { SalesforceApi } from '../../connectors/salesforce/api.ts';
import { SalesforceAuthError, exchangeCode } from '../../connectors/salesforce/auth.ts';
import { type HangingServer, startHangingServer } from '../support/hanging-server.ts';
import { caught } from '../support/harness.ts';

const servers: HangingServer[] = [];
afterEach(async () => {
  setOutboundTimeouts(DEFAULT_OUTBOUND_TIMEOUTS);
  for (const server of servers.splice(0)) await server.close();
});

async function hanging(mode: 'silent' | 'stalled-body' = 'silent'): Promise<HangingServer> {
  const server = await startHangingServer(mode);
  servers.push(server);
  return server;
}

/** Resolves once the server has `count` requests open (the call is in flight). */
async function inFlight(server: HangingServer, count = 1): Promise<void> {
  while (server.pending() < count) await new Promise((resolve) => setTimeout(resolve, 10));
}

let portals = 0;
function hubspotApi(url: string, timeoutMs?: number): HubSpotApi {
  portals += 1;
  return new HubSpotApi({
    portalId: `timeouts-${portals}`,
    apiBaseUrl: url,
    accessToken: () => Promise.resolve('pat-na1-token'),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  });
}

let orgs = 0;
function salesforceApi(url: string, timeoutMs?: number): SalesforceApi {
  orgs += 1;
  return new SalesforceApi({
    orgId: `00D5g0000099${String(orgs).padStart(3, '0')}AAA`,
    session: () => Promise.resolve({ instanceUrl: url, accessToken: 'tok' }),
    allowAnyHost: true,
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  });
}

const LEAD = '00Q5g00000AbCdEAAV';

// A hang limit per test: before the fix these calls never came back.
describe('every outbound call has a timeout', { timeout: 10_000 }, () => {
  it('a HubSpot API call that never answers times out (transient, retried by the queue), and its connection is closed', async () => {
    const server = await hanging();
    const error = await caught(hubspotApi(server.url, 300).readContacts(['101'], ['email']));
    expect(error).toBeInstanceOf(CrmTimeoutError);
    expect(error).toMatchObject({ kind: 'transient', message: expect.stringMatching(/HubSpot batch read contacts: no answer within 300 ms/) });
    await expect.poll(() => server.pending()).toBe(0);
  });

  it('a HubSpot answer whose body stalls times out too', async () => {
    const server = await hanging('stalled-body');
    expect(await caught(hubspotApi(server.url, 300).readContacts(['101'], ['email']))).toBeInstanceOf(CrmTimeoutError);
  });

  it('a HubSpot API call takes its timeout from the process settings (HUBSPOT_TIMEOUT_MS)', async () => {
    const server = await hanging();
    setOutboundTimeouts({ hubspotMs: 200 });
    expect(await caught(hubspotApi(server.url).updateContacts([{ id: '101', properties: { wf_x: '1' } }]))).toMatchObject({
      message: expect.stringMatching(/within 200 ms/),
    });
  });

  it("a HubSpot API call in flight is aborted at once by the caller's signal", async () => {
    const server = await hanging();
    const stop = new AbortController();
    const call = caught(hubspotApi(server.url, 60_000).readContacts(['101'], ['email'], { signal: stop.signal }));
    await inFlight(server);
    stop.abort(new Error('the worker is stopping'));
    expect(await call).toMatchObject({ message: expect.stringMatching(/the worker is stopping/) });
    await expect.poll(() => server.pending()).toBe(0);
  });

  it('a Salesforce REST call that never answers times out', async () => {
    const server = await hanging();
    const error = await caught(salesforceApi(server.url, 300).retrieve('Lead', [LEAD], ['Email']));
    expect(error).toBeInstanceOf(CrmTimeoutError);
    expect(error).toMatchObject({ kind: 'transient', message: expect.stringMatching(/Salesforce retrieve Lead: no answer within 300 ms/) });
  });

  it("a Salesforce answer whose body stalls after the headers times out too (jsforce's own timeout ends at the headers)", async () => {
    const server = await hanging('stalled-body');
    setOutboundTimeouts({ salesforceMs: 300 });
    expect(await caught(salesforceApi(server.url).retrieve('Lead', [LEAD], ['Email']))).toBeInstanceOf(CrmTimeoutError);
  });

  it("a Salesforce REST call in flight is aborted at once by the caller's signal", async () => {
    const server = await hanging();
    const stop = new AbortController();
    const call = caught(salesforceApi(server.url, 60_000).update('Lead', [{ id: LEAD, properties: { WF_X__c: '1' } }], { signal: stop.signal }));
    await inFlight(server);
    stop.abort(new Error('the worker is stopping'));
    expect(await call).toMatchObject({ message: expect.stringMatching(/the worker is stopping/) });
  });

  it('the HubSpot token endpoint (code exchange, refresh) times out after TOKEN_TIMEOUT_MS', async () => {
    const server = await hanging();
    setOutboundTimeouts({ tokenMs: 300 });
    const error = await caught(requestToken(server.url, { grant_type: 'refresh_token', refresh_token: 'r', client_id: 'c', client_secret: 's' }));
    expect(error).toBeInstanceOf(HubSpotAuthError);
    expect(error).toMatchObject({ kind: 'transient', message: expect.stringMatching(/no answer within 300 ms/) });
  });

  it('the Salesforce token endpoint times out after TOKEN_TIMEOUT_MS', async () => {
    const server = await hanging();
    setOutboundTimeouts({ tokenMs: 300 });
    const error = await caught(
      exchangeCode({
        loginUrl: server.url,
        clientId: 'c',
        clientSecret: null,
        redirectUri: 'https://bridge.example.com/cb',
        code: 'code',
        codeVerifier: 'v',
        allowAnyHost: true,
      }),
    );
    expect(error).toBeInstanceOf(SalesforceAuthError);
    expect(error).toMatchObject({ kind: 'transient', message: expect.stringMatching(/no answer within 300 ms/) });
  });

  it('a remote enricher that never answers: the attempt times out and is not retried in the call (the queue retries it)', async () => {
    const server = await hanging();
    const enricher = new HttpEnricher({ url: `${server.url}/v1/`, token: 'tok', timeoutMs: 200, retry: { maxAttempts: 5, baseDelayMs: 1, maxDelayMs: 10 } });
    expect(await enricher.enrich({ emails: ['someone@example.com'] })).toMatchObject({ kind: 'failed', status: null, attempts: 1, timedOut: true });
    expect(server.requests()).toBe(1);
  });

  it("a remote enrichment in flight is aborted at once by the caller's signal", async () => {
    const server = await hanging();
    setOutboundTimeouts({ enrichMs: 60_000 });
    const enricher = new HttpEnricher({ url: `${server.url}/v1/`, token: 'tok' });
    const stop = new AbortController();
    const outcome = enricher.enrich({ emails: ['someone@example.com'] }, { signal: stop.signal });
    await inFlight(server);
    stop.abort(new Error('the worker is stopping'));
    expect(await outcome).toMatchObject({ kind: 'failed', status: null, attempts: 1 });
    await expect.poll(() => server.pending()).toBe(0);
  });
});
