// The pipeline's storage, as a port: installations, per-record state, the enrichment log, the answers
// kept for reuse and leases, each its own interface, together the one PipelineStore callers are handed.
// The adapter on the service database (SQLite or PostgreSQL) is store/kysely-pipeline-store.ts.
import { timeOrderedIds } from '../core/storage/time-ordered-ids.ts';
import type {
  Installation,
  InstallationSettings,
  InstallationStatus,
  LogEntry,
  OrgChange,
  PauseReason,
  RecordControl,
  RecordState,
  StoredAnswer,
} from './model.ts';
import type { RecordControlPatch } from './store/record-controls-table.ts';

export type { RecordControlPatch } from './store/record-controls-table.ts';

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
  /** Moves the installation to another account of its CRM (a refreshed sandbox's new org id); unique per provider. */
  readonly externalAccountId?: string;
  /** Marks (or, null, clears) messages seen from another account on the installation's CRM host. */
  readonly orgChange?: OrgChange | null;
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

/** Connected CRM accounts, their settings and sealed secrets. */
export interface InstallationStore {
  /** Throws DuplicateInstallationError when the provider's account is already connected. */
  createInstallation(row: NewInstallationRow): Promise<Installation>;
  findInstallation(id: string): Promise<Installation | undefined>;
  findInstallationByAccount(provider: string, externalAccountId: string): Promise<Installation | undefined>;
  listInstallations(): Promise<Installation[]>;
  /**
   * Returns the installation as it is after the change, or undefined when there is none. Throws
   * DuplicateInstallationError when `externalAccountId` is another installation's account.
   */
  updateInstallation(id: string, patch: InstallationPatch): Promise<Installation | undefined>;
  /**
   * Removes the installation with its record states. The log is kept for the operator (`enrichbridge
   * log --installation ID`), without the values each write carried (`changes`): those are personal data
   * of the CRM's records. Its jobs are the queue's to remove (JobQueue.removeInstallation).
   */
  deleteInstallation(id: string): Promise<boolean>;
  sealedSecrets(id: string): Promise<string | undefined>;
}

/** What the pipeline knows of each record it enriched (what `tracked` compares with, what is due again). */
export interface RecordStateStore {
  recordStates(installationId: string, object: string, recordIds: readonly string[]): Promise<Map<string, RecordState>>;
  /** The household records (NPSP household Accounts) whose row holds the answer of one of these people, by `object/recordId`. */
  householdRecordsHeldBy(installationId: string, sources: readonly string[]): Promise<{ object: string; recordId: string }[]>;
  /** Records enriched before `beforeIso`, oldest first: what a scheduled refresh takes next. */
  staleRecords(installationId: string, beforeIso: string, limit: number): Promise<{ object: string; recordId: string; enrichedAt: string }[]>;
  /** A CRM merge: the survivor takes the merged record's state unless it has its own. */
  moveRecordState(installationId: string, object: string, fromId: string, toId: string): Promise<boolean>;
  /** What CRM users decided about these records (excluded, undone); a record with neither has no entry. */
  recordControls(installationId: string, object: string, recordIds: readonly string[]): Promise<Map<string, RecordControl>>;
  /** Which of these identifier digests name a person the installation's CRM asked us to forget. */
  suppressedForInstallation(installationId: string, digests: readonly string[]): Promise<Set<string>>;
}

/** The enrichment log: one entry per record per batch, read by the operator, the console and budgets. */
export interface EnrichmentLogStore {
  listLog(query: LogQuery): Promise<LogEntry[]>;
  /** A page of the installation's log, newest first. */
  searchLog(search: LogSearch): Promise<LogEntry[]>;
  findLogEntry(installationId: string, id: string): Promise<LogEntry | undefined>;
  /** The quota units the installation's log records since `sinceIso` (what a budget counts). */
  unitsSince(installationId: string, sinceIso: string): Promise<number>;
  /** The installation's outcomes per day and outcome since `sinceIso` (UTC days). */
  dailyOutcomes(installationId: string, sinceIso: string): Promise<DailyOutcome[]>;
  /**
   * Purges the values written and replaced of at most `limit` entries (of any installation) logged
   * before `beforeIso`, oldest first, keeping the entries and their counts; returns how many.
   */
  purgeLogValues(beforeIso: string, purgedAtIso: string, limit: number): Promise<number>;
}

/** Answers kept for reuse, sealed, by the normalized request's hash. */
export interface KeptAnswerStore {
  /** The installation's kept answers for these input hashes, answered at or after `notBeforeIso`. */
  findAnswers(installationId: string, hashes: readonly string[], notBeforeIso: string): Promise<Map<string, StoredAnswer>>;
  /** The data version of the installation's newest kept answer (null: none, or its target reports none). */
  latestAnswerVersion(installationId: string): Promise<string | null | undefined>;
  /** Removes the installation's kept answers older than `beforeIso` (past the re-enrichment age); returns how many. */
  purgeAnswers(installationId: string, beforeIso: string): Promise<number>;
}

export interface LeaseStore {
  /**
   * Takes the lease `key` for `ms` unless another owner holds it unexpired; true when taken. Leases
   * are for work that must not run twice at once across processes (a credential refresh).
   */
  acquireLease(key: string, owner: string, ms: number): Promise<boolean>;
  releaseLease(key: string, owner: string): Promise<void>;
}

export interface PipelineStore extends InstallationStore, RecordStateStore, EnrichmentLogStore, KeptAnswerStore, LeaseStore {
  /**
   * Saves record states, log entries and the answers kept for reuse in one transaction: all land, or
   * none do. Nothing is saved for a record erased meanwhile. A state saved is a new enrichment: it ends
   * the record's undone state, and an exclusion lifted in the CRM meanwhile, if it had either.
   */
  saveOutcomes(states: readonly RecordState[], entries: readonly LogEntry[], answers?: readonly StoredAnswer[]): Promise<void>;
  /**
   * A record action (record-actions.ts) in one transaction: its log entry, the record's controls
   * changed, and its state replaced when given. Nothing is saved for a record erased meanwhile.
   */
  saveRecordAction(entry: LogEntry, control: RecordControlPatch, state?: RecordState): Promise<void>;
  /**
   * A CRM deletion or privacy request: forgets the record's state, log entries (with the values
   * they logged) and the answer kept for reuse that it was given, and remembers the record's id (only that) so an enrichment already under way cannot
   * save anything about it again. Erased from the database's files too, not only from its tables (afterErasure).
   * With `suppress` (a privacy deletion), the identifiers the record's enrichment carried are remembered
   * for the installation first (keyed hashes), so a contact re-created with them is skipped as suppressed.
   */
  eraseRecord(installationId: string, object: string, recordId: string, options?: { readonly suppress?: boolean }): Promise<void>;
  /** Every record, in every installation, whose enrichment carried one of these identifier digests (an erasure by person). */
  recordsWithIdentifiers(digests: readonly string[]): Promise<{ installationId: string; object: string; recordId: string }[]>;
  /** Remembers, for the installation, a person to forget (by identifier digests). */
  suppressForInstallation(installationId: string, digests: readonly string[]): Promise<void>;
  /**
   * After an installation's data was deleted (a disconnect: deleteInstallation, then its jobs), makes the
   * database's files hold none of it either (SQLite: the WAL is checkpointed and truncated). eraseRecord
   * does this itself. Never fails because another process reads meanwhile: that is logged.
   */
  afterErasure(installationId: string): Promise<void>;
}

const nextId = timeOrderedIds();

/** A time-ordered log entry id: the log is listed, and paged (`LogSearch.before`), in id order. */
export function newLogId(at: Date = new Date()): string {
  return `log_${nextId(at.getTime())}`;
}
