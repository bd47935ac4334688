// Writing the answers back. The write policy decides each record's properties (overwrite mode,
// exclusions, minimum confidence, never empty over a value, stale values of another person); a scheduled
// refresh that changes nothing but our status properties writes nothing. Writes go out in CRM-sized
// calls, each only once the lease on its jobs is checked, so a worker whose lease ran out never writes
// what the jobs' new holder writes too. A record written (or with nothing to write) has its state and log
// entry recorded and its jobs completed; one the CRM refused is logged by reason (a deleted record is
// done, a transient refusal retried, any other dead).
import { type BatchPorts, type BatchRun, chunks, type Enriched, type PlannedWrite, quotaPerLookup, type Stop, type WriteResult } from '../batch-run.ts';
import type { CrmConnector, RecordUpdate, WriteRefusal } from '../connector.ts';
import type { Outcome } from '../model.ts';
import { decideWrites, fieldsFromResponse, replacedValues, staleSections } from '../write-policy.ts';
import { crmFailure } from './crm-failure.ts';
import { householdOf, keysKeptOffRecord, stateHash, writeHouseholds } from './households.ts';

/** The log's outcome for a record the CRM did not take (not_found is logged as skipped:record_deleted). */
const REFUSAL_OUTCOMES: Record<Exclude<WriteRefusal, 'not_found'>, Outcome> = {
  rejected: 'failed:crm_rejected',
  validation: 'failed:crm_validation',
  sensitive: 'failed:crm_sensitive',
  transient: 'failed:crm_write',
};

/** Decides, writes and records the enriched records of a slice. */
export async function writeBack(
  ports: BatchPorts,
  run: BatchRun,
  connector: CrmConnector,
  object: string,
  enriched: readonly Enriched[],
): Promise<Stop | null> {
  const all = await planWrites(ports, run, connector, object, enriched);
  // Household records first (an NPSP household Account): a person whose household's write failed waits
  // with it, their own write unsent.
  const households = await writeHouseholds(ports, run, connector, object, all);
  const planned = all.filter((item) => !households.failed.has(item.work.recordId));
  const { results, unsent, stop } = await sendWrites(ports, run, connector, object, planned);
  for (const item of planned) {
    const note = households.notes.get(item.work.recordId);
    const sent = Object.keys(item.decision.properties).length > 0;
    if (!sent) {
      recordWritten(run, connector, object, item, note);
      continue;
    }
    // Its lease was lost before the write, or the call failed: settled there, or held with the rest.
    if (unsent.has(item.work.recordId)) continue;
    const answer = results.get(item.work.recordId) ?? { ok: false, reason: 'transient', message: 'the CRM returned no result for the record' };
    if (answer.ok) recordWritten(run, connector, object, item, note);
    else recordRefused(run, object, item, answer);
  }
  return households.stop ?? stop;
}

/** What the write policy writes for each enriched record (overwrite mode, exclusions, stale values). */
async function planWrites(ports: BatchPorts, run: BatchRun, connector: CrmConnector, object: string, enriched: readonly Enriched[]): Promise<PlannedWrite[]> {
  const { installation } = run;
  const { settings } = installation;
  const excluded = new Set(settings.excludedFields);
  const states = await ports.store.recordStates(
    installation.id,
    object,
    enriched.map((e) => e.work.recordId),
  );
  return enriched.map((item) => {
    const fields = fieldsFromResponse(item.outcome.response, settings.minConfidence, item.at);
    // Household fields on the household record only: the person's record does not take them.
    const offRecord = keysKeptOffRecord(installation, householdOf(connector, installation, object, item.record), fields.values.keys());
    const decision = decideWrites({
      fields,
      object,
      connector,
      mode: settings.overwriteMode,
      excluded: offRecord.size === 0 ? excluded : new Set([...excluded, ...offRecord]),
      current: item.record.properties,
      lastWritten: states.get(item.work.recordId)?.written ?? {},
      // What we wrote for the person the record matched before, if it now matches nobody or someone else.
      stale: staleSections(states.get(item.work.recordId), item.outcome.response),
    });
    // A scheduled refresh whose answer changed nothing on the record writes nothing, not even our
    // status properties (the enrichment time): no CRM call, no change event.
    if (item.work.refreshOnly && decision.keys.every((key) => key.startsWith('status.'))) {
      return { ...item, fields, decision: { properties: {}, keys: [], written: { ...(states.get(item.work.recordId)?.written ?? {}) } } };
    }
    return { ...item, fields, decision };
  });
}

/**
 * Sends the planned writes in CRM-sized calls, each after checking the lease. `unsent`: the records
 * whose lease was lost (released here) or whose call failed (settled by crmFailure, or, once a stop is
 * set, left to be held with the rest of the batch): they have no result.
 */
async function sendWrites(
  ports: BatchPorts,
  run: BatchRun,
  connector: CrmConnector,
  object: string,
  planned: readonly PlannedWrite[],
): Promise<{ results: Map<string, WriteResult>; unsent: Set<string>; stop: Stop | null }> {
  const results = new Map<string, WriteResult>();
  const unsent = new Set<string>();
  let stop: Stop | null = null;
  const updates: RecordUpdate[] = planned
    .filter((p) => Object.keys(p.decision.properties).length > 0)
    .map((p) => ({ id: p.work.recordId, properties: p.decision.properties }));
  for (const slice of chunks(updates, connector.maxBatch)) {
    const sliceIds = new Set(slice.map((u) => u.id));
    const sliceWorks = planned.filter((p) => sliceIds.has(p.work.recordId)).map((p) => p.work);
    // The lease is checked just before the write: a worker whose lease ran out (a renewal came too
    // late, and another worker may have the jobs now) must not write what the new holder writes too.
    const held = await ports.queue.heldBy(
      sliceWorks.flatMap((w) => w.jobs.map((j) => j.id)),
      run.workerId,
    );
    const lost = new Set(sliceWorks.filter((w) => w.jobs.some((j) => !held.has(j.id))).map((w) => w.recordId));
    for (const work of sliceWorks) {
      if (!lost.has(work.recordId)) continue;
      run.dispose(work, { kind: 'release' });
      unsent.add(work.recordId);
    }
    const sending = slice.filter((u) => !lost.has(u.id));
    if (sending.length === 0) continue;
    try {
      run.crmCalls += 1;
      for (const result of await connector.write(object, sending, { signal: run.cancel })) {
        results.set(result.id, result.ok ? { ok: true } : { ok: false, reason: result.reason, message: result.message });
      }
    } catch (error) {
      // The enrichment is spent either way; the records go back for the write to be tried again.
      const failed = sliceWorks.filter((w) => !lost.has(w.recordId));
      for (const work of failed) unsent.add(work.recordId);
      stop ??= await crmFailure(ports, run, object, failed, error);
    }
  }
  return { results, unsent, stop };
}

/** A record whose values are in the CRM (or had nothing to write): its state, its log entry, done. */
function recordWritten(run: BatchRun, connector: CrmConnector, object: string, item: PlannedWrite, note: string | undefined): void {
  const { work, fields, decision, outcome, latencyMs } = item;
  const response = outcome.response;
  const finalKey = `${object}/${work.recordId}`;
  run.finalProperties.set(finalKey, { ...(run.finalProperties.get(finalKey) ?? {}), ...decision.properties });
  run.states.push({
    installationId: run.installation.id,
    object,
    recordId: work.recordId,
    householdMatched: response.household != null,
    careerMatched: response.career != null,
    windfallId: response.household?.windfall_id ?? null,
    confidence: response.household?.confidence ?? response.career?.confidence ?? null,
    enrichedAt: item.at.toISOString(),
    // The household record it went to is part of the input: a person moved to another household is enriched again.
    inputHash: stateHash(item.hash, householdOf(connector, run.installation, object, item.record)),
    written: decision.written,
    dataVersion: outcome.dataVersion,
    careerConfidence: response.career?.confidence ?? null,
    ...identifiersOf(run, finalKey),
  });
  const logOutcome: Outcome = fields.status === 'enriched' ? 'enriched' : fields.status === 'no_match' ? 'no_match' : 'skipped:below_min_confidence';
  run.log(object, work, logOutcome, {
    latencyMs,
    quotaConsumed: item.reusedFrom === undefined ? quotaPerLookup(run.installation) : 0,
    ...(item.reusedFrom === undefined ? {} : { reusedFrom: item.reusedFrom }),
    fieldsWritten: Object.keys(decision.properties),
    changes: replacedValues(decision.properties, item.record.properties),
    ...(note === undefined ? {} : { detail: note }),
  });
  run.dispose(work, { kind: 'complete' });
}

/** A record the CRM did not take: gone (done), refused for good (its reason logged), or to try again. */
function recordRefused(run: BatchRun, object: string, item: PlannedWrite, result: Extract<WriteResult, { ok: false }>): void {
  const extra = { latencyMs: item.latencyMs, quotaConsumed: item.reusedFrom === undefined ? quotaPerLookup(run.installation) : 0 };
  if (result.reason === 'not_found') {
    run.log(object, item.work, 'skipped:record_deleted', extra);
    run.dispose(item.work, { kind: 'complete' });
    return;
  }
  const retryable = result.reason === 'transient';
  run.log(object, item.work, REFUSAL_OUTCOMES[result.reason], { ...extra, detail: result.message });
  run.dispose(item.work, { kind: 'fail', error: `CRM write ${result.reason}: ${result.message}`, retryable });
}

/** The identifiers' keyed hashes the candidates step found for the record, when it did. */
function identifiersOf(run: BatchRun, key: string): { identifiers?: readonly string[] } {
  const identifiers = run.identifiers.get(key);
  return identifiers === undefined ? {} : { identifiers };
}
