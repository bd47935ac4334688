// The record_states table: per record, whether it matched, its windfall_id and confidence, when and with
// what normalized input it was enriched, and the last value written to each property (what `tracked`
// compares with). One row per record, replaced on each enrichment; a CRM merge moves it to the survivor
// unless the survivor has its own.
import type { Kysely, Selectable } from 'kysely';
import type { CrmValue, RecordState } from '../model.ts';
import type { PipelineDatabase as Database, RecordStatesTable } from '../schema.ts';
import { CHUNK, chunks } from './chunks.ts';
import { z } from 'zod';

const crmValueColumn = z.union([z.string(), z.number(), z.boolean(), z.null()]);
const writtenColumn = z.record(z.string(), crmValueColumn);

function toState(row: Selectable<RecordStatesTable>): RecordState {
  return {
    installationId: row.installation_id,
    object: row.object,
    recordId: row.record_id,
    householdMatched: Number(row.household_matched) === 1,
    careerMatched: Number(row.career_matched) === 1,
    windfallId: row.windfall_id,
    confidence: row.confidence === null ? null : Number(row.confidence),
    enrichedAt: row.enriched_at,
    inputHash: row.input_hash,
    written: writtenColumn.parse(JSON.parse(row.written)) as Record<string, CrmValue>,
    dataVersion: row.data_version,
    careerConfidence: row.career_confidence === null ? null : Number(row.career_confidence),
    ...(row.household_source === null ? {} : { householdSource: row.household_source }),
  };
}

function stateRow(state: RecordState): RecordStatesTable {
  return {
    installation_id: state.installationId,
    object: state.object,
    record_id: state.recordId,
    household_matched: state.householdMatched ? 1 : 0,
    career_matched: state.careerMatched ? 1 : 0,
    windfall_id: state.windfallId,
    confidence: state.confidence,
    enriched_at: state.enrichedAt,
    input_hash: state.inputHash,
    written: JSON.stringify(state.written),
    data_version: state.dataVersion ?? null,
    career_confidence: state.careerConfidence ?? null,
    household_source: state.householdSource ?? null,
  };
}

export async function recordStates(
  db: Kysely<Database>,
  installationId: string,
  object: string,
  recordIds: readonly string[],
): Promise<Map<string, RecordState>> {
  const states = new Map<string, RecordState>();
  for (const ids of chunks([...new Set(recordIds)], CHUNK * 4)) {
    const rows = await db
      .selectFrom('record_states')
      .selectAll()
      .where('installation_id', '=', installationId)
      .where('object', '=', object)
      .where('record_id', 'in', ids)
      .execute();
    for (const row of rows) states.set(row.record_id, toState(row));
  }
  return states;
}

/** The household records whose row holds the answer of one of these people (`object/recordId`). */
export async function householdRecordsHeldBy(
  db: Kysely<Database>,
  installationId: string,
  sources: readonly string[],
): Promise<{ object: string; recordId: string }[]> {
  const held: { object: string; recordId: string }[] = [];
  for (const some of chunks([...new Set(sources)], CHUNK * 4)) {
    const rows = await db
      .selectFrom('record_states')
      .select(['object', 'record_id'])
      .where('installation_id', '=', installationId)
      .where('household_source', 'in', some)
      .orderBy('object')
      .orderBy('record_id')
      .execute();
    for (const row of rows) held.push({ object: row.object, recordId: row.record_id });
  }
  return held;
}

/** Inserts or replaces the states (within the adapter's saveOutcomes transaction). */
export async function upsertStates(db: Kysely<Database>, states: readonly RecordState[]): Promise<void> {
  for (const batch of chunks(states.map(stateRow), CHUNK)) {
    await db
      .insertInto('record_states')
      .values(batch)
      .onConflict((oc) =>
        oc.columns(['installation_id', 'object', 'record_id']).doUpdateSet((eb) => ({
          household_matched: eb.ref('excluded.household_matched'),
          career_matched: eb.ref('excluded.career_matched'),
          windfall_id: eb.ref('excluded.windfall_id'),
          confidence: eb.ref('excluded.confidence'),
          enriched_at: eb.ref('excluded.enriched_at'),
          input_hash: eb.ref('excluded.input_hash'),
          written: eb.ref('excluded.written'),
          data_version: eb.ref('excluded.data_version'),
          career_confidence: eb.ref('excluded.career_confidence'),
          household_source: eb.ref('excluded.household_source'),
        })),
      )
      .execute();
  }
}

export async function staleRecords(
  db: Kysely<Database>,
  installationId: string,
  beforeIso: string,
  limit: number,
): Promise<{ object: string; recordId: string; enrichedAt: string }[]> {
  // An excluded record, or one whose enrichment was undone, is not refreshed.
  const rows = await db
    .selectFrom('record_states')
    .select(['object', 'record_id', 'enriched_at'])
    .where('installation_id', '=', installationId)
    .where('enriched_at', '<', beforeIso)
    // A household record's row is refreshed through its people, never on its own.
    .where('household_source', 'is', null)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('record_controls')
            .select('record_controls.record_id')
            .whereRef('record_controls.installation_id', '=', 'record_states.installation_id')
            .whereRef('record_controls.object', '=', 'record_states.object')
            .whereRef('record_controls.record_id', '=', 'record_states.record_id')
            .where((eb) => eb.or([eb('record_controls.excluded_at', 'is not', null), eb('record_controls.undone_at', 'is not', null)])),
        ),
      ),
    )
    .orderBy('enriched_at')
    .orderBy('record_id')
    .limit(limit)
    .execute();
  return rows.map((row) => ({ object: row.object, recordId: row.record_id, enrichedAt: row.enriched_at }));
}

export async function moveRecordState(db: Kysely<Database>, installationId: string, object: string, fromId: string, toId: string): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const from = await trx
      .selectFrom('record_states')
      .selectAll()
      .where('installation_id', '=', installationId)
      .where('object', '=', object)
      .where('record_id', '=', fromId)
      .executeTakeFirst();
    if (from === undefined) return false;
    const survivor = await trx
      .selectFrom('record_states')
      .select('record_id')
      .where('installation_id', '=', installationId)
      .where('object', '=', object)
      .where('record_id', '=', toId)
      .executeTakeFirst();
    await trx.deleteFrom('record_states').where('installation_id', '=', installationId).where('object', '=', object).where('record_id', '=', fromId).execute();
    if (survivor !== undefined) return false;
    await trx
      .insertInto('record_states')
      .values({ ...from, record_id: toId })
      .execute();
    return true;
  });
}

/** Every state of an installation (a disconnect, within the adapter's transaction), and its records' controls. */
export async function deleteInstallationStates(db: Kysely<Database>, installationId: string): Promise<void> {
  await db.deleteFrom('record_states').where('installation_id', '=', installationId).execute();
  await db.deleteFrom('record_controls').where('installation_id', '=', installationId).execute();
}
