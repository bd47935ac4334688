// Unit tests of `data generate`: the synthetic snapshot parses with the format schemas, is complete,
// unique where it must be, shared where it should be, consistent, deterministic, and its queries are true.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CAREER_FIELDS, EnrichmentRequestSchema, HOUSEHOLD_FIELDS } from '../../core/contract/schemas.ts';
import { normalizePostalCode, parseStreetLine, postalCodeFromFullAddress } from '../../core/normalize/address.ts';
import { normalizeEmail } from '../../core/normalize/email.ts';
import { personName } from '../../core/normalize/name.ts';
import { normalizePhone } from '../../core/normalize/phone.ts';
import {
  type HouseholdRecord,
  HouseholdRecordSchema,
  ManifestSchema,
  type PersonRecord,
  PersonRecordSchema,
  type QueryLine,
  QueryLineSchema,
} from '../../core/snapshot/format.ts';
import { type GenerateSummary, generateSnapshot } from '../../core/snapshot/generator/generate.ts';
import { householdFields } from '../../core/snapshot/generator/data/households.ts';
import { NICKNAMES } from '../../core/snapshot/generator/data/names.ts';
import { CA_PLACES, US_PLACES } from '../../core/snapshot/generator/data/places.ts';
import { Rng } from '../../core/snapshot/generator/data/random.ts';

const PEOPLE = 2000;
const root = mkdtempSync(path.join(tmpdir(), 'enrichbridge-generate-'));
const dirs = { a: path.join(root, 'a'), b: path.join(root, 'b'), seed2: path.join(root, 'seed2'), gz: path.join(root, 'gz'), few: path.join(root, 'few') };
const FILES = ['manifest.json', 'households.jsonl', 'people.jsonl', 'queries.jsonl'] as const;

let summary: GenerateSummary;
const progress: (readonly [number, number])[] = [];
let households: HouseholdRecord[] = [];
let rawHouseholds: Record<string, unknown>[] = [];
let people: PersonRecord[] = [];
let rawPeople: Record<string, unknown>[] = [];
let queries: QueryLine[] = [];

const read = (dir: string, file: string): string => readFileSync(path.join(dir, file), 'utf8');
const jsonLines = (text: string): unknown[] =>
  text
    .trimEnd()
    .split('\n')
    .map((line): unknown => JSON.parse(line));
const asRecord = (value: unknown): Record<string, unknown> => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('not an object');
  return Object.fromEntries(Object.entries(value));
};
const count = <T>(items: readonly T[], key: (item: T) => string): Map<string, number> => {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
};
const streetKey = (address: string, zipcode: string | null | undefined): string | null => {
  const street = parseStreetLine(address);
  const zip = zipcode === null || zipcode === undefined ? postalCodeFromFullAddress(address) : normalizePostalCode(zipcode);
  return street === null || zip === null ? null : `${street.number}|${street.street}|${zip}`;
};

beforeAll(async () => {
  summary = await generateSnapshot(dirs.a, { people: PEOPLE, onProgress: (done, total) => progress.push([done, total]) });
  await generateSnapshot(dirs.b, { people: PEOPLE });
  await generateSnapshot(dirs.seed2, { people: PEOPLE, seed: 2 });
  await generateSnapshot(dirs.gz, { people: PEOPLE, gzip: true });
  await generateSnapshot(dirs.few, { people: PEOPLE, queries: 37 });
  rawHouseholds = jsonLines(read(dirs.a, 'households.jsonl')).map(asRecord);
  households = rawHouseholds.map((line) => HouseholdRecordSchema.parse(line));
  rawPeople = jsonLines(read(dirs.a, 'people.jsonl')).map(asRecord);
  people = rawPeople.map((line) => PersonRecordSchema.parse(line));
  queries = jsonLines(read(dirs.a, 'queries.jsonl')).map((line) => QueryLineSchema.parse(line));
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('generateSnapshot: files and format', () => {
  it('writes the manifest, households, people and queries, and summarizes them', () => {
    expect(summary.files.map((f) => path.basename(f))).toEqual([...FILES]);
    expect(summary).toMatchObject({ people: PEOPLE, households: households.length, queries: queries.length });
    expect(people).toHaveLength(PEOPLE);
    expect(queries).toHaveLength(1000); // the default: max(1,000, people / 50)
  });

  it('derives the manifest from the version, not from the clock', () => {
    expect(ManifestSchema.parse(JSON.parse(read(dirs.a, 'manifest.json')))).toEqual({ version: '2026-11-16', created_at: '2026-11-16T00:00:00.000Z' });
  });

  it('gives every household every household field but confidence, with primary address first', () => {
    const expected = HOUSEHOLD_FIELDS.filter((f) => f !== 'confidence');
    for (const raw of rawHouseholds) {
      expect(Object.keys(raw).sort()).toEqual([...expected, 'addresses'].sort());
    }
    for (const h of households) {
      expect(h.addresses.length).toBeGreaterThanOrEqual(1);
      expect(h.addresses.length).toBeLessThanOrEqual(3);
    }
  });

  it('gives every career every career field but confidence, all filled', () => {
    const expected = CAREER_FIELDS.filter((f) => f !== 'confidence').sort();
    const careers = rawPeople
      .map((p) => p.career)
      .filter((c) => c !== null)
      .map(asRecord);
    expect(careers.length).toBeGreaterThan(PEOPLE / 2);
    for (const career of careers) {
      expect(Object.keys(career).sort()).toEqual(expected);
      for (const value of Object.values(career)) expect(value === '' || value === null).toBe(false);
    }
  });
});

describe('generateSnapshot: households and people', () => {
  it('puts 1 to 5 people in every household, and about 8% of people in none', () => {
    const sizes = count(
      people.filter((p) => p.windfall_id !== null),
      (p) => p.windfall_id ?? '',
    );
    expect(new Set(households.map((h) => h.windfall_id)).size).toBe(households.length);
    expect([...sizes.keys()].sort()).toEqual(households.map((h) => h.windfall_id).sort());
    for (const size of sizes.values()) expect(size).toBeGreaterThanOrEqual(1);
    for (const size of sizes.values()) expect(size).toBeLessThanOrEqual(5);
    const single = [...sizes.values()].filter((n) => n === 1).length / sizes.size;
    expect(single).toBeGreaterThan(0.2);
    expect(single).toBeLessThan(0.36);
    const alone = people.filter((p) => p.windfall_id === null).length / PEOPLE;
    expect(alone).toBeGreaterThan(0.05);
    expect(alone).toBeLessThan(0.11);
    expect(people.filter((p) => p.windfall_id === null).every((p) => p.career !== null && p.emails.length + p.phones.length > 0)).toBe(true);
  });

  it('keeps person ids, e-mails and linkedin urls unique, and phones unique outside a household', () => {
    expect(new Set(people.map((p) => p.person_id)).size).toBe(PEOPLE);
    const emails = people.flatMap((p) => p.emails.map((e) => normalizeEmail(e)));
    expect(new Set(emails).size).toBe(emails.length);
    const urls = people.flatMap((p) => (p.career?.linkedin_url === undefined ? [] : [p.career.linkedin_url]));
    expect(new Set(urls).size).toBe(urls.length);
    const owner = new Map<string, string>();
    for (const p of people) {
      expect(p.emails.length).toBeLessThanOrEqual(3);
      expect(p.phones.length).toBeLessThanOrEqual(3);
      for (const phone of p.phones) {
        const e164 = normalizePhone(phone);
        expect(e164).toMatch(/^\+1[2-9]\d{2}[2-9]\d{6}$/);
        const home = p.windfall_id ?? p.person_id;
        expect(owner.get(e164 ?? '') ?? home).toBe(home);
        owner.set(e164 ?? '', home);
      }
    }
    // A landline shared by a household makes a phone alone ambiguous.
    const shared = count(
      people.filter((p) => p.windfall_id !== null).flatMap((p) => p.phones.map((ph) => normalizePhone(ph) ?? '')),
      (e) => e,
    );
    expect([...shared.values()].some((n) => n > 1)).toBe(true);
  });

  it('gives household members phone area codes of their city', () => {
    const places = new Map([...US_PLACES, ...CA_PLACES].map((p) => [`${p.city}|${p.state}`, p.areaCodes]));
    const byId = new Map(households.map((h) => [h.windfall_id, h]));
    for (const p of people) {
      const primary = p.windfall_id === null ? undefined : byId.get(p.windfall_id)?.addresses[0];
      if (primary === undefined) continue;
      const codes = places.get(`${primary.city ?? ''}|${primary.state ?? ''}`) ?? [];
      for (const phone of p.phones) expect(codes).toContain(normalizePhone(phone)?.slice(2, 5));
    }
  });

  it('makes a name alone ambiguous: full names repeat, and members mostly share a last name', () => {
    const names = count(people, (p) => `${p.first_name ?? ''} ${p.last_name ?? ''}`);
    expect([...names.values()].filter((n) => n > 1).length).toBeGreaterThan(20);
    const lasts = new Map<string, Set<string>>();
    for (const p of people) if (p.windfall_id !== null) lasts.set(p.windfall_id, (lasts.get(p.windfall_id) ?? new Set()).add(p.last_name ?? ''));
    const multi = [
      ...count(
        people.filter((p) => p.windfall_id !== null),
        (p) => p.windfall_id ?? '',
      ),
    ].filter(([, n]) => n > 1);
    const sameLast = multi.filter(([id]) => lasts.get(id)?.size === 1).length;
    expect(sameLast / multi.length).toBeGreaterThan(0.5);
  });

  it('lets several households share a building, each in its own unit, and never a house', () => {
    const byKey = new Map<string, Set<string>>();
    for (const h of households) {
      for (const a of h.addresses) {
        const key = streetKey(a.address ?? '', a.zipcode);
        expect(key).not.toBeNull();
        const unit = parseStreetLine(a.address ?? '')?.unit ?? null;
        const units = byKey.get(key ?? '') ?? new Set<string>();
        expect(units.has(`${unit}`)).toBe(false);
        if (unit === null) expect(units.size).toBe(0);
        byKey.set(key ?? '', units.add(`${unit}`));
      }
    }
    expect([...byKey.values()].some((units) => units.size > 1)).toBe(true);
  });

  it('uses zips of the state and postal codes of the province', () => {
    const ZIP3: Record<string, readonly (readonly [number, number])[]> = {
      AL: [[350, 369]],
      AK: [[995, 999]],
      AZ: [[850, 865]],
      AR: [[716, 729]],
      CA: [[900, 961]],
      CO: [[800, 816]],
      CT: [[60, 69]],
      DE: [[197, 199]],
      DC: [[200, 205]],
      FL: [[320, 349]],
      GA: [[300, 319]],
      HI: [[967, 968]],
      ID: [[832, 838]],
      IL: [[600, 629]],
      IN: [[460, 479]],
      IA: [[500, 528]],
      KS: [[660, 679]],
      KY: [[400, 427]],
      LA: [[700, 714]],
      ME: [[39, 49]],
      MD: [[206, 219]],
      MA: [[10, 27]],
      MI: [[480, 499]],
      MN: [[550, 567]],
      MS: [[386, 397]],
      MO: [[630, 658]],
      MT: [[590, 599]],
      NE: [[680, 693]],
      NV: [[889, 898]],
      NH: [[30, 38]],
      NJ: [[70, 89]],
      NM: [[870, 884]],
      NY: [[100, 149]],
      NC: [[270, 289]],
      ND: [[580, 588]],
      OH: [[430, 459]],
      OK: [[730, 749]],
      OR: [[970, 979]],
      PA: [[150, 196]],
      RI: [[28, 29]],
      SC: [[290, 299]],
      SD: [[570, 577]],
      TN: [[370, 385]],
      TX: [[750, 799]],
      UT: [[840, 847]],
      VT: [[50, 59]],
      VA: [[220, 246]],
      WA: [[980, 994]],
      WV: [[247, 268]],
      WI: [[530, 549]],
      WY: [[820, 831]],
    };
    const FSA: Record<string, string> = { NL: 'A', NS: 'B', QC: 'GHJ', ON: 'KLMNP', MB: 'R', SK: 'S', AB: 'T', BC: 'V' };
    for (const place of US_PLACES) {
      for (const zip of place.zips) {
        const prefix = Number(zip.slice(0, 3));
        expect(
          ZIP3[place.state]?.some(([lo, hi]) => prefix >= lo && prefix <= hi),
          `${place.city} ${place.state} ${zip}`,
        ).toBe(true);
      }
    }
    for (const place of CA_PLACES) {
      for (const zip of place.zips) {
        expect(normalizePostalCode(zip)).not.toBeNull();
        expect(FSA[place.state]).toContain(zip[0]);
      }
    }
    const canadian = households.filter((h) => /^[A-Z]\d[A-Z] \d[A-Z]\d$/.test(h.addresses[0]?.zipcode ?? '')).length / households.length;
    expect(canadian).toBeGreaterThan(0.05);
    expect(canadian).toBeLessThan(0.16);
  });

  it('shares employers: some company is named by 20 people or more, with one domain and one address', () => {
    const careers = people.flatMap((p) => (p.career === null ? [] : [p.career]));
    const byName = count(careers, (c) => c.company_name ?? '');
    expect(Math.max(...byName.values())).toBeGreaterThanOrEqual(20);
    const variants = count(
      careers,
      (c) => `${c.company_name}|${c.company_domain}|${c.company_address_line_one}|${c.company_size_range}|${c.company_naics_code}`,
    );
    expect(variants.size).toBe(byName.size);
    expect(new Set(careers.map((c) => c.company_category))).toEqual(
      new Set(['Public Company', 'Private Company', 'Educational', 'Government Agency', 'Nonprofit']),
    );
  });
});

describe('generateSnapshot: consistent values', () => {
  it('keeps net worth within its confidence range and loan-to-value at 0 without debt', () => {
    for (const h of households) {
      const { net_worth: nw = -1, low_confidence_net_worth: low = -1, high_confidence_net_worth: high = -1 } = h;
      expect(nw % 100_000).toBe(0);
      expect(low).toBeGreaterThanOrEqual(0);
      expect(low).toBeLessThan(nw);
      expect(nw).toBeLessThan(high);
      expect(h.loan_to_value).toBeGreaterThanOrEqual(0);
      expect(h.loan_to_value).toBeLessThanOrEqual(0.95);
      if (h.has_household_debt === false) expect(h.loan_to_value).toBe(0);
      if (h.top_philanthropic_donor === true) expect(h.philanthropic_giver).toBe(true);
      if (h.foundation_officer_trustee === true) expect(h.foundation_association).toBe(true);
      if (h.top_political_donor === true) expect(h.political_donor).toBe(true);
      if (h.addresses.length > 1) expect(h.multi_property_owner).toBe(true);
      expect((h.philanthropic_cause ?? []).length > 0).toBe(h.philanthropic_giver);
    }
  });

  it('makes the wealthy own planes more and owe debt less, in the data and in the model', () => {
    const rate = (hs: readonly HouseholdRecord[], field: 'plane_owner' | 'has_household_debt'): number =>
      hs.filter((h) => h[field] === true).length / hs.length;
    const rich = households.filter((h) => (h.net_worth ?? 0) >= 5_000_000);
    const modest = households.filter((h) => (h.net_worth ?? 0) < 1_000_000);
    expect(rich.length).toBeGreaterThan(10);
    expect(rate(rich, 'plane_owner')).toBeGreaterThan(rate(modest, 'plane_owner'));
    const draw = (netWorth: number): Record<string, unknown>[] => {
      const rng = new Rng(7, `model-${netWorth}`);
      return Array.from({ length: 3000 }, () => householdFields(rng, { netWorth, state: 'GA', addressCount: 1, today: 20_000 }));
    };
    const share = (rows: Record<string, unknown>[], field: string): number => rows.filter((r) => r[field] === true).length / rows.length;
    const ultra = draw(60_000_000);
    const ordinary = draw(300_000);
    expect(share(ultra, 'plane_owner')).toBeGreaterThan(10 * share(ordinary, 'plane_owner') + 0.1);
    expect(share(ultra, 'has_household_debt')).toBeLessThan(share(ordinary, 'has_household_debt'));
  });

  it('keeps career booleans and dates consistent', () => {
    const today = Date.UTC(2026, 10, 16);
    const levels = new Set(['C-Suite', 'VP', 'Director', 'Manager', 'Individual Contributor']);
    for (const p of people) {
      const c = p.career;
      if (c === null) continue;
      expect(levels.has(c.job_level ?? '')).toBe(true);
      const ageDays = (today - Date.parse(c.job_start_date ?? '')) / 86_400_000;
      expect(c.recently_changed_jobs).toBe(ageDays <= 182);
      if (c.recently_retired === true) expect(c.recently_changed_jobs).toBe(false);
      if (c.recently_promoted === true || c.recently_changed_companies === true) expect(c.recently_changed_jobs).toBe(true);
      if (c.possibly_student === true) expect(c.job_level).toBe('Individual Contributor');
      expect(c.linkedin_url).toMatch(/^linkedin\.com\/in\/[a-z]+-[a-z]+-[0-9a-f]{8}$/);
    }
  });
});

describe('generateSnapshot: queries', () => {
  const inData = (): QueryLine[] => queries.filter((q) => q.expected.person_id !== null);
  const notInData = (): QueryLine[] => queries.filter((q) => q.expected.person_id === null);

  it('numbers valid enrichment requests q-000001, q-000002, …', () => {
    queries.forEach((q, i) => {
      expect(EnrichmentRequestSchema.safeParse(q.request).success).toBe(true);
      expect(q.request.id).toBe(`q-${String(i + 1).padStart(6, '0')}`);
    });
  });

  it('asks about about 10% people who are not in the data, whose identifiers are all absent', () => {
    expect(notInData().length / queries.length).toBeCloseTo(0.1, 2);
    const emails = new Set(people.flatMap((p) => p.emails.map((e) => normalizeEmail(e))));
    const phones = new Set(people.flatMap((p) => p.phones.map((ph) => normalizePhone(ph))));
    const streets = new Set(households.flatMap((h) => h.addresses.map((a) => streetKey(a.address ?? '', a.zipcode))));
    for (const q of notInData()) {
      expect(q.expected).toEqual({ windfall_id: null, person_id: null, linkedin_url: null });
      const request = EnrichmentRequestSchema.parse(q.request);
      for (const e of request.emails ?? []) expect(emails.has(normalizeEmail(e))).toBe(false);
      for (const ph of request.phones ?? []) expect(phones.has(normalizePhone(ph))).toBe(false);
      for (const a of request.addresses ?? []) expect(streets.has(streetKey(a.address ?? '', a.zipcode))).toBe(false);
    }
  });

  it('expects people that exist, and finds them by e-mail, phone and name, or address for all but the weak ~2%', () => {
    const byId = new Map(people.map((p) => [p.person_id, p]));
    const homes = new Map(households.map((h) => [h.windfall_id, h]));
    let found = 0;
    let weak = 0;
    for (const q of inData()) {
      const p = byId.get(q.expected.person_id ?? '');
      if (p === undefined) throw new Error(`no person ${q.expected.person_id}`);
      expect(q.expected.windfall_id).toBe(p.windfall_id);
      expect(q.expected.linkedin_url).toBe(p.career?.linkedin_url ?? null);
      const request = EnrichmentRequestSchema.parse(q.request);
      const asked = personName(request.first_name, request.last_name);
      const nicknames = (NICKNAMES[p.first_name ?? ''] ?? []).map((n) => n.toLowerCase());
      const real = personName(p.first_name, p.last_name);
      const nameOk = asked !== null && asked.last === real?.last && (asked.first === real.first || nicknames.includes(asked.first));
      const mine = new Set([...p.emails.map((e) => normalizeEmail(e)), ...p.phones.map((ph) => normalizePhone(ph))]);
      const home = new Set((homes.get(p.windfall_id ?? '')?.addresses ?? []).map((a) => streetKey(a.address ?? '', a.zipcode)));
      const byEmail = (request.emails ?? []).some((e) => mine.has(normalizeEmail(e)));
      const byPhone = nameOk && (request.phones ?? []).some((ph) => mine.has(normalizePhone(ph)));
      const byAddress = (request.addresses ?? []).some((a) => home.has(streetKey(a.address ?? '', a.zipcode)));
      if (byEmail || byPhone || byAddress) found += 1;
      if (q.noise.includes('name-city-state-only')) weak += 1;
    }
    expect(found + weak).toBe(inData().length);
    expect(weak / inData().length).toBeLessThan(0.05);
  });

  it('applies the noise kinds, with a typo in at most one field of a minority', () => {
    const kinds = new Set(queries.flatMap((q) => q.noise));
    for (const kind of ['nickname', 'zip+4', 'case', 'whitespace', 'phone-format', 'street-suffix', 'state-full', 'unit-dropped']) {
      expect(kinds, kind).toContain(kind);
    }
    const typos = queries.filter((q) => q.noise.some((n) => n.startsWith('typo:')));
    expect(typos.length / queries.length).toBeGreaterThan(0.02);
    expect(typos.length / queries.length).toBeLessThan(0.09);
    for (const q of typos) expect(q.noise.filter((n) => n.startsWith('typo:'))).toHaveLength(1);
    const nicknames = queries.filter((q) => q.noise.includes('nickname')).length / queries.length;
    expect(nicknames).toBeGreaterThan(0.03);
    expect(nicknames).toBeLessThan(0.15);
  });
});

describe('generateSnapshot: determinism and options', () => {
  it('writes byte-identical files for the same seed, and different ones for another seed', () => {
    for (const file of FILES) expect(read(dirs.b, file) === read(dirs.a, file), file).toBe(true);
    expect(read(dirs.seed2, 'people.jsonl') === read(dirs.a, 'people.jsonl')).toBe(false);
    expect(read(dirs.seed2, 'households.jsonl') === read(dirs.a, 'households.jsonl')).toBe(false);
  });

  it('gzips households and people to the same content as the plain run', () => {
    for (const name of ['households', 'people']) {
      const unzipped = gunzipSync(readFileSync(path.join(dirs.gz, `${name}.jsonl.gz`))).toString('utf8');
      expect(unzipped === read(dirs.a, `${name}.jsonl`), name).toBe(true);
    }
    expect(read(dirs.gz, 'queries.jsonl') === read(dirs.a, 'queries.jsonl')).toBe(true);
  });

  it("removes the other compression's files an earlier run left in the folder", async () => {
    const dir = path.join(root, 'switch');
    await generateSnapshot(dir, { people: 50, queries: 5 });
    await generateSnapshot(dir, { people: 50, queries: 5, gzip: true });
    expect(readdirSync(dir).sort()).toEqual(['households.jsonl.gz', 'manifest.json', 'people.jsonl.gz', 'queries.jsonl']);
    await generateSnapshot(dir, { people: 50, queries: 5 });
    expect(readdirSync(dir).sort()).toEqual(['households.jsonl', 'manifest.json', 'people.jsonl', 'queries.jsonl']);
  });

  it('writes the number of queries asked for without changing the data', () => {
    expect(jsonLines(read(dirs.few, 'queries.jsonl'))).toHaveLength(37);
    expect(read(dirs.few, 'people.jsonl') === read(dirs.a, 'people.jsonl')).toBe(true);
    expect(read(dirs.few, 'households.jsonl') === read(dirs.a, 'households.jsonl')).toBe(true);
  });

  it('reports progress about every 1% of people, ending at the total', () => {
    expect(progress.length).toBeGreaterThanOrEqual(90);
    expect(progress.length).toBeLessThanOrEqual(110);
    expect(progress.at(-1)).toEqual([PEOPLE, PEOPLE]);
    for (let i = 1; i < progress.length; i += 1) expect(progress[i]?.[0]).toBeGreaterThan(progress[i - 1]?.[0] ?? 0);
  });

  it('rejects a count of people that is not a positive integer', async () => {
    await expect(generateSnapshot(path.join(root, 'bad'), { people: 0 })).rejects.toThrow(RangeError);
    await expect(generateSnapshot(path.join(root, 'bad'), { people: 1.5 })).rejects.toThrow(RangeError);
  });
});
