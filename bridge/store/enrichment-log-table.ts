// The enrichment_log table: one entry per record per batch, with the values each write carried and the
// ones it replaced (personal data: cleared on disconnect, deleted with the record on erasure, purged past
// the retention period with the entry kept), the units it spent and its latency. Entry ids are
// time-ordered, so the log is listed and paged by id; a budget sums the units since a time from the
// index on (installation_id, at).
import { type Kysely, type Selectable, sql } from 'kysely';
import { ActorSchema, type LogEntry, type Outcome } from '../model.ts';
import type { EnrichmentLogTable, PipelineDatabase as Database } from '../schema.ts';
import type { DailyOutcome, LogQuery, LogSearch } from '../store.ts';
import { CHUNK, chunks } from './chunks.ts';
import { z } from 'zod';

const crmValueColumn = z.union([z.string(), z.number(), z.boolean(), z.null()]);
const fieldsColumn = z.array(z.string());
const changesColumn = z.record(z.string(), z.object({ value: crmValueColumn, replaced: crmValueColumn }));

function logRow(entry: LogEntry): EnrichmentLogTable {
  return {
    id: entry.id,
    installation_id: entry.installationId,
    object: entry.object,
    record_id: entry.recordId,
    at: entry.at,
    outcome: entry.outcome,
    fields_written: JSON.stringify(entry.fieldsWritten),
    changes: Object.keys(entry.changes).length === 0 ? null : JSON.stringify(entry.changes),
    reused_from: entry.reusedFrom ?? null,
    actor: entry.actor === undefined ? null : JSON.stringify(entry.actor),
    values_purged_at: entry.valuesPurgedAt ?? null,
    quota_consumed: entry.quotaConsumed,
    latency_ms: entry.latencyMs,
    detail: entry.detail,
  };
}

function toLogEntry(row: Selectable<EnrichmentLogTable>): LogEntry {
  return {
    id: row.id,
    installationId: row.installation_id,
    object: row.object,
    recordId: row.record_id,
    at: row.at,
    outcome: row.outcome as Outcome,
    fieldsWritten: fieldsColumn.parse(JSON.parse(row.fields_written)),
    // Null: logged before 0015, nothing written, cleared when the installation was disconnected, or purged.
    changes: row.changes === null ? {} : changesColumn.parse(JSON.parse(row.changes)),
    ...(row.values_purged_at === null ? {} : { valuesPurgedAt: row.values_purged_at }),
    ...(row.reused_from === null ? {} : { reusedFrom: row.reused_from }),
    ...(row.actor === null ? {} : { actor: ActorSchema.parse(JSON.parse(row.actor)) }),
    quotaConsumed: Number(row.quota_consumed),
    latencyMs: row.latency_ms === null ? null : Number(row.latency_ms),
    detail: row.detail,
  };
}

/** Appends the entries (within the adapter's saveOutcomes transaction). */
export async function insertEntries(db: Kysely<Database>, entries: readonly LogEntry[]): Promise<void> {
  for (const batch of chunks(entries.map(logRow), CHUNK)) await db.insertInto('enrichment_log').values(batch).execute();
}

export async function listLog(db: Kysely<Database>, query: LogQuery): Promise<LogEntry[]> {
  let select = db
    .selectFrom('enrichment_log')
    .selectAll()
    .orderBy('id', 'desc')
    .limit(query.limit ?? 100);
  if (query.installationId !== undefined) select = select.where('installation_id', '=', query.installationId);
  if (query.recordId !== undefined) select = select.where('record_id', '=', query.recordId);
  return (await select.execute()).map(toLogEntry).reverse();
}

export async function searchLog(db: Kysely<Database>, search: LogSearch): Promise<LogEntry[]> {
  let select = db.selectFrom('enrichment_log').selectAll().where('installation_id', '=', search.installationId);
  if (search.outcomePrefix !== undefined) select = select.where('outcome', 'like', `${search.outcomePrefix.replace(/[%_\\]/g, '')}%`);
  if (search.object !== undefined) select = select.where('object', '=', search.object);
  if (search.recordId !== undefined) select = select.where('record_id', '=', search.recordId);
  if (search.from !== undefined) select = select.where('at', '>=', search.from);
  if (search.to !== undefined) select = select.where('at', '<', search.to);
  if (search.before !== undefined) select = select.where('id', '<', search.before);
  return (await select.orderBy('id', 'desc').limit(search.limit).execute()).map(toLogEntry);
}

export async function findLogEntry(db: Kysely<Database>, installationId: string, id: string): Promise<LogEntry | undefined> {
  const row = await db.selectFrom('enrichment_log').selectAll().where('installation_id', '=', installationId).where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : toLogEntry(row);
}

/**
 * The units an installation's log records since a time: what every batch of an installation with a
 * budget reads first, answered from the index on (installation_id, at), never a scan of the log.
 */
export function unitsSinceQuery(db: Kysely<Database>, installationId: string, sinceIso: string) {
  return db
    .selectFrom('enrichment_log')
    .select((eb) => eb.fn.sum<number | string | null>('quota_consumed').as('units'))
    .where('installation_id', '=', installationId)
    .where('at', '>=', sinceIso);
}

export async function unitsSince(db: Kysely<Database>, installationId: string, sinceIso: string): Promise<number> {
  const row = await unitsSinceQuery(db, installationId, sinceIso).executeTakeFirst();
  return Number(row?.units ?? 0);
}

export async function dailyOutcomes(db: Kysely<Database>, installationId: string, sinceIso: string): Promise<DailyOutcome[]> {
  // The log's times are ISO strings in UTC: their first ten characters are the day, in both dialects.
  const day = sql<string>`substr(at, 1, 10)`;
  const rows = await db
    .selectFrom('enrichment_log')
    .select([
      day.as('day'),
      'outcome',
      (eb) => eb.fn.countAll<number | string>().as('count'),
      (eb) => eb.fn.sum<number | string | null>('quota_consumed').as('units'),
    ])
    .where('installation_id', '=', installationId)
    .where('at', '>=', sinceIso)
    .groupBy([day, 'outcome'])
    .orderBy(day)
    .execute();
  return rows.map((row) => ({ day: row.day, outcome: row.outcome, count: Number(row.count), quotaConsumed: Number(row.units ?? 0) }));
}

/**
 * A disconnect keeps the installation's log for the operator, without the values its writes carried
 * or who asked for a record action (a CRM user's e-mail).
 */
export async function clearLoggedValues(db: Kysely<Database>, installationId: string): Promise<void> {
  await db
    .updateTable('enrichment_log')
    .set({ changes: null, actor: null })
    .where('installation_id', '=', installationId)
    .where((eb) => eb.or([eb('changes', 'is not', null), eb('actor', 'is not', null)]))
    .execute();
}

/**
 * Purges the values (what was written, what it replaced) of at most `limit` entries logged before
 * `beforeIso`, oldest first, in one statement; the entries stay with their outcome, fields written and
 * units, so every count over the log is unchanged. Returns how many were purged: fewer than `limit`
 * when none older is left. Safe to run from several processes at once (an entry purged is left alone).
 */
export async function purgeLogValues(db: Kysely<Database>, beforeIso: string, purgedAtIso: string, limit: number): Promise<number> {
  const result = await db
    .updateTable('enrichment_log')
    .set({ changes: null, values_purged_at: purgedAtIso })
    .where('id', 'in', (eb) =>
      eb.selectFrom('enrichment_log').select('id').where('changes', 'is not', null).where('at', '<', beforeIso).orderBy('at').limit(limit),
    )
    .where('changes', 'is not', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
