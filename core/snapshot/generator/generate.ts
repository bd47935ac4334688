// `data generate`: writes a realistic synthetic snapshot (manifest, households, people) and queries.jsonl,
// enrichment requests derived from it with their expected answers. Deterministic for a seed; streams.
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { type Manifest, ManifestSchema, type QueryLine, SNAPSHOT_FILES } from '../format.ts';
import { buildEmployers } from './data/companies.ts';
import { AddressBook, EmailBook, PhoneBook } from './data/identifiers.ts';
import { type BuiltPerson, PopulationBuilder } from './data/people.ts';
import { type Subject, buildQuery } from './data/queries.ts';
import { NEGATIVE_SHARE, contradictingNegative, corruptedDuplicate } from './data/corruption.ts';
import { MULTI_NEGATIVE_SHARE, multiCorruptedDuplicate } from './data/multi-corruption.ts';
import { Rng } from './data/random.ts';

export interface GenerateOptions {
  people: number;
  /** Default 1. */
  seed?: number;
  /** Write households.jsonl.gz and people.jsonl.gz instead of plain .jsonl. */
  gzip?: boolean;
  /** Default min(20,000, max(1,000, people / 50)). */
  queries?: number;
  /** Default '2026-11-16'; a YYYY-MM-DD version is also the date "recent" is measured from. */
  version?: string;
  /**
   * Also write queries-typos.jsonl: a corrupted duplicate, name and address only, of each
   * sampled person with an address, each with one error of a documented type, and negatives
   * (data/corruption.ts); and queries-multi.jsonl: the same people's duplicates with several
   * errors each, drawn as Febrl's generator draws them, and negatives (data/multi-corruption.ts).
   * queries.jsonl and the data are the same with or without them.
   */
  typos?: boolean;
  /** Called about every 1% of people written, and once at the end. */
  onProgress?: (done: number, total: number) => void;
}

export interface GenerateSummary {
  households: number;
  people: number;
  queries: number;
  /** Paths of the files written, manifest first. */
  files: string[];
}

const DEFAULT_VERSION = '2026-11-16';
/** Share of queries about people who are not in the data. */
const NOT_IN_DATA_SHARE = 0.1;
const CHUNK_CHARS = 1 << 20;
const DAY_MS = 86_400_000;

/** Lines gathered into big chunks, written with backpressure, gzipped (level 1) when asked. */
class LineSink {
  private parts: string[] = [];
  private size = 0;
  private readonly input: Writable;
  private readonly done: Promise<void>;

  constructor(file: string, gzip: boolean) {
    const out = createWriteStream(file);
    if (gzip) {
      const zip = createGzip({ level: 1 });
      this.input = zip;
      this.done = pipeline(zip, out);
    } else {
      this.input = out;
      this.done = finished(out);
    }
    // Observed here so a write error never goes unhandled; it is rethrown by flush() or close().
    this.done.catch(() => undefined);
  }

  get full(): boolean {
    return this.size >= CHUNK_CHARS;
  }

  push(line: string): void {
    this.parts.push(line, '\n');
    this.size += line.length + 1;
  }

  async flush(): Promise<void> {
    if (this.parts.length === 0) return;
    const chunk = this.parts.join('');
    this.parts = [];
    this.size = 0;
    if (!this.input.write(chunk)) await Promise.race([once(this.input, 'drain'), this.done]);
  }

  async close(): Promise<void> {
    await this.flush();
    this.input.end();
    await this.done;
  }
}

/** Days since 1970-01-01 of a YYYY-MM-DD version, or of the default version's date for any other version. */
function versionDay(version: string): number {
  const parsed = /^\d{4}-\d{2}-\d{2}$/.test(version) ? Date.parse(`${version}T00:00:00Z`) : Number.NaN;
  return Math.floor((Number.isNaN(parsed) ? Date.parse(`${DEFAULT_VERSION}T00:00:00Z`) : parsed) / DAY_MS);
}

/** `count` person indices below `people`, distinct while there are enough people, as index → times chosen. */
function sampleSubjects(rng: Rng, people: number, count: number): Map<number, number> {
  const chosen = new Map<number, number>();
  if (count > people) {
    for (let i = 0; i < count; i += 1) {
      const index = rng.int(people);
      chosen.set(index, (chosen.get(index) ?? 0) + 1);
    }
    return chosen;
  }
  // Floyd's algorithm: `count` distinct values with `count` draws.
  for (let j = people - count; j < people; j += 1) {
    const t = rng.int(j + 1);
    chosen.set(chosen.has(t) ? j : t, 1);
  }
  return chosen;
}

function subjectOf(person: BuiltPerson, windfallId: string | null, addresses: Subject['addresses']): Subject {
  return {
    personId: person.personId,
    windfallId,
    linkedinUrl: person.linkedinUrl,
    first: person.first,
    last: person.last,
    emails: person.emails,
    phones: person.phones,
    addresses,
    company: person.employer === null ? null : { name: person.employer.name, shortName: person.employer.shortName },
  };
}

export async function generateSnapshot(dir: string, options: GenerateOptions): Promise<GenerateSummary> {
  const total = options.people;
  if (!Number.isInteger(total) || total < 1) throw new RangeError(`people must be a positive integer, got ${total}`);
  const seed = options.seed ?? 1;
  if (!Number.isInteger(seed)) throw new RangeError(`seed must be an integer, got ${seed}`);
  const queryCount = options.queries ?? Math.min(20_000, Math.max(1000, Math.floor(total / 50)));
  if (!Number.isInteger(queryCount) || queryCount < 0) throw new RangeError(`queries must be a non-negative integer, got ${queryCount}`);
  const manifest: Manifest = ManifestSchema.parse({
    version: options.version ?? DEFAULT_VERSION,
    created_at: new Date(versionDay(options.version ?? DEFAULT_VERSION) * DAY_MS).toISOString(),
  });
  const today = versionDay(manifest.version);
  const gzip = options.gzip === true;
  const ext = gzip ? '.jsonl.gz' : '.jsonl';
  const files = {
    manifest: path.join(dir, SNAPSHOT_FILES.manifest),
    households: path.join(dir, `${SNAPSHOT_FILES.households}${ext}`),
    people: path.join(dir, `${SNAPSHOT_FILES.people}${ext}`),
    queries: path.join(dir, 'queries.jsonl'),
  };
  await mkdir(dir, { recursive: true });
  // A manifest left by an earlier run would vouch for files this run is about to replace, and the
  // other compression's files of an earlier run would be read instead of (or beside) this run's.
  const stale = [SNAPSHOT_FILES.households, SNAPSHOT_FILES.people].map((base) => path.join(dir, `${base}${gzip ? '.jsonl' : '.jsonl.gz'}`));
  await Promise.all([files.manifest, ...stale].map((file) => rm(file, { force: true })));

  // Separate streams: the data does not change with the number of queries asked for.
  const dataRng = new Rng(seed, 'data');
  const queryRng = new Rng(seed, 'queries');
  const books = { addresses: new AddressBook(seed), phones: new PhoneBook(seed), emails: new EmailBook() };
  const employers = buildEmployers(Math.max(50, Math.round(total / 40)), new Rng(seed, 'employers'), books.addresses, books.phones);
  const population = new PopulationBuilder(dataRng, seed, today, employers, books);

  const strangers = queryCount === 0 ? 0 : Math.max(1, Math.round(queryCount * NOT_IN_DATA_SHARE));
  const wanted = sampleSubjects(queryRng, total, queryCount - strangers);
  const subjects: Subject[] = [];
  const capture = (person: BuiltPerson, index: number, windfallId: string | null, addresses: Subject['addresses']): void => {
    const times = wanted.get(index) ?? 0;
    for (let i = 0; i < times; i += 1) subjects.push(subjectOf(person, windfallId, addresses));
  };

  const households = new LineSink(files.households, gzip);
  const people = new LineSink(files.people, gzip);
  const step = Math.max(1, Math.ceil(total / 100));
  let nextReport = step;
  let householdCount = 0;
  try {
    while (population.personCount < total) {
      const remaining = total - population.personCount;
      if (population.nextIsCareerOnly()) {
        const index = population.personCount;
        const person = population.careerOnly();
        people.push(person.json);
        capture(person, index, null, []);
      } else {
        const first = population.personCount;
        const household = population.household(Math.min(remaining, population.householdSize()));
        householdCount += 1;
        households.push(household.json);
        household.members.forEach((person, i) => {
          people.push(person.json);
          capture(person, first + i, household.windfallId, household.addresses);
        });
      }
      if (households.full) await households.flush();
      if (people.full) await people.flush();
      if (population.personCount >= nextReport && population.personCount < total) {
        options.onProgress?.(population.personCount, total);
        while (nextReport <= population.personCount) nextReport += step;
      }
    }
    await Promise.all([households.close(), people.close()]);
  } catch (error) {
    await Promise.allSettled([households.close(), people.close()]);
    throw error;
  }

  for (let i = 0; i < strangers; i += 1) subjects.push(population.stranger(queryRng));
  // Subjects came in data order and strangers last: shuffled, neither order shows in the query ids.
  queryRng.shuffle(subjects);
  const width = Math.max(6, String(subjects.length).length);
  const queryLines = subjects.map((subject, i) => JSON.stringify(buildQuery(queryRng, `q-${String(i + 1).padStart(width, '0')}`, subject, books.addresses)));
  await writeFile(files.queries, queryLines.length === 0 ? '' : `${queryLines.join('\n')}\n`);
  const typoFile = path.join(dir, 'queries-typos.jsonl');
  const multiFile = path.join(dir, 'queries-multi.jsonl');
  if (options.typos === true) {
    await writeFile(typoFile, typoLines(new Rng(seed, 'typos'), subjects, books.addresses));
    await writeFile(multiFile, multiLines(new Rng(seed, 'multi'), subjects, books.addresses));
  } else await Promise.all([rm(typoFile, { force: true }), rm(multiFile, { force: true })]);
  // The manifest last: a folder without one is an unfinished snapshot.
  await writeFile(files.manifest, `${JSON.stringify(manifest, null, 2)}\n`);
  options.onProgress?.(total, total);
  return {
    households: householdCount,
    people: total,
    queries: subjects.length,
    files: [files.manifest, files.households, files.people, files.queries, ...(options.typos === true ? [typoFile, multiFile] : [])],
  };
}

/** The typo set: a corrupted duplicate of each subject in the data with an address, and negatives among them. */
function typoLines(rng: Rng, subjects: readonly Subject[], book: AddressBook): string {
  return duplicateLines(rng, subjects, book, (s, i) => corruptedDuplicate(rng, `t-${i + 1}`, s, book), NEGATIVE_SHARE, null);
}

/** The multi-error set: a duplicate with several errors of each subject in the data with an address, and negatives. */
function multiLines(rng: Rng, subjects: readonly Subject[], book: AddressBook): string {
  return duplicateLines(rng, subjects, book, (s, i) => multiCorruptedDuplicate(rng, `m-${i + 1}`, s, book), MULTI_NEGATIVE_SHARE, 'multi:negative');
}

/** One duplicate of each subject in the data with an address, negatives (a real name at another household's address) among them, shuffled. */
function duplicateLines(
  rng: Rng,
  subjects: readonly Subject[],
  book: AddressBook,
  duplicate: (s: Subject, i: number) => QueryLine,
  negativeShare: number,
  /** The negatives' noise label, when not the typo set's. */
  negativeNoise: string | null,
): string {
  const housed = subjects.filter((s) => s.personId !== null && s.addresses.length > 0);
  const lines: QueryLine[] = housed.map((s, i) => duplicate(s, i));
  const negatives = Math.round((housed.length * negativeShare) / (1 - negativeShare));
  for (let i = 0, tries = 0; i < negatives && tries < negatives * 10 && housed.length > 1; tries += 1) {
    const person = rng.pick(housed);
    const other = rng.pick(housed);
    if (other.windfallId === person.windfallId || other.last.toLowerCase() === person.last.toLowerCase()) continue;
    i += 1;
    const negative = contradictingNegative(`n-${i}`, person, other, book);
    lines.push(negativeNoise === null ? negative : { ...negative, noise: [negativeNoise] });
  }
  rng.shuffle(lines);
  return lines.length === 0 ? '' : `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`;
}
