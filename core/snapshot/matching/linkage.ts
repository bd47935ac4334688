// Error-tolerant household linkage for records that carry a name and an address: candidate
// households from the exact address key and, when that does not decide, from blocking keys that
// survive two wrong fields (block-keys.ts); each candidate compared field by field; the comparisons
// weighed as Fellegi–Sunter agreement weights (log2 m/u, fitted on the generator's corruption model by
// scripts/fit-match-weights.ts into match-weights.ts); the best candidate's weight and its lead over
// the next turned into a probability of being right, which decides, and recalibrated into the answer's
// confidence.
import { parseStreetParts } from '../../normalize/address.ts';
import { partialName } from '../../normalize/name.ts';
import { givenNameForms, sameFirstName } from '../../normalize/nicknames.ts';
import { editsWithin, jaroWinkler, soundAlike } from '../../normalize/similarity.ts';
import type { EnrichmentRequest } from '../../contract/schemas.ts';
import {
  ERASURES_RECORDED,
  addressBlocks,
  cityGivenBlock,
  citySurnameBlock,
  erasedMemberBlock,
  nameSoundBlock,
  regionStreetBlock,
  regionSurnameBlock,
} from './block-keys.ts';
import { addressKey, addressKeyParts, cityKey, normalizeUnit, postalOf, regionOf, streetCore } from './keys.ts';
import { CALIBRATION, WEIGHTS } from './match-weights.ts';
import { type AddressHit, BLOCK_LIMIT, type HouseholdRow, type PersonRow } from '../port.ts';

export type SurnameLevel = 'exact' | 'edit1' | 'phonetic' | 'similar' | 'edit2' | 'different' | 'swapped' | 'missing';
export type GivenLevel = 'exact' | 'close' | 'different' | 'swapped' | 'missing';
export type NumberLevel = 'exact' | 'near' | 'different' | 'missing';
export type StreetLevel = 'exact' | 'core' | 'close' | 'different' | 'missing';
export type PostalLevel = 'exact' | 'different' | 'missing';
export type CityLevel = 'exact' | 'close' | 'different' | 'missing';
export type UnitLevel = 'exact' | 'different' | 'query_only' | 'household_only' | 'none';

/** How each field of a record compares with a candidate household (its best member, its best address). */
export interface Comparison {
  readonly surname: SurnameLevel;
  readonly given: GivenLevel;
  readonly number: NumberLevel;
  readonly street: StreetLevel;
  readonly postal: PostalLevel;
  readonly city: CityLevel;
  readonly unit: UnitLevel;
}

export const FIELDS = ['surname', 'given', 'number', 'street', 'postal', 'city', 'unit'] as const;
export type Field = (typeof FIELDS)[number];

/** The levels of each field, in the order the weights table lists them. */
export const LEVELS: { readonly [F in Field]: readonly Comparison[F][] } = {
  surname: ['exact', 'edit1', 'phonetic', 'similar', 'edit2', 'different', 'swapped', 'missing'],
  given: ['exact', 'close', 'different', 'swapped', 'missing'],
  number: ['exact', 'near', 'different', 'missing'],
  street: ['exact', 'core', 'close', 'different', 'missing'],
  postal: ['exact', 'different', 'missing'],
  city: ['exact', 'close', 'different', 'missing'],
  unit: ['exact', 'different', 'query_only', 'household_only', 'none'],
};

/** Most candidate households one record is compared with. */
export const MAX_CANDIDATES = 300;
/** A surname at least this Jaro-Winkler-similar that is no typo or sound-alike still is not a contradiction. */
export const SIMILAR_SURNAME = 0.85;
/** Surnames that share a Double Metaphone code count as sound-alikes from this Jaro-Winkler similarity on. */
export const SOUND_ALIKE_FLOOR = 0.75;
/** Streets this Jaro-Winkler-similar are the same street misspelled. */
export const CLOSE_STREET = 0.88;
/** City names this Jaro-Winkler-similar are one city misspelled (hjouston for houston). */
export const CLOSE_CITY = 0.9;
/** Given names this similar are one name misspelled. */
export const CLOSE_GIVEN = 0.9;

export interface LinkageAddress {
  /** '' when the street line gives no house number. */
  readonly number: string;
  /** '' when the street line gives a house number alone. */
  readonly street: string;
  readonly unit: string;
  readonly postal: string;
  readonly city: string;
  readonly region: string;
  /** `number|street|postal`, or null without a postal code, a number or a street. */
  readonly key: string | null;
}

export interface LinkageQuery {
  /** Normalized; '' when not given. */
  readonly first: string;
  readonly last: string;
  readonly addresses: readonly LinkageAddress[];
}

/** What linkage reads of a snapshot (the matcher's per-request view memoizes each). */
export interface LinkageReader {
  householdsAtAddress(key: string): AddressHit[];
  householdsByBlock(key: string): number[];
  household(hh: number): HouseholdRow | undefined;
  members(hh: number): PersonRow[];
  /** Whether lookups asked so far are still to be fetched (a reader fetching in rounds); false when answered at once. */
  pending(): boolean;
}

/**
 * The record's name and street addresses, or null when it has no name part or no street address. A
 * street line with a number and no street, or a street and no number, is kept: its missing part weighs
 * nothing (match-weights.ts) and its blocking keys are those its other fields make.
 */
export function linkageQuery(request: EnrichmentRequest): LinkageQuery | null {
  const name = partialName(request.first_name, request.last_name);
  if (name.first === '' && name.last === '') return null;
  const addresses: LinkageAddress[] = [];
  for (const address of request.addresses ?? []) {
    const line = parseStreetParts(address.address ?? '');
    if (line === null) continue;
    const postal = postalOf(address) ?? '';
    const whole = line.number !== '' && line.street !== '';
    addresses.push({
      number: line.number,
      street: line.street,
      unit: normalizeUnit(line.unit),
      postal,
      city: cityKey(address.city),
      region: regionOf(address, postal === '' ? null : postal),
      key: postal === '' || !whole ? null : addressKey(line.number, line.street, postal),
    });
  }
  return addresses.length === 0 ? null : { first: name.first, last: name.last, addresses };
}

export function compareSurname(query: string, known: string): SurnameLevel {
  if (query === '') return 'missing';
  if (known === '') return 'different';
  if (query === known) return 'exact';
  // Edits are counted for names of three letters or more: every two-letter surname is two edits from
  // every other. Past two edits the count stops (Infinity): no level reads more.
  const edits = Math.min(query.length, known.length) >= 3 ? editsWithin(2, query, known) : Infinity;
  if (edits <= 1) return 'edit1';
  const similarity = jaroWinkler(query, known);
  // Double Metaphone alone is coarse (garcia and cruz share a code): a sound-alike must look alike too.
  if (similarity >= SOUND_ALIKE_FLOOR && soundAlike(query, known)) return 'phonetic';
  if (similarity >= SIMILAR_SURNAME) return 'similar';
  // Two slips in one surname (Riu for Ruiz, Ntlsor for Nelson) look like no other level: its own
  // weight says how often a household's surname is that near by chance.
  return edits === 2 ? 'edit2' : 'different';
}

export function compareGiven(query: string, known: string): GivenLevel {
  if (query === '') return 'missing';
  if (known === '') return 'different';
  if (query === known || sameFirstName(query, known)) return 'exact';
  if (query.length === 1) return known.startsWith(query) ? 'close' : 'different';
  if (jaroWinkler(query, known) >= CLOSE_GIVEN) return 'close';
  // One slip from the name or from one of its nicknames (`chck` for Chuck, who is Charles).
  for (const form of givenNameForms(known)) if (Math.min(query.length, form.length) >= 3 && editsWithin(1, query, form) <= 1) return 'close';
  return 'different';
}

export function compareStreet(query: string, known: string): StreetLevel {
  if (query === '') return 'missing';
  if (query === known) return 'exact';
  const core = streetCore(query);
  if (core !== '' && core === streetCore(known)) return 'core';
  return jaroWinkler(query, known) >= CLOSE_STREET ? 'close' : 'different';
}

export function compareCity(query: string, known: string): CityLevel {
  if (query === '') return 'missing';
  if (query === known) return 'exact';
  return known !== '' && jaroWinkler(query, known) >= CLOSE_CITY ? 'close' : 'different';
}

const weightOf = <F extends Field>(field: F, level: Comparison[F]): number => (WEIGHTS[field] as Record<string, number>)[level] ?? 0;

/** The match weight of a comparison: the sum of its fields' log2(m/u). */
export function matchWeight(comparison: Comparison): number {
  let total = 0;
  for (const field of FIELDS) total += weightOf(field, comparison[field]);
  return total;
}

interface NameComparison {
  readonly surname: SurnameLevel;
  readonly given: GivenLevel;
  readonly weight: number;
}

/** A member's name against the record's, read straight or with given name and surname swapped. */
function compareName(query: LinkageQuery, member: PersonRow): NameComparison {
  const surname = compareSurname(query.last, member.last);
  const given = compareGiven(query.first, member.first);
  const straight = { surname, given, weight: weightOf('surname', surname) + weightOf('given', given) };
  if (query.first === '' || query.last === '') return straight;
  const swappedSurname = compareSurname(query.first, member.last);
  const swappedGiven = compareGiven(query.last, member.first);
  // Swapped means swapped as written: both names exactly the other's (a nickname counts).
  if (swappedSurname === 'exact' && swappedGiven === 'exact') {
    const swapped = { surname: 'swapped' as const, given: 'swapped' as const, weight: weightOf('surname', 'swapped') + weightOf('given', 'swapped') };
    if (swapped.weight > straight.weight) return swapped;
  }
  return straight;
}

/**
 * A house number's agreement: 'near' is one digit slipped (one substitution, insertion, deletion or
 * swap of neighbours: 597 for 587, 5997, 57 or 579), which is most of how data entry gets a number
 * wrong; another number of the street is 'different', and is also what a namesake down the street has.
 */
export function compareNumber(query: string, known: string): NumberLevel {
  if (query === '') return 'missing';
  if (query === known) return 'exact';
  return editsWithin(1, query, known) === 1 ? 'near' : 'different';
}

interface AddressComparison {
  readonly number: NumberLevel;
  readonly street: StreetLevel;
  readonly postal: PostalLevel;
  readonly city: CityLevel;
  readonly unit: UnitLevel;
  readonly weight: number;
}

/**
 * The household's address that agrees best with one of the record's, or null. With `nearOnly`, an
 * address where neither the number nor the street agrees (different, or missing from the record) is
 * passed over: a slip or two leaves one of them (a street misspelled reads as close), and a household
 * where neither agrees is another address, which a
 * name alone must not decide, so it is not worth reading its members for.
 */
function compareAddress(reader: LinkageReader, query: LinkageQuery, household: HouseholdRow, nearOnly: boolean): AddressComparison | null {
  let best: AddressComparison | null = null;
  for (const key of household.address_keys.split('\n')) {
    if (key === '') continue;
    const known = addressKeyParts(key);
    for (const address of query.addresses) {
      const number = compareNumber(address.number, known.number);
      const street = compareStreet(address.street, known.street);
      const numberAgrees = number === 'exact' || number === 'near';
      const streetAgrees = street === 'exact' || street === 'core' || street === 'close';
      if (nearOnly && !numberAgrees && !streetAgrees) continue;
      const postal: PostalLevel = address.postal === '' ? 'missing' : address.postal === known.postal ? 'exact' : 'different';
      const city = compareCity(address.city, household.city);
      // The household's unit at this address (the address table has it; the key does not).
      const knownUnit = reader.householdsAtAddress(key).find((hit) => hit.hh === household.hh)?.unit ?? '';
      const unit: UnitLevel =
        address.unit !== '' && knownUnit !== ''
          ? address.unit === knownUnit
            ? 'exact'
            : 'different'
          : address.unit !== ''
            ? 'query_only'
            : knownUnit !== ''
              ? 'household_only'
              : 'none';
      const weight = weightOf('number', number) + weightOf('street', street) + weightOf('postal', postal) + weightOf('city', city) + weightOf('unit', unit);
      if (best === null || weight > best.weight) best = { number, street, postal, city, unit, weight };
    }
  }
  return best;
}

export interface Candidate {
  readonly household: HouseholdRow;
  readonly comparison: Comparison;
  readonly weight: number;
  /** The member whose name the record carries, when one alone does (given name and surname agreeing). */
  readonly person: PersonRow | null;
}

/**
 * The candidate compared, or null when the record's name contradicts it: a supplied surname that no
 * member's surname comes near (not the same, one edit, a sound-alike, a close spelling, nor the given
 * name swapped in), or, with no surname, a given name no member's comes near; or a unit that is not
 * the household's. An address alone never outweighs a name that says "someone else".
 */
export function compareCandidate(reader: LinkageReader, query: LinkageQuery, hh: number, refuseContradiction = true): Candidate | null {
  const household = reader.household(hh);
  if (household === undefined) return null;
  const address = compareAddress(reader, query, household, refuseContradiction);
  if (address === null) return null;
  // Another apartment of the building is another household, whatever the name.
  if (refuseContradiction && address.unit === 'different') return null;
  const members = reader.members(hh);
  let bestName: NameComparison | null = null;
  let named: PersonRow[] = [];
  for (const member of members) {
    const name = compareName(query, member);
    if (bestName === null || name.weight > bestName.weight) {
      bestName = name;
      named = [member];
    } else if (name.weight === bestName.weight) named.push(member);
  }
  if (bestName === null) return null;
  if (refuseContradiction && query.last !== '' && bestName.surname === 'different') return null;
  if (refuseContradiction && query.last === '' && bestName.given === 'different') return null;
  const comparison: Comparison = {
    surname: bestName.surname,
    given: bestName.given,
    number: address.number,
    street: address.street,
    postal: address.postal,
    city: address.city,
    unit: address.unit,
  };
  const personKnown = named.length === 1 && (bestName.given === 'exact' || bestName.given === 'close' || bestName.given === 'swapped');
  return { household, comparison, weight: bestName.weight + address.weight, person: personKnown ? (named[0] ?? null) : null };
}

/** Households at the record's exact address keys; with a unit, only those in it or with none known. */
export function exactCandidates(reader: LinkageReader, query: LinkageQuery): number[] {
  const found = new Set<number>();
  for (const address of query.addresses) {
    if (address.key === null) continue;
    for (const hit of reader.householdsAtAddress(address.key)) {
      if (address.unit === '' || hit.unit === '' || hit.unit === address.unit) found.add(hit.hh);
    }
  }
  return [...found];
}

/** The blocking keys a record asks (block-keys.ts): any two wrong fields leave one that agrees. */
export function queryBlockKeys(query: LinkageQuery): string[] {
  const keys = new Set<string>();
  for (const address of query.addresses) {
    for (const key of addressBlocks(address, [query.last, query.first])) keys.add(key);
    for (const key of [
      citySurnameBlock(address.city, address.region, query.last, query.first),
      cityGivenBlock(address.city, address.region, query.first, query.last),
      regionSurnameBlock(address.region, query.last, address.number),
      regionStreetBlock(address.region, query.last, address.street),
    ])
      if (key !== null) keys.add(key);
  }
  return [...keys];
}

/**
 * Households under the record's blocking keys, a key shared by too many left out, at most
 * MAX_CANDIDATES, taken from the keys with the fewest households first (a busy street's or building's
 * keys never crowd out the name's). Every one found is compared: a household whose names contradict the
 * record's is refused there (compareCandidate), so a street's other households cost a read, never an
 * answer.
 */
export function blockedCandidates(reader: LinkageReader, query: LinkageQuery): number[] {
  const found = new Set<number>();
  const blocks = queryBlockKeys(query)
    .map((key) => reader.householdsByBlock(key))
    .filter((hhs) => hhs.length <= BLOCK_LIMIT)
    .sort((a, b) => a.length - b.length);
  for (const hhs of blocks) {
    for (const hh of hhs) {
      if (found.size >= MAX_CANDIDATES) return [...found];
      found.add(hh);
    }
  }
  return [...found];
}

/** The surname agrees but the given name is no member's: a person the data does not know at the household. */
export function givenDiffers(comparison: Comparison): boolean {
  return comparison.given === 'different' && comparison.surname !== 'different';
}

/**
 * How many households in the record's postal code carry its surname's sound (up to BLOCK_LIMIT + 1),
 * counted when the best candidate's address is not the record's exactly: a common name on the same
 * street is often someone else (two Maria Garcias three doors apart), a rare one seldom is.
 */
export function crowd(reader: LinkageReader, query: LinkageQuery, best: Comparison): number {
  if (best.number === 'exact' && best.street === 'exact') return 0;
  const postal = query.addresses.find((address) => address.postal !== '')?.postal ?? '';
  const key = nameSoundBlock(postal, best.surname === 'swapped' ? query.first : query.last);
  return key === null ? 0 : reader.householdsByBlock(key).length;
}

/** What the calibration reads of the best candidate: its weight, its lead, D and the crowd (log2(1 + n)). */
export function calibrationFeatures(
  reader: LinkageReader,
  query: LinkageQuery,
  best: { comparison: Comparison; weight: number },
  second: { weight: number } | null,
) {
  return {
    weight: best.weight,
    lead: Math.min(second === null ? CALIBRATION.marginCap : best.weight - second.weight, CALIBRATION.marginCap),
    givenDiffers: givenDiffers(best.comparison) ? 1 : 0,
    crowd: Math.log2(1 + crowd(reader, query, best.comparison)),
  };
}

/**
 * A logistic probability read through the recalibration's knots (match-weights.ts, CALIBRATION.raw and
 * .right): linear between two knots, the end knot's value beyond the ends.
 */
export function recalibrated(raw: number, knots: { readonly raw: readonly number[]; readonly right: readonly number[] } = CALIBRATION): number {
  const at = knots.raw.findIndex((x) => x >= raw);
  if (at === -1) return knots.right.at(-1) ?? raw;
  if (at === 0) return knots.right[0] ?? raw;
  const x0 = knots.raw[at - 1] ?? 0;
  const x1 = knots.raw[at] ?? 1;
  const y0 = knots.right[at - 1] ?? 0;
  const y1 = knots.right[at] ?? 1;
  return x1 === x0 ? y1 : y0 + ((raw - x0) / (x1 - x0)) * (y1 - y0);
}

/**
 * The logistic's probability that the best candidate is the record's household (match-weights.ts,
 * CALIBRATION): what linkage decides by. The answer's confidence is this read through the
 * recalibration (recalibrated), fitted on the answers it decides to give.
 */
export function probability(features: ReturnType<typeof calibrationFeatures>): number {
  const z =
    CALIBRATION.intercept +
    CALIBRATION.weight * features.weight +
    CALIBRATION.margin * features.lead +
    CALIBRATION.givenDiffers * features.givenDiffers +
    CALIBRATION.crowd * features.crowd;
  return 1 / (1 + Math.exp(-z));
}

export interface Linked {
  readonly best: Candidate;
  readonly probability: number;
  /** The answer's confidence: the probability recalibrated, so that about that share of such answers is right. */
  readonly confidence: number;
  /**
   * Another candidate agrees with the record exactly as well (two Mary Gomezes in one building, the
   * unit left out): the calibration, which reads only the lead, cannot see a coin toss, so a tie is
   * never answered.
   */
  readonly tied: boolean;
}

/** The best of the candidates and how sure it is, or null when none is left. */
export function rank(reader: LinkageReader, query: LinkageQuery, candidates: readonly (Candidate | null)[]): Linked | null {
  const kept = candidates.filter((candidate) => candidate !== null).sort((a, b) => b.weight - a.weight || a.household.hh - b.household.hh);
  const [best, second] = kept;
  if (best === undefined) return null;
  const p = probability(calibrationFeatures(reader, query, best, second ?? null));
  return {
    best,
    probability: p,
    confidence: recalibrated(p),
    tied: second !== undefined && second.weight === best.weight,
  };
}

/**
 * Whether the best candidate's address is far off the record's: its house number neither the
 * household's nor one digit slipped from it, or one digit slipped on another street (785 Chestnut Rd
 * for 781 Spruce Trl is a neighbour's address, not a typo of it). A street line missing its number or
 * its street is far off unless the part it gives is the household's (the street as written or
 * misspelled, the number as written): a missing part says nothing either way, so only what is there
 * can place the door. An apartment's unit as written, on the street as written or misspelled, places
 * it besides: a namesake down the street seldom lives behind the same unit number (Apt 605 at 866
 * High Ln for Apt 605 at 597).
 */
export function farOffAddress(best: Comparison): boolean {
  if (best.unit === 'exact' && best.street !== 'different' && best.street !== 'missing') return false;
  if (best.number === 'missing') return best.street !== 'exact' && best.street !== 'close';
  if (best.street === 'missing') return best.number !== 'exact';
  return best.number === 'different' || (best.number === 'near' && best.street === 'different');
}

/**
 * A far-off address whose namesakes down the street cannot be counted: the record's surname two slips
 * off has another sound than the household's. Never answered (likelyNamesake), so the weight fitter
 * leaves such answers out as well.
 */
export function namesakesUncounted(best: Comparison): boolean {
  return farOffAddress(best) && best.surname === 'edit2';
}

/**
 * A best candidate whose address is far off (farOffAddress) for a name that CALIBRATION.farNumberCrowd
 * or more households of the postal code carry: as likely a namesake down the street (a Patricia
 * Torres at 866 S High Ln when one lives at 597) as the same person with a wrong number, which data
 * entry seldom makes. Such a record is not answered, however sure its calibrated probability: the fit
 * picks the limit below which answers with a far-off number stay as precise as the rest
 * (scripts/fit-match-weights.ts), and a number one digit slipped on another street is held to it too.
 * A far-off address with a surname two slips off is never answered: the record's surname has another
 * sound than the household's, so its crowd does not count the household's namesakes.
 */
export function likelyNamesake(reader: LinkageReader, query: LinkageQuery, best: Comparison): boolean {
  return namesakesUncounted(best) || (farOffAddress(best) && crowd(reader, query, best) >= CALIBRATION.farNumberCrowd);
}

/** Most slips a given name no member has may come with at the household's door (strangerNearHousehold). */
export const MAX_SLIPS_AT_DOOR = 2;

/**
 * A best candidate whose given name is no member's, away from the household's own door: the household
 * is answered for a given name the data does not know (most often another member of it) only at its
 * door: the number exact (or one digit off behind the unit as written), the street as written or misspelled (a misspelled street at the same number
 * is the same door; another street type, `core`, may be another street), the unit not another's, and
 * the place agreeing by its postal code or its city, the city as written or misspelled (the other may
 * be wrong: the same number on the same street of the same town is the same door). At the door the
 * surname must be the household's as written or one slip off, and at most two slips are allowed among
 * the surname, the street, the number (one digit off behind the unit) and the place (neither the
 * postal code nor the city as written): two were measured as sure as one (every such answer right on
 * the training seed and on bench:match's, none of either's negatives), and the evidence stops there,
 * so three are refused. A number one digit off (next door: even for a
 * rare surname, such answers were measured to take in one negative for every ten duplicates found), a
 * sound-alike or further-off surname, or neither the postal code nor the city agreeing (the same street
 * name may be another town's) is not the door.
 */
export function strangerNearHousehold(best: Comparison): boolean {
  if (!givenDiffers(best)) return false;
  const cityAgrees = best.city === 'exact' || best.city === 'close';
  const placeAgrees = best.postal === 'exact' || cityAgrees || (best.postal === 'missing' && best.city === 'missing');
  // A unit as written places the door whatever one digit of the number says (Apt 4 at 311 for Apt 4 at 310).
  const numberAtDoor = best.number === 'exact' || (best.number === 'near' && best.unit === 'exact');
  const atTheDoor = numberAtDoor && (best.street === 'exact' || best.street === 'close') && best.unit !== 'different' && placeAgrees;
  const slips =
    (best.surname === 'edit1' ? 1 : 0) +
    (best.street === 'close' ? 1 : 0) +
    (best.number === 'near' ? 1 : 0) +
    (best.postal === 'exact' || best.city === 'exact' ? 0 : 1);
  return !atTheDoor || !(best.surname === 'exact' || best.surname === 'edit1') || slips > MAX_SLIPS_AT_DOOR;
}

/**
 * A given name the data does not know at a household of several surnames (flatmates, a blended
 * family): the surname points at one person of it, and someone of that name the data does not know
 * there is as likely someone else. The household is answered for an unknown given name only when every
 * member carries one surname: a family of that name (which the record's surname is, or is one slip off).
 */
export function strangerInMixedHousehold(reader: LinkageReader, best: Candidate): boolean {
  if (!givenDiffers(best.comparison)) return false;
  const [first, ...rest] = reader.members(best.household.hh);
  return first !== undefined && rest.some((member) => member.last !== first.last);
}

/**
 * A given name no member has, at a household an erased member may have left: the load leaves a person
 * on the suppression list out, so her own name at her home reads as a member the data does not know,
 * and answering her household would undo her erasure. True when the snapshot marks the household (the
 * load found a member on the list) or marks none at all (loaded before it recorded them: any may be).
 */
export function erasedMemberMayBe(reader: LinkageReader, best: Candidate): boolean {
  if (!givenDiffers(best.comparison)) return false;
  return reader.householdsByBlock(ERASURES_RECORDED).length === 0 || reader.householdsByBlock(erasedMemberBlock(best.household.hh)).length > 0;
}

/**
 * Whether linkage answers its best candidate at all, however sure: not a likely namesake, not a
 * stranger near or in the household, not a given name no member has where an erased member may be.
 */
export function answerable(reader: LinkageReader, query: LinkageQuery, best: Candidate): boolean {
  return (
    !strangerNearHousehold(best.comparison) &&
    !strangerInMixedHousehold(reader, best) &&
    !erasedMemberMayBe(reader, best) &&
    !likelyNamesake(reader, query, best.comparison)
  );
}

/** A linked household is answered from this probability on. */
export const ANSWER_AT = CALIBRATION.answerAt;
/** An exact-address candidate this sure needs no blocking keys looked up. */
export const DECIDED_AT = 0.99;

/**
 * Links a record to a household: first among the households at its exact address, and, unless that
 * already decides, among everything its blocking keys find as well.
 */
export function link(reader: LinkageReader, query: LinkageQuery): Linked | null {
  const exact = exactCandidates(reader, query);
  const first = rank(
    reader,
    query,
    exact.map((hh) => compareCandidate(reader, query, hh)),
  );
  if (first !== null && !first.tied && first.probability >= DECIDED_AT && answerable(reader, query, first.best)) return first;
  // A reader fetching in rounds has not sent the exact candidates yet: ask the blocking keys only in
  // a later round, once the exact address has had its say.
  if (reader.pending()) return null;
  const all = new Set([...exact, ...blockedCandidates(reader, query)]);
  const linked = rank(
    reader,
    query,
    [...all].map((hh) => compareCandidate(reader, query, hh)),
  );
  return linked !== null && !linked.tied && linked.probability >= ANSWER_AT && answerable(reader, query, linked.best) ? linked : null;
}
