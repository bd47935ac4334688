// One batch's run through the pipeline, as data: its records (one Work per record, whatever number of
// jobs named it), what becomes of each job (Disposal), why the rest of a batch must wait (Stop), and the
// log entries, record states and counts the run gathers before it is saved in one transaction.
import type { EnrichOutcome } from '../core/client/enricher.ts';
import { loggableMessage, maskPersonalText } from '../core/observe/loggable-errors.ts';
import type { EnrichmentRequest } from '../core/contract/schemas.ts';
import type { Job, JobQueue } from './job-queue.ts';
import type { CrmRecord, WriteRefusal } from './connector.ts';
import { ENRICH_JOB, EnrichJobPayloadSchema } from './enrich-job.ts';
import type { CrmValue, Installation, LogEntry, Outcome, RecordState, StoredAnswer } from './model.ts';
import { newLogId, type PipelineStore } from './store.ts';
import type { decideWrites, fieldsFromResponse } from './write-policy.ts';

/** The ports a batch's steps read and change (the pipeline's deps carry both). */
export interface BatchPorts {
  readonly store: PipelineStore;
  readonly queue: JobQueue;
}

export interface Work {
  readonly recordId: string;
  readonly jobs: Job[];
  readonly force: boolean;
  /** Every job naming the record is a scheduled refresh: an unchanged answer writes nothing. */
  readonly refreshOnly: boolean;
  /** A CRM user asked for Enrich now: an undone record is enriched again. */
  readonly enrichNow: boolean;
}

/** The batch's records by object, in the order they came: each record one Work, however many jobs named it. */
export type WorksByObject = Map<string, Map<string, Work>>;

/** A record read from the CRM that is to be enriched: its request and the hash of its input. */
export interface Candidate {
  readonly work: Work;
  readonly record: CrmRecord;
  readonly hash: string;
  readonly request: EnrichmentRequest;
}

/** A candidate the enricher answered. */
export interface Enriched {
  readonly work: Work;
  readonly record: CrmRecord;
  readonly hash: string;
  readonly outcome: Extract<EnrichOutcome, { kind: 'ok' }>;
  /** The lookup's time; null for an answer reused without one. */
  readonly latencyMs: number | null;
  readonly at: Date;
  /** `object/recordId` whose kept answer this is (no lookup, no unit); absent for a lookup. */
  readonly reusedFrom?: string;
}

/** An enriched record with what the write policy decided to write. */
export interface PlannedWrite extends Enriched {
  readonly fields: ReturnType<typeof fieldsFromResponse>;
  readonly decision: ReturnType<typeof decideWrites>;
}

/** What the CRM said about one record's write. */
export type WriteResult = { readonly ok: true } | { readonly ok: false; readonly reason: WriteRefusal; readonly message: string };

/** What became of a slice's enrichments: those answered, and why the rest of the slice must wait, if it must. */
export interface EnrichRound {
  readonly enriched: Enriched[];
  /** Set when the quota ran out (the reset, or null when unknown): nothing more is sent. */
  readonly quotaResetsAt: Date | null | undefined;
  /** The endpoint did not answer in time: nothing more is sent. */
  readonly endpointTimedOut: boolean;
}

/** What a batch does with each job in the end. */
export type Disposal =
  | { readonly kind: 'complete' }
  | { readonly kind: 'fail'; readonly error: string; readonly retryable: boolean }
  | { readonly kind: 'release'; readonly runAt?: Date };

/**
 * Why the rest of a batch must not go on: a limit paused the installation, the CRM asked us to wait, or
 * the worker is shutting down. `outcome` is logged for the records it holds back until `runAt`; null
 * when they go back unlogged (a short CRM rate limit, like a shutdown, is not a decision about them).
 */
export type Stop = { readonly kind: 'release'; readonly runAt?: Date; readonly outcome: Outcome | null };

export const DAY_MS = 86_400_000;
/** How long jobs wait when a limit gives no reset time; an operator's `resume` brings them back sooner. */
export const PAUSE_WITHOUT_RESET_MS = DAY_MS;

export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** An error as the enrichment log and the job's last error keep it: no personal data (loggableMessage). */
export function describe(error: unknown): string {
  return loggableMessage(error);
}

/** Runs `task` over `items` with at most `limit` in flight. */
export async function forEachLimited<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await task(item);
    }
  });
  await Promise.all(lanes);
}

export class BatchRun {
  readonly outcomes: Record<string, number> = {};
  readonly entries: LogEntry[] = [];
  readonly states: RecordState[] = [];
  /** Lookups the month's budget still allows in this batch; null when the installation has no budget. */
  budgetLeft: number | null = null;
  /** The installation's budget, held by this batch from its read to the record of its spend. */
  budgetHold: { readonly key: string; readonly owner: string; readonly renewal: NodeJS.Timeout } | null = null;
  /** Answers looked up in this batch, kept for reuse (saved with the states and the log). */
  readonly answers: StoredAnswer[] = [];
  readonly disposals = new Map<string, Disposal>();
  /** By `object/recordId`: the last outcome logged and the record's properties as they now stand. */
  readonly lastOutcome = new Map<string, Outcome>();
  readonly finalProperties = new Map<string, Record<string, CrmValue>>();
  /** `object/recordId` → the keyed hashes of the identifiers its request carried (saved with its state). */
  readonly identifiers = new Map<string, readonly string[]>();
  crmCalls = 0;
  released = 0;
  leaseLost = 0;

  constructor(
    readonly installation: Installation,
    readonly workerId: string,
    readonly now: () => Date,
    readonly cancel: AbortSignal | undefined,
  ) {}

  log(
    object: string,
    work: Work,
    outcome: Outcome,
    extra: Partial<Pick<LogEntry, 'fieldsWritten' | 'changes' | 'quotaConsumed' | 'latencyMs' | 'detail' | 'reusedFrom'>> = {},
  ): void {
    const at = this.now();
    this.outcomes[outcome] = (this.outcomes[outcome] ?? 0) + 1;
    this.lastOutcome.set(`${object}/${work.recordId}`, outcome);
    this.entries.push({
      id: newLogId(at),
      installationId: this.installation.id,
      object,
      recordId: work.recordId,
      at: at.toISOString(),
      outcome,
      fieldsWritten: extra.fieldsWritten ?? [],
      changes: extra.changes ?? {},
      quotaConsumed: extra.quotaConsumed ?? 0,
      latencyMs: extra.latencyMs ?? null,
      // A CRM's or a driver's text may quote a record's values: the log keeps none of them in a detail.
      detail: extra.detail === undefined || extra.detail === null ? null : maskPersonalText(extra.detail),
      ...(extra.reusedFrom === undefined ? {} : { reusedFrom: extra.reusedFrom }),
    });
  }

  dispose(work: Work | Job[], disposal: Disposal): void {
    const jobs = Array.isArray(work) ? work : work.jobs;
    // A job's last error is shown by the CLI and the console: no personal data in it either.
    const kept = disposal.kind === 'fail' ? { ...disposal, error: maskPersonalText(disposal.error) } : disposal;
    for (const job of jobs) this.disposals.set(job.id, kept);
  }
}

/** A production lookup spends one quota unit; a sandbox one none. */
export function quotaPerLookup(installation: Installation): number {
  return installation.environment === 'production' ? 1 : 0;
}

/**
 * The batch's enrichment jobs by object and record (two jobs for one record are one enrichment). A job
 * that is not an enrichment this version understands fails for good: job-kinds.ts sends only `enrich` here.
 */
export function groupByObject(run: BatchRun, jobs: readonly Job[]): WorksByObject {
  const byObject: WorksByObject = new Map();
  for (const job of jobs) {
    const payload = EnrichJobPayloadSchema.safeParse(job.payload);
    if (job.kind !== ENRICH_JOB || !payload.success) {
      run.dispose([job], { kind: 'fail', error: `not an enrich job this version understands (${job.kind})`, retryable: false });
      continue;
    }
    const records = byObject.get(payload.data.object) ?? new Map<string, Work>();
    byObject.set(payload.data.object, records);
    const work = records.get(payload.data.recordId) ?? { recordId: payload.data.recordId, jobs: [], force: false, refreshOnly: true, enrichNow: false };
    records.set(payload.data.recordId, {
      ...work,
      jobs: [...work.jobs, job],
      force: work.force || payload.data.force,
      refreshOnly: work.refreshOnly && payload.data.trigger === 'refresh',
      enrichNow: work.enrichNow || payload.data.trigger === 'now',
    });
  }
  return byObject;
}

/** After a stop, the records of the batch not yet settled wait too (a pause) or go back (a shutdown). */
export function holdTheRest(run: BatchRun, byObject: WorksByObject, stop: Stop): void {
  for (const [object, records] of byObject) {
    for (const work of records.values()) {
      if (run.disposals.has(work.jobs[0]?.id ?? '')) continue;
      if (stop.outcome !== null && stop.runAt !== undefined) run.log(object, work, stop.outcome, { detail: `waits until ${stop.runAt.toISOString()}` });
      run.dispose(work, { kind: 'release', ...(stop.runAt === undefined ? {} : { runAt: stop.runAt }) });
    }
  }
}
