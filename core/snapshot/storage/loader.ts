// `data load`: validates, normalizes and indexes a snapshot folder into new snapshot storage beside the
// active one (a SQLite file, or a PostgreSQL schema), then makes it active in one registry
// transaction. A failed load leaves the active one be.
import { randomBytes } from 'node:crypto';
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { ZodType } from 'zod';
import { normalizeName } from '../../normalize/name.ts';
import { ownerKnownDead, processOwner } from '../../storage/owners.ts';
import type { Store } from '../../storage/port.ts';
import {
  HouseholdRecordSchema,
  type HouseholdRecord,
  ManifestSchema,
  type Manifest,
  PersonRecordSchema,
  type PersonRecord,
  SNAPSHOT_FILES,
} from '../format.ts';
import { ERASURES_RECORDED, NO_HOUSEHOLD, type PersonPlace, erasedMemberBlock, householdBlockKeys, personBlocks } from '../matching/block-keys.ts';
import {
  type AddressKey,
  type RawAddress,
  addressKeyOf,
  addressKeyParts,
  cityKey,
  companyKey,
  emailKeys,
  nameKey,
  phoneKeys,
  postalOf,
  regionOf,
} from '../matching/keys.ts';
import type { NewHousehold, NewPerson, PersonKeys, SnapshotStorage, SnapshotWriter } from '../port.ts';
import { SqliteSnapshots } from './sqlite-snapshot.ts';
import type { SuppressionList } from '../../suppression/list.ts';
import type { SuppressionEntry } from '../../suppression/store.ts';

/** A snapshot with more bad lines than this share of all its lines is refused whole. */
export const MAX_BAD_LINE_RATIO = 0.001;
const REPORTED_BAD_LINES = 20;
/**
 * The longest data line read, in bytes: a real record is a few kilobytes, so a line past this is a
 * broken file (a missing newline, a binary blob) and the load is refused with its line number instead
 * of buffering hundreds of megabytes.
 */
export const MAX_LINE_BYTES = 1 << 20;
/** Ready snapshots kept besides the active one, for `data rollback`. */
export const KEPT_SNAPSHOTS = 2;

export interface LoadProgress {
  readonly phase: 'households' | 'people' | 'indexing';
  /** Bytes of the snapshot's files read so far (compressed bytes for .gz files), and in all. */
  readonly bytesRead: number;
  readonly bytesTotal: number;
  readonly lines: number;
  readonly badLines: number;
}

export interface LoadResult {
  readonly id: string;
  readonly version: string;
  readonly households: number;
  readonly people: number;
  readonly skippedLines: number;
  /** `file:line: reason` for the first bad lines. */
  readonly badLines: readonly string[];
  readonly seconds: number;
  /** Why removing older snapshots failed, if it did; the load itself succeeded. */
  readonly pruneError: string | null;
  /** People (and households) left out because they are on the suppression list. */
  readonly suppressed: { readonly people: number; readonly households: number };
}

export class SnapshotLoadError extends Error {
  constructor(
    message: string,
    readonly badLines: readonly string[] = [],
  ) {
    super(message);
    this.name = 'SnapshotLoadError';
  }
}

function findDataFile(dir: string, base: string): string {
  for (const name of [`${base}.jsonl`, `${base}.jsonl.gz`]) {
    const file = path.join(dir, name);
    if (existsSync(file)) return file;
  }
  throw new SnapshotLoadError(`${dir} has no ${base}.jsonl or ${base}.jsonl.gz`);
}

function readManifest(dir: string): Manifest {
  const file = path.join(dir, SNAPSHOT_FILES.manifest);
  if (!existsSync(file)) throw new SnapshotLoadError(`${dir} has no ${SNAPSHOT_FILES.manifest}`);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8').replace(/^\uFEFF/, ''));
  } catch {
    throw new SnapshotLoadError(`${file} is not valid JSON`);
  }
  const parsed = ManifestSchema.safeParse(raw);
  if (!parsed.success) {
    throw new SnapshotLoadError(`${file}: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  }
  return parsed.data;
}

interface LineSource {
  readonly lines: AsyncIterable<string>;
  readonly bytesRead: () => number;
}

function openLines(file: string, maxLineBytes: number): LineSource {
  const raw = createReadStream(file, { highWaterMark: 1 << 20 });
  const stream: Readable = file.endsWith('.gz') ? raw.pipe(createGunzip()) : raw;
  return { lines: boundedLines(stream, file, maxLineBytes), bytesRead: () => raw.bytesRead };
}

/**
 * The stream's lines (LF or CRLF), every one of them, blank ones included, so line numbers are the
 * file's. Unlike readline it holds at most `maxBytes` of one line: a longer one ends the read with
 * its line number.
 */
async function* boundedLines(stream: Readable, file: string, maxBytes: number): AsyncGenerator<string> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let lineNo = 0;
  const tooLong = () =>
    new SnapshotLoadError(`${path.basename(file)}: line ${lineNo + 1} is longer than ${maxBytes.toLocaleString('en-US')} bytes: snapshot refused`);
  const text = (bytes: Buffer) => {
    const end = bytes.length > 0 && bytes[bytes.length - 1] === 0x0d ? bytes.length - 1 : bytes.length;
    return bytes.toString('utf8', 0, end);
  };
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    let start = 0;
    for (let newline = chunk.indexOf(0x0a, start); newline !== -1; newline = chunk.indexOf(0x0a, start)) {
      const piece = chunk.subarray(start, newline);
      if (pendingBytes + piece.length > maxBytes) throw tooLong();
      const line = pendingBytes === 0 ? piece : Buffer.concat([...pending, piece]);
      pending = [];
      pendingBytes = 0;
      lineNo += 1;
      yield text(line);
      start = newline + 1;
    }
    if (start < chunk.length) {
      pendingBytes += chunk.length - start;
      if (pendingBytes > maxBytes) throw tooLong();
      pending.push(chunk.subarray(start));
    }
  }
  if (pendingBytes > 0) yield text(Buffer.concat(pending));
}

class BadLines {
  count = 0;
  readonly samples: string[] = [];
  add(file: string, line: number, reason: string): void {
    this.count += 1;
    if (this.samples.length < REPORTED_BAD_LINES) this.samples.push(`${path.basename(file)}:${line}: ${reason}`);
  }
}

function parseLine<T>(text: string, schema: ZodType<T>): { ok: true; value: T } | { ok: false; reason: string } {
  let json: unknown;
  try {
    json = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch {
    return { ok: false, reason: 'not valid JSON' };
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return { ok: true, value: parsed.data };
  const issue = parsed.error.issues[0];
  return { ok: false, reason: issue === undefined ? 'invalid' : `${issue.path.join('.') || 'line'}: ${issue.message}` };
}

export interface LoadOptions {
  readonly onProgress?: (progress: LoadProgress) => void;
  /** Aborting stops the load between lines; it then fails like any other, leaving nothing behind. */
  readonly signal?: AbortSignal;
  /** The longest line accepted, in bytes (MAX_LINE_BYTES). */
  readonly maxLineBytes?: number;
  /**
   * Who is never answered about: their lines are left out of the new snapshot, and the ids the load
   * finds them under are added to the list (so a rollback to an older snapshot answers about them no more).
   */
  readonly suppressions?: SuppressionList;
}

/** Snapshot storage, or the folder of SQLite snapshot files. */
export type SnapshotPlace = SnapshotStorage | string;

function storageOf(place: SnapshotPlace): SnapshotStorage {
  return typeof place === 'string' ? new SqliteSnapshots(place) : place;
}

/**
 * Loads the snapshot folder `sourceDir` into `place` and activates it. Throws a SnapshotLoadError,
 * with the registry entry marked failed and nothing left behind, when the folder is unreadable or has
 * more than 0.1% bad lines.
 */
export async function loadSnapshot(store: Store, place: SnapshotPlace, sourceDir: string, options: LoadOptions = {}): Promise<LoadResult> {
  const snapshots = storageOf(place);
  const started = performance.now();
  const manifest = readManifest(sourceDir);
  const householdsFile = findDataFile(sourceDir, SNAPSHOT_FILES.households);
  const peopleFile = findDataFile(sourceDir, SNAPSHOT_FILES.people);
  const bytesTotal = statSync(householdsFile).size + statSync(peopleFile).size;

  const stamp = new Date().toISOString().replace(/[-:.]/g, '').slice(0, 15);
  const id = `${manifest.version}-${stamp}-${randomBytes(2).toString('hex')}`;
  const location = snapshots.locationFor(id);
  // A load killed earlier left its entry and partial data: tidy them before adding ours.
  await cleanAbandonedLoads(store, snapshots);
  await store.beginSnapshot({ id, version: manifest.version, location, createdAt: manifest.created_at, loader: processOwner() });
  const maxLineBytes = options.maxLineBytes ?? MAX_LINE_BYTES;

  const bad = new BadLines();
  let lines = 0;
  let bytesBefore = 0;
  let lastReport = 0;
  const report = (phase: LoadProgress['phase'], bytesRead: number, force = false) => {
    const now = performance.now();
    if (options.onProgress === undefined || (!force && now - lastReport < 200)) return;
    lastReport = now;
    options.onProgress({ phase, bytesRead, bytesTotal, lines, badLines: bad.count });
  };

  let writer: SnapshotWriter | undefined;
  let households = 0;
  let peopleCount = 0;
  const suppressions = options.suppressions?.size === 0 ? undefined : options.suppressions;
  // What the load finds on the list: left out, and their ids recorded.
  const found: SuppressionEntry[] = [];
  const suppressedHouseholds = new Set<string>();
  let suppressedPeople = 0;
  try {
    writer = await snapshots.create(location);
    const householdIds = new Map<string, number>();
    // Each household's place and house numbers, for its members' name blocking keys.
    const householdPlaces = new Map<number, PersonPlace>();
    // Each household's addresses, while the list holds names at addresses to check its members against.
    const householdAddresses = new Map<number, RawAddress[]>();
    const interrupted = () => {
      if (options.signal?.aborted === true) throw new SnapshotLoadError('the load was interrupted');
    };
    await readLines(householdsFile, maxLineBytes, (text, lineNo, bytesRead) => {
      interrupted();
      lines += 1;
      const parsed = parseLine<HouseholdRecord>(text, HouseholdRecordSchema);
      if (!parsed.ok) {
        bad.add(householdsFile, lineNo, parsed.reason);
      } else if (householdIds.has(parsed.value.windfall_id) || suppressedHouseholds.has(parsed.value.windfall_id)) {
        bad.add(householdsFile, lineNo, `windfall_id ${parsed.value.windfall_id} appears twice`);
      } else if (suppressions?.householdSuppressed(parsed.value.windfall_id) === true) {
        suppressedHouseholds.add(parsed.value.windfall_id);
      } else if (writer !== undefined) {
        const { hh, place } = addHousehold(writer, parsed.value);
        householdIds.set(parsed.value.windfall_id, hh);
        householdPlaces.set(hh, place);
        if (suppressions !== undefined) householdAddresses.set(hh, parsed.value.addresses);
      }
      if ((lines & 1023) === 0) {
        report('households', bytesRead);
        return writer?.backpressure() ?? undefined;
      }
      return undefined;
    });
    households = householdIds.size;
    bytesBefore = statSync(householdsFile).size;

    const personIds = new Set<string>();
    const recentKeys = new RecentHouseholdKeys();
    const erasedLeft = new Set<number>();
    await readLines(peopleFile, maxLineBytes, (text, lineNo, bytesRead) => {
      interrupted();
      lines += 1;
      const parsed = parseLine<PersonRecord>(text, PersonRecordSchema);
      if (!parsed.ok) {
        bad.add(peopleFile, lineNo, parsed.reason);
      } else if (personIds.has(parsed.value.person_id)) {
        bad.add(peopleFile, lineNo, `person_id ${parsed.value.person_id} appears twice`);
      } else {
        const windfallId = parsed.value.windfall_id;
        const hh = windfallId === null ? null : householdIds.get(windfallId);
        const verdict =
          suppressions === undefined || (windfallId !== null && suppressedHouseholds.has(windfallId))
            ? { suppressed: windfallId !== null && suppressedHouseholds.has(windfallId), household: false }
            : suppressions.personVerdict(parsed.value, hh === null || hh === undefined ? [] : (householdAddresses.get(hh) ?? []));
        if (verdict.suppressed) {
          personIds.add(parsed.value.person_id);
          suppressedPeople += 1;
          found.push({ kind: 'person', value: parsed.value.person_id, scope: verdict.household ? 'household' : 'person' });
          if (verdict.household && windfallId !== null) {
            suppressedHouseholds.add(windfallId);
            found.push({ kind: 'household', value: windfallId, scope: 'household' });
          }
          // Left out alone, the household kept: her own name at her home must not read as a member the
          // data does not know (block-keys.ts, erasedMemberBlock).
          if (!verdict.household && hh !== null && hh !== undefined && !erasedLeft.has(hh) && writer !== undefined) {
            erasedLeft.add(hh);
            writer.addBlock(erasedMemberBlock(hh), hh);
          }
        } else if (hh === undefined) {
          bad.add(peopleFile, lineNo, `windfall_id ${windfallId ?? ''} names no household of this snapshot`);
        } else if (writer !== undefined) {
          personIds.add(parsed.value.person_id);
          addPerson(writer, parsed.value, hh, hh === null ? null : (householdPlaces.get(hh) ?? null), recentKeys);
          peopleCount += 1;
        }
      }
      if ((lines & 1023) === 0) {
        report('people', bytesBefore + bytesRead);
        return writer?.backpressure() ?? undefined;
      }
      return undefined;
    });

    if (households === 0 || peopleCount === 0) {
      throw new SnapshotLoadError(`the snapshot has ${households} valid households and ${peopleCount} valid people: refused`, bad.samples);
    }
    if (bad.count / lines > MAX_BAD_LINE_RATIO) {
      throw new SnapshotLoadError(
        `${bad.count} of ${lines} lines are bad (${((bad.count / lines) * 100).toFixed(2)}%, over the ${MAX_BAD_LINE_RATIO * 100}% allowed): snapshot refused`,
        bad.samples,
      );
    }
    writer.addBlock(ERASURES_RECORDED, NO_HOUSEHOLD);
    report('indexing', bytesTotal, true);
    await writer.finish({ version: manifest.version, created_at: manifest.created_at, id });
    if (found.length > 0) {
      // Recorded before the snapshot answers: no instance answers about them from it, whatever it
      // still holds of a household left in whole before a member showed it suppressed.
      await store.suppressions.add(found, { actor: 'data load', action: 'resolve', note: `snapshot ${manifest.version}` });
      await options.suppressions?.refresh();
    }
    await store.activateLoadedSnapshot(id, { households, people: peopleCount, skippedLines: bad.count });
  } catch (error) {
    await writer?.abort();
    await snapshots.remove(location).catch(() => undefined);
    await store.failSnapshot(id, error instanceof Error ? error.message : String(error));
    throw error;
  }
  // The snapshot is active from here on: a failure to tidy up older ones is reported, never undone.
  let pruneError: string | null = null;
  try {
    await pruneSnapshots(store, snapshots);
  } catch (error) {
    pruneError = error instanceof Error ? error.message : String(error);
  }
  return {
    id,
    version: manifest.version,
    households,
    people: peopleCount,
    skippedLines: bad.count,
    badLines: bad.samples,
    seconds: (performance.now() - started) / 1000,
    pruneError,
    suppressed: { people: suppressedPeople, households: suppressedHouseholds.size },
  };
}

/**
 * Calls `onLine` for every non-blank line, waiting when it returns a promise (the writer's
 * back-pressure); a read or decompression failure names the file.
 */
async function readLines(
  file: string,
  maxLineBytes: number,
  onLine: (text: string, lineNo: number, bytesRead: number) => Promise<void> | undefined,
): Promise<void> {
  const source = openLines(file, maxLineBytes);
  let lineNo = 0;
  try {
    for await (const text of source.lines) {
      lineNo += 1;
      if (text.trim() === '') continue;
      const wait = onLine(text, lineNo, source.bytesRead());
      if (wait !== undefined) await wait;
    }
  } catch (error) {
    if (error instanceof SnapshotLoadError) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    throw new SnapshotLoadError(`${path.basename(file)}: cannot be read after line ${lineNo}: ${reason}`);
  }
}

/**
 * What a load writes for one household line: its row (with its blocking keys) and its address keys,
 * and its place, which its members' blocking keys are built in.
 */
export function householdToWrite(record: HouseholdRecord): { household: NewHousehold; addresses: AddressKey[]; place: PersonPlace } {
  const { addresses, ...data } = record;
  const primary = addresses[0];
  const postal = primary === undefined ? null : postalOf(primary);
  const keys = addresses.map(addressKeyOf).filter((key) => key !== null);
  const region = primary === undefined ? '' : regionOf(primary, postal);
  const city = cityKey(primary?.city);
  const parts = keys.map((key) => addressKeyParts(key.key));
  return {
    place: {
      postal: postal ?? '',
      city,
      region,
      numbers: parts.map((part) => part.number),
      streets: parts.map((part) => part.street),
    },
    household: {
      windfallId: record.windfall_id,
      data: JSON.stringify(data),
      postal: postal ?? '',
      region,
      city,
      blocks: householdBlockKeys(
        keys.map((key) => key.key),
        city,
        region,
      ),
    },
    addresses: keys,
  };
}

/** What a load writes for one person line, `place` being their household's (for the name's blocking keys). */
export function personToWrite(record: PersonRecord, hh: number | null, place: PersonPlace | null): { person: NewPerson; keys: PersonKeys } {
  const name = nameKey(record.first_name, record.last_name);
  const last = name?.last ?? normalizeName(record.last_name ?? '');
  const first = name?.first ?? normalizeName(record.first_name ?? '');
  return {
    person: {
      personId: record.person_id,
      hh,
      first,
      last,
      company: companyKey(record.career?.company_name),
      career: record.career === null ? null : JSON.stringify(record.career),
    },
    keys: {
      emails: emailKeys(record.emails),
      phones: phoneKeys(record.phones),
      firstKeys: name?.firstKeys ?? [],
      blocks: hh === null || place === null ? [] : personBlocks(place, first, last),
      place: hh === null ? null : place,
    },
  };
}

function addHousehold(writer: SnapshotWriter, record: HouseholdRecord): { hh: number; place: PersonPlace } {
  const { household, addresses, place } = householdToWrite(record);
  return { hh: writer.addHousehold(household, addresses), place };
}

/**
 * The blocking keys already written for the household whose members came last: a household's members
 * mostly share a surname (and so its sound keys), and a data file mostly lists them together, so each
 * key is written once per household rather than once per member (a reader asks DISTINCT households
 * under a key, so a member listed apart only writes a key twice).
 */
class RecentHouseholdKeys {
  private hh: number | null = null;
  private readonly written = new Set<string>();

  fresh(hh: number | null, blocks: readonly string[]): string[] {
    if (hh !== this.hh) {
      this.hh = hh;
      this.written.clear();
    }
    const fresh = blocks.filter((key) => !this.written.has(key));
    for (const key of fresh) this.written.add(key);
    return fresh;
  }
}

function addPerson(writer: SnapshotWriter, record: PersonRecord, hh: number | null, place: PersonPlace | null, recent: RecentHouseholdKeys): void {
  const { person, keys } = personToWrite(record, hh, place);
  writer.addPerson(person, { ...keys, blocks: recent.fresh(hh, keys.blocks) });
}

export interface CleanedLoads {
  /** Entries of loads whose process is gone, now marked failed, their partial data removed. */
  readonly abandoned: string[];
  /** Snapshot files (or schemas) that no registry entry names (a kill between two steps). */
  readonly strayFiles: string[];
}

/**
 * Cleans up after loads whose loader is known dead (a `data load` killed or crashed on this host):
 * marks their `loading` entries failed and removes their partial files, and removes snapshot files no
 * entry names. A load still running, or one on another host (whose process cannot be checked), is
 * left alone. Runs at the start of every load and at server start.
 */
export async function cleanAbandonedLoads(
  store: Store,
  place: SnapshotPlace,
  options: { host?: string; isAlive?: (pid: number) => boolean } = {},
): Promise<CleanedLoads> {
  const snapshots = storageOf(place);
  // The storage first, the registry second: a load registers its entry before it creates its data, so
  // data seen here has its entry in the list read after, unless it really is a stray.
  const present = await snapshots.present();
  const entries = await store.listSnapshots();
  const abandoned: string[] = [];
  for (const snapshot of entries) {
    if (snapshot.state !== 'loading') continue;
    // An entry from before loaders were recorded (null) cannot belong to a load running now.
    const dead = snapshot.loader === null || ownerKnownDead(snapshot.loader, options);
    if (!dead) continue;
    const reason = `its loader (${snapshot.loader ?? 'an earlier version'}) died before finishing; the partial data was removed`;
    if (await store.abandonSnapshot(snapshot.id, reason)) {
      await removeQuietly(snapshots, snapshot.location);
      abandoned.push(snapshot.id);
    }
  }
  const named = new Set(entries.map((s) => s.location));
  const strayFiles = present.filter((location) => !named.has(location));
  for (const location of strayFiles) await removeQuietly(snapshots, location);
  return { abandoned, strayFiles };
}

/** Removes a snapshot's data; an entry from another storage (a SQLite file name on PostgreSQL) has none here. */
async function removeQuietly(snapshots: SnapshotStorage, location: string): Promise<void> {
  await snapshots.remove(location).catch(() => undefined);
}

/**
 * Keeps the active snapshot and the KEPT_SNAPSHOTS most recently activated ready ones (what
 * `data rollback` can return to); removes the rest: older, rolled back and failed ones. A load still
 * under way is left alone.
 */
export async function pruneSnapshots(store: Store, place: SnapshotPlace): Promise<void> {
  const storage = storageOf(place);
  const snapshots = await store.listSnapshots();
  const kept = snapshots
    .filter((s) => !s.active && s.state === 'ready')
    .sort((a, b) => (b.activatedAt ?? '').localeCompare(a.activatedAt ?? ''))
    .slice(0, KEPT_SNAPSHOTS);
  const keep = new Set([...kept.map((s) => s.id), ...snapshots.filter((s) => s.active || s.state === 'loading').map((s) => s.id)]);
  for (const snapshot of snapshots) {
    if (keep.has(snapshot.id)) continue;
    // The registry entry goes first, and only if it is still inactive: a rollback that made it
    // active since the list was read keeps it. A server may hold an old file open for a few seconds:
    // unlinking it is safe on POSIX; dropping a schema waits for the queries reading it.
    if (await store.deleteSnapshot(snapshot.id)) await removeQuietly(storage, snapshot.location);
  }
}
