// `npm run fit:match-weights`: estimates the Fellegi–Sunter weights and the confidence calibration of
// error-tolerant household linkage (core/snapshot/matching/linkage.ts) from the generator's corruption model,
// and writes them to core/snapshot/matching/match-weights.ts.
//
// It generates a training snapshot with its own seed (never the bench's, seed 1), loads it, and for
// every line of its typo set (one data-entry error each, and negatives), its multi-error set (one to
// four each) and its clean set compares the record with every candidate household the linkage would
// consider. For each field and level:
//   m = P(level | the candidate is the record's household), u = P(level | it is not),
// m counted over the right pairs, u over random pairs (add-one smoothed), and the level's weight is log2(m/u). Then a logistic
// regression of "the best candidate is right" on the best weight and its lead over the next gives
// the calibration: confidence = sigmoid(a + b·weight + c·lead). Weights pick which member and which
// address a record is compared with, so the fit runs twice, the second time with the first's weights.
//
// Options: --people N (1000000, the bench's scale: how often a common name lives on the same street
// depends on it), --seed S (7), --queries Q (20000), --rounds R (2).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { EnrichmentRequest } from '../core/contract/schemas.ts';
import { QueryLineSchema } from '../core/snapshot/format.ts';
import {
  type Candidate,
  type Comparison,
  FIELDS,
  type Field,
  LEVELS,
  blockedCandidates,
  compareCandidate,
  exactCandidates,
  calibrationFeatures,
  crowd as crowdOf,
  type LinkageQuery,
  farOffAddress,
  linkageQuery,
  namesakesUncounted,
  strangerInMixedHousehold,
  strangerNearHousehold,
} from '../core/snapshot/matching/linkage.ts';
import { SqliteSnapshotReader } from '../core/snapshot/storage/sqlite-snapshot.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const OUT = path.join(ROOT, 'core/snapshot/matching/match-weights.ts');
/** No level's weight goes past this (a level never seen among non-matches would be infinite). */
const WEIGHT_CAP = 12;
const MARGIN_CAP = 20;
/** The household precision every kind of answer is held to (the target production matching was fitted to). */
const PRECISION = 0.995;
/** The logistic's probability from which linkage answers (CALIBRATION.answerAt). */
const ANSWER_FROM = 0.5;
/** Fewest training answers one knot of the recalibration rests on. */
const MIN_BLOCK = 50;
/** Random households each record is compared with, for u. */
const RANDOM_PAIRS = 20;

const { values } = parseArgs({
  options: {
    people: { type: 'string', default: '1000000' },
    seed: { type: 'string', default: '7' },
    queries: { type: 'string', default: '20000' },
    rounds: { type: 'string', default: '2' },
    // Internal: the next round reuses the first's generated and loaded snapshot (its folder).
    reuse: { type: 'string' },
  },
});

type Counts = { [F in Field]: Record<string, number> };
const emptyCounts = (): Counts => Object.fromEntries(FIELDS.map((field) => [field, Object.fromEntries(LEVELS[field].map((level) => [level, 0]))])) as Counts;

interface Pair {
  readonly candidate: Candidate;
  readonly comparison: Comparison;
  readonly right: boolean;
}

function cli(args: string[], env: Record<string, string>): void {
  execFileSync(process.execPath, [path.join(ROOT, 'bin/enrichbridge.js'), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** Newton's method for a logistic regression: rows of features (the first 1, for the intercept). */
function logistic(rows: readonly (readonly number[])[], labels: readonly number[]): number[] {
  const k = rows[0]?.length ?? 0;
  let beta = new Array<number>(k).fill(0);
  for (let iteration = 0; iteration < 100; iteration += 1) {
    const gradient = new Array<number>(k).fill(0);
    // A little ridge keeps the system solvable when a feature never varies.
    const hessian: number[][] = Array.from({ length: k }, (_, a) => Array.from({ length: k }, (_, b): number => (a === b ? 1e-6 : 0)));
    rows.forEach((x, i) => {
      const z = x.reduce((sum, value, j) => sum + value * (beta[j] ?? 0), 0);
      const p = 1 / (1 + Math.exp(-z));
      const y = labels[i] ?? 0;
      for (let a = 0; a < k; a += 1) {
        gradient[a] = (gradient[a] ?? 0) + (y - p) * (x[a] ?? 0);
        const row = hessian[a] ?? [];
        for (let b = 0; b < k; b += 1) row[b] = (row[b] ?? 0) + p * (1 - p) * (x[a] ?? 0) * (x[b] ?? 0);
      }
    });
    const step = solve(hessian, gradient);
    beta = beta.map((value, j) => value + (step[j] ?? 0));
    if (Math.max(...step.map(Math.abs)) < 1e-9) break;
  }
  return beta;
}

/** Gauss-Jordan elimination with partial pivoting: m·x = v. */
function solve(m: readonly (readonly number[])[], v: readonly number[]): number[] {
  const n = v.length;
  const a = m.map((row, i) => [...row, v[i] ?? 0]);
  for (let col = 0; col < n; col += 1) {
    let pivot = col;
    for (let row = col + 1; row < n; row += 1) if (Math.abs(a[row]?.[col] ?? 0) > Math.abs(a[pivot]?.[col] ?? 0)) pivot = row;
    [a[col], a[pivot]] = [a[pivot] ?? [], a[col] ?? []];
    const lead = a[col]?.[col] ?? 1;
    for (let row = 0; row < n; row += 1) {
      if (row === col) continue;
      const factor = (a[row]?.[col] ?? 0) / lead;
      const target = a[row] ?? [];
      for (let j = col; j <= n; j += 1) target[j] = (target[j] ?? 0) - factor * (a[col]?.[j] ?? 0);
    }
  }
  return Array.from({ length: n }, (_, i) => (a[i]?.[n] ?? 0) / (a[i]?.[i] ?? 1));
}

/**
 * Isotonic regression by pool-adjacent-violators: the rising step function closest to the labels
 * (y, 0 or 1) ordered by x, as knots at each block's mean x with the block's share of ones. Blocks of
 * fewer than MIN_BLOCK points are pooled with a neighbour, so no knot rests on a handful of records.
 */
function isotonic(points: readonly { x: number; y: number }[]): { x: number; y: number }[] {
  const blocks: { sumX: number; sumY: number; n: number }[] = [];
  const mean = (block: { sumY: number; n: number }) => block.sumY / block.n;
  for (const point of [...points].sort((a, b) => a.x - b.x)) {
    blocks.push({ sumX: point.x, sumY: point.y, n: 1 });
    for (;;) {
      const last = blocks.at(-1);
      const previous = blocks.at(-2);
      if (last === undefined || previous === undefined) break;
      if (mean(previous) < mean(last) && previous.n >= MIN_BLOCK) break;
      blocks.splice(-2, 2, { sumX: previous.sumX + last.sumX, sumY: previous.sumY + last.sumY, n: previous.n + last.n });
    }
  }
  // The last block may be small: pool it backwards while it is.
  while (blocks.length > 1 && (blocks.at(-1)?.n ?? MIN_BLOCK) < MIN_BLOCK) {
    const last = blocks.pop();
    const previous = blocks.pop();
    if (last === undefined || previous === undefined) break;
    blocks.push({ sumX: previous.sumX + last.sumX, sumY: previous.sumY + last.sumY, n: previous.n + last.n });
  }
  return blocks.map((block) => ({ x: block.sumX / block.n, y: mean(block) }));
}

function weightsFrom(m: Counts, u: Counts): { [F in Field]: Record<string, number> } {
  const entries = FIELDS.map((field) => {
    const levels: readonly string[] = LEVELS[field];
    const mTotal = levels.reduce((sum, level) => sum + (m[field][level] ?? 0), 0) + levels.length;
    const uTotal = levels.reduce((sum, level) => sum + (u[field][level] ?? 0), 0) + levels.length;
    const weights: Record<string, number> = Object.fromEntries(
      levels.map((level) => {
        // A level seen in neither (a surname never missing in the training records, say) says nothing.
        if ((m[field][level] ?? 0) === 0 && (u[field][level] ?? 0) === 0) return [level, 0];
        const weight = Math.log2(((m[field][level] ?? 0) + 1) / mTotal / (((u[field][level] ?? 0) + 1) / uTotal));
        return [level, Math.round(Math.max(-WEIGHT_CAP, Math.min(WEIGHT_CAP, weight)) * 100) / 100];
      }),
    );
    // Swapped names are one piece of evidence, read once: the surname's level carries it.
    if (field === 'given') weights.swapped = 0;
    // A number or street the record leaves out is left out as often against the right household as
    // against any other (m = u): its weight is 0 whatever the sample's counts say.
    if (field === 'number' || field === 'street') weights.missing = 0;
    return [field, weights] as const;
  });
  return Object.fromEntries(entries) as { [F in Field]: Record<string, number> };
}

function main(): void {
  const root = values.reuse ?? mkdtempSync(path.join(os.tmpdir(), 'enrichbridge-fit-'));
  try {
    const source = path.join(root, 'snapshot');
    const env = { DATA_DIR: path.join(root, 'data') };
    if (values.reuse === undefined) {
      console.error(`generating ${values.people} people (seed ${values.seed}) and the typo set …`);
      cli(['data', 'generate', source, '--people', values.people, '--seed', values.seed, '--queries', values.queries, '--noise', 'typos'], env);
      console.error('loading …');
      cli(['data', 'load', source], env);
    }
    const snapshots = path.join(env.DATA_DIR, 'snapshots');
    const file = readdirSync(snapshots).find((name) => name.endsWith('.db'));
    if (file === undefined) throw new Error('the load wrote no snapshot file');
    const sqlite = new SqliteSnapshotReader(path.join(snapshots, file));
    // Answered at once: nothing is ever pending.
    const reader = Object.assign(sqlite, { pending: () => false });
    // The typo set, the multi-error set and the clean set (its name-and-address records): data
    // entry's errors, one or several to a record, and its everyday variation (nicknames, formats, a
    // unit left out) all weigh in.
    const lines = ['queries-typos.jsonl', 'queries-multi.jsonl', 'queries.jsonl'].flatMap((name) =>
      readFileSync(path.join(source, name), 'utf8')
        .split('\n')
        .filter((text) => text.trim() !== '')
        .map((text) => ({ ...QueryLineSchema.parse(JSON.parse(text)), multi: name === 'queries-multi.jsonl' })),
    );
    // u is estimated over random pairs (a record and a household drawn at random), not over the
    // blocked candidates: those agree on their blocking key by construction.
    let households = 1;
    while (reader.household(households * 2) !== undefined) households *= 2;
    for (let step = households; step >= 1; step = Math.floor(step / 2)) if (reader.household(households + step) !== undefined) households += step;
    let state = Number(values.seed) >>> 0 || 1;
    const randomHousehold = () => {
      state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
      return 1 + (state % households);
    };

    let fitted = '';
    for (let round = 1; round <= Number(values.rounds); round += 1) {
      // Each round reads the weights the previous one wrote (a fresh import of the written module).
      const m = emptyCounts();
      const u = emptyCounts();
      const perQuery: { query: LinkageQuery; pairs: Pair[]; multi: boolean }[] = [];
      for (const line of lines) {
        const query = linkageQuery(line.request as EnrichmentRequest);
        if (query === null) continue;
        const hhs = new Set([...exactCandidates(reader, query), ...blockedCandidates(reader, query)]);
        const pairs: Pair[] = [];
        for (const hh of hhs) {
          const candidate = compareCandidate(reader, query, hh);
          if (candidate === null) continue;
          const right = candidate.household.windfall_id === line.expected.windfall_id;
          pairs.push({ candidate, comparison: candidate.comparison, right });
          if (right) for (const field of FIELDS) m[field][candidate.comparison[field]] = (m[field][candidate.comparison[field]] ?? 0) + 1;
        }
        for (let draw = 0; draw < RANDOM_PAIRS; draw += 1) {
          const candidate = compareCandidate(reader, query, randomHousehold(), false);
          if (candidate === null || candidate.household.windfall_id === line.expected.windfall_id) continue;
          for (const field of FIELDS) u[field][candidate.comparison[field]] = (u[field][candidate.comparison[field]] ?? 0) + 1;
        }
        perQuery.push({ query, pairs, multi: line.multi });
      }
      const weights = weightsFrom(m, u);
      const weigh = (c: Comparison) => FIELDS.reduce((sum, field) => sum + (weights[field][c[field]] ?? 0), 0);
      const rows: number[][] = [];
      const labels: number[] = [];
      // Per row: the crowd when the best candidate's house number is far off, else null; null too for
      // the multi-error set's rows (below).
      const farCrowds: (number | null)[] = [];
      // Per row: the crowd when the best candidate's address is far off, any set's (for the recalibration).
      const farAny: (number | null)[] = [];
      for (const { query, pairs, multi } of perQuery) {
        const ranked = pairs
          .map((pair) => ({ weight: weigh(pair.comparison), right: pair.right, comparison: pair.comparison, candidate: pair.candidate }))
          .sort((a, b) => b.weight - a.weight);
        const [best, second] = ranked;
        // A best candidate linkage never answers (a stranger near or in the household) says nothing of
        // the confidence of those it does.
        if (best === undefined || strangerNearHousehold(best.comparison) || strangerInMixedHousehold(reader, best.candidate)) continue;
        const features = calibrationFeatures(reader, query, best, second ?? null);
        rows.push([1, features.weight, features.lead, features.givenDiffers, features.crowd]);
        labels.push(best.right ? 1 : 0);
        const farCrowd = farOffAddress(best.comparison) ? crowdOf(reader, query, best.comparison) : null;
        // Never answered by linkage (its namesakes cannot be counted): it sets no limit and is no answer to recalibrate.
        const neverAnswered = namesakesUncounted(best.comparison);
        // The limit is read on far-off house numbers; a number one digit slipped on another street is
        // held to it as well, but too few of those are in training to set it.
        farCrowds.push(multi || neverAnswered || best.comparison.number !== 'different' ? null : farCrowd);
        farAny.push(neverAnswered ? Number.POSITIVE_INFINITY : farCrowd);
      }
      const beta = logistic(rows, labels);
      const [intercept = 0, weight = 0, margin = 0, differs = 0, crowd = 0] = beta;
      // The far-number limit (linkage.ts, likelyNamesake): the largest power of two such that the
      // answers a far-off house number leads to, for names fewer households of the postal code share,
      // are still right PRECISION of the time. Past it, a namesake down the street is too likely. It
      // is read on the single-error and clean sets only: in the multi-error set a far-off number comes
      // with the postal code wrong too, where no household of the name's sound is counted (a crowd of
      // 0), and a few wrong answers there would stop the search at once and refuse every far-off
      // number, a rare name's included.
      const far: { crowd: number; right: boolean }[] = [];
      rows.forEach((row, i) => {
        const z = row.reduce((sum, x, k) => sum + x * (beta[k] ?? 0), 0);
        const crowdAt = farCrowds[i];
        if (1 / (1 + Math.exp(-z)) >= 0.5 && crowdAt !== null && crowdAt !== undefined) far.push({ crowd: crowdAt, right: labels[i] === 1 });
      });
      let farNumberCrowd = 1;
      for (let limit = 1; limit <= 2 ** 10; limit *= 2) {
        const kept = far.filter((answer) => answer.crowd < limit);
        if (kept.length > 0 && kept.filter((answer) => answer.right).length / kept.length < PRECISION) break;
        farNumberCrowd = limit;
      }
      for (let low = 0, high = 1; low <= 2 ** 10; low = high, high *= 2) {
        const band = far.filter((answer) => answer.crowd >= low && answer.crowd < high);
        if (band.length > 0)
          console.error(
            `far-off number, crowd ${low}–${high - 1}: ${band.filter((answer) => answer.right).length} right, ${band.filter((answer) => !answer.right).length} wrong`,
          );
      }
      // The recalibration: the logistic's probability mapped, monotonically, to the share right among
      // the training answers linkage would give (isotonic regression over the best candidates whose
      // probability is ANSWER_FROM or more and that it does not refuse as namesakes). Which records are
      // answered stays the logistic's to say; the recalibration says how sure each answer is. The logistic alone, linear in its features, cannot follow every kind
      // of answer at once: on the multi-error set its 0.5–0.6 answers were 97 % right.
      const answerable = rows
        .map((row, i) => ({ raw: 1 / (1 + Math.exp(-row.reduce((sum, x, k) => sum + x * (beta[k] ?? 0), 0))), right: labels[i] ?? 0, far: farAny[i] ?? null }))
        .filter((row) => row.raw >= ANSWER_FROM && (row.far === null || row.far < farNumberCrowd));
      const recalibration = isotonic(answerable.map((row) => ({ x: row.raw, y: row.right })));
      const round4 = (x: number) => Math.round(x * 10_000) / 10_000;
      const pairsCount = perQuery.reduce((sum, q) => sum + q.pairs.length, 0);
      const rightCount = perQuery.reduce((sum, q) => sum + q.pairs.filter((p) => p.right).length, 0);
      const describe = (counts: Counts) => JSON.stringify(counts);
      fitted = `// Generated by \`npm run fit:match-weights\` (scripts/fit-match-weights.ts): do not edit by hand.
// Fitted on a training snapshot of ${Number(values.people).toLocaleString('en-US')} people, seed ${values.seed} (the bench uses seed 1), over its typo
// set, its multi-error set and its clean set: ${lines.length.toLocaleString('en-US')} records, ${pairsCount.toLocaleString('en-US')} record–candidate pairs (${rightCount.toLocaleString('en-US')} of them the right
// household), and ${RANDOM_PAIRS} random households per record for u.
// WEIGHTS[field][level] = log2(m/u), add-one smoothed, capped at ±${WEIGHT_CAP}; MU holds the counts they come from.
// CALIBRATION: p = 1 / (1 + exp(-(intercept + weight·W + margin·min(lead, marginCap) + givenDiffers·D
// + crowd·log2(1 + C)))), and the confidence is p read through the recalibration's knots (raw → right,
// linear between them, the end knots' values beyond them: the share of training answers right at that
// p, by isotonic regression, fewest ${MIN_BLOCK} answers a knot), where W is the best candidate's summed weight, lead its margin over the next
// candidate (marginCap with none), D 1 when its surname agrees but the given name is no member's
// (someone the data does not know at a known household's address: the fields' weights, read as
// independent, overrate that), and C, when its address is not the record's exactly, the households
// of the record's postal code with the surname's sound (linkage.ts, crowd). A best candidate whose
// address is far off (linkage.ts, farOffAddress) is not answered from farNumberCrowd households of the name's sound on (linkage.ts,
// likelyNamesake): below it, such answers were right ${PRECISION * 100} % of the time or more in training
// (single-error and clean sets).

export const WEIGHTS = ${JSON.stringify(weights, null, 2)} as const;

export const CALIBRATION = {
  intercept: ${round4(intercept)},
  weight: ${round4(weight)},
  margin: ${round4(margin)},
  givenDiffers: ${round4(differs)},
  crowd: ${round4(crowd)},
  farNumberCrowd: ${farNumberCrowd},
  /** The recalibration's knots: the logistic's probability (raw, rising) and the share right there (right). */
  raw: ${JSON.stringify(recalibration.map((knot) => round4(knot.x)))},
  right: ${JSON.stringify(recalibration.map((knot) => round4(knot.y)))},
  marginCap: ${MARGIN_CAP},
  answerAt: ${ANSWER_FROM},
} as const;

/** The counts behind WEIGHTS: m among right candidate pairs, u among random pairs. */
export const MU = { m: ${describe(m)}, u: ${describe(u)} } as const;
`;
      writeFileSync(OUT, fitted);
      console.error(
        `round ${round}: ${pairsCount} pairs, calibration ${round4(intercept)} + ${round4(weight)}·W + ${round4(margin)}·lead + ${round4(differs)}·D + ${round4(crowd)}·log2(1+C); far-off numbers answered below ${farNumberCrowd} households of the name`,
      );
      if (round < Number(values.rounds)) {
        // The comparisons depend on the weights (member and address choice): run again with the new ones.
        execFileSync(
          process.execPath,
          [
            '--import',
            'tsx',
            path.join(ROOT, 'scripts/fit-match-weights.ts'),
            '--people',
            values.people,
            '--seed',
            values.seed,
            '--queries',
            values.queries,
            '--rounds',
            '1',
            '--reuse',
            root,
          ],
          {
            cwd: ROOT,
            stdio: 'inherit',
          },
        );
        break;
      }
    }
    reader.close();
    console.error(`wrote ${path.relative(ROOT, OUT)}`);
  } finally {
    if (values.reuse === undefined) rmSync(root, { recursive: true, force: true });
  }
}

main();
