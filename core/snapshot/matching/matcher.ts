// Production identity resolution over one data snapshot: finds the person and the household a messy
// CRM record means, or nothing, and scores how sure it is. The rules are documented in docs/operator-guide.md (Matching rules).
import type { Career, EnrichmentRequest, Household } from '../../contract/schemas.ts';
import type { ProductionMatch, ProductionMatcher } from '../../enrich/production-matcher.ts';
import { withinOneEdit } from '../../normalize/name.ts';
import { sameFirstName } from '../../normalize/nicknames.ts';
import { type AddressKey, type NameKey, addressKeyOf, cityKey, companyKey, emailKeys, nameKey, phoneKeys, postalOf, regionOf } from './keys.ts';
import { link, linkageQuery } from './linkage.ts';
import { type FetchingReader, type HouseholdRow, type NameHits, type NameScope, type OpenedSnapshot, type PersonRow, type SnapshotReader } from '../port.ts';

/** How the record was found; each has a base confidence (docs/operator-guide.md: "Matching rules"). */
export type Evidence = 'email' | 'phone_and_name' | 'address_and_name' | 'address' | 'name_and_company' | 'name_and_place';

/**
 * The bases are set by hand, except name and place's, which is measured: the one rule the generator's
 * errors reach besides linkage (a record whose street address linkage could not link, or that has
 * none). On bench:match's 1M snapshot (2026-11-28) its answers were 98.0 % right (347 of 354 over the
 * clean, typo and multi-error sets; 95.1 % of the 143 with a street address, all 211 without); at 0.5
 * they were the one decile far from calibrated. The others are answered on data that cannot make them
 * wrong (every e-mail, phone and address answer there is right), so their calibration is not measured,
 * and they stay below it.
 */
export const BASE_CONFIDENCE: Record<Evidence, number> = {
  email: 0.9,
  phone_and_name: 0.85,
  address_and_name: 0.85,
  address: 0.75,
  name_and_company: 0.6,
  name_and_place: 0.95,
};
/** Evidence that already rests on the name: an agreeing name earns no bonus on top. */
const NAME_IS_EVIDENCE: ReadonlySet<Evidence> = new Set(['phone_and_name', 'address_and_name', 'name_and_company', 'name_and_place']);
/** Added for each further supplied field that agrees with the match. */
export const AGREEMENT_BONUS = 0.03;
/** Taken off when a supplied field points elsewhere (an address of another household, another name). */
export const CONFLICT_PENALTY = 0.25;
/** Taken off a career found through another household member's e-mail (the name picked the member). */
export const HOUSEHOLD_MEMBER_PENALTY = 0.1;
/** Taken off a career when the supplied company is not the person's employer. */
export const COMPANY_CONFLICT_PENALTY = 0.1;

interface RequestKeys {
  readonly emails: string[];
  readonly phones: string[];
  readonly name: NameKey | null;
  readonly addresses: AddressKey[];
  readonly postals: Set<string>;
  readonly places: { city: string; region: string }[];
  readonly company: string;
}

function requestKeys(request: EnrichmentRequest): RequestKeys {
  const addresses: AddressKey[] = [];
  const postals = new Set<string>();
  const places: { city: string; region: string }[] = [];
  for (const address of request.addresses ?? []) {
    const key = addressKeyOf(address);
    if (key !== null) addresses.push(key);
    const postal = postalOf(address);
    if (postal !== null) postals.add(postal);
    const city = cityKey(address.city);
    const region = regionOf(address, postal);
    if (city !== '' && region !== '') places.push({ city, region });
  }
  return {
    emails: emailKeys(request.emails ?? []),
    phones: phoneKeys(request.phones ?? []),
    name: nameKey(request.first_name, request.last_name),
    addresses,
    postals,
    places,
    company: companyKey(request.company_name),
  };
}

type NameAgreement = 'full' | 'typo' | 'last_only' | 'none';

function nameAgreement(person: PersonRow, name: NameKey): NameAgreement {
  const lastExact = person.last === name.last;
  const lastClose = lastExact || withinOneEdit(person.last, name.last);
  const firstSame = sameFirstName(person.first, name.first);
  const firstClose = firstSame || withinOneEdit(person.first, name.first);
  if (lastExact && firstSame) return 'full';
  if (lastClose && firstClose) return 'typo';
  if (lastClose) return 'last_only';
  return 'none';
}

const agrees = (agreement: NameAgreement): boolean => agreement === 'full' || agreement === 'typo';

interface Resolution {
  readonly household: HouseholdRow | null;
  readonly person: PersonRow | null;
  readonly evidence: Evidence;
  /** The e-mail's owner does not carry the supplied name, and no one in their household does. */
  readonly nameConflict?: boolean;
  /** The person is the e-mail owner's household member who carries the name, not the owner. */
  readonly personByHousehold?: boolean;
  /** Error-tolerant linkage's calibrated probability (linkage.ts): the confidence itself, not a base. */
  readonly probability?: number;
}

/**
 * The snapshot as one request sees it: each lookup made once per request, however many rules ask.
 * Lookups are indexed queries of a few microseconds, but a request asks the same ones repeatedly.
 */
class RequestView {
  private readonly households = new Map<number, HouseholdRow | undefined>();
  private readonly memberLists = new Map<number, PersonRow[]>();
  private readonly byEmail = new Map<string, PersonRow[]>();
  private readonly byPhone = new Map<string, PersonRow[]>();
  private readonly atAddress = new Map<string, ReturnType<SnapshotReader['householdsAtAddress']>>();
  private readonly byBlock = new Map<string, number[]>();

  constructor(private readonly reader: Omit<SnapshotReader, 'close'>) {}

  peopleByEmail(email: string): PersonRow[] {
    return memo(this.byEmail, email, () => this.reader.peopleByEmail(email));
  }

  peopleByPhone(phone: string): PersonRow[] {
    return memo(this.byPhone, phone, () => this.reader.peopleByPhone(phone));
  }

  peopleByName(last: string, firstKey: string, scope: NameScope): NameHits {
    return this.reader.peopleByName(last, firstKey, scope);
  }

  householdsAtAddress(key: string): ReturnType<SnapshotReader['householdsAtAddress']> {
    return memo(this.atAddress, key, () => this.reader.householdsAtAddress(key));
  }

  householdsByBlock(key: string): number[] {
    return memo(this.byBlock, key, () => this.reader.householdsByBlock(key));
  }

  pending(): boolean {
    const reader: Partial<FetchingReader> = this.reader;
    return reader.lacking?.() ?? false;
  }

  household(hh: number): HouseholdRow | undefined {
    return memo(this.households, hh, () => this.reader.household(hh));
  }

  householdAddressKeys(hh: number): string[] {
    return this.household(hh)?.address_keys.split('\n') ?? [];
  }

  members(hh: number): PersonRow[] {
    return memo(this.memberLists, hh, () => this.reader.members(hh));
  }

  career(p: number): string | null {
    return this.reader.career(p);
  }

  householdData(hh: number): string | null {
    return this.reader.householdData(hh);
  }
}

function memo<K, V>(cache: Map<K, V>, key: K, load: () => V): V {
  if (cache.has(key)) return cache.get(key) as V; // has() just said so
  const value = load();
  cache.set(key, value);
  return value;
}

/**
 * The most rounds of lookups one request may take on a fetched snapshot. Each round fetches all the
 * previous one lacked; the rules ask at most four levels deep (keys, households, members, careers).
 */
export const MAX_FETCH_ROUNDS = 8;

export class SnapshotMatcher implements ProductionMatcher {
  constructor(
    private readonly snapshot: OpenedSnapshot,
    readonly dataVersion: string,
  ) {}

  async match(request: EnrichmentRequest, options: { readonly career: boolean }): Promise<ProductionMatch> {
    const snapshot = this.snapshot;
    // Synchronous from first lookup to last, so a snapshot swap can never land in the middle of it.
    if (snapshot.kind === 'immediate') return this.matchWith(snapshot.reader, request, options);
    // Fetched: every round reads the snapshot this matcher was made for, whatever is active meanwhile.
    const reader = snapshot.requestReader();
    for (let round = 1; ; round += 1) {
      const result = this.matchWith(reader, request, options);
      if (!reader.lacking()) return result;
      if (round === MAX_FETCH_ROUNDS) throw new Error(`production matching still lacked lookups after ${MAX_FETCH_ROUNDS} rounds`);
      await reader.fetchLacking();
    }
  }

  /**
   * Who these identifiers lead to in this snapshot, by the snapshot's ids: every owner of the e-mails
   * and phones, and whoever the name at the addresses is matched to (the suppression list's way in).
   */
  async subjectsOf(request: EnrichmentRequest): Promise<{ person: string | null; household: string | null }[]> {
    const keys = requestKeys(request);
    const owners = (reader: Omit<SnapshotReader, 'close'>) => {
      const rows = [...keys.emails.flatMap((email) => reader.peopleByEmail(email)), ...keys.phones.flatMap((phone) => reader.peopleByPhone(phone))];
      return rows.map((row) => ({ person: row.person_id, household: row.hh === null ? null : (reader.household(row.hh)?.windfall_id ?? null) }));
    };
    const found: { person: string | null; household: string | null }[] = [...(await this.read(owners))];
    if (request.last_name !== undefined && (request.addresses?.length ?? 0) > 0) {
      const { subject } = await this.match({ first_name: request.first_name, last_name: request.last_name, addresses: request.addresses }, { career: true });
      if (subject !== undefined && (subject.person !== null || subject.household !== null)) found.push(subject);
    }
    return found;
  }

  /** `run` on this snapshot, with as many fetch rounds as it needs on a fetched one. */
  private async read<T>(run: (reader: Omit<SnapshotReader, 'close'>) => T): Promise<T> {
    const snapshot = this.snapshot;
    if (snapshot.kind === 'immediate') return run(snapshot.reader);
    const reader = snapshot.requestReader();
    for (let round = 1; ; round += 1) {
      const result = run(reader);
      if (!reader.lacking()) return result;
      if (round === MAX_FETCH_ROUNDS) throw new Error(`a snapshot read still lacked lookups after ${MAX_FETCH_ROUNDS} rounds`);
      await reader.fetchLacking();
    }
  }

  /** The match on a snapshot answered at once (SQLite); the tests' way in. */
  matchNow(request: EnrichmentRequest, options: { readonly career: boolean }): ProductionMatch {
    if (this.snapshot.kind !== 'immediate') throw new Error('matchNow needs a snapshot answered at once: use match()');
    return this.matchWith(this.snapshot.reader, request, options);
  }

  private matchWith(reader: Omit<SnapshotReader, 'close'>, request: EnrichmentRequest, options: { readonly career: boolean }): ProductionMatch {
    const keys = requestKeys(request);
    const view = new RequestView(reader);
    const byPerson = this.resolvePerson(view, keys);
    // An e-mail whose owner's household carries none of the supplied name is weak evidence: the
    // address or name rules, when they resolve, describe the record better.
    const resolution =
      byPerson !== null && byPerson.nameConflict !== true
        ? byPerson
        : (this.resolveByAddress(view, keys, request) ?? this.resolveByName(view, keys) ?? byPerson);
    if (resolution === null) return { household: null, career: null };
    return {
      household: resolution.household === null ? null : this.householdResult(view, resolution, resolution.household, keys),
      career: options.career && resolution.person?.has_career ? this.careerResult(view, resolution, resolution.person, keys) : null,
      subject: { person: resolution.person?.person_id ?? null, household: resolution.household?.windfall_id ?? null },
    };
  }

  /** Person-level evidence first: an e-mail, or a phone whose owner has the supplied name. */
  private resolvePerson(reader: RequestView, keys: RequestKeys): Resolution | null {
    const scored = new Map<number, { row: PersonRow; score: number; email: boolean }>();
    const add = (row: PersonRow, points: number, email: boolean) => {
      const entry = scored.get(row.p);
      if (entry === undefined) scored.set(row.p, { row, score: points, email });
      else scored.set(row.p, { row, score: entry.score + points, email: entry.email || email });
    };
    const requestAddressKeys = new Set(keys.addresses.map((a) => a.key));
    const livesAtRequestAddress = (row: PersonRow) =>
      row.hh !== null && requestAddressKeys.size > 0 && reader.householdAddressKeys(row.hh).some((key) => requestAddressKeys.has(key));
    for (const email of keys.emails) for (const row of reader.peopleByEmail(email)) add(row, 4, true);
    // One e-mail owner who carries the name (or no name to check) is decided: phones would only add
    // to a score nothing competes with.
    const [only, ...others] = scored.values();
    const decided = only !== undefined && others.length === 0 && (keys.name === null || agrees(nameAgreement(only.row, keys.name)));
    // A phone names a person when the name agrees, or, with no usable name, when the phone's owner
    // lives at the supplied address (a shared landline is told apart by the name, not the address).
    for (const phone of decided ? [] : keys.phones) {
      for (const row of reader.peopleByPhone(phone)) {
        const byName = keys.name !== null && agrees(nameAgreement(row, keys.name));
        if (byName || (keys.name === null && livesAtRequestAddress(row))) add(row, 2, false);
      }
    }
    if (scored.size === 0) return null;

    const ranked = [...scored.values()]
      .map((entry) => {
        let score = entry.score;
        if (keys.name !== null) {
          const agreement = nameAgreement(entry.row, keys.name);
          score += agreement === 'full' ? 1 : agreement === 'typo' ? 0.5 : agreement === 'none' ? -1 : 0;
        }
        if (keys.company !== '' && entry.row.company === keys.company) score += 1;
        if (entry.row.hh !== null && requestAddressKeys.size > 0) {
          if (reader.householdAddressKeys(entry.row.hh).some((key) => requestAddressKeys.has(key))) score += 1.5;
        }
        return { ...entry, score };
      })
      .sort((a, b) => b.score - a.score || a.row.p - b.row.p);
    const [best, second] = ranked;
    if (best === undefined) return null;
    if (second !== undefined && second.score === best.score) {
      // Two people fit equally well: a household they share is still known, the person is not.
      if (best.row.hh !== null && best.row.hh === second.row.hh) {
        return { household: reader.household(best.row.hh) ?? null, person: null, evidence: best.email ? 'email' : 'phone_and_name' };
      }
      return null;
    }
    let person: PersonRow | null = best.row;
    let nameConflict = false;
    const evidence: Evidence = best.email ? 'email' : 'phone_and_name';
    // An e-mail whose owner is not the person named: the household is still theirs (a shared family
    // address, say), but the career belongs to whichever member has the name, if one does.
    if (keys.name !== null && !agrees(nameAgreement(best.row, keys.name))) {
      const name = keys.name;
      const named = best.row.hh === null ? [] : reader.members(best.row.hh).filter((member) => agrees(nameAgreement(member, name)));
      // One member carries the name: theirs is the career. Several: the household is right, the
      // person unknown. None: the e-mail is someone else's, so no career, and a conflict.
      person = named.length === 1 ? (named[0] ?? null) : null;
      nameConflict = named.length === 0;
    }
    const household = best.row.hh === null ? null : (reader.household(best.row.hh) ?? null);
    return { household, person, evidence, nameConflict, personByHousehold: person !== null && person.p !== best.row.p };
  }

  /**
   * A household at the supplied address. With a name (or part of one), error-tolerant linkage decides
   * (linkage.ts); without, the household alone at the exact address (number, street, postal code).
   */
  private resolveByAddress(reader: RequestView, keys: RequestKeys, request: EnrichmentRequest): Resolution | null {
    const query = linkageQuery(request);
    if (query !== null) {
      const linked = link(reader, query);
      if (linked === null) return null;
      return { household: linked.best.household, person: linked.best.person, evidence: 'address_and_name', probability: linked.confidence };
    }
    const households = new Map<number, boolean>(); // hh → unit agrees
    const units = new Map<number, Set<string>>(); // hh → its units at the address
    for (const address of keys.addresses) {
      for (const hit of reader.householdsAtAddress(address.key)) {
        const unitAgrees = address.unit !== '' && hit.unit === address.unit;
        households.set(hit.hh, (households.get(hit.hh) ?? false) || unitAgrees);
        const known = units.get(hit.hh) ?? new Set<string>();
        if (hit.unit !== '') known.add(hit.unit);
        units.set(hit.hh, known);
      }
    }
    if (households.size === 0) return null;
    let candidates = [...households.keys()];
    const byUnit = candidates.filter((hh) => households.get(hh) === true);
    const requestUnits = new Set(keys.addresses.map((a) => a.unit).filter((unit) => unit !== ''));
    if (byUnit.length > 0) candidates = byUnit;
    else if (requestUnits.size > 0) {
      // A unit we do not know at this address is another apartment, not the one we know.
      candidates = candidates.filter((hh) => !units.get(hh)?.size);
    }

    if (keys.name === null) {
      if (candidates.length !== 1 || candidates[0] === undefined) return null;
      // No name to pick the member by; the employer can, when exactly one member works there.
      const atCompany = keys.company === '' ? [] : reader.members(candidates[0]).filter((m) => m.company === keys.company);
      const person = atCompany.length === 1 ? (atCompany[0] ?? null) : null;
      return { household: reader.household(candidates[0]) ?? null, person, evidence: 'address' };
    }
    const name = keys.name;
    // With a name, the household must have a member who shares the surname: a new resident at an old
    // address is not the household we know there.
    const fitting = candidates
      .map((hh) => ({ hh, members: reader.members(hh).map((m) => ({ m, agreement: nameAgreement(m, name) })) }))
      .filter(({ members }) => members.some(({ agreement }) => agreement === 'full' || agreement === 'typo' || agreement === 'last_only'));
    if (fitting.length !== 1 || fitting[0] === undefined) return null;
    const named = fitting[0].members.filter(({ agreement }) => agrees(agreement));
    const person = named.length === 1 ? (named[0]?.m ?? null) : null;
    return { household: reader.household(fitting[0].hh) ?? null, person, evidence: 'address_and_name' };
  }

  /**
   * A name alone never matches. A name with the employer, or with the place (postal code, or city and
   * state), matches when exactly one person in the snapshot fits.
   */
  private resolveByName(reader: RequestView, keys: RequestKeys): Resolution | null {
    const name = keys.name;
    if (name === null || (keys.company === '' && keys.postals.size === 0 && keys.places.length === 0)) return null;
    const people = new Map<number, PersonRow>();
    // Only people at the employer or in one of the places can be the one that fits below: a reader
    // may leave the others out (PostgreSQL does, instead of sending every John Smith).
    const scope: NameScope = { company: keys.company, postals: [...keys.postals], places: keys.places };
    for (const firstKey of name.firstKeys) {
      const hits = reader.peopleByName(name.last, firstKey, scope);
      // Past the lookup limit the name is too common for "exactly one fits" to be known.
      if (hits.tooCommon) return null;
      for (const row of hits.people) people.set(row.p, row);
    }
    const all = [...people.values()].filter((row) => sameFirstName(row.first, name.first) && this.postalFits(reader, row, keys));

    if (keys.company !== '') {
      const atCompany = all.filter((row) => row.company === keys.company);
      if (atCompany.length === 1 && atCompany[0] !== undefined) {
        const person = atCompany[0];
        const household = person.hh === null ? null : (reader.household(person.hh) ?? null);
        return { household, person, evidence: 'name_and_company' };
      }
    }
    const placed = all
      .map((row) => ({ row, household: row.hh === null ? undefined : reader.household(row.hh) }))
      .filter(({ household }) => household !== undefined && this.placeAgrees(household, keys));
    if (placed.length === 1 && placed[0]?.household !== undefined) {
      return { household: placed[0].household, person: placed[0].row, evidence: 'name_and_place' };
    }
    return null;
  }

  /** A supplied postal code or street address that is not the person's home rules the person out. */
  private postalFits(reader: RequestView, row: PersonRow, keys: RequestKeys): boolean {
    if (keys.postals.size === 0) return true;
    const household = row.hh === null ? undefined : reader.household(row.hh);
    if (household === undefined || !keys.postals.has(household.postal)) return false;
    if (keys.addresses.length === 0) return true;
    const own = new Set(reader.householdAddressKeys(household.hh));
    // The same building is not the same home when the units differ.
    const unitFits = (address: AddressKey) => {
      if (address.unit === '') return true;
      const known = reader.householdsAtAddress(address.key).find((hit) => hit.hh === household.hh)?.unit ?? '';
      return known === '' || known === address.unit;
    };
    return keys.addresses.some((address) => own.has(address.key) && unitFits(address));
  }

  private placeAgrees(household: HouseholdRow, keys: RequestKeys): boolean {
    if (keys.postals.has(household.postal)) return true;
    return keys.places.some((place) => place.city === household.city && place.region === household.region);
  }

  /** Supplied fields that agree with the matched household, and whether any points elsewhere. */
  private householdAgreement(reader: RequestView, household: HouseholdRow, resolution: Resolution, keys: RequestKeys): { agree: number; conflict: boolean } {
    let agree = 0;
    let conflict = false;
    const own = new Set(reader.householdAddressKeys(household.hh));
    if (keys.addresses.length > 0 && resolution.evidence !== 'address' && resolution.evidence !== 'address_and_name') {
      if (keys.addresses.some((a) => own.has(a.key))) agree += 1;
      else if (keys.addresses.some((a) => reader.householdsAtAddress(a.key).length > 0)) conflict = true;
    }
    const placeIsEvidence = resolution.evidence === 'name_and_place' || resolution.evidence === 'address' || resolution.evidence === 'address_and_name';
    if (!placeIsEvidence && (keys.postals.has(household.postal) || keys.places.some((p) => p.city === household.city && p.region === household.region))) {
      agree += 1;
    }
    const person = resolution.person ?? undefined;
    if (person !== undefined && keys.name !== null && !NAME_IS_EVIDENCE.has(resolution.evidence) && nameAgreement(person, keys.name) === 'full') agree += 1;
    if (resolution.nameConflict === true) conflict = true;
    if (person !== undefined && resolution.evidence !== 'email' && keys.emails.length > 0) {
      if (keys.emails.some((email) => reader.peopleByEmail(email).some((row) => row.p === person.p))) agree += 1;
    }
    if (person !== undefined && resolution.evidence !== 'phone_and_name' && keys.phones.length > 0) {
      if (keys.phones.some((phone) => reader.peopleByPhone(phone).some((row) => row.p === person.p))) agree += 1;
    }
    return { agree, conflict };
  }

  private householdResult(reader: RequestView, resolution: Resolution, household: HouseholdRow, keys: RequestKeys): Household {
    const { agree, conflict } = this.householdAgreement(reader, household, resolution, keys);
    const confidence =
      resolution.probability === undefined
        ? score(BASE_CONFIDENCE[resolution.evidence], agree, conflict ? CONFLICT_PENALTY : 0)
        : score(resolution.probability, 0, 0);
    // null only in a fetching reader's early round (the record not fetched yet), whose answer is
    // thrown away: the household's row and record are one row of the snapshot.
    const data = reader.householdData(household.hh) ?? JSON.stringify({ windfall_id: household.windfall_id });
    const { windfall_id, ...fields }: Omit<Household, 'confidence'> = JSON.parse(data);
    return { windfall_id, confidence, ...fields };
  }

  private careerResult(reader: RequestView, resolution: Resolution, person: PersonRow, keys: RequestKeys): Career | null {
    const json = reader.career(person.p);
    if (json === null) return null;
    const career: Omit<Career, 'confidence'> = JSON.parse(json);
    let agree = 0;
    let penalty = 0;
    // Linkage's probability is calibrated as it is: only a company that is not the employer lowers it.
    if (resolution.probability !== undefined) {
      const conflict = keys.company !== '' && person.company !== keys.company ? COMPANY_CONFLICT_PENALTY : 0;
      return { confidence: score(resolution.probability, 0, conflict), ...career };
    }
    if (keys.company !== '' && resolution.evidence !== 'name_and_company') {
      if (person.company === keys.company) agree += 1;
      else penalty += COMPANY_CONFLICT_PENALTY;
    }
    if (keys.name !== null && !NAME_IS_EVIDENCE.has(resolution.evidence) && nameAgreement(person, keys.name) === 'full') agree += 1;
    if (resolution.personByHousehold === true) penalty += HOUSEHOLD_MEMBER_PENALTY;
    if (person.hh !== null && keys.addresses.length > 0 && resolution.evidence !== 'address_and_name') {
      const own = new Set(reader.householdAddressKeys(person.hh));
      if (keys.addresses.some((a) => own.has(a.key))) agree += 1;
    }
    return { confidence: score(BASE_CONFIDENCE[resolution.evidence], agree, penalty), ...career };
  }
}

/** Base plus a bonus per agreeing field, less penalties, kept in [0.1, 1.0] and rounded to 2 decimals. */
export function score(base: number, agreeing: number, penalty: number): number {
  const raw = base + agreeing * AGREEMENT_BONUS - penalty;
  return Math.round(Math.min(1, Math.max(0.1, raw)) * 100) / 100;
}
