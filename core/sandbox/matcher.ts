// The sandbox's three matchers over the 15 personas: e-mail; house number and street with zipcode;
// phone with first and last name. Deterministic: the same request always resolves to the same persona.
import type { EnrichmentRequest } from '../contract/schemas.ts';
import { normalizePostalCode, parseStreetLine, postalCodeFromFullAddress } from '../normalize/address.ts';
import { normalizeEmail } from '../normalize/email.ts';
import { personName } from '../normalize/name.ts';
import { normalizePhone } from '../normalize/phone.ts';
import { PERSONAS, type Persona } from './personas.ts';

export type Matcher = 'email' | 'address' | 'phone_and_name';

export interface PersonaMatch {
  readonly persona: Persona;
  readonly matchedBy: Matcher;
}

function addressKey(number: string, street: string, postalCode: string): string {
  return `${number}|${street}|${postalCode}`;
}

function phoneNameKey(phone: string, first: string, last: string): string {
  return `${phone}|${first}|${last}`;
}

function buildIndexes(personas: readonly Persona[]) {
  const byEmail = new Map<string, Persona>();
  const byAddress = new Map<string, Persona>();
  const byPhoneName = new Map<string, Persona>();
  for (const persona of personas) {
    const email = normalizeEmail(persona.email);
    const street = parseStreetLine(persona.address);
    const zip = normalizePostalCode(persona.zipcode);
    const phone = normalizePhone(persona.phone);
    const name = personName(persona.first_name, persona.last_name);
    if (email === null || street === null || zip === null || phone === null || name === null) {
      throw new Error(`sandbox persona ${persona.n} has an identifier its own matcher cannot read`);
    }
    byEmail.set(email, persona);
    byAddress.set(addressKey(street.number, street.street, zip), persona);
    for (const other of persona.alsoAt ?? []) {
      const otherStreet = parseStreetLine(other.address);
      const otherZip = normalizePostalCode(other.zipcode);
      if (otherStreet === null || otherZip === null) {
        throw new Error(`sandbox persona ${persona.n} has a further address its own matcher cannot read`);
      }
      byAddress.set(addressKey(otherStreet.number, otherStreet.street, otherZip), persona);
    }
    byPhoneName.set(phoneNameKey(phone, name.first, name.last), persona);
  }
  return { byEmail, byAddress, byPhoneName };
}

const indexes = buildIndexes(PERSONAS);

/**
 * The persona a request resolves to, or null. Matchers are tried in a fixed order (e-mail, then full
 * address, then phone and name) and entries in request order, so a request naming two personas
 * always gets the same one. Name alone, and an address without a zipcode, never match.
 */
export function matchPersona(request: EnrichmentRequest): PersonaMatch | null {
  for (const raw of request.emails ?? []) {
    const email = normalizeEmail(raw);
    const persona = email === null ? undefined : indexes.byEmail.get(email);
    if (persona !== undefined) return { persona, matchedBy: 'email' };
  }
  for (const address of request.addresses ?? []) {
    const line = address.address ?? '';
    const street = parseStreetLine(line);
    const zip =
      address.zipcode !== null && address.zipcode !== undefined && address.zipcode.trim() !== ''
        ? normalizePostalCode(address.zipcode)
        : postalCodeFromFullAddress(line);
    if (street === null || zip === null) continue;
    const persona = indexes.byAddress.get(addressKey(street.number, street.street, zip));
    if (persona !== undefined) return { persona, matchedBy: 'address' };
  }
  const name = personName(request.first_name, request.last_name);
  if (name !== null) {
    for (const raw of request.phones ?? []) {
      const phone = normalizePhone(raw);
      const persona = phone === null ? undefined : indexes.byPhoneName.get(phoneNameKey(phone, name.first, name.last));
      if (persona !== undefined) return { persona, matchedBy: 'phone_and_name' };
    }
  }
  return null;
}
