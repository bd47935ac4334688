// The typo query set (`data generate … --noise typos`): one corrupted duplicate per person
// sampled, with name and address only (no e-mail, no phone), and exactly one error of a documented
// type, plus negatives (a real person's name at another household's address). It stands beside
// queries.jsonl as queries-typos.jsonl; the default files are unchanged by it.
//
// The error types and their shares model the data entry that record-linkage benchmarks corrupt with
// (keyboard and OCR substitutions, insertions, deletions and transpositions, which are most of real
// misspellings; phonetic misspellings; swapped and missing names; a wrong house number, mostly one
// digit slipped (NUMBER_ERRORS), or postcode; street suffixes abbreviated or misspelled). Each line's
// `noise` names its one type.
import { distance } from 'fastest-levenshtein';
import type { QueryLine } from '../../format.ts';
import { type AddressBook, type AddressParts, ZIPS } from './identifiers.ts';
import type { Rng } from './random.ts';
import type { Subject } from './queries.ts';

export const CORRUPTIONS = [
  'none',
  'street_typo',
  'street_number',
  'postcode',
  'swapped_names',
  'surname_typo',
  'surname_multi_edit',
  'surname_phonetic',
  'given_name_missing',
  'street_suffix',
] as const;
export type Corruption = (typeof CORRUPTIONS)[number];

/** The share of duplicates with each error (they sum to 1). */
export const CORRUPTION_SHARES: Readonly<Record<Corruption, number>> = {
  none: 0.12,
  street_typo: 0.12,
  street_number: 0.08,
  postcode: 0.08,
  swapped_names: 0.08,
  surname_typo: 0.14,
  surname_multi_edit: 0.08,
  surname_phonetic: 0.1,
  given_name_missing: 0.08,
  street_suffix: 0.12,
};

/** Of the typo set's lines, the share that are negatives: a real name at someone else's address. */
export const NEGATIVE_SHARE = 0.2;

/** Letters next to each other on a QWERTY keyboard (a slipped finger). */
const KEYBOARD: Readonly<Record<string, string>> = {
  a: 'qwsz',
  b: 'vghn',
  c: 'xdfv',
  d: 'serfcx',
  e: 'wsdr',
  f: 'drtgvc',
  g: 'ftyhbv',
  h: 'gyujnb',
  i: 'ujko',
  j: 'huikmn',
  k: 'jiolm',
  l: 'kop',
  m: 'njk',
  n: 'bhjm',
  o: 'iklp',
  p: 'ol',
  q: 'wa',
  r: 'edft',
  s: 'awedxz',
  t: 'rfgy',
  u: 'yhji',
  v: 'cfgb',
  w: 'qase',
  x: 'zsdc',
  y: 'tghu',
  z: 'asx',
};

/** What an OCR pass or a hurried reader confuses (either way). */
const OCR: readonly (readonly [string, string])[] = [
  ['rn', 'm'],
  ['cl', 'd'],
  ['vv', 'w'],
  ['li', 'h'],
  ['e', 'c'],
  ['o', 'c'],
  ['l', 'i'],
  ['n', 'h'],
  ['u', 'v'],
];

/** Digits next to each other on the keyboard's number row. */
const DIGIT_ROW: Readonly<Record<string, string>> = {
  '0': '9',
  '1': '2',
  '2': '13',
  '3': '24',
  '4': '35',
  '5': '46',
  '6': '57',
  '7': '68',
  '8': '79',
  '9': '80',
};

/**
 * How a house number goes wrong, and how often. A number is typed digit by digit, so most of its
 * errors are one digit edit; the shares are those the Febrl data set generator (Christen, ANU: a
 * record-linkage benchmark generator) gives its street_number field: substitution 0.60, deletion
 * 0.15, insertion 0.10, transposition 0.05, and 0.05 a value from elsewhere. We give that last case,
 * another number of the street altogether (someone who writes a neighbour's or an old address's
 * number), 0.10 instead: the matcher must still meet far-off numbers often enough to be measured.
 */
export const NUMBER_ERRORS = { substitute: 0.6, delete: 0.15, insert: 0.1, transpose: 0.05, other: 0.1 } as const;
export type NumberError = keyof typeof NUMBER_ERRORS;

/** A house number as data entry gets it wrong (NUMBER_ERRORS): never the number itself, never a leading zero. */
export function wrongNumber(rng: Rng, number: string): string {
  let r = rng.next();
  let kind: NumberError = 'other';
  for (const [error, share] of Object.entries(NUMBER_ERRORS) as [NumberError, number][]) {
    r -= share;
    if (r < 0) {
      kind = error;
      break;
    }
  }
  const n = number.length;
  if (kind === 'other' || !/^\d+$/.test(number)) return String((Number.parseInt(number, 10) + 1 + rng.int(400)) % 10_000 || 1);
  const valid = (out: string) => out !== '' && !out.startsWith('0') && out !== number;
  if (kind === 'delete' && n >= 2) {
    const i = rng.int(n);
    const out = `${number.slice(0, i)}${number.slice(i + 1)}`;
    if (valid(out)) return out;
  }
  if (kind === 'insert') {
    const i = rng.int(n + 1);
    // A key struck twice, or its neighbour struck with it.
    const beside = number[Math.min(i, n - 1)] ?? '1';
    const digit = rng.chance(0.5) ? beside : rng.pick([...(DIGIT_ROW[beside] ?? '1')]);
    const out = `${number.slice(0, i)}${digit}${number.slice(i)}`;
    if (valid(out)) return out;
  }
  if (kind === 'transpose' && n >= 2) {
    const i = rng.int(n - 1);
    const out = `${number.slice(0, i)}${number[i + 1] ?? ''}${number[i] ?? ''}${number.slice(i + 2)}`;
    if (valid(out)) return out;
  }
  // A substitution (and what found nothing else to do): a neighbouring key 40 % of the time, as Febrl
  // has it, else any other digit.
  for (;;) {
    const i = rng.int(n);
    const original = number[i] ?? '0';
    const digit = rng.chance(0.4) ? rng.pick([...(DIGIT_ROW[original] ?? '1')]) : String(rng.int(10));
    const out = `${number.slice(0, i)}${digit}${number.slice(i + 1)}`;
    if (valid(out)) return out;
  }
}

/** Spellings that sound the same (English). */
const PHONETIC: readonly (readonly [RegExp, string])[] = [
  [/ph/, 'f'],
  [/f/, 'ph'],
  [/ck/, 'k'],
  [/c(?=[aou])/, 'k'],
  [/k/, 'c'],
  [/ie/, 'ei'],
  [/ei/, 'ie'],
  [/ey$/, 'y'],
  [/y$/, 'ie'],
  [/ll/, 'l'],
  [/tt/, 't'],
  [/nn/, 'n'],
  [/ss/, 's'],
  [/z/, 's'],
  [/s(?=[aeiou])/, 'z'],
  [/ou/, 'ow'],
  [/ai/, 'ay'],
  [/th/, 't'],
];

const SUFFIX_VARIANTS: Readonly<Record<string, readonly string[]>> = {
  Street: ['Str', 'St.', 'Stret', 'Streeet'],
  Avenue: ['Av', 'Ave.', 'Avenu', 'Avnue'],
  Road: ['Rd.', 'Raod'],
  Drive: ['Dr.', 'Drv', 'Drvie'],
  Lane: ['Ln.', 'Lnae'],
  Court: ['Ct.', 'Crt', 'Cuort'],
  Boulevard: ['Blv', 'Blvd.', 'Boulvard'],
  Place: ['Pl.', 'Plc'],
  Way: ['Wy', 'Wya'],
  Circle: ['Cir.', 'Crcl'],
  Terrace: ['Ter.', 'Terr'],
  Parkway: ['Pkwy.', 'Pky'],
  Trail: ['Trl', 'Tr.'],
  Highway: ['Hwy.', 'Hiway'],
};

/** One edit as data entry makes it, never on the first letter: a keyboard slip, an OCR confusion, an insertion, a deletion or a transposition. */
export function singleEdit(rng: Rng, word: string): string {
  if (word.length < 3) {
    // Too short to touch inside: a letter slips in at the end.
    const last = word.toLowerCase().at(-1) ?? 'a';
    return `${word}${rng.pick([...(KEYBOARD[last] ?? 'aeiou')])}`;
  }
  const i = 1 + rng.int(word.length - 1);
  const lower = word.toLowerCase();
  const kind = rng.pick(['keyboard', 'ocr', 'insert', 'delete', 'transpose'] as const);
  if (kind === 'ocr') {
    const found = OCR.flatMap(
      ([a, b]) =>
        [
          [a, b],
          [b, a],
        ] as const,
    ).filter(([from]) => lower.indexOf(from, 1) > 0);
    const [from, to] = found.length > 0 ? rng.pick(found) : ['', ''];
    if (from !== '') {
      const at = lower.indexOf(from, 1);
      return `${word.slice(0, at)}${to}${word.slice(at + from.length)}`;
    }
  }
  if (kind === 'transpose' && i < word.length - 1 && word[i] !== word[i + 1])
    return `${word.slice(0, i)}${word[i + 1] ?? ''}${word[i] ?? ''}${word.slice(i + 2)}`;
  if (kind === 'delete') return `${word.slice(0, i)}${word.slice(i + 1)}`;
  const near = KEYBOARD[lower[i] ?? ''] ?? 'aeiou';
  const letter = rng.pick([...near]);
  if (kind === 'insert') return `${word.slice(0, i)}${letter}${word.slice(i)}`;
  // keyboard (and what found nothing else to do): a neighbouring key instead, in the letter's case.
  const original = word[i] ?? '';
  return `${word.slice(0, i)}${original !== original.toLowerCase() ? letter.toUpperCase() : letter}${word.slice(i + 1)}`;
}

/** A spelling that sounds the same, or null when none of the rules applies to the word. */
export function phoneticMisspelling(rng: Rng, word: string): string | null {
  const lower = word.toLowerCase();
  const rules = PHONETIC.filter(([pattern]) => pattern.test(lower.slice(1)));
  if (rules.length === 0) return null;
  const [pattern, to] = rng.pick(rules);
  const out = `${lower.slice(0, 1)}${lower.slice(1).replace(pattern, to)}`;
  return out === lower ? null : `${word.slice(0, 1)}${out.slice(1)}`;
}

/** The household address a duplicate is written with, before any corruption. */
export interface CleanAddress {
  number: string;
  prefix: string;
  street: string;
  /** As the data writes it (`St`). */
  suffix: string;
  /** In full (`Street`): what its misspellings and other abbreviations are made from. */
  suffixFull: string;
  postfix: string;
  /** `Apt 4B`, or empty for a house. */
  unit: string;
  city: string;
  state: string;
  zip: string;
}

export function cleanAddress(book: AddressBook, parts: AddressParts): CleanAddress {
  const entry = ZIPS[parts.zip];
  if (entry === undefined) throw new Error('zip out of range');
  const street = book.street(parts.zip, parts.slot);
  return {
    number: String(parts.number),
    prefix: street.prefix,
    street: street.name,
    suffix: street.suffix,
    suffixFull: street.suffixFull,
    postfix: street.postfix,
    unit: parts.unit === null ? '' : `Apt ${parts.unit}`,
    city: entry.place.city,
    state: entry.place.state,
    zip: entry.zip,
  };
}

function addressRequest(a: CleanAddress): Record<string, string> {
  return {
    address: [a.number, a.prefix, a.street, a.suffix, a.postfix, a.unit].filter((w) => w !== '').join(' '),
    city: a.city,
    state: a.state,
    zipcode: a.zip,
  };
}

/** Picks a corruption by its share. */
function pickCorruption(rng: Rng): Corruption {
  let r = rng.next();
  for (const type of CORRUPTIONS) {
    r -= CORRUPTION_SHARES[type];
    if (r < 0) return type;
  }
  return 'none';
}

/** A duplicate of `s` (a person of the data with a household address) with one error; the type may change when the chosen one cannot apply. */
export function corruptedDuplicate(rng: Rng, id: string, s: Subject, book: AddressBook): QueryLine {
  const parts = s.addresses[0];
  if (parts === undefined || s.personId === null) throw new Error('a typo duplicate needs a person of the data with an address');
  const address = cleanAddress(book, parts);
  let first: string | null = s.first;
  let last = s.last;
  let type = pickCorruption(rng);
  if (type === 'surname_phonetic') {
    const spelled = phoneticMisspelling(rng, last);
    if (spelled === null) type = 'surname_typo';
    else last = spelled;
  }
  switch (type) {
    case 'street_typo':
      address.street = address.street.length >= 4 ? singleEdit(rng, address.street) : `${address.street}${rng.pick(['e', 's'])}`;
      break;
    case 'street_number':
      address.number = wrongNumber(rng, address.number);
      break;
    case 'postcode': {
      let other = address.zip;
      while (other === address.zip) other = ZIPS[rng.int(ZIPS.length)]?.zip ?? address.zip;
      address.zip = other;
      break;
    }
    case 'swapped_names':
      [first, last] = [last, first];
      break;
    case 'surname_typo':
      last = singleEdit(rng, last);
      break;
    case 'surname_multi_edit': {
      // Two edits that do not undo or merge into one (at least two apart from the original).
      let edited = singleEdit(rng, singleEdit(rng, last));
      for (let tries = 0; tries < 20 && distance(edited, last) < 2; tries += 1) edited = singleEdit(rng, singleEdit(rng, last));
      last = distance(edited, last) >= 2 ? edited : `${singleEdit(rng, last)}${rng.pick(['s', 'e', 'n'])}`;
      break;
    }
    case 'given_name_missing':
      first = null;
      break;
    case 'street_suffix':
      address.suffix = rng.pick((SUFFIX_VARIANTS[address.suffixFull] ?? [`${address.suffixFull.slice(0, 2)}.`]).filter((v) => v !== address.suffix));
      break;
    case 'none':
    case 'surname_phonetic':
      break;
  }
  return {
    request: { id, first_name: first, last_name: last, addresses: [addressRequest(address)] },
    expected: { windfall_id: s.windfallId, person_id: s.personId, linkedin_url: s.linkedinUrl },
    noise: [`typos:${type}`],
  };
}

/** A negative: `person`'s name at `other`'s household address (another household, another surname). */
export function contradictingNegative(id: string, person: Subject, other: Subject, book: AddressBook): QueryLine {
  const parts = other.addresses[0];
  if (parts === undefined) throw new Error('a negative needs an address');
  return {
    request: { id, first_name: person.first, last_name: person.last, addresses: [addressRequest(cleanAddress(book, parts))] },
    expected: { windfall_id: null, person_id: null, linkedin_url: null },
    noise: ['typos:negative'],
  };
}
