// The lookup keys shared by a snapshot load and a production request, so both sides normalize a
// record the same way: address keys (number, street, postal code), units, e-mails, phones, names. The
// blocking keys built from them are block-keys.ts'.
import { normalizePostalCode, parseStreetLine, postalCodeFromFullAddress } from '../../normalize/address.ts';
import { normalizeCompany } from '../../normalize/company.ts';
import { normalizeEmail } from '../../normalize/email.ts';
import { personName, normalizeName } from '../../normalize/name.ts';
import { firstNameKeys } from '../../normalize/nicknames.ts';
import { normalizePhone } from '../../normalize/phone.ts';
import { normalizeRegion, regionForPostalCode } from '../../normalize/state.ts';

export interface AddressKey {
  /** `number|street|postal`: the household lookup key. */
  readonly key: string;
  /** Unit designator value (`4b`), or '' when none was given. */
  readonly unit: string;
  readonly postal: string;
}

export function normalizeUnit(unit: string | null): string {
  return unit === null ? '' : unit.toLowerCase().replace(/[^a-z0-9]/g, '');
}

export interface RawAddress {
  readonly address?: string | null | undefined;
  readonly city?: string | null | undefined;
  readonly state?: string | null | undefined;
  readonly zipcode?: string | null | undefined;
}

export function postalOf(address: RawAddress): string | null {
  const zip = address.zipcode?.trim();
  if (zip !== undefined && zip !== '') return normalizePostalCode(zip);
  return postalCodeFromFullAddress(address.address ?? '');
}

/** The key of an address with a house number, a street and a postal code; null for a partial one. */
export function addressKeyOf(address: RawAddress): AddressKey | null {
  const postal = postalOf(address);
  const street = parseStreetLine(address.address ?? '');
  if (postal === null || street === null) return null;
  return { key: addressKey(street.number, street.street, postal), unit: normalizeUnit(street.unit), postal };
}

/** Region (state or province code) of an address: as written, else inferred from its postal code. */
export function regionOf(address: RawAddress, postal: string | null): string {
  const written = address.state?.trim();
  const region = written === undefined || written === '' ? null : normalizeRegion(written);
  return region ?? (postal === null ? '' : (regionForPostalCode(postal) ?? ''));
}

export function emailKeys(emails: readonly string[]): string[] {
  return unique(emails.map(normalizeEmail));
}

export function phoneKeys(phones: readonly string[]): string[] {
  return unique(phones.map(normalizePhone));
}

export interface NameKey {
  readonly first: string;
  readonly last: string;
  readonly firstKeys: readonly string[];
}

export function nameKey(first: string | null | undefined, last: string | null | undefined): NameKey | null {
  const name = personName(first, last);
  if (name === null) return null;
  return { first: name.first, last: name.last, firstKeys: firstNameKeys(name.first) };
}

export function companyKey(company: string | null | undefined): string {
  return company === null || company === undefined ? '' : normalizeCompany(company);
}

export function cityKey(city: string | null | undefined): string {
  return city === null || city === undefined ? '' : normalizeName(city);
}

function unique(values: readonly (string | null)[]): string[] {
  const seen: string[] = [];
  for (const value of values) if (value !== null && !seen.includes(value)) seen.push(value);
  return seen;
}

const DIRECTIONS = new Set(['n', 's', 'e', 'w', 'ne', 'nw', 'se', 'sw', 'north', 'south', 'east', 'west']);

/** A street's name without directions and without its type, however spelled: `n peachtree st ne` → `peachtree`. */
export function streetCore(street: string): string {
  const words = street.split(' ').filter((word) => word !== '' && !DIRECTIONS.has(word));
  if (words.length > 1) words.pop();
  return words.join(' ');
}

/** The household lookup key of an address: `number|street|postal`. */
export function addressKey(number: string, street: string, postal: string): string {
  return `${number}|${street}|${postal}`;
}

/** The parts of an address key (`number|street|postal`). */
export function addressKeyParts(key: string): { number: string; street: string; postal: string } {
  const [number = '', street = '', postal = ''] = key.split('|');
  return { number, street, postal };
}
