// From the records a slice read to the requests worth a lookup. A record is skipped, and its jobs
// completed, when the CRM no longer has it, when it is excluded (a CRM user's Exclude, or the CRM's
// do-not-enrich checkbox), when its last enrichment was undone and its identity has not changed (unless
// a CRM user asked for Enrich now), when it has no match key (a name alone never matches, so no unit is
// spent on it), or when it was enriched within the re-enrichment age with the same normalized input
// (unless the job is forced). The request's hash is that normalized input, environment included.
// A record that is no person (a business Account) is skipped and left alone. A record whose person
// asked, in the CRM itself, to be forgotten (forgetRecords) is skipped as
// suppressed, and one whose person asked not to be processed or profiled is skipped as excluded.
// Skips that say something an admin can act on (no match key, excluded, undone) are returned to have
// the record's status property written (skip-status.ts); the others are logged here.
import { type BatchRun, type Candidate, DAY_MS, type Work } from '../batch-run.ts';
import type { CrmConnector, CrmRecord } from '../connector.ts';
import { hasMatchKey, inputHash } from '../input.ts';
import { exclusion, heldByUndo } from '../record-controls.ts';
import { forgetRecords } from '../person-erasure.ts';
import { householdOf, stateHash } from './households.ts';
import type { PipelineStore } from '../store.ts';
import type { StatusSkip } from './skip-status.ts';
import type { SuppressionList } from '../../core/suppression/list.ts';

/** The records of a slice worth an enrichment, and the skips whose status is to be written on the record. */
export async function candidates(
  store: PipelineStore,
  run: BatchRun,
  connector: CrmConnector,
  object: string,
  works: readonly Work[],
  records: ReadonlyMap<string, CrmRecord>,
  suppressions?: SuppressionList,
): Promise<{ found: Candidate[]; skips: StatusSkip[] }> {
  const { installation } = run;
  const ids = works.map((w) => w.recordId);
  const states = await store.recordStates(installation.id, object, ids);
  const controls = await store.recordControls(installation.id, object, ids);
  const now = run.now();
  const found: Candidate[] = [];
  const skips: StatusSkip[] = [];
  const forgotten: { work: Work; record: CrmRecord }[] = [];
  for (const work of works) {
    const record = records.get(work.recordId);
    if (record === undefined) {
      run.log(object, work, 'skipped:record_deleted');
      run.dispose(work, { kind: 'complete' });
      continue;
    }
    if (connector.isPerson?.(object, record) === false) {
      run.log(object, work, 'skipped:not_a_person');
      run.dispose(work, { kind: 'complete' });
      continue;
    }
    const privacy = connector.privacyRequest?.(object, record) ?? null;
    if (privacy === 'forget') {
      forgotten.push({ work, record });
      continue;
    }
    if (privacy === 'do_not_process') {
      skips.push({ work, record, reason: 'excluded', detail: "the person's privacy preferences in the CRM say not to process or profile them" });
      continue;
    }
    const control = controls.get(work.recordId);
    const excluded = exclusion(connector, object, record, control);
    if (excluded !== null) {
      skips.push({ work, record, reason: 'excluded', detail: excluded.detail });
      continue;
    }
    const request = { ...connector.toRequest(object, record), id: work.recordId };
    const hash = inputHash(request, installation.environment);
    // What the record's state keeps: the input, and the household record its household section goes to.
    const kept = stateHash(hash, householdOf(connector, installation, object, record));
    if (heldByUndo(control, kept, work.enrichNow)) {
      skips.push({ work, record, reason: 'undone', detail: `undone ${control?.undoneAt ?? ''}; Enrich now, or a change of its identity, enriches it again` });
      continue;
    }
    if (!hasMatchKey(request)) {
      skips.push({ work, record, reason: 'no_match_key', detail: null });
      continue;
    }
    const state = states.get(work.recordId);
    const age = state === undefined ? Infinity : now.getTime() - Date.parse(state.enrichedAt);
    if (!work.force && state !== undefined && state.inputHash === kept && age < installation.settings.reenrichAfterDays * DAY_MS) {
      run.log(object, work, 'skipped:unchanged', { detail: `enriched ${state.enrichedAt}` });
      run.dispose(work, { kind: 'complete' });
      continue;
    }
    found.push({ work, record, hash, request });
  }
  await forget(store, run, connector, object, forgotten, suppressions);
  return { found: await withoutSuppressed(store, run, object, found, suppressions), skips };
}

/** Forgets the records whose person asked the CRM to forget them (forgetRecords), and completes their jobs. */
async function forget(
  store: PipelineStore,
  run: BatchRun,
  connector: CrmConnector,
  object: string,
  forgotten: readonly { work: Work; record: CrmRecord }[],
  suppressions: SuppressionList | undefined,
): Promise<void> {
  if (forgotten.length === 0) return;
  const done = await forgetRecords(
    { store, connector, suppressions },
    run.installation,
    object,
    forgotten.map((f) => f.record),
  );
  run.crmCalls += Math.ceil((done.blanked + done.notBlanked) / connector.maxBatch);
  for (const { work } of forgotten) {
    run.log(object, work, 'skipped:suppressed', { detail: "forgotten at the person's request (the CRM's privacy record)" });
    run.dispose(work, { kind: 'complete' });
  }
}

/**
 * The candidates less those naming a suppressed person: on the suppression list, or forgotten by this
 * installation's CRM (a privacy deletion). Each one kept carries its identifiers' keyed hashes, saved
 * with its state so an erasure by person finds it.
 */
async function withoutSuppressed(
  store: PipelineStore,
  run: BatchRun,
  object: string,
  found: readonly Candidate[],
  suppressions: SuppressionList | undefined,
): Promise<Candidate[]> {
  if (suppressions === undefined) return [...found];
  const digests = new Map(found.map((c) => [c.work.recordId, suppressions.requestDigests(c.request)]));
  const forgotten = await store.suppressedForInstallation(run.installation.id, [...digests.values()].flat());
  const kept: Candidate[] = [];
  for (const candidate of found) {
    const own = digests.get(candidate.work.recordId) ?? [];
    if (suppressions.requestSuppressed(candidate.request) || own.some((digest) => forgotten.has(digest))) {
      run.log(object, candidate.work, 'skipped:suppressed');
      run.dispose(candidate.work, { kind: 'complete' });
      continue;
    }
    run.identifiers.set(`${object}/${candidate.work.recordId}`, own);
    kept.push(candidate);
  }
  return kept;
}
