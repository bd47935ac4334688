// From the records a slice read to the requests worth a lookup. A record is skipped, and its jobs
// completed, when the CRM no longer has it, when it has no match key (a name alone never matches, so no
// unit is spent on it), or when it was enriched within the re-enrichment age with the same normalized
// input (unless the job is forced). The request's hash is that normalized input, environment included.
import { type BatchRun, type Candidate, DAY_MS, type Work } from '../batch-run.ts';
import type { CrmConnector, CrmRecord } from '../connector.ts';
import { hasMatchKey, inputHash } from '../input.ts';
import type { RecordStateStore } from '../store.ts';

/** The records of a slice worth an enrichment: not deleted, with a match key, and changed or due again. */
export async function candidates(
  store: RecordStateStore,
  run: BatchRun,
  connector: CrmConnector,
  object: string,
  works: readonly Work[],
  records: ReadonlyMap<string, CrmRecord>,
): Promise<Candidate[]> {
  const { installation } = run;
  const states = await store.recordStates(
    installation.id,
    object,
    works.map((w) => w.recordId),
  );
  const now = run.now();
  const found: Candidate[] = [];
  for (const work of works) {
    const record = records.get(work.recordId);
    if (record === undefined) {
      run.log(object, work, 'skipped:record_deleted');
      run.dispose(work, { kind: 'complete' });
      continue;
    }
    const request = { ...connector.toRequest(object, record), id: work.recordId };
    if (!hasMatchKey(request)) {
      run.log(object, work, 'skipped:no_match_key');
      run.dispose(work, { kind: 'complete' });
      continue;
    }
    const hash = inputHash(request, installation.environment);
    const state = states.get(work.recordId);
    const age = state === undefined ? Infinity : now.getTime() - Date.parse(state.enrichedAt);
    if (!work.force && state !== undefined && state.inputHash === hash && age < installation.settings.reenrichAfterDays * DAY_MS) {
      run.log(object, work, 'skipped:unchanged', { detail: `enriched ${state.enrichedAt}` });
      run.dispose(work, { kind: 'complete' });
      continue;
    }
    found.push({ work, record, hash, request });
  }
  return found;
}
