// Who the records we enriched are, as keyed hashes of their requests' identifiers (record_identifiers),
// and the people an installation's CRM asked us to forget (installation_suppressions). Neither holds an
// identifier in clear: the digests are the suppression list's (core/suppression), under the server's key.
import type { Kysely } from 'kysely';
import type { RecordState } from '../model.ts';
import type { PipelineDatabase as Database } from '../schema.ts';
import { CHUNK, chunks } from './chunks.ts';

export interface RecordRef {
  readonly installationId: string;
  readonly object: string;
  readonly recordId: string;
}

/** Replaces the identifiers of each state that carries them (within saveOutcomes' transaction). */
export async function replaceIdentifiers(db: Kysely<Database>, states: readonly RecordState[]): Promise<void> {
  for (const state of states) {
    if (state.identifiers === undefined) continue;
    await db
      .deleteFrom('record_identifiers')
      .where('installation_id', '=', state.installationId)
      .where('object', '=', state.object)
      .where('record_id', '=', state.recordId)
      .execute();
    const rows = [...new Set(state.identifiers)].map((digest) => ({
      installation_id: state.installationId,
      object: state.object,
      record_id: state.recordId,
      digest,
    }));
    for (const batch of chunks(rows, CHUNK)) await db.insertInto('record_identifiers').values(batch).execute();
  }
}

/** Every record, in every installation, whose request carried one of these identifiers. */
export async function recordsWithIdentifiers(db: Kysely<Database>, digests: readonly string[]): Promise<RecordRef[]> {
  const found = new Map<string, RecordRef>();
  for (const batch of chunks([...new Set(digests)], CHUNK)) {
    const rows = await db.selectFrom('record_identifiers').select(['installation_id', 'object', 'record_id']).where('digest', 'in', batch).execute();
    for (const row of rows) {
      found.set(`${row.installation_id}\u0000${row.object}\u0000${row.record_id}`, {
        installationId: row.installation_id,
        object: row.object,
        recordId: row.record_id,
      });
    }
  }
  return [...found.values()];
}

/** The identifiers a record's last enrichment carried. */
export async function identifiersOf(db: Kysely<Database>, record: RecordRef): Promise<string[]> {
  const rows = await db
    .selectFrom('record_identifiers')
    .select('digest')
    .where('installation_id', '=', record.installationId)
    .where('object', '=', record.object)
    .where('record_id', '=', record.recordId)
    .execute();
  return rows.map((row) => row.digest);
}

/** Remembers, for one installation, a person its CRM asked us to forget. */
export async function suppressForInstallation(db: Kysely<Database>, installationId: string, digests: readonly string[]): Promise<void> {
  const at = new Date().toISOString();
  const rows = [...new Set(digests)].map((digest) => ({ installation_id: installationId, digest, created_at: at }));
  for (const batch of chunks(rows, CHUNK)) {
    await db
      .insertInto('installation_suppressions')
      .values(batch)
      .onConflict((oc) => oc.columns(['installation_id', 'digest']).doNothing())
      .execute();
  }
}

/** Which of these identifiers name a person the installation's CRM asked us to forget. */
export async function suppressedForInstallation(db: Kysely<Database>, installationId: string, digests: readonly string[]): Promise<Set<string>> {
  const found = new Set<string>();
  for (const batch of chunks([...new Set(digests)], CHUNK)) {
    const rows = await db
      .selectFrom('installation_suppressions')
      .select('digest')
      .where('installation_id', '=', installationId)
      .where('digest', 'in', batch)
      .execute();
    for (const row of rows) found.add(row.digest);
  }
  return found;
}
