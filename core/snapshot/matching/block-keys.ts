// Blocking keys: what a snapshot files each household under besides its exact address, so a record with
// one or two wrong fields still finds its household among the candidates. Every key format is built here only:
// a load writes the keys (loader.ts), a request asks for the same ones built from its own fields
// (linkage.ts), and the PostgreSQL lookup statement tells the kinds apart by their prefixes.
import { phoneticKey } from '../../normalize/similarity.ts';
import { addressKeyParts, streetCore } from './keys.ts';

/**
 * The kinds of key, each one its keys' prefix (`kind|…`). Of the six fields a record is found by (given
 * name, surname, house number, street, city, postal code), any two wrong leave at least one that agrees,
 * and most three (the surname's first letter and the given name's sound outlast most slips):
 *   pn|postal|number                  — the street misspelled, or its suffix (every household at the
 *                                       number, whatever its name: few share one in a postal code);
 *   ps|postal|street                  — the house number wrong (every household of the street, whatever
 *                                       its name: 6.7 on average in a postal code of the 1M bench);
 *   np|postal|surname sound           — number or street wrong, and swapped names (asked with the given name);
 *   cn|city|region|number|core        — the postal code wrong (the street without its type or directions);
 *   cs|city|region|surname sound|initial — postal code and number, or postal code and street, wrong;
 *   rn|region|surname sound|number    — postal code and city wrong (another place of the state);
 *   rt|region|surname sound|core      — postal code and city wrong, and the house number besides
 *                                       (the street's core, as cn's);
 *   ra|region|number|core             — the surname's sound wrong with the postal code and the city
 *                                       (the address alone, state-wide);
 *   cg|city|region|given name sound|surname initial
 *                                     — the surname's sound wrong with the number or the street, or
 *                                       both (a slip seldom changes a surname's first letter);
 * The people's kinds (np, cs, rn, rt, cg) are written per person, the others per household. Every
 * household a key finds is a candidate: linkage's comparison, not the key, tells a name apart (a
 * snapshot loaded before 2026-11-28 also holds gp|postal|given name sound keys, which only narrowed the
 * postal code's number and street to the households carrying a name's sound; none asks them now).
 */
export const BLOCK = {
  postalNumber: 'pn',
  postalStreet: 'ps',
  nameSound: 'np',
  cityStreet: 'cn',
  citySurname: 'cs',
  regionSurnameNumber: 'rn',
  regionSurnameStreet: 'rt',
  regionAddress: 'ra',
  cityGiven: 'cg',
} as const;
export type BlockKind = (typeof BLOCK)[keyof typeof BLOCK];

/** Every kind, in the order a request asks an address's keys. */
export const BLOCK_KINDS: readonly BlockKind[] = [
  BLOCK.postalNumber,
  BLOCK.postalStreet,
  BLOCK.nameSound,
  BLOCK.cityStreet,
  BLOCK.citySurname,
  BLOCK.regionSurnameNumber,
  BLOCK.regionSurnameStreet,
  BLOCK.regionAddress,
  BLOCK.cityGiven,
];

/** What every key of a kind starts with. */
export function blockPrefix(kind: BlockKind): string {
  return `${kind}|`;
}

/** The kind of a key, or null for a string no builder here made. */
export function blockKindOf(key: string): BlockKind | null {
  const kind = key.slice(0, key.indexOf('|'));
  return BLOCK_KINDS.find((known) => known === kind) ?? null;
}

export function postalNumberBlock(postal: string, number: string): string {
  return `${BLOCK.postalNumber}|${postal}|${number}`;
}

export function postalStreetBlock(postal: string, street: string): string {
  return `${BLOCK.postalStreet}|${postal}|${street}`;
}

/** A name's sound within a postal code, or null when either is missing. */
export function nameSoundBlock(postal: string, name: string): string | null {
  const sound = name === '' ? '' : phoneticKey(name);
  return postal === '' || sound === '' ? null : `${BLOCK.nameSound}|${postal}|${sound}`;
}

/**
 * A surname's sound and the given name's first letter in a city, or null when any is missing: a city
 * holds too many households of a common surname's sound for the sound alone, and a slip seldom
 * changes a name's first letter.
 */
export function citySurnameBlock(city: string, region: string, surname: string, given: string): string | null {
  const sound = surname === '' ? '' : phoneticKey(surname);
  const initial = given.charAt(0);
  return city === '' || region === '' || sound === '' || initial === '' ? null : `${BLOCK.citySurname}|${city}|${region}|${sound}|${initial}`;
}

/**
 * A given name's sound and the surname's first letter in a city, or null when any is missing: what
 * still finds a person whose surname was slipped out of its sound (Shah written Shfh) and whose number
 * or street is wrong besides.
 */
export function cityGivenBlock(city: string, region: string, given: string, surname: string): string | null {
  const sound = given === '' ? '' : phoneticKey(given);
  const initial = surname.charAt(0);
  return city === '' || region === '' || sound === '' || initial === '' ? null : `${BLOCK.cityGiven}|${city}|${region}|${sound}|${initial}`;
}

/** A house number and a street's core in a state (region), or null when any is missing. */
export function regionAddressBlock(region: string, number: string, street: string): string | null {
  const core = streetCore(street);
  return region === '' || number === '' || core === '' ? null : `${BLOCK.regionAddress}|${region}|${number}|${core}`;
}

/** A surname's sound and a house number in a state (region), or null when any is missing. */
export function regionSurnameBlock(region: string, surname: string, number: string): string | null {
  const sound = surname === '' ? '' : phoneticKey(surname);
  return region === '' || sound === '' || number === '' ? null : `${BLOCK.regionSurnameNumber}|${region}|${sound}|${number}`;
}

/** A surname's sound and a street's core in a state (region), or null when any is missing. */
export function regionStreetBlock(region: string, surname: string, street: string): string | null {
  const sound = surname === '' ? '' : phoneticKey(surname);
  const core = streetCore(street);
  return region === '' || sound === '' || core === '' ? null : `${BLOCK.regionSurnameStreet}|${region}|${sound}|${core}`;
}

/** Where a person lives, as their keys read it: their household's place, house numbers and streets. */
export interface PersonPlace {
  readonly postal: string;
  readonly city: string;
  readonly region: string;
  /** The house number of each of the household's addresses. */
  readonly numbers: readonly string[];
  /** The street of each of the household's addresses (normalized, as in its address key). */
  readonly streets: readonly string[];
}

/** The blocking keys of one person at their household's place (np, cs, rn, rt, cg): the same builders the query asks. */
export function personBlocks(place: PersonPlace, first: string, last: string): string[] {
  const keys = [
    nameSoundBlock(place.postal, last),
    citySurnameBlock(place.city, place.region, last, first),
    cityGivenBlock(place.city, place.region, first, last),
    ...[...new Set(place.numbers)].map((number) => regionSurnameBlock(place.region, last, number)),
    ...[...new Set(place.streets)].map((street) => regionStreetBlock(place.region, last, street)),
  ];
  // Two streets of one core (Oak Street, Oak Avenue) are one key.
  return [...new Set(keys.filter((key) => key !== null))];
}

/**
 * Households an erased member left: a load writes `xm|<household>` for each household of which it left
 * a person out for the suppression list (the person alone erased, the household kept), and `xm|recorded`
 * (under household 0, which no household is) once, so a reader tells a snapshot that records them from
 * one loaded before it did. Such a household is never answered for a given name no member has: that is
 * what the erased member's own record asks (linkage.ts, erasedMemberMayBe). Never asked per address.
 */
export const ERASED_MEMBER_PREFIX = 'xm|';
export const ERASURES_RECORDED = `${ERASED_MEMBER_PREFIX}recorded`;
/** The household `ERASURES_RECORDED` is filed under: none. */
export const NO_HOUSEHOLD = 0;

export function erasedMemberBlock(hh: number): string {
  return `${ERASED_MEMBER_PREFIX}${hh}`;
}

/** The house number and street's core in a city, or null without the city, region, number or street. */
export function cityStreetBlock(city: string, region: string, number: string, street: string): string | null {
  const core = streetCore(street);
  return city === '' || region === '' || number === '' || core === '' ? null : `${BLOCK.cityStreet}|${city}|${region}|${number}|${core}`;
}

/** An address as its blocking keys read it: normalized parts, '' where unknown (a record's number or street may be). */
export interface BlockAddress {
  readonly number: string;
  readonly street: string;
  readonly postal: string;
  readonly city: string;
  readonly region: string;
}

/**
 * The blocking keys of one address, with the sound of each name given in its postal code: the same
 * builder at load (no names: a person's keys are added with the person, personBlocks) and at query.
 */
export function addressBlocks(address: BlockAddress, names: readonly string[]): string[] {
  const keys: string[] = [];
  if (address.postal !== '') {
    if (address.number !== '') keys.push(postalNumberBlock(address.postal, address.number));
    if (address.street !== '') keys.push(postalStreetBlock(address.postal, address.street));
    for (const name of names) {
      const key = nameSoundBlock(address.postal, name);
      if (key !== null) keys.push(key);
    }
  }
  for (const key of [
    cityStreetBlock(address.city, address.region, address.number, address.street),
    regionAddressBlock(address.region, address.number, address.street),
  ])
    if (key !== null) keys.push(key);
  return keys;
}

/** The blocking keys of one household: each of its address keys' within the household's place. */
export function householdBlockKeys(addressKeys: readonly string[], city: string, region: string): string[] {
  const keys = new Set<string>();
  for (const key of addressKeys) for (const block of addressBlocks({ ...addressKeyParts(key), city, region }, [])) keys.add(block);
  return [...keys];
}
