// Unit tests of the 15 sandbox personas (docs/reference/contract.md's names, identifier pattern and field coverage)
// and of the sandbox matcher's three rules: e-mail; address with zipcode; phone with first and last name.
import { describe, expect, it } from 'vitest';
import { CAREER_FIELDS, CareerSchema, type EnrichmentRequest, HOUSEHOLD_FIELDS, HouseholdSchema } from '../../core/contract/schemas.ts';
import { matchPersona } from '../../core/sandbox/matcher.ts';
import { PERSONAS, type Persona } from '../../core/sandbox/personas.ts';

const CONTRACT_NAMES = {
  household_and_career: ['Amanda Taylor', 'Daniel Garcia', 'Michelle Robinson', 'James Thompson', 'Catherine White'],
  household_only: ['Jane Doe', 'Robert Smith', 'Sarah Johnson', 'Michael Williams', 'Elizabeth Brown'],
  career_only: ['David Wilson', 'Jennifer Davis', 'Thomas Anderson', 'Patricia Martinez', 'Christopher Lee'],
} as const;

function persona(n: number): Persona {
  const found = PERSONAS.find((p) => p.n === n);
  if (found === undefined) throw new Error(`no persona ${n}`);
  return found;
}

const fullName = (p: Persona): string => `${p.first_name} ${p.last_name}`;
const households = PERSONAS.flatMap((p) => (p.household === undefined ? [] : [p.household]));
const careers = PERSONAS.flatMap((p) => (p.career === undefined ? [] : [p.career]));

function isPopulated(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return false;
  return !Array.isArray(value) || value.length > 0;
}

describe('PERSONAS catalogue', () => {
  it('has 15 personas numbered 1..15 in table order', () => {
    expect(PERSONAS.map((p) => p.n)).toEqual(Array.from({ length: 15 }, (_, i) => i + 1));
  });

  it("names and categories follow contract.md's table, row by row", () => {
    const expected = [
      ...CONTRACT_NAMES.household_and_career.map((name) => ['household_and_career', name]),
      ...CONTRACT_NAMES.household_only.map((name) => ['household_only', name]),
      ...CONTRACT_NAMES.career_only.map((name) => ['career_only', name]),
    ];
    expect(PERSONAS.map((p) => [p.category, fullName(p)])).toEqual(expected);
  });

  it.each(PERSONAS.map((p) => [fullName(p), p] as const))('%s has e-mail, phone and address in the contract pattern', (_, p) => {
    expect(p.email).toBe(`${p.first_name}.${p.last_name}@sandbox.windfall.com`.toLowerCase());
    expect(p.phone).toBe(`55530000${String(p.n).padStart(2, '0')}`);
    expect(p.address).toBe(`${p.n}00 Demo St`);
    expect(p.zipcode).toMatch(/^\d{5}$/);
    expect(p.state).toMatch(/^[A-Z]{2}$/);
  });

  it("Amanda Taylor carries the maker's public example identifiers", () => {
    const amanda = persona(1);
    expect(amanda).toMatchObject({ email: 'amanda.taylor@sandbox.windfall.com', phone: '5553000001', address: '100 Demo St', zipcode: '30301' });
    expect(amanda.household?.windfall_id).toBe('bde3d183ad6215f2932217ee5d6d368a');
  });

  it('a persona has a household exactly when its category includes household, a career exactly when it includes career', () => {
    for (const p of PERSONAS) {
      expect(p.household !== undefined, fullName(p)).toBe(p.category !== 'career_only');
      expect(p.career !== undefined, fullName(p)).toBe(p.category !== 'household_only');
    }
  });

  it('every household parses with the strict HouseholdSchema and every career with the strict CareerSchema', () => {
    expect(households).toHaveLength(10);
    expect(careers).toHaveLength(10);
    for (const household of households) expect(HouseholdSchema.strict().safeParse(household).error).toBeUndefined();
    for (const career of careers) expect(CareerSchema.strict().safeParse(career).error).toBeUndefined();
  });

  it('every one of the 32 household and 26 career fields is populated by at least one persona', () => {
    expect(HOUSEHOLD_FIELDS).toHaveLength(32);
    expect(CAREER_FIELDS).toHaveLength(26);
    const missingHousehold = HOUSEHOLD_FIELDS.filter((f) => !households.some((h) => isPopulated(h[f])));
    const missingCareer = CAREER_FIELDS.filter((f) => !careers.some((c) => isPopulated(c[f])));
    expect({ missingHousehold, missingCareer }).toEqual({ missingHousehold: [], missingCareer: [] });
  });

  it('every boolean flag is true for at least one persona, so a client can see it set', () => {
    const neverTrue = [
      ...HOUSEHOLD_FIELDS.filter((f) => households.some((h) => typeof h[f] === 'boolean') && !households.some((h) => h[f] === true)),
      ...CAREER_FIELDS.filter((f) => careers.some((c) => typeof c[f] === 'boolean') && !careers.some((c) => c[f] === true)),
    ];
    expect(neverTrue).toEqual([]);
  });

  it('net worth spans modest (at most $300,000) to ultra-high (over $50,000,000)', () => {
    const worths = households.map((h) => h.net_worth ?? Number.NaN);
    expect(Math.min(...worths)).toBeLessThanOrEqual(300_000);
    expect(Math.max(...worths)).toBeGreaterThan(50_000_000);
  });

  it("job_level spans 'Individual Contributor' to 'C-Suite'", () => {
    const levels = new Set(careers.map((c) => c.job_level));
    expect(levels).toContain('Individual Contributor');
    expect(levels).toContain('C-Suite');
  });

  it('windfall_ids are distinct 32-char lowercase hex', () => {
    const ids = households.map((h) => h.windfall_id);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

const byEmail = (p: Persona): EnrichmentRequest => ({ emails: [p.email] });
const byAddress = (p: Persona): EnrichmentRequest => ({ addresses: [{ address: p.address, zipcode: p.zipcode }] });
const byPhoneName = (p: Persona): EnrichmentRequest => ({ phones: [p.phone], first_name: p.first_name, last_name: p.last_name });
const matchedN = (request: EnrichmentRequest): number | null => matchPersona(request)?.persona.n ?? null;

describe('matchPersona: each matcher alone resolves every persona', () => {
  it.each(PERSONAS.map((p) => [fullName(p), p] as const))('%s by email, by address+zipcode, by phone+name', (_, p) => {
    expect(matchPersona(byEmail(p))).toEqual({ persona: p, matchedBy: 'email' });
    expect(matchPersona(byAddress(p))).toEqual({ persona: p, matchedBy: 'address' });
    expect(matchPersona(byPhoneName(p))).toEqual({ persona: p, matchedBy: 'phone_and_name' });
  });
});

describe('matchPersona: partial identifiers never match', () => {
  it.each(PERSONAS.map((p) => [fullName(p), p] as const))('%s: name alone, address without zip, zip alone, phone without name', (_, p) => {
    expect(matchPersona({ first_name: p.first_name, last_name: p.last_name })).toBeNull();
    expect(matchPersona({ last_name: fullName(p) })).toBeNull();
    expect(matchPersona({ addresses: [{ address: p.address, city: p.city, state: p.state }] })).toBeNull();
    expect(matchPersona({ addresses: [{ address: p.address, zipcode: null }] })).toBeNull();
    expect(matchPersona({ addresses: [{ zipcode: p.zipcode, city: p.city, state: p.state }] })).toBeNull();
    expect(matchPersona({ phones: [p.phone] })).toBeNull();
    expect(matchPersona({ phones: [p.phone], first_name: p.first_name })).toBeNull();
    expect(matchPersona({ phones: [p.phone], last_name: p.last_name })).toBeNull();
  });

  it("phone with another persona's name never matches", () => {
    for (const p of PERSONAS) {
      for (const other of PERSONAS.filter((o) => o !== p)) {
        expect(matchPersona({ phones: [p.phone], first_name: other.first_name, last_name: other.last_name })).toBeNull();
      }
    }
  });

  it("address with another persona's zipcode, or a wrong house number, never matches", () => {
    expect(matchPersona({ addresses: [{ address: '100 Demo St', zipcode: '78701' }] })).toBeNull();
    expect(matchPersona({ addresses: [{ address: '101 Demo St', zipcode: '30301' }] })).toBeNull();
    expect(matchPersona({ addresses: [{ address: '100 Demo Ave', zipcode: '30301' }] })).toBeNull();
  });

  it('unknown or near-miss e-mails give null', () => {
    expect(matchPersona({ emails: ['nobody@example.com'] })).toBeNull();
    expect(matchPersona({ emails: ['amanda.taylor@sandbox.windfall.co'] })).toBeNull();
    expect(matchPersona({ emails: ['not-an-email'] })).toBeNull();
  });

  it('an empty request, and null lists, give null', () => {
    expect(matchPersona({})).toBeNull();
    expect(matchPersona({ emails: null, phones: null, addresses: null, first_name: null, last_name: null })).toBeNull();
  });
});

describe('matchPersona: formatting tolerance', () => {
  it('e-mail case and surrounding whitespace are tolerated', () => {
    expect(matchedN({ emails: ['  Amanda.TAYLOR@Sandbox.Windfall.com '] })).toBe(1);
  });

  it('address case, spacing, spelled-out suffix and zip+4 are tolerated', () => {
    expect(matchedN({ addresses: [{ address: '  100  DEMO street. ', zipcode: '30301-1234' }] })).toBe(1);
    expect(matchedN({ addresses: [{ address: '1500 demo st', zipcode: ' 432151234 ' }] })).toBe(15);
  });

  it('a full one-line address with its zip at the end needs no separate zipcode', () => {
    expect(matchedN({ addresses: [{ address: '400 Demo St, Boston, MA 02108' }] })).toBe(4);
    expect(matchedN({ addresses: [{ address: '400 Demo St, Boston, MA 02108-0001', zipcode: '' }] })).toBe(4);
  });

  it('phone formatting, name case and spacing, a middle initial and a full name in last_name are tolerated', () => {
    expect(matchedN({ phones: ['(555) 300-0001'], first_name: 'AMANDA', last_name: ' taylor ' })).toBe(1);
    expect(matchedN({ phones: ['+1 555 300 0006'], first_name: 'Jane Q.', last_name: 'DOE' })).toBe(6);
    expect(matchedN({ phones: ['555.300.0015'], last_name: 'Christopher Lee' })).toBe(15);
  });
});

describe('matchPersona: several identifiers in one request', () => {
  it('extra non-matching fields are harmless', () => {
    const request: EnrichmentRequest = {
      id: 'crm-42',
      company_name: 'Unrelated Inc',
      first_name: 'Someone',
      last_name: 'Else',
      emails: ['nobody@example.com', 'michelle.robinson@sandbox.windfall.com'],
      phones: ['5559999999'],
      addresses: [{ address: '1 Nowhere Rd', zipcode: '99999' }],
    };
    expect(matchPersona(request)).toMatchObject({ persona: { n: 3 }, matchedBy: 'email' });
  });

  it('a non-matching e-mail does not stop the address matcher', () => {
    expect(matchPersona({ emails: ['nobody@example.com'], ...byAddress(persona(8)) })).toMatchObject({ persona: { n: 8 }, matchedBy: 'address' });
  });

  it('when a request names two personas, the e-mail of one wins over the address and phone of another, always', () => {
    for (const a of PERSONAS) {
      for (const b of PERSONAS.filter((o) => o !== a)) {
        const request: EnrichmentRequest = { ...byAddress(b), ...byPhoneName(b), ...byEmail(a) };
        expect(matchPersona(request), `${fullName(a)} vs ${fullName(b)}`).toEqual({ persona: a, matchedBy: 'email' });
      }
    }
  });

  it('the address wins over the phone and name of another persona', () => {
    const request: EnrichmentRequest = { ...byPhoneName(persona(2)), ...byAddress(persona(3)) };
    expect(matchPersona(request)).toMatchObject({ persona: { n: 3 }, matchedBy: 'address' });
  });

  it('among several e-mails the first listed that matches wins, deterministically', () => {
    const request = { emails: ['jane.doe@sandbox.windfall.com', 'amanda.taylor@sandbox.windfall.com'] };
    for (let i = 0; i < 3; i += 1) expect(matchedN(request)).toBe(6);
    expect(matchedN({ emails: [...request.emails].reverse() })).toBe(1);
  });
});
