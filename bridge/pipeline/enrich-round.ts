// Calling the target for a slice's lookups: at most `concurrency` in flight, paced per token by the
// enricher. The first 402 ends sending (the installation pauses until the quota resets), and so does an
// endpoint that timed out or a stop; a refusal (400, 401, 403) is dead at once, since retrying cannot
// help; an unavailable endpoint (429, 5xx, network, after the enricher's own retries) is retried later.
// A call we cancelled ourselves (shutdown, a lost lease) goes back untouched.
import type { Enricher } from '../../core/client/enricher.ts';
import { type BatchRun, type Candidate, type Enriched, type EnrichRound, forEachLimited } from '../batch-run.ts';

/** Enriches the candidates, paced by the enricher; stops sending at the first 402, a timeout or on shutdown. */
export async function enrichAll(
  run: BatchRun,
  enricher: Enricher,
  concurrency: number,
  object: string,
  candidates: readonly Candidate[],
  signal: AbortSignal | undefined,
): Promise<EnrichRound> {
  let quotaResetsAt: Date | null | undefined;
  let endpointTimedOut = false;
  const enriched: Enriched[] = [];
  await forEachLimited(candidates, concurrency, async (item) => {
    if (quotaResetsAt !== undefined || endpointTimedOut || signal?.aborted) return;
    const started = performance.now();
    const outcome = await enricher.enrich(item.request, { signal: run.cancel });
    const latencyMs = Math.round(performance.now() - started);
    if (outcome.kind !== 'ok' && run.cancel?.aborted) {
      // Given up by us (shutdown, lost lease), not by the endpoint: back untouched.
      run.dispose(item.work, { kind: 'release' });
    } else if (outcome.kind === 'ok') {
      enriched.push({ work: item.work, record: item.record, hash: item.hash, outcome, latencyMs, at: run.now() });
    } else if (outcome.kind === 'quota_exhausted') {
      quotaResetsAt ??= outcome.resetsAt;
    } else if (outcome.kind === 'rejected') {
      run.log(object, item.work, `failed:rejected_${outcome.status}`, { latencyMs, detail: outcome.message });
      run.dispose(item.work, { kind: 'fail', error: `enrichment refused (${outcome.status}): ${outcome.message}`, retryable: false });
    } else {
      // An endpoint that does not answer: the rest of the slice is not sent to wait for it too.
      if (outcome.timedOut === true) endpointTimedOut = true;
      run.log(object, item.work, 'failed:enrichment_unavailable', { latencyMs, detail: outcome.message });
      run.dispose(item.work, { kind: 'fail', error: `enrichment failed (${outcome.status ?? 'network'}): ${outcome.message}`, retryable: true });
    }
  });
  return { enriched, quotaResetsAt, endpointTimedOut };
}
