// The HubSpot contact properties: one per contract field and status key, names HubSpot accepts, type
// pairs HubSpot validates, the key ↔ property mapping, and how values are formatted for HubSpot.
import { ENRICHMENT_STATUSES, LIST_SEPARATOR } from '../../connectors/kit/field-catalogue.ts';
import { PropertyCreateFieldTypeEnum, PropertyCreateTypeEnum } from '@hubspot/api-client/lib/codegen/crm/properties/index.js';
import { describe, expect, it } from 'vitest';
import { CAREER_FIELDS, HOUSEHOLD_FIELDS } from '../../core/contract/schemas.ts';
import { PERSONAS } from '../../core/sandbox/personas.ts';
import {
  HUBSPOT_FIELD_KEYS,
  HUBSPOT_PROPERTY_GROUP,
  fieldKeyForHubSpotProperty,
  formatHubSpotValue,
  hubspotFieldKind,
  hubspotProperties,
  hubspotPropertyFor,
  type HubSpotPropertyDefinition,
} from '../../connectors/hubspot/fields.ts';
import { STATUS_KEYS, fieldsFromResponse } from '../../bridge/write-policy.ts';

const properties = hubspotProperties();
const byName = new Map(properties.map((p) => [p.name, p]));

function property(name: string): HubSpotPropertyDefinition {
  const found = byName.get(name);
  if (found === undefined) throw new Error(`no property ${name}`);
  return found;
}

/** The type/fieldType pairs the v3 properties API accepts (docs/reference/crm-platforms.md, section 4). */
const VALIDATED_PAIRS: Record<string, readonly string[]> = {
  number: ['number'],
  bool: ['booleancheckbox'],
  string: ['text', 'textarea', 'file', 'phonenumber', 'html'],
  date: ['date'],
  datetime: ['date'],
  enumeration: ['select', 'radio', 'checkbox', 'booleancheckbox'],
};

const STATUS_PROPERTIES = ['wf_enriched_at', 'wf_household_matched', 'wf_career_matched', 'wf_enrichment_status'];

describe('HubSpot contact properties', () => {
  it('has exactly one property per household field, career field and status key, and the do-not-enrich checkbox', () => {
    const expected = [...STATUS_PROPERTIES, ...HOUSEHOLD_FIELDS.map((f) => `wf_hh_${f}`), ...CAREER_FIELDS.map((f) => `wf_career_${f}`), 'wf_do_not_enrich'];
    expect(properties.map((p) => p.name).sort()).toEqual([...expected].sort());
    expect(new Set(properties.map((p) => p.name)).size).toBe(properties.length);
    expect(properties).toHaveLength(32 + 26 + 4 + 1);
  });

  it('names properties as HubSpot requires: ^[a-z][a-z0-9_]*$, at most 100 characters', () => {
    for (const p of properties) {
      expect(p.name).toMatch(/^[a-z][a-z0-9_]*$/);
      expect(p.name.length).toBeLessThanOrEqual(100);
    }
  });

  it('uses only type/fieldType pairs HubSpot validates, with values the SDK knows', () => {
    const sdkTypes: readonly string[] = Object.values(PropertyCreateTypeEnum);
    const sdkFieldTypes: readonly string[] = Object.values(PropertyCreateFieldTypeEnum);
    for (const p of properties) {
      expect(VALIDATED_PAIRS[p.type], `${p.name}: ${p.type}/${p.fieldType}`).toContain(p.fieldType);
      expect(sdkTypes).toContain(p.type);
      expect(sdkFieldTypes).toContain(p.fieldType);
    }
  });

  it('gives every bool both options, "true" and "false", and options to nothing else but enumerations', () => {
    for (const p of properties) {
      if (p.type === 'bool') {
        expect(
          p.options?.map(({ label, value }) => ({ label, value })),
          p.name,
        ).toEqual([
          { label: 'Yes', value: 'true' },
          { label: 'No', value: 'false' },
        ]);
      } else if (p.type === 'enumeration') {
        expect(p.options?.length, p.name).toBeGreaterThan(0);
      } else {
        expect(p.options, p.name).toBeUndefined();
      }
      for (const option of p.options ?? []) expect(option.hidden).toBe(false);
    }
  });

  it('types each field from its schema: numbers, booleans, dates, enums, lists, text', () => {
    const pair = (name: string) => `${property(name).type}/${property(name).fieldType}`;
    expect(pair('wf_hh_net_worth')).toBe('number/number');
    expect(pair('wf_hh_loan_to_value')).toBe('number/number');
    expect(pair('wf_hh_confidence')).toBe('number/number');
    expect(pair('wf_career_confidence')).toBe('number/number');
    expect(pair('wf_hh_boat_owner')).toBe('bool/booleancheckbox');
    expect(pair('wf_career_recently_promoted')).toBe('bool/booleancheckbox');
    expect(pair('wf_hh_net_worth_last_calculated')).toBe('date/date');
    expect(pair('wf_career_job_start_date')).toBe('date/date');
    expect(pair('wf_hh_political_party')).toBe('enumeration/select');
    expect(property('wf_hh_political_party').options?.map((o) => o.value)).toEqual(['Democrat', 'Republican', 'Independent']);
    expect(pair('wf_hh_philanthropic_cause')).toBe('string/textarea');
    expect(pair('wf_hh_regional_focus')).toBe('string/textarea');
    expect(pair('wf_hh_windfall_id')).toBe('string/text');
    expect(pair('wf_career_linkedin_url')).toBe('string/text');
    expect(pair('wf_career_job_level')).toBe('string/text');
  });

  it('types the status properties: a datetime, two bools, an enumeration of the statuses and the reasons a contact was not enriched', () => {
    expect(property('wf_enriched_at')).toMatchObject({ type: 'datetime', fieldType: 'date' });
    expect(property('wf_household_matched')).toMatchObject({ type: 'bool', fieldType: 'booleancheckbox' });
    expect(property('wf_career_matched')).toMatchObject({ type: 'bool', fieldType: 'booleancheckbox' });
    expect(property('wf_enrichment_status')).toMatchObject({ type: 'enumeration', fieldType: 'select' });
    const statuses = ['enriched', 'no_match', 'below_min_confidence', 'no_match_key', 'excluded', 'undone'];
    expect(property('wf_enrichment_status').options?.map((o) => o.value)).toEqual(statuses);
    expect([...ENRICHMENT_STATUSES]).toEqual(statuses);
    expect(property('wf_do_not_enrich')).toMatchObject({ type: 'bool', fieldType: 'booleancheckbox' });
  });

  it('puts every property in the enrichbridge group, off forms, in a stable display order', () => {
    expect(HUBSPOT_PROPERTY_GROUP).toEqual({ name: 'enrichbridge', label: 'Windfall enrichment' });
    properties.forEach((p, i) => {
      expect(p.groupName).toBe('enrichbridge');
      expect(p.formField).toBe(false);
      expect(p.displayOrder).toBe(i + 1);
    });
  });

  it('labels every property readably, with the Windfall prefix, each label once', () => {
    for (const p of properties) {
      expect(p.label).toMatch(/^Windfall( career)?: [A-Z]/);
      expect(p.label).not.toContain('_');
    }
    expect(new Set(properties.map((p) => p.label)).size).toBe(properties.length);
    expect(property('wf_hh_net_worth').label).toBe('Windfall: Net worth');
    expect(property('wf_career_job_title').label).toBe('Windfall career: Job title');
    expect(property('wf_career_company_naics_code').label).toBe('Windfall career: Company NAICS code');
  });

  it("describes every property, with the schema's description where it has one", () => {
    for (const p of properties) expect(p.description.trim(), p.name).not.toBe('');
    expect(property('wf_hh_net_worth').description).toBe('Estimated net worth in dollars.');
    expect(property('wf_career_job_level').description).toContain('C-Suite');
    expect(property('wf_hh_philanthropic_cause').description).toContain('NTEE');
    expect(property('wf_hh_philanthropic_cause').description).toContain(`joined with "${LIST_SEPARATOR}"`);
  });
});

describe('field key ↔ property mapping', () => {
  it('maps every key and back again', () => {
    expect(HUBSPOT_FIELD_KEYS).toHaveLength(properties.length);
    for (const key of HUBSPOT_FIELD_KEYS) {
      const name = hubspotPropertyFor(key);
      expect(name, key).not.toBeNull();
      expect(byName.has(name ?? '')).toBe(true);
      expect(fieldKeyForHubSpotProperty(name ?? '')).toBe(key);
    }
    for (const p of properties) expect(hubspotPropertyFor(fieldKeyForHubSpotProperty(p.name) ?? '')).toBe(p.name);
  });

  it('maps the keys the pipeline produces', () => {
    expect(hubspotPropertyFor('household.net_worth')).toBe('wf_hh_net_worth');
    expect(hubspotPropertyFor('career.job_title')).toBe('wf_career_job_title');
    expect(STATUS_KEYS.map((key) => hubspotPropertyFor(key))).toEqual(STATUS_PROPERTIES);
    for (const f of HOUSEHOLD_FIELDS) expect(hubspotPropertyFor(`household.${f}`)).toBe(`wf_hh_${f}`);
    for (const f of CAREER_FIELDS) expect(hubspotPropertyFor(`career.${f}`)).toBe(`wf_career_${f}`);
  });

  it('maps nothing else', () => {
    for (const key of ['household.unknown', 'career.net_worth', 'status.unknown', 'household', 'net_worth', '', 'wf_hh_net_worth']) {
      expect(hubspotPropertyFor(key), key).toBeNull();
    }
    for (const name of ['firstname', 'wf_hh_unknown', 'household.net_worth', '']) {
      expect(fieldKeyForHubSpotProperty(name), name).toBeNull();
    }
    expect(hubspotFieldKind('household.unknown')).toBeNull();
  });
});

describe('value formatting', () => {
  it('writes booleans as "true" and "false"', () => {
    expect(formatHubSpotValue('household.boat_owner', true)).toBe('true');
    expect(formatHubSpotValue('household.boat_owner', false)).toBe('false');
    expect(formatHubSpotValue('status.household_matched', true)).toBe('true');
  });

  it('writes numbers as numbers, and no number when it is not finite', () => {
    expect(formatHubSpotValue('household.net_worth', 2_400_000)).toBe(2_400_000);
    expect(formatHubSpotValue('household.loan_to_value', 0.38)).toBe(0.38);
    expect(formatHubSpotValue('household.net_worth', Number.NaN)).toBeNull();
    expect(formatHubSpotValue('household.net_worth', Number.POSITIVE_INFINITY)).toBeNull();
  });

  it('joins lists with "; ", dropping empty entries; an empty list is no value', () => {
    expect(formatHubSpotValue('household.philanthropic_cause', ['B', 'E'])).toBe('B; E');
    expect(formatHubSpotValue('household.regional_focus', ['National', ' GA ', ''])).toBe('National; GA');
    expect(formatHubSpotValue('household.regional_focus', [])).toBeNull();
  });

  it('writes dates as YYYY-MM-DD', () => {
    expect(formatHubSpotValue('household.net_worth_last_calculated', '2026-11-16')).toBe('2026-11-16');
    expect(formatHubSpotValue('career.job_start_date', '2021-03-01T00:00:00.000Z')).toBe('2021-03-01');
  });

  it('writes enriched_at as the ISO datetime, and enums and text as they are', () => {
    const enrichedAt = '2026-01-02T03:04:05.678Z';
    expect(formatHubSpotValue('status.enriched_at', enrichedAt)).toBe(enrichedAt);
    expect(formatHubSpotValue('status.enrichment_status', 'below_min_confidence')).toBe('below_min_confidence');
    expect(formatHubSpotValue('household.political_party', 'Independent')).toBe('Independent');
    expect(formatHubSpotValue('career.job_title', 'CFO')).toBe('CFO');
  });

  it('formats every value a sandbox enrichment yields into something its property holds', () => {
    for (const persona of PERSONAS) {
      const response = {
        household_matched: persona.household !== undefined,
        career_matched: persona.career !== undefined,
        ...(persona.household === undefined ? {} : { household: persona.household }),
        ...(persona.career === undefined ? {} : { career: persona.career }),
      };
      const { values } = fieldsFromResponse(response, 0, new Date('2026-01-02T03:04:05.678Z'));
      for (const [key, raw] of values) {
        const name = hubspotPropertyFor(key);
        expect(name, key).not.toBeNull();
        const p = property(name ?? '');
        const value = formatHubSpotValue(key, raw);
        expect(value, key).not.toBeNull();
        if (p.type === 'number') expect(typeof value, key).toBe('number');
        else expect(typeof value, key).toBe('string');
        if (p.type === 'bool' || p.type === 'enumeration')
          expect(
            p.options?.map((o) => o.value),
            key,
          ).toContain(value);
        if (p.type === 'date') expect(value, key).toMatch(/^\d{4}-\d{2}-\d{2}$/);
        if (p.type === 'datetime') expect(new Date(String(value)).toISOString(), key).toBe(value);
      }
    }
  });
});
