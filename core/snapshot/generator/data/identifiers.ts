// Identifiers that must be unique or deliberately shared: street addresses (house numbers allocated per
// street, apartments sharing a building), phone numbers from a permuted counter per area code, e-mails.
import { type Place, CA_PLACES, US_PLACES } from './places.ts';
import { type Rng, Weighted, asciiSlug, mix32 } from './random.ts';

const STREET_WORDS = [
  'Main',
  'Oak',
  'Maple',
  'Cedar',
  'Pine',
  'Elm',
  'Washington',
  'Lake',
  'Hill',
  'Walnut',
  'Sunset',
  'Lincoln',
  'Jackson',
  'Highland',
  'Church',
  'Willow',
  'Spring',
  'River',
  'Franklin',
  'Chestnut',
  'Jefferson',
  'Madison',
  'Ridge',
  'Meadow',
  'Forest',
  'Mill',
  'Valley',
  'Dogwood',
  'Magnolia',
  'Peachtree',
  'Sycamore',
  'Hickory',
  'Birch',
  'Laurel',
  'Cherry',
  'Poplar',
  'Spruce',
  'Cypress',
  'Aspen',
  'Juniper',
  'Holly',
  'Adams',
  'Monroe',
  'Wilson',
  'Grant',
  'Hamilton',
  'Market',
  'Broad',
  'Front',
  'High',
  'Union',
  'Center',
  'Prospect',
  'Pleasant',
  'Liberty',
  'Summit',
  'Woodland',
  'Lakeview',
  'Hillcrest',
  'Fairview',
  'Riverside',
  'Brookside',
  'Greenwood',
  'Oakwood',
  'Kingston',
  'Lexington',
  'Princeton',
  'Sherwood',
  'Windsor',
  'Beacon',
  'Harbor',
  'Bay',
  'Orchard',
  'Heritage',
  'Colonial',
  'Stonegate',
  'Canyon',
  'Vista',
  'Mockingbird',
  'Bluebonnet',
  'Palmetto',
  'Sequoia',
  '1st',
  '2nd',
  '3rd',
  '4th',
  '5th',
  '6th',
  '7th',
  '8th',
  '10th',
  '12th',
  '14th',
  '21st',
] as const;

const CANADIAN_STREET_WORDS = [
  'King',
  'Queen',
  'Yonge',
  'Bloor',
  'Dundas',
  'Bathurst',
  'Laurier',
  'Sherbrooke',
  'Portage',
  'Jasper',
  'Granville',
  'Robson',
  'Wellington',
  'Victoria',
  'Albert',
  'Elgin',
  'Maple',
  'Cedar',
  'Birch',
  'Spruce',
  'Lakeshore',
  'Bay',
  'Church',
  'Park',
  'Hillside',
  'Riverside',
  'Saint-Denis',
  'Beaver',
  'Frontenac',
  'Osborne',
] as const;

/** USPS standard suffix abbreviation, its full word, and how common it is. */
const SUFFIXES: readonly (readonly [abbreviation: string, full: string, weight: number])[] = [
  ['St', 'Street', 25],
  ['Ave', 'Avenue', 18],
  ['Dr', 'Drive', 14],
  ['Rd', 'Road', 12],
  ['Ln', 'Lane', 8],
  ['Ct', 'Court', 6],
  ['Way', 'Way', 5],
  ['Blvd', 'Boulevard', 4],
  ['Pl', 'Place', 4],
  ['Ter', 'Terrace', 2],
  ['Cir', 'Circle', 2],
  ['Pkwy', 'Parkway', 1],
  ['Trl', 'Trail', 1],
];

export const DIRECTIONAL_WORDS: Readonly<Record<string, string>> = {
  N: 'North',
  S: 'South',
  E: 'East',
  W: 'West',
  NE: 'Northeast',
  NW: 'Northwest',
  SE: 'Southeast',
  SW: 'Southwest',
};

const SUFFIX_TOTAL = SUFFIXES.reduce((sum, s) => sum + s[2], 0);

export interface Street {
  /** `N`, `S`, … before the name, or ''. */
  readonly prefix: string;
  readonly name: string;
  readonly suffix: string;
  readonly suffixFull: string;
  /** `NE`, `SW`, … after the suffix, or ''. */
  readonly postfix: string;
}

export interface AddressParts {
  readonly zip: number;
  readonly slot: number;
  readonly number: number;
  /** `4B`, `1204`, or null for a house. */
  readonly unit: string | null;
}

/** Every zip (US) or postal code (Canada) a household can have, with its place. */
export interface ZipEntry {
  readonly place: Place;
  readonly zip: string;
}

export const ZIPS: readonly ZipEntry[] = [...US_PLACES, ...CA_PLACES].flatMap((place) => place.zips.map((zip) => ({ place, zip })));

/** Fewer than the words of either list, so the streets of one zip all have different names. */
const STREETS_PER_ZIP = 80;
const CANADIAN_ZIP_WORDS: readonly string[] = [...CANADIAN_STREET_WORDS, ...STREET_WORDS];

interface Building {
  readonly slot: number;
  readonly number: number;
  readonly perFloor: number;
  readonly capacity: number;
  used: number;
}

/** Allocates addresses: house numbers rise along each street, so a (number, street, zip) is never reused. */
export class AddressBook {
  private readonly lastNumber = new Int32Array(ZIPS.length * STREETS_PER_ZIP);
  private readonly buildings = new Map<number, Building>();
  private readonly streets: (Street | undefined)[] = new Array<Street | undefined>(ZIPS.length * STREETS_PER_ZIP);
  private readonly salt: number;

  constructor(seed: number) {
    this.salt = mix32(seed ^ 0x5eed5eed);
  }

  /** The street in a zip's slot: derived from the seed, so it needs no storage and is the same on every call. */
  street(zip: number, slot: number): Street {
    const i = zip * STREETS_PER_ZIP + slot;
    const cached = this.streets[i];
    if (cached !== undefined) return cached;
    const h = mix32(i ^ this.salt);
    // Consecutive words from a per-zip offset: two slots of a zip never share a street name.
    const words: readonly string[] = ZIPS[zip]?.place.country === 'CA' ? CANADIAN_ZIP_WORDS : STREET_WORDS;
    const name = words[(mix32(zip ^ ~this.salt) + slot) % words.length] ?? 'Main';
    const [suffix, suffixFull] = SUFFIXES[pickSuffix(h)] ?? ['St', 'Street'];
    const d = (h >>> 24) % 100;
    const prefix = d < 12 && !/^\d/.test(name) ? (['N', 'S', 'E', 'W'][d % 4] ?? '') : '';
    const postfix = d >= 95 ? (['NE', 'NW', 'SE', 'SW'][d % 4] ?? '') : '';
    const street = { prefix, name, suffix, suffixFull, postfix };
    this.streets[i] = street;
    return street;
  }

  /** A new house on a random street of the zip. */
  house(zip: number, rng: Rng): AddressParts {
    const slot = rng.int(STREETS_PER_ZIP);
    return { zip, slot, number: this.nextNumber(zip, slot, rng), unit: null };
  }

  /** A unit in the zip's current apartment building; a new building once it is full. */
  apartment(zip: number, rng: Rng): AddressParts {
    let building = this.buildings.get(zip);
    if (building === undefined || building.used >= building.capacity) {
      const slot = rng.int(STREETS_PER_ZIP);
      const large = rng.chance(0.4);
      const perFloor = large ? rng.between(4, 12) : rng.between(2, 4);
      building = { slot, number: this.nextNumber(zip, slot, rng), perFloor, capacity: perFloor * rng.between(2, large ? 20 : 4), used: 0 };
      this.buildings.set(zip, building);
    }
    const k = building.used;
    building.used += 1;
    const floor = 1 + Math.floor(k / building.perFloor);
    const door = k % building.perFloor;
    const unit = building.perFloor > 4 ? `${floor}${String(door + 1).padStart(2, '0')}` : `${floor}${'ABCD'[door] ?? 'A'}`;
    return { zip, slot: building.slot, number: building.number, unit };
  }

  /** The stored street line, USPS style: `1420 N Peachtree St NE Apt 4B`. */
  line(parts: AddressParts): string {
    const s = this.street(parts.zip, parts.slot);
    const words = [String(parts.number), s.prefix, s.name, s.suffix, s.postfix].filter((w) => w !== '');
    return parts.unit === null ? words.join(' ') : `${words.join(' ')} Apt ${parts.unit}`;
  }

  private nextNumber(zip: number, slot: number, rng: Rng): number {
    const i = zip * STREETS_PER_ZIP + slot;
    const last = this.lastNumber[i] ?? 0;
    const start = last === 0 ? 1 + (mix32(i ^ this.salt) % 40) * 100 : last;
    const next = start + 2 + rng.int(30);
    this.lastNumber[i] = next;
    return next;
  }
}

function pickSuffix(h: number): number {
  // A second hash keeps the suffix independent of the name and directional bits.
  const r = (mix32(h ^ 0x51f) % 1000) / 1000;
  let acc = 0;
  for (let i = 0; i < SUFFIXES.length; i += 1) {
    acc += (SUFFIXES[i]?.[2] ?? 0) / SUFFIX_TOTAL;
    if (r < acc) return i;
  }
  return 0;
}

/** An 8,000,000-number space per area code (exchange 200–999 × line 0000–9999), walked by an affine bijection. */
const SPACE = 8_000_000;
const STEP = 5_237_473; // coprime with 8,000,000 = 2^9 · 5^6, so k → (k·STEP + offset) mod SPACE is a bijection

/** Hands out phone numbers: every call returns a number never returned before. */
export class PhoneBook {
  private readonly next = new Map<string, number>();
  private readonly salt: number;

  constructor(seed: number) {
    this.salt = mix32(seed ^ 0x0f0e0d0c);
  }

  /** Ten digits, NANP: area code, exchange (never N11 or 555), line. */
  allocate(areaCode: string): string {
    let k = this.next.get(areaCode) ?? 0;
    const offset = mix32(Number(areaCode) ^ this.salt) % SPACE;
    for (;;) {
      const p = (k * STEP + offset) % SPACE;
      k += 1;
      const exchange = 200 + Math.floor(p / 10_000);
      if (exchange === 555 || exchange % 100 === 11) continue;
      this.next.set(areaCode, k);
      return `${areaCode}${exchange}${String(p % 10_000).padStart(4, '0')}`;
    }
  }
}

export type PhoneStyle = 'paren' | 'dash' | 'digits' | 'plus-spaced' | 'dots' | 'e164';

export const DATA_PHONE_STYLES = new Weighted<PhoneStyle>([
  ['paren', 35],
  ['dash', 30],
  ['digits', 20],
  ['plus-spaced', 15],
]);

export function formatPhone(digits: string, style: PhoneStyle): string {
  const a = digits.slice(0, 3);
  const b = digits.slice(3, 6);
  const c = digits.slice(6);
  switch (style) {
    case 'paren':
      return `(${a}) ${b}-${c}`;
    case 'dash':
      return `${a}-${b}-${c}`;
    case 'digits':
      return digits;
    case 'plus-spaced':
      return `+1 ${a} ${b} ${c}`;
    case 'dots':
      return `${a}.${b}.${c}`;
    case 'e164':
      return `+1${digits}`;
  }
}

export const PERSONAL_DOMAINS = new Weighted([
  ['gmail.com', 46],
  ['yahoo.com', 16],
  ['outlook.com', 9],
  ['icloud.com', 9],
  ['hotmail.com', 8],
  ['aol.com', 4],
  ['comcast.net', 3],
  ['att.net', 2],
  ['protonmail.com', 1],
  ['me.com', 2],
] as const);

const LOCAL_PATTERNS = new Weighted<(f: string, l: string) => string>([
  [(f, l) => `${f}.${l}`, 40],
  [(f, l) => `${f}${l}`, 20],
  [(f, l) => `${f.slice(0, 1)}${l}`, 20],
  [(f, l) => `${f}_${l}`, 8],
  [(f, l) => `${f}${l.slice(0, 1)}`, 7],
  [(f, l) => `${l}.${f}`, 5],
]);

/**
 * Hands out e-mail addresses. A personal local part is letters then a counter (`mary.jones4821`): the
 * counter alone makes it unique, and a typo in the letters can never produce another person's address.
 * A work address is `first.last@domain` while free at that domain, then `first.last<counter>`.
 */
export class EmailBook {
  private counter = 0;
  private readonly work = new Set<string>();

  personal(first: string, last: string, rng: Rng, domain?: string): string {
    this.counter += 1;
    const local = LOCAL_PATTERNS.draw(rng)(asciiSlug(first), asciiSlug(last));
    return `${local}${this.counter}@${domain ?? PERSONAL_DOMAINS.draw(rng)}`;
  }

  workAddress(first: string, last: string, domain: string): string {
    const plain = `${asciiSlug(first)}.${asciiSlug(last)}@${domain}`;
    if (!this.work.has(plain)) {
      this.work.add(plain);
      return plain;
    }
    this.counter += 1;
    return `${asciiSlug(first)}.${asciiSlug(last)}${this.counter}@${domain}`;
  }

  /** An address that is certainly not in the data: its counter is past every one handed out. */
  unused(first: string, last: string, rng: Rng): string {
    return this.personal(first, last, rng);
  }
}
