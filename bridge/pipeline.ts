// The connector-neutral middle: from a batch of queued "enrich this record" jobs of one installation to
// properties written back, with every decision recorded. Both CRM connectors go through here.
//
// For a batch: check the installation (disabled, paused, paused for a limit) → group by object →
// read the records in CRM-sized batches → per record: deleted? no match key? same input within the
// re-enrichment age? → enrich (paced per token by the enricher) → decide writes (overwrite mode,
// exclusions, minimum confidence, never empty over a value) → write in CRM-sized batches → save the
// record state and the log in one transaction → complete the jobs. The worker hands it the batch's
// `enrich` jobs (job-kinds.ts); other kinds have handlers of their own.
import type { Enricher } from '../core/client/enricher.ts';
import { type Job, type JobQueue, RETRY_BASE_MS } from './job-queue.ts';
import { retryWhileBusy } from '../core/storage/errors.ts';
import {
  BatchRun,
  type Candidate,
  DAY_MS,
  type Enriched,
  type EnrichRound,
  PAUSE_WITHOUT_RESET_MS,
  type PlannedWrite,
  type Stop,
  type Work,
  type WorksByObject,
  type WriteResult,
  chunks,
  describe,
  forEachLimited,
  groupByObject,
  holdTheRest,
  quotaPerLookup,
} from './batch-run.ts';
import { CrmError, type CrmConnector, type CrmRecord, CrmTimeoutError, type RecordUpdate, type WriteRefusal } from './connector.ts';
import { EnrichJobPayloadSchema } from './enrich-job.ts';
import { hasMatchKey, inputHash } from './input.ts';
import type { CrmValue, Installation, Outcome, StoredAnswer } from './model.ts';
import type { SecretBox } from '../core/secrets/secret-box.ts';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { type BudgetState, budgetState, nextMonthStart } from './budget.ts';
import type { EnrichmentResponse } from '../core/contract/schemas.ts';
import type { PipelineStore } from './store.ts';
import { decideWrites, fieldsFromResponse, replacedValues, staleSections } from './write-policy.ts';

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
  readonly onCallbacks?: (installation: Installation, settled: readonly SettledCallback[]) => Promise<void>;
  /** Seals the answers kept for reuse (the data folder's key); without it no answer is kept or reused. */
  readonly answerBox?: SecretBox;
}

/** A workflow's job, settled: the record's outcome and its properties as they now stand in the CRM. */
export interface SettledCallback {
  readonly callbackId: string;
  readonly object: string;
  readonly recordId: string;
  /** The record's last logged outcome in this batch; null when none was logged. */
  readonly outcome: Outcome | null;
  /** True when the job ended dead (the enrichment or the write failed for good). */
  readonly failed: boolean;
  /** The record's properties after our write (null when it could not be read). */
  readonly properties: Readonly<Record<string, CrmValue>> | null;
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
      // The spend is recorded (or the batch failed): the next batch may read the budget. A hold that
      // cannot be given back (the database away) runs out by itself.
      await this.releaseBudget(run);
    }
    await this.purgeAnswers(installation);
    await this.settle(run, jobs, workerId);
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

  /** Takes the installation's budget hold for this batch, renewed while the batch runs; false when another batch has it. */
  private async holdBudget(run: BatchRun): Promise<boolean> {
    const key = `budget:${run.installation.id}`;
    const owner = `${run.workerId}:${randomUUID()}`;
    if (!(await this.deps.store.acquireLease(key, owner, BUDGET_HOLD_MS))) return false;
    const renewal = setInterval(() => {
      this.deps.store.acquireLease(key, owner, BUDGET_HOLD_MS).catch(() => undefined);
    }, BUDGET_HOLD_MS / 3);
    renewal.unref();
    run.budgetHold = { key, owner, renewal };
    return true;
  }

  private async releaseBudget(run: BatchRun): Promise<void> {
    const hold = run.budgetHold;
    if (hold === null) return;
    run.budgetHold = null;
    clearInterval(hold.renewal);
    await this.deps.store.releaseLease(hold.key, hold.owner).catch(() => undefined);
  }

  private async settle(run: BatchRun, jobs: readonly Job[], workerId: string): Promise<void> {
    const { queue } = this.deps;
    const callbacks: SettledCallback[] = [];
    // The completed ones in one statement: a batch of 100 is one write, not 100.
    const completed = await retryWhileBusy(() =>
      queue.completeMany(
        jobs.filter((job) => run.disposals.get(job.id)?.kind === 'complete').map((job) => job.id),
        workerId,
      ),
    );
    for (const job of jobs) {
      const disposal = run.disposals.get(job.id) ?? { kind: 'fail', error: 'left unsettled by the pipeline', retryable: true };
      let final: 'done' | 'dead' | null = null;
      // A job this worker no longer holds is its new holder's to settle (and to answer a callback for).
      if (disposal.kind === 'complete') {
        if (completed.has(job.id)) final = 'done';
        else run.leaseLost += 1;
      } else if (disposal.kind === 'fail') {
        const failed = await retryWhileBusy(() => queue.fail(job.id, workerId, disposal.error, { retryable: disposal.retryable }));
        if (failed === 'dead') final = 'dead';
        if (failed === 'not_leased') run.leaseLost += 1;
      } else if (await retryWhileBusy(() => queue.release(job.id, workerId, disposal.runAt === undefined ? {} : { runAt: disposal.runAt }))) {
        run.released += 1;
      } else {
        run.leaseLost += 1;
      }
      const payload = EnrichJobPayloadSchema.safeParse(job.payload);
      if (final !== null && payload.success && payload.data.callbackId !== undefined) {
        const key = `${payload.data.object}/${payload.data.recordId}`;
        callbacks.push({
          callbackId: payload.data.callbackId,
          object: payload.data.object,
          recordId: payload.data.recordId,
          outcome: run.lastOutcome.get(key) ?? null,
          failed: final === 'dead',
          properties: run.finalProperties.get(key) ?? null,
        });
      }
    }
    if (callbacks.length > 0) await this.deps.onCallbacks?.(run.installation, callbacks);
  }

  private async run(run: BatchRun, jobs: readonly Job[], signal: AbortSignal | undefined): Promise<void> {
    const byObject = groupByObject(run, jobs);
    if (await this.heldByInstallationStatus(run, byObject)) return;
    const { installation } = run;
    let budget = await budgetState(this.deps.store, installation, this.now());
    if (budget !== null) {
      // The budget is read, spent and recorded by one batch of the installation at a time, across
      // workers and instances: two side by side would each read the whole of what is left.
      const held = await this.holdBudget(run);
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
   * Settles the whole batch without enriching when the installation is disabled or paused (by an admin,
   * or for a limit that has not reset yet); true when it did. A limit that has reset ends the pause.
   */
  private async heldByInstallationStatus(run: BatchRun, byObject: WorksByObject): Promise<boolean> {
    const { installation } = run;
    const all = [...byObject.entries()].flatMap(([object, records]) => [...records.values()].map((work) => ({ object, work })));
    if (installation.status === 'disabled' || (installation.status === 'paused' && installation.pauseReason === 'admin')) {
      const outcome = installation.status === 'disabled' ? 'skipped:installation_disabled' : 'skipped:installation_paused';
      for (const { object, work } of all) {
        run.log(object, work, outcome);
        run.dispose(work, { kind: 'complete' });
      }
      return true;
    }
    if (installation.status !== 'paused') return false;
    if (installation.pauseReason === 'budget' && !(await budgetState(this.deps.store, installation, this.now()))?.reached) {
      // The budget was raised or removed (or the month turned): carry on, with the held jobs.
      await this.deps.store.updateInstallation(installation.id, { status: 'active', pauseReason: null, pausedUntil: null });
      await this.deps.queue.reschedule(installation.id, this.now());
      return false;
    }
    const until = installation.pausedUntil === null ? null : new Date(installation.pausedUntil);
    if (until !== null && until.getTime() <= this.now().getTime()) {
      // The limit has reset: carry on, and bring the rest of the installation's jobs back.
      await this.deps.store.updateInstallation(installation.id, { status: 'active', pauseReason: null, pausedUntil: null });
      await this.deps.queue.reschedule(installation.id, this.now());
      return false;
    }
    const outcome =
      installation.pauseReason === 'crm_limit'
        ? 'skipped:crm_limit_paused'
        : installation.pauseReason === 'budget'
          ? 'skipped:budget_paused'
          : 'skipped:quota_paused';
    const runAt = until ?? new Date(this.now().getTime() + PAUSE_WITHOUT_RESET_MS);
    for (const { object, work } of all) {
      run.log(object, work, outcome, { detail: `waits until ${runAt.toISOString()}` });
      run.dispose(work, { kind: 'release', runAt });
    }
    return true;
  }

  /** Pauses the installation until `until` for a limit, and holds its queued jobs till then. */
  private async pauseForLimit(installation: Installation, reason: 'quota' | 'crm_limit' | 'budget', until: Date | null): Promise<Date> {
    const runAt = until ?? new Date(this.now().getTime() + PAUSE_WITHOUT_RESET_MS);
    await this.deps.store.updateInstallation(installation.id, {
      status: 'paused',
      pauseReason: reason,
      pausedUntil: until === null ? null : until.toISOString(),
    });
    await this.deps.queue.reschedule(installation.id, runAt);
    return runAt;
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
      return this.crmFailure(run, object, works, error);
    }
    for (const record of records.values()) run.finalProperties.set(`${object}/${record.id}`, { ...record.properties });
    const candidates = await this.candidates(run, connector, object, works, records);
    // One lookup per person: a kept answer for the same normalized request, or one looked up for an
    // earlier record of this slice, is applied without a lookup of its own.
    const { lookups, reused, followers } = await this.reuse(run, enricher, object, candidates);
    // No more lookups than the month's budget has left (a reused answer costs none).
    const allowed = run.budgetLeft === null ? lookups.length : Math.min(lookups.length, run.budgetLeft);
    const overBudget = allowed < lookups.length;
    if (run.budgetLeft !== null) run.budgetLeft -= allowed;
    const round = await this.enrichAll(run, enricher, object, lookups.slice(0, allowed), signal);
    this.keepAnswers(run, object, round.enriched);
    const enriched = [...round.enriched, ...reused, ...this.follow(run, object, round, followers, overBudget ? AbortSignal.abort() : signal)];
    // A CRM limit or rate limit on the write stops the batch as it does on a read: reading and enriching
    // the next slices would spend enrichments on records that cannot be written until then.
    const writeStop = await this.writeBack(run, connector, object, enriched);
    const unsettled = candidates.map((c) => c.work).filter((work) => !run.disposals.has(work.jobs[0]?.id ?? ''));
    if (round.quotaResetsAt !== undefined) {
      const runAt = await this.pauseForLimit(run.installation, 'quota', round.quotaResetsAt);
      for (const work of unsettled) {
        run.log(object, work, 'skipped:quota_paused', { detail: `waits until ${runAt.toISOString()}` });
        run.dispose(work, { kind: 'release', runAt });
      }
      return { kind: 'release', runAt, outcome: 'skipped:quota_paused' };
    }
    if (writeStop !== null) return writeStop;
    if (overBudget) {
      // The budget is spent: what was not looked up waits for next month (or a larger budget), as a quota pause.
      const runAt = await this.pauseForLimit(run.installation, 'budget', nextMonthStart(this.now()));
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

  /** The records of a slice worth an enrichment: not deleted, with a match key, and changed or due again. */
  private async candidates(
    run: BatchRun,
    connector: CrmConnector,
    object: string,
    works: readonly Work[],
    records: ReadonlyMap<string, CrmRecord>,
  ): Promise<Candidate[]> {
    const { installation } = run;
    const states = await this.deps.store.recordStates(
      installation.id,
      object,
      works.map((w) => w.recordId),
    );
    const now = this.now();
    const candidates: Candidate[] = [];
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
      candidates.push({ work, record, hash, request });
    }
    return candidates;
  }

  /**
   * Splits a slice's candidates into the lookups to make and the answers to reuse. A candidate is
   * answered without a lookup when the installation keeps answers, the job is not forced, and either
   * an answer kept for its input hash is younger than the re-enrichment age and of the target's current
   * data version, or an earlier candidate of the slice has the same hash (it follows that lookup).
   */
  private async reuse(
    run: BatchRun,
    enricher: Enricher,
    object: string,
    candidates: readonly Candidate[],
  ): Promise<{ lookups: Candidate[]; reused: Enriched[]; followers: Map<string, Candidate[]> }> {
    const { installation } = run;
    const box = this.deps.answerBox;
    const followers = new Map<string, Candidate[]>();
    if (box === undefined || !installation.settings.reuseAnswers) return { lookups: [...candidates], reused: [], followers };
    const now = this.now();
    const notBefore = new Date(now.getTime() - installation.settings.reenrichAfterDays * DAY_MS).toISOString();
    const reusable = candidates.filter((c) => !c.work.force);
    const kept =
      reusable.length === 0
        ? new Map<string, StoredAnswer>()
        : await this.deps.store.findAnswers(
            installation.id,
            reusable.map((c) => c.hash),
            notBefore,
          );
    // Answers an earlier slice of this batch looked up (saved with the batch, so not in the store yet).
    for (const answer of run.answers) kept.set(answer.inputHash, answer);
    // The target's data version now: the in-process service knows it; for a remote endpoint, the
    // version its newest kept answer carried stands in (its next lookup reveals a new one).
    const reported = enricher.currentDataVersion?.();
    const version = kept.size === 0 ? undefined : reported !== undefined ? reported : await this.deps.store.latestAnswerVersion(installation.id);
    const lookups: Candidate[] = [];
    const reused: Enriched[] = [];
    const looking = new Set<string>();
    for (const candidate of candidates) {
      if (candidate.work.force) {
        lookups.push(candidate);
        continue;
      }
      const answer = kept.get(candidate.hash);
      const response = answer !== undefined && answer.dataVersion === version ? openAnswer(box, answer) : undefined;
      if (answer !== undefined && response !== undefined) {
        reused.push({
          work: candidate.work,
          record: candidate.record,
          hash: candidate.hash,
          outcome: { kind: 'ok', response: { ...response, id: candidate.work.recordId }, attempts: 0, dataVersion: answer.dataVersion },
          latencyMs: null,
          at: now,
          reusedFrom: `${answer.object}/${answer.recordId}`,
        });
      } else if (looking.has(candidate.hash)) {
        followers.set(candidate.hash, [...(followers.get(candidate.hash) ?? []), candidate]);
      } else {
        looking.add(candidate.hash);
        lookups.push(candidate);
      }
    }
    return { lookups, reused, followers };
  }

  /** What this slice's lookups answered, sealed, for the next record asking the same (saved with the batch). */
  private keepAnswers(run: BatchRun, object: string, enriched: readonly Enriched[]): void {
    const box = this.deps.answerBox;
    if (box === undefined || !run.installation.settings.reuseAnswers) return;
    for (const item of enriched) {
      if (item.reusedFrom !== undefined) continue;
      run.answers.push({
        installationId: run.installation.id,
        inputHash: item.hash,
        object,
        recordId: item.work.recordId,
        sealedAnswer: box.seal(JSON.stringify(item.outcome.response), ANSWER_CONTEXT),
        dataVersion: item.outcome.dataVersion,
        answeredAt: item.at.toISOString(),
      });
    }
  }

  /**
   * The records that followed a lookup of this slice: its answer when it got one. Otherwise they go
   * back to the queue to be tried on their own, unless the round stopped (a quota pause, a timeout, a
   * shutdown), which holds them with the rest of the slice.
   */
  private follow(
    run: BatchRun,
    object: string,
    round: EnrichRound,
    followers: ReadonlyMap<string, readonly Candidate[]>,
    signal: AbortSignal | undefined,
  ): Enriched[] {
    const out: Enriched[] = [];
    const stopped = round.quotaResetsAt !== undefined || round.endpointTimedOut || signal?.aborted === true;
    for (const [hash, group] of followers) {
      const lead = round.enriched.find((item) => item.hash === hash);
      for (const candidate of group) {
        if (lead !== undefined) {
          out.push({
            work: candidate.work,
            record: candidate.record,
            hash,
            outcome: { ...lead.outcome, response: { ...lead.outcome.response, id: candidate.work.recordId } },
            latencyMs: null,
            at: lead.at,
            reusedFrom: `${object}/${lead.work.recordId}`,
          });
        } else if (!stopped) {
          run.dispose(candidate.work, { kind: 'release' });
        }
      }
    }
    return out;
  }

  /** Removes kept answers past the re-enrichment age, or all of them once the installation stops keeping any. */
  private async purgeAnswers(installation: Installation): Promise<void> {
    if (this.deps.answerBox === undefined) return;
    const { reuseAnswers, reenrichAfterDays } = installation.settings;
    const before = reuseAnswers ? new Date(this.now().getTime() - reenrichAfterDays * DAY_MS).toISOString() : '9999-12-31T23:59:59.999Z';
    await retryWhileBusy(() => this.deps.store.purgeAnswers(installation.id, before));
  }

  /** Enriches the candidates, paced by the enricher; stops sending at the first 402, a timeout or on shutdown. */
  private async enrichAll(
    run: BatchRun,
    enricher: Enricher,
    object: string,
    candidates: readonly Candidate[],
    signal: AbortSignal | undefined,
  ): Promise<EnrichRound> {
    let quotaResetsAt: Date | null | undefined;
    let endpointTimedOut = false;
    const enriched: Enriched[] = [];
    await forEachLimited(candidates, this.concurrency, async (item) => {
      if (quotaResetsAt !== undefined || endpointTimedOut || signal?.aborted) return;
      const started = performance.now();
      const outcome = await enricher.enrich(item.request, { signal: run.cancel });
      const latencyMs = Math.round(performance.now() - started);
      if (outcome.kind !== 'ok' && run.cancel?.aborted) {
        // Given up by us (shutdown, lost lease), not by the endpoint: back untouched.
        run.dispose(item.work, { kind: 'release' });
      } else if (outcome.kind === 'ok') {
        enriched.push({ work: item.work, record: item.record, hash: item.hash, outcome, latencyMs, at: this.now() });
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

  /** Decides, writes and records the enriched records of a slice. */
  private async writeBack(run: BatchRun, connector: CrmConnector, object: string, enriched: readonly Enriched[]): Promise<Stop | null> {
    const planned = await this.planWrites(run, connector, object, enriched);
    const { results, unsent, stop } = await this.sendWrites(run, connector, object, planned);
    for (const item of planned) {
      const sent = Object.keys(item.decision.properties).length > 0;
      if (!sent) {
        this.recordWritten(run, object, item);
        continue;
      }
      // Its lease was lost before the write, or the call failed: settled there, or held with the rest.
      if (unsent.has(item.work.recordId)) continue;
      const answer = results.get(item.work.recordId) ?? { ok: false, reason: 'transient', message: 'the CRM returned no result for the record' };
      if (answer.ok) this.recordWritten(run, object, item);
      else this.recordRefused(run, object, item, answer);
    }
    return stop;
  }

  /** What the write policy writes for each enriched record (overwrite mode, exclusions, stale values). */
  private async planWrites(run: BatchRun, connector: CrmConnector, object: string, enriched: readonly Enriched[]): Promise<PlannedWrite[]> {
    const { installation } = run;
    const { settings } = installation;
    const excluded = new Set(settings.excludedFields);
    const states = await this.deps.store.recordStates(
      installation.id,
      object,
      enriched.map((e) => e.work.recordId),
    );
    return enriched.map((item) => {
      const fields = fieldsFromResponse(item.outcome.response, settings.minConfidence, item.at);
      const decision = decideWrites({
        fields,
        object,
        connector,
        mode: settings.overwriteMode,
        excluded,
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
  private async sendWrites(
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
      const held = await this.deps.queue.heldBy(
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
        stop ??= await this.crmFailure(run, object, failed, error);
      }
    }
    return { results, unsent, stop };
  }

  /** A record whose values are in the CRM (or had nothing to write): its state, its log entry, done. */
  private recordWritten(run: BatchRun, object: string, item: PlannedWrite): void {
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
      inputHash: item.hash,
      written: decision.written,
    });
    const logOutcome: Outcome = fields.status === 'enriched' ? 'enriched' : fields.status === 'no_match' ? 'no_match' : 'skipped:below_min_confidence';
    run.log(object, work, logOutcome, {
      latencyMs,
      quotaConsumed: item.reusedFrom === undefined ? quotaPerLookup(run.installation) : 0,
      ...(item.reusedFrom === undefined ? {} : { reusedFrom: item.reusedFrom }),
      fieldsWritten: Object.keys(decision.properties),
      changes: replacedValues(decision.properties, item.record.properties),
    });
    run.dispose(work, { kind: 'complete' });
  }

  /** A record the CRM did not take: gone (done), refused for good (its reason logged), or to try again. */
  private recordRefused(run: BatchRun, object: string, item: PlannedWrite, result: Extract<WriteResult, { ok: false }>): void {
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

  /** A CRM call failed for these records: wait, pause, or retry, as the error says. */
  private async crmFailure(run: BatchRun, object: string, works: readonly Work[], error: unknown): Promise<Stop | null> {
    if (run.cancel?.aborted) {
      // Given up by us (shutdown past its grace, a lost lease), not by the CRM: back untouched.
      for (const work of works) run.dispose(work, { kind: 'release' });
      return { kind: 'release', outcome: null };
    }
    if (error instanceof CrmError && error.kind === 'rate_limited') {
      const runAt = error.retryAt ?? new Date(this.now().getTime() + 10_000);
      for (const work of works) run.dispose(work, { kind: 'release', runAt });
      // The rest of the batch waits as well: calling again before retryAt only earns more refusals.
      return { kind: 'release', runAt, outcome: null };
    }
    if (error instanceof CrmError && error.kind === 'limit_exhausted') {
      const runAt = await this.pauseForLimit(run.installation, 'crm_limit', error.retryAt);
      for (const work of works) {
        run.log(object, work, 'skipped:crm_limit_paused', { detail: `${error.message}; waits until ${runAt.toISOString()}` });
        run.dispose(work, { kind: 'release', runAt });
      }
      return { kind: 'release', runAt, outcome: 'skipped:crm_limit_paused' };
    }
    const kind = error instanceof CrmError ? error.kind : 'transient';
    for (const work of works) {
      run.log(object, work, `failed:crm_${kind}`, { detail: describe(error) });
      run.dispose(work, { kind: 'fail', error: `CRM ${kind}: ${describe(error)}`, retryable: true });
    }
    if (error instanceof CrmTimeoutError) {
      // A CRM that does not answer: the rest of the batch waits as long as these jobs' first retry
      // instead of timing out slice after slice, which would hold this worker for many timeouts.
      return { kind: 'release', runAt: new Date(this.now().getTime() + RETRY_BASE_MS), outcome: null };
    }
    return null;
  }
}

/** The log's outcome for a record the CRM did not take (not_found is logged as skipped:record_deleted). */
/**
 * How long a batch's hold on its installation's budget lasts unless renewed (a third of it at a time):
 * the hold of a process that died frees the budget for the other workers after this.
 */
const BUDGET_HOLD_MS = 60_000;
/** A batch that found the budget held by another runs again after this, without an attempt counted. */
const BUDGET_WAIT_MS = 2_000;

const REFUSAL_OUTCOMES: Record<Exclude<WriteRefusal, 'not_found'>, Outcome> = {
  rejected: 'failed:crm_rejected',
  validation: 'failed:crm_validation',
  sensitive: 'failed:crm_sensitive',
  transient: 'failed:crm_write',
};

/** The SecretBox context kept answers are sealed under: they open nowhere else. */
const ANSWER_CONTEXT = 'reusable-answer';

const KeptResponseSchema = z.looseObject({});

/** A kept answer's response, or undefined when it cannot be opened (sealed under another key). */
function openAnswer(box: SecretBox, answer: StoredAnswer): EnrichmentResponse | undefined {
  try {
    return KeptResponseSchema.parse(JSON.parse(box.open(answer.sealedAnswer, ANSWER_CONTEXT))) as EnrichmentResponse;
  } catch {
    return undefined;
  }
}
