// The pipeline's storage: installations, per-record state and the enrichment log, on the service
// database (the same tables in SQLite and PostgreSQL, through Kysely's shared subset).
import { lockInstallationErasures } from '../core/storage/postgres.ts';
import { type Kysely, type Selectable, sql } from 'kysely';
import { monotonicFactory } from 'ulid';
import type { EnrichmentLogTable, InstallationsTable, PipelineDatabase as Database, RecordStatesTable, ReusableAnswersTable } from './schema.ts';
import { isUniqueViolation } from '../core/storage/errors.ts';
import { HOST_CLOCK, type LeaseClock } from '../core/storage/database-clock.ts';
import {
  type CrmValue,
  EnvironmentSchema,
  INSTALLATION_STATUSES,
  type Installation,
  InstallationSettingsSchema,
  type InstallationSettings,
  type InstallationStatus,
  type LogEntry,
  type Outcome,
  PAUSE_REASONS,
  type PauseReason,
  type RecordState,
  type StoredAnswer,
} from './model.ts';
import { z } from 'zod';

export class DuplicateInstallationError extends Error {
  constructor(provider: string, externalAccountId: string) {
    super(`${provider} account ${externalAccountId} is already connected`);
    this.name = 'DuplicateInstallationError';
  }
}

export interface NewInstallationRow {
  readonly id: string;
  readonly provider: string;
  readonly externalAccountId: string;
  readonly environment: Installation['environment'];
  readonly target: Installation['target'];
  readonly sealedSecrets: string;
  readonly settings: InstallationSettings;
}

export interface InstallationPatch {
  readonly status?: InstallationStatus;
  readonly pausedUntil?: string | null;
  readonly pauseReason?: PauseReason | null;
  readonly settings?: InstallationSettings;
  readonly sealedSecrets?: string;
}

export interface LogQuery {
  readonly installationId?: string;
  readonly recordId?: string;
  readonly limit?: number;
}

/** One page of an installation's log, newest first (the console's log). */
export interface LogSearch {
  readonly installationId: string;
  /** `enriched`, `no_match`, or a prefix such as `skipped:` or `failed:`. */
  readonly outcomePrefix?: string;
  readonly object?: string;
  readonly recordId?: string;
  /** ISO times: entries at or after `from`, before `to`. */
  readonly from?: string;
  readonly to?: string;
  /** The page after this entry id (the last one of the page before). */
  readonly before?: string;
  readonly limit: number;
}

/** How many records of an installation ended one way on one day (UTC), for the console's overview. */
export interface DailyOutcome {
  /** yyyy-mm-dd, UTC. */
  readonly day: string;
  readonly outcome: string;
  readonly count: number;
  readonly quotaConsumed: number;
}

export interface PipelineStore {
  createInstallation(row: NewInstallationRow): Promise<Installation>;
  findInstallation(id: string): Promise<Installation | undefined>;
  findInstallationByAccount(provider: string, externalAccountId: string): Promise<Installation | undefined>;
  listInstallations(): Promise<Installation[]>;
  /** Returns the installation as it is after the change, or undefined when there is none. */
  updateInstallation(id: string, patch: InstallationPatch): Promise<Installation | undefined>;
  /**
   * Removes the installation with its record states and every job of its, whatever their state: none is
   * left to run, to be listed as dead or to be retried. The log is kept for the operator (`enrichbridge
   * log --installation ID`), without the values each write carried (`changes`): those are personal data
   * of the CRM's records.
   */
  deleteInstallation(id: string): Promise<boolean>;
  sealedSecrets(id: string): Promise<string | undefined>;

  recordStates(installationId: string, object: string, recordIds: readonly string[]): Promise<Map<string, RecordState>>;
  /**
   * Saves record states, log entries and the answers kept for reuse in one transaction: all land, or
   * none do. Nothing is saved for a record erased meanwhile.
   */
  saveOutcomes(states: readonly RecordState[], entries: readonly LogEntry[], answers?: readonly StoredAnswer[]): Promise<void>;
  /** The installation's kept answers for these input hashes, answered at or after `notBeforeIso`. */
  findAnswers(installationId: string, hashes: readonly string[], notBeforeIso: string): Promise<Map<string, StoredAnswer>>;
  /** The data version of the installation's newest kept answer (null: none, or its target reports none). */
  latestAnswerVersion(installationId: string): Promise<string | null | undefined>;
  /** Removes the installation's kept answers older than `beforeIso` (past the re-enrichment age); returns how many. */
  purgeAnswers(installationId: string, beforeIso: string): Promise<number>;
  listLog(query: LogQuery): Promise<LogEntry[]>;
  /** Records enriched before `beforeIso`, oldest first: what a scheduled refresh takes next. */
  staleRecords(installationId: string, beforeIso: string, limit: number): Promise<{ object: string; recordId: string; enrichedAt: string }[]>;
  /** The quota units the installation's log records since `sinceIso` (what a budget counts). */
  unitsSince(installationId: string, sinceIso: string): Promise<number>;
  /** The installation's outcomes per day and outcome since `sinceIso` (UTC days). */
  dailyOutcomes(installationId: string, sinceIso: string): Promise<DailyOutcome[]>;
  /** A page of the installation's log, newest first. */
  searchLog(search: LogSearch): Promise<LogEntry[]>;
  findLogEntry(installationId: string, id: string): Promise<LogEntry | undefined>;
  /** A CRM merge: the survivor takes the merged record's state unless it has its own. */
  moveRecordState(installationId: string, object: string, fromId: string, toId: string): Promise<boolean>;
  /**
   * Takes the lease `key` for `ms` unless another owner holds it unexpired; true when taken. Leases
   * are for work that must not run twice at once across processes (a credential refresh).
   */
  acquireLease(key: string, owner: string, ms: number): Promise<boolean>;
  releaseLease(key: string, owner: string): Promise<void>;
  /**
   * A CRM deletion or privacy request: forgets the record's state, log entries (with the values
   * they logged) and the answer kept for reuse that it was given, and remembers the record's id (only that) so an enrichment already under way cannot
   * save anything about it again.
   */
  eraseRecord(installationId: string, object: string, recordId: string): Promise<void>;
}

const nextId = monotonicFactory();

/** A time-ordered log entry id. */
export function newLogId(at: Date = new Date()): string {
  return `log_${nextId(at.getTime())}`;
}

const statusColumn = z.enum(INSTALLATION_STATUSES);
const reasonColumn = z.enum(PAUSE_REASONS).nullable();
const crmValueColumn = z.union([z.string(), z.number(), z.boolean(), z.null()]);
const writtenColumn = z.record(z.string(), crmValueColumn);
const fieldsColumn = z.array(z.string());
const changesColumn = z.record(z.string(), z.object({ value: crmValueColumn, replaced: crmValueColumn }));

function toInstallation(row: Selectable<InstallationsTable>): Installation {
  const target: Installation['target'] =
    row.target_kind === 'local'
      ? { kind: 'local', accountId: row.target_account_id ?? '', tokenId: row.target_token_id ?? '' }
      : { kind: 'remote', url: row.remote_url ?? '' };
  return {
    id: row.id,
    provider: row.provider,
    externalAccountId: row.external_account_id,
    environment: EnvironmentSchema.parse(row.environment),
    target,
    status: statusColumn.parse(row.status),
    pausedUntil: row.paused_until,
    pauseReason: reasonColumn.parse(row.pause_reason),
    // Settings written by an older version get the defaults of fields added since.
    settings: InstallationSettingsSchema.parse(JSON.parse(row.settings)),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toState(row: Selectable<RecordStatesTable>): RecordState {
  return {
    installationId: row.installation_id,
    object: row.object,
    recordId: row.record_id,
    householdMatched: Number(row.household_matched) === 1,
    careerMatched: Number(row.career_matched) === 1,
    windfallId: row.windfall_id,
    confidence: row.confidence === null ? null : Number(row.confidence),
    enrichedAt: row.enriched_at,
    inputHash: row.input_hash,
    written: writtenColumn.parse(JSON.parse(row.written)) as Record<string, CrmValue>,
  };
}

function stateRow(state: RecordState): RecordStatesTable {
  return {
    installation_id: state.installationId,
    object: state.object,
    record_id: state.recordId,
    household_matched: state.householdMatched ? 1 : 0,
    career_matched: state.careerMatched ? 1 : 0,
    windfall_id: state.windfallId,
    confidence: state.confidence,
    enriched_at: state.enrichedAt,
    input_hash: state.inputHash,
    written: JSON.stringify(state.written),
  };
}

function answerRow(answer: StoredAnswer): ReusableAnswersTable {
  return {
    installation_id: answer.installationId,
    input_hash: answer.inputHash,
    object: answer.object,
    record_id: answer.recordId,
    answer: answer.sealedAnswer,
    data_version: answer.dataVersion,
    answered_at: answer.answeredAt,
  };
}

function logRow(entry: LogEntry): EnrichmentLogTable {
  return {
    id: entry.id,
    installation_id: entry.installationId,
    object: entry.object,
    record_id: entry.recordId,
    at: entry.at,
    outcome: entry.outcome,
    fields_written: JSON.stringify(entry.fieldsWritten),
    changes: Object.keys(entry.changes).length === 0 ? null : JSON.stringify(entry.changes),
    reused_from: entry.reusedFrom ?? null,
    quota_consumed: entry.quotaConsumed,
    latency_ms: entry.latencyMs,
    detail: entry.detail,
  };
}

function toLogEntry(row: Selectable<EnrichmentLogTable>): LogEntry {
  return {
    id: row.id,
    installationId: row.installation_id,
    object: row.object,
    recordId: row.record_id,
    at: row.at,
    outcome: row.outcome as Outcome,
    fieldsWritten: fieldsColumn.parse(JSON.parse(row.fields_written)),
    // Null: logged before 0015, nothing written, or cleared when the installation was disconnected.
    changes: row.changes === null ? {} : changesColumn.parse(JSON.parse(row.changes)),
    ...(row.reused_from === null ? {} : { reusedFrom: row.reused_from }),
    quotaConsumed: Number(row.quota_consumed),
    latencyMs: row.latency_ms === null ? null : Number(row.latency_ms),
    detail: row.detail,
  };
}

/** Rows per statement, under SQLite's bound-parameter ceiling. */
const CHUNK = 50;

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * The units an installation's log records since a time: what every batch of an installation with a
 * budget reads first, answered from the index on (installation_id, at), never a scan of the log.
 */
export function unitsSinceQuery(db: Kysely<Database>, installationId: string, sinceIso: string) {
  return db
    .selectFrom('enrichment_log')
    .select((eb) => eb.fn.sum<number | string | null>('quota_consumed').as('units'))
    .where('installation_id', '=', installationId)
    .where('at', '>=', sinceIso);
}

export class KyselyPipelineStore implements PipelineStore {
  constructor(
    private readonly db: Kysely<Database>,
    /** Leases are taken and compared on the database's clock, whichever host takes them. */
    private readonly clock: LeaseClock = HOST_CLOCK,
  ) {}

  async createInstallation(row: NewInstallationRow): Promise<Installation> {
    const now = new Date().toISOString();
    try {
      await this.db
        .insertInto('installations')
        .values({
          id: row.id,
          provider: row.provider,
          external_account_id: row.externalAccountId,
          environment: row.environment,
          target_kind: row.target.kind,
          target_account_id: row.target.kind === 'local' ? row.target.accountId : null,
          target_token_id: row.target.kind === 'local' ? row.target.tokenId : null,
          remote_url: row.target.kind === 'remote' ? row.target.url : null,
          secrets: row.sealedSecrets,
          status: 'active',
          paused_until: null,
          pause_reason: null,
          settings: JSON.stringify(row.settings),
          created_at: now,
          updated_at: now,
        })
        .execute();
    } catch (error) {
      if (isUniqueViolation(error)) throw new DuplicateInstallationError(row.provider, row.externalAccountId);
      throw error;
    }
    const created = await this.findInstallation(row.id);
    if (created === undefined) throw new Error(`installation ${row.id} vanished after insert`);
    return created;
  }

  async findInstallation(id: string): Promise<Installation | undefined> {
    const row = await this.db.selectFrom('installations').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? undefined : toInstallation(row);
  }

  async findInstallationByAccount(provider: string, externalAccountId: string): Promise<Installation | undefined> {
    const row = await this.db
      .selectFrom('installations')
      .selectAll()
      .where('provider', '=', provider)
      .where('external_account_id', '=', externalAccountId)
      .executeTakeFirst();
    return row === undefined ? undefined : toInstallation(row);
  }

  async listInstallations(): Promise<Installation[]> {
    const rows = await this.db.selectFrom('installations').selectAll().orderBy('created_at').execute();
    return rows.map(toInstallation);
  }

  async updateInstallation(id: string, patch: InstallationPatch): Promise<Installation | undefined> {
    const set: Partial<InstallationsTable> = { updated_at: new Date().toISOString() };
    if (patch.status !== undefined) set.status = patch.status;
    if (patch.pausedUntil !== undefined) set.paused_until = patch.pausedUntil;
    if (patch.pauseReason !== undefined) set.pause_reason = patch.pauseReason;
    if (patch.settings !== undefined) set.settings = JSON.stringify(patch.settings);
    if (patch.sealedSecrets !== undefined) set.secrets = patch.sealedSecrets;
    await this.db.updateTable('installations').set(set).where('id', '=', id).execute();
    return this.findInstallation(id);
  }

  async deleteInstallation(id: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('record_states').where('installation_id', '=', id).execute();
      // Its jobs share the database: dropped with it, a running one included (its worker's lease then
      // settles nothing, as after a takeover).
      await trx.deleteFrom('jobs').where('installation_id', '=', id).execute();
      await trx.updateTable('enrichment_log').set({ changes: null }).where('installation_id', '=', id).where('changes', 'is not', null).execute();
      const result = await trx.deleteFrom('installations').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    });
  }

  async sealedSecrets(id: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('installations').select('secrets').where('id', '=', id).executeTakeFirst();
    return row?.secrets;
  }

  async recordStates(installationId: string, object: string, recordIds: readonly string[]): Promise<Map<string, RecordState>> {
    const states = new Map<string, RecordState>();
    for (const ids of chunks([...new Set(recordIds)], CHUNK * 4)) {
      const rows = await this.db
        .selectFrom('record_states')
        .selectAll()
        .where('installation_id', '=', installationId)
        .where('object', '=', object)
        .where('record_id', 'in', ids)
        .execute();
      for (const row of rows) states.set(row.record_id, toState(row));
    }
    return states;
  }

  async saveOutcomes(allStates: readonly RecordState[], allEntries: readonly LogEntry[], allAnswers: readonly StoredAnswer[] = []): Promise<void> {
    if (allStates.length === 0 && allEntries.length === 0 && allAnswers.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      // A record erased while its batch ran (a deletion or privacy request arrived meanwhile) is not
      // saved again: checked inside the transaction, so an erasure is never undone (on PostgreSQL the
      // transaction first waits for any erasure of these installations in flight, and holds them off).
      await lockInstallationErasures(
        trx,
        [...allStates, ...allEntries, ...allAnswers].map((r) => r.installationId),
      );
      const keyOf = (r: { installationId: string; object: string; recordId: string }) => `${r.installationId}\u0000${r.object}\u0000${r.recordId}`;
      const erased = new Set<string>();
      const ids = [...new Set([...allStates, ...allEntries, ...allAnswers].map((r) => r.recordId))];
      for (const batch of chunks(ids, CHUNK * 4)) {
        const rows = await trx.selectFrom('erased_records').select(['installation_id', 'object', 'record_id']).where('record_id', 'in', batch).execute();
        for (const row of rows) erased.add(keyOf({ installationId: row.installation_id, object: row.object, recordId: row.record_id }));
      }
      const states = allStates.filter((state) => !erased.has(keyOf(state)));
      const entries = allEntries.filter((entry) => !erased.has(keyOf(entry)));
      // One row per question: the newest answer wins (an upsert may not touch a row twice in one statement).
      const answers = [
        ...new Map(
          allAnswers.filter((answer) => !erased.has(keyOf(answer))).map((answer) => [`${answer.installationId}\u0000${answer.inputHash}`, answer]),
        ).values(),
      ];
      for (const batch of chunks(answers.map(answerRow), CHUNK)) {
        await trx
          .insertInto('reusable_answers')
          .values(batch)
          .onConflict((oc) =>
            oc.columns(['installation_id', 'input_hash']).doUpdateSet((eb) => ({
              object: eb.ref('excluded.object'),
              record_id: eb.ref('excluded.record_id'),
              answer: eb.ref('excluded.answer'),
              data_version: eb.ref('excluded.data_version'),
              answered_at: eb.ref('excluded.answered_at'),
            })),
          )
          .execute();
      }
      for (const batch of chunks(states.map(stateRow), CHUNK)) {
        await trx
          .insertInto('record_states')
          .values(batch)
          .onConflict((oc) =>
            oc.columns(['installation_id', 'object', 'record_id']).doUpdateSet((eb) => ({
              household_matched: eb.ref('excluded.household_matched'),
              career_matched: eb.ref('excluded.career_matched'),
              windfall_id: eb.ref('excluded.windfall_id'),
              confidence: eb.ref('excluded.confidence'),
              enriched_at: eb.ref('excluded.enriched_at'),
              input_hash: eb.ref('excluded.input_hash'),
              written: eb.ref('excluded.written'),
            })),
          )
          .execute();
      }
      for (const batch of chunks(entries.map(logRow), CHUNK)) await trx.insertInto('enrichment_log').values(batch).execute();
    });
  }

  async listLog(query: LogQuery): Promise<LogEntry[]> {
    let select = this.db
      .selectFrom('enrichment_log')
      .selectAll()
      .orderBy('id', 'desc')
      .limit(query.limit ?? 100);
    if (query.installationId !== undefined) select = select.where('installation_id', '=', query.installationId);
    if (query.recordId !== undefined) select = select.where('record_id', '=', query.recordId);
    return (await select.execute()).map(toLogEntry).reverse();
  }

  async searchLog(search: LogSearch): Promise<LogEntry[]> {
    let select = this.db.selectFrom('enrichment_log').selectAll().where('installation_id', '=', search.installationId);
    if (search.outcomePrefix !== undefined) select = select.where('outcome', 'like', `${search.outcomePrefix.replace(/[%_\\]/g, '')}%`);
    if (search.object !== undefined) select = select.where('object', '=', search.object);
    if (search.recordId !== undefined) select = select.where('record_id', '=', search.recordId);
    if (search.from !== undefined) select = select.where('at', '>=', search.from);
    if (search.to !== undefined) select = select.where('at', '<', search.to);
    if (search.before !== undefined) select = select.where('id', '<', search.before);
    return (await select.orderBy('id', 'desc').limit(search.limit).execute()).map(toLogEntry);
  }

  async findLogEntry(installationId: string, id: string): Promise<LogEntry | undefined> {
    const row = await this.db.selectFrom('enrichment_log').selectAll().where('installation_id', '=', installationId).where('id', '=', id).executeTakeFirst();
    return row === undefined ? undefined : toLogEntry(row);
  }

  async staleRecords(installationId: string, beforeIso: string, limit: number): Promise<{ object: string; recordId: string; enrichedAt: string }[]> {
    const rows = await this.db
      .selectFrom('record_states')
      .select(['object', 'record_id', 'enriched_at'])
      .where('installation_id', '=', installationId)
      .where('enriched_at', '<', beforeIso)
      .orderBy('enriched_at')
      .orderBy('record_id')
      .limit(limit)
      .execute();
    return rows.map((row) => ({ object: row.object, recordId: row.record_id, enrichedAt: row.enriched_at }));
  }

  async unitsSince(installationId: string, sinceIso: string): Promise<number> {
    const row = await unitsSinceQuery(this.db, installationId, sinceIso).executeTakeFirst();
    return Number(row?.units ?? 0);
  }

  async dailyOutcomes(installationId: string, sinceIso: string): Promise<DailyOutcome[]> {
    // The log's times are ISO strings in UTC: their first ten characters are the day, in both dialects.
    const day = sql<string>`substr(at, 1, 10)`;
    const rows = await this.db
      .selectFrom('enrichment_log')
      .select([
        day.as('day'),
        'outcome',
        (eb) => eb.fn.countAll<number | string>().as('count'),
        (eb) => eb.fn.sum<number | string | null>('quota_consumed').as('units'),
      ])
      .where('installation_id', '=', installationId)
      .where('at', '>=', sinceIso)
      .groupBy([day, 'outcome'])
      .orderBy(day)
      .execute();
    return rows.map((row) => ({ day: row.day, outcome: row.outcome, count: Number(row.count), quotaConsumed: Number(row.units ?? 0) }));
  }

  async moveRecordState(installationId: string, object: string, fromId: string, toId: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const from = await trx
        .selectFrom('record_states')
        .selectAll()
        .where('installation_id', '=', installationId)
        .where('object', '=', object)
        .where('record_id', '=', fromId)
        .executeTakeFirst();
      if (from === undefined) return false;
      const survivor = await trx
        .selectFrom('record_states')
        .select('record_id')
        .where('installation_id', '=', installationId)
        .where('object', '=', object)
        .where('record_id', '=', toId)
        .executeTakeFirst();
      await trx
        .deleteFrom('record_states')
        .where('installation_id', '=', installationId)
        .where('object', '=', object)
        .where('record_id', '=', fromId)
        .execute();
      if (survivor !== undefined) return false;
      await trx
        .insertInto('record_states')
        .values({ ...from, record_id: toId })
        .execute();
      return true;
    });
  }

  async acquireLease(key: string, owner: string, ms: number): Promise<boolean> {
    const now = this.clock.now();
    const rows = await this.db
      .insertInto('leases')
      .values({ key, owner, expires_at: new Date(now.getTime() + ms).toISOString() })
      .onConflict((oc) =>
        oc
          .column('key')
          .doUpdateSet({ owner, expires_at: new Date(now.getTime() + ms).toISOString() })
          .where((eb) => eb.or([eb('leases.expires_at', '<', now.toISOString()), eb('leases.owner', '=', owner)])),
      )
      .returning('owner')
      .execute();
    return rows.some((row) => row.owner === owner);
  }

  async releaseLease(key: string, owner: string): Promise<void> {
    await this.db.deleteFrom('leases').where('key', '=', key).where('owner', '=', owner).execute();
  }

  async eraseRecord(installationId: string, object: string, recordId: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await lockInstallationErasures(trx, [installationId]);
      await trx
        .insertInto('erased_records')
        .values({ installation_id: installationId, object, record_id: recordId, erased_at: new Date().toISOString() })
        .onConflict((oc) => oc.columns(['installation_id', 'object', 'record_id']).doNothing())
        .execute();
      // Everything kept about the record: its state, its log and the answers kept for reuse.
      for (const table of ['record_states', 'enrichment_log', 'reusable_answers'] as const) {
        await trx.deleteFrom(table).where('installation_id', '=', installationId).where('object', '=', object).where('record_id', '=', recordId).execute();
      }
    });
  }

  async findAnswers(installationId: string, hashes: readonly string[], notBeforeIso: string): Promise<Map<string, StoredAnswer>> {
    const found = new Map<string, StoredAnswer>();
    for (const batch of chunks([...new Set(hashes)], CHUNK * 4)) {
      const rows = await this.db
        .selectFrom('reusable_answers')
        .selectAll()
        .where('installation_id', '=', installationId)
        .where('input_hash', 'in', batch)
        .where('answered_at', '>=', notBeforeIso)
        .execute();
      for (const row of rows) {
        found.set(row.input_hash, {
          installationId: row.installation_id,
          inputHash: row.input_hash,
          object: row.object,
          recordId: row.record_id,
          sealedAnswer: row.answer,
          dataVersion: row.data_version,
          answeredAt: row.answered_at,
        });
      }
    }
    return found;
  }

  async latestAnswerVersion(installationId: string): Promise<string | null | undefined> {
    const row = await this.db
      .selectFrom('reusable_answers')
      .select('data_version')
      .where('installation_id', '=', installationId)
      .orderBy('answered_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row?.data_version;
  }

  async purgeAnswers(installationId: string, beforeIso: string): Promise<number> {
    const result = await this.db
      .deleteFrom('reusable_answers')
      .where('installation_id', '=', installationId)
      .where('answered_at', '<', beforeIso)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
