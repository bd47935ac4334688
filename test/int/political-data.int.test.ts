// Political data is a special category: over real HTTP, production and the sandbox answer household
// political_donor, top_political_donor and political_party only to an account entitled to political
// data, whatever its household field list says; every other field is answered as before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POLITICAL_HOUSEHOLD_FIELDS } from '../../core/contract/schemas.ts';
import { type TestServer, post, startTestServer } from '../support/harness.ts';
import { PersonaProductionMatcher } from '../support/persona-matcher.ts';
import { UNTHROTTLED, byEmail, persona } from '../support/requests.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ productionMatcher: new PersonaProductionMatcher() });
});
afterAll(async () => {
  await server.close();
});

const amanda = persona('Amanda Taylor');
const ENDPOINTS = [
  ['production', '/v1/'],
  ['sandbox', '/sandbox/v1'],
] as const;

/** The household an account with `settings` is answered for Amanda Taylor, on each endpoint. */
async function households(name: string, settings: Parameters<TestServer['account']>[1]): Promise<Map<string, Record<string, unknown>>> {
  await server.account(name, { careerIntelligence: true, ...UNTHROTTLED, ...settings }, 'production');
  const answered = new Map<string, Record<string, unknown>>();
  for (const [environment, path] of ENDPOINTS) {
    const reply = await post(`${server.url}${path}`, byEmail(amanda), { 'X-WF-Auth-Token': await server.token(name, environment) });
    expect(reply.status, environment).toBe(200);
    const body = reply.body as { household_matched: boolean; household: Record<string, unknown> }; // checked field by field below
    expect(body.household_matched, environment).toBe(true);
    answered.set(environment, body.household);
  }
  return answered;
}

describe('political data needs its entitlement, on production and in the sandbox', () => {
  it('an account not entitled to political fields gets none of them', async () => {
    const withoutPolitics = Object.fromEntries(Object.entries(amanda.household ?? {}).filter(([key]) => !POLITICAL_HOUSEHOLD_FIELDS.some((f) => f === key)));
    for (const [environment, household] of await households('not-entitled', { politicalData: false })) {
      expect(household, environment).toEqual(withoutPolitics);
    }
    // Naming them in the household field list does not grant them.
    for (const [environment, household] of await households('listed-not-entitled', { householdFields: 'net_worth,political_party,political_donor' })) {
      expect(household, environment).toEqual({
        windfall_id: amanda.household?.windfall_id,
        confidence: amanda.household?.confidence,
        net_worth: amanda.household?.net_worth,
      });
    }
  });

  it('an account entitled to political fields gets them', async () => {
    for (const [environment, household] of await households('entitled', { politicalData: true })) {
      expect(household, environment).toEqual(amanda.household);
      for (const field of POLITICAL_HOUSEHOLD_FIELDS) expect(household, `${environment} ${field}`).toHaveProperty(field);
    }
  });

  it('a new account is not entitled to political fields until it is granted', async () => {
    for (const [environment, household] of await households('new-account', {})) {
      for (const field of POLITICAL_HOUSEHOLD_FIELDS) expect(household, `${environment} ${field}`).not.toHaveProperty(field);
    }
  });
});
