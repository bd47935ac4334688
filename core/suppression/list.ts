// The suppression list as production reads it: every entry in memory (sets of keyed hashes and ids),
// checked on each request and on each snapshot load, and kept current by polling the list's generation
// (the newest audit entry), so an entry added on one instance or by the CLI reaches every instance
// within one poll interval.
import type { EnrichmentRequest } from '../contract/schemas.ts';
import type { SecretBox } from '../secrets/secret-box.ts';
import type { PersonRecord } from '../snapshot/format.ts';
import type { RawAddress } from '../snapshot/matching/keys.ts';
import {
  type IdentifierKind,
  type NameAndAddress,
  type PlatformHash,
  digestInput,
  platformHash,
  standardEmail,
  standardNameAddress,
  standardPhone,
} from './identifiers.ts';
import type { SuppressionEntry, SuppressionScope, SuppressionStore } from './store.ts';

/** How often an instance asks whether the list changed: the bound on "reaches every instance". */
export const SUPPRESSION_POLL_MS = 2_000;

/** The keyed hash an entry stores for a platform hash (SecretBox.keyedDigest under the server's key). */
export type KeyedDigest = (input: string) => string;

/** A person's identifiers as an operator or a list names them. */
export interface Identifiers {
  readonly emails?: readonly string[];
  readonly phones?: readonly string[];
  readonly nameAddress?: NameAndAddress | null;
}

/** Who an answer is about, by the snapshot's ids. */
export interface Subject {
  readonly person: string | null;
  readonly household: string | null;
}

export interface PersonVerdict {
  readonly suppressed: boolean;
  /** The entry that suppressed them asks for their whole household too. */
  readonly household: boolean;
}

const NOT_SUPPRESSED: PersonVerdict = { suppressed: false, household: false };

/** The list over its store, its entries keyed with the server's secret key. */
export function keyedSuppressionList(store: SuppressionStore, box: SecretBox, onError?: (error: unknown) => void): SuppressionList {
  return new SuppressionList(store, (input) => box.keyedDigest('suppression', input), onError);
}

export class SuppressionList {
  private identifiers = new Map<string, SuppressionScope>();
  /** The kinds of identifier the list holds: a check hashes only those (a platform's list is e-mails alone, say). */
  private kinds = new Set<IdentifierKind>();
  private persons = new Map<string, SuppressionScope>();
  private households = new Set<string>();
  private seen: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private refreshing: Promise<void> | null = null;

  constructor(
    private readonly store: SuppressionStore,
    private readonly keyed: KeyedDigest,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {}

  /** Entries in memory: 0 means every check returns at once. */
  get size(): number {
    return this.identifiers.size + this.persons.size + this.households.size;
  }

  /** Reads the list again when its generation moved since the last read. */
  refresh(): Promise<void> {
    this.refreshing ??= this.load().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  private async load(): Promise<void> {
    const generation = await this.store.generation();
    if (generation === this.seen) return;
    const identifiers = new Map<string, SuppressionScope>();
    const persons = new Map<string, SuppressionScope>();
    const households = new Set<string>();
    for (const entry of await this.store.all()) {
      if (entry.kind === 'person') persons.set(entry.value, entry.scope);
      else if (entry.kind === 'household') households.add(entry.value);
      else identifiers.set(`${entry.kind}:${entry.value}`, entry.scope);
    }
    this.identifiers = identifiers;
    this.kinds = new Set([...identifiers.keys()].map((key) => key.slice(0, key.indexOf(':')) as IdentifierKind));
    this.persons = persons;
    this.households = households;
    this.seen = generation;
  }

  /** Polls the generation until stop(); a failed poll is reported and tried again at the next tick. */
  start(intervalMs = SUPPRESSION_POLL_MS): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => {
      this.refresh().catch(this.onError);
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** Whether the list holds any identifier of this kind (a scan for it is worth its time). */
  holdsKind(kind: IdentifierKind): boolean {
    return this.kinds.has(kind);
  }

  /** The scope an identifier's keyed hash is listed with, if it is. */
  scopeOf(kind: IdentifierKind, digest: string): SuppressionScope | undefined {
    return this.identifiers.get(`${kind}:${digest}`);
  }

  /** The keyed hash stored for a platform hash of this kind. */
  digest(kind: IdentifierKind, hash: PlatformHash): string {
    return this.keyed(digestInput(kind, hash));
  }

  /** The entries that name these identifiers (one a value; several for a first name with nicknames). */
  entriesOf(identifiers: Identifiers, scope: SuppressionScope): SuppressionEntry[] {
    return this.digestsOf(identifiers).map(({ kind, value }) => ({ kind, value, scope }));
  }

  private digestsOf(identifiers: Identifiers, only?: ReadonlySet<IdentifierKind>): { kind: IdentifierKind; value: string }[] {
    const out: { kind: IdentifierKind; value: string }[] = [];
    if (only !== undefined) {
      identifiers = {
        ...(only.has('email') && identifiers.emails !== undefined ? { emails: identifiers.emails } : {}),
        ...(only.has('phone') && identifiers.phones !== undefined ? { phones: identifiers.phones } : {}),
        ...(only.has('name_address') && identifiers.nameAddress !== undefined ? { nameAddress: identifiers.nameAddress } : {}),
      };
    }
    for (const email of identifiers.emails ?? []) {
      const standard = standardEmail(email);
      if (standard !== null) out.push({ kind: 'email', value: this.digest('email', platformHash(standard)) });
    }
    for (const phone of identifiers.phones ?? []) {
      const standard = standardPhone(phone);
      if (standard !== null) out.push({ kind: 'phone', value: this.digest('phone', platformHash(standard)) });
    }
    if (identifiers.nameAddress !== undefined && identifiers.nameAddress !== null) {
      for (const standard of standardNameAddress(identifiers.nameAddress)) {
        out.push({ kind: 'name_address', value: this.digest('name_address', platformHash(standard)) });
      }
    }
    return out;
  }

  /** Whether any of these identifiers is on the list, and with which scope. */
  identifiersVerdict(identifiers: Identifiers): PersonVerdict {
    if (this.identifiers.size === 0) return NOT_SUPPRESSED;
    let verdict = NOT_SUPPRESSED;
    for (const { kind, value } of this.digestsOf(identifiers, this.kinds)) {
      const scope = this.identifiers.get(`${kind}:${value}`);
      if (scope === 'household') return { suppressed: true, household: true };
      if (scope === 'person') verdict = { suppressed: true, household: false };
    }
    return verdict;
  }

  /** The keyed hashes (`kind:hex`) of every identifier a request carries: what a record we enrich is found by. */
  requestDigests(request: EnrichmentRequest): string[] {
    const addresses: readonly RawAddress[] = request.addresses ?? [];
    const all = [
      ...this.digestsOf({ emails: request.emails ?? [], phones: request.phones ?? [] }),
      ...addresses.flatMap((address) => this.digestsOf({ nameAddress: { firstName: request.first_name, lastName: request.last_name, address } })),
    ];
    return [...new Set(all.map(({ kind, value }) => `${kind}:${value}`))];
  }

  /** A request that names a suppressed person by one of their identifiers. */
  requestSuppressed(request: EnrichmentRequest): boolean {
    if (this.identifiers.size === 0) return false;
    const addresses: readonly RawAddress[] = this.kinds.has('name_address') ? (request.addresses ?? []) : [];
    return (
      this.identifiersVerdict({ emails: request.emails ?? [], phones: request.phones ?? [] }).suppressed ||
      addresses.some((address) => this.identifiersVerdict({ nameAddress: { firstName: request.first_name, lastName: request.last_name, address } }).suppressed)
    );
  }

  /** An answer about a suppressed person, or about anyone in a suppressed household. */
  subjectSuppressed(subject: Subject): boolean {
    return (subject.person !== null && this.persons.has(subject.person)) || (subject.household !== null && this.households.has(subject.household));
  }

  householdSuppressed(householdId: string): boolean {
    return this.households.has(householdId);
  }

  /** A snapshot's person line: suppressed by their id, their household's, or one of their identifiers at one of its addresses. */
  personVerdict(person: PersonRecord, householdAddresses: readonly RawAddress[]): PersonVerdict {
    if (person.windfall_id !== null && this.households.has(person.windfall_id)) return { suppressed: true, household: true };
    const byId = this.persons.get(person.person_id);
    if (byId !== undefined) return { suppressed: true, household: byId === 'household' };
    if (this.identifiers.size === 0) return NOT_SUPPRESSED;
    const contact = this.identifiersVerdict({ emails: person.emails, phones: person.phones });
    if (contact.household) return contact;
    let verdict = contact;
    for (const address of householdAddresses) {
      const byName = this.identifiersVerdict({ nameAddress: { firstName: person.first_name, lastName: person.last_name, address } });
      if (byName.household) return byName;
      if (byName.suppressed) verdict = byName;
    }
    return verdict;
  }
}
