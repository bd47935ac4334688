// The Salesforce custom fields: one per contract field and status key on each object, API names and
// labels Salesforce accepts, types, lengths and precision within the metadata rules (docs/reference/crm-platforms.md
// section 10), the key ↔ API name mapping, and how values are formatted for Salesforce.
import { ENRICHMENT_STATUSES, LIST_SEPARATOR } from '../../connectors/kit/field-catalogue.ts';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CAREER_FIELDS, CareerSchema, HOUSEHOLD_FIELDS, HouseholdSchema } from '../../core/contract/schemas.ts';
import { PERSONAS } from '../../core/sandbox/personas.ts';
import {
  DECIMALS,
  ENRICHED_AT_FIELD,
  SALESFORCE_FIELD_KEYS,
  SALESFORCE_FIELD_NAMES,
  SALESFORCE_IDENTITY_FIELDS,
  SALESFORCE_LIMITS,
  SALESFORCE_OBJECTS,
  SALESFORCE_OUTBOUND_MESSAGE_FIELDS,
  fieldKeyForSalesforceField,
  formatSalesforceValue,
  readSalesforceValue,
  salesforceApiName,
  salesforceFieldFor,
  salesforceFieldType,
  salesforceFields,
  salesforceLabel,
  type SalesforceFieldDefinition,
  type SalesforceObject,
} from '../../connectors/salesforce/fields.ts';
import {
  SALESFORCE_API_VERSION,
  SALESFORCE_EVENTS_ROUTE,
  SALESFORCE_OAUTH_CALLBACK_ROUTE,
  SALESFORCE_OAUTH_INSTALL_ROUTE,
  SALESFORCE_OUTBOUND_MESSAGE_ROUTE,
} from '../../connectors/salesforce/paths.ts';
import { SALESFORCE_API_VERSION as VERSION_MODULE_API_VERSION } from '../../connectors/salesforce/version.ts';
import { STATUS_KEYS, fieldsFromResponse } from '../../bridge/write-policy.ts';

const fields = salesforceFields();
const STATUS_NAMES = ['WF_Enriched_At__c', 'WF_Household_Matched__c', 'WF_Career_Matched__c', 'WF_Enrichment_Status__c'];
const titleCase = (field: string): string =>
  field
    .split('_')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join('_');

function onObject(object: SalesforceObject): SalesforceFieldDefinition[] {
  return fields.filter((f) => f.object === object);
}

function field(name: string, object: SalesforceObject = 'Contact'): SalesforceFieldDefinition {
  const found = fields.find((f) => f.object === object && f.name === name);
  if (found === undefined) throw new Error(`no field ${object}.${name}`);
  return found;
}

/** What docs/reference/crm-platforms.md section 10 and the Metadata API allow for a custom field name. */
function expectValidApiName(name: string): void {
  expect(name).toMatch(/^[A-Za-z][A-Za-z0-9_]*__c$/);
  const base = name.slice(0, -'__c'.length);
  expect(base.length, name).toBeLessThanOrEqual(40);
  expect(base, name).not.toContain('__');
  expect(base.endsWith('_'), name).toBe(false);
}

describe('Salesforce custom fields', () => {
  it('has exactly one field per household field, career field and status key on each object, and the do-not-enrich checkbox', () => {
    const expected = [
      ...STATUS_NAMES,
      ...HOUSEHOLD_FIELDS.map((f) => `WF_HH_${titleCase(f)}__c`),
      ...CAREER_FIELDS.map((f) => `WF_Career_${titleCase(f)}__c`),
      'WF_Do_Not_Enrich__c',
    ];
    expect([...SALESFORCE_OBJECTS]).toEqual(['Contact', 'Lead']);
    for (const object of SALESFORCE_OBJECTS) {
      const names = onObject(object).map((f) => f.name);
      expect([...names].sort(), object).toEqual([...expected].sort());
      expect(new Set(names).size).toBe(names.length);
      expect(names).toHaveLength(4 + 32 + 26 + 1);
    }
    expect(fields).toHaveLength(2 * (4 + 32 + 26 + 1));
    expect(field('WF_Do_Not_Enrich__c')).toMatchObject({ type: 'Checkbox', defaultValue: false });
  });

  it('defines the same field the same way on Contact and on Lead (lead conversion needs matching types)', () => {
    const strip = ({ object: _object, ...rest }: SalesforceFieldDefinition) => rest;
    expect(onObject('Lead').map(strip)).toEqual(onObject('Contact').map(strip));
  });

  it('names fields as the issue asks: Title_Case of the snake_case name under WF_HH_ / WF_Career_', () => {
    expect(salesforceFieldFor('household.net_worth')).toBe('WF_HH_Net_Worth__c');
    expect(salesforceFieldFor('career.job_title')).toBe('WF_Career_Job_Title__c');
    expect(salesforceFieldFor('household.low_confidence_net_worth')).toBe('WF_HH_Low_Confidence_Net_Worth__c');
    expect(salesforceFieldFor('career.company_address_line_one')).toBe('WF_Career_Company_Address_Line_One__c');
    expect(SALESFORCE_FIELD_NAMES).toEqual(onObject('Contact').map((f) => f.name));
  });

  it('gives every field an API name Salesforce accepts: ≤ 40 characters before __c, starts with a letter, no double or trailing underscore', () => {
    for (const f of fields) expectValidApiName(f.name);
  });

  it('labels every field readably, within 40 characters, each label once per object', () => {
    for (const object of SALESFORCE_OBJECTS) {
      const labels = onObject(object).map((f) => f.label);
      expect(new Set(labels).size, object).toBe(labels.length);
    }
    for (const f of fields) {
      expect(f.label.length, f.name).toBeLessThanOrEqual(SALESFORCE_LIMITS.label);
      expect(f.label, f.name).toMatch(/^WF [A-Z]/);
      expect(f.label, f.name).not.toContain('_');
    }
    expect(field('WF_HH_Net_Worth__c').label).toBe('WF Household: Net worth');
    expect(field('WF_Career_Job_Title__c').label).toBe('WF Career: Job title');
    expect(field('WF_Career_Company_Naics_Code__c').label).toBe('WF Career: Company NAICS code');
    expect(field('WF_HH_Confidence__c').label).not.toBe(field('WF_Career_Confidence__c').label);
  });

  it("describes every field within Salesforce's limits, with the schema's description where it has one", () => {
    for (const f of fields) {
      expect(f.description.trim(), f.name).not.toBe('');
      expect(f.description.length, f.name).toBeLessThanOrEqual(SALESFORCE_LIMITS.description);
      expect(f.inlineHelpText.trim(), f.name).not.toBe('');
      expect(f.inlineHelpText.length, f.name).toBeLessThanOrEqual(SALESFORCE_LIMITS.inlineHelpText);
    }
    expect(field('WF_HH_Net_Worth__c').description).toContain('Estimated net worth in dollars.');
    expect(field('WF_HH_Low_Confidence_Net_Worth__c').description).toContain('US dollars');
    expect(field('WF_Career_Job_Level__c').description).toContain('C-Suite');
    expect(field('WF_HH_Philanthropic_Cause__c').description).toContain(`joined with "${LIST_SEPARATOR}"`);
    expect(field('WF_HH_Boat_Owner__c').description).toContain('Unchecked means false or not provided');
  });
});

describe('field types', () => {
  /** What every definition has; the rest depends on the type. */
  const COMMON_PROPERTIES = new Set(['object', 'name', 'label', 'description', 'inlineHelpText', 'type']);

  it('keeps each type within the metadata rules: Text 1–255, Number precision ≤ 18 and scale ≤ precision, Checkbox default false', () => {
    for (const f of fields) {
      const extra = Object.fromEntries(Object.entries(f).filter(([key]) => !COMMON_PROPERTIES.has(key)));
      switch (f.type) {
        case 'Text':
          expect(extra, f.name).toEqual({ length: expect.any(Number) });
          expect(f.length).toBeGreaterThanOrEqual(1);
          expect(f.length).toBeLessThanOrEqual(255);
          break;
        case 'Number':
          expect(extra, f.name).toEqual({ precision: expect.any(Number), scale: expect.any(Number) });
          expect(f.precision).toBeGreaterThanOrEqual(1);
          expect(f.precision).toBeLessThanOrEqual(18);
          expect(f.scale).toBeGreaterThanOrEqual(0);
          expect(f.scale).toBeLessThanOrEqual(f.precision ?? 0);
          break;
        case 'Checkbox':
          expect(extra, f.name).toEqual({ defaultValue: false });
          break;
        case 'Picklist': {
          const values = f.picklistValues?.map((v) => v.value) ?? [];
          expect(values.length, f.name).toBeGreaterThan(0);
          expect(new Set(values).size).toBe(values.length);
          for (const option of f.picklistValues ?? []) expect(option.label.length).toBeLessThanOrEqual(255);
          expect(Object.keys(extra), f.name).toEqual(['picklistValues']);
          break;
        }
        case 'Date':
        case 'DateTime':
        case 'Url':
          // Url has no length; Date and DateTime neither.
          expect(extra, f.name).toEqual({});
          break;
      }
    }
  });

  it('types each field from its schema', () => {
    const type = (name: string) => field(name).type;
    for (const name of ['WF_HH_Net_Worth__c', 'WF_HH_Low_Confidence_Net_Worth__c', 'WF_HH_High_Confidence_Net_Worth__c']) {
      expect(field(name)).toMatchObject({ type: 'Number', precision: 18, scale: 0 });
    }
    expect(field('WF_HH_Loan_To_Value__c')).toMatchObject({ type: 'Number', precision: 6, scale: 4 });
    expect(field('WF_HH_Confidence__c')).toMatchObject({ type: 'Number', precision: 5, scale: 4 });
    expect(field('WF_Career_Confidence__c')).toMatchObject({ type: 'Number', precision: 5, scale: 4 });
    expect(type('WF_HH_Boat_Owner__c')).toBe('Checkbox');
    expect(type('WF_Career_Recently_Promoted__c')).toBe('Checkbox');
    expect(type('WF_HH_Net_Worth_Last_Calculated__c')).toBe('Date');
    expect(type('WF_Career_Job_Start_Date__c')).toBe('Date');
    expect(type('WF_HH_Political_Party__c')).toBe('Picklist');
    expect(field('WF_HH_Political_Party__c').picklistValues?.map((v) => v.value)).toEqual(['Democrat', 'Republican', 'Independent']);
    expect(field('WF_HH_Philanthropic_Cause__c')).toMatchObject({ type: 'Text', length: 255 });
    expect(field('WF_HH_Regional_Focus__c')).toMatchObject({ type: 'Text', length: 255 });
    expect(field('WF_HH_Windfall_Id__c')).toMatchObject({ type: 'Text', length: 255 });
    expect(type('WF_Career_Linkedin_Url__c')).toBe('Url');
    expect(type('WF_Career_Company_Domain__c')).toBe('Url');
    expect(field('WF_Career_Job_Level__c')).toMatchObject({ type: 'Text', length: 255 });
  });

  it('types the status fields: a DateTime, two Checkboxes, a Picklist of the statuses and the reasons a record was not enriched', () => {
    expect(field('WF_Enriched_At__c').type).toBe('DateTime');
    expect(field('WF_Household_Matched__c')).toMatchObject({ type: 'Checkbox', defaultValue: false });
    expect(field('WF_Career_Matched__c')).toMatchObject({ type: 'Checkbox', defaultValue: false });
    expect(field('WF_Enrichment_Status__c').picklistValues).toEqual([
      { value: 'enriched', label: 'Enriched' },
      { value: 'no_match', label: 'No match' },
      { value: 'below_min_confidence', label: 'Below minimum confidence' },
      { value: 'no_match_key', label: 'Not enriched: no e-mail, phone or address' },
      { value: 'excluded', label: 'Excluded: do not enrich' },
      { value: 'undone', label: 'Enrichment undone' },
    ]);
    expect([...ENRICHMENT_STATUSES]).toEqual(['enriched', 'no_match', 'below_min_confidence', 'no_match_key', 'excluded', 'undone']);
    expect(ENRICHED_AT_FIELD).toBe('WF_Enriched_At__c');
  });

  it("sizes every decimal for the schema's range, and every integer field as Number(18, 0)", () => {
    const ranges: [string, z.ZodNumber][] = [
      ['WF_HH_Confidence__c', HouseholdSchema.shape.confidence],
      ['WF_Career_Confidence__c', CareerSchema.shape.confidence],
    ];
    for (const [name, schema] of ranges) {
      const { precision = 0, scale = 0 } = field(name);
      expect(schema.maxValue, name).toBe(1);
      expect(schema.minValue, name).toBe(0.1);
      expect(Math.abs(schema.maxValue ?? Infinity), name).toBeLessThan(10 ** (precision - scale));
      expect(formatSalesforceValue(`${name.startsWith('WF_HH') ? 'household' : 'career'}.confidence`, 1)).toBe(1);
    }
    expect(Object.keys(DECIMALS).sort()).toEqual(['confidence', 'loan_to_value']);
    for (const [shape, prefix] of [
      [HouseholdSchema.shape, 'household'],
      [CareerSchema.shape, 'career'],
    ] as const) {
      for (const [name, schema] of Object.entries(shape)) {
        const inner = schema instanceof z.ZodOptional ? schema.unwrap() : schema;
        if (!(inner instanceof z.ZodNumber)) continue;
        const definition = field(salesforceFieldFor(`${prefix}.${name}`) ?? '');
        if (inner.isInt) expect(definition, name).toMatchObject({ precision: 18, scale: 0 });
        else expect(definition, name).toMatchObject(DECIMALS[name] ?? { missing: true });
      }
    }
  });
});

describe('API name shortening', () => {
  const longField = 'company_headquarters_mailing_address_line_three';

  it('leaves a name of up to 40 characters alone', () => {
    expect(salesforceApiName('WF_HH_', 'net_worth')).toBe('WF_HH_Net_Worth__c');
    const forty = 'a'.repeat(40 - 'WF_HH_'.length);
    expect(salesforceApiName('WF_HH_', forty)).toBe(`WF_HH_${'A' + forty.slice(1)}__c`);
  });

  it('cuts a longer name to 40 characters with a stable hash suffix', () => {
    const name = salesforceApiName('WF_Career_', longField);
    expectValidApiName(name);
    expect(name).toMatch(/^WF_Career_Company_Headquarters_Mai_[0-9A-Z]{5}__c$/);
    expect(salesforceApiName('WF_Career_', longField)).toBe(name);
  });

  it('keeps two long names that share their first 34 characters apart', () => {
    const a = salesforceApiName('WF_Career_', `${longField}_a`);
    const b = salesforceApiName('WF_Career_', `${longField}_b`);
    expectValidApiName(a);
    expectValidApiName(b);
    expect(a).not.toBe(b);
  });

  it('never leaves a double or trailing underscore where the cut falls after an underscore', () => {
    // 'WF_HH_' + 'Abcdefghijklmnopqrstuvwxyza_' is 34 characters: the cut lands on the underscore.
    const name = salesforceApiName('WF_HH_', 'abcdefghijklmnopqrstuvwxyza_bcdefghijklmnop');
    expectValidApiName(name);
    expect(name).toMatch(/^WF_HH_Abcdefghijklmnopqrstuvwxyza_[0-9A-Z]{5}__c$/);
    expectValidApiName(salesforceApiName('WF_HH_', 'double__underscore_and_trailing_'));
  });

  it('refuses a field name with characters no API name may hold', () => {
    expect(() => salesforceApiName('WF_HH_', 'net-worth')).toThrow();
    expect(() => salesforceApiName('WF_HH_', 'Net_Worth')).toThrow();
    expect(() => salesforceApiName('1WF_', 'net_worth')).toThrow();
  });

  it('fits a label to 40 characters by dropping words from its end', () => {
    expect(salesforceLabel('WF Career: ', 'Job title')).toBe('WF Career: Job title');
    const label = salesforceLabel('WF Career: ', 'Company headquarters mailing address line three');
    expect(label).toBe('WF Career: Company headquarters mailing');
    expect(label.length).toBeLessThanOrEqual(40);
  });
});

describe('field key ↔ API name mapping', () => {
  it('maps every key and back again', () => {
    expect(SALESFORCE_FIELD_KEYS).toHaveLength(onObject('Contact').length);
    for (const key of SALESFORCE_FIELD_KEYS) {
      const name = salesforceFieldFor(key);
      expect(name, key).not.toBeNull();
      expect(fieldKeyForSalesforceField(name ?? '')).toBe(key);
    }
    for (const f of fields) expect(salesforceFieldFor(fieldKeyForSalesforceField(f.name) ?? '')).toBe(f.name);
  });

  it('maps the keys the pipeline produces', () => {
    expect(STATUS_KEYS.map((key) => salesforceFieldFor(key))).toEqual(STATUS_NAMES);
    for (const f of HOUSEHOLD_FIELDS) expect(salesforceFieldFor(`household.${f}`)).toBe(`WF_HH_${titleCase(f)}__c`);
    for (const f of CAREER_FIELDS) expect(salesforceFieldFor(`career.${f}`)).toBe(`WF_Career_${titleCase(f)}__c`);
  });

  it('maps nothing else', () => {
    for (const key of ['household.unknown', 'career.net_worth', 'status.unknown', 'household', 'net_worth', '', 'WF_HH_Net_Worth__c']) {
      expect(salesforceFieldFor(key), key).toBeNull();
      expect(salesforceFieldType(key), key).toBeNull();
    }
    for (const name of ['FirstName', 'WF_HH_Unknown__c', 'household.net_worth', 'wf_hh_net_worth__c', '']) {
      expect(fieldKeyForSalesforceField(name), name).toBeNull();
    }
  });
});

describe('identity and outbound message fields', () => {
  it('reads the fields the mapping needs on each object', () => {
    expect(SALESFORCE_IDENTITY_FIELDS.Contact).toEqual([
      'FirstName',
      'LastName',
      'Email',
      'Phone',
      'MobilePhone',
      'MailingStreet',
      'MailingCity',
      'MailingState',
      'MailingPostalCode',
      'Account.Name',
    ]);
    expect(SALESFORCE_IDENTITY_FIELDS.Lead).toEqual([
      'FirstName',
      'LastName',
      'Email',
      'Phone',
      'MobilePhone',
      'Street',
      'City',
      'State',
      'PostalCode',
      'Company',
    ]);
  });

  it('sends Id and the identity fields of the object itself (no relationship paths) in outbound messages', () => {
    expect(SALESFORCE_OUTBOUND_MESSAGE_FIELDS.Contact).toEqual(['Id', ...SALESFORCE_IDENTITY_FIELDS.Contact.filter((f) => f !== 'Account.Name')]);
    expect(SALESFORCE_OUTBOUND_MESSAGE_FIELDS.Lead).toEqual(['Id', ...SALESFORCE_IDENTITY_FIELDS.Lead]);
  });
});

describe('value formatting', () => {
  it('writes booleans as booleans, and nothing for a non-boolean in a Checkbox', () => {
    expect(formatSalesforceValue('household.boat_owner', true)).toBe(true);
    expect(formatSalesforceValue('household.boat_owner', false)).toBe(false);
    expect(formatSalesforceValue('status.household_matched', true)).toBe(true);
    expect(formatSalesforceValue('household.boat_owner', 'true')).toBeNull();
  });

  it("writes numbers as numbers rounded to the field's scale; nothing when not finite or beyond its precision", () => {
    expect(formatSalesforceValue('household.net_worth', 2_400_000)).toBe(2_400_000);
    expect(formatSalesforceValue('household.net_worth', -15_000)).toBe(-15_000);
    expect(formatSalesforceValue('household.loan_to_value', 0.38)).toBe(0.38);
    expect(formatSalesforceValue('household.loan_to_value', 0.123456)).toBe(0.1235);
    expect(formatSalesforceValue('household.loan_to_value', 1.25)).toBe(1.25);
    expect(formatSalesforceValue('household.loan_to_value', 100)).toBeNull();
    expect(formatSalesforceValue('career.confidence', 0.87)).toBe(0.87);
    expect(formatSalesforceValue('household.confidence', 10)).toBeNull();
    expect(formatSalesforceValue('household.net_worth', 2.6)).toBe(3);
    expect(formatSalesforceValue('household.net_worth', Number.NaN)).toBeNull();
    expect(formatSalesforceValue('household.net_worth', Number.POSITIVE_INFINITY)).toBeNull();
    expect(formatSalesforceValue('household.net_worth', 1e18)).toBeNull();
    expect(formatSalesforceValue('household.net_worth', '2400000')).toBeNull();
  });

  it('joins lists with "; ", dropping empty entries; an empty list, or one longer than 255 characters, is no value', () => {
    expect(formatSalesforceValue('household.philanthropic_cause', ['B', 'E'])).toBe('B; E');
    expect(formatSalesforceValue('household.regional_focus', ['National', ' GA ', ''])).toBe('National; GA');
    expect(formatSalesforceValue('household.regional_focus', [])).toBeNull();
    expect(formatSalesforceValue('household.regional_focus', ['  '])).toBeNull();
    expect(
      formatSalesforceValue(
        'household.regional_focus',
        Array.from({ length: 10 }, () => 'x'.repeat(30)),
      ),
    ).toBeNull();
    expect(
      formatSalesforceValue(
        'household.regional_focus',
        Array.from({ length: 10 }, () => 'x'.repeat(20)),
      ),
    ).toHaveLength(10 * 20 + 9 * 2);
  });

  it('writes dates as YYYY-MM-DD, and enriched_at as the ISO instant', () => {
    expect(formatSalesforceValue('household.net_worth_last_calculated', '2026-11-16')).toBe('2026-11-16');
    expect(formatSalesforceValue('career.job_start_date', '2021-03-01T00:00:00.000Z')).toBe('2021-03-01');
    expect(formatSalesforceValue('career.job_start_date', 'March 2021')).toBeNull();
    const enrichedAt = '2026-01-02T03:04:05.678Z';
    expect(formatSalesforceValue('status.enriched_at', enrichedAt)).toBe(enrichedAt);
    expect(formatSalesforceValue('status.enriched_at', 'not a date')).toBeNull();
  });

  it('writes listed picklist values as they are and refuses any other', () => {
    expect(formatSalesforceValue('status.enrichment_status', 'below_min_confidence')).toBe('below_min_confidence');
    expect(formatSalesforceValue('household.political_party', 'Independent')).toBe('Independent');
    expect(formatSalesforceValue('household.political_party', 'Green')).toBeNull();
    expect(formatSalesforceValue('household.political_party', 'independent')).toBeNull();
  });

  it('writes text and URLs as they are, and refuses (never truncates) one longer than 255 characters', () => {
    expect(formatSalesforceValue('career.job_title', 'CFO')).toBe('CFO');
    expect(formatSalesforceValue('career.linkedin_url', 'linkedin.com/in/amanda-taylor')).toBe('linkedin.com/in/amanda-taylor');
    expect(formatSalesforceValue('career.job_title', 'x'.repeat(255))).toHaveLength(255);
    expect(formatSalesforceValue('career.job_title', 'x'.repeat(256))).toBeNull();
    expect(formatSalesforceValue('career.linkedin_url', `linkedin.com/in/${'x'.repeat(250)}`)).toBeNull();
    expect(formatSalesforceValue('career.job_title', '   ')).toBeNull();
    expect(formatSalesforceValue('career.job_title', 42)).toBeNull();
  });

  it('formats nothing for a key it does not write', () => {
    expect(formatSalesforceValue('household.unknown', 'x')).toBeNull();
    expect(formatSalesforceValue('', true)).toBeNull();
  });

  it('formats every value a sandbox enrichment yields into something its field holds', () => {
    for (const persona of PERSONAS) {
      const response = {
        household_matched: persona.household !== undefined,
        career_matched: persona.career !== undefined,
        ...(persona.household === undefined ? {} : { household: persona.household }),
        ...(persona.career === undefined ? {} : { career: persona.career }),
      };
      const { values } = fieldsFromResponse(response, 0, new Date('2026-01-02T03:04:05.678Z'));
      for (const [key, raw] of values) {
        const name = salesforceFieldFor(key);
        expect(name, key).not.toBeNull();
        const f = field(name ?? '');
        const value = formatSalesforceValue(key, raw);
        expect(value, key).not.toBeNull();
        if (f.type === 'Number') expect(typeof value, key).toBe('number');
        else if (f.type === 'Checkbox') expect(typeof value, key).toBe('boolean');
        else expect(typeof value, key).toBe('string');
        if (f.type === 'Picklist')
          expect(
            f.picklistValues?.map((v) => v.value),
            key,
          ).toContain(value);
        if (f.type === 'Date') expect(value, key).toMatch(/^\d{4}-\d{2}-\d{2}$/);
        if (f.type === 'DateTime') expect(new Date(String(value)).toISOString(), key).toBe(value);
        if (f.type === 'Text' || f.type === 'Url') expect(String(value).length, key).toBeLessThanOrEqual(255);
      }
    }
  });
});

describe('reading our fields back', () => {
  it('reads an unchecked Checkbox of ours as empty, so the overwrite policy can fill it', () => {
    expect(readSalesforceValue('WF_HH_Boat_Owner__c', false)).toBeNull();
    expect(readSalesforceValue('WF_HH_Boat_Owner__c', true)).toBe(true);
    expect(readSalesforceValue('WF_Household_Matched__c', false)).toBeNull();
  });

  it('passes every other value through', () => {
    expect(readSalesforceValue('WF_HH_Net_Worth__c', 0)).toBe(0);
    expect(readSalesforceValue('WF_Career_Job_Title__c', 'CFO')).toBe('CFO');
    expect(readSalesforceValue('HasOptedOutOfEmail', false)).toBe(false);
    expect(readSalesforceValue('WF_HH_Net_Worth__c', null)).toBeNull();
  });
});

describe('routes and API version', () => {
  it('names the paths Salesforce and the admin call, and API version 62.0 in both modules', () => {
    expect(SALESFORCE_OAUTH_INSTALL_ROUTE).toBe('/oauth/salesforce/install');
    expect(SALESFORCE_OAUTH_CALLBACK_ROUTE).toBe('/oauth/salesforce/callback');
    expect(SALESFORCE_OUTBOUND_MESSAGE_ROUTE).toBe('/webhooks/salesforce/outbound-message');
    expect(SALESFORCE_EVENTS_ROUTE).toBe('/webhooks/salesforce/events');
    expect(SALESFORCE_API_VERSION).toBe('62.0');
    expect(VERSION_MODULE_API_VERSION).toBe(SALESFORCE_API_VERSION);
  });
});
