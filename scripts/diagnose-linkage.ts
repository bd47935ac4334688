// `npm run diagnose:linkage -- FOLDER [SET]`: why a query set's records are missed, for whoever works on
// error-tolerant linkage next. FOLDER holds a generated snapshot (FOLDER/snapshot, from `data generate
// --noise typos`) and the data folder it was loaded into (FOLDER/data, `DATA_DIR=FOLDER/data
// enrichbridge data load FOLDER/snapshot`); SET is one of its query files (queries-multi.jsonl by default).
// Each record is run through linkage (core/snapshot/matching/linkage.ts) against the SQLite snapshot and
// put in one bucket: right, wrong, no candidate (the blocking keys never found the household), refused
// (a contradiction: a different surname, another unit), outranked, tied, below the answer probability,
// a stranger near or in the household, a household an erased member may have left, a likely namesake,
// or no query (no name or no street address); and, for records that are not right, by the fields their
// noise names. Negatives that are answered are listed by
// their comparison with the household answered. Every record refused, negatives too, is counted by the
// rule that refused its best candidate, whether that candidate was right, and where the record's own
// street address stands (the best candidate's, another household's, or no household's in the snapshot):
// what answering the rule's records, at a confidence of their own, would give.
// DIAGNOSE_SHOW='no candidate | city+street_number' lists up to 10 records of that line with their
// household; DIAGNOSE_FIELDS=2 reads only the duplicates with that many corrupted fields
// (`multi:fields=2`).
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { EnrichmentRequest } from '../core/contract/schemas.ts';
import { QueryLineSchema } from '../core/snapshot/format.ts';
import {
  ANSWER_AT,
  blockedCandidates,
  compareCandidate,
  erasedMemberMayBe,
  exactCandidates,
  type LinkageQuery,
  likelyNamesake,
  link,
  linkageQuery,
  rank,
  strangerInMixedHousehold,
  strangerNearHousehold,
} from '../core/snapshot/matching/linkage.ts';
import { SqliteSnapshotReader } from '../core/snapshot/storage/sqlite-snapshot.ts';
import Database from '../core/storage/better-sqlite3.ts';

const [folder, set = 'queries-multi.jsonl'] = process.argv.slice(2);
if (folder === undefined) {
  console.error('usage: npm run diagnose:linkage -- FOLDER [SET]');
  process.exit(2);
}
const snapshots = path.join(folder, 'data', 'snapshots');
const file = readdirSync(snapshots).find((name) => name.endsWith('.db'));
if (file === undefined) throw new Error(`no snapshot file in ${snapshots}`);
const reader = Object.assign(new SqliteSnapshotReader(path.join(snapshots, file)), { pending: () => false });
const db = new Database(path.join(snapshots, file), { readonly: true });
const hhOf = db.prepare<[string], number>('SELECT hh FROM households WHERE windfall_id = ?').pluck();
const lines = readFileSync(path.join(folder, 'snapshot', set), 'utf8')
  .split('\n')
  .filter((text) => text.trim() !== '')
  .map((text) => QueryLineSchema.parse(JSON.parse(text)))
  .filter((line) => process.env.DIAGNOSE_FIELDS === undefined || line.noise.includes(`multi:fields=${process.env.DIAGNOSE_FIELDS}`));

/** The rule that kept a ranked best candidate from being answered (link's order). */
function refusalOf(query: LinkageQuery, ranked: NonNullable<ReturnType<typeof rank>>): string {
  if (ranked.tied) return 'tied';
  if (ranked.probability < ANSWER_AT) return 'below the answer probability';
  if (strangerNearHousehold(ranked.best.comparison)) return 'stranger near the household';
  if (strangerInMixedHousehold(reader, ranked.best)) return 'stranger in a household of several surnames';
  if (erasedMemberMayBe(reader, ranked.best)) return 'an erased member may be';
  if (likelyNamesake(reader, query, ranked.best.comparison)) return 'likely namesake';
  return 'decided at the exact address';
}

const counts = new Map<string, number>();
/** Refused records by the rule that refused their best candidate and where the record's address stands. */
const refusals = new Map<string, { right: number; wrong: number; negative: number }>();

/**
 * Where a record's own street address stands against its best candidate: the candidate's address, another
 * household's, or no household's at all. The generator's negatives always sit at a household's address,
 * so a refused record whose address the snapshot does not know is never one of them (benchmarks.md).
 */
function addressStanding(query: LinkageQuery, best: number): string {
  const atAddress = exactCandidates(reader, query);
  if (atAddress.length === 0) return 'address unknown';
  return atAddress.includes(best) ? "the best's address" : "another's address";
}
const bump = (key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);
const answeredNegatives = new Map<string, number>();
/** DIAGNOSE_SHOW='bucket | fields' (as the report prints it) lists up to 10 such records with their household. */
const show = process.env.DIAGNOSE_SHOW;
let shown = 0;
let candidates = 0;
let asked = 0;
for (const line of lines) {
  const negative = line.expected.windfall_id === null;
  const fields = [...new Set(line.noise.filter((n) => !n.startsWith('multi:fields=')).map((n) => n.replace(/^(multi|typos):/, '').replace(/:.*/, '')))]
    .sort()
    .join('+');
  const query = linkageQuery(line.request as EnrichmentRequest);
  if (query === null) {
    bump(negative ? 'negative: no query' : 'no query');
    continue;
  }
  const all = new Set([...exactCandidates(reader, query), ...blockedCandidates(reader, query)]);
  candidates += all.size;
  asked += 1;
  const linked = link(reader, query);
  // Every candidate ranked, once, for a record linkage refused: why, and what answering it would give.
  const ranked =
    linked === null
      ? rank(
          reader,
          query,
          [...all].map((hh) => compareCandidate(reader, query, hh)),
        )
      : null;
  if (ranked !== null) {
    // Its best candidate right, another household, or any household for a negative.
    const rule = `${refusalOf(query, ranked)}, ${addressStanding(query, ranked.best.household.hh)}`;
    const tally = refusals.get(rule) ?? { right: 0, wrong: 0, negative: 0 };
    if (negative) tally.negative += 1;
    else if (ranked.best.household.windfall_id === line.expected.windfall_id) tally.right += 1;
    else tally.wrong += 1;
    refusals.set(rule, tally);
  }
  if (negative) {
    if (linked === null) bump('negative: refused');
    else {
      bump('negative: ANSWERED');
      const c = linked.best.comparison;
      const key = `${c.surname}/${c.given}/${c.number}/${c.street}/${c.postal}/${c.city}/${c.unit}`;
      answeredNegatives.set(key, (answeredNegatives.get(key) ?? 0) + 1);
    }
    continue;
  }
  const truth = line.expected.windfall_id === null ? undefined : hhOf.get(line.expected.windfall_id);
  let bucket: string;
  if (linked !== null) bucket = linked.best.household.windfall_id === line.expected.windfall_id ? 'right' : 'WRONG';
  else if (truth === undefined || !all.has(truth)) bucket = 'no candidate';
  else if (compareCandidate(reader, query, truth) === null) bucket = 'refused';
  else if (ranked === null || ranked.best.household.hh !== truth) bucket = 'outranked';
  else bucket = refusalOf(query, ranked);
  bump(bucket);
  if (bucket !== 'right') bump(`${bucket} | ${fields}`);
  if (show !== undefined && `${bucket} | ${fields}` === show && shown < 10) {
    shown += 1;
    const known = truth === undefined ? undefined : reader.household(truth);
    const members = truth === undefined ? [] : reader.members(truth).map((m) => `${m.first} ${m.last}`);
    console.log(
      `example: ${JSON.stringify(line.request)}\n  noise ${line.noise.join(', ')}\n  household ${known?.address_keys.replaceAll('\n', ' / ')} ${known?.city} ${known?.region}: ${members.join(', ')}`,
    );
  }
}
db.close();
reader.close();
const sorted = [...counts].sort((a, b) => b[1] - a[1]);
console.log(`${set}: ${lines.length} records, ${(candidates / Math.max(1, asked)).toFixed(1)} candidates a record on average`);
for (const [key, n] of sorted) if (!key.includes(' | ')) console.log(`  ${key.padEnd(40)} ${n}`);
console.log('records not right, by bucket and the fields their noise names (20 or more):');
for (const [key, n] of sorted) if (key.includes(' | ') && n >= 20) console.log(`  ${key.padEnd(70)} ${n}`);
console.log(
  "refused records by the rule that refused their best candidate and the record's address: that candidate right, another household, or a negative's:",
);
for (const [rule, t] of [...refusals].sort((a, b) => b[1].right + b[1].wrong + b[1].negative - (a[1].right + a[1].wrong + a[1].negative)))
  console.log(`  ${rule.padEnd(66)} right ${String(t.right).padStart(5)}  another ${String(t.wrong).padStart(5)}  negative ${String(t.negative).padStart(5)}`);
if (answeredNegatives.size > 0) {
  console.log('answered negatives, by comparison (surname/given/number/street/postal/city/unit):');
  for (const [key, n] of [...answeredNegatives].sort((a, b) => b[1] - a[1])) console.log(`  ${key.padEnd(70)} ${n}`);
}
