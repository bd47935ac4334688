// The multi-error query set (`data generate --noise typos` writes queries-multi.jsonl beside the typo
// set; core/snapshot/generator/data/multi-corruption.ts), on generated files: each line is a person's
// name and household address with the modifications its `noise` names and no other (checked against
// the person and household the data holds), drawn at the documented shares; negatives put a real name at
// another household's address; a seed makes the same set, and the other files are unchanged by it.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { distance } from 'fastest-levenshtein';
import { beforeAll, describe, expect, it } from 'vitest';
import { HouseholdRecordSchema, PersonRecordSchema, type QueryLine, QueryLineSchema } from '../../core/snapshot/format.ts';
import { generateSnapshot } from '../../core/snapshot/generator/generate.ts';
import {
  FIELDS,
  MAX_PER_FIELD,
  MODIFICATIONS_PER_RECORD,
  MODIFICATION_TYPES,
  MULTI_FIELDS,
  MULTI_NEGATIVE_SHARE,
  type MultiField,
} from '../../core/snapshot/generator/data/multi-corruption.ts';
import { readJsonl, tempDir } from '../support/harness.ts';

const PEOPLE = 6000;
const QUERIES = 4000;

let dir = '';
let lines: QueryLine[] = [];

beforeAll(async () => {
  dir = tempDir('enrichbridge-multi-');
  await generateSnapshot(dir, { people: PEOPLE, queries: QUERIES, seed: 5, typos: true });
  lines = readJsonl(path.join(dir, 'queries-multi.jsonl'), (v) => QueryLineSchema.parse(v));
});

const negative = (line: QueryLine) => line.noise.includes('multi:negative');
/** The line's modifications as [field, type]. */
const modificationsOf = (line: QueryLine): [MultiField, string][] =>
  line.noise.filter((n) => !n.startsWith('multi:fields=')).map((n) => n.slice('multi:'.length).split(':') as [MultiField, string]);

describe('the multi-error query set', () => {
  it('carries a name and an address only, the number of corrupted fields, and each modification by field and type', () => {
    expect(lines.length).toBeGreaterThan(1500);
    for (const line of lines) {
      expect(line.request.emails).toBeUndefined();
      expect(line.request.phones).toBeUndefined();
      expect(line.request.addresses).toHaveLength(1);
      if (negative(line)) continue;
      const modifications = modificationsOf(line);
      expect(modifications.length).toBeGreaterThanOrEqual(1);
      expect(modifications.length).toBeLessThanOrEqual(4);
      for (const [field, type] of modifications) {
        expect(MULTI_FIELDS).toContain(field);
        expect(MODIFICATION_TYPES).toContain(type);
      }
      const fields = new Set(modifications.map(([field]) => field));
      expect(line.noise[0]).toBe(`multi:fields=${fields.size}`);
    }
  });

  it('never makes more than two modifications on one field, and a missing field takes no other', () => {
    for (const line of lines.filter((l) => !negative(l))) {
      const modifications = modificationsOf(line);
      for (const field of MULTI_FIELDS) {
        const on = modifications.filter(([f]) => f === field);
        expect(on.length).toBeLessThanOrEqual(MAX_PER_FIELD);
        if (on.some(([, type]) => type === 'missing')) expect(on.map(([, type]) => type)).toEqual(['missing']);
      }
    }
  });

  it("draws modifications per record, fields by Febrl's select probabilities, at the documented shares, and about 20 % negatives", () => {
    const duplicates = lines.filter((l) => !negative(l));
    for (const [count, share] of Object.entries(MODIFICATIONS_PER_RECORD)) {
      // A missing value ends its field's modifications: a record may get one fewer than drawn, now and then.
      const got = duplicates.filter((l) => modificationsOf(l).length === Number(count)).length / duplicates.length;
      expect({ count, near: Math.abs(got - share) < 0.05 }).toEqual({ count, near: true });
    }
    const all = duplicates.flatMap(modificationsOf);
    const selectTotal = MULTI_FIELDS.reduce((sum, field) => sum + FIELDS[field].select, 0);
    for (const field of MULTI_FIELDS) {
      const got = all.filter(([f]) => f === field).length / all.length;
      expect({ field, near: Math.abs(got - FIELDS[field].select / selectTotal) < 0.03 }).toEqual({ field, near: true });
    }
    expect(Math.abs(lines.filter(negative).length / lines.length - MULTI_NEGATIVE_SHARE)).toBeLessThan(0.03);
    // Enough of each case the real-world benchmark found hardest to measure it.
    expect(all.filter(([f, t]) => f === 'given_name' && t === 'value_swap').length).toBeGreaterThan(30);
    expect(all.filter(([f, t]) => f === 'city' && t === 'value_swap').length).toBeGreaterThan(30);
  });

  it('changes the fields it names and no other, against the person and household in the data', () => {
    const people = new Map(readJsonl(path.join(dir, 'people.jsonl'), (v) => PersonRecordSchema.parse(v)).map((p) => [p.person_id, p]));
    const households = new Map(readJsonl(path.join(dir, 'households.jsonl'), (v) => HouseholdRecordSchema.parse(v)).map((h) => [h.windfall_id, h]));
    let named = 0;
    let unchanged = 0;
    for (const line of lines) {
      const request = line.request as {
        first_name: string | null;
        last_name: string | null;
        addresses: { address: string | null; city: string | null; state: string; zipcode: string | null }[];
      };
      const got = request.addresses[0];
      if (negative(line)) {
        expect(line.expected.person_id).toBeNull();
        continue;
      }
      const person = people.get(line.expected.person_id ?? '');
      const home = households.get(line.expected.windfall_id ?? '')?.addresses[0];
      if (person === undefined || home === undefined || got === undefined) throw new Error(`line ${String(line.request.id)}: no person or household`);
      const modifications = modificationsOf(line);
      const touched = new Set(modifications.map(([field]) => field));
      const placeSwapped = modifications.some(([field, type]) => field === 'city' && type === 'value_swap');
      const homeNumber = (home.address ?? '').split(' ')[0];
      const homeStreet = (home.address ?? '').split(' ').slice(1).join(' ');
      const gotWords = (got.address ?? '').split(' ');
      // What each field holds in the request, and in the data.
      const values: Record<MultiField, [string | null, string | null]> = {
        given_name: [request.first_name, person.first_name ?? null],
        surname: [request.last_name, person.last_name ?? null],
        street_number: touched.has('street_number') ? [null, homeNumber ?? null] : [gotWords[0] ?? null, homeNumber ?? null],
        street: touched.has('street_number') ? [null, homeStreet] : [gotWords.slice(1).join(' '), homeStreet],
        city: [got.city, home.city ?? null],
        postcode: [got.zipcode, home.zipcode ?? null],
      };
      for (const field of MULTI_FIELDS) {
        const [value, original] = values[field];
        if (touched.has(field)) {
          named += 1;
          if (field !== 'street_number' && field !== 'street' && value === original) unchanged += 1;
        } else if (field === 'postcode' && placeSwapped) {
          expect(value).not.toBe(original);
        } else if (!(field === 'street' && touched.has('street_number'))) {
          expect({ line: line.request.id, field, value }).toEqual({ line: line.request.id, field, value: original });
        }
      }
      expect(got.state).toBe(home.state);
      for (const [field, type] of modifications) {
        if (type === 'missing' && field === 'given_name') expect(request.first_name).toBeNull();
        const onField = modifications.filter(([f]) => f === field).length;
        if (type === 'value_swap' && field === 'given_name' && request.first_name !== null && onField === 1)
          expect(distance(request.first_name.toLowerCase(), (person.first_name ?? '').toLowerCase())).toBeGreaterThanOrEqual(3);
        if (type === 'value_swap' && field === 'city') expect(got.zipcode).not.toBe(home.zipcode);
      }
    }
    // Two modifications of one field may undo each other (a letter inserted, then deleted); rarely.
    expect(unchanged / named).toBeLessThan(0.01);
  });

  it('makes the same set for a seed, and leaves the other query files as they are', async () => {
    const again = tempDir('enrichbridge-multi-again-');
    await generateSnapshot(again, { people: PEOPLE, queries: QUERIES, seed: 5, typos: true });
    for (const file of ['queries-multi.jsonl', 'queries-typos.jsonl', 'queries.jsonl'])
      expect(readFileSync(path.join(again, file), 'utf8')).toBe(readFileSync(path.join(dir, file), 'utf8'));
    const plain = tempDir('enrichbridge-multi-plain-');
    await generateSnapshot(plain, { people: PEOPLE, queries: QUERIES, seed: 5 });
    expect(readFileSync(path.join(plain, 'queries.jsonl'), 'utf8')).toBe(readFileSync(path.join(dir, 'queries.jsonl'), 'utf8'));
  });
});
