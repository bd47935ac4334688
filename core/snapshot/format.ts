// The snapshot format, the data contract with the data team: a folder with manifest.json,
// households.jsonl and people.jsonl (each optionally .jsonl.gz), one JSON object a line.
import { z } from 'zod';
import { AddressSchema, CareerSchema, HouseholdSchema } from '../contract/schemas.ts';

export const ManifestSchema = z.object({
  version: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[A-Za-z0-9._-]+$/, 'letters, digits, dots, dashes or underscores'),
  // Data teams send dates, local or offset date-times; all are taken as they are.
  created_at: z.union([z.iso.datetime({ offset: true, local: true }), z.iso.date()]),
});

/** A household line: every household field except confidence, plus its addresses (the first is primary). */
export const HouseholdRecordSchema = HouseholdSchema.omit({ confidence: true }).extend({
  addresses: z.array(AddressSchema).min(1),
});

/** A person line; `career` carries every career field except confidence, or is null. */
export const PersonRecordSchema = z.object({
  person_id: z.string().min(1).max(128),
  windfall_id: z
    .string()
    .regex(/^[0-9a-f]{32}$/)
    .nullable(),
  first_name: z.string().max(256).nullable(),
  last_name: z.string().max(256).nullable(),
  emails: z.array(z.string().max(320)).default([]),
  phones: z.array(z.string().max(64)).default([]),
  career: CareerSchema.omit({ confidence: true }).nullable().default(null),
});

export type Manifest = z.infer<typeof ManifestSchema>;
export type HouseholdRecord = z.infer<typeof HouseholdRecordSchema>;
export type PersonRecord = z.infer<typeof PersonRecordSchema>;
export type CareerRecord = NonNullable<PersonRecord['career']>;

export const SNAPSHOT_FILES = {
  manifest: 'manifest.json',
  households: 'households',
  people: 'people',
} as const;

/** Lines of one generated query file: the request and what a perfect matcher would answer. */
export const QueryLineSchema = z.object({
  request: z.record(z.string(), z.unknown()),
  expected: z.object({
    windfall_id: z.string().nullable(),
    person_id: z.string().nullable(),
    /** The expected career's linkedin_url, which identifies it in a response (null: no career expected). */
    linkedin_url: z.string().nullable(),
  }),
  /** What noise the generator applied, for reading misses. */
  noise: z.array(z.string()).default([]),
});
export type QueryLine = z.infer<typeof QueryLineSchema>;
