// US street-address and postal-code normalization for matching: house number, street name with USPS
// suffix and directional abbreviations, unit designators, 5-digit zips and Canadian postal codes.

/** USPS Publication 28 street suffixes (common forms) → standard abbreviation. */
const STREET_SUFFIX: Readonly<Record<string, string>> = {
  street: 'st',
  str: 'st',
  st: 'st',
  avenue: 'ave',
  av: 'ave',
  ave: 'ave',
  aven: 'ave',
  avenu: 'ave',
  avn: 'ave',
  boulevard: 'blvd',
  boul: 'blvd',
  blvd: 'blvd',
  road: 'rd',
  rd: 'rd',
  drive: 'dr',
  drv: 'dr',
  dr: 'dr',
  lane: 'ln',
  ln: 'ln',
  court: 'ct',
  ct: 'ct',
  place: 'pl',
  pl: 'pl',
  terrace: 'ter',
  terr: 'ter',
  ter: 'ter',
  circle: 'cir',
  circ: 'cir',
  cir: 'cir',
  parkway: 'pkwy',
  parkwy: 'pkwy',
  pkway: 'pkwy',
  pky: 'pkwy',
  pkwy: 'pkwy',
  highway: 'hwy',
  highwy: 'hwy',
  hiway: 'hwy',
  hwy: 'hwy',
  square: 'sq',
  sq: 'sq',
  trail: 'trl',
  trl: 'trl',
  way: 'way',
  wy: 'way',
  alley: 'aly',
  aly: 'aly',
  crossing: 'xing',
  xing: 'xing',
  expressway: 'expy',
  expy: 'expy',
  freeway: 'fwy',
  fwy: 'fwy',
  loop: 'loop',
  point: 'pt',
  pt: 'pt',
  plaza: 'plz',
  plz: 'plz',
  run: 'run',
  path: 'path',
  pike: 'pike',
  row: 'row',
  walk: 'walk',
};

const DIRECTIONAL: Readonly<Record<string, string>> = {
  north: 'n',
  n: 'n',
  south: 's',
  s: 's',
  east: 'e',
  e: 'e',
  west: 'w',
  w: 'w',
  northeast: 'ne',
  ne: 'ne',
  northwest: 'nw',
  nw: 'nw',
  southeast: 'se',
  se: 'se',
  southwest: 'sw',
  sw: 'sw',
};

/** Words that start a secondary unit (USPS Publication 28, C2). */
const UNIT_DESIGNATORS = new Set([
  '#',
  'apt',
  'apartment',
  'unit',
  'ste',
  'suite',
  'fl',
  'floor',
  'rm',
  'room',
  'bldg',
  'building',
  'dept',
  'lot',
  'spc',
  'space',
  'trlr',
  'ph',
  'penthouse',
  'bsmt',
  'frnt',
  'rear',
  'lowr',
  'uppr',
  'ofc',
  'pier',
  'slip',
  'stop',
  'hngr',
  'key',
]);

export interface StreetLine {
  /** House number as written, without leading zeros: `0100` → `100`, `12B` → `12b`. */
  readonly number: string;
  /** Street name with directionals and suffix abbreviated: `North Main Street` → `n main st`. */
  readonly street: string;
  /** Unit, when one was given: `Apt 4` → `4`. Not used for matching a building. */
  readonly unit: string | null;
}

/**
 * Reads the first line of a street address. A full address (`100 Demo St, Atlanta, GA 30301`) is cut at
 * its first comma. Null when there is no leading house number or no street name: a partial address.
 */
export function parseStreetLine(raw: string): StreetLine | null {
  const line = parseStreetParts(raw);
  return line === null || line.number === '' || line.street === '' ? null : line;
}

/**
 * Reads the first line of a street address as parseStreetLine does, keeping a partial one: a number
 * with no street (`1603`, `1953 Apt 104`) has street '', a street with no number (`Vista Ct Apt 1207`)
 * has number ''. Null when neither is there, or for a post office box. Only error-tolerant linkage
 * reads partial lines: an address key needs both.
 */
export function parseStreetParts(raw: string): StreetLine | null {
  const firstLine = (raw.split(',')[0] ?? '').toLowerCase().replace(/\./g, ' ').replace(/#/g, ' # ');
  const words = firstLine.split(/\s+/).filter((w) => w !== '');
  const head = words[0];
  if (head === undefined) return null;
  const numbered = /^\d+[a-z]?$/.test(head);
  const number = numbered ? head.replace(/^0+(?=\d)/, '') : '';
  const streetWords: string[] = [];
  let unit: string | null = null;
  for (let i = numbered ? 1 : 0; i < words.length; i += 1) {
    const word = words[i] ?? '';
    if (UNIT_DESIGNATORS.has(word)) {
      unit = words.slice(i + 1).join(' ') || word;
      break;
    }
    streetWords.push(word);
  }
  if (number === '' && streetWords.length === 0) return null;
  // A post office box is no street: `PO Box 12` would otherwise read as a street named so.
  if (number === '' && /^p ?o box\b/.test(streetWords.join(' '))) return null;
  const last = streetWords.length - 1;
  // A trailing directional (`Main St S`, `Main Street South`) follows the suffix; both are abbreviated.
  const lastWord = streetWords[last] ?? '';
  const suffixAt = DIRECTIONAL[lastWord] !== undefined && last > 1 ? last - 1 : last;
  const street = streetWords
    .map((word, i) => {
      if (i === suffixAt && i > 0 && STREET_SUFFIX[word] !== undefined) return STREET_SUFFIX[word];
      if ((i === 0 || i === last) && DIRECTIONAL[word] !== undefined && streetWords.length > 1) return DIRECTIONAL[word];
      return word;
    })
    .join(' ');
  return { number, street, unit };
}

/**
 * Postal code for matching: US zips to 5 digits (`30301-1234` → `30301`), Canadian postal codes to
 * `A1A1A1`. Null when neither shape is there.
 */
export function normalizePostalCode(raw: string): string | null {
  const compact = raw.trim().toUpperCase().replace(/\s+/g, '');
  const us = /^(\d{5})(?:-?\d{4})?$/.exec(compact);
  if (us?.[1] !== undefined) return us[1];
  if (/^[ABCEGHJ-NPRSTVXY]\d[ABCEGHJ-NPRSTV-Z]-?\d[ABCEGHJ-NPRSTV-Z]\d$/.test(compact)) return compact.replace('-', '');
  return null;
}

/** The postal code at the end of a one-line full address (`…, Atlanta, GA 30301-1234`), or null. */
export function postalCodeFromFullAddress(raw: string): string | null {
  if (!raw.includes(',')) return null;
  const tail = /(?:^|[\s,])([0-9]{5}(?:-?[0-9]{4})?|[A-Za-z]\d[A-Za-z] ?\d[A-Za-z]\d)\s*$/.exec(raw.trim());
  return tail?.[1] === undefined ? null : normalizePostalCode(tail[1]);
}
