// What the pipeline asks of a mapped request before spending an enrichment on it: does it carry a
// match key at all, and is it the same input (normalized) as the last time we enriched the record.
import { createHash } from 'node:crypto';
import type { EnrichmentRequest } from '../core/contract/schemas.ts';
import { normalizePostalCode, parseStreetLine } from '../core/normalize/address.ts';
import { normalizeCompany } from '../core/normalize/company.ts';
import { normalizeEmail } from '../core/normalize/email.ts';
import { normalizeName } from '../core/normalize/name.ts';
import { normalizePhone } from '../core/normalize/phone.ts';
import { normalizeRegion } from '../core/normalize/state.ts';

interface NormalizedInput {
  readonly name: string;
  readonly emails: string[];
  readonly phones: string[];
  readonly addresses: { street: string; city: string; region: string; postal: string }[];
  readonly company: string;
}

function sortedUnique(values: (string | null)[]): string[] {
  return [...new Set(values.filter((v): v is string => v !== null && v !== ''))].sort();
}

/** The request as matching sees it: formatting, case and order no longer matter. */
export function normalizeInput(request: EnrichmentRequest): NormalizedInput {
  const addresses = (request.addresses ?? []).map((a) => {
    const line = a.address == null ? null : parseStreetLine(a.address);
    return {
      street: line === null ? normalizeName(a.address ?? '') : [line.number, line.street, line.unit ?? ''].join('|'),
      city: normalizeName(a.city ?? ''),
      region: a.state == null ? '' : (normalizeRegion(a.state) ?? normalizeName(a.state)),
      postal: a.zipcode == null ? '' : (normalizePostalCode(a.zipcode) ?? normalizeName(a.zipcode)),
    };
  });
  const byKey = new Map(addresses.map((a) => [JSON.stringify(a), a]));
  return {
    name: [normalizeName(request.first_name ?? ''), normalizeName(request.last_name ?? '')].join('|'),
    emails: sortedUnique((request.emails ?? []).map((e) => normalizeEmail(e))),
    phones: sortedUnique((request.phones ?? []).map((p) => normalizePhone(p))),
    addresses: [...byKey.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, address]) => address),
    company: request.company_name == null ? '' : normalizeCompany(request.company_name),
  };
}

/**
 * A hash of the normalized input and the environment: equal hashes mean enriching again would ask
 * the same question of the same data set. The record id is not part of it.
 */
export function inputHash(request: EnrichmentRequest, environment: string): string {
  return createHash('sha256')
    .update(JSON.stringify([environment, normalizeInput(request)]))
    .digest('hex');
}

/**
 * Whether any matching rule could use the request: an e-mail, a phone, a street address with a postal
 * code or a city, or a name with an employer or a place. A name alone never matches, so enriching it
 * would spend a quota unit on a certain no-match.
 */
export function hasMatchKey(request: EnrichmentRequest): boolean {
  const input = normalizeInput(request);
  if (input.emails.length > 0 || input.phones.length > 0) return true;
  const hasPlace = input.addresses.some((a) => a.postal !== '' || (a.city !== '' && a.region !== ''));
  if (input.addresses.some((a) => a.street !== '' && (a.postal !== '' || a.city !== ''))) return true;
  const [first = '', last = ''] = input.name.split('|');
  const hasName = last !== '' && (first !== '' || last.includes(' '));
  return hasName && (input.company !== '' || hasPlace);
}
