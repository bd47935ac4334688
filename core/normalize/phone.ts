// Phone normalization: any common formatting to E.164, +1 (United States) assumed without a country code.
// Plain North American numbers take a scan-only fast path; everything else goes through libphonenumber-js.
import { parsePhoneNumberFromString } from 'libphonenumber-js';

/** libphonenumber-js refuses longer input; longer strings go to it so that it keeps refusing them. */
const MAX_FAST_PATH_LENGTH = 250;

const PLUS = 43;
const DIGIT_0 = 48;
const DIGIT_1 = 49;
const DIGIT_9 = 57;

/**
 * Digit codes of the number being scanned. Shared across calls to keep the fast path free of
 * per-call allocations; safe because `nanpFastPath` is synchronous and never re-entered.
 */
const digitCodes = new Uint8Array(11);

/**
 * E.164 form of a phone number, or null when no number can be read from it.
 * `(555) 300-0001`, `+1 555 300 0001` and `555.300.0001` all give `+15553000001`. Validity against
 * the numbering plan is not required: fictitious 555 numbers must still compare equal.
 */
export function normalizePhone(raw: string): string | null {
  const fast = nanpFastPath(raw);
  if (fast !== undefined) return fast;
  return normalizeWithLibphonenumber(raw);
}

/** The libphonenumber-js reading of a number: the reference the fast path must agree with. */
export function normalizeWithLibphonenumber(raw: string): string | null {
  const parsed = parsePhoneNumberFromString(raw.trim(), { defaultCountry: 'US', extract: false });
  if (parsed === undefined || !parsed.isPossible()) return null;
  return parsed.number;
}

/** ASCII whitespace that `String.prototype.trim` removes (tab, line feed, vertical tab, form feed, carriage return, space). */
function isAsciiSpace(code: number): boolean {
  return code === 32 || (code >= 9 && code <= 13);
}

/** Separators libphonenumber-js accepts anywhere inside a number: space ( ) - . / */
function isSeparator(code: number): boolean {
  return code === 32 || code === 40 || code === 41 || code === 45 || code === 46 || code === 47;
}

/**
 * E.164 for a plain North American number, or undefined when the input is not one the fast path
 * is sure about and libphonenumber-js must decide. Accepted: digits with space ( ) - . / between
 * them, an optional leading `+`, surrounding ASCII whitespace; then 10 digits (`+1` prepended) or
 * 11 digits starting with 1 (with or without the `+`). Ten digits starting with 011 are left to
 * libphonenumber-js, which reads 011 as the US international dialling prefix.
 */
function nanpFastPath(raw: string): string | undefined {
  if (raw.length > MAX_FAST_PATH_LENGTH) return undefined;
  let start = 0;
  let end = raw.length;
  while (start < end && isAsciiSpace(raw.charCodeAt(start))) start += 1;
  while (end > start && isAsciiSpace(raw.charCodeAt(end - 1))) end -= 1;
  const hasPlus = start < end && raw.charCodeAt(start) === PLUS;
  if (hasPlus) start += 1;
  let count = 0;
  for (let i = start; i < end; i += 1) {
    const code = raw.charCodeAt(i);
    if (code >= DIGIT_0 && code <= DIGIT_9) {
      if (count === 11) return undefined;
      digitCodes[count] = code;
      count += 1;
    } else if (!isSeparator(code)) {
      return undefined;
    }
  }
  if (count === 11 && digitAt(0) === DIGIT_1) {
    return String.fromCharCode(
      PLUS,
      digitAt(0),
      digitAt(1),
      digitAt(2),
      digitAt(3),
      digitAt(4),
      digitAt(5),
      digitAt(6),
      digitAt(7),
      digitAt(8),
      digitAt(9),
      digitAt(10),
    );
  }
  if (count === 10 && !hasPlus && !(digitAt(0) === DIGIT_0 && digitAt(1) === DIGIT_1 && digitAt(2) === DIGIT_1)) {
    return String.fromCharCode(
      PLUS,
      DIGIT_1,
      digitAt(0),
      digitAt(1),
      digitAt(2),
      digitAt(3),
      digitAt(4),
      digitAt(5),
      digitAt(6),
      digitAt(7),
      digitAt(8),
      digitAt(9),
    );
  }
  return undefined;
}

/** Code of the i-th scanned digit; every index read has been written in the same call. */
function digitAt(i: number): number {
  return digitCodes[i] ?? DIGIT_0;
}
