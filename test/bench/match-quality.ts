// Scores production answers against a generated queries.jsonl: household and career precision and
// recall on queries whose person is in the data, and the false-match rate on those whose person is not.
import type { QueryLine } from '../../core/snapshot/format.ts';

export interface Answer {
  readonly household: { readonly windfall_id: string } | null;
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

  add(line: QueryLine, answer: Answer): void {
    const { expected } = line;
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
