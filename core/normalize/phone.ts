// Phone normalization: any common formatting to E.164, +1 (United States) assumed without a country code.
import { parsePhoneNumberFromString } from 'libphonenumber-js';

/**
 * E.164 form of a phone number, or null when no number can be read from it.
 * `(555) 300-0001`, `+1 555 300 0001` and `555.300.0001` all give `+15553000001`. Validity against
 * the numbering plan is not required: fictitious 555 numbers must still compare equal.
 */
export function normalizePhone(raw: string): string | null {
  const parsed = parsePhoneNumberFromString(raw.trim(), { defaultCountry: 'US', extract: false });
  if (parsed === undefined || !parsed.isPossible()) return null;
  return parsed.number;
}
