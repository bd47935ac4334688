// The identifiers a person is suppressed by, standardized the way deletion platforms hash them, so a
// list of hashes from one (California's DROP, say) and a value typed by an operator land on the same
// entry. Standardization, then SHA-256, then Base64 (44 characters):
//   e-mail  trimmed and lowercased; dots, plus signs and the rest kept ("a.b+x@Example.org " → "a.b+x@example.org")
//   phone   digits only, the last 10 kept ("+1 (415) 555-9317" → "4155559317")
//   name and address (ours; no platform distributes it): surname|first-name key|number|street|postal,
//           as production matching normalizes them (one entry per nickname key of the first name)
// What is stored is never that hash (a dictionary reverses an e-mail's SHA-256 in seconds) but a keyed
// hash of it: HMAC-SHA256 under a key derived from the server's secret key (SecretBox.keyedDigest).
import { createHash } from 'node:crypto';
import { addressKeyOf, nameKey, type RawAddress } from '../snapshot/matching/keys.ts';
import { normalizeEmail } from '../normalize/email.ts';

export const IDENTIFIER_KINDS = ['email', 'phone', 'name_address'] as const;
export type IdentifierKind = (typeof IDENTIFIER_KINDS)[number];

/** A standardized identifier's SHA-256 in Base64, as a deletion platform's list carries it. */
export type PlatformHash = string;

export function standardEmail(raw: string): string | null {
  return normalizeEmail(raw);
}

/** Digits only, the last ten kept; null for fewer than seven digits (no phone number). */
export function standardPhone(raw: string): string | null {
  const digits = raw.replace(/\D/g, '');
  if (digits.length < 7) return null;
  return digits.slice(-10);
}

export interface NameAndAddress {
  readonly firstName: string | null | undefined;
  readonly lastName: string | null | undefined;
  readonly address: RawAddress;
}

/** One standardized form a nickname key of the first name: empty when the name or the address is partial. */
export function standardNameAddress(value: NameAndAddress): string[] {
  const name = nameKey(value.firstName, value.lastName);
  const address = addressKeyOf(value.address);
  if (name === null || address === null || name.last === '') return [];
  return name.firstKeys.map((first) => `${name.last}|${first}|${address.key}`);
}

/** SHA-256 of the standardized value, Base64: what a deletion platform distributes. */
export function platformHash(standardized: string): PlatformHash {
  return createHash('sha256').update(standardized, 'utf8').digest('base64');
}

/**
 * A hash as a list carries it, in Base64 (44 characters, DROP's form) or hex (64): the Base64 form,
 * or null when it is neither.
 */
export function parsePlatformHash(text: string): PlatformHash | null {
  const value = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex').toString('base64');
  if (/^[A-Za-z0-9+/]{43}=$/.test(value)) {
    const bytes = Buffer.from(value, 'base64');
    return bytes.length === 32 && bytes.toString('base64') === value ? value : null;
  }
  return null;
}

/** What the keyed digest is taken over: the kind and the platform hash, so an e-mail never collides with a phone. */
export function digestInput(kind: IdentifierKind, hash: PlatformHash): string {
  return `${kind}:${hash}`;
}
