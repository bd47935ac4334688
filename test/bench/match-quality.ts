// Scores production answers against a generated queries.jsonl: household and career precision and
// recall on queries whose person is in the data, and the false-match rate on those whose person is not.
import type { QueryLine } from '../../core/snapshot/format.ts';

export interface Answer {
  readonly household: { readonly windfall_id: string; readonly confidence: number } | null;
  readonly career: { readonly linkedin_url?: string | undefined } | null;
}

interface Tally {
  correct: number;
  wrong: number;
  expected: number;
}

export class QualityTally {
  readonly household: Tally = { correct: 0, wrong: 0, expected: 0 };
  readonly career: Tally = { correct: 0, wrong: 0, expected: 0 };
  inData = 0;
  absent = 0;
  falseMatches = 0;
  readonly misses: { line: QueryLine; answer: Answer; what: string }[] = [];
  /** Every household answered, with its confidence and whether it was right: for the calibration table. */
  readonly answered: { confidence: number; right: boolean }[] = [];

  add(line: QueryLine, answer: Answer): void {
    const { expected } = line;
    if (answer.household !== null)
      this.answered.push({ confidence: answer.household.confidence, right: answer.household.windfall_id === expected.windfall_id });
    const absent = expected.windfall_id === null && expected.person_id === null;
    if (absent) {
      this.absent += 1;
      if (answer.household !== null || answer.career !== null) {
        this.falseMatches += 1;
        this.misses.push({ line, answer, what: 'false match' });
      }
      return;
    }
    this.inData += 1;
    this.score(this.household, expected.windfall_id, answer.household?.windfall_id ?? null, line, answer, 'household');
    this.score(this.career, expected.linkedin_url, answer.career?.linkedin_url ?? null, line, answer, 'career');
  }

  private score(tally: Tally, expected: string | null, got: string | null, line: QueryLine, answer: Answer, what: string): void {
    if (expected !== null) tally.expected += 1;
    if (got === null) {
      if (expected !== null && this.misses.length < 5000) this.misses.push({ line, answer, what: `${what} missed` });
      return;
    }
    if (got === expected) tally.correct += 1;
    else {
      tally.wrong += 1;
      this.misses.push({ line, answer, what: `${what} wrong` });
    }
  }

  /** The tallies added up (the typo set is replayed one error type at a time). */
  static sum(tallies: readonly QualityTally[]): QualityTally {
    const total = new QualityTally();
    for (const t of tallies) {
      for (const key of ['household', 'career'] as const) {
        total[key].correct += t[key].correct;
        total[key].wrong += t[key].wrong;
        total[key].expected += t[key].expected;
      }
      total.inData += t.inData;
      total.absent += t.absent;
      total.falseMatches += t.falseMatches;
      total.answered.push(...t.answered);
    }
    return total;
  }

  /**
   * Calibration by confidence decile: how many household answers fell in it, their mean confidence,
   * and the share of them that were right. Calibrated means the last two agree.
   */
  calibration(): { decile: string; answers: number; meanConfidence: number; right: number }[] {
    const rows = Array.from({ length: 10 }, (_, i) => ({ decile: `${(i / 10).toFixed(1)}-${((i + 1) / 10).toFixed(1)}`, answers: 0, sum: 0, right: 0 }));
    for (const { confidence, right } of this.answered) {
      const row = rows[Math.min(9, Math.floor(confidence * 10))];
      if (row === undefined) continue;
      row.answers += 1;
      row.sum += confidence;
      if (right) row.right += 1;
    }
    return rows.map((row) => ({
      decile: row.decile,
      answers: row.answers,
      meanConfidence: row.answers === 0 ? 0 : row.sum / row.answers,
      right: row.answers === 0 ? 0 : row.right / row.answers,
    }));
  }

  /**
   * Whether every decile with at least `minimum` answers has a share right within `points` of its mean
   * confidence (fewer answers say little about a share), and the deciles that do not.
   */
  calibrated(points = 0.05, minimum = 30): { met: boolean; off: string[] } {
    const off = this.calibration()
      .filter((row) => row.answers >= minimum && Math.abs(row.right - row.meanConfidence) > points)
      .map((row) => row.decile);
    return { met: off.length === 0, off };
  }

  static precision(t: Tally): number {
    return t.correct + t.wrong === 0 ? 1 : t.correct / (t.correct + t.wrong);
  }

  static recall(t: Tally): number {
    return t.expected === 0 ? 1 : t.correct / t.expected;
  }

  summary(): string {
    const pct = (x: number) => `${(x * 100).toFixed(2)} %`;
    return [
      `queries: ${this.inData} with the person in the data, ${this.absent} without`,
      `household precision ${pct(QualityTally.precision(this.household))}  recall ${pct(QualityTally.recall(this.household))}  (${this.household.correct} right, ${this.household.wrong} wrong, ${this.household.expected} expected)`,
      `career    precision ${pct(QualityTally.precision(this.career))}  recall ${pct(QualityTally.recall(this.career))}  (${this.career.correct} right, ${this.career.wrong} wrong, ${this.career.expected} expected)`,
      `false matches on absent people: ${pct(this.absent === 0 ? 0 : this.falseMatches / this.absent)} (${this.falseMatches} of ${this.absent})`,
    ].join('\n');
  }
}

/** The minimum confidences an installation might set, whose cut the multi-error report shows. */
const MINIMUMS = [0.5, 0.6, 0.7, 0.8, 0.9] as const;

/** The multi-error set's targets (name and address duplicates with several errors each). */
export const MULTI_TARGETS = { precision: 0.995, recall: 0.9, twoFields: 0.85, negatives: 0.005 } as const;

/**
 * The multi-error set scored: over all its duplicates, by the number of fields corrupted
 * (`multi:fields=N`), by each modification (`multi:<field>:<type>`) alone (the only one of its line) and
 * with others, and its negatives; lines of text, and whether each target was met.
 */
export function multiReport(scored: readonly (readonly [QueryLine, Answer])[]): { lines: string[]; met: boolean; all: QualityTally } {
  const pct = (x: number) => `${(x * 100).toFixed(2)} %`;
  const all = new QualityTally();
  const negatives = new QualityTally();
  const byFields = new Map<string, QualityTally>();
  const alone = new Map<string, QualityTally>();
  const withOthers = new Map<string, QualityTally>();
  const add = (map: Map<string, QualityTally>, key: string, line: QueryLine, answer: Answer) => {
    const tally = map.get(key) ?? new QualityTally();
    tally.add(line, answer);
    map.set(key, tally);
  };
  for (const [line, answer] of scored) {
    if (line.noise.includes('multi:negative')) {
      negatives.add(line, answer);
      all.add(line, answer);
      continue;
    }
    all.add(line, answer);
    const fields = line.noise.find((n) => n.startsWith('multi:fields='))?.slice('multi:fields='.length) ?? '?';
    add(byFields, fields, line, answer);
    const modifications = [...new Set(line.noise.filter((n) => !n.startsWith('multi:fields=')).map((n) => n.slice('multi:'.length)))];
    for (const modification of modifications) add(modifications.length === 1 ? alone : withOthers, modification, line, answer);
  }
  const duplicates = QualityTally.sum([...byFields.values()]);
  const precision = QualityTally.precision(duplicates.household);
  const recall = QualityTally.recall(duplicates.household);
  const two = byFields.get('2');
  const twoRecall = two === undefined ? 1 : QualityTally.recall(two.household);
  const negativeRate = negatives.absent === 0 ? 0 : negatives.falseMatches / negatives.absent;
  const met =
    precision >= MULTI_TARGETS.precision && recall >= MULTI_TARGETS.recall && twoRecall >= MULTI_TARGETS.twoFields && negativeRate <= MULTI_TARGETS.negatives;
  const cell = (t: QualityTally | undefined) =>
    t === undefined ? '-'.padStart(18) : `${pct(QualityTally.recall(t.household)).padStart(8)} (${String(t.inData).padStart(5)})`;
  const keys = [...new Set([...alone.keys(), ...withOthers.keys()])].sort();
  const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
  return {
    all,
    met,
    lines: [
      `multi-error set (queries-multi.jsonl, name and address only, 1 to 4 modifications each as Febrl's generator draws them; targets: household precision >= ${pct(MULTI_TARGETS.precision)}, recall >= ${pct(MULTI_TARGETS.recall)}, two corrupted fields >= ${pct(MULTI_TARGETS.twoFields)}, false matches on negatives <= ${pct(MULTI_TARGETS.negatives)}):`,
      `  all duplicates: household precision ${pct(precision)}, recall ${pct(recall)} (${duplicates.inData} queries); person (career) precision ${pct(QualityTally.precision(duplicates.career))}, recall ${pct(QualityTally.recall(duplicates.career))} (${duplicates.career.expected} with a career)`,
      ...[...byFields]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(
          ([fields, t]) =>
            `  ${fields} corrupted field${fields === '1' ? ' ' : 's'}   household recall ${pct(QualityTally.recall(t.household)).padStart(8)}, precision ${pct(QualityTally.precision(t.household)).padStart(8)} (${t.inData})`,
        ),
      `  negative (a real name at another household's address): false matches ${pct(negativeRate)} (${negatives.falseMatches} of ${negatives.absent})`,
      `  household recall by modification: ${'alone'.padStart(18)} ${'with others'.padStart(18)}`,
      ...keys.map((key) => `    ${key.padEnd(28)} ${cell(alone.get(key))} ${cell(withOthers.get(key))}`),
      "  an installation's minimum confidence (household answers at or above it, negatives included):",
      ...MINIMUMS.map((minimum) => {
        const kept = all.answered.filter((answer) => answer.confidence >= minimum);
        const rightShare = kept.length === 0 ? 1 : kept.filter((answer) => answer.right).length / kept.length;
        return `    >= ${minimum.toFixed(1)}: ${String(kept.length).padStart(6)} answers, ${pct(rightShare).padStart(8)} right (${rightShare >= minimum ? 'cuts where it says' : 'BELOW its minimum'}), household recall ${pct(kept.filter((answer) => answer.right).length / Math.max(1, duplicates.household.expected))}`;
      }),
      `  household precision ${verdict(precision >= MULTI_TARGETS.precision)}, recall ${verdict(recall >= MULTI_TARGETS.recall)}, two fields ${verdict(twoRecall >= MULTI_TARGETS.twoFields)}, negatives ${verdict(negativeRate <= MULTI_TARGETS.negatives)}`,
    ],
  };
}
