// The shared field catalogue: one entry per household and career field of the contract, each with the
// kind, label and description both CRMs derive their fields from, and how a list becomes one text value.
import { describe, expect, it } from 'vitest';
import { CAREER_FIELDS, HOUSEHOLD_FIELDS } from '../../core/contract/schemas.ts';
import { FIELD_CATALOGUE, LIST_NOTE, LIST_SEPARATOR, joinList, type CatalogueField } from '../../connectors/kit/field-catalogue.ts';

function entry(key: string): CatalogueField {
  const found = FIELD_CATALOGUE.find((candidate) => candidate.key === key);
  if (found === undefined) throw new Error(`no catalogue entry ${key}`);
  return found;
}

const keysOfType = (type: CatalogueField['kind']['type']): string[] =>
  FIELD_CATALOGUE.filter((candidate) => candidate.kind.type === type).map((candidate) => candidate.key);

describe('field catalogue entries', () => {
  it('has one entry per contract field: 32 household, then 26 career, in the contract order', () => {
    const household = FIELD_CATALOGUE.filter((candidate) => candidate.group === 'household');
    const career = FIELD_CATALOGUE.filter((candidate) => candidate.group === 'career');
    expect(household.map((candidate) => candidate.field)).toEqual([...HOUSEHOLD_FIELDS]);
    expect(career.map((candidate) => candidate.field)).toEqual([...CAREER_FIELDS]);
    expect([household.length, career.length]).toEqual([32, 26]);
    expect(FIELD_CATALOGUE).toEqual([...household, ...career]);
  });

  it('keys each entry as group.field', () => {
    for (const { group, field, key } of FIELD_CATALOGUE) expect(key).toBe(`${group}.${field}`);
    expect(new Set(FIELD_CATALOGUE.map((candidate) => candidate.key)).size).toBe(FIELD_CATALOGUE.length);
  });
});

describe('field kinds, from the schema', () => {
  it('an int() number is integer, any other number decimal', () => {
    expect(entry('household.net_worth').kind).toEqual({ type: 'integer' });
    expect(keysOfType('decimal')).toEqual(['household.confidence', 'household.loan_to_value', 'career.confidence']);
  });

  it('a boolean is boolean', () => {
    expect(entry('household.boat_owner').kind).toEqual({ type: 'boolean' });
    expect(entry('career.recently_promoted').kind).toEqual({ type: 'boolean' });
  });

  it('an ISO date is date', () => {
    expect(keysOfType('date')).toEqual(['household.net_worth_last_calculated', 'career.career_data_last_updated', 'career.job_start_date']);
  });

  it("an enum is enum with the schema's values, in order", () => {
    expect(entry('household.political_party').kind).toEqual({ type: 'enum', values: ['Democrat', 'Republican', 'Independent'] });
  });

  it('an array of strings is list', () => {
    expect(keysOfType('list')).toEqual(['household.philanthropic_cause', 'household.regional_focus']);
  });

  it('a string named *_url or *_domain is text with url; any other string is text without', () => {
    expect(entry('career.linkedin_url').kind).toEqual({ type: 'text', url: true });
    expect(entry('career.company_domain').kind).toEqual({ type: 'text', url: true });
    expect(entry('career.job_title').kind).toEqual({ type: 'text', url: false });
    expect(entry('household.windfall_id').kind).toEqual({ type: 'text', url: false });
    const urls = FIELD_CATALOGUE.filter(({ kind }) => kind.type === 'text' && kind.url).map((candidate) => candidate.field);
    expect(urls).toEqual(['linkedin_url', 'company_domain']);
  });

  it('no contract field is a datetime: only the enriched_at status is one', () => {
    expect(keysOfType('datetime')).toEqual([]);
  });
});

describe('labels and descriptions', () => {
  it('labels a field word by word, first word capitalised, acronyms in capitals', () => {
    expect(entry('career.company_naics_code').label).toBe('Company NAICS code');
    expect(entry('career.linkedin_url').label).toBe('LinkedIn URL');
    expect(entry('household.windfall_id').label).toBe('Windfall ID');
    expect(entry('household.net_worth').label).toBe('Net worth');
  });

  it('labels confidence as "Match confidence", in both groups', () => {
    expect(entry('household.confidence').label).toBe('Match confidence');
    expect(entry('career.confidence').label).toBe('Match confidence');
  });

  it("describes a field with its schema's description, wherever the wrappers put it; null when there is none", () => {
    expect(entry('household.net_worth').description).toBe('Estimated net worth in dollars.');
    expect(entry('household.net_worth_last_calculated').description).toBe('Date, YYYY-MM-DD.');
    expect(entry('household.boat_owner').description).toBeNull();
  });
});

describe('list handling', () => {
  it('joins entries with "; ", trimmed, empty ones dropped', () => {
    expect(LIST_SEPARATOR).toBe('; ');
    expect(joinList([' B ', '', 'E', '  '])).toBe('B; E');
  });

  it('makes no value of a list with no entry left', () => {
    expect(joinList([])).toBeNull();
    expect(joinList(['', ' '])).toBeNull();
  });

  it('tells in a description how the entries are joined', () => {
    expect(LIST_NOTE).toBe('Entries are joined with "; ".');
  });
});
