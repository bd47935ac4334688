// What an operator does with the suppression list, for the command line and the console alike: add a
// person (by e-mail, phone, or name at an address; optionally their whole household), import a list,
// check, count and remove. Adding looks the person up in the active snapshot too, so their other
// identifiers stop leading to them at once, not only from the next load.
import type { EnrichmentRequest } from '../contract/schemas.ts';
import type { Identifiers, Subject, SuppressionList } from './list.ts';
import type { SuppressionEntry, SuppressionScope, SuppressionStore } from './store.ts';

/** Who these identifiers lead to in the active snapshot (SnapshotMatcher.subjectsOf), if one is loaded. */
export type SubjectFinder = (request: EnrichmentRequest) => Promise<Subject[]>;

export interface Suppressor {
  readonly store: SuppressionStore;
  readonly list: SuppressionList;
  /** null: no snapshot is loaded (identifiers are listed; the next load finds the people). */
  readonly findSubjects: SubjectFinder | null;
}

export interface SuppressOutcome {
  /** Entries new to the list (identifiers, people and households). */
  readonly added: number;
  /** People and households the active snapshot holds under these identifiers. */
  readonly people: number;
  readonly households: number;
}

export class SuppressionInputError extends Error {
  override readonly name = 'SuppressionInputError';
}

const NOTHING_TO_GO_BY = 'nothing to go by: give a valid e-mail, a phone number, or a last name with a street address (number and street) and a ZIP code';

/** A person's identifiers from the fields a form or a list line names them by (blank fields left out). */
export function identifiersFromFields(fields: {
  readonly email?: string | undefined;
  readonly phone?: string | undefined;
  readonly firstName?: string | undefined;
  readonly lastName?: string | undefined;
  readonly address?: string | undefined;
  readonly zipcode?: string | undefined;
}): Identifiers {
  const given = (value: string | undefined) => (value === undefined || value.trim() === '' ? undefined : value);
  const email = given(fields.email);
  const phone = given(fields.phone);
  const lastName = given(fields.lastName);
  const address = given(fields.address);
  const zipcode = given(fields.zipcode);
  return {
    ...(email === undefined ? {} : { emails: [email] }),
    ...(phone === undefined ? {} : { phones: [phone] }),
    ...(lastName === undefined || address === undefined || zipcode === undefined
      ? {}
      : { nameAddress: { firstName: given(fields.firstName) ?? null, lastName, address: { address, zipcode } } }),
  };
}

/** The keyed hashes (`kind:hex`) a person's records are found by; refused when the identifiers give none. */
export function personDigests(list: SuppressionList, identifiers: Identifiers): string[] {
  const digests = list.entriesOf(identifiers, 'person').map((entry) => `${entry.kind}:${entry.value}`);
  if (digests.length === 0) throw new SuppressionInputError(NOTHING_TO_GO_BY);
  return digests;
}

/** The request that asks the snapshot about these identifiers. */
export function requestOf(identifiers: Identifiers): EnrichmentRequest {
  const nameAddress = identifiers.nameAddress;
  return {
    ...(identifiers.emails === undefined ? {} : { emails: [...identifiers.emails] }),
    ...(identifiers.phones === undefined ? {} : { phones: [...identifiers.phones] }),
    ...(nameAddress === undefined || nameAddress === null
      ? {}
      : {
          ...(nameAddress.firstName === null || nameAddress.firstName === undefined ? {} : { first_name: nameAddress.firstName }),
          ...(nameAddress.lastName === null || nameAddress.lastName === undefined ? {} : { last_name: nameAddress.lastName }),
          addresses: [
            {
              ...(nameAddress.address.address === null || nameAddress.address.address === undefined ? {} : { address: nameAddress.address.address }),
              ...(nameAddress.address.zipcode === null || nameAddress.address.zipcode === undefined ? {} : { zipcode: nameAddress.address.zipcode }),
            },
          ],
        }),
  };
}

/** The entries for one person: their identifiers' keyed hashes and the ids the active snapshot holds them under. */
export async function entriesFor(
  suppressor: Suppressor,
  identifiers: Identifiers,
  scope: SuppressionScope,
): Promise<{ entries: SuppressionEntry[]; subjects: Subject[] }> {
  const entries = suppressor.list.entriesOf(identifiers, scope);
  if (entries.length === 0) throw new SuppressionInputError(NOTHING_TO_GO_BY);
  const subjects = suppressor.findSubjects === null ? [] : await suppressor.findSubjects(requestOf(identifiers));
  for (const subject of subjects) {
    if (subject.person !== null) entries.push({ kind: 'person', value: subject.person, scope });
    if (scope === 'household' && subject.household !== null) entries.push({ kind: 'household', value: subject.household, scope });
  }
  return { entries, subjects };
}

/** Puts a person (or their household) on the list; every instance stops answering about them within seconds. */
export async function suppress(
  suppressor: Suppressor,
  identifiers: Identifiers,
  options: { readonly household: boolean; readonly actor: string },
): Promise<SuppressOutcome> {
  const { entries, subjects } = await entriesFor(suppressor, identifiers, options.household ? 'household' : 'person');
  const added = await suppressor.store.add(entries, { actor: options.actor, action: 'add' });
  await suppressor.list.refresh();
  return countsOf(added, subjects);
}

export interface CheckOutcome {
  /** One of the identifiers is on the list. */
  readonly byIdentifier: boolean;
  /** Whom they lead to in the active snapshot is on the list (by id). */
  readonly bySubject: boolean;
  readonly people: number;
}

/** Whether production would refuse to answer about the person these identifiers name (read from the database). */
export async function check(suppressor: Suppressor, identifiers: Identifiers): Promise<CheckOutcome> {
  const entries = suppressor.list.entriesOf(identifiers, 'person');
  if (entries.length === 0) throw new SuppressionInputError(NOTHING_TO_GO_BY);
  const byIdentifier = (await suppressor.store.find(entries)).length > 0;
  const subjects = suppressor.findSubjects === null ? [] : await suppressor.findSubjects(requestOf(identifiers));
  const ids = subjects.flatMap((s) => [
    ...(s.person === null ? [] : [{ kind: 'person' as const, value: s.person }]),
    ...(s.household === null ? [] : [{ kind: 'household' as const, value: s.household }]),
  ]);
  const bySubject = (await suppressor.store.find(ids)).length > 0;
  return { byIdentifier, bySubject, people: new Set(subjects.map((s) => s.person).filter((p) => p !== null)).size };
}

/**
 * An operator's correction: takes the identifiers off the list, with the people and households the
 * active snapshot holds them under (their whole household too, with `household`). Logged in the audit.
 */
export async function unsuppress(
  suppressor: Suppressor,
  identifiers: Identifiers,
  options: { readonly household: boolean; readonly actor: string },
): Promise<{ readonly removed: number }> {
  const { entries } = await entriesFor(suppressor, identifiers, options.household ? 'household' : 'person');
  const removed = await suppressor.store.remove(entries, { actor: options.actor });
  await suppressor.list.refresh();
  return { removed };
}

function countsOf(added: number, subjects: readonly Subject[]): SuppressOutcome {
  return {
    added,
    people: new Set(subjects.map((s) => s.person).filter((p) => p !== null)).size,
    households: new Set(subjects.map((s) => s.household).filter((h) => h !== null)).size,
  };
}
