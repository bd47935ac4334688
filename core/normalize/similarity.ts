// String similarity and phonetic keys for error-tolerant matching, from talisman: Jaro-
// Winkler and Damerau-Levenshtein for names and streets, Double Metaphone for names that sound alike.
import damerauLevenshtein from 'talisman/metrics/damerau-levenshtein.js';
import doubleMetaphone from 'talisman/phonetics/double-metaphone.js';
import jaroWinkler from 'talisman/metrics/jaro-winkler.js';

export { jaroWinkler };

/**
 * The Damerau-Levenshtein edits between a and b when they are at most max, else Infinity. It stops once
 * past max, which is most pairs linkage compares (a surname against another member's, a house number
 * against another's): the full count was a sixteenth of a match's time.
 */
export function editsWithin(max: number, a: string, b: string): number {
  return damerauLevenshtein.limited(max, a, b);
}

/** Codes of the names seen so far: a snapshot has a few thousand distinct surnames, met a million times. */
const CODES = new Map<string, readonly [string, string]>();
const CODES_KEPT = 50_000;

/** The Double Metaphone codes (primary, alternate) of a normalized name, or ['', ''] for none. */
export function phoneticCodes(name: string): readonly [string, string] {
  const known = CODES.get(name);
  if (known !== undefined) return known;
  // Letters only: the codes of "o brien" and "obrien" are one.
  const letters = name.replace(/[^a-z]/g, '');
  const codes: readonly [string, string] = letters === '' ? ['', ''] : doubleMetaphone(letters);
  if (CODES.size >= CODES_KEPT) CODES.clear();
  CODES.set(name, codes);
  return codes;
}

/** The primary Double Metaphone code: the key a surname is blocked under. */
export function phoneticKey(name: string): string {
  return phoneticCodes(name)[0];
}

/** Whether two names share a Double Metaphone code (primary or alternate). */
export function soundAlike(a: string, b: string): boolean {
  const [a1, a2] = phoneticCodes(a);
  const [b1, b2] = phoneticCodes(b);
  if (a1 === '' || b1 === '') return false;
  return a1 === b1 || a1 === b2 || a2 === b1 || (a2 !== '' && a2 === b2);
}
