// A backfill started from the console: the same plan and enqueue as the command line
// (backfill.ts), run by the job queue's workers instead of a terminal, with where it stands kept in the
// `backfill_runs` table so any instance can show it.
//
// A run is first an estimate (a `backfill.estimate` job reads the CRM's records and counts; nothing is
// queued), which the admin confirms (a `backfill.run` job reads again from the same place and enqueues
// page by page, saving the CRM cursor after each as the command line does). The enrichments it queues
// carry the run's id as their job group, so the console counts how many are done and a cancel removes
// those still queued. A worker that dies mid-run leaves its job to be delivered again: the run then
// resumes at the last cursor saved, as `enrichbridge backfill` does after an interruption.
import { loggableMessage } from '../core/observe/loggable-errors.ts';
import type { Kysely, Selectable } from 'kysely';
import { ulid } from 'ulid';
import { z } from 'zod';
import { type BackfillProgress, BackfillRecordIdError, planBackfill, runBackfill } from './backfill.ts';
import type { CrmBackfill } from './crm-module.ts';
import type { Installations } from './installations.ts';
import type { Job, JobQueue, JobState, NewJob } from './job-queue.ts';
import type { Installation } from './model.ts';
import type { BackfillRunsTable, PipelineDatabase as Database } from './schema.ts';
import type { PipelineStore } from './store.ts';

export const BACKFILL_ESTIMATE_JOB = 'backfill.estimate';
export const BACKFILL_RUN_JOB = 'backfill.run';

/**
 * estimating → estimated → running → enqueued; cancelled from any of the first three or from enqueued
 * (its queued enrichments removed); failed when the CRM cannot be read at all.
 */
export const BACKFILL_RUN_STATES = ['estimating', 'estimated', 'running', 'enqueued', 'cancelled', 'failed'] as const;
export type BackfillRunState = (typeof BACKFILL_RUN_STATES)[number];
const stateColumn = z.enum(BACKFILL_RUN_STATES);
const flagsColumn = z.record(z.string(), z.boolean());

export interface BackfillRun {
  readonly id: string;
  readonly installationId: string;
  readonly object: string;
  readonly flags: Readonly<Record<string, boolean>>;
  readonly limit: number | null;
  readonly restart: boolean;
  readonly state: BackfillRunState;
  /** The estimate started where an earlier backfill had stopped. */
  readonly resumed: boolean;
  readonly scanned: number;
  readonly withMatchKey: number;
  readonly upToDate: number;
  readonly toEnrich: number;
  readonly quotaUnits: number;
  /** Records read so far by the phase under way. */
  readonly read: number;
  readonly enqueued: number;
  readonly error: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly confirmedAt: string | null;
}

/** A run's enrichments and its own job, by state, from the queue. */
export interface RunJobs {
  readonly enrichments: Partial<Record<JobState, number>>;
  readonly control: Partial<Record<JobState, number>>;
}

/** The group of a run's own estimate and run jobs (its enrichments' group is the run id). */
export const controlGroup = (runId: string): string => `${runId}:control`;

export class BackfillRunError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackfillRunError';
  }
}

/** Thrown between pages when the run was cancelled: the job ends there, done. */
class RunCancelled extends Error {}

function toRun(row: Selectable<BackfillRunsTable>): BackfillRun {
  return {
    id: row.id,
    installationId: row.installation_id,
    object: row.object,
    flags: flagsColumn.parse(JSON.parse(row.flags)),
    limit: row.record_limit === null ? null : Number(row.record_limit),
    restart: Number(row.restart) === 1,
    state: stateColumn.parse(row.state),
    resumed: Number(row.resumed) === 1,
    scanned: Number(row.scanned),
    withMatchKey: Number(row.with_match_key),
    upToDate: Number(row.up_to_date),
    toEnrich: Number(row.to_enrich),
    quotaUnits: Number(row.quota_units),
    read: Number(row.read),
    enqueued: Number(row.enqueued),
    error: row.error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    confirmedAt: row.confirmed_at,
  };
}

const ACTIVE: readonly BackfillRunState[] = ['estimating', 'estimated', 'running'];

export class BackfillRuns {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly queue: JobQueue,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * Starts an estimate: the run, and the job that reads the CRM. Refused while another run of the
   * installation is estimating, waiting for its confirmation or enqueueing.
   */
  async estimate(
    installation: Installation,
    request: { object: string; flags: Readonly<Record<string, boolean>>; limit: number | null; restart: boolean },
  ): Promise<BackfillRun> {
    const at = this.now().toISOString();
    const busy = await this.db
      .selectFrom('backfill_runs')
      .select('id')
      .where('installation_id', '=', installation.id)
      .where('state', 'in', ['estimating', 'running'])
      .execute();
    for (const { id: other } of busy) {
      const control = await this.queue.countGroup(controlGroup(other));
      if ((control.queued ?? 0) + (control.running ?? 0) > 0) {
        throw new BackfillRunError('Another backfill of this installation is being estimated or queued: wait for it, or cancel it.');
      }
      // Its job gave up (the CRM could not be read): it has stopped, and this one takes over from its cursor.
      await this.db.updateTable('backfill_runs').set({ state: 'failed', updated_at: at }).where('id', '=', other).execute();
    }
    const id = `bf_${ulid()}`;
    // An estimate nobody confirmed is superseded by the new one.
    await this.db
      .updateTable('backfill_runs')
      .set({ state: 'cancelled', updated_at: at })
      .where('installation_id', '=', installation.id)
      .where('state', '=', 'estimated')
      .execute();
    await this.db
      .insertInto('backfill_runs')
      .values({
        id,
        installation_id: installation.id,
        object: request.object,
        flags: JSON.stringify(request.flags),
        record_limit: request.limit,
        restart: request.restart ? 1 : 0,
        state: 'estimating',
        resumed: 0,
        scanned: 0,
        with_match_key: 0,
        up_to_date: 0,
        to_enrich: 0,
        quota_units: 0,
        read: 0,
        enqueued: 0,
        error: null,
        created_at: at,
        updated_at: at,
        confirmed_at: null,
      })
      .execute();
    await this.queue.enqueue(controlJob(installation.id, BACKFILL_ESTIMATE_JOB, id));
    return (await this.find(installation.id, id)) as BackfillRun;
  }

  /**
   * Confirms an estimate: the run job is queued. Refused unless the run is estimated and the installation
   * not paused by an admin, and, unless told to go over it, when it may spend more than the budget has left.
   */
  async confirm(
    installation: Installation,
    id: string,
    budget: { left: number | null; overBudget: boolean } = { left: null, overBudget: false },
  ): Promise<BackfillRun> {
    const installationId = installation.id;
    const estimate = await this.find(installationId, id);
    if (estimate !== undefined && budget.left !== null && estimate.quotaUnits > budget.left && !budget.overBudget) {
      throw new BackfillRunError(
        `This backfill may spend up to ${estimate.quotaUnits} units, and the month's budget has ${budget.left} left: nothing was queued. Queue it anyway (enrichment pauses when the budget is spent, and waits for next month), or estimate again with a limit of ${budget.left}.`,
      );
    }
    // An admin's pause settles every job as skipped: a backfill started then would be spent for nothing.
    if (installation.status === 'disabled' || (installation.status === 'paused' && installation.pauseReason === 'admin')) {
      throw new BackfillRunError('The installation is paused or disabled: resume it before starting a backfill.');
    }
    const at = this.now().toISOString();
    const moved = await this.db
      .updateTable('backfill_runs')
      .set({ state: 'running', confirmed_at: at, updated_at: at, read: 0, error: null })
      .where('installation_id', '=', installationId)
      .where('id', '=', id)
      .where('state', '=', 'estimated')
      .executeTakeFirst();
    if (Number(moved.numUpdatedRows) === 0)
      throw new BackfillRunError('This estimate cannot be confirmed any more (it was cancelled, superseded, or is already running).');
    await this.queue.enqueue(controlJob(installationId, BACKFILL_RUN_JOB, id));
    return (await this.find(installationId, id)) as BackfillRun;
  }

  /**
   * Cancels a run: an estimate or an enqueue stops at its next page, and the enrichments it queued that
   * have not started are removed (a running one finishes). Returns how many were removed.
   */
  async cancel(installationId: string, id: string): Promise<number> {
    const at = this.now().toISOString();
    const moved = await this.db
      .updateTable('backfill_runs')
      .set({ state: 'cancelled', updated_at: at })
      .where('installation_id', '=', installationId)
      .where('id', '=', id)
      .where('state', 'in', [...ACTIVE, 'enqueued'])
      .executeTakeFirst();
    if (Number(moved.numUpdatedRows) === 0) throw new BackfillRunError('This backfill has already ended.');
    await this.queue.cancelGroup(controlGroup(id));
    return this.queue.cancelGroup(id);
  }

  async find(installationId: string, id: string): Promise<BackfillRun | undefined> {
    const row = await this.db.selectFrom('backfill_runs').selectAll().where('installation_id', '=', installationId).where('id', '=', id).executeTakeFirst();
    return row === undefined ? undefined : toRun(row);
  }

  /** The installation's runs, newest first. */
  async list(installationId: string, limit = 10): Promise<BackfillRun[]> {
    const rows = await this.db
      .selectFrom('backfill_runs')
      .selectAll()
      .where('installation_id', '=', installationId)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.map(toRun);
  }

  async jobs(id: string): Promise<RunJobs> {
    const [enrichments, control] = await Promise.all([this.queue.countGroup(id), this.queue.countGroup(controlGroup(id))]);
    return { enrichments, control };
  }

  /** A run's row, for its job (any installation). */
  async load(id: string): Promise<BackfillRun | undefined> {
    const row = await this.db.selectFrom('backfill_runs').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? undefined : toRun(row);
  }

  async save(id: string, values: Partial<Omit<Selectable<BackfillRunsTable>, 'id' | 'installation_id' | 'created_at'>>): Promise<void> {
    await this.db
      .updateTable('backfill_runs')
      .set({ ...values, updated_at: this.now().toISOString() })
      .where('id', '=', id)
      .execute();
  }

  /** Moves a run on only from the state its job found it in (a cancel meanwhile wins). */
  async finish(
    id: string,
    from: BackfillRunState,
    values: Partial<Omit<Selectable<BackfillRunsTable>, 'id' | 'installation_id' | 'created_at'>>,
  ): Promise<boolean> {
    const result = await this.db
      .updateTable('backfill_runs')
      .set({ ...values, updated_at: this.now().toISOString() })
      .where('id', '=', id)
      .where('state', '=', from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }
}

function controlJob(installationId: string, kind: string, runId: string): NewJob {
  // Few attempts: a CRM that cannot be read five times in a row is the admin's to look at.
  return { installationId, kind, payload: { run: runId }, dedupeKey: `${kind}:${runId}`, group: controlGroup(runId), maxAttempts: 3 };
}

const ControlPayloadSchema = z.object({ run: z.string().min(1).max(100) });

export interface RunJobDeps {
  readonly runs: BackfillRuns;
  readonly progress: BackfillProgress;
  readonly store: PipelineStore;
  readonly installations: Installations;
  readonly queue: JobQueue;
  /** The backfill of each CRM module that has one, by provider. */
  readonly backfillFor: (provider: string) => CrmBackfill | undefined;
}

/** Saves progress at most this often (a page at a time is enough; a database write per page is not needed). */
const SAVE_EVERY_MS = 500;

/**
 * The handler of both control kinds, for one installation's jobs: each estimates or runs its run.
 * Throws (the job is retried) when the CRM could not be read; a run already cancelled is left alone.
 */
export async function runControlJobs(installation: Installation, jobs: readonly Job[], deps: RunJobDeps): Promise<void> {
  for (const job of jobs) {
    const { run: runId } = ControlPayloadSchema.parse(job.payload);
    const run = await deps.runs.load(runId);
    if (run === undefined || run.installationId !== installation.id) continue;
    const phase = job.kind === BACKFILL_RUN_JOB ? 'running' : 'estimating';
    if (run.state !== phase) continue;
    const spec = deps.backfillFor(installation.provider);
    if (spec === undefined) {
      await deps.runs.finish(run.id, phase, { state: 'failed', error: `this server cannot read ${installation.provider} records for a backfill` });
      continue;
    }
    try {
      await (phase === 'estimating' ? estimateRun(installation, run, spec, deps) : enqueueRun(installation, run, spec, deps));
    } catch (error) {
      if (error instanceof RunCancelled) {
        // Anything queued after the cancel removed the rest.
        await deps.queue.cancelGroup(run.id);
        continue;
      }
      // Shown on the console's backfill page: a driver's or a CRM's text reduced, no personal data.
      const message = loggableMessage(error);
      // A record id the CRM should not have listed fails the run at once: reading again lists it again.
      const last = job.attempts >= job.maxAttempts || error instanceof BackfillRecordIdError;
      await deps.runs.finish(run.id, phase, last ? { state: 'failed', error: message } : { error: `${message} (trying again)` });
      if (!last) throw error;
    }
  }
}

/** A page hook that saves what was read (now and then) and stops the work if the run was cancelled. */
function pageHook(run: BackfillRun, deps: RunJobDeps): (read: number) => Promise<void> {
  let savedAt = 0;
  return async (read) => {
    const current = await deps.runs.load(run.id);
    if (current === undefined || current.state === 'cancelled') throw new RunCancelled();
    if (Date.now() - savedAt < SAVE_EVERY_MS) return;
    savedAt = Date.now();
    await deps.runs.save(run.id, { read });
  };
}

async function openReader(installation: Installation, run: BackfillRun, spec: CrmBackfill, deps: RunJobDeps) {
  return spec.open({ installation, installations: deps.installations, object: run.object, flags: run.flags, notice: () => undefined });
}

async function estimateRun(installation: Installation, run: BackfillRun, spec: CrmBackfill, deps: RunJobDeps): Promise<void> {
  const reader = await openReader(installation, run, spec, deps);
  const plan = await planBackfill({
    installation,
    object: run.object,
    connector: reader.connector,
    source: reader.source,
    store: deps.store,
    progress: deps.progress,
    ...(run.limit === null ? {} : { limit: run.limit }),
    restart: run.restart,
    onPage: pageHook(run, deps),
  });
  const restarted = reader.summary().restarted;
  await deps.runs.finish(run.id, 'estimating', {
    state: 'estimated',
    resumed: plan.startCursor !== null && !restarted ? 1 : 0,
    scanned: plan.scanned,
    read: plan.scanned,
    with_match_key: plan.withMatchKey,
    up_to_date: plan.upToDate,
    to_enrich: plan.toEnrich,
    quota_units: plan.quotaUnits,
    error: null,
  });
}

async function enqueueRun(installation: Installation, run: BackfillRun, spec: CrmBackfill, deps: RunJobDeps): Promise<void> {
  // A page at a time: read it, queue what it needs, save the CRM cursor after it (runBackfill), check
  // for a cancel. A run delivered again after a failure or a dead worker starts at the last cursor
  // saved, with what it queued already counted against its limit.
  const reader = await openReader(installation, run, spec, deps);
  let { read, enqueued } = run;
  // Only a run that has not begun starts over when asked to; a redelivery continues.
  let restart = run.restart && read === 0 && enqueued === 0;
  for (;;) {
    const current = await deps.runs.load(run.id);
    if (current === undefined || current.state === 'cancelled') throw new RunCancelled();
    const remaining = run.limit === null ? undefined : run.limit - enqueued;
    if (remaining !== undefined && remaining <= 0) break;
    const plan = await planBackfill({
      installation,
      object: run.object,
      connector: reader.connector,
      source: reader.source,
      store: deps.store,
      progress: deps.progress,
      ...(remaining === undefined ? {} : { limit: remaining }),
      restart,
      maxPages: 1,
    });
    restart = false;
    const result = await runBackfill(plan, { queue: deps.queue, progress: deps.progress, group: run.id });
    read += plan.scanned;
    enqueued += result.enqueued + result.duplicates;
    await deps.runs.save(run.id, { read, enqueued });
    const page = plan.pages.at(-1);
    if (page === undefined || page.last || plan.pages.length === 0) break;
  }
  await deps.runs.finish(run.id, 'running', { state: 'enqueued', read, enqueued, error: null });
}
