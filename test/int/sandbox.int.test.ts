// The spec's Sandbox behaviour rules and error simulation, over real HTTP: deterministic persona
// answers, the three matchers, omitted objects, Career Intelligence, entitlements, no billing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeAccount } from '../../core/accounts/admin.ts';
import { CAREER_FIELDS, HOUSEHOLD_FIELDS } from '../../core/contract/schemas.ts';
import { currentPeriod } from '../../core/limits/quota-period.ts';
import { PERSONAS } from '../../core/sandbox/personas.ts';
import { type TestServer, post, startTestServer } from '../support/harness.ts';
import { UNTHROTTLED, byAddress, byEmail, byPhoneAndName, persona } from '../support/requests.ts';

let server: TestServer;
let ci: string; // Career Intelligence and political data on
let noCi: string;

beforeAll(async () => {
  server = await startTestServer();
  ci = await server.account('sandbox-ci', { careerIntelligence: true, politicalData: true, ...UNTHROTTLED }, 'sandbox');
  noCi = await server.account('sandbox-no-ci', { careerIntelligence: false, ...UNTHROTTLED }, 'sandbox');
});
afterAll(async () => {
  await server.close();
});

const ask = (body: unknown, token = ci, headers: Record<string, string> = {}) =>
  post(`${server.url}/sandbox/v1`, body, { 'X-WF-Auth-Token': token, ...headers });

const amanda = persona('Amanda Taylor');

describe('Sandbox rule 1: responses are deterministic', () => {
  it('gives the same response to the same request, every time', async () => {
    const request = { id: 'r', first_name: 'amanda', last_name: 'TAYLOR', phones: ['(555) 300-0001'] };
    const replies = await Promise.all([1, 2, 3, 4, 5].map(() => ask(request)));
    for (const reply of replies) expect(reply.text).toBe(replies[0]?.text);
  });
});

describe('Sandbox rule 2: 15 personas in 3 categories of 5; every response field is populated by one of them', () => {
  it('answers each persona according to its category', async () => {
    const seenHousehold = new Set<string>();
    const seenCareer = new Set<string>();
    for (const p of PERSONAS) {
      const reply = await ask(byEmail(p));
      expect(reply.status).toBe(200);
      const body = reply.body as Record<string, Record<string, unknown> | boolean>; // checked field by field below
      const hasHousehold = p.category !== 'career_only';
      const hasCareer = p.category !== 'household_only';
      expect(body.household_matched, p.first_name).toBe(hasHousehold);
      expect(body.career_matched, p.first_name).toBe(hasCareer);
      const household = body.household;
      const career = body.career;
      if (typeof household === 'object') for (const [k, v] of Object.entries(household)) if (v !== '' && v !== null) seenHousehold.add(k);
      if (typeof career === 'object') for (const [k, v] of Object.entries(career)) if (v !== '' && v !== null) seenCareer.add(k);
    }
    expect([...seenHousehold].sort()).toEqual([...HOUSEHOLD_FIELDS].sort());
    expect([...seenCareer].sort()).toEqual([...CAREER_FIELDS].sort());
  });
});

describe('Sandbox rule 3: a request matches a persona when one of the matchers resolves', () => {
  it.each(PERSONAS.map((p) => [`${p.first_name} ${p.last_name}`, p] as const))('%s by e-mail, by full address, by phone and name', async (_name, p) => {
    const expected = { household_matched: p.category !== 'career_only', career_matched: p.category !== 'household_only' };
    for (const request of [byEmail(p), byAddress(p), byPhoneAndName(p)]) {
      const reply = await ask(request);
      expect(reply.body, JSON.stringify(request)).toMatchObject(expected);
    }
  });

  it('tolerates case, spacing and phone formatting', async () => {
    const variants = [
      { emails: ['  Amanda.Taylor@SANDBOX.windfall.com '] },
      { addresses: [{ address: '  100  demo   STREET ', zipcode: '30301-1234' }] },
      { first_name: 'AMANDA', last_name: ' taylor ', phones: ['(555) 300-0001'] },
      { first_name: 'Amanda', last_name: 'Taylor', phones: ['+1 555 300 0001'] },
      { first_name: 'Amanda', last_name: 'Taylor', phones: ['555.300.0001'] },
      { last_name: 'Amanda Taylor', phones: ['5553000001'] },
      { addresses: [{ address: '100 Demo St, Atlanta, GA 30301' }] },
    ];
    for (const request of variants) {
      const reply = await ask(request);
      expect(reply.body, JSON.stringify(request)).toMatchObject({ household_matched: true, career_matched: true });
      expect(reply.body).toHaveProperty('household.windfall_id', amanda.household?.windfall_id);
    }
  });
});

describe("Sandbox: the maker's own sandbox example matches here too", () => {
  it("matches Jane Doe from the maker's sandbox page request (100 Sandbox Ln, 80201), byte for byte", async () => {
    // The exact body of the curl example on the maker's sandbox page (its public
    // sandbox.curl_request), so a QA suite written against the maker's sandbox runs unchanged.
    const makerExample = { first_name: 'Jane', last_name: 'Doe', addresses: [{ address: '100 Sandbox Ln', zipcode: '80201' }] };
    const reply = await ask(makerExample);
    expect(reply.status).toBe(200);
    const jane = persona('Jane Doe');
    expect(reply.body).toMatchObject({ household_matched: true, career_matched: false, household: { windfall_id: jane.household?.windfall_id } });
    expect(reply.body).not.toHaveProperty('career');
  });

  it("needs the maker's zipcode with that street, as every address does", async () => {
    const wrongZip = await ask({ first_name: 'Jane', last_name: 'Doe', addresses: [{ address: '100 Sandbox Ln', zipcode: '80202' }] });
    expect(wrongZip.body).toMatchObject({ household_matched: false, career_matched: false });
  });
});

describe('Sandbox rule 4: name alone and partial addresses do not match; extra non-matching fields are harmless', () => {
  it('does not match on name alone, street without zipcode, zipcode alone, or phone without name', async () => {
    const misses = [
      { first_name: 'Amanda', last_name: 'Taylor' },
      { first_name: 'Amanda', last_name: 'Taylor', addresses: [{ address: '100 Demo St', city: 'Atlanta', state: 'GA' }] },
      { addresses: [{ zipcode: '30301' }] },
      { addresses: [{ address: 'Demo St', zipcode: '30301' }] },
      { phones: ['5553000001'] },
      { first_name: 'Someone', last_name: 'Else', phones: ['5553000001'] },
      { addresses: [{ address: '100 Demo St', zipcode: '30302' }] },
    ];
    for (const request of misses) {
      const reply = await ask(request);
      expect(reply.body, JSON.stringify(request)).toEqual({ household_matched: false, career_matched: false });
    }
  });

  it('matches once any matcher resolves, whatever else the request carries', async () => {
    const reply = await ask({
      first_name: 'Wrong',
      last_name: 'Name',
      emails: ['nobody@example.com', amanda.email],
      phones: ['5559999999'],
      addresses: [{ address: '1 Nowhere Rd', zipcode: '99999' }],
      company_name: 'Unrelated Inc',
    });
    expect(reply.body).toMatchObject({ household_matched: true, career_matched: true });
  });
});

describe('Sandbox rule 5: a request that matches no persona gives both flags false and no objects', () => {
  it('omits household and career', async () => {
    const reply = await ask({ emails: ['nobody@example.com'] });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ household_matched: false, career_matched: false });
  });
});

describe('Sandbox rule 6: an object whose flag is false is omitted, not null', () => {
  it('household-only personas have no career key; career-only personas have no household key', async () => {
    const householdOnly = await ask(byEmail(persona('Jane Doe')));
    expect(householdOnly.body).toHaveProperty('household');
    expect(householdOnly.body).not.toHaveProperty('career');
    const careerOnly = await ask(byEmail(persona('David Wilson')));
    expect(careerOnly.body).toHaveProperty('career');
    expect(careerOnly.body).not.toHaveProperty('household');
  });
});

describe('Sandbox rule 7: career matching requires Career Intelligence', () => {
  it('without CI, household-and-career personas give household only and career-only personas give nothing', async () => {
    const both = await ask(byEmail(amanda), noCi);
    expect(both.body).toMatchObject({ household_matched: true, career_matched: false });
    expect(both.body).not.toHaveProperty('career');
    const careerOnly = await ask(byEmail(persona('Christopher Lee')), noCi);
    expect(careerOnly.body).toEqual({ household_matched: false, career_matched: false });
  });
});

describe('Sandbox rule 8: sandbox calls are not billed and do not draw from the quota', () => {
  it('answers an account whose quota is zero, and writes no usage for its sandbox token', async () => {
    const sandboxToken = await server.account('sandbox-no-quota', { quotaLimit: 0, ...UNTHROTTLED }, 'sandbox');
    // Were the sandbox billed, a zero quota would answer 402 here.
    for (let i = 0; i < 5; i += 1) expect((await ask(byEmail(amanda), sandboxToken)).status).toBe(200);
    const { tokens } = await describeAccount(server.store, 'sandbox-no-quota');
    for (const { token } of tokens) {
      for (const period of ['all', currentPeriod('month', new Date()).key]) expect(await server.store.quotaUsed(token.id, period)).toBe(0);
    }
  });
});

describe("Sandbox: the account's field entitlements are honoured", () => {
  it('returns only granted fields plus the identity fields', async () => {
    const token = await server.account(
      'sandbox-fields',
      { careerIntelligence: true, householdFields: 'net_worth,boat_owner', careerFields: 'job_title', ...UNTHROTTLED },
      'sandbox',
    );
    const reply = await ask(byEmail(amanda), token);
    expect(reply.body).toEqual({
      household_matched: true,
      career_matched: true,
      household: {
        windfall_id: amanda.household?.windfall_id,
        confidence: amanda.household?.confidence,
        net_worth: amanda.household?.net_worth,
        boat_owner: amanda.household?.boat_owner,
      },
      career: { confidence: amanda.career?.confidence, job_title: amanda.career?.job_title },
    });
  });
});

describe('Sandbox error simulation', () => {
  it.each([
    ['X-Service-Sandbox-Error', '400', 400],
    ['X-Service-Sandbox-Error', '429', 429],
    ['X-Service-Sandbox-Error', '500', 500],
    ['X-Service-Sandbox-Error', '503', 503],
    ['X-Windfall-Sandbox-Error', '400', 400],
    ['X-Windfall-Sandbox-Error', '429', 429],
    ['X-Windfall-Sandbox-Error', '500', 500],
    ['X-Windfall-Sandbox-Error', '503', 503],
  ])('%s: %s returns that status with a {message} body', async (header, value, status) => {
    const reply = await ask(byEmail(amanda), ci, { [header]: value });
    expect(reply.status).toBe(status);
    expect(reply.body).toEqual({ message: expect.stringMatching(/^Simulated /) });
    if (status === 429) expect(reply.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  it('answers any other header value with a 400 {message}', async () => {
    const reply = await ask(byEmail(amanda), ci, { 'X-Service-Sandbox-Error': '418' });
    expect(reply.status).toBe(400);
    expect(reply.body).toEqual({ message: expect.stringContaining('400, 429, 500 or 503') });
  });

  it('simulates only after authentication: a bad token still gets 401, a production token 403', async () => {
    expect((await ask(byEmail(amanda), 'sandbox_not-a-token', { 'X-Service-Sandbox-Error': '500' })).status).toBe(401);
    const production = await server.token('sandbox-ci', 'production');
    expect((await ask(byEmail(amanda), production, { 'X-Service-Sandbox-Error': '500' })).status).toBe(403);
  });

  it('is a sandbox feature only: production ignores the header', async () => {
    const production = await server.token('sandbox-ci', 'production');
    const reply = await post(`${server.url}/v1/`, byEmail(amanda), { 'X-WF-Auth-Token': production, 'X-Service-Sandbox-Error': '400' });
    // No snapshot is loaded, so production's own answer is 503, not the simulated 400.
    expect(reply.status).toBe(503);
    expect(reply.body).toEqual({ error: 'service_unavailable', message: expect.any(String) });
  });
});
