// Small hand-made snapshots for matching and loading tests: every household and career field filled
// from a template, with just the identities a test is about written out.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Address } from '../../core/contract/schemas.ts';
import { type CareerRecord, type HouseholdRecord, HouseholdRecordSchema, type PersonRecord, PersonRecordSchema } from '../../core/snapshot/format.ts';

const CareerRecordSchema = PersonRecordSchema.shape.career.unwrap().unwrap();
import { PERSONAS } from '../../core/sandbox/personas.ts';

const template = PERSONAS[0];
if (template?.household === undefined || template.career === undefined) throw new Error('persona 1 must have household and career');
const householdTemplate = HouseholdRecordSchema.omit({ addresses: true }).parse(template.household);
const careerTemplate = CareerRecordSchema.parse(template.career);

let counter = 0;
function hex32(): string {
  counter += 1;
  // Padded with zeros: padded with 'a', the 161st (hex a1) was the first's id again.
  return `a${counter.toString(16).padStart(31, '0')}`;
}

export function household(addresses: Address[], overrides: Partial<HouseholdRecord> = {}): HouseholdRecord {
  return { ...householdTemplate, windfall_id: hex32(), ...overrides, addresses };
}

export function career(overrides: Partial<CareerRecord> = {}): CareerRecord {
  return { ...careerTemplate, ...overrides };
}

export function person(
  id: string,
  first: string,
  last: string,
  home: HouseholdRecord | null,
  extra: { emails?: string[]; phones?: string[]; career?: CareerRecord | null } = {},
): PersonRecord {
  return {
    person_id: id,
    windfall_id: home?.windfall_id ?? null,
    first_name: first,
    last_name: last,
    emails: extra.emails ?? [],
    phones: extra.phones ?? [],
    career: extra.career ?? null,
  };
}

export interface SnapshotFiles {
  readonly version: string;
  readonly households: readonly HouseholdRecord[];
  readonly people: readonly PersonRecord[];
  /** Raw lines appended to the files as they are, for bad-line tests. */
  readonly extraHouseholdLines?: readonly string[];
  readonly extraPeopleLines?: readonly string[];
  readonly gzip?: boolean;
}

export function writeSnapshot(dir: string, files: SnapshotFiles): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify({ version: files.version, created_at: '2026-11-16T00:00:00Z' }));
  const write = (base: string, lines: string[]) => {
    const text = `${lines.join('\n')}\n`;
    if (files.gzip === true) writeFileSync(path.join(dir, `${base}.jsonl.gz`), gzipSync(text));
    else writeFileSync(path.join(dir, `${base}.jsonl`), text);
  };
  write('households', [...files.households.map((h) => JSON.stringify(h)), ...(files.extraHouseholdLines ?? [])]);
  write('people', [...files.people.map((p) => JSON.stringify(p)), ...(files.extraPeopleLines ?? [])]);
  return dir;
}
