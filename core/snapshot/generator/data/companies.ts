// Fictitious employers: names from word lists, domains, NAICS codes, categories, and size and revenue
// ranges consistent with each other; ranked so employee counts fall off Zipf-like from a few giants.
import { type AddressBook, type PhoneBook, ZIPS, formatPhone } from './identifiers.ts';
import { surnames } from './names.ts';
import { STATE_NAMES } from './places.ts';
import { type Rng, Weighted, asciiSlug } from './random.ts';

export type CompanyCategory = 'Public Company' | 'Private Company' | 'Educational' | 'Government Agency' | 'Nonprofit';

/** Which mix of job functions a company employs. */
export type Workforce = 'tech' | 'health' | 'finance' | 'industrial' | 'services' | 'legal' | 'education' | 'government' | 'nonprofit';

interface Industry {
  readonly word: string;
  readonly naics: string;
  readonly workforce: Workforce;
}

const INDUSTRIES: readonly Industry[] = [
  { word: 'Analytics', naics: '541511', workforce: 'tech' },
  { word: 'Software', naics: '513210', workforce: 'tech' },
  { word: 'Systems', naics: '541512', workforce: 'tech' },
  { word: 'Cloudworks', naics: '518210', workforce: 'tech' },
  { word: 'Networks', naics: '517111', workforce: 'tech' },
  { word: 'Labs', naics: '541715', workforce: 'tech' },
  { word: 'Logistics', naics: '488510', workforce: 'industrial' },
  { word: 'Freight', naics: '484121', workforce: 'industrial' },
  { word: 'Manufacturing', naics: '332710', workforce: 'industrial' },
  { word: 'Industries', naics: '339999', workforce: 'industrial' },
  { word: 'Construction', naics: '236220', workforce: 'industrial' },
  { word: 'Builders', naics: '236115', workforce: 'industrial' },
  { word: 'Foods', naics: '311999', workforce: 'industrial' },
  { word: 'Energy', naics: '221112', workforce: 'industrial' },
  { word: 'Solar', naics: '221114', workforce: 'industrial' },
  { word: 'Aerospace', naics: '336413', workforce: 'industrial' },
  { word: 'Insurance', naics: '524126', workforce: 'finance' },
  { word: 'Capital', naics: '523940', workforce: 'finance' },
  { word: 'Financial', naics: '523150', workforce: 'finance' },
  { word: 'Bank', naics: '522110', workforce: 'finance' },
  { word: 'Realty', naics: '531210', workforce: 'finance' },
  { word: 'Properties', naics: '531110', workforce: 'finance' },
  { word: 'Health', naics: '621111', workforce: 'health' },
  { word: 'Medical', naics: '621111', workforce: 'health' },
  { word: 'Pharmaceuticals', naics: '325412', workforce: 'health' },
  { word: 'Biosciences', naics: '541714', workforce: 'health' },
  { word: 'Consulting', naics: '541611', workforce: 'services' },
  { word: 'Partners', naics: '541611', workforce: 'services' },
  { word: 'Marketing', naics: '541810', workforce: 'services' },
  { word: 'Media', naics: '516210', workforce: 'services' },
  { word: 'Engineering', naics: '541330', workforce: 'tech' },
  { word: 'Architects', naics: '541310', workforce: 'services' },
  { word: 'Outfitters', naics: '458110', workforce: 'services' },
  { word: 'Markets', naics: '445110', workforce: 'services' },
  { word: 'Hospitality', naics: '721110', workforce: 'services' },
  { word: 'Kitchen', naics: '722511', workforce: 'services' },
  { word: 'Staffing', naics: '561311', workforce: 'services' },
  { word: 'Security', naics: '561612', workforce: 'services' },
  { word: 'Motors', naics: '441110', workforce: 'services' },
  { word: 'Accounting', naics: '541211', workforce: 'finance' },
  { word: 'Law Group', naics: '541110', workforce: 'legal' },
  { word: 'Legal', naics: '541110', workforce: 'legal' },
];

const ADJECTIVES = [
  'Blue',
  'Red',
  'Silver',
  'Golden',
  'Northern',
  'Summit',
  'Granite',
  'Cedar',
  'Iron',
  'Pacific',
  'Atlantic',
  'Bright',
  'Clear',
  'True',
  'First',
  'Evergreen',
  'Crescent',
  'Keystone',
  'Lakeshore',
  'Prairie',
  'Redwood',
  'Sterling',
  'Copper',
  'Meridian',
  'Pinnacle',
  'Beacon',
  'Frontier',
  'Liberty',
  'Magnolia',
  'Bluebonnet',
  'Aspen',
  'Harbor',
  'Coastal',
  'Heartland',
  'Cardinal',
  'Highland',
  'Silverline',
  'Oakmont',
  'Westfield',
  'Eastgate',
  'Southbridge',
  'Northpoint',
];
const NOUNS = [
  'Harbor',
  'River',
  'Peak',
  'Ridge',
  'Bridge',
  'Point',
  'Field',
  'Stone',
  'Oak',
  'Rock',
  'Wave',
  'Path',
  'Gate',
  'Crest',
  'Valley',
  'Creek',
  'Lake',
  'Forge',
  'Mill',
  'Star',
  'Light',
  'Pine',
  'Bay',
  'Crossing',
  'Grove',
  'Hollow',
];
const COMPOUND_HEADS = ['North', 'Blue', 'Stone', 'Clear', 'Bright', 'Iron', 'Silver', 'Red', 'Oak', 'Sun', 'Wild', 'High', 'Deep', 'True', 'Gold', 'Green'];
const COMPOUND_TAILS = [
  'wind',
  'water',
  'bridge',
  'path',
  'line',
  'wood',
  'lake',
  'stone',
  'field',
  'crest',
  'gate',
  'ridge',
  'haven',
  'point',
  'brook',
  'view',
];

export type SizeRange = '1-10' | '11-50' | '51-200' | '201-500' | '501-1,000' | '1,001-5,000' | '5,001-10,000' | '10,000+';

/** Size band by rank percentile (the top ranks are the large employers), with plausible revenue for each. */
const SIZE_BANDS: readonly (readonly [upToPercentile: number, size: SizeRange, revenue: Weighted<string>])[] = [
  [0.01, '10,000+', new Weighted([['> $1B', 1]])],
  [
    0.03,
    '5,001-10,000',
    new Weighted([
      ['$500M-1B', 1],
      ['> $1B', 1],
    ]),
  ],
  [
    0.08,
    '1,001-5,000',
    new Weighted([
      ['$100-500M', 1],
      ['$500M-1B', 1],
    ]),
  ],
  [
    0.16,
    '501-1,000',
    new Weighted([
      ['$50-100M', 2],
      ['$100-500M', 3],
    ]),
  ],
  [
    0.3,
    '201-500',
    new Weighted([
      ['$10-50M', 3],
      ['$50-100M', 5],
      ['$100-500M', 2],
    ]),
  ],
  [
    0.5,
    '51-200',
    new Weighted([
      ['$1-10M', 15],
      ['$10-50M', 70],
      ['$50-100M', 15],
    ]),
  ],
  [
    0.75,
    '11-50',
    new Weighted([
      ['$1-10M', 8],
      ['$10-50M', 2],
    ]),
  ],
  [
    1,
    '1-10',
    new Weighted([
      ['< $1M', 6],
      ['$1-10M', 4],
    ]),
  ],
];

const CATEGORY_BY_SIZE: Readonly<Record<SizeRange, Weighted<CompanyCategory>>> = {
  '10,000+': new Weighted([
    ['Public Company', 50],
    ['Private Company', 14],
    ['Educational', 12],
    ['Government Agency', 14],
    ['Nonprofit', 10],
  ]),
  '5,001-10,000': new Weighted([
    ['Public Company', 40],
    ['Private Company', 25],
    ['Educational', 12],
    ['Government Agency', 12],
    ['Nonprofit', 11],
  ]),
  '1,001-5,000': new Weighted([
    ['Public Company', 28],
    ['Private Company', 40],
    ['Educational', 12],
    ['Government Agency', 10],
    ['Nonprofit', 10],
  ]),
  '501-1,000': new Weighted([
    ['Public Company', 15],
    ['Private Company', 55],
    ['Educational', 12],
    ['Government Agency', 8],
    ['Nonprofit', 10],
  ]),
  '201-500': new Weighted([
    ['Public Company', 8],
    ['Private Company', 66],
    ['Educational', 10],
    ['Government Agency', 6],
    ['Nonprofit', 10],
  ]),
  '51-200': new Weighted([
    ['Public Company', 3],
    ['Private Company', 74],
    ['Educational', 8],
    ['Government Agency', 5],
    ['Nonprofit', 10],
  ]),
  '11-50': new Weighted([
    ['Private Company', 82],
    ['Educational', 4],
    ['Government Agency', 3],
    ['Nonprofit', 11],
  ]),
  '1-10': new Weighted([
    ['Private Company', 88],
    ['Government Agency', 1],
    ['Nonprofit', 11],
  ]),
};

export interface Employer {
  readonly name: string;
  /** The name without a legal suffix (`Inc.`, `LLC`, …), as people often write it. */
  readonly shortName: string;
  readonly domain: string;
  readonly category: CompanyCategory;
  readonly workforce: Workforce;
  readonly size: SizeRange;
  readonly state: string;
  /** Area codes of the employer's city, for the phones of people known only through it. */
  readonly areaCodes: readonly string[];
  /** The career fields about the employer, serialized once: `"company_name":…,"company_revenue_range":…`. */
  readonly json: string;
}

interface NameParts {
  readonly name: string;
  readonly workforce: Workforce;
  readonly naics: string;
  readonly tld: string;
}

export function businessName(rng: Rng, city: string): NameParts {
  const industry = rng.pick(INDUSTRIES);
  const form = rng.next();
  let base: string;
  if ((industry.workforce === 'services' || industry.workforce === 'legal') && form < 0.2) base = `${surnames.draw(rng)} & ${surnames.draw(rng)}`;
  else if (form < 0.45) base = `${rng.pick(COMPOUND_HEADS)}${rng.pick(COMPOUND_TAILS)}`;
  else if (form < 0.8) base = `${rng.pick(ADJECTIVES)} ${rng.pick(NOUNS)}`;
  else if (form < 0.92) base = surnames.draw(rng);
  else base = city;
  return { name: `${base} ${industry.word}`, workforce: industry.workforce, naics: industry.naics, tld: 'com' };
}

function institutionName(rng: Rng, category: CompanyCategory, city: string, state: string): NameParts {
  const stateName = STATE_NAMES[state] ?? state;
  const r = rng.int(6);
  if (category === 'Educational') {
    const forms: readonly NameParts[] = [
      { name: `${city} Public Schools`, workforce: 'education', naics: '611110', tld: 'org' },
      { name: `${surnames.draw(rng)} College`, workforce: 'education', naics: '611310', tld: 'edu' },
      { name: `University of ${rng.pick(ADJECTIVES)} ${rng.pick(NOUNS)}`, workforce: 'education', naics: '611310', tld: 'edu' },
      { name: `${city} Community College`, workforce: 'education', naics: '611210', tld: 'edu' },
      { name: `${rng.pick(ADJECTIVES)} ${rng.pick(NOUNS)} Academy`, workforce: 'education', naics: '611110', tld: 'org' },
      { name: `${stateName} ${rng.pick(['Polytechnic', 'Technical', 'State'])} University`, workforce: 'education', naics: '611310', tld: 'edu' },
    ];
    return forms[r] ?? forms[0] ?? businessName(rng, city);
  }
  if (category === 'Government Agency') {
    const forms: readonly NameParts[] = [
      { name: `City of ${city}`, workforce: 'government', naics: '921110', tld: 'gov' },
      { name: `${surnames.draw(rng)} County`, workforce: 'government', naics: '921190', tld: 'gov' },
      {
        name: `${stateName} Department of ${rng.pick(['Transportation', 'Revenue', 'Health', 'Labor', 'Natural Resources'])}`,
        workforce: 'government',
        naics: '926120',
        tld: 'gov',
      },
      { name: `${city} Police Department`, workforce: 'government', naics: '922120', tld: 'gov' },
      { name: `${city} Water Authority`, workforce: 'government', naics: '221310', tld: 'gov' },
      { name: `${city} Housing Authority`, workforce: 'government', naics: '925110', tld: 'gov' },
    ];
    return forms[r] ?? forms[0] ?? businessName(rng, city);
  }
  const forms: readonly NameParts[] = [
    { name: `${rng.pick(ADJECTIVES)} ${rng.pick(NOUNS)} Foundation`, workforce: 'nonprofit', naics: '813211', tld: 'org' },
    { name: `${city} Community Foundation`, workforce: 'nonprofit', naics: '813211', tld: 'org' },
    { name: `${surnames.draw(rng)} Family Foundation`, workforce: 'nonprofit', naics: '813211', tld: 'org' },
    { name: `${city} Food Bank`, workforce: 'nonprofit', naics: '624210', tld: 'org' },
    { name: `${rng.pick(ADJECTIVES)} ${rng.pick(NOUNS)} Health System`, workforce: 'health', naics: '622110', tld: 'org' },
    { name: `${city} Museum of Art`, workforce: 'nonprofit', naics: '712110', tld: 'org' },
  ];
  return forms[r] ?? forms[0] ?? businessName(rng, city);
}

const LEGAL_SUFFIXES: Readonly<Record<CompanyCategory, Weighted<string>>> = {
  'Public Company': new Weighted([
    ['', 45],
    [', Inc.', 30],
    [' Inc.', 10],
    [' Corporation', 10],
    [' Corp.', 5],
  ]),
  'Private Company': new Weighted([
    ['', 70],
    [' LLC', 15],
    [', Inc.', 10],
    [' Inc.', 5],
  ]),
  Educational: new Weighted([['', 1]]),
  'Government Agency': new Weighted([['', 1]]),
  Nonprofit: new Weighted([
    ['', 9],
    [', Inc.', 1],
  ]),
};

/** `blueharborlogistics.com`, or `blue-harbor-logistics.com` for some, or a variant while either is taken. */
function uniqueDomain(parts: NameParts, rank: number, taken: Set<string>): string {
  const words = parts.name
    .split(/\s+/)
    .map(asciiSlug)
    .filter((w) => w !== '');
  const joined = words.join('');
  const hyphenated = words.join('-');
  const candidates = rank % 3 === 0 ? [hyphenated, joined] : [joined, hyphenated];
  candidates.push(`${joined}group`, `${joined}hq`, `${joined}${rank}`);
  const domain = candidates.map((c) => `${c}.${parts.tld}`).find((d) => !taken.has(d)) ?? `${joined}${rank}.${parts.tld}`;
  taken.add(domain);
  return domain;
}

const placeTable = new Weighted(ZIPS.map((entry, i) => [i, entry.place.weight / entry.place.zips.length] as const));

/**
 * `count` employers, largest first: the rank decides the size band (a few giants, many small firms),
 * the size band the category and revenue. Names, domains and phone numbers are unique.
 */
export function buildEmployers(count: number, rng: Rng, addresses: AddressBook, phones: PhoneBook): Employer[] {
  const names = new Set<string>();
  const domains = new Set<string>();
  const employers: Employer[] = [];
  for (let rank = 0; rank < count; rank += 1) {
    const percentile = (rank + 0.5) / count;
    const band = SIZE_BANDS.find(([upTo]) => percentile <= upTo) ?? SIZE_BANDS[SIZE_BANDS.length - 1];
    if (band === undefined) throw new Error('no size band');
    const [, size, revenues] = band;
    let category = CATEGORY_BY_SIZE[size].draw(rng);
    const zip = placeTable.draw(rng);
    const entry = ZIPS[zip];
    if (entry === undefined) throw new Error('zip out of range');
    const { city, state } = entry.place;
    let parts: NameParts | undefined;
    for (let attempt = 0; attempt < 40 && parts === undefined; attempt += 1) {
      const candidate =
        category === 'Private Company' || category === 'Public Company' || attempt >= 20
          ? businessName(rng, city)
          : institutionName(rng, category, city, state);
      if (attempt >= 20 && category !== 'Public Company') category = 'Private Company';
      if (!names.has(candidate.name)) parts = candidate;
    }
    if (parts === undefined) {
      const fallback = businessName(rng, city);
      parts = { ...fallback, name: `${fallback.name} ${rank}` };
    }
    names.add(parts.name);
    const suffix = LEGAL_SUFFIXES[category].draw(rng);
    const name = `${parts.name}${suffix}`;
    const domain = uniqueDomain(parts, rank, domains);
    const site = addresses.house(zip, rng);
    const large = size === '10,000+' || size === '5,001-10,000' || size === '1,001-5,000';
    const lineTwo = large
      ? `Floor ${rng.between(2, 48)}`
      : rng.chance(0.5)
        ? `Suite ${rng.between(1, 9)}${String(rng.int(100)).padStart(2, '0')}`
        : `Unit ${rng.between(1, 30)}`;
    const areaCode = rng.pick(entry.place.areaCodes);
    const fields = {
      company_name: name,
      company_domain: domain,
      company_phone_number: formatPhone(phones.allocate(areaCode), 'paren'),
      company_address_line_one: addresses.line(site),
      company_address_line_two: lineTwo,
      company_city: city,
      company_state: state,
      company_zip: entry.zip,
      company_naics_code: parts.naics,
      company_category: category,
      company_size_range: size,
      company_revenue_range: revenues.draw(rng),
    };
    const json = JSON.stringify(fields).slice(1, -1);
    employers.push({ name, shortName: parts.name, domain, category, workforce: parts.workforce, size, state, areaCodes: entry.place.areaCodes, json });
  }
  return employers;
}
