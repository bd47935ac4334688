// Unit tests of field entitlements: 'all' passes a match through untouched; a list trims it to exactly
// the purchased fields plus the identity fields every match carries (windfall_id, confidence); the
// political fields reach only an account entitled to political data, whatever its field list says.
import { describe, expect, it } from 'vitest';
import { entitledCareer, entitledHousehold } from '../../core/accounts/entitlements.ts';
import { ACCOUNT_DEFAULTS, type Account } from '../../core/accounts/model.ts';
import { type Career, type CareerField, type Household, type HouseholdField, POLITICAL_HOUSEHOLD_FIELDS } from '../../core/contract/schemas.ts';
import { SPECIAL_CATEGORY_FIELDS } from '../../bridge/model.ts';
import { PERSONAS } from '../../core/sandbox/personas.ts';

function account(householdFields: Account['householdFields'], careerFields: Account['careerFields'], politicalData = true): Account {
  return {
    id: 'acc_1',
    name: 'acme',
    careerIntelligence: true,
    politicalData,
    householdFields,
    careerFields,
    ...ACCOUNT_DEFAULTS,
    createdAt: '2026-11-21T00:00:00.000Z',
  };
}

function fullHousehold(): Household {
  const found = PERSONAS.find((p) => p.first_name === 'Amanda')?.household;
  if (found === undefined) throw new Error('Amanda Taylor has no household');
  return found;
}

function fullCareer(): Career {
  const found = PERSONAS.find((p) => p.first_name === 'Amanda')?.career;
  if (found === undefined) throw new Error('Amanda Taylor has no career');
  return found;
}

describe('entitledHousehold', () => {
  it("'all' returns every field unchanged", () => {
    const household = fullHousehold();
    expect(entitledHousehold(account('all', 'all'), household)).toEqual(household);
    expect(Object.keys(entitledHousehold(account('all', []), household))).toHaveLength(32);
  });

  it('a list keeps exactly the listed fields plus windfall_id and confidence', () => {
    const household = fullHousehold();
    const granted: HouseholdField[] = ['net_worth', 'philanthropic_cause', 'boat_owner'];
    const result = entitledHousehold(account(granted, 'all'), household);
    expect(Object.keys(result).sort()).toEqual(['boat_owner', 'confidence', 'net_worth', 'philanthropic_cause', 'windfall_id']);
    expect(result).toEqual({
      windfall_id: household.windfall_id,
      confidence: household.confidence,
      net_worth: household.net_worth,
      philanthropic_cause: household.philanthropic_cause,
      boat_owner: household.boat_owner,
    });
  });

  it('an empty list still keeps windfall_id and confidence', () => {
    const household = fullHousehold();
    expect(entitledHousehold(account([], 'all'), household)).toEqual({ windfall_id: household.windfall_id, confidence: household.confidence });
  });

  it('granting an identity field explicitly does not duplicate or drop anything', () => {
    const household = fullHousehold();
    const result = entitledHousehold(account(['windfall_id', 'confidence', 'political_party'], 'all'), household);
    expect(Object.keys(result).sort()).toEqual(['confidence', 'political_party', 'windfall_id']);
  });

  it('a listed field the household does not carry is not invented', () => {
    const household: Household = { windfall_id: '0123456789abcdef0123456789abcdef', confidence: 0.5 };
    expect(entitledHousehold(account(['net_worth'], 'all'), household)).toEqual(household);
  });

  it('the career entitlement has no effect on the household', () => {
    const household = fullHousehold();
    expect(entitledHousehold(account(['net_worth'], []), household)).toHaveProperty('net_worth', household.net_worth);
  });
});

describe('entitledCareer', () => {
  it("'all' returns every field unchanged", () => {
    const career = fullCareer();
    expect(entitledCareer(account([], 'all'), career)).toEqual(career);
    expect(Object.keys(entitledCareer(account('all', 'all'), career))).toHaveLength(26);
  });

  it('a list keeps exactly the listed fields plus confidence', () => {
    const career = fullCareer();
    const granted: CareerField[] = ['job_title', 'company_name', 'recently_promoted'];
    const result = entitledCareer(account('all', granted), career);
    expect(result).toEqual({
      confidence: career.confidence,
      job_title: career.job_title,
      company_name: career.company_name,
      recently_promoted: career.recently_promoted,
    });
  });

  it('an empty list keeps only confidence, and never a household identity field', () => {
    const result = entitledCareer(account('all', []), fullCareer());
    expect(Object.keys(result)).toEqual(['confidence']);
  });

  it('the input object is not mutated by trimming', () => {
    const career = fullCareer();
    const before = { ...career };
    entitledCareer(account('all', ['job_title']), career);
    expect(career).toEqual(before);
  });
});

describe('political data, a special category', () => {
  const political: string[] = [...POLITICAL_HOUSEHOLD_FIELDS].sort();

  it('an account not entitled to political fields gets none of them', () => {
    const household = fullHousehold();
    for (const field of political) expect(household, field).toHaveProperty(field);
    const everything = entitledHousehold(account('all', 'all', false), household);
    expect(Object.keys(everything).sort()).toEqual(
      Object.keys(household)
        .filter((key) => !political.includes(key))
        .sort(),
    );
    expect(everything).toMatchObject({ windfall_id: household.windfall_id, net_worth: household.net_worth });
    // Not even when its field list names them: the entitlement gates them as Career Intelligence gates career.
    const listed = entitledHousehold(account(['net_worth', 'political_party', 'political_donor', 'top_political_donor'], 'all', false), household);
    expect(listed).toEqual({ windfall_id: household.windfall_id, confidence: household.confidence, net_worth: household.net_worth });
  });

  it('an account entitled to political fields gets them, as its field list allows', () => {
    const household = fullHousehold();
    expect(entitledHousehold(account('all', 'all', true), household)).toEqual(household);
    const listed = entitledHousehold(account(['political_party'], 'all', true), household);
    expect(listed).toEqual({ windfall_id: household.windfall_id, confidence: household.confidence, political_party: household.political_party });
  });

  it('are the fields the bridge leaves out of a new installation', () => {
    expect(political).toEqual(SPECIAL_CATEGORY_FIELDS.map((field) => field.replace(/^household\./, '')).sort());
  });
});
