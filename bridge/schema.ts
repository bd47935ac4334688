// The pipeline's tables, as Kysely sees them, and the migrations that create them: installations,
// record states, the enrichment log, the job queue, backfill cursors, deliveries, leases, action
// callbacks. They live in the service's database (core/storage) and keep the migration numbers they
// shipped with, so a data folder made before they moved here opens unchanged.
// Column types are kept to what SQLite and PostgreSQL share: text, integer, ISO-8601 timestamps.
import { type Kysely, type Migration, sql } from 'kysely';
import type { Database as CoreTables } from '../core/storage/schema.ts';

export interface JobsTable {
  id: string;
  installation_id: string;
  kind: string;
  /** JSON. */
  payload: string;
  dedupe_key: string | null;
  /** queued | running | done | dead */
  state: string;
  attempts: number;
  max_attempts: number;
  /** ISO time from which the job may run (backoff after a failure). */
  run_at: string;
  lease_owner: string | null;
  lease_expires_at: string | null;
  last_error: string | null;
  /** 1 when a duplicate arrived while the job ran: it runs once more when it completes. */
  rerun: number;
  /** The work it belongs to (a console backfill run), so that work's jobs are counted and cancelled together. */
  job_group: string | null;
  created_at: string;
  updated_at: string;
}

/** One CRM account linked to an enrichment target (bridge/installations.ts). */
export interface InstallationsTable {
  id: string;
  provider: string;
  external_account_id: string;
  environment: string;
  /** local | remote */
  target_kind: string;
  /** local: the account enriched against; remote: null. */
  target_account_id: string | null;
  /** local: the installation-owned token's public id; remote: null. */
  target_token_id: string | null;
  /** remote: the endpoint URL; local: null. */
  remote_url: string | null;
  /** SecretBox-sealed JSON: the enrichment token and the CRM credentials. Never plaintext. */
  secrets: string;
  /** active | paused | disabled */
  status: string;
  paused_until: string | null;
  pause_reason: string | null;
  /** JSON settings (overwrite mode, re-enrichment age, …). */
  settings: string;
  /**
   * Messages arrive from another org on this installation's CRM host (a refreshed Salesforce sandbox gets a
   * new org id): that org's id, and when it was first seen; null when nothing was seen (before 0025).
   */
  org_changed_to: string | null;
  org_changed_at: string | null;
  created_at: string;
  updated_at: string;
}

/** What the pipeline knows about one CRM record it has enriched. */
export interface RecordStatesTable {
  installation_id: string;
  object: string;
  record_id: string;
  household_matched: number;
  career_matched: number;
  windfall_id: string | null;
  confidence: number | null;
  enriched_at: string;
  input_hash: string;
  /** JSON: CRM property → the value we last wrote there (what the tracked mode compares with). */
  written: string;
  /** The target's data version the last enrichment was answered under; null: unknown (before 0020) or none reported. */
  data_version: string | null;
  /** The career match's own confidence (`confidence` is the household's when it matched); null before 0020. */
  career_confidence: number | null;
  /**
   * Set on a household record's row (an NPSP household Account holding the household section): the
   * `object/recordId` of the person whose answer it holds. Null on a person's own row.
   */
  household_source: string | null;
}

/**
 * What a CRM user decided about one record: excluded from enrichment (do-not-enrich), or its
 * last enrichment undone. One row per record that has either; erased with the record.
 */
export interface RecordControlsTable {
  installation_id: string;
  object: string;
  record_id: string;
  /** Set while the record is excluded (Exclude); null once included again. */
  excluded_at: string | null;
  /** JSON actor `{ userId, email }` of the Exclude. */
  excluded_by: string | null;
  /** Set while the record's last enrichment stands undone; cleared by the next enrichment saved. */
  undone_at: string | null;
  /** JSON actor of the Undo. */
  undone_by: string | null;
  /** The record's input hash when it was undone: an identity change (another hash) is enriched again. */
  undone_input_hash: string | null;
  updated_at: string;
}

export interface EnrichmentLogTable {
  /** Time-ordered (ULID-like) so the log reads in order across processes. */
  id: string;
  installation_id: string;
  object: string;
  record_id: string;
  at: string;
  /** enriched | no_match | skipped:<reason> | failed:<reason> */
  outcome: string;
  /** JSON array of CRM properties written. */
  fields_written: string;
  quota_consumed: number;
  latency_ms: number | null;
  detail: string | null;
  /**
   * JSON: CRM property → `{ value, replaced }`, what we wrote and what the record held before (null:
   * empty). Personal values: cleared with the record (erasure) or the installation (disconnect), and
   * purged past the log's retention period. Null on rows from before 0015 and on rows whose values were
   * cleared or purged.
   */
  changes: string | null;
  /** `object/recordId` of the record whose stored answer this entry applied (no lookup, no unit); null otherwise. */
  reused_from: string | null;
  /** JSON `{ userId, email }`: the CRM user who asked for a record action (`action:*` entries); null otherwise. */
  actor: string | null;
  /**
   * When `changes` was purged past the log's retention period (the entry, its outcome, its fields and
   * units stay); null while the values are kept, and on rows cleared for another reason.
   */
  values_purged_at: string | null;
}

/** Where a backfill of one installation's object got to, so a rerun resumes there. */
export interface BackfillsTable {
  installation_id: string;
  object: string;
  /** The CRM's paging cursor after the last page fully enqueued; null: from the start. */
  cursor: string | null;
  enqueued: number;
  /** running | done */
  state: string;
  started_at: string;
  updated_at: string;
}

/** A backfill started from the console: its estimate, then its run, as the job doing it saves them. */
export interface BackfillRunsTable {
  id: string;
  installation_id: string;
  object: string;
  /** JSON: the CRM's own backfill flags, by long flag. */
  flags: string;
  record_limit: number | null;
  /** 1: from the first record even though an earlier backfill stopped midway. */
  restart: number;
  /** estimating | estimated | running | enqueued | cancelled | failed */
  state: string;
  /** 1: the estimate started where an earlier backfill had stopped. */
  resumed: number;
  scanned: number;
  with_match_key: number;
  up_to_date: number;
  to_enrich: number;
  quota_units: number;
  /** Records read so far by the phase under way (the estimate's scan, then the run's). */
  read: number;
  enqueued: number;
  error: string | null;
  created_at: string;
  updated_at: string;
  confirmed_at: string | null;
}

/**
 * An answer the installation's target gave, kept so a record asking the same normalized question
 * (a CRM duplicate) gets it without a second lookup. Sealed like credentials; kept no longer than the
 * re-enrichment age; erased with the record it came from, and with the installation.
 */
export interface ReusableAnswersTable {
  installation_id: string;
  /** inputHash of the normalized request (the environment included, the record id not). */
  input_hash: string;
  /** The record it was answered for. */
  object: string;
  record_id: string;
  /** SecretBox-sealed JSON: the response and nothing else. */
  answer: string;
  /** The target's data version when it answered; null when the target reports none. */
  data_version: string | null;
  answered_at: string;
}

/**
 * Who a record we enriched is, as keyed hashes of the identifiers its request carried (the suppression
 * list's digests: `kind:hex`), so an erasure by e-mail, phone or name at an address finds it in every
 * installation without our keeping the identifier. Erased with the record.
 */
export interface RecordIdentifiersTable {
  installation_id: string;
  object: string;
  record_id: string;
  digest: string;
}

/**
 * A person an installation's CRM asked us to forget (a privacy deletion): their identifiers' keyed
 * hashes, so a contact re-created with them is not enriched again there (`skipped:suppressed`).
 */
export interface InstallationSuppressionsTable {
  installation_id: string;
  digest: string;
  created_at: string;
}

/** A record a CRM deleted (or asked us to forget): nothing about it may be saved again. */
export interface ErasedRecordsTable {
  installation_id: string;
  object: string;
  record_id: string;
  erased_at: string;
}

/** Deliveries a CRM identifies (Salesforce notification ids): a redelivery is recognised and skipped. */
export interface InboundDeliveriesTable {
  provider: string;
  delivery_id: string;
  received_at: string;
}

/** Workflow-action requests seen, by callback id, and what they were answered: a replay gets the same answer. */
export interface ActionCallbacksTable {
  callback_id: string;
  installation_id: string;
  /** The JSON answer once known (the outputs); null while the enrollment waits (BLOCK). */
  answer: string | null;
  received_at: string;
}

/** Short leases across processes (one credential refresh per installation at a time). */
export interface LeasesTable {
  key: string;
  owner: string;
  expires_at: string;
}

/** A signed-in console session (server/http/console): its id is only ever stored hashed. */
export interface ConsoleSessionsTable {
  id_hash: string;
  /** operator | installation */
  scope: string;
  /** The installation a CRM admin's session sees; null for the operator. */
  installation_id: string | null;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
}

// A type, not an interface: Kysely's withTables wants an index-signature-compatible shape.
export type PipelineTables = {
  jobs: JobsTable;
  installations: InstallationsTable;
  record_states: RecordStatesTable;
  record_controls: RecordControlsTable;
  enrichment_log: EnrichmentLogTable;
  backfills: BackfillsTable;
  backfill_runs: BackfillRunsTable;
  reusable_answers: ReusableAnswersTable;
  erased_records: ErasedRecordsTable;
  record_identifiers: RecordIdentifiersTable;
  installation_suppressions: InstallationSuppressionsTable;
  inbound_deliveries: InboundDeliveriesTable;
  action_callbacks: ActionCallbacksTable;
  leases: LeasesTable;
  console_sessions: ConsoleSessionsTable;
};

/** The database as the pipeline's adapters see it: the service's tables and its own. */
export type PipelineDatabase = CoreTables & PipelineTables;

// Append-only, as core's: never edit one that has shipped.
export const PIPELINE_MIGRATIONS: Readonly<Record<string, Migration>> = {
  '0003_jobs': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('jobs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('installation_id', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('dedupe_key', 'text')
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(sql`0`))
        .addColumn('max_attempts', 'integer', (c) => c.notNull())
        .addColumn('run_at', 'text', (c) => c.notNull())
        .addColumn('lease_owner', 'text')
        .addColumn('lease_expires_at', 'text')
        .addColumn('last_error', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      // One pending job per dedupe key: a duplicate event while one waits or runs adds nothing.
      await db.schema
        .createIndex('jobs_pending_dedupe')
        .on('jobs')
        .column('dedupe_key')
        .unique()
        .where(sql.ref('state'), 'in', sql`('queued', 'running')`)
        .execute();
      await db.schema.createIndex('jobs_ready').on('jobs').columns(['state', 'run_at']).execute();
      await db.schema.createIndex('jobs_installation').on('jobs').columns(['installation_id', 'state', 'run_at']).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('jobs').execute();
    },
  },
  '0004_installations_record_states_log': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('installations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('external_account_id', 'text', (c) => c.notNull())
        .addColumn('environment', 'text', (c) => c.notNull())
        .addColumn('target_kind', 'text', (c) => c.notNull())
        .addColumn('target_account_id', 'text', (c) => c.references('accounts.id').onDelete('restrict'))
        .addColumn('target_token_id', 'text')
        .addColumn('remote_url', 'text')
        .addColumn('secrets', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('paused_until', 'text')
        .addColumn('pause_reason', 'text')
        .addColumn('settings', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addUniqueConstraint('installations_provider_account', ['provider', 'external_account_id'])
        .execute();
      await db.schema
        .createTable('record_states')
        .addColumn('installation_id', 'text', (c) => c.notNull().references('installations.id').onDelete('cascade'))
        .addColumn('object', 'text', (c) => c.notNull())
        .addColumn('record_id', 'text', (c) => c.notNull())
        .addColumn('household_matched', 'integer', (c) => c.notNull())
        .addColumn('career_matched', 'integer', (c) => c.notNull())
        .addColumn('windfall_id', 'text')
        .addColumn('confidence', 'real')
        .addColumn('enriched_at', 'text', (c) => c.notNull())
        .addColumn('input_hash', 'text', (c) => c.notNull())
        .addColumn('written', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('record_states_pk', ['installation_id', 'object', 'record_id'])
        .execute();
      await db.schema
        .createTable('enrichment_log')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('installation_id', 'text', (c) => c.notNull())
        .addColumn('object', 'text', (c) => c.notNull())
        .addColumn('record_id', 'text', (c) => c.notNull())
        .addColumn('at', 'text', (c) => c.notNull())
        .addColumn('outcome', 'text', (c) => c.notNull())
        .addColumn('fields_written', 'text', (c) => c.notNull())
        .addColumn('quota_consumed', 'integer', (c) => c.notNull())
        .addColumn('latency_ms', 'integer')
        .addColumn('detail', 'text')
        .execute();
      await db.schema.createIndex('enrichment_log_installation').on('enrichment_log').columns(['installation_id', 'id']).execute();
      await db.schema.createIndex('enrichment_log_record').on('enrichment_log').columns(['record_id', 'id']).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('enrichment_log').execute();
      await db.schema.dropTable('record_states').execute();
      await db.schema.dropTable('installations').execute();
    },
  },
  '0005_jobs_rerun': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable('jobs')
        .addColumn('rerun', 'integer', (c) => c.notNull().defaultTo(sql`0`))
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('jobs').dropColumn('rerun').execute();
    },
  },
  '0006_backfills': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('backfills')
        .addColumn('installation_id', 'text', (c) => c.notNull().references('installations.id').onDelete('cascade'))
        .addColumn('object', 'text', (c) => c.notNull())
        .addColumn('cursor', 'text')
        .addColumn('enqueued', 'integer', (c) => c.notNull().defaultTo(sql`0`))
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('started_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('backfills_pk', ['installation_id', 'object'])
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('backfills').execute();
    },
  },
  '0007_erased_records': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('erased_records')
        .addColumn('installation_id', 'text', (c) => c.notNull().references('installations.id').onDelete('cascade'))
        .addColumn('object', 'text', (c) => c.notNull())
        .addColumn('record_id', 'text', (c) => c.notNull())
        .addColumn('erased_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('erased_records_pk', ['installation_id', 'object', 'record_id'])
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('erased_records').execute();
    },
  },
  '0008_inbound_deliveries': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('inbound_deliveries')
        .addColumn('provider', 'text', (c) => c.notNull())
        .addColumn('delivery_id', 'text', (c) => c.notNull())
        .addColumn('received_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('inbound_deliveries_pk', ['provider', 'delivery_id'])
        .execute();
      await db.schema.createIndex('inbound_deliveries_received').on('inbound_deliveries').column('received_at').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('inbound_deliveries').execute();
    },
  },
  '0009_leases': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('leases')
        .addColumn('key', 'text', (c) => c.primaryKey())
        .addColumn('owner', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('leases').execute();
    },
  },
  '0010_action_callbacks': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('action_callbacks')
        .addColumn('callback_id', 'text', (c) => c.primaryKey())
        .addColumn('installation_id', 'text', (c) => c.notNull())
        .addColumn('answer', 'text')
        .addColumn('received_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('action_callbacks_received').on('action_callbacks').column('received_at').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('action_callbacks').execute();
    },
  },
  '0014_console_sessions': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('console_sessions')
        .addColumn('id_hash', 'text', (c) => c.primaryKey())
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('installation_id', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'text', (c) => c.notNull())
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema.createIndex('console_sessions_installation').on('console_sessions').column('installation_id').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('console_sessions').execute();
    },
  },
  '0015_log_changes': {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('enrichment_log').addColumn('changes', 'text').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('enrichment_log').dropColumn('changes').execute();
    },
  },
  '0016_backfill_runs': {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('jobs').addColumn('job_group', 'text').execute();
      await db.schema.createIndex('jobs_group').on('jobs').columns(['job_group', 'state']).execute();
      await db.schema
        .createTable('backfill_runs')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('installation_id', 'text', (c) => c.notNull().references('installations.id').onDelete('cascade'))
        .addColumn('object', 'text', (c) => c.notNull())
        .addColumn('flags', 'text', (c) => c.notNull())
        .addColumn('record_limit', 'integer')
        .addColumn('restart', 'integer', (c) => c.notNull().defaultTo(sql`0`))
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('resumed', 'integer', (c) => c.notNull().defaultTo(sql`0`))
        .addColumn('scanned', 'integer', (c) => c.notNull().defaultTo(sql`0`))
        .addColumn('with_match_key', 'integer', (c) => c.notNull().defaultTo(sql`0`))
        .addColumn('up_to_date', 'integer', (c) => c.notNull().defaultTo(sql`0`))
        .addColumn('to_enrich', 'integer', (c) => c.notNull().defaultTo(sql`0`))
        .addColumn('quota_units', 'integer', (c) => c.notNull().defaultTo(sql`0`))
        .addColumn('read', 'integer', (c) => c.notNull().defaultTo(sql`0`))
        .addColumn('enqueued', 'integer', (c) => c.notNull().defaultTo(sql`0`))
        .addColumn('error', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addColumn('confirmed_at', 'text')
        .execute();
      await db.schema.createIndex('backfill_runs_installation').on('backfill_runs').columns(['installation_id', 'created_at']).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('backfill_runs').execute();
      await db.schema.dropIndex('jobs_group').execute();
      await db.schema.alterTable('jobs').dropColumn('job_group').execute();
    },
  },
  '0017_reusable_answers': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('reusable_answers')
        .addColumn('installation_id', 'text', (c) => c.notNull().references('installations.id').onDelete('cascade'))
        .addColumn('input_hash', 'text', (c) => c.notNull())
        .addColumn('object', 'text', (c) => c.notNull())
        .addColumn('record_id', 'text', (c) => c.notNull())
        .addColumn('answer', 'text', (c) => c.notNull())
        .addColumn('data_version', 'text')
        .addColumn('answered_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('reusable_answers_pk', ['installation_id', 'input_hash'])
        .execute();
      await db.schema.createIndex('reusable_answers_record').on('reusable_answers').columns(['installation_id', 'object', 'record_id']).execute();
      await db.schema.createIndex('reusable_answers_age').on('reusable_answers').columns(['installation_id', 'answered_at']).execute();
      await db.schema.alterTable('enrichment_log').addColumn('reused_from', 'text').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('enrichment_log').dropColumn('reused_from').execute();
      await db.schema.dropTable('reusable_answers').execute();
    },
  },
  '0018_record_states_enriched_at': {
    async up(db: Kysely<unknown>) {
      // The scheduled refresh takes an installation's records oldest first.
      await db.schema.createIndex('record_states_enriched_at').on('record_states').columns(['installation_id', 'enriched_at']).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropIndex('record_states_enriched_at').execute();
    },
  },
  '0019_enrichment_log_at': {
    async up(db: Kysely<unknown>) {
      // A budget's spend this month is the sum of an installation's log since the first of the month.
      await db.schema.createIndex('enrichment_log_installation_at').on('enrichment_log').columns(['installation_id', 'at']).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropIndex('enrichment_log_installation_at').execute();
    },
  },
  '0020_record_controls': {
    async up(db: Kysely<unknown>) {
      // Issue 28: per-record do-not-enrich and undo, the actor of a record action, and the data version
      // each record was last enriched under.
      await db.schema
        .createTable('record_controls')
        .addColumn('installation_id', 'text', (c) => c.notNull().references('installations.id').onDelete('cascade'))
        .addColumn('object', 'text', (c) => c.notNull())
        .addColumn('record_id', 'text', (c) => c.notNull())
        .addColumn('excluded_at', 'text')
        .addColumn('excluded_by', 'text')
        .addColumn('undone_at', 'text')
        .addColumn('undone_by', 'text')
        .addColumn('undone_input_hash', 'text')
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('record_controls_pk', ['installation_id', 'object', 'record_id'])
        .execute();
      await db.schema.alterTable('record_states').addColumn('data_version', 'text').execute();
      await db.schema.alterTable('record_states').addColumn('career_confidence', 'real').execute();
      await db.schema.alterTable('enrichment_log').addColumn('actor', 'text').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('enrichment_log').dropColumn('actor').execute();
      await db.schema.alterTable('record_states').dropColumn('career_confidence').execute();
      await db.schema.alterTable('record_states').dropColumn('data_version').execute();
      await db.schema.dropTable('record_controls').execute();
    },
  },
  '0022_log_values_purged': {
    async up(db: Kysely<unknown>) {
      // The values an entry wrote and replaced are kept for a retention period, then purged: when, per
      // entry. The purge finds what is due oldest first from an index of the entries still holding values
      // (partial, so purged entries leave it and it stays the size of the retention period).
      await db.schema.alterTable('enrichment_log').addColumn('values_purged_at', 'text').execute();
      await db.schema.createIndex('enrichment_log_values_at').on('enrichment_log').column('at').where(sql.ref('changes'), 'is not', null).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropIndex('enrichment_log_values_at').execute();
      await db.schema.alterTable('enrichment_log').dropColumn('values_purged_at').execute();
    },
  },
  '0024_record_identifiers': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('record_identifiers')
        .addColumn('installation_id', 'text', (c) => c.notNull())
        .addColumn('object', 'text', (c) => c.notNull())
        .addColumn('record_id', 'text', (c) => c.notNull())
        .addColumn('digest', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('record_identifiers_pk', ['installation_id', 'object', 'record_id', 'digest'])
        .execute();
      // An erasure looks records up by identifier, across installations.
      await db.schema.createIndex('record_identifiers_digest').on('record_identifiers').column('digest').execute();
      await db.schema
        .createTable('installation_suppressions')
        .addColumn('installation_id', 'text', (c) => c.notNull())
        .addColumn('digest', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('installation_suppressions_pk', ['installation_id', 'digest'])
        .execute();
      // Finished jobs other than enrichments keep no payload from now on (the queue empties it as such a
      // job completes): those finished before lose theirs here.
      await sql`UPDATE jobs SET payload = '{}' WHERE state = 'done' AND kind <> 'enrich'`.execute(db);
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('installation_suppressions').execute();
      await db.schema.dropTable('record_identifiers').execute();
    },
  },
  '0025_installation_org_changed': {
    async up(db: Kysely<unknown>) {
      // A refreshed Salesforce sandbox comes back under a new org id on the same host: the installation it
      // belonged to is marked with that id and when it was first seen, for the operator to reconnect. Plain
      // columns, not settings (an admin's choices) nor the sealed secrets: the console and the CLI read it,
      // and it is no secret.
      await db.schema.alterTable('installations').addColumn('org_changed_to', 'text').execute();
      await db.schema.alterTable('installations').addColumn('org_changed_at', 'text').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('installations').dropColumn('org_changed_at').execute();
      await db.schema.alterTable('installations').dropColumn('org_changed_to').execute();
    },
  },
  '0026_record_states_household_source': {
    async up(db: Kysely<unknown>) {
      // A household record (an NPSP household Account) gets a state row of its own, what tracked needs on
      // it, marked with the person whose answer it holds: refreshes and counts of enriched people skip it.
      await db.schema.alterTable('record_states').addColumn('household_source', 'text').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('record_states').dropColumn('household_source').execute();
    },
  },
  '0027_jobs_claim_order': {
    // A claim orders ready jobs by run_at, then created_at: indexes in that order let it read the first
    // batch and stop, however many jobs are queued (kysely-job-queue.ts, claimBatch). Built once, as
    // the upgrade starts: a few seconds for a million jobs, during which enqueues wait.
    async up(db: Kysely<unknown>) {
      await db.schema.dropIndex('jobs_ready').execute();
      await db.schema.createIndex('jobs_ready').on('jobs').columns(['state', 'run_at', 'created_at']).execute();
      await db.schema.dropIndex('jobs_installation').execute();
      await db.schema.createIndex('jobs_installation').on('jobs').columns(['installation_id', 'state', 'run_at', 'created_at']).execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropIndex('jobs_installation').execute();
      await db.schema.createIndex('jobs_installation').on('jobs').columns(['installation_id', 'state', 'run_at']).execute();
      await db.schema.dropIndex('jobs_ready').execute();
      await db.schema.createIndex('jobs_ready').on('jobs').columns(['state', 'run_at']).execute();
    },
  },
  '0028_record_states_household_source_index': {
    // Forgetting a person finds the household records (NPSP household Accounts) that hold their answer
    // by the row's household_source. Only household rows carry one, so the index holds only them.
    async up(db: Kysely<unknown>) {
      await db.schema
        .createIndex('record_states_household_source')
        .on('record_states')
        .columns(['installation_id', 'household_source'])
        .where(sql.ref('household_source'), 'is not', null)
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropIndex('record_states_household_source').execute();
    },
  },
};
