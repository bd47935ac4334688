// The typo query set (`data generate --noise typos`, issue 15 item 4), on generated files: each line is
// a person's name and household address with exactly the one error its `noise` names (checked against
// the person and household the data holds), at the documented shares; negatives put a real name at
// another household's address; the default files are the same with or without it, and a seed makes
// the same set.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { distance } from 'fastest-levenshtein';
import damerauLevenshtein from 'talisman/metrics/damerau-levenshtein.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { HouseholdRecordSchema, PersonRecordSchema, type QueryLine, QueryLineSchema } from '../../core/snapshot/format.ts';
import { generateSnapshot } from '../../core/snapshot/generator/generate.ts';
import { CORRUPTIONS, CORRUPTION_SHARES, NEGATIVE_SHARE, NUMBER_ERRORS, wrongNumber } from '../../core/snapshot/generator/data/corruption.ts';
import { Rng } from '../../core/snapshot/generator/data/random.ts';
import { readJsonl, tempDir } from '../support/harness.ts';

const PEOPLE = 4000;
const QUERIES = 2500;

let dir = '';
let lines: QueryLine[] = [];

beforeAll(async () => {
  dir = tempDir('enrichbridge-typos-');
  await generateSnapshot(dir, { people: PEOPLE, queries: QUERIES, seed: 3, typos: true });
  lines = readJsonl(path.join(dir, 'queries-typos.jsonl'), (v) => QueryLineSchema.parse(v));
});

const typeOf = (line: QueryLine): string => (line.noise[0] ?? '').replace(/^typos:/, '');

describe('the typo query set', () => {
  it('carries a name and an address only, and one documented error type a line', () => {
    expect(lines.length).toBeGreaterThan(1000);
    for (const line of lines) {
      expect(line.noise).toHaveLength(1);
      expect([...CORRUPTIONS, 'negative']).toContain(typeOf(line));
      expect(line.request.emails).toBeUndefined();
      expect(line.request.phones).toBeUndefined();
      expect(line.request.addresses).toHaveLength(1);
    }
  });

  it('has each error type at its documented share (within 3 points), and about 20 % negatives', () => {
    const duplicates = lines.filter((line) => typeOf(line) !== 'negative');
    const share = (type: string) => duplicates.filter((line) => typeOf(line) === type).length / duplicates.length;
    for (const type of CORRUPTIONS) {
      // A surname no phonetic rule applies to gets a one-edit typo instead: the two are compared together.
      if (type === 'surname_phonetic' || type === 'surname_typo') continue;
      expect({ type, share: Math.abs(share(type) - CORRUPTION_SHARES[type]) < 0.03 }).toEqual({ type, share: true });
    }
    expect(Math.abs(share('surname_phonetic') + share('surname_typo') - CORRUPTION_SHARES.surname_phonetic - CORRUPTION_SHARES.surname_typo)).toBeLessThan(
      0.03,
    );
    expect(share('surname_phonetic')).toBeGreaterThan(0.05);
    expect(Math.abs(lines.filter((line) => typeOf(line) === 'negative').length / lines.length - NEGATIVE_SHARE)).toBeLessThan(0.03);
  });

  it('makes each error what its type says, against the person and household in the data', () => {
    const people = new Map(readJsonl(path.join(dir, 'people.jsonl'), (v) => PersonRecordSchema.parse(v)).map((p) => [p.person_id, p]));
    const households = new Map(readJsonl(path.join(dir, 'households.jsonl'), (v) => HouseholdRecordSchema.parse(v)).map((h) => [h.windfall_id, h]));
    const seen = new Set<string>();
    // Each wrong house number's distance from the right one.
    const numbers: number[] = [];
    for (const line of lines) {
      const type = typeOf(line);
      const request = line.request as { first_name: string | null; last_name: string; addresses: { address: string; city: string; zipcode: string }[] };
      const got = request.addresses[0];
      if (type === 'negative') {
        expect(line.expected.person_id).toBeNull();
        continue;
      }
      const person = people.get(line.expected.person_id ?? '');
      const home = households.get(line.expected.windfall_id ?? '')?.addresses[0];
      if (person === undefined || home === undefined || got === undefined) throw new Error(`line ${line.request.id as string}: no person or household`);
      seen.add(type);
      const street = (text: string | null | undefined) => (text ?? '').split(' ').slice(1).join(' ');
      const sameAddress = got.zipcode === home.zipcode && got.city === home.city;
      switch (type) {
        case 'none':
          expect([request.first_name, request.last_name]).toEqual([person.first_name, person.last_name]);
          expect(sameAddress).toBe(true);
          break;
        case 'surname_typo':
          expect(distance(request.last_name, person.last_name ?? '')).toBeGreaterThanOrEqual(1);
          expect(distance(request.last_name, person.last_name ?? '')).toBeLessThanOrEqual(2);
          break;
        case 'surname_multi_edit':
          expect(distance(request.last_name, person.last_name ?? '')).toBeGreaterThanOrEqual(2);
          break;
        case 'surname_phonetic':
          expect(request.last_name).not.toBe(person.last_name);
          expect(request.last_name[0]).toBe(person.last_name?.[0]);
          break;
        case 'swapped_names':
          expect([request.first_name, request.last_name]).toEqual([person.last_name, person.first_name]);
          break;
        case 'given_name_missing':
          expect(request.first_name).toBeNull();
          expect(request.last_name).toBe(person.last_name);
          break;
        case 'postcode':
          expect(got.zipcode).not.toBe(home.zipcode);
          expect(got.city).toBe(home.city);
          expect(got.address).toBe(home.address);
          break;
        case 'street_number':
          expect(got.address.split(' ')[0]).not.toBe((home.address ?? '').split(' ')[0]);
          numbers.push(damerauLevenshtein(got.address.split(' ')[0] ?? '', (home.address ?? '').split(' ')[0] ?? ''));
          expect(street(got.address)).toBe(street(home.address));
          break;
        case 'street_typo':
        case 'street_suffix':
          expect(sameAddress).toBe(true);
          expect(got.address).not.toBe(home.address);
          expect(distance(got.address, home.address ?? '')).toBeLessThanOrEqual(type === 'street_typo' ? 2 : 9);
          break;
      }
    }
    expect([...seen].sort()).toEqual([...CORRUPTIONS].sort());
    // Most wrong numbers are one digit slipped (NUMBER_ERRORS).
    expect(numbers.length).toBeGreaterThan(50);
    expect(numbers.filter((d) => d === 1).length / numbers.length).toBeGreaterThan(0.8);
  });

  it("gets a house number wrong mostly by one slipped digit, at Febrl's shares, and otherwise with another number of the street", () => {
    const rng = new Rng(11, 'wrong-numbers');
    const kinds = { slipped: 0, other: 0 };
    const draws = 20_000;
    for (let i = 0; i < draws; i += 1) {
      const number = String(1 + rng.int(9999));
      const wrong = wrongNumber(rng, number);
      expect(wrong).not.toBe(number);
      expect(wrong).toMatch(/^[1-9]\d*$/);
      if (damerauLevenshtein(wrong, number) === 1) kinds.slipped += 1;
      else kinds.other += 1;
    }
    // "other" adds 1..400, which now and then lands one digit off by itself (12 + 10 = 22).
    const slipped = 1 - NUMBER_ERRORS.other;
    expect(kinds.slipped / draws).toBeGreaterThanOrEqual(slipped - 0.01);
    expect(kinds.slipped / draws).toBeLessThan(slipped + 0.03);
  });

  it('leaves the data and queries.jsonl as they are without it, and makes the same set for a seed', async () => {
    const plain = tempDir('enrichbridge-typos-plain-');
    const again = tempDir('enrichbridge-typos-again-');
    await generateSnapshot(plain, { people: PEOPLE, queries: QUERIES, seed: 3 });
    await generateSnapshot(again, { people: PEOPLE, queries: QUERIES, seed: 3, typos: true });
    for (const file of ['people.jsonl', 'households.jsonl', 'queries.jsonl'])
      expect(readFileSync(path.join(plain, file), 'utf8')).toBe(readFileSync(path.join(dir, file), 'utf8'));
    expect(readFileSync(path.join(again, 'queries-typos.jsonl'), 'utf8')).toBe(readFileSync(path.join(dir, 'queries-typos.jsonl'), 'utf8'));
  });
});
