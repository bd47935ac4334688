// Blocking keys: what a snapshot files each household under besides its exact address, so a record with
// one wrong field still finds its household among the candidates. Every key format is built here only:
// a load writes the keys (loader.ts), a request asks for the same ones built from its own fields
// (linkage.ts), and the PostgreSQL lookup statement tells the kinds apart by their prefixes.
import { phoneticKey } from '../../normalize/similarity.ts';
import { addressKeyParts, streetCore } from './keys.ts';

/**
 * The kinds of key, each one its keys' prefix (`kind|…`). One wrong field leaves at least one that agrees:
 *   pn|postal|number             — the street misspelled, or its suffix;
 *   ps|postal|street             — the house number wrong;
 *   np|postal|name sound         — number or street wrong, and swapped names (asked with the given name);
 *   cn|city|region|number|core   — the postal code wrong (the street without its type or directions).
 */
export const BLOCK = { postalNumber: 'pn', postalStreet: 'ps', nameSound: 'np', cityStreet: 'cn' } as const;
export type BlockKind = (typeof BLOCK)[keyof typeof BLOCK];

/** Every kind, in the order a request asks an address's keys. */
export const BLOCK_KINDS: readonly BlockKind[] = [BLOCK.postalNumber, BLOCK.postalStreet, BLOCK.nameSound, BLOCK.cityStreet];

/**
 * Kinds whose households linkage keeps only when the name's sound also finds them (a street's other
 * households are never read); a reader fetches rows and members up front for the other kinds only.
 */
export const NARROWED_KINDS: ReadonlySet<BlockKind> = new Set([BLOCK.postalNumber, BLOCK.postalStreet]);

/** What every key of a kind starts with. */
export function blockPrefix(kind: BlockKind): string {
  return `${kind}|`;
}

/** The kind of a key, or null for a string no builder here made. */
export function blockKindOf(key: string): BlockKind | null {
  const kind = key.slice(0, key.indexOf('|'));
  return BLOCK_KINDS.find((known) => known === kind) ?? null;
}

/** Whether linkage keeps a key's households only when the name's sound also finds them. */
export function isNarrowedBlock(key: string): boolean {
  const kind = blockKindOf(key);
  return kind !== null && NARROWED_KINDS.has(kind);
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

/** The house number and street's core in a city, or null without the city or region. */
export function cityStreetBlock(city: string, region: string, number: string, street: string): string | null {
  return city === '' || region === '' ? null : `${BLOCK.cityStreet}|${city}|${region}|${number}|${streetCore(street)}`;
}

/** An address as its blocking keys read it: normalized parts, '' where unknown. */
export interface BlockAddress {
  readonly number: string;
  readonly street: string;
  readonly postal: string;
  readonly city: string;
  readonly region: string;
}

/**
 * The blocking keys of one address, with the sound of each name given in its postal code: the same
 * builder at load (no names: a person's key is added with the person) and at query.
 */
export function addressBlocks(address: BlockAddress, names: readonly string[]): string[] {
  const keys: string[] = [];
  if (address.postal !== '') {
    keys.push(postalNumberBlock(address.postal, address.number), postalStreetBlock(address.postal, address.street));
    for (const name of names) {
      const key = nameSoundBlock(address.postal, name);
      if (key !== null) keys.push(key);
    }
  }
  const city = cityStreetBlock(address.city, address.region, address.number, address.street);
  if (city !== null) keys.push(city);
  return keys;
}

/** The blocking keys of one household: each of its address keys' within the household's place. */
export function householdBlockKeys(addressKeys: readonly string[], city: string, region: string): string[] {
  const keys = new Set<string>();
  for (const key of addressKeys) for (const block of addressBlocks({ ...addressKeyParts(key), city, region }, [])) keys.add(block);
  return [...keys];
}
