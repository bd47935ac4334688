// The connector-neutral middle: from a batch of queued "enrich this record" jobs of one installation to
// properties written back, with every decision recorded. Both CRM connectors go through here.
//
// For a batch: check the installation (disabled, paused, paused for a limit) → hold its budget, if it
// has one → group by object → read the records in CRM-sized batches → per record: deleted? no match key?
// same input within the re-enrichment age? → reuse a kept answer, or enrich (paced per token by the
// enricher) → decide writes (overwrite mode, exclusions, minimum confidence, never empty over a value) →
// write in CRM-sized batches → save the record state and the log in one transaction → complete the jobs.
// The worker hands it the batch's `enrich` jobs (job-kinds.ts); other kinds have handlers of their own.
// Each step lives in pipeline/, this file keeps their order:
//   pipeline/pauses.ts        a disabled or paused installation, and pausing one for a limit
//   pipeline/budget-hold.ts   one batch of an installation with a budget at a time
//   pipeline/candidates.ts    the records worth a lookup, as requests (excluded and undone records skipped)
//   pipeline/skip-status.ts   the status property of a record skipped for no match key, excluded or undone
//   pipeline/answer-reuse.ts  one lookup per person: kept answers, followers of a lookup, purging
//   pipeline/households.ts    household records (NPSP household Accounts): one answer each, written once
//   pipeline/enrich-round.ts  calling the target
//   pipeline/write-back.ts    the write policy, the CRM writes, the record's state and log entry
//   pipeline/crm-failure.ts   what a failed CRM call does to the batch
//   pipeline/settle.ts        completing, failing or releasing the jobs; the workflows' callbacks
import type { Enricher } from '../core/client/enricher.ts';
import type { SecretBox } from '../core/secrets/secret-box.ts';
import { retryWhileBusy } from '../core/storage/errors.ts';
import { BatchRun, chunks, describe, groupByObject, holdTheRest, type Stop, type Work } from './batch-run.ts';
import { type BudgetState, budgetState, nextMonthStart } from './budget.ts';
import type { CrmConnector, CrmRecord } from './connector.ts';
import { type Job, type JobQueue, RETRY_BASE_MS } from './job-queue.ts';
import type { Installation } from './model.ts';
import { followLookups, keepAnswers, purgeAnswers, reuseAnswers } from './pipeline/answer-reuse.ts';
import { BUDGET_WAIT_MS, holdBudget, releaseBudget } from './pipeline/budget-hold.ts';
import { candidates } from './pipeline/candidates.ts';
import { crmFailure } from './pipeline/crm-failure.ts';
import { enrichAll } from './pipeline/enrich-round.ts';
import { householdAliases } from './pipeline/households.ts';
import { heldByInstallationStatus, pauseForLimit } from './pipeline/pauses.ts';
import { type CallbackHook, settle } from './pipeline/settle.ts';
import { writeSkipStatus } from './pipeline/skip-status.ts';
import { writeBack } from './pipeline/write-back.ts';
import type { PipelineStore } from './store.ts';
import type { SuppressionList } from '../core/suppression/list.ts';

export type { SettledCallback } from './pipeline/settle.ts';

export interface PipelineDeps {
  readonly store: PipelineStore;
  readonly queue: JobQueue;
  /** The connector for an installation (its CRM client, credentials and pacing). */
  readonly connectorFor: (installation: Installation) => Promise<CrmConnector>;
  /** The enricher for an installation (in-process or HTTP, paced per token). */
  readonly enricherFor: (installation: Installation) => Promise<Enricher>;
  readonly now?: () => Date;
  /** Enrichments in flight per batch; the enricher's limiter does the pacing. */
  readonly concurrency?: number;
  /**
   * Told about the jobs that carried a callbackId once they are settled for good (completed, or dead):
   * the connector answers the waiting workflow. Failures here are the hook's to handle.
   */
  readonly onCallbacks?: CallbackHook;
  /** Seals the answers kept for reuse (the data folder's key); without it no answer is kept or reused. */
  readonly answerBox?: SecretBox;
  /** Who is never enriched (the suppression list), and how a record's identifiers are hashed to be found by an erasure. */
  readonly suppressions?: SuppressionList;
}

export interface BatchSummary {
  readonly installationId: string;
  readonly jobs: number;
  readonly outcomes: Readonly<Record<string, number>>;
  /** Jobs given back untouched (shutdown) or deferred (pause). */
  readonly released: number;
  readonly crmCalls: number;
  /**
   * Jobs this worker no longer held when it came to write or settle them (its lease ran out and another
   * worker may have them): not written, or written but left to their new holder to settle.
   */
  readonly leaseLost: number;
  /** The installation's monthly budget after the batch, when it has one (the worker warns from 80 %). */
  readonly budget?: BudgetState;
}

/** How a batch is run: its stop signals, as the worker gives them. */
export interface BatchSignals {
  /** Stop starting work: what is not yet sent for enrichment is released untouched. */
  readonly stop?: AbortSignal;
  /** Give up what is in flight too (outbound calls are aborted): a shutdown past its grace, a lost lease. */
  readonly cancel?: AbortSignal;
}

export class Pipeline {
  private readonly now: () => Date;
  private readonly concurrency: number;

  constructor(private readonly deps: PipelineDeps) {
    this.now = deps.now ?? (() => new Date());
    this.concurrency = deps.concurrency ?? 8;
  }

  /**
   * Processes jobs leased by `workerId` (one installation's, as the queue hands them out). With
   * `signals.stop` aborted, records not yet sent for enrichment are released untouched; what is in
   * flight finishes and is written, unless `signals.cancel` aborts it too (then it is released).
   */
  async processBatch(jobs: readonly Job[], workerId: string, signals: BatchSignals | AbortSignal = {}): Promise<BatchSummary> {
    const { stop: signal, cancel } = signals instanceof AbortSignal ? { stop: signals, cancel: undefined } : signals;
    const first = jobs[0];
    if (first === undefined) return { installationId: '', jobs: 0, outcomes: {}, released: 0, crmCalls: 0, leaseLost: 0 };
    const installation = await this.deps.store.findInstallation(first.installationId);
    if (installation === undefined) {
      // Disconnected since the jobs were queued: nothing to enrich for, nobody to log for. Settled, not
      // dead: a disconnected installation's jobs are not the operator's to list or retry.
      await retryWhileBusy(() =>
        this.deps.queue.completeMany(
          jobs.map((job) => job.id),
          workerId,
        ),
      );
      return {
        installationId: first.installationId,
        jobs: jobs.length,
        outcomes: { 'dropped:disconnected': jobs.length },
        released: 0,
        crmCalls: 0,
        leaseLost: 0,
      };
    }
    const run = new BatchRun(installation, workerId, this.now, cancel);
    try {
      await this.run(run, jobs, signal);
    } catch (error) {
      // A fault of ours or of the database: every job not yet settled is retried later.
      for (const job of jobs) {
        if (!run.disposals.has(job.id)) run.disposals.set(job.id, { kind: 'fail', error: describe(error), retryable: true });
      }
    }
    // The CRM has been written: what we did must be recorded, so a locked database is waited out
    // (asynchronously) rather than leaving the batch to its lease and a second round of writes.
    try {
      await retryWhileBusy(() => this.deps.store.saveOutcomes(run.states, run.entries, run.answers));
    } finally {
      // The spend is recorded (or the batch failed): the next batch may read the budget.
      await releaseBudget(this.deps.store, run);
    }
    await purgeAnswers(this.deps.store, this.deps.answerBox, installation, this.now);
    await settle(this.deps.queue, this.deps.onCallbacks, run, jobs, workerId);
    const budget = await budgetState(this.deps.store, installation, this.now());
    return {
      installationId: installation.id,
      jobs: jobs.length,
      outcomes: run.outcomes,
      released: run.released,
      crmCalls: run.crmCalls,
      leaseLost: run.leaseLost,
      ...(budget === null ? {} : { budget }),
    };
  }

  private async run(run: BatchRun, jobs: readonly Job[], signal: AbortSignal | undefined): Promise<void> {
    const byObject = groupByObject(run, jobs);
    if (await heldByInstallationStatus(this.deps, run, byObject)) return;
    const { installation } = run;
    let budget = await budgetState(this.deps.store, installation, this.now());
    if (budget !== null) {
      // The budget is read, spent and recorded by one batch of the installation at a time, across
      // workers and instances: two side by side would each read the whole of what is left.
      const held = await holdBudget(this.deps.store, run);
      if (!held) {
        holdTheRest(run, byObject, { kind: 'release', runAt: new Date(Date.now() + BUDGET_WAIT_MS), outcome: null });
        return;
      }
      // Read again under the hold: the batch that had it may have recorded its spend just now.
      budget = await budgetState(this.deps.store, installation, this.now());
    }
    run.budgetLeft = budget === null ? null : budget.left;
    const connector = await this.deps.connectorFor(installation);
    const enricher = await this.deps.enricherFor(installation);
    const objects = installation.settings.objects.length > 0 ? installation.settings.objects : connector.defaultObjects;
    for (const [object, records] of byObject) {
      const works = [...records.values()];
      if (!objects.includes(object)) {
        for (const work of works) {
          run.log(object, work, 'skipped:object_not_enabled');
          run.dispose(work, { kind: 'complete' });
        }
        continue;
      }
      for (const slice of chunks(works, connector.maxBatch)) {
        const stop = await this.runSlice(run, connector, enricher, object, slice, signal);
        if (stop !== null) {
          holdTheRest(run, byObject, stop);
          return;
        }
      }
    }
  }

  /**
   * One CRM-sized slice of records of one object: read, choose, enrich, write. Returns a stop when the
   * rest of the batch must not go on: a limit paused the installation, or the worker is shutting down.
   */
  private async runSlice(
    run: BatchRun,
    connector: CrmConnector,
    enricher: Enricher,
    object: string,
    works: readonly Work[],
    signal: AbortSignal | undefined,
  ): Promise<Stop | null> {
    if (signal?.aborted) {
      for (const work of works) run.dispose(work, { kind: 'release' });
      return { kind: 'release', outcome: null };
    }
    let records: Map<string, CrmRecord>;
    try {
      run.crmCalls += 1;
      records = await connector.read(
        object,
        works.map((w) => w.recordId),
        { signal: run.cancel },
      );
    } catch (error) {
      return crmFailure(this.deps, run, object, works, error);
    }
    for (const record of records.values()) run.finalProperties.set(`${object}/${record.id}`, { ...record.properties });
    const { found: wanted, skips } = await candidates(this.deps.store, run, connector, object, works, records, this.deps.suppressions);
    // Skips an admin can act on (no match key, excluded, undone) set the record's status property.
    await writeSkipStatus(this.deps, run, connector, object, skips);
    // One lookup per person: a kept answer for the same normalized request, or one looked up for an
    // earlier record of this slice, is applied without a lookup of its own.
    // A household member may take the household's answer instead (households.ts).
    const aliases = await householdAliases(this.deps.store, run, connector, object, wanted);
    const { lookups, reused, followers } = await reuseAnswers(this.deps.store, this.deps.answerBox, run, enricher, wanted, aliases);
    // No more lookups than the month's budget has left (a reused answer costs none).
    const allowed = run.budgetLeft === null ? lookups.length : Math.min(lookups.length, run.budgetLeft);
    const overBudget = allowed < lookups.length;
    if (run.budgetLeft !== null) run.budgetLeft -= allowed;
    const round = await enrichAll(run, enricher, this.concurrency, object, lookups.slice(0, allowed), signal);
    keepAnswers(this.deps.answerBox, run, object, round.enriched);
    const enriched = [...round.enriched, ...reused, ...followLookups(run, object, round, followers, overBudget ? AbortSignal.abort() : signal)];
    // A CRM limit or rate limit on the write stops the batch as it does on a read: reading and enriching
    // the next slices would spend enrichments on records that cannot be written until then.
    const writeStop = await writeBack(this.deps, run, connector, object, enriched);
    const unsettled = wanted.map((c) => c.work).filter((work) => !run.disposals.has(work.jobs[0]?.id ?? ''));
    if (round.quotaResetsAt !== undefined) {
      const runAt = await pauseForLimit(this.deps, run, 'quota', round.quotaResetsAt);
      for (const work of unsettled) {
        run.log(object, work, 'skipped:quota_paused', { detail: `waits until ${runAt.toISOString()}` });
        run.dispose(work, { kind: 'release', runAt });
      }
      return { kind: 'release', runAt, outcome: 'skipped:quota_paused' };
    }
    if (writeStop !== null) return writeStop;
    if (overBudget) {
      // The budget is spent: what was not looked up waits for next month (or a larger budget), as a quota pause.
      const runAt = await pauseForLimit(this.deps, run, 'budget', nextMonthStart(this.now()));
      for (const work of unsettled) {
        run.log(object, work, 'skipped:budget_paused', { detail: `the month's budget is spent; waits until ${runAt.toISOString()} or a larger budget` });
        run.dispose(work, { kind: 'release', runAt });
      }
      return { kind: 'release', runAt, outcome: 'skipped:budget_paused' };
    }
    if (round.endpointTimedOut) {
      // What was not sent waits as long as the timed-out records' first retry, and so does the rest of the batch.
      const runAt = new Date(this.now().getTime() + RETRY_BASE_MS);
      for (const work of unsettled) run.dispose(work, { kind: 'release', runAt });
      return { kind: 'release', runAt, outcome: null };
    }
    if (signal?.aborted) {
      for (const work of unsettled) run.dispose(work, { kind: 'release' });
      return { kind: 'release', outcome: null };
    }
    return null;
  }
}
