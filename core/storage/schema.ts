// Table types of the service's own tables (accounts, tokens, quotas, the snapshots registry), as Kysely
// sees them, and the versioned migrations that create them. Column types are kept to what SQLite and
// PostgreSQL share: text, integer, ISO-8601 timestamps.
import { type Kysely, type Migration, sql } from 'kysely';

export interface AccountsTable {
  id: string;
  name: string;
  career_intelligence: number;
  /** 1 when the account is entitled to the political fields (a special category), else 0. */
  political_data: number;
  /** JSON array of field names, or null for all fields. */
  household_fields: string | null;
  career_fields: string | null;
  rate_limit: number;
  quota_limit: number;
  quota_period: string;
  created_at: string;
  updated_at: string;
}

export interface TokensTable {
  id: string;
  account_id: string;
  environment: string;
  token_hash: string;
  created_at: string;
  revoked_at: string | null;
}

export interface QuotaUsageTable {
  token_id: string;
  period_key: string;
  used: number;
}

export interface SnapshotsTable {
  id: string;
  version: string;
  /** Where the snapshot's data lives: a file name in the snapshots folder (SQLite). */
  location: string;
  /** loading | ready | failed | rolled_back */
  state: string;
  households: number;
  people: number;
  skipped_lines: number;
  failure: string | null;
  created_at: string;
  loaded_at: string | null;
  activated_at: string | null;
  active: number;
  /** `host:pid` of the process loading it (while `loading`), so a dead loader's entry can be cleaned up. */
  loader: string | null;
}

/**
 * Who production never answers about: a keyed hash of an identifier (core/suppression/identifiers.ts),
 * or a snapshot's person or household id. Nothing here is an identifier in clear.
 */
export interface SuppressionsTable {
  /** email | phone | name_address (value: the keyed hash, hex) | person | household (value: the snapshot's id) */
  kind: string;
  value: string;
  /** person | household: whether the whole household of whoever the identifier leads to is suppressed. */
  scope: string;
  /** The audit entry that added it. */
  added_by: string;
  created_at: string;
}

/** Every change to the suppression list: who, when, what kind of change and how many entries; never a value. */
export interface SuppressionAuditTable {
  /** Sortable by time (a ULID): the newest id is the list's generation, which instances poll. */
  id: string;
  at: string;
  actor: string;
  /** add | import | remove | resolve (a load found suppressed people in a new snapshot) */
  action: string;
  entries: number;
  note: string | null;
}

/** The service's own tables. The pipeline's live in bridge/schema.ts, in the same database. */
export interface Database {
  accounts: AccountsTable;
  tokens: TokensTable;
  quota_usage: QuotaUsageTable;
  snapshots: SnapshotsTable;
  suppressions: SuppressionsTable;
  suppression_audit: SuppressionAuditTable;
}

// Migrations are append-only: never edit one that has shipped, add the next number. One sequence of
// names for the whole database: the pipeline's (bridge/schema.ts) take the numbers between.
export const CORE_MIGRATIONS: Readonly<Record<string, Migration>> = {
  '0001_accounts_tokens_quota': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('accounts')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull().unique())
        .addColumn('career_intelligence', 'integer', (c) => c.notNull())
        .addColumn('household_fields', 'text')
        .addColumn('career_fields', 'text')
        .addColumn('rate_limit', 'integer', (c) => c.notNull())
        .addColumn('quota_limit', 'integer', (c) => c.notNull())
        .addColumn('quota_period', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'text', (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('tokens')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('environment', 'text', (c) => c.notNull())
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('revoked_at', 'text')
        .execute();
      await db.schema.createIndex('tokens_account_id').on('tokens').column('account_id').execute();
      await db.schema
        .createTable('quota_usage')
        .addColumn('token_id', 'text', (c) => c.notNull().references('tokens.id').onDelete('cascade'))
        .addColumn('period_key', 'text', (c) => c.notNull())
        .addColumn('used', 'integer', (c) => c.notNull().defaultTo(sql`0`))
        .addPrimaryKeyConstraint('quota_usage_pk', ['token_id', 'period_key'])
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('quota_usage').execute();
      await db.schema.dropTable('tokens').execute();
      await db.schema.dropTable('accounts').execute();
    },
  },
  '0002_snapshots': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('snapshots')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('version', 'text', (c) => c.notNull())
        .addColumn('location', 'text', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('households', 'integer', (c) => c.notNull().defaultTo(sql`0`))
        .addColumn('people', 'integer', (c) => c.notNull().defaultTo(sql`0`))
        .addColumn('skipped_lines', 'integer', (c) => c.notNull().defaultTo(sql`0`))
        .addColumn('failure', 'text')
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('loaded_at', 'text')
        .addColumn('activated_at', 'text')
        .addColumn('active', 'integer', (c) => c.notNull().defaultTo(sql`0`))
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('snapshots').execute();
    },
  },
  '0013_snapshot_loader': {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('snapshots').addColumn('loader', 'text').execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('snapshots').dropColumn('loader').execute();
    },
  },
  '0021_suppression': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable('suppressions')
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('value', 'text', (c) => c.notNull())
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('added_by', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('suppressions_pk', ['kind', 'value'])
        .execute();
      await db.schema
        .createTable('suppression_audit')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('at', 'text', (c) => c.notNull())
        .addColumn('actor', 'text', (c) => c.notNull())
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('entries', 'integer', (c) => c.notNull())
        .addColumn('note', 'text')
        .execute();
    },
    async down(db: Kysely<unknown>) {
      await db.schema.dropTable('suppression_audit').execute();
      await db.schema.dropTable('suppressions').execute();
    },
  },
  // Political data (household political_donor, top_political_donor, political_party) becomes an
  // entitlement of its own. Accounts that exist when this runs were answered those fields until now and
  // keep them (1); an account created afterwards is not entitled until an operator grants it (0, the
  // column's default as well as createAccount's).
  '0023_political_entitlement': {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable('accounts')
        .addColumn('political_data', 'integer', (c) => c.notNull().defaultTo(sql`0`))
        .execute();
      await sql`UPDATE accounts SET political_data = 1`.execute(db);
    },
    async down(db: Kysely<unknown>) {
      await db.schema.alterTable('accounts').dropColumn('political_data').execute();
    },
  },
};
