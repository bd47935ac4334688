// The reusable_answers table: an answer kept for reuse, sealed, one per installation and normalized
// request hash (the newest answer replaces the one before), with the record it was given for and the
// target's data version. Found only when younger than the re-enrichment age; purged past it.
import type { Kysely } from 'kysely';
import type { StoredAnswer } from '../model.ts';
import type { PipelineDatabase as Database, ReusableAnswersTable } from '../schema.ts';
import { CHUNK, chunks } from './chunks.ts';

function answerRow(answer: StoredAnswer): ReusableAnswersTable {
  return {
    installation_id: answer.installationId,
    input_hash: answer.inputHash,
    object: answer.object,
    record_id: answer.recordId,
    answer: answer.sealedAnswer,
    data_version: answer.dataVersion,
    answered_at: answer.answeredAt,
  };
}

/**
 * Inserts or replaces the answers (within the adapter's saveOutcomes transaction). One row per question:
 * the caller passes each (installation, hash) once, since an upsert may not touch a row twice in one statement.
 */
export async function upsertAnswers(db: Kysely<Database>, answers: readonly StoredAnswer[]): Promise<void> {
  for (const batch of chunks(answers.map(answerRow), CHUNK)) {
    await db
      .insertInto('reusable_answers')
      .values(batch)
      .onConflict((oc) =>
        oc.columns(['installation_id', 'input_hash']).doUpdateSet((eb) => ({
          object: eb.ref('excluded.object'),
          record_id: eb.ref('excluded.record_id'),
          answer: eb.ref('excluded.answer'),
          data_version: eb.ref('excluded.data_version'),
          answered_at: eb.ref('excluded.answered_at'),
        })),
      )
      .execute();
  }
}

export async function findAnswers(
  db: Kysely<Database>,
  installationId: string,
  hashes: readonly string[],
  notBeforeIso: string,
): Promise<Map<string, StoredAnswer>> {
  const found = new Map<string, StoredAnswer>();
  for (const batch of chunks([...new Set(hashes)], CHUNK * 4)) {
    const rows = await db
      .selectFrom('reusable_answers')
      .selectAll()
      .where('installation_id', '=', installationId)
      .where('input_hash', 'in', batch)
      .where('answered_at', '>=', notBeforeIso)
      .execute();
    for (const row of rows) {
      found.set(row.input_hash, {
        installationId: row.installation_id,
        inputHash: row.input_hash,
        object: row.object,
        recordId: row.record_id,
        sealedAnswer: row.answer,
        dataVersion: row.data_version,
        answeredAt: row.answered_at,
      });
    }
  }
  return found;
}

export async function latestAnswerVersion(db: Kysely<Database>, installationId: string): Promise<string | null | undefined> {
  const row = await db
    .selectFrom('reusable_answers')
    .select('data_version')
    .where('installation_id', '=', installationId)
    .orderBy('answered_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.data_version;
}

export async function purgeAnswers(db: Kysely<Database>, installationId: string, beforeIso: string): Promise<number> {
  const result = await db.deleteFrom('reusable_answers').where('installation_id', '=', installationId).where('answered_at', '<', beforeIso).executeTakeFirst();
  return Number(result.numDeletedRows);
}
