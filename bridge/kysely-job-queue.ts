// The job queue's SQL adapter (Kysely, on the pipeline's `jobs` table): the JobQueue port of
// job-queue.ts, with claims that lease one installation's ready jobs at a time.
import { type ExpressionBuilder, type Kysely, type RawBuilder, type Selectable, sql } from 'kysely';
import { z } from 'zod';
import { isUniqueViolation } from '../core/storage/errors.ts';
import { timeOrderedIds } from '../core/storage/time-ordered-ids.ts';
import {
  type ClaimOptions,
  DEFAULT_MAX_ATTEMPTS,
  JOB_STATES,
  type Job,
  type JobQueue,
  type JobState,
  JsonText,
  type NewJob,
  retryDelayMs,
} from './job-queue.ts';
import type { JobsTable, PipelineDatabase as Database } from './schema.ts';
import { JOBS_CHANNEL_SQL, type JobListener } from './job-notifications.ts';
import { HOST_CLOCK, type LeaseClock } from '../core/storage/database-clock.ts';
import { ENRICH_JOB } from './enrich-job.ts';

const stateColumn = z.enum(JOB_STATES);

/** Rows per multi-row insert: 15 columns each stays far under SQLite's bound-parameter ceiling. */
const ENQUEUE_CHUNK = 100;

/** Time-ordered ids: inserts append to the primary key's index instead of scattering across it. */
const nextJobId = timeOrderedIds();

function newJobRow(job: NewJob, now: string): JobsTable {
  return {
    id: `job_${nextJobId()}`,
    installation_id: job.installationId,
    kind: job.kind,
    payload: job.payload instanceof JsonText ? job.payload.text : JSON.stringify(job.payload),
    dedupe_key: job.dedupeKey ?? null,
    state: 'queued',
    attempts: 0,
    max_attempts: job.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    run_at: job.runAt === undefined ? now : job.runAt.toISOString(),
    lease_owner: null,
    lease_expires_at: null,
    last_error: null,
    rerun: 0,
    job_group: job.group ?? null,
    created_at: now,
    updated_at: now,
  };
}

function toJob(row: Selectable<JobsTable>): Job {
  return {
    id: row.id,
    installationId: row.installation_id,
    kind: row.kind,
    payload: JSON.parse(row.payload),
    dedupeKey: row.dedupe_key,
    state: stateColumn.parse(row.state),
    attempts: Number(row.attempts),
    maxAttempts: Number(row.max_attempts),
    runAt: row.run_at,
    leaseOwner: row.lease_owner,
    leaseExpiresAt: row.lease_expires_at,
    lastError: row.last_error,
    createdAt: row.created_at,
  };
}

/**
 * What the claim needs to know of the database. SQLite runs one writer at a time, so the claim's one
 * statement is serialised whole; PostgreSQL runs claims side by side, so each locks the rows it picks
 * and passes over rows another claim holds (FOR UPDATE SKIP LOCKED), and re-checks them once locked.
 */
export type QueueDialect = 'sqlite' | 'postgres';

export class KyselyJobQueue implements JobQueue {
  private readonly skipLocked: boolean;
  /** Leases, claims and run times are written and compared on the database's clock, whichever host writes them. */
  private readonly clock: LeaseClock;
  /** Whether a notification is on its way, and whether enqueues stored since it was sent wait for the next. */
  private announcing: 'idle' | 'sending' | 'again' = 'idle';

  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: { readonly dialect?: QueueDialect; readonly listener?: JobListener; readonly clock?: LeaseClock } = {},
  ) {
    this.skipLocked = options.dialect === 'postgres';
    this.clock = options.clock ?? HOST_CLOCK;
  }

  /** PostgreSQL: hears every instance's enqueues (LISTEN/NOTIFY). Absent on SQLite, whose workers poll. */
  get onReady(): ((listener: () => void) => () => void) | undefined {
    const { listener } = this.options;
    return listener === undefined ? undefined : (wake) => listener.subscribe(wake);
  }

  /**
   * Tells the other instances' idle workers (PostgreSQL; a no-op on SQLite). Best effort, after the
   * jobs are stored, and not waited for: the caller (a webhook's acknowledgement) need not wait a second
   * round trip and commit. A notification that cannot be sent (no connection free, say) is lost, never a
   * reported failure of a stored enqueue; the workers' poll finds the jobs anyway.
   *
   * One notification at a time: the enqueues stored while one is on its way are announced together by
   * the next, sent once it is answered (so after their commits). A burst of webhooks costs PostgreSQL and
   * every listening instance a notification a round trip, not one per acknowledgement.
   */
  private announce(): void {
    if (!this.skipLocked) return;
    if (this.announcing !== 'idle') {
      this.announcing = 'again';
      return;
    }
    this.announcing = 'sending';
    const send = (): void => {
      void sql`SELECT pg_notify(${sql.raw(JOBS_CHANNEL_SQL)}, '')`
        .execute(this.db)
        .catch(() => undefined)
        .finally(() => {
          if (this.announcing === 'again') {
            this.announcing = 'sending';
            send();
          } else this.announcing = 'idle';
        });
    };
    send();
  }

  async enqueue(job: NewJob): Promise<{ id: string; created: boolean }> {
    const row = newJobRow(job, this.clock.now().toISOString());
    const { id } = row;
    try {
      await this.db.insertInto('jobs').values(row).execute();
      this.announce();
      return { id, created: true };
    } catch (error) {
      if (!isUniqueViolation(error) || job.dedupeKey === undefined) throw error;
      const pending = await this.db
        .selectFrom('jobs')
        .select('id')
        .where('dedupe_key', '=', job.dedupeKey)
        .where('state', 'in', ['queued', 'running'])
        .executeTakeFirst();
      // The pending twin finished between the insert and this read: try once more.
      if (pending === undefined) return this.enqueue(job);
      await this.db.updateTable('jobs').set({ rerun: 1 }).where('id', '=', pending.id).where('state', '=', 'running').execute();
      return { id: pending.id, created: false };
    }
  }

  async enqueueMany(jobs: readonly NewJob[]): Promise<{ created: number; duplicates: number }> {
    if (jobs.length === 0) return { created: 0, duplicates: 0 };
    const now = this.clock.now().toISOString();
    // One statement is atomic by itself: a single chunk with no duplicate to mark needs no transaction
    // (a webhook batch stored as one job is one INSERT).
    if (jobs.length <= ENQUEUE_CHUNK && jobs.every((job) => job.dedupeKey === undefined)) {
      const inserted = await this.db
        .insertInto('jobs')
        .values(jobs.map((job) => newJobRow(job, now)))
        .executeTakeFirst();
      const created = Number(inserted.numInsertedOrUpdatedRows ?? BigInt(jobs.length));
      if (created > 0) this.announce();
      return { created, duplicates: jobs.length - created };
    }
    const result = await this.db.transaction().execute(async (trx) => {
      let created = 0;
      const conflicted: string[] = [];
      // Multi-row inserts (a webhook batch is one or two statements, not a hundred), DO NOTHING on the
      // pending-dedupe index: a twin already waits or runs, or came earlier in the same batch.
      for (let i = 0; i < jobs.length; i += ENQUEUE_CHUNK) {
        const chunk = jobs.slice(i, i + ENQUEUE_CHUNK);
        const inserted = await trx
          .insertInto('jobs')
          .values(chunk.map((job) => newJobRow(job, now)))
          .onConflict((oc) =>
            oc
              .column('dedupe_key')
              .where(sql.ref('state'), 'in', sql`('queued', 'running')`)
              .doNothing(),
          )
          .returning('dedupe_key')
          .execute();
        created += inserted.length;
        const landed = new Set(inserted.map((row) => row.dedupe_key));
        for (const job of chunk) if (job.dedupeKey !== undefined && !landed.has(job.dedupeKey)) conflicted.push(job.dedupeKey);
      }
      if (conflicted.length > 0) {
        // A twin that is running runs once more when it completes, as with enqueue().
        await trx.updateTable('jobs').set({ rerun: 1 }).where('dedupe_key', 'in', conflicted).where('state', '=', 'running').execute();
      }
      return { created, duplicates: jobs.length - created };
    });
    if (result.created > 0) this.announce();
    return result;
  }

  async claimBatch(options: ClaimOptions): Promise<Job[]> {
    const now = (options.now ?? this.clock.now()).toISOString();
    const leaseEnd = new Date(Date.parse(now) + options.leaseMs).toISOString();
    // A job whose lease ran out on its last allowed delivery is dead: a job that kills its worker
    // every time must end in the dead letters, not loop forever.
    await this.db
      .updateTable('jobs')
      .set({
        state: 'dead',
        lease_owner: null,
        lease_expires_at: null,
        last_error: 'the lease ran out on the last allowed delivery (did the worker die?)',
        updated_at: now,
      })
      .where('state', '=', 'running')
      .where('lease_expires_at', '<', now)
      .where((eb) => eb('attempts', '>=', eb.ref('max_attempts')))
      .execute();
    // Two kinds of ready job, each claimed by a statement of its own: leased by a worker whose lease ran
    // out (it died, or hung), then queued and due. One condition OR-ing the two cannot be read from an
    // index in order: with a million jobs queued, every claim read the whole table and sorted an
    // installation's jobs (585 ms a claim on PostgreSQL); apart, each is an ordered index scan that stops
    // at the batch's end (1 ms).
    const kinds = options.kinds === undefined || options.kinds.length === 0 ? null : [...options.kinds];
    const ofKinds = (due: RawBuilder<boolean>) => (kinds === null ? due : sql<boolean>`(${due} AND kind IN (${sql.join(kinds)}))`);
    const readies = [
      ofKinds(sql<boolean>`(state = 'running' AND lease_expires_at < ${now} AND attempts < max_attempts)`),
      ofKinds(sql<boolean>`(state = 'queued' AND run_at <= ${now})`),
    ];
    const avoid = options.avoid === undefined || options.avoid.length === 0 ? null : [...options.avoid];
    for (const outside of avoid === null ? [null] : [avoid, null]) {
      for (const ready of readies) {
        const rows = await this.claimFrom(options.workerId, options.limit, now, leaseEnd, ready, outside);
        if (rows.length > 0) return rows;
      }
    }
    return [];
  }

  /**
   * The pick both claims make: the readiest installation outside `avoid`, and up to `limit` of its
   * ready jobs, readiest first.
   */
  private pick(limit: number, ready: RawBuilder<boolean>, avoid: string[] | null) {
    return this.db
      .selectFrom('jobs')
      .select('id')
      .where(ready)
      .where(
        'installation_id',
        '=',
        this.db
          .selectFrom('jobs')
          .select('installation_id')
          .where(ready)
          .$if(avoid !== null, (qb) => qb.where('installation_id', 'not in', avoid ?? []))
          .orderBy('run_at')
          .orderBy('created_at')
          .limit(1),
      )
      .orderBy('run_at')
      .orderBy('created_at')
      .limit(limit);
  }

  /**
   * One statement: the pick and the lease. On SQLite it runs under the write lock, so two workers never
   * lease the same job. On PostgreSQL claims run side by side: the jobs are locked as they are picked
   * and rows another claim holds are passed over (FOR UPDATE SKIP LOCKED); the pick is materialised
   * first, so the planner cannot run it again per row (and lock a second set); and each row, read again
   * once locked, must still be ready (READ COMMITTED: a completion may have landed meanwhile).
   */
  private async claimFrom(workerId: string, limit: number, now: string, leaseEnd: string, ready: RawBuilder<boolean>, avoid: string[] | null): Promise<Job[]> {
    const lease = (eb: ExpressionBuilder<Database, 'jobs'>) => ({
      state: 'running',
      lease_owner: workerId,
      lease_expires_at: leaseEnd,
      attempts: eb('attempts', '+', 1),
      updated_at: now,
    });
    const rows = this.skipLocked
      ? await this.db
          .with(
            (cte) => cte('picked').materialized(),
            () => this.pick(limit, ready, avoid).forUpdate().skipLocked(),
          )
          .updateTable('jobs')
          .set(lease)
          .where('id', 'in', (eb) => eb.selectFrom('picked').select('picked.id'))
          .where(ready)
          .returningAll()
          .execute()
      : await this.db
          .updateTable('jobs')
          .set(lease)
          .where('id', 'in', this.pick(limit, ready, avoid))
          .returningAll()
          .execute();
    return rows.map(toJob).sort((a, b) => a.runAt.localeCompare(b.runAt) || a.createdAt.localeCompare(b.createdAt));
  }

  async complete(id: string, workerId: string): Promise<boolean> {
    return (await this.completeMany([id], workerId)).has(id);
  }

  async completeMany(ids: readonly string[], workerId: string): Promise<Set<string>> {
    const done = new Set<string>();
    if (ids.length === 0) return done;
    const now = this.clock.now().toISOString();
    for (let i = 0; i < ids.length; i += ENQUEUE_CHUNK) {
      // A job asked to run again while it ran goes back to the queue, fresh, instead of finishing. A
      // finished job keeps its payload only when it is an enrichment's (an object, a record id, flags):
      // the other kinds carry a CRM's data (a webhook's events with property values), which is not ours
      // to keep once worked, and would outlive the record's erasure.
      const rows = await this.db
        .updateTable('jobs')
        .set({
          state: sql<string>`CASE WHEN rerun = 1 THEN 'queued' ELSE 'done' END`,
          payload: sql<string>`CASE WHEN rerun = 1 OR kind = ${ENRICH_JOB} THEN payload ELSE '{}' END`,
          attempts: sql<number>`CASE WHEN rerun = 1 THEN 0 ELSE attempts END`,
          run_at: sql<string>`CASE WHEN rerun = 1 THEN ${now} ELSE run_at END`,
          rerun: 0,
          lease_owner: null,
          lease_expires_at: null,
          updated_at: now,
        })
        .where('id', 'in', ids.slice(i, i + ENQUEUE_CHUNK))
        .where('state', '=', 'running')
        .where('lease_owner', '=', workerId)
        .returning('id')
        .execute();
      for (const row of rows) done.add(row.id);
    }
    return done;
  }

  async fail(id: string, workerId: string, error: string, options: { retryable?: boolean; now?: Date } = {}): Promise<'retrying' | 'dead' | 'not_leased'> {
    const job = await this.db
      .selectFrom('jobs')
      .selectAll()
      .where('id', '=', id)
      .where('state', '=', 'running')
      .where('lease_owner', '=', workerId)
      .executeTakeFirst();
    if (job === undefined) return 'not_leased';
    const now = options.now ?? this.clock.now();
    const dead = options.retryable === false || Number(job.attempts) >= Number(job.max_attempts);
    await this.db
      .updateTable('jobs')
      .set({
        state: dead ? 'dead' : 'queued',
        rerun: 0,
        run_at: dead ? job.run_at : new Date(now.getTime() + retryDelayMs(Number(job.attempts))).toISOString(),
        lease_owner: null,
        lease_expires_at: null,
        last_error: error.slice(0, 2000),
        updated_at: now.toISOString(),
      })
      .where('id', '=', id)
      .where('lease_owner', '=', workerId)
      .execute();
    return dead ? 'dead' : 'retrying';
  }

  async release(id: string, workerId: string, options: { runAt?: Date } = {}): Promise<boolean> {
    const now = this.clock.now().toISOString();
    const result = await this.db
      .updateTable('jobs')
      .set({
        state: 'queued',
        lease_owner: null,
        lease_expires_at: null,
        rerun: 0,
        attempts: sql<number>`CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END`,
        ...(options.runAt === undefined ? {} : { run_at: options.runAt.toISOString() }),
        updated_at: now,
      })
      .where('id', '=', id)
      .where('state', '=', 'running')
      .where('lease_owner', '=', workerId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async extendLease(ids: readonly string[], workerId: string, leaseMs: number): Promise<number> {
    if (ids.length === 0) return 0;
    const now = this.clock.now();
    const result = await this.db
      .updateTable('jobs')
      .set({ lease_expires_at: new Date(now.getTime() + leaseMs).toISOString(), updated_at: now.toISOString() })
      .where('id', 'in', [...ids])
      .where('state', '=', 'running')
      .where('lease_owner', '=', workerId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async takenOver(ids: readonly string[], workerId: string): Promise<number> {
    let taken = 0;
    for (let i = 0; i < ids.length; i += ENQUEUE_CHUNK) {
      const row = await this.db
        .selectFrom('jobs')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('id', 'in', ids.slice(i, i + ENQUEUE_CHUNK))
        .where('state', '=', 'running')
        .where('lease_owner', '!=', workerId)
        .executeTakeFirstOrThrow();
      taken += Number(row.n);
    }
    return taken;
  }

  async heldBy(ids: readonly string[], workerId: string, now: Date = this.clock.now()): Promise<Set<string>> {
    const held = new Set<string>();
    for (let i = 0; i < ids.length; i += ENQUEUE_CHUNK) {
      const rows = await this.db
        .selectFrom('jobs')
        .select('id')
        .where('id', 'in', ids.slice(i, i + ENQUEUE_CHUNK))
        .where('state', '=', 'running')
        .where('lease_owner', '=', workerId)
        .where('lease_expires_at', '>', now.toISOString())
        .execute();
      for (const row of rows) held.add(row.id);
    }
    return held;
  }

  async leaseHolders(): Promise<string[]> {
    const rows = await this.db
      .selectFrom('jobs')
      .select('lease_owner')
      .distinct()
      .where('state', '=', 'running')
      .where('lease_owner', 'is not', null)
      .execute();
    return rows.flatMap((row) => (row.lease_owner === null ? [] : [row.lease_owner]));
  }

  async expireLeases(workerIds: readonly string[], now: Date = this.clock.now()): Promise<number> {
    if (workerIds.length === 0) return 0;
    const result = await this.db
      .updateTable('jobs')
      // Just before now: a claim in the same millisecond already sees it ran out.
      .set({ lease_expires_at: new Date(now.getTime() - 1).toISOString(), updated_at: now.toISOString() })
      .where('state', '=', 'running')
      .where('lease_owner', 'in', [...workerIds])
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async reschedule(installationId: string, runAt: Date): Promise<number> {
    const result = await this.db
      .updateTable('jobs')
      .set({ run_at: runAt.toISOString(), updated_at: this.clock.now().toISOString() })
      .where('installation_id', '=', installationId)
      .where('state', '=', 'queued')
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async removeInstallation(installationId: string): Promise<number> {
    const result = await this.db.deleteFrom('jobs').where('installation_id', '=', installationId).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async findPending(dedupeKeys: readonly string[]): Promise<Job | undefined> {
    if (dedupeKeys.length === 0) return undefined;
    const row = await this.db
      .selectFrom('jobs')
      .selectAll()
      .where('dedupe_key', 'in', [...dedupeKeys])
      .where('state', 'in', ['queued', 'running'])
      .orderBy('run_at')
      .limit(1)
      .executeTakeFirst();
    return row === undefined ? undefined : toJob(row);
  }

  async cancel(dedupeKey: string): Promise<boolean> {
    const result = await this.db.deleteFrom('jobs').where('dedupe_key', '=', dedupeKey).where('state', '=', 'queued').executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async countGroup(group: string): Promise<Partial<Record<JobState, number>>> {
    const rows = await this.db
      .selectFrom('jobs')
      .select(['state', (eb) => eb.fn.countAll().as('n')])
      .where('job_group', '=', group)
      .groupBy('state')
      .execute();
    return Object.fromEntries(rows.map((row) => [stateColumn.parse(row.state), Number(row.n)]));
  }

  async cancelGroup(group: string): Promise<number> {
    const result = await this.db.deleteFrom('jobs').where('job_group', '=', group).where('state', '=', 'queued').executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async list(options: { state?: JobState; limit?: number } = {}): Promise<Job[]> {
    // Ids are time-ordered: they keep jobs enqueued in one millisecond in the order they were enqueued.
    let query = this.db
      .selectFrom('jobs')
      .selectAll()
      .orderBy('created_at')
      .orderBy('id')
      .limit(options.limit ?? 1000);
    if (options.state !== undefined) query = query.where('state', '=', options.state);
    return (await query.execute()).map(toJob);
  }

  async countByState(): Promise<Partial<Record<JobState, number>>> {
    const rows = await this.db
      .selectFrom('jobs')
      .select(['state', (eb) => eb.fn.countAll().as('n')])
      .groupBy('state')
      .execute();
    return Object.fromEntries(rows.map((row) => [stateColumn.parse(row.state), Number(row.n)]));
  }

  async retryDead(ids: readonly string[] | 'all'): Promise<number> {
    if (ids !== 'all' && ids.length === 0) return 0;
    const chosen = ids === 'all' ? null : [...ids];
    // One pending job per dedupe key (jobs_pending_dedupe): a dead job whose record has a queued or
    // running job again is superseded and stays dead, and of several dead jobs for one record only the
    // newest goes back. Without this, one such job made the whole retry fail on the unique index.
    const result = await this.db
      .updateTable('jobs')
      .set({ state: 'queued', attempts: 0, run_at: this.clock.now().toISOString(), last_error: null, updated_at: this.clock.now().toISOString() })
      .where('state', '=', 'dead')
      .$if(chosen !== null, (qb) => qb.where('id', 'in', chosen ?? []))
      .where((eb) =>
        eb.or([
          eb('dedupe_key', 'is', null),
          eb.and([
            eb.not(
              eb.exists(
                eb
                  .selectFrom('jobs as pending')
                  .select('pending.id')
                  .whereRef('pending.dedupe_key', '=', 'jobs.dedupe_key')
                  .where('pending.state', 'in', ['queued', 'running']),
              ),
            ),
            eb(
              'id',
              '=',
              eb
                .selectFrom('jobs as twin')
                .select('twin.id')
                .whereRef('twin.dedupe_key', '=', 'jobs.dedupe_key')
                .where('twin.state', '=', 'dead')
                .$if(chosen !== null, (qb) => qb.where('twin.id', 'in', chosen ?? []))
                .orderBy('twin.created_at', 'desc')
                .orderBy('twin.id', 'desc')
                .limit(1),
            ),
          ]),
        ]),
      )
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }
}
