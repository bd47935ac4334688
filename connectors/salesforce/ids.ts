// Salesforce ids: the 15-character case-sensitive form, the 18-character case-safe form with its
// checksum, key prefixes, and zod schemas that give ids back in their canonical 18-character form.
import { z } from 'zod';

/** Key prefixes that are the same in every org. */
export const SALESFORCE_KEY_PREFIXES = { Organization: '00D', Contact: '003', Lead: '00Q', Account: '001' } as const;

/** A Salesforce id of either length, unanchored: for patterns that find one inside other text. */
export const SALESFORCE_ID_PATTERN = '[0-9A-Za-z]{15}(?:[0-9A-Za-z]{3})?';
/** A whole string that has the shape of a Salesforce id (15 or 18 characters, no checksum check). */
export const SALESFORCE_ID_SHAPE = new RegExp(`^${SALESFORCE_ID_PATTERN}$`);
const ID_SHAPE = SALESFORCE_ID_SHAPE;
// The checksum alphabet: 5 bits per character, A-Z then 0-5.
const CHECKSUM_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ012345';
const isUpper = (c: string): boolean => c >= 'A' && c <= 'Z';

/**
 * The 3-character suffix of an 18-character id (what the CASESAFEID formula appends): for each
 * 5-character chunk of the 15-character id, bit i is set when character i of the chunk is an
 * upper-case letter, and the 5-bit value indexes `A-Z0-5`. Checked against real captures, where
 * `OrganizationId` is 18 characters and `EnterpriseUrl` ends with the same org's 15.
 */
function checksum(id15: string): string {
  let suffix = '';
  for (let chunk = 0; chunk < 3; chunk++) {
    let bits = 0;
    for (let i = 0; i < 5; i++) if (isUpper(id15.charAt(chunk * 5 + i))) bits |= 1 << i;
    suffix += CHECKSUM_ALPHABET.charAt(bits);
  }
  return suffix;
}

/**
 * The canonical 18-character form of a Salesforce id, or null if `id` is not one.
 *
 * A 15-character id is case-sensitive: its checksum is computed. An 18-character id is
 * case-insensitive, so its first 15 characters take the case its suffix encodes (`00DD0000000GZCREAA`
 * is `00Dd0000000gzcrEAA`); it is refused when the suffix marks a digit as upper-case.
 */
export function toSalesforceId18(id: string): string | null {
  if (!ID_SHAPE.test(id)) return null;
  if (id.length === 15) return id + checksum(id);
  const suffix = id.slice(15).toUpperCase();
  let repaired = '';
  for (let chunk = 0; chunk < 3; chunk++) {
    const bits = CHECKSUM_ALPHABET.indexOf(suffix.charAt(chunk));
    if (bits < 0) return null;
    for (let i = 0; i < 5; i++) {
      const c = id.charAt(chunk * 5 + i);
      const upper = (bits & (1 << i)) !== 0;
      if (upper && c >= '0' && c <= '9') return null;
      repaired += upper ? c.toUpperCase() : c.toLowerCase();
    }
  }
  return repaired + suffix;
}

/** Whether two ids (15 or 18 characters, any mix) name the same record: case counts only where it should. */
export function sameSalesforceId(a: string, b: string): boolean {
  const x = toSalesforceId18(a);
  return x !== null && x === toSalesforceId18(b);
}

/** A Salesforce id, 15 or 18 characters, optionally with a fixed key prefix, as its canonical 18 characters. */
function salesforceIdSchema(keyPrefix?: string, what = 'Salesforce id') {
  return z.string().transform((value, ctx) => {
    const id = toSalesforceId18(value);
    if (id === null || (keyPrefix !== undefined && !id.startsWith(keyPrefix))) {
      const expected = keyPrefix === undefined ? '15 or 18 letters and digits, valid checksum' : `${keyPrefix}…, 15 or 18 characters`;
      ctx.addIssue({ code: 'custom', message: `not a valid ${what} (${expected})`, params: { salesforceId: true } });
      return z.NEVER;
    }
    return id;
  });
}

/** A Salesforce id, 15 or 18 characters, given back in its canonical 18-character form. */
export const SalesforceIdSchema = salesforceIdSchema();

/** An organization id (key prefix 00D), canonical 18 characters. */
export const OrganizationIdSchema = salesforceIdSchema(SALESFORCE_KEY_PREFIXES.Organization, 'organization id');

/**
 * The record id must carry the key prefix of its object, for the objects whose prefix is fixed:
 * a Contact notification naming a Lead id is forged or broken.
 */
export function recordIdMatchesObject(object: string, recordId: string): boolean {
  if (object === 'Contact') return recordId.startsWith(SALESFORCE_KEY_PREFIXES.Contact);
  if (object === 'Lead') return recordId.startsWith(SALESFORCE_KEY_PREFIXES.Lead);
  if (object === 'Account') return recordId.startsWith(SALESFORCE_KEY_PREFIXES.Account);
  return true;
}
