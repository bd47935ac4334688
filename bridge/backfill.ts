// Backfill: enqueue enrichment for records that already exist in the CRM. Connector-neutral: a
// connector supplies pages of records; this plans (counts what has a match key and needs enriching,
// and what it will cost), then enqueues page by page, remembering the CRM cursor so an interrupted
// backfill resumes where it stopped.
import type { Kysely } from 'kysely';
import type { JobQueue } from './job-queue.ts';
import type { PipelineDatabase as Database } from './schema.ts';
import type { CrmConnector, CrmRecord } from './connector.ts';
import { hasMatchKey, inputHash } from './input.ts';
import { exclusion, heldByUndo } from './record-controls.ts';
import type { Installation } from './model.ts';
import { enrichJob } from './enrich-job.ts';
import { InstallationError } from './installations.ts';
import type { PipelineStore } from './store.ts';

export interface RecordPage {
  readonly records: readonly CrmRecord[];
  /** The cursor of the next page; null after the last. */
  readonly next: string | null;
}

/** Pages through one object's records, oldest first, from a cursor (null: the start). */
export type RecordSource = (cursor: string | null) => Promise<RecordPage>;

export interface BackfillPlan {
  readonly installationId: string;
  readonly object: string;
  /** The cursor the plan started from (a resumed backfill starts where the last one stopped). */
  readonly startCursor: string | null;
  readonly scanned: number;
  readonly withMatchKey: number;
  /** Enriched recently with the same input: they would be skipped. */
  readonly upToDate: number;
  /** Excluded (a CRM user's Exclude or the CRM's do-not-enrich checkbox), or undone with the same identity: left out. */
  readonly excluded: number;
  /**
   * Pages of ids to enqueue, each with the cursor a rerun resumes from once it is enqueued (a page cut
   * short by the limit resumes at its own start) and whether it finishes the object.
   */
  readonly pages: readonly { readonly ids: readonly string[]; readonly resumeAt: string | null; readonly last: boolean }[];
  readonly toEnrich: number;
  /** Quota units the enrichments will consume at most: one each in production, none in the sandbox. */
  readonly quotaUnits: number;
}

const DAY_MS = 86_400_000;

/** At most this much of a refused id is shown: enough to find it, not a page of whatever was sent. */
const SHOWN_ID_CHARS = 40;

/**
 * A refused id as text safe on a terminal and in a page: quoted, cut short, and every character outside
 * printable ASCII written as its code (a control or bidi character cannot act on the line around it).
 */
function shownId(id: string): string {
  const chars = [...id];
  const quoted = JSON.stringify(chars.slice(0, SHOWN_ID_CHARS).join('')).replace(/[^\x20-\x7e]/gu, (c) => `\\u{${(c.codePointAt(0) ?? 0).toString(16)}}`);
  return chars.length > SHOWN_ID_CHARS ? `${quoted}…` : quoted;
}

/**
 * A record the CRM listed for a backfill under an id that is not one of that CRM's record ids (as its
 * webhooks would refuse it): the backfill stops before queuing it. Not retried: the CRM lists it again.
 */
export class BackfillRecordIdError extends InstallationError {
  constructor(crm: string, noun: string, id: string, expected: string) {
    super(`${crm} listed a ${noun} under the id ${shownId(id)}, which is not a ${crm} ${noun} id (${expected}): the backfill stopped before queuing it`);
    this.name = 'BackfillRecordIdError';
  }
}

export class BackfillProgress {
  constructor(private readonly db: Kysely<Database>) {}

  async cursor(installationId: string, object: string): Promise<{ cursor: string | null; enqueued: number } | undefined> {
    const row = await this.db
      .selectFrom('backfills')
      .select(['cursor', 'enqueued'])
      .where('installation_id', '=', installationId)
      .where('object', '=', object)
      .where('state', '=', 'running')
      .executeTakeFirst();
    return row === undefined ? undefined : { cursor: row.cursor, enqueued: Number(row.enqueued) };
  }

  async save(installationId: string, object: string, cursor: string | null, enqueued: number, done: boolean): Promise<void> {
    const now = new Date().toISOString();
    await this.db
      .insertInto('backfills')
      .values({ installation_id: installationId, object, cursor, enqueued, state: done ? 'done' : 'running', started_at: now, updated_at: now })
      .onConflict((oc) => oc.columns(['installation_id', 'object']).doUpdateSet({ cursor, enqueued, state: done ? 'done' : 'running', updated_at: now }))
      .execute();
  }
}

export interface PlanOptions {
  readonly installation: Installation;
  readonly object: string;
  /** With `propertyFor`, the CRM's do-not-enrich checkbox is honoured too (a CRM user's Exclude always is). */
  readonly connector: Pick<CrmConnector, 'toRequest'> & Partial<Pick<CrmConnector, 'propertyFor'>>;
  readonly source: RecordSource;
  readonly store: PipelineStore;
  readonly progress: BackfillProgress;
  /** Stop after this many records needing enrichment. */
  readonly limit?: number;
  /** Start from the beginning even when an earlier backfill stopped midway. */
  readonly restart?: boolean;
  /** Read at most this many pages (a console run plans and queues a page at a time). */
  readonly maxPages?: number;
  readonly now?: Date;
  /** After each page read; awaited, and what it throws ends the plan (a cancelled run). */
  readonly onPage?: (scanned: number) => void | Promise<void>;
}

/** Reads the records (no enrichment, no writes) and counts what a backfill would do. */
export async function planBackfill(options: PlanOptions): Promise<BackfillPlan> {
  const { installation, object } = options;
  const now = (options.now ?? new Date()).getTime();
  const resumed = options.restart === true ? undefined : await options.progress.cursor(installation.id, object);
  const startCursor = resumed?.cursor ?? null;
  const limit = options.limit ?? Infinity;
  const pages: { ids: string[]; resumeAt: string | null; last: boolean }[] = [];
  let scanned = 0;
  let withMatchKey = 0;
  let upToDate = 0;
  let excluded = 0;
  let toEnrich = 0;
  let cursor = startCursor;
  do {
    const page = await options.source(cursor);
    const states = await options.store.recordStates(
      installation.id,
      object,
      page.records.map((r) => r.id),
    );
    const controls = await options.store.recordControls(
      installation.id,
      object,
      page.records.map((r) => r.id),
    );
    const propertyFor = options.connector.propertyFor?.bind(options.connector) ?? (() => null);
    const ids: string[] = [];
    let cut = false;
    for (const record of page.records) {
      if (toEnrich >= limit) {
        cut = true;
        break;
      }
      scanned += 1;
      const request = options.connector.toRequest(object, record);
      const control = controls.get(record.id);
      // An excluded record, or one undone whose identity has not changed, is not queued.
      if (exclusion({ propertyFor }, object, record, control) !== null || heldByUndo(control, inputHash(request, installation.environment), false)) {
        excluded += 1;
        continue;
      }
      if (!hasMatchKey(request)) continue;
      withMatchKey += 1;
      const state = states.get(record.id);
      const fresh = state !== undefined && now - Date.parse(state.enrichedAt) < installation.settings.reenrichAfterDays * DAY_MS;
      if (fresh && state.inputHash === inputHash(request, installation.environment)) {
        upToDate += 1;
        continue;
      }
      ids.push(record.id);
      toEnrich += 1;
    }
    pages.push(cut ? { ids, resumeAt: cursor, last: false } : { ids, resumeAt: page.next, last: page.next === null });
    cursor = page.next;
    await options.onPage?.(scanned);
  } while (cursor !== null && toEnrich < limit && pages.length < (options.maxPages ?? Infinity));
  return {
    installationId: installation.id,
    object,
    startCursor,
    scanned,
    withMatchKey,
    upToDate,
    excluded,
    pages,
    toEnrich,
    quotaUnits: installation.environment === 'production' ? toEnrich : 0,
  };
}

/** Enqueues a plan page by page, saving the cursor after each so a rerun resumes after it. */
export async function runBackfill(
  plan: BackfillPlan,
  deps: {
    queue: JobQueue;
    progress: BackfillProgress;
    onProgress?: (enqueued: number) => void;
    /** The job group the enrichments join (a console run's id). */
    group?: string;
  },
): Promise<{ enqueued: number; duplicates: number }> {
  let enqueued = 0;
  let duplicates = 0;
  for (const page of plan.pages) {
    for (const id of page.ids) {
      const job = enrichJob(plan.installationId, { object: plan.object, recordId: id, trigger: 'backfill' });
      const { created } = await deps.queue.enqueue(deps.group === undefined ? job : { ...job, group: deps.group });
      if (created) enqueued += 1;
      else duplicates += 1;
      deps.onProgress?.(enqueued + duplicates);
    }
    await deps.progress.save(plan.installationId, plan.object, page.resumeAt, enqueued, page.last);
  }
  return { enqueued, duplicates };
}
