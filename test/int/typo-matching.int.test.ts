// Error-tolerant production matching (issue 15) on a real generated and loaded snapshot: its typo set
// (one data-entry error a record, and negatives), replayed through the production matcher, finds each
// error type's household, refuses the negatives, and answers with a calibrated confidence; the clean
// queries keep their figures. Seed 5: neither the weights' training seed (7) nor the bench's (1).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EnrichmentRequest } from '../../core/contract/schemas.ts';
import { type QueryLine, QueryLineSchema } from '../../core/snapshot/format.ts';
import { generateSnapshot } from '../../core/snapshot/generator/generate.ts';
import { CORRUPTIONS } from '../../core/snapshot/generator/data/corruption.ts';
import { loadSnapshot } from '../../core/snapshot/storage/loader.ts';
import { SnapshotMatcher } from '../../core/snapshot/matching/matcher.ts';
import { TEST_DATABASES } from '../support/databases.ts';
import { type TestSnapshots, openTestSnapshots } from '../support/snapshot-storage.ts';

const PEOPLE = 20_000;
const QUERIES = 6_000;

interface Outcome {
  readonly line: QueryLine;
  readonly type: string;
  readonly windfallId: string | null;
  readonly confidence: number | null;
}

function jsonl(file: string): QueryLine[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => QueryLineSchema.parse(JSON.parse(line)));
}

let snapshots: TestSnapshots;
let typos: Outcome[] = [];
let multi: Outcome[] = [];
let clean: Outcome[] = [];

// SQLite only: the same rules run on PostgreSQL's fetching reader in matching.int, one by one.
const sqlite = TEST_DATABASES[0];

beforeAll(async () => {
  if (sqlite === undefined) throw new Error('no SQLite test database');
  snapshots = await openTestSnapshots(sqlite);
  const source = path.join(snapshots.root, 'generated');
  await generateSnapshot(source, { people: PEOPLE, queries: QUERIES, seed: 5, typos: true });
  const loaded = await loadSnapshot(snapshots.store, snapshots.storage, source);
  const matcher = new SnapshotMatcher(await snapshots.storage.open(snapshots.storage.locationFor(loaded.id)), loaded.version);
  const replay = async (lines: readonly QueryLine[], typeOf: (line: QueryLine) => string) => {
    const outcomes: Outcome[] = [];
    for (const line of lines) {
      const answer = await matcher.match(line.request as EnrichmentRequest, { career: true });
      outcomes.push({ line, type: typeOf(line), windfallId: answer.household?.windfall_id ?? null, confidence: answer.household?.confidence ?? null });
    }
    return outcomes;
  };
  typos = await replay(jsonl(path.join(source, 'queries-typos.jsonl')), (line) => (line.noise[0] ?? '').replace(/^typos:/, ''));
  // The multi-error set's type: its number of corrupted fields (`fields=2`), or `negative`.
  multi = await replay(jsonl(path.join(source, 'queries-multi.jsonl')), (line) =>
    line.noise.includes('multi:negative') ? 'negative' : (line.noise.find((n) => n.startsWith('multi:fields='))?.slice('multi:'.length) ?? '?'),
  );
  clean = await replay(jsonl(path.join(source, 'queries.jsonl')), () => 'clean');
}, 120_000);
afterAll(() => snapshots.close());

const right = (outcome: Outcome) => outcome.windfallId !== null && outcome.windfallId === outcome.line.expected.windfall_id;
const recall = (outcomes: readonly Outcome[]) => outcomes.filter(right).length / outcomes.length;
const precision = (outcomes: readonly Outcome[]) => {
  const answered = outcomes.filter((outcome) => outcome.windfallId !== null);
  return answered.length === 0 ? 1 : answered.filter(right).length / answered.length;
};

/** More than 300 negatives (a real name at another household's address), at most 0.5 % of them answered. */
function expectFewNegativesAnswered(outcomes: readonly Outcome[]): void {
  const negatives = outcomes.filter((outcome) => outcome.type === 'negative');
  expect(negatives.length).toBeGreaterThan(300);
  expect(negatives.filter((outcome) => outcome.windfallId !== null).length / negatives.length).toBeLessThanOrEqual(0.005);
}

/** In each confidence decile with 30 or more answers, the share right is within 5 points of the mean confidence. */
function expectCalibrated(outcomes: readonly Outcome[]): void {
  const answered = outcomes.filter((outcome) => outcome.confidence !== null);
  const deciles = new Map<number, Outcome[]>();
  for (const outcome of answered) {
    const decile = Math.min(9, Math.floor((outcome.confidence ?? 0) * 10));
    deciles.set(decile, [...(deciles.get(decile) ?? []), outcome]);
  }
  let checked = 0;
  for (const [decile, inDecile] of deciles) {
    if (inDecile.length < 30) continue;
    checked += 1;
    const mean = inDecile.reduce((sum, outcome) => sum + (outcome.confidence ?? 0), 0) / inDecile.length;
    const share = inDecile.filter(right).length / inDecile.length;
    expect({ decile, within: Math.abs(share - mean) <= 0.05 }).toEqual({ decile, within: true });
  }
  expect(checked).toBeGreaterThan(0);
}

describe('Typo-tolerant matching on a generated snapshot', () => {
  it('finds the household for each single error type in at least 90 % of its records, a surname of several edits included', () => {
    for (const type of CORRUPTIONS) {
      const ofType = typos.filter((outcome) => outcome.type === type);
      expect(ofType.length).toBeGreaterThan(50);
      expect({ type, recall: recall(ofType) >= 0.9 }).toEqual({ type, recall: true });
    }
  });

  it('finds swapped names, street typos, wrong numbers and wrong postcodes, which exact keys never found', () => {
    for (const type of ['swapped_names', 'street_typo', 'street_number', 'postcode']) {
      expect({ type, recall: recall(typos.filter((outcome) => outcome.type === type)) >= 0.95 }).toEqual({ type, recall: true });
    }
  });

  it('keeps household precision at 99.5 % or more, and recall at 85 % or more, over all duplicates', () => {
    const duplicates = typos.filter((outcome) => outcome.type !== 'negative');
    expect(precision(duplicates)).toBeGreaterThanOrEqual(0.995);
    expect(recall(duplicates)).toBeGreaterThanOrEqual(0.85);
  });

  it("refuses a real name at another household's address: at most 0.5 % of the negatives answered", () => {
    expectFewNegativesAnswered(typos);
  });

  it('is calibrated: in each confidence decile with 30 or more answers, the share right is within 5 points of the mean confidence', () => {
    expectCalibrated(typos);
  });

  it("keeps the clean queries' figures: household precision 100 % and recall of 99 % or more", () => {
    const inData = clean.filter((outcome) => outcome.line.expected.windfall_id !== null);
    expect(precision(inData)).toBe(1);
    expect(recall(inData)).toBeGreaterThanOrEqual(0.99);
  });
});

describe('Matching records with several errors on a generated snapshot', () => {
  const duplicates = () => multi.filter((outcome) => outcome.type !== 'negative');

  // The targets are 90 % and 85 % at 1M people; the first floor is what the blocking keys that
  // survive two wrong fields and a surname two edits off reached (at 1M: 81.6 %, from 59 % before them;
  // here 85 %), the second the target (at 1M: 86.1 %, from 59 %; here 89 %).
  it('keeps household precision at 99.5 % or more over the multi-error duplicates, and finds 80 % or more', () => {
    expect(duplicates().length).toBeGreaterThan(1000);
    expect(precision(duplicates())).toBeGreaterThanOrEqual(0.995);
    expect(recall(duplicates())).toBeGreaterThanOrEqual(0.8);
  });

  it('finds the household of 85 % or more of the duplicates with two corrupted fields', () => {
    const two = multi.filter((outcome) => outcome.type === 'fields=2');
    expect(two.length).toBeGreaterThan(300);
    expect(recall(two)).toBeGreaterThanOrEqual(0.85);
  });

  it('answers at most 0.5 % of its negatives (a real name at another household\u2019s address)', () => {
    expectFewNegativesAnswered(multi);
  });

  it('is calibrated: in each confidence decile with 30 or more answers, the share right is within 5 points of the mean confidence', () => {
    // The name-and-place rule's answers at a base of 0.5 were 97.8 % right on the 1M multi-error set.
    expectCalibrated(multi);
  });

  it('a minimum confidence cuts where it says: the answers at or above it are right at least that share of the time', () => {
    for (const minimum of [0.6, 0.7, 0.8, 0.9]) {
      const kept = multi.filter((outcome) => outcome.confidence !== null && outcome.confidence >= minimum);
      expect({ minimum, right: kept.filter(right).length / kept.length >= minimum }).toEqual({ minimum, right: true });
    }
  });
});
