// The status on the record for a skip: every outcome that leaves a record we could
// write tells the CRM why, in the status property (`status.enrichment_status`), so an admin can build a
// list of "could not be enriched: no e-mail, phone or address" or of excluded records. Written for
// `skipped:no_match_key` (`no_match_key`), `skipped:excluded` (`excluded`) and `skipped:undone`
// (`undone`), only when the property does not already hold it (no write, no change event otherwise) and
// not when an installation excludes the status field. Not written: `skipped:unchanged` (the status of the
// enrichment it refers to stands), `skipped:record_deleted` (nothing to write to),
// `skipped:object_not_enabled` (we write nothing to an object the admin did not enable), the pauses
// (`installation_paused`, `installation_disabled`, `quota_paused`, `crm_limit_paused`, `budget_paused`:
// the records are not read, or wait to be enriched), and `failed:*` (the CRM or the enricher refused;
// a status write would fail the same way or hide a retry). `skipped:below_min_confidence` writes its own
// status with the enrichment (write-back.ts). A status write the CRM refuses is not retried: the skip is
// logged with what happened, and the jobs completed.
import { type BatchPorts, type BatchRun, chunks, describe, type Work } from '../batch-run.ts';
import type { CrmConnector, CrmRecord, RecordUpdate } from '../connector.ts';
import type { CrmValue, SkipReason } from '../model.ts';
import { replacedValues, sameCrmValue } from '../write-policy.ts';

export type StatusSkipReason = Extract<SkipReason, 'no_match_key' | 'excluded' | 'undone'>;

/** A record skipped for a reason its status property tells. */
export interface StatusSkip {
  readonly work: Work;
  readonly record: CrmRecord;
  readonly reason: StatusSkipReason;
  readonly detail: string | null;
}

/** The status property and the value a skip sets there; null when nothing is to be written. */
export function statusUpdate(
  run: BatchRun,
  connector: Pick<CrmConnector, 'propertyFor' | 'formatValue'>,
  object: string,
  record: CrmRecord,
  reason: StatusSkipReason,
): Record<string, CrmValue> | null {
  if (run.installation.settings.excludedFields.includes('status.enrichment_status')) return null;
  const property = connector.propertyFor(object, 'status.enrichment_status');
  if (property === null) return null;
  const value = connector.formatValue('status.enrichment_status', reason);
  if (value === null || sameCrmValue(record.properties[property], value)) return null;
  return { [property]: value };
}

/** Writes the skips' status (after a lease check), logs each skip with what was written, completes their jobs. */
export async function writeSkipStatus(ports: BatchPorts, run: BatchRun, connector: CrmConnector, object: string, skips: readonly StatusSkip[]): Promise<void> {
  const updates = new Map<string, Record<string, CrmValue>>();
  for (const skip of skips) {
    const properties = statusUpdate(run, connector, object, skip.record, skip.reason);
    if (properties !== null) updates.set(skip.work.recordId, properties);
  }
  const outcome = new Map<string, { written: boolean; error?: string }>();
  for (const slice of chunks(
    skips.filter((s) => updates.has(s.work.recordId)),
    connector.maxBatch,
  )) {
    const held = await ports.queue.heldBy(
      slice.flatMap((s) => s.work.jobs.map((j) => j.id)),
      run.workerId,
    );
    const sending: RecordUpdate[] = [];
    for (const skip of slice) {
      if (skip.work.jobs.every((j) => held.has(j.id))) sending.push({ id: skip.work.recordId, properties: updates.get(skip.work.recordId) ?? {} });
      else outcome.set(skip.work.recordId, { written: false, error: 'lease lost' });
    }
    if (sending.length === 0) continue;
    try {
      run.crmCalls += 1;
      for (const result of await connector.write(object, sending, { signal: run.cancel })) {
        outcome.set(result.id, result.ok ? { written: true } : { written: false, error: `${result.reason}: ${result.message}` });
      }
    } catch (error) {
      for (const update of sending) outcome.set(update.id, { written: false, error: describe(error) });
    }
  }
  for (const skip of skips) {
    const properties = updates.get(skip.work.recordId);
    const result = outcome.get(skip.work.recordId);
    if (result?.error === 'lease lost') {
      // Its new holder logs and settles it.
      run.dispose(skip.work, { kind: 'release' });
      continue;
    }
    const written = properties !== undefined && result?.written === true;
    const detail = [skip.detail, properties !== undefined && result?.written !== true ? `status not written (${result?.error ?? 'no result'})` : null]
      .filter((part): part is string => part !== null)
      .join('; ');
    run.log(object, skip.work, `skipped:${skip.reason}`, {
      ...(detail === '' ? {} : { detail }),
      ...(written ? { fieldsWritten: Object.keys(properties), changes: replacedValues(properties, skip.record.properties) } : {}),
    });
    if (written) {
      const key = `${object}/${skip.work.recordId}`;
      run.finalProperties.set(key, { ...(run.finalProperties.get(key) ?? {}), ...properties });
    }
    run.dispose(skip.work, { kind: 'complete' });
  }
}
