// Enrichment requests derived from generated people, with the noise real CRM records carry (case,
// spacing, nicknames, phone formats, street variants, units, zip+4, missing fields, a few typos).
import type { QueryLine } from '../../format.ts';
import { type AddressBook, type AddressParts, DIRECTIONAL_WORDS, type PhoneStyle, ZIPS, formatPhone } from './identifiers.ts';
import { NICKNAMES } from './names.ts';
import { STATE_NAMES } from './places.ts';
import type { Rng } from './random.ts';

/** What a query is built from: a person of the data, or a made-up person who is certainly not in it. */
export interface Subject {
  /** Null for a person who is not in the data. */
  readonly personId: string | null;
  readonly windfallId: string | null;
  readonly linkedinUrl: string | null;
  readonly first: string;
  readonly last: string;
  readonly emails: readonly string[];
  /** As written in the data, in any of its formats. */
  readonly phones: readonly string[];
  /** The household's addresses, primary first; empty without a household. */
  readonly addresses: readonly AddressParts[];
  readonly company: { readonly name: string; readonly shortName: string } | null;
}

type TypoTarget = 'first_name' | 'last_name' | 'street' | 'email';

/** Which parts of the subject a request carries. */
interface Plan {
  name: boolean;
  emails: string[];
  phones: string[];
  address: AddressParts | null;
  zip: boolean;
  company: boolean;
  /** Name with city and state only: no strong identifier at all. */
  weak: boolean;
  typo: TypoTarget | null;
}

const PHONE_STYLES: readonly PhoneStyle[] = ['paren', 'dash', 'digits', 'plus-spaced', 'dots', 'e164'];
/** A personal address: letters, then the counter that makes it unique. */
const COUNTED_EMAIL = /^([^0-9@]+)(\d+)@(.+)$/;

/** One swapped or dropped letter, never the first: `Jennifer` → `Jenifer`, `Jennfier`. */
export function typo(rng: Rng, word: string): string {
  if (word.length < 4) return word;
  const i = 1 + rng.int(word.length - 2);
  const a = word[i] ?? '';
  const b = word[i + 1] ?? '';
  if (rng.chance(0.5) && a !== b) return `${word.slice(0, i)}${b}${a}${word.slice(i + 2)}`;
  return `${word.slice(0, i)}${word.slice(i + 1)}`;
}

function strong(plan: Plan, broken: TypoTarget | null): boolean {
  const nameOk = plan.name && broken !== 'first_name' && broken !== 'last_name';
  const emailOk = plan.emails.length > 1 || (plan.emails.length === 1 && broken !== 'email');
  const phoneOk = plan.phones.length > 0 && nameOk;
  const addressOk = plan.address !== null && plan.zip && broken !== 'street';
  return emailOk || phoneOk || addressOk;
}

function plan(rng: Rng, s: Subject, inData: boolean, book: AddressBook): Plan {
  const p: Plan = {
    name: rng.chance(0.95),
    emails: s.emails.length > 0 && rng.chance(0.55) ? [rng.pick(s.emails)] : [],
    phones: s.phones.length > 0 && rng.chance(0.55) ? [rng.pick(s.phones)] : [],
    address:
      s.addresses.length > 0 && rng.chance(0.65) ? (s.addresses.length > 1 && rng.chance(0.15) ? rng.pick(s.addresses) : (s.addresses[0] ?? null)) : null,
    zip: !rng.chance(0.04),
    company: s.company !== null && rng.chance(0.4),
    weak: false,
    typo: null,
  };
  if (p.emails.length === 1 && s.emails.length > 1 && rng.chance(0.15)) p.emails = [...s.emails];
  if (inData && s.addresses.length > 0 && rng.chance(0.02)) {
    return { name: true, emails: [], phones: [], address: s.addresses[0] ?? null, zip: false, company: false, weak: true, typo: null };
  }
  if (!strong(p, null)) {
    if (s.emails.length > 0 && (s.phones.length === 0 || rng.chance(0.5))) p.emails = [rng.pick(s.emails)];
    else if (s.phones.length > 0 && (s.addresses.length === 0 || rng.chance(0.5))) {
      p.phones = [rng.pick(s.phones)];
      p.name = true;
    } else {
      p.address = s.addresses[0] ?? null;
      p.zip = true;
    }
  }
  // 6.5% tried; some have no field a typo could go in without losing every strong identifier: ~5% get one.
  if (rng.chance(0.065)) {
    const targets: TypoTarget[] = [];
    if (p.name) targets.push('first_name', 'last_name');
    if (p.emails.some((e) => COUNTED_EMAIL.test(e))) targets.push('email');
    if (p.address !== null && /^[A-Za-z]{4,}$/.test(book.street(p.address.zip, p.address.slot).name)) targets.push('street');
    p.typo = rng.shuffle(targets).find((t) => strong(p, t)) ?? null;
  }
  return p;
}

const caseNoise = (rng: Rng, text: string): string => (rng.chance(0.5) ? text.toUpperCase() : text.toLowerCase());

function nameField(rng: Rng, value: string, noise: Set<string>): string {
  let out = value;
  if (rng.chance(0.12)) {
    out = caseNoise(rng, out);
    noise.add('case');
  }
  if (rng.chance(0.06)) {
    out = rng.chance(0.5) ? ` ${out}  ` : `${out} `;
    noise.add('whitespace');
  }
  return out;
}

function emailField(rng: Rng, email: string, withTypo: boolean, noise: Set<string>): string {
  let out = email;
  const counted = COUNTED_EMAIL.exec(email);
  if (withTypo && counted !== null) {
    const [, letters = '', digits = '', domain = ''] = counted;
    const broken = typo(rng, letters);
    if (broken !== letters) {
      out = `${broken}${digits}@${domain}`;
      noise.add('typo:email');
    }
  }
  if (rng.chance(0.1)) {
    out = rng.chance(0.5) ? out.toUpperCase() : `${out.slice(0, 1).toUpperCase()}${out.slice(1)}`;
    noise.add('case');
  }
  if (rng.chance(0.04)) {
    out = ` ${out} `;
    noise.add('whitespace');
  }
  return out;
}

function addressField(rng: Rng, book: AddressBook, parts: AddressParts, p: Plan, noise: Set<string>): Record<string, string | null> {
  const entry = ZIPS[parts.zip];
  if (entry === undefined) throw new Error('zip out of range');
  const { place } = entry;
  if (p.weak) return { city: place.city, state: rng.chance(0.3) ? (STATE_NAMES[place.state] ?? place.state) : place.state };
  const street = book.street(parts.zip, parts.slot);
  let suffix = street.suffix;
  if (rng.chance(0.3) && street.suffixFull !== street.suffix) {
    suffix = street.suffixFull;
    noise.add('street-suffix');
  }
  let { prefix, postfix } = street;
  if ((prefix !== '' || postfix !== '') && rng.chance(0.5)) {
    prefix = DIRECTIONAL_WORDS[prefix] ?? prefix;
    postfix = DIRECTIONAL_WORDS[postfix] ?? postfix;
    noise.add('directional');
  }
  let name = street.name;
  if (p.typo === 'street') {
    name = typo(rng, name);
    noise.add('typo:street');
  }
  let line = [String(parts.number), prefix, name, suffix, postfix].filter((w) => w !== '').join(' ');
  if (parts.unit !== null) {
    const r = rng.next();
    if (r < 0.25) noise.add('unit-dropped');
    else if (r < 0.5) {
      line += rng.pick([` #${parts.unit}`, ` Unit ${parts.unit}`, ` Apt. ${parts.unit}`, `, Apt ${parts.unit}`]);
      noise.add('unit-format');
    } else line += ` Apt ${parts.unit}`;
  } else if (rng.chance(0.04)) {
    line += ` Apt ${rng.between(1, 9)}${rng.pick(['', 'A', 'B'])}`;
    noise.add('unit-added');
  }
  if (rng.chance(0.08)) {
    line = caseNoise(rng, line);
    noise.add('case');
  }
  if (rng.chance(0.05)) {
    line = ` ${line.replace(' ', '  ')} `;
    noise.add('whitespace');
  }
  let zipcode: string | null = entry.zip;
  if (!p.zip) {
    zipcode = null;
    noise.add('zip-omitted');
  } else if (place.country === 'US' && rng.chance(0.15)) {
    zipcode = `${entry.zip}-${String(rng.between(1, 9999)).padStart(4, '0')}`;
    noise.add('zip+4');
  } else if (place.country === 'CA' && rng.chance(0.3)) {
    zipcode = rng.chance(0.5) ? entry.zip.replace(' ', '') : entry.zip.toLowerCase();
    noise.add('postal-format');
  }
  if (zipcode !== null && rng.chance(0.05)) {
    noise.add('one-line-address');
    return { address: `${line.trim()}, ${place.city}, ${place.state} ${zipcode}` };
  }
  let state: string | null = place.state;
  const s = rng.next();
  if (s < 0.2) {
    state = STATE_NAMES[place.state] ?? place.state;
    noise.add('state-full');
  } else if (s < 0.32) {
    state = null;
    noise.add('state-omitted');
  }
  let city: string | null = place.city;
  if (rng.chance(0.08)) {
    city = null;
    noise.add('city-omitted');
  }
  return { address: line, city, state, zipcode };
}

function companyField(rng: Rng, company: { readonly name: string; readonly shortName: string }, noise: Set<string>): string {
  let out = company.name;
  if (company.name !== company.shortName && rng.chance(0.5)) {
    out = company.shortName;
    noise.add('company-suffix-dropped');
  } else if (company.name === company.shortName && rng.chance(0.2)) {
    out = `${company.name}${rng.pick([' Inc.', ', Inc.', ' Inc', ' LLC'])}`;
    noise.add('company-suffix-added');
  }
  if (rng.chance(0.08)) {
    out = caseNoise(rng, out);
    noise.add('case');
  }
  return out;
}

/** A request with its expected answer. `noise` lists what was done to the values, for reading misses. */
export function buildQuery(rng: Rng, id: string, s: Subject, book: AddressBook): QueryLine {
  const inData = s.personId !== null;
  const p = plan(rng, s, inData, book);
  const noise = new Set<string>();
  const request: Record<string, unknown> = { id };
  if (p.name) {
    let first = s.first;
    const nicknames = NICKNAMES[first];
    if (nicknames !== undefined && rng.chance(0.16)) {
      first = rng.pick(nicknames);
      noise.add('nickname');
    }
    let last = s.last;
    if (p.typo === 'first_name' || p.typo === 'last_name') {
      const before = `${first} ${last}`;
      if (p.typo === 'first_name') first = typo(rng, first);
      else last = typo(rng, last);
      if (`${first} ${last}` !== before) noise.add(`typo:${p.typo}`);
    }
    if (rng.chance(0.03) && !last.includes(' ')) {
      request.first_name = rng.chance(0.5) ? '' : null;
      request.last_name = nameField(rng, `${first} ${last}`, noise);
      noise.add('full-name-in-last-name');
    } else {
      request.first_name = nameField(rng, first, noise);
      request.last_name = nameField(rng, last, noise);
    }
  } else if (rng.chance(0.1)) request.first_name = null;
  if (p.emails.length > 0) request.emails = p.emails.map((e, i) => emailField(rng, e, i === 0 && p.typo === 'email', noise));
  else if (rng.chance(0.1)) request.emails = rng.chance(0.5) ? [] : null;
  if (p.phones.length > 0) {
    request.phones = p.phones.map((stored) => {
      const written = formatPhone(stored.replace(/\D/g, '').slice(-10), rng.pick(PHONE_STYLES));
      if (written !== stored) noise.add('phone-format');
      return written;
    });
  }
  if (p.address !== null) request.addresses = [addressField(rng, book, p.address, p, noise)];
  if (p.weak) noise.add('name-city-state-only');
  if (p.company && s.company !== null) request.company_name = companyField(rng, s.company, noise);
  return {
    request,
    expected: { windfall_id: s.windfallId, person_id: s.personId, linkedin_url: s.linkedinUrl },
    noise: [...noise].sort(),
  };
}
