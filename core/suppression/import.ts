// `suppress import FILE`: a list of people to suppress, streamed (CSV with a header row, or JSON Lines),
// in clear (e-mail, phone, or first and last name with street address and ZIP code, a line each) or
// as a deletion platform's hashes of e-mails or phones (identifiers.ts: SHA-256 of the standardized
// value, Base64 or hex). A bad line is counted and named by its number, never by its content.
import { createReadStream, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { parse } from 'csv-parse';
import { z } from 'zod';
import { type IdentifierKind, parsePlatformHash } from './identifiers.ts';
import { type Suppressor, SuppressionInputError, entriesFor, identifiersFromFields } from './operations.ts';
import type { SuppressionEntry } from './store.ts';

/** Lines added to the list a transaction (and resolved against the snapshot between two). */
const BATCH = 1_000;
/** Bad lines named in the summary; the rest are counted. */
const REPORTED_BAD_LINES = 20;

export interface ImportProgress {
  readonly bytesRead: number;
  readonly bytesTotal: number;
  readonly lines: number;
  readonly bad: number;
}

export interface ImportOptions {
  /** The file holds hashes of this kind of identifier, one a line (a column `hash`, else the last column). */
  readonly hashed?: Extract<IdentifierKind, 'email' | 'phone'>;
  /** Every line's whole household (a line may also ask with a `household` column or field). */
  readonly household: boolean;
  readonly actor: string;
  readonly onProgress?: (progress: ImportProgress) => void;
}

export interface ImportResult {
  readonly lines: number;
  readonly added: number;
  readonly people: number;
  readonly bad: number;
  /** `line N: reason` for the first bad lines. */
  readonly badLines: readonly string[];
}

const TEXT = z.string().trim().max(512).optional();
const LineSchema = z
  .object({
    email: TEXT,
    phone: TEXT,
    first_name: TEXT,
    last_name: TEXT,
    address: TEXT,
    zipcode: TEXT,
    zip: TEXT,
    hash: TEXT,
    household: z.union([z.boolean(), z.string().trim().toLowerCase()]).optional(),
  })
  .loose();
type Line = z.infer<typeof LineSchema>;

function wantsHousehold(value: Line['household']): boolean {
  return value === true || value === 'true' || value === 'yes' || value === '1' || value === 'y';
}

/** The rows of the file as objects: JSON Lines (.jsonl, .ndjson), else CSV with a header row. */
async function* rowsOf(file: string, bytesRead: { value: number }): AsyncGenerator<{ lineNo: number; row: unknown }> {
  const stream = createReadStream(file, { highWaterMark: 1 << 16 });
  stream.on('data', (chunk) => (bytesRead.value += chunk.length));
  if (/\.(jsonl|ndjson)$/i.test(file)) {
    let lineNo = 0;
    for await (const text of createInterface({ input: stream, crlfDelay: Infinity })) {
      lineNo += 1;
      if (text.trim() === '') continue;
      let row: unknown;
      try {
        row = JSON.parse(text);
      } catch {
        row = Symbol('not JSON');
      }
      yield { lineNo, row };
    }
    return;
  }
  const parser = stream.pipe(
    parse({
      bom: true,
      columns: (header: string[]) => header.map((name) => name.trim().toLowerCase()),
      skip_empty_lines: true,
      trim: true,
      relax_column_count: true,
      info: true,
    }),
  );
  for await (const record of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
    yield { lineNo: record.info.lines, row: record.record };
  }
}

/** Imports the list in FILE: each line's entries added, every BATCH lines in one transaction, one audit entry at the end. */
export async function importList(suppressor: Suppressor, file: string, options: ImportOptions): Promise<ImportResult> {
  const bytesTotal = statSync(file).size;
  const bytesRead = { value: 0 };
  const badLines: string[] = [];
  let bad = 0;
  let lines = 0;
  let added = 0;
  const people = new Set<string>();
  let pending: SuppressionEntry[] = [];
  const flush = async () => {
    if (pending.length === 0) return;
    added += await suppressor.store.add(pending, null);
    pending = [];
  };
  const refuse = (lineNo: number, reason: string) => {
    bad += 1;
    if (badLines.length < REPORTED_BAD_LINES) badLines.push(`line ${lineNo}: ${reason}`);
  };
  let lastReport = 0;
  for await (const { lineNo, row } of rowsOf(file, bytesRead)) {
    lines += 1;
    const parsed = LineSchema.safeParse(row);
    if (!parsed.success) {
      refuse(lineNo, typeof row === 'symbol' ? 'not JSON' : 'not an object of text fields');
      continue;
    }
    const line = parsed.data;
    const scope = options.household || wantsHousehold(line.household) ? 'household' : 'person';
    if (options.hashed !== undefined) {
      const hashText = line.hash ?? lastColumn(row);
      const hash = hashText === undefined ? null : parsePlatformHash(hashText);
      if (hash === null) refuse(lineNo, 'no SHA-256 hash (44 characters of Base64, or 64 hex digits)');
      else pending.push({ kind: options.hashed, value: suppressor.list.digest(options.hashed, hash), scope });
    } else {
      try {
        const identifiers = identifiersFromFields({ ...line, firstName: line.first_name, lastName: line.last_name, zipcode: line.zipcode ?? line.zip });
        const { entries, subjects } = await entriesFor(suppressor, identifiers, scope);
        pending.push(...entries);
        for (const subject of subjects) if (subject.person !== null) people.add(subject.person);
      } catch (error) {
        if (!(error instanceof SuppressionInputError)) throw error;
        refuse(lineNo, 'no e-mail, phone, or last name with street address and ZIP code');
      }
    }
    if (pending.length >= BATCH) await flush();
    const now = performance.now();
    if (options.onProgress !== undefined && now - lastReport > 200) {
      lastReport = now;
      options.onProgress({ bytesRead: bytesRead.value, bytesTotal, lines, bad });
    }
  }
  await flush();
  options.onProgress?.({ bytesRead: bytesTotal, bytesTotal, lines, bad });
  await suppressor.store.recordAudit({
    actor: options.actor,
    action: 'import',
    entries: added,
    note: `${lines.toLocaleString('en-US')} lines${bad === 0 ? '' : `, ${bad.toLocaleString('en-US')} bad`}${options.hashed === undefined ? '' : `, hashed ${options.hashed}s`}`,
  });
  await suppressor.list.refresh();
  return { lines, added, people: people.size, bad, badLines };
}

/** A hashed list's hash when it has no `hash` column: its last column (DROP's files are `ID,Hash`). */
function lastColumn(row: unknown): string | undefined {
  if (typeof row !== 'object' || row === null) return undefined;
  const values = Object.values(row);
  const last: unknown = values[values.length - 1];
  return typeof last === 'string' ? last : undefined;
}
