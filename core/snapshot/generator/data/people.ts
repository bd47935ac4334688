// Households and people of the synthetic snapshot: who lives together and under which names, where,
// with which e-mails, phones and job, serialized straight to the lines of households and people files.
import { type Employer, businessName } from './companies.ts';
import { careerJson } from './careers.ts';
import { drawNetWorth, householdFields, odds, wealthTier } from './households.ts';
import { type AddressBook, type AddressParts, DATA_PHONE_STYLES, type EmailBook, type PhoneBook, ZIPS, formatPhone } from './identifiers.ts';
import { type Sex, firstNames, frenchCanadianSurnames, surnames } from './names.ts';
import { type Rng, Weighted, asciiSlug, hex8, mix32 } from './random.ts';
import type { Subject } from './queries.ts';

type Role = 'adult' | 'young' | 'child';

export interface BuiltPerson {
  readonly personId: string;
  readonly first: string;
  readonly last: string;
  readonly emails: readonly string[];
  readonly phones: readonly string[];
  readonly linkedinUrl: string | null;
  readonly employer: Employer | null;
  /** The people.jsonl line, without its newline. */
  readonly json: string;
}

export interface BuiltHousehold {
  readonly windfallId: string;
  readonly addresses: readonly AddressParts[];
  readonly members: readonly BuiltPerson[];
  /** The households.jsonl line, without its newline. */
  readonly json: string;
}

const HOUSEHOLD_SIZES = new Weighted([
  [1, 28],
  [2, 34],
  [3, 15],
  [4, 13],
  [5, 10],
] as const);
/** Odds that the next unit is a person without a household, so that about 8% of people have none. */
const CAREER_ONLY_ODDS = 0.1744;
const CA_DOMAINS = new Weighted([
  ['gmail.com', 40],
  ['hotmail.com', 15],
  ['yahoo.ca', 10],
  ['rogers.com', 10],
  ['shaw.ca', 8],
  ['videotron.ca', 7],
  ['outlook.com', 10],
] as const);
const RESORTS = new Set([
  'Aspen CO',
  'Naples FL',
  'Palm Beach FL',
  'Park City UT',
  'Jackson WY',
  'Hilton Head Island SC',
  'Santa Barbara CA',
  'Miami Beach FL',
  'Honolulu HI',
  'Scottsdale AZ',
  'Bozeman MT',
  'Newport RI',
  'Boca Raton FL',
]);

const zipTable = (country: 'US' | 'CA' | 'resort'): Weighted<number> =>
  new Weighted(
    ZIPS.flatMap((entry, i) => {
      const resort = RESORTS.has(`${entry.place.city} ${entry.place.state}`);
      const keep = country === 'resort' ? resort : entry.place.country === country;
      return keep ? [[i, entry.place.weight / entry.place.zips.length] as const] : [];
    }),
  );
const US_ZIPS = zipTable('US');
const CA_ZIPS = zipTable('CA');
const RESORT_ZIPS = zipTable('resort');

interface Member {
  readonly role: Role;
  readonly sex: Sex;
  readonly last: string;
}

export interface Books {
  readonly addresses: AddressBook;
  readonly phones: PhoneBook;
  readonly emails: EmailBook;
}

/** Builds households and people one after the other; all state it keeps is counters and the employers. */
export class PopulationBuilder {
  private persons = 0;
  private households = 0;
  private readonly salt: number;
  private readonly globalEmployers: Weighted<number>;
  private readonly employersByState = new Map<string, Weighted<number>>();
  private readonly employerNames: Set<string>;
  /** Schools and universities, where many young adults work while they study. */
  private readonly educationalEmployers: Weighted<number> | null;

  constructor(
    private readonly rng: Rng,
    seed: number,
    private readonly today: number,
    private readonly employers: readonly Employer[],
    private readonly books: Books,
  ) {
    this.salt = mix32(seed ^ 0x7a11ed);
    const weight = (rank: number): number => 1 / Math.pow(rank + 2, 0.9);
    this.globalEmployers = new Weighted(employers.map((_, rank) => [rank, weight(rank)] as const));
    const byState = new Map<string, (readonly [number, number])[]>();
    employers.forEach((e, rank) => {
      const entries = byState.get(e.state) ?? [];
      entries.push([rank, weight(rank)]);
      byState.set(e.state, entries);
    });
    for (const [state, entries] of byState) this.employersByState.set(state, new Weighted(entries));
    this.employerNames = new Set(employers.map((e) => e.shortName));
    const educational = employers.flatMap((e, rank) => (e.category === 'Educational' ? [[rank, weight(rank)] as const] : []));
    this.educationalEmployers = educational.length === 0 ? null : new Weighted(educational);
  }

  get personCount(): number {
    return this.persons;
  }

  /** True when the next unit should be a person known only through a job. */
  nextIsCareerOnly(): boolean {
    return this.rng.chance(CAREER_ONLY_ODDS);
  }

  householdSize(): number {
    return HOUSEHOLD_SIZES.draw(this.rng);
  }

  household(size: number): BuiltHousehold {
    const rng = this.rng;
    const netWorth = drawNetWorth(rng);
    const tier = wealthTier(netWorth);
    const canadian = rng.chance(0.1);
    const zip = (canadian ? CA_ZIPS : US_ZIPS).draw(rng);
    const place = ZIPS[zip]?.place;
    if (place === undefined) throw new Error('zip out of range');
    const urban = place.weight > 1000 ? 0.45 : place.weight > 400 ? 0.3 : 0.15;
    const apartment = rng.chance(urban * (tier <= 1 ? 1 : tier === 2 ? 0.5 : 0.2) * (size >= 4 ? 0.5 : 1));
    const addresses = [apartment ? this.books.addresses.apartment(zip, rng) : this.books.addresses.house(zip, rng)];
    if (rng.chance(odds('secondHome', tier))) {
      addresses.push(this.books.addresses.house(rng.chance(0.6) ? RESORT_ZIPS.draw(rng) : US_ZIPS.draw(rng), rng));
      if (rng.chance(odds('thirdHomeIfSecond', tier))) addresses.push(this.books.addresses.house(RESORT_ZIPS.draw(rng), rng));
    }
    const index = this.households;
    this.households += 1;
    const windfallId = `${hex8(rng.u32())}${hex8(rng.u32())}${hex8(rng.u32())}${hex8(mix32(index ^ this.salt))}`;
    const record = {
      windfall_id: windfallId,
      addresses: addresses.map((parts) => {
        const entry = ZIPS[parts.zip];
        return { address: this.books.addresses.line(parts), city: entry?.place.city ?? null, state: entry?.place.state ?? null, zipcode: entry?.zip ?? null };
      }),
      ...householdFields(rng, { netWorth, state: place.state, addressCount: addresses.length, today: this.today }),
    };
    const landline = rng.chance(tier >= 3 ? 0.4 : 0.22) ? this.books.phones.allocate(rng.pick(place.areaCodes)) : null;
    const french = canadian && rng.chance(place.state === 'QC' ? 0.7 : 0.12);
    const taken = new Set<string>();
    const members = this.composition(size, (french ? frenchCanadianSurnames : surnames).draw(rng)).map((member) => {
      let first = firstNames(member.sex).draw(rng);
      while (taken.has(first)) first = firstNames(member.sex).draw(rng);
      taken.add(first);
      return this.person(windfallId, first, member, tier, place.areaCodes, landline, canadian, place.state);
    });
    return { windfallId, addresses, members, json: JSON.stringify(record) };
  }

  /** A person without a household, known through the job: always employed, reachable by e-mail or phone. */
  careerOnly(): BuiltPerson {
    const rng = this.rng;
    const sex: Sex = rng.chance(0.5) ? 'F' : 'M';
    const employer = this.pickEmployer(null);
    const tier = wealthTier(drawNetWorth(rng));
    return this.person(
      null,
      firstNames(sex).draw(rng),
      { role: 'adult', sex, last: surnames.draw(rng) },
      tier,
      employer.areaCodes,
      null,
      false,
      employer.state,
      employer,
    );
  }

  /**
   * A made-up person for a not-in-data query: names from the same tables (so they collide with real
   * ones), but e-mails, phones, a house number and a company name the data cannot contain.
   */
  stranger(rng: Rng): Subject {
    const sex: Sex = rng.chance(0.5) ? 'F' : 'M';
    const first = firstNames(sex).draw(rng);
    const last = surnames.draw(rng);
    const zip = (rng.chance(0.1) ? CA_ZIPS : US_ZIPS).draw(rng);
    const areaCodes = ZIPS[zip]?.place.areaCodes ?? ['212'];
    const emails = rng.chance(0.8) ? [this.books.emails.unused(first, last, rng)] : [];
    const phones = rng.chance(0.75) ? [formatPhone(this.books.phones.allocate(rng.pick(areaCodes)), DATA_PHONE_STYLES.draw(rng))] : [];
    let company: { name: string; shortName: string } | null = null;
    if (rng.chance(0.6)) {
      const name = businessName(rng, ZIPS[zip]?.place.city ?? 'Springfield').name;
      if (!this.employerNames.has(name)) company = { name, shortName: name };
    }
    return { personId: null, windfallId: null, linkedinUrl: null, first, last, emails, phones, addresses: [this.books.addresses.house(zip, rng)], company };
  }

  private composition(size: number, last: string): Member[] {
    const rng = this.rng;
    const sex: Sex = rng.chance(0.52) ? 'F' : 'M';
    const other: Sex = sex === 'F' ? 'M' : 'F';
    if (size === 1) return [{ role: rng.chance(0.15) ? 'young' : 'adult', sex, last }];
    const members: Member[] = [{ role: 'adult', sex, last }];
    const kind = rng.next();
    if (size === 2 && kind > 0.92) {
      members.push({ role: rng.chance(0.5) ? 'young' : 'adult', sex: rng.chance(0.5) ? 'F' : 'M', last: surnames.draw(rng) });
      return members;
    }
    const couple = size === 2 ? kind < 0.8 : kind < 0.85;
    if (couple) members.push({ role: 'adult', sex: rng.chance(0.92) ? other : sex, last: rng.chance(0.75) ? last : surnames.draw(rng) });
    while (members.length < size) {
      members.push({ role: rng.chance(0.7) ? 'child' : 'young', sex: rng.chance(0.5) ? 'F' : 'M', last: rng.chance(0.93) ? last : surnames.draw(rng) });
    }
    return members;
  }

  private pickEmployer(state: string | null, young = false): Employer {
    const local = state === null ? undefined : this.employersByState.get(state);
    let table = local !== undefined && this.rng.chance(0.5) ? local : this.globalEmployers;
    if (young && this.educationalEmployers !== null && this.rng.chance(0.35)) table = this.educationalEmployers;
    const employer = this.employers[table.draw(this.rng)];
    if (employer === undefined) throw new Error('employer out of range');
    return employer;
  }

  private person(
    windfallId: string | null,
    first: string,
    member: Member,
    tier: number,
    areaCodes: readonly string[],
    landline: string | null,
    canadian: boolean,
    state: string,
    employer?: Employer,
  ): BuiltPerson {
    const rng = this.rng;
    const { role, last } = member;
    const index = this.persons;
    this.persons += 1;
    const personId = `${hex8(rng.u32())}${hex8(mix32(index ^ this.salt ^ 0x5bd1e995))}`;
    const job = employer ?? (role === 'child' || !rng.chance(role === 'young' ? 0.55 : 0.78) ? null : this.pickEmployer(state, role === 'young'));
    const emails: string[] = [];
    const domain = (): string | undefined => (canadian ? CA_DOMAINS.draw(rng) : undefined);
    const careerOnly = windfallId === null;
    if (rng.chance(role === 'child' ? 0.3 : careerOnly ? 0.8 : 0.93)) emails.push(this.books.emails.personal(first, last, rng, domain()));
    if (role !== 'child' && rng.chance(role === 'young' ? 0.15 : 0.25)) emails.push(this.books.emails.personal(first, last, rng, domain()));
    if (job !== null && (rng.chance(careerOnly ? 0.5 : 0.35) || (careerOnly && emails.length === 0))) {
      emails.splice(rng.int(emails.length + 1), 0, this.books.emails.workAddress(first, last, job.domain));
    }
    const phones: string[] = [];
    if (rng.chance(role === 'child' ? 0.35 : careerOnly ? 0.65 : 0.9)) phones.push(this.books.phones.allocate(rng.pick(areaCodes)));
    if (role === 'adult' && rng.chance(0.07)) phones.push(this.books.phones.allocate(rng.pick(areaCodes)));
    if (landline !== null) phones.push(landline);
    const written = phones.map((digits) => formatPhone(digits, DATA_PHONE_STYLES.draw(rng)));
    let linkedinUrl: string | null = null;
    let career = 'null';
    if (job !== null) {
      linkedinUrl = `linkedin.com/in/${asciiSlug(first)}-${asciiSlug(last)}-${hex8(mix32(index ^ ~this.salt))}`;
      career = careerJson(rng, { employer: job, wealthTier: tier, young: role === 'young', linkedinUrl, today: this.today });
    }
    const head = JSON.stringify({ person_id: personId, windfall_id: windfallId, first_name: first, last_name: last, emails, phones: written });
    return { personId, first, last, emails, phones: written, linkedinUrl, employer: job, json: `${head.slice(0, -1)},"career":${career}}` };
  }
}
