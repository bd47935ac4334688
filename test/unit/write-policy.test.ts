// The write-back rules as pure functions: which values an enrichment yields (fieldsFromResponse),
// when two CRM values are the same (sameCrmValue), what goes out per overwrite mode (decideWrites), and
// what the log keeps of a write (replacedValues).
import { describe, expect, it } from 'vitest';
import type { EnrichmentResponse } from '../../core/contract/schemas.ts';
import type { FieldValue } from '../../bridge/connector.ts';
import type { CrmValue, OverwriteMode } from '../../bridge/model.ts';
import { STATUS_KEYS, decideWrites, fieldsFromResponse, replacedValues, sameCrmValue, type FieldsToWrite } from '../../bridge/write-policy.ts';

const AT = new Date('2026-03-10T12:00:00.000Z');
const WINDFALL_ID = 'bde3d183ad6215f2932217ee5d6d368a';

/** A connector's mapping: `household.net_worth` → `wf_household_net_worth`; `career.linkedin_url` unmapped. */
const connector = {
  propertyFor: (_object: string, key: string): string | null => (key === 'career.linkedin_url' ? null : `wf_${key.replace('.', '_')}`),
  formatValue: (_key: string, value: FieldValue): CrmValue => (Array.isArray(value) ? value.join(';') : (value as CrmValue)),
};

function response(parts: Partial<Pick<EnrichmentResponse, 'household' | 'career'>>): EnrichmentResponse {
  const household = parts.household ?? null;
  const career = parts.career ?? null;
  return { household_matched: household !== null, career_matched: career !== null, household, career };
}

function fields(values: Record<string, FieldValue>): FieldsToWrite {
  return { status: 'enriched', householdUsed: true, careerUsed: false, values: new Map(Object.entries(values)) };
}

function decide(options: {
  values: Record<string, FieldValue>;
  mode?: OverwriteMode;
  current?: Record<string, CrmValue>;
  lastWritten?: Record<string, CrmValue>;
  excluded?: string[];
}) {
  return decideWrites({
    fields: fields(options.values),
    object: 'contact',
    connector,
    mode: options.mode ?? 'tracked',
    excluded: new Set(options.excluded ?? []),
    current: options.current ?? {},
    lastWritten: options.lastWritten ?? {},
  });
}

describe('fieldsFromResponse', () => {
  it('keys every value by object and field, and sets the four status fields', () => {
    const result = fieldsFromResponse(
      response({ household: { windfall_id: WINDFALL_ID, confidence: 0.9, net_worth: 100 }, career: { confidence: 0.8, job_title: 'CFO' } }),
      0,
      AT,
    );
    expect(Object.fromEntries(result.values)).toEqual({
      'household.windfall_id': WINDFALL_ID,
      'household.confidence': 0.9,
      'household.net_worth': 100,
      'career.confidence': 0.8,
      'career.job_title': 'CFO',
      'status.enriched_at': AT.toISOString(),
      'status.household_matched': true,
      'status.career_matched': true,
      'status.enrichment_status': 'enriched',
    });
    expect(result).toMatchObject({ status: 'enriched', householdUsed: true, careerUsed: true });
    expect(STATUS_KEYS.every((key) => result.values.has(key))).toBe(true);
  });

  it('leaves out empty values (blank strings, empty lists) but keeps false and zero', () => {
    const result = fieldsFromResponse(
      response({
        household: { windfall_id: WINDFALL_ID, confidence: 0.9, net_worth: 0, boat_owner: false, philanthropic_cause: [], regional_focus: ['GA'] },
        career: { confidence: 0.8, job_title: '   ', company_name: '' },
      }),
      0,
      AT,
    );
    expect(result.values.get('household.net_worth')).toBe(0);
    expect(result.values.get('household.boat_owner')).toBe(false);
    expect(result.values.get('household.regional_focus')).toEqual(['GA']);
    expect(result.values.has('household.philanthropic_cause')).toBe(false);
    expect(result.values.has('career.job_title')).toBe(false);
    expect(result.values.has('career.company_name')).toBe(false);
  });

  it('drops an object below the minimum confidence and keeps one at it exactly', () => {
    const result = fieldsFromResponse(
      response({ household: { windfall_id: WINDFALL_ID, confidence: 0.7, net_worth: 100 }, career: { confidence: 0.6, job_title: 'CFO' } }),
      0.7,
      AT,
    );
    expect(result).toMatchObject({ status: 'enriched', householdUsed: true, careerUsed: false });
    expect(result.values.get('household.net_worth')).toBe(100);
    expect([...result.values.keys()].some((key) => key.startsWith('career.'))).toBe(false);
    expect(result.values.get('status.career_matched')).toBe(false);
  });

  it('says below_min_confidence when everything matched is under the minimum, and writes only status', () => {
    const result = fieldsFromResponse(response({ household: { windfall_id: WINDFALL_ID, confidence: 0.62, net_worth: 100 } }), 0.9, AT);
    expect(result).toMatchObject({ status: 'below_min_confidence', householdUsed: false, careerUsed: false });
    expect([...result.values.keys()].sort()).toEqual([...STATUS_KEYS].sort());
    expect(result.values.get('status.enrichment_status')).toBe('below_min_confidence');
    expect(result.values.get('status.household_matched')).toBe(false);
  });

  it('says no_match when nothing matched, with status fields only', () => {
    const result = fieldsFromResponse(response({}), 0, AT);
    expect(result.status).toBe('no_match');
    expect([...result.values.keys()].sort()).toEqual([...STATUS_KEYS].sort());
    expect(result.values.get('status.enrichment_status')).toBe('no_match');
  });
});

describe('sameCrmValue', () => {
  it('compares numbers as numbers, whatever their spelling', () => {
    expect(sameCrmValue('2400000', 2_400_000)).toBe(true);
    expect(sameCrmValue('0.50', 0.5)).toBe(true);
    expect(sameCrmValue('1e3', 1000)).toBe(true);
    expect(sameCrmValue(' 42 ', '42')).toBe(true);
    expect(sameCrmValue('42', 43)).toBe(false);
  });

  it('trims strings but keeps case', () => {
    expect(sameCrmValue('  CFO ', 'CFO')).toBe(true);
    expect(sameCrmValue('cfo', 'CFO')).toBe(false);
  });

  it('treats null, undefined and blank as the same empty, and empty as different from any value', () => {
    expect(sameCrmValue(null, undefined)).toBe(true);
    expect(sameCrmValue('', null)).toBe(true);
    expect(sameCrmValue('   ', undefined)).toBe(true);
    expect(sameCrmValue(null, 0)).toBe(false);
    expect(sameCrmValue('', false)).toBe(false);
    expect(sameCrmValue('x', null)).toBe(false);
  });

  it('reads a boolean and its text as the same value', () => {
    expect(sameCrmValue(true, 'true')).toBe(true);
    expect(sameCrmValue(false, 'false')).toBe(true);
    expect(sameCrmValue(true, 'false')).toBe(false);
  });
});

describe('decideWrites', () => {
  it('fill_empty writes only into empty properties', () => {
    const decision = decide({
      mode: 'fill_empty',
      values: { 'household.net_worth': 100, 'household.political_party': 'Democrat', 'career.job_title': 'CFO' },
      current: { wf_household_net_worth: 5, wf_household_political_party: '', wf_career_job_title: null },
      lastWritten: { wf_household_net_worth: 5 },
    });
    expect(decision.properties).toEqual({ wf_household_political_party: 'Democrat', wf_career_job_title: 'CFO' });
    expect(decision.keys).toEqual(['household.political_party', 'career.job_title']);
  });

  it('tracked overwrites what we last wrote and fills empties, but never a human edit or a value we never wrote', () => {
    const decision = decide({
      mode: 'tracked',
      values: { 'household.net_worth': 800_000, 'career.job_title': 'CFO', 'career.job_level': 'VP', 'household.political_party': 'Independent' },
      current: {
        wf_household_net_worth: '2400000',
        wf_career_job_title: 'Chief Bean Counter',
        wf_career_job_level: 'Director',
        wf_household_political_party: null,
      },
      lastWritten: { wf_household_net_worth: 2_400_000, wf_career_job_title: 'Vice President of Finance' },
    });
    expect(decision.properties).toEqual({ wf_household_net_worth: 800_000, wf_household_political_party: 'Independent' });
    // The human's value is not ours: what we wrote before stays the reference for next time.
    expect(decision.written).toEqual({
      wf_household_net_worth: 800_000,
      wf_career_job_title: 'Vice President of Finance',
      wf_household_political_party: 'Independent',
    });
  });

  it('always overwrites whatever is there, human edits included', () => {
    const decision = decide({
      mode: 'always',
      values: { 'household.net_worth': 800_000, 'career.job_title': 'CFO' },
      current: { wf_household_net_worth: 5, wf_career_job_title: 'Chief Bean Counter' },
    });
    expect(decision.properties).toEqual({ wf_household_net_worth: 800_000, wf_career_job_title: 'CFO' });
  });

  it.each(['fill_empty', 'tracked', 'always'] as const)('%s writes status fields over values a human left there', (mode) => {
    const decision = decide({
      mode,
      values: { 'status.enrichment_status': 'no_match', 'status.household_matched': false },
      current: { wf_status_enrichment_status: 'enriched', wf_status_household_matched: 'true' },
    });
    expect(decision.properties).toEqual({ wf_status_enrichment_status: 'no_match', wf_status_household_matched: false });
  });

  it.each(['fill_empty', 'tracked', 'always'] as const)('%s never writes an empty value over a value', (mode) => {
    const decision = decide({
      mode,
      values: { 'household.philanthropic_cause': [], 'career.job_title': '  ' },
      current: { wf_household_philanthropic_cause: 'B;E', wf_career_job_title: 'CFO' },
      lastWritten: { wf_household_philanthropic_cause: 'B;E', wf_career_job_title: 'CFO' },
    });
    expect(decision.properties).toEqual({});
    expect(decision.keys).toEqual([]);
  });

  it('never writes an excluded field, status fields included, nor one the connector does not map', () => {
    const decision = decide({
      mode: 'always',
      values: { 'household.net_worth': 100, 'status.enriched_at': AT.toISOString(), 'career.linkedin_url': 'linkedin.com/in/x', 'career.job_title': 'CFO' },
      excluded: ['household.net_worth', 'status.enriched_at'],
    });
    expect(decision.properties).toEqual({ wf_career_job_title: 'CFO' });
  });

  it('does not send a value the property already holds, but counts it as ours', () => {
    const decision = decide({
      mode: 'tracked',
      values: { 'household.net_worth': 2_400_000, 'household.philanthropic_cause': ['B', 'E'] },
      current: { wf_household_net_worth: '2400000', wf_household_philanthropic_cause: 'B;E' },
    });
    expect(decision.properties).toEqual({});
    expect(decision.written).toEqual({ wf_household_net_worth: 2_400_000, wf_household_philanthropic_cause: 'B;E' });
  });

  it('keeps what we wrote before to properties this enrichment does not touch', () => {
    const decision = decide({
      mode: 'tracked',
      values: { 'career.job_title': 'CFO' },
      current: { wf_household_net_worth: 2_400_000 },
      lastWritten: { wf_household_net_worth: 2_400_000 },
    });
    expect(decision.written).toEqual({ wf_household_net_worth: 2_400_000, wf_career_job_title: 'CFO' });
  });
});

describe('decideWrites after a re-enrichment that matches nobody or someone else (stale values)', () => {
  const withClear = { ...connector, emptyValue: '' as CrmValue };
  const ours = { wf_household_net_worth: 5_000_000, wf_household_boat_owner: true, wf_career_job_title: 'CFO' };

  function decideStale(options: {
    values: Record<string, FieldValue>;
    stale: { household: boolean; career: boolean };
    current: Record<string, CrmValue>;
    mode?: OverwriteMode;
  }) {
    return decideWrites({
      fields: fields(options.values),
      object: 'contact',
      connector: withClear,
      mode: options.mode ?? 'tracked',
      excluded: new Set(),
      current: options.current,
      lastWritten: ours,
      stale: options.stale,
    });
  }

  it('a match to nobody clears the values we wrote that nobody has edited since, and keeps a human edit', () => {
    const decision = decideStale({
      values: { 'status.enrichment_status': 'no_match' },
      stale: { household: true, career: true },
      current: { wf_household_net_worth: 5_000_000, wf_household_boat_owner: true, wf_career_job_title: 'Chief Financial Officer' },
    });
    expect(decision.properties).toEqual({ wf_household_net_worth: '', wf_household_boat_owner: '', wf_status_enrichment_status: 'no_match' });
    expect(decision.written).not.toHaveProperty('wf_household_net_worth');
    expect(decision.written).not.toHaveProperty('wf_household_boat_owner');
  });

  it('a match to someone else replaces our unedited values, even in fill_empty mode, and clears ours the new person lacks', () => {
    const decision = decideStale({
      values: { 'household.net_worth': 250_000 },
      stale: { household: true, career: false },
      current: { wf_household_net_worth: 5_000_000, wf_household_boat_owner: true, wf_career_job_title: 'CFO' },
      mode: 'fill_empty',
    });
    expect(decision.properties).toEqual({ wf_household_net_worth: 250_000, wf_household_boat_owner: '' });
    expect(decision.written).toMatchObject({ wf_household_net_worth: 250_000, wf_career_job_title: 'CFO' });
  });

  it('keeps a value of ours that the other person happens to share: it is theirs now, not cleared', () => {
    const decision = decideStale({
      values: { 'household.net_worth': 5_000_000 },
      stale: { household: true, career: false },
      current: { wf_household_net_worth: 5_000_000, wf_household_boat_owner: true, wf_career_job_title: 'CFO' },
    });
    expect(decision.properties).toEqual({ wf_household_boat_owner: '' });
    expect(decision.written).toMatchObject({ wf_household_net_worth: 5_000_000 });
  });

  it('a match to the same person keeps what it does not bring, as before', () => {
    const decision = decideStale({
      values: { 'household.net_worth': 6_000_000 },
      stale: { household: false, career: false },
      current: { wf_household_net_worth: 5_000_000, wf_household_boat_owner: true, wf_career_job_title: 'CFO' },
    });
    expect(decision.properties).toEqual({ wf_household_net_worth: 6_000_000 });
  });
});

describe('replacedValues: what the log keeps of a write', () => {
  it('pairs each property sent with the value the record held, null where it was empty, blank or missing', () => {
    const current = {
      wf_household_net_worth: 5,
      wf_career_job_title: '  ',
      wf_household_boat_owner: false,
      wf_household_political_party: null,
      email: 'a@example.com',
    };
    const sent = {
      wf_household_net_worth: 6_000_000,
      wf_career_job_title: 'CFO',
      wf_household_boat_owner: true,
      wf_household_political_party: 'Democrat',
      wf_career_job_level: 'VP',
      wf_household_windfall_id: '',
    };
    expect(replacedValues(sent, current)).toEqual({
      wf_household_net_worth: { value: 6_000_000, replaced: 5 },
      wf_career_job_title: { value: 'CFO', replaced: null },
      wf_household_boat_owner: { value: true, replaced: false },
      wf_household_political_party: { value: 'Democrat', replaced: null },
      wf_career_job_level: { value: 'VP', replaced: null },
      wf_household_windfall_id: { value: '', replaced: null },
    });
    expect(replacedValues({}, current)).toEqual({});
  });
});
