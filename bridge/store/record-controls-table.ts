// The record_controls table: per record, whether a CRM user excluded it from enrichment and
// whether its last enrichment stands undone, with who and when. A row exists only for a record that has
// had either; erased with the record (erasure.ts) and removed with the installation.
import type { Kysely, Selectable } from 'kysely';
import { type Actor, ActorSchema, type RecordControl } from '../model.ts';
import type { PipelineDatabase as Database, RecordControlsTable } from '../schema.ts';
import { CHUNK, chunks } from './chunks.ts';

/** A change to a record's controls: a field left out stays as it is. */
export interface RecordControlPatch {
  readonly excludedAt?: string | null;
  readonly excludedBy?: Actor | null;
  readonly undoneAt?: string | null;
  readonly undoneBy?: Actor | null;
  readonly undoneInputHash?: string | null;
}

const actorColumn = (value: string | null): Actor | null => (value === null ? null : ActorSchema.parse(JSON.parse(value)));

function toControl(row: Selectable<RecordControlsTable>): RecordControl {
  return {
    installationId: row.installation_id,
    object: row.object,
    recordId: row.record_id,
    excludedAt: row.excluded_at,
    excludedBy: actorColumn(row.excluded_by),
    undoneAt: row.undone_at,
    undoneBy: actorColumn(row.undone_by),
    undoneInputHash: row.undone_input_hash,
  };
}

export async function recordControls(
  db: Kysely<Database>,
  installationId: string,
  object: string,
  recordIds: readonly string[],
): Promise<Map<string, RecordControl>> {
  const controls = new Map<string, RecordControl>();
  for (const ids of chunks([...new Set(recordIds)], CHUNK * 4)) {
    const rows = await db
      .selectFrom('record_controls')
      .selectAll()
      .where('installation_id', '=', installationId)
      .where('object', '=', object)
      .where('record_id', 'in', ids)
      .execute();
    for (const row of rows) controls.set(row.record_id, toControl(row));
  }
  return controls;
}

/** Applies a patch to a record's controls, creating the row when there is none. */
export async function updateRecordControl(
  db: Kysely<Database>,
  key: { readonly installationId: string; readonly object: string; readonly recordId: string },
  patch: RecordControlPatch,
  nowIso: string,
): Promise<void> {
  const set: Partial<RecordControlsTable> = { updated_at: nowIso };
  if (patch.excludedAt !== undefined) set.excluded_at = patch.excludedAt;
  if (patch.excludedBy !== undefined) set.excluded_by = patch.excludedBy === null ? null : JSON.stringify(patch.excludedBy);
  if (patch.undoneAt !== undefined) set.undone_at = patch.undoneAt;
  if (patch.undoneBy !== undefined) set.undone_by = patch.undoneBy === null ? null : JSON.stringify(patch.undoneBy);
  if (patch.undoneInputHash !== undefined) set.undone_input_hash = patch.undoneInputHash;
  await db
    .insertInto('record_controls')
    .values({
      installation_id: key.installationId,
      object: key.object,
      record_id: key.recordId,
      excluded_at: set.excluded_at ?? null,
      excluded_by: set.excluded_by ?? null,
      undone_at: set.undone_at ?? null,
      undone_by: set.undone_by ?? null,
      undone_input_hash: set.undone_input_hash ?? null,
      updated_at: nowIso,
    })
    .onConflict((oc) => oc.columns(['installation_id', 'object', 'record_id']).doUpdateSet(set))
    .execute();
}

/**
 * An enrichment saved for these records ends their undone state and any exclusion left behind (within
 * the adapter's saveOutcomes transaction): the pipeline enriches no excluded record, so one enriched was
 * included again in the CRM (its checkbox unchecked there), and an undone one had its identity changed
 * or an Enrich now. The record shows its new enrichment, and is refreshed again.
 */
export async function clearControls(db: Kysely<Database>, records: readonly { installationId: string; object: string; recordId: string }[]): Promise<void> {
  const byObject = new Map<string, { installationId: string; object: string; ids: string[] }>();
  for (const record of records) {
    const key = `${record.installationId}\u0000${record.object}`;
    const group = byObject.get(key) ?? { installationId: record.installationId, object: record.object, ids: [] };
    group.ids.push(record.recordId);
    byObject.set(key, group);
  }
  for (const group of byObject.values()) {
    for (const ids of chunks([...new Set(group.ids)], CHUNK * 4)) {
      await db
        .updateTable('record_controls')
        .set({ undone_at: null, undone_by: null, undone_input_hash: null, excluded_at: null, excluded_by: null })
        .where('installation_id', '=', group.installationId)
        .where('object', '=', group.object)
        .where('record_id', 'in', ids)
        .where((eb) => eb.or([eb('undone_at', 'is not', null), eb('excluded_at', 'is not', null)]))
        .execute();
    }
  }
}
