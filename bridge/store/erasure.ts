// A record's erasure (a CRM deletion or a privacy request): its state and controls, its log entries and the answer kept
// from it are deleted, and its id alone is remembered in erased_records, so that a batch already under way
// saves nothing about it again. Both sides take the installation's erasure lock (PostgreSQL), so a save
// and an erasure of one installation never interleave. Erased means gone from the disk too: after an
// erasure the database's files are made to hold none of it (afterErasure).
import type { Kysely } from 'kysely';
import { lockInstallationErasures } from '../../core/storage/postgres.ts';
import { checkpointAfterErasure } from '../../core/storage/sqlite.ts';
import type { PipelineDatabase as Database } from '../schema.ts';
import { CHUNK, chunks } from './chunks.ts';
import { identifiersOf, suppressForInstallation } from './record-identifiers-table.ts';

interface RecordKey {
  readonly installationId: string;
  readonly object: string;
  readonly recordId: string;
}

function keyOf(r: RecordKey): string {
  return `${r.installationId}\u0000${r.object}\u0000${r.recordId}`;
}

/**
 * Within a save's transaction: waits for any erasure of these records' installations in flight and
 * holds new ones off (PostgreSQL), then tells which of the records were erased.
 */
export async function erasedAmong(trx: Kysely<Database>, records: readonly RecordKey[]): Promise<(record: RecordKey) => boolean> {
  await lockInstallationErasures(
    trx,
    records.map((r) => r.installationId),
  );
  const erased = new Set<string>();
  const ids = [...new Set(records.map((r) => r.recordId))];
  for (const batch of chunks(ids, CHUNK * 4)) {
    const rows = await trx.selectFrom('erased_records').select(['installation_id', 'object', 'record_id']).where('record_id', 'in', batch).execute();
    for (const row of rows) erased.add(keyOf({ installationId: row.installation_id, object: row.object, recordId: row.record_id }));
  }
  return (record) => erased.has(keyOf(record));
}

/** Where an erasure that could not yet leave the disk is reported (the server's log, at warn): ids, never a record's values. */
export type ErasureWarning = (fields: Readonly<Record<string, unknown>>, message: string) => void;

/**
 * Once an erasure committed: on SQLite the deleted rows are already zeroed in their pages
 * (secure_delete), and the WAL, whose earlier frames still hold them, is checkpointed and truncated.
 * A checkpoint another process's reader holds back does not fail the erasure (it is committed); it is
 * reported, and the WAL is emptied by the next complete checkpoint. Nothing to do on PostgreSQL.
 */
export async function afterErasure(db: Kysely<Database>, warn: ErasureWarning, fields: Readonly<Record<string, unknown>>): Promise<void> {
  if ((await checkpointAfterErasure(db)) === 'busy') {
    warn(fields, 'erasure: the database WAL could not be truncated while another process reads it; erased values stay in it until the next checkpoint');
  }
}

export async function eraseRecord(
  db: Kysely<Database>,
  installationId: string,
  object: string,
  recordId: string,
  warn: ErasureWarning = () => undefined,
  suppress = false,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await lockInstallationErasures(trx, [installationId]);
    // A write first: on SQLite it takes the write lock (waiting for it) before anything is read, so
    // the transaction never has to upgrade a read snapshot another process wrote past (SQLITE_BUSY_SNAPSHOT).
    await trx
      .insertInto('erased_records')
      .values({ installation_id: installationId, object, record_id: recordId, erased_at: new Date().toISOString() })
      .onConflict((oc) => oc.columns(['installation_id', 'object', 'record_id']).doNothing())
      .execute();
    // A privacy deletion: the person is remembered for the installation (keyed hashes of the identifiers
    // the record was enriched with), so a contact re-created with them is not enriched there again.
    if (suppress) await suppressForInstallation(trx, installationId, await identifiersOf(trx, { installationId, object, recordId }));
    // Everything kept about the record: its state, its controls (excluded, undone, by whom), its log and
    // the answers kept for reuse.
    for (const table of ['record_states', 'record_controls', 'enrichment_log', 'reusable_answers', 'record_identifiers'] as const) {
      await trx.deleteFrom(table).where('installation_id', '=', installationId).where('object', '=', object).where('record_id', '=', recordId).execute();
    }
  });
  await afterErasure(db, warn, { installation: installationId, object, erased: 'record' });
}
