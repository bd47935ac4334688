// The port between production matching and where snapshot data lives: a SQLite file per snapshot
// (the default, core/snapshot/storage/sqlite-snapshot.ts) or a PostgreSQL schema per snapshot when
// DATABASE_URL names PostgreSQL (core/snapshot/storage/postgres-snapshot.ts). Loads write through a
// SnapshotWriter; the matcher reads through a SnapshotReader.

export interface PersonRow {
  readonly p: number;
  /** The data team's id: never answered, but what the suppression list names a person by. */
  readonly person_id: string;
  readonly hh: number | null;
  readonly first: string;
  readonly last: string;
  readonly company: string;
  /** Whether the person has a career record; the record itself is read only when a match returns it. */
  readonly has_career: number;
}

export interface HouseholdRow {
  readonly hh: number;
  readonly windfall_id: string;
  readonly postal: string;
  readonly region: string;
  readonly city: string;
  /** The household's address keys, one per line: read with the row, not by a second query. */
  readonly address_keys: string;
}

export interface AddressHit {
  readonly hh: number;
  readonly unit: string;
}

/**
 * Where the people a name lookup finds must be to matter to the rules (matcher.ts, resolveByName): at
 * the supplied employer, or living in one of the supplied postal codes or places (city and region).
 */
export interface NameScope {
  /** The normalized employer, or '' when none was supplied. */
  readonly company: string;
  readonly postals: readonly string[];
  readonly places: readonly { readonly city: string; readonly region: string }[];
}

export interface NameHits {
  /**
   * Every person with the name key within the scope, by p (a reader may return others besides); none
   * when the name is too common, which no one within it can change.
   */
  readonly people: PersonRow[];
  /** More than NAME_LOOKUP_LIMIT people carry the name key, within the scope or not. */
  readonly tooCommon: boolean;
}

/** Lookups production matching needs; every one is an indexed query. */
export interface SnapshotReader {
  peopleByEmail(email: string): PersonRow[];
  peopleByPhone(phone: string): PersonRow[];
  peopleByName(last: string, firstKey: string, scope: NameScope): NameHits;
  householdsAtAddress(key: string): AddressHit[];
  /**
   * The households filed under a blocking key (block-keys.ts), by hh: at most BLOCK_LIMIT + 1, so that more
   * than BLOCK_LIMIT says the key is too common to narrow anything.
   */
  householdsByBlock(key: string): number[];
  /** What the rules compare (place, address keys); the record itself is read by householdData. */
  household(hh: number): HouseholdRow | undefined;
  /** The household record as JSON (addresses left out), or null: read only for the household returned. */
  householdData(hh: number): string | null;
  members(hh: number): PersonRow[];
  /** The person's career record as JSON, or null. */
  career(p: number): string | null;
  close(): void;
}

/** Most households one blocking key may offer: a key shared by more is too common to narrow anything. */
export const BLOCK_LIMIT = 200;

/** Most people one name lookup returns; a name shared by more is too common to decide anything. */
export const NAME_LOOKUP_LIMIT = 10_000;

/**
 * A reader for one request that answers from what it has fetched so far: a lookup it has not fetched
 * yet answers "nothing" and is noted. The matcher runs its rules, fetches everything noted in one
 * round trip, and runs them again, until a run needed nothing new: that run's answer rests on real
 * data only, so it is the one a reader answering at once would give.
 */
export interface FetchingReader extends Omit<SnapshotReader, 'close'> {
  /** Whether a lookup since the last fetch asked for something not fetched yet. */
  lacking(): boolean;
  /** Fetches everything lacking (and what the rules will likely ask next) in one round trip. */
  fetchLacking(): Promise<void>;
}

/** An open snapshot: lookups answered at once (SQLite), or a fetching reader per request (PostgreSQL). */
export type OpenedSnapshot =
  { readonly kind: 'immediate'; readonly reader: SnapshotReader; close(): void } | { readonly kind: 'fetched'; requestReader(): FetchingReader; close(): void };

export interface NewHousehold {
  readonly windfallId: string;
  /** The household record as JSON, addresses left out. */
  readonly data: string;
  readonly postal: string;
  readonly region: string;
  readonly city: string;
  /** The household's blocking keys (block-keys.ts, householdBlockKeys). */
  readonly blocks: readonly string[];
}

export interface NewPerson {
  readonly personId: string;
  readonly hh: number | null;
  readonly first: string;
  readonly last: string;
  readonly company: string;
  /** The career record as JSON, or null. */
  readonly career: string | null;
}

export interface PersonKeys {
  readonly emails: readonly string[];
  readonly phones: readonly string[];
  readonly firstKeys: readonly string[];
  /** Blocking keys that file the person's household under them too (block-keys.ts, nameSoundBlock). */
  readonly blocks: readonly string[];
  /** Their household's place, which their name rows carry for a lookup's scope; null without a household. */
  readonly place: { readonly postal: string; readonly city: string; readonly region: string } | null;
}

/** What a load writes into: rows in, indexes built at the end. Numbers households and people from 1. */
export interface SnapshotWriter {
  addHousehold(household: NewHousehold, addresses: readonly { key: string; unit: string }[]): number;
  addPerson(person: NewPerson, keys: PersonKeys): void;
  /** Files a household (or NO_HOUSEHOLD) under one more blocking key, after its rows (block-keys.ts, erasedMemberBlock). */
  addBlock(key: string, hh: number): void;
  /** null while the writer takes more; else resolves when it does again (it is sending what it has). */
  backpressure(): Promise<void> | null;
  /** Writes the rest, builds the indexes and statistics, stores `meta`: ready to be opened. */
  finish(meta: Record<string, string>): Promise<void>;
  /** Stops writing; the caller removes what was written. */
  abort(): Promise<void>;
}

/** One e-mail or phone of a snapshot's person, as the load stored it, with whose it is. */
export interface ContactRow {
  readonly p: number;
  readonly personId: string;
  /** The person's household (its windfall id), or null. */
  readonly householdId: string | null;
  /** The normalized e-mail, or the phone in E.164. */
  readonly value: string;
}

/** A scan of a snapshot's people's e-mails or phones: the suppression list's way to find a hashed entry's person. */
export type ContactKind = 'email' | 'phone';

/** Where snapshots live. A location is a file name in the snapshots folder, or a schema name. */
export interface SnapshotStorage {
  /** The highest person number of a loaded snapshot (people are numbered from 1), 0 for none. */
  lastPerson(location: string): Promise<number>;
  /** The e-mails or phones of people numbered after `afterP` up to `toP`, with their ids, by person. */
  contacts(location: string, kind: ContactKind, afterP: number, toP: number): Promise<ContactRow[]>;
  /** For messages: "the folder …" or "PostgreSQL". */
  readonly description: string;
  /** The location a snapshot with this registry id is written to. */
  locationFor(id: string): string;
  create(location: string): Promise<SnapshotWriter>;
  /** Opens a loaded snapshot; throws when it is missing or unreadable. */
  open(location: string): Promise<OpenedSnapshot>;
  /** Removes a snapshot's data; nothing when it is already gone. */
  remove(location: string): Promise<void>;
  /** Every location this storage holds a snapshot at, loaded or partial. */
  present(): Promise<string[]>;
  /**
   * Calls `onChange` when the active snapshot may have changed, as soon as the database says so
   * (PostgreSQL's NOTIFY); never, where there is no such signal (SQLite: the registry is polled).
   * Returns how to stop.
   */
  watch(onChange: () => void): () => void;
  close(): Promise<void>;
}
