// The Store port over Kysely, written once for every SQL dialect we support: only statements that
// SQLite (3.35+) and PostgreSQL both accept (ON CONFLICT DO NOTHING, UPDATE … RETURNING).
import { randomUUID } from 'node:crypto';
import { type Kysely, PostgresAdapter, type Selectable, type Transaction, sql } from 'kysely';
import { z } from 'zod';
import { type Account, ENVIRONMENTS, type FieldEntitlement, type NewAccount, QUOTA_PERIODS, type TokenRecord } from '../accounts/model.ts';
import { CAREER_FIELDS, HOUSEHOLD_FIELDS } from '../contract/schemas.ts';
import { DuplicateAccountError, type NewToken, type QuotaTake, SNAPSHOT_STATES, type SnapshotRecord, type Store } from './port.ts';
import { isUniqueViolation } from './errors.ts';
import { SNAPSHOTS_CHANNEL_SQL } from './postgres-listener.ts';
import type { AccountsTable, Database, SnapshotsTable, TokensTable } from './schema.ts';
import { SuppressionStore } from '../suppression/store.ts';

// Rows are parsed, not cast: a hand-edited database must fail loudly, not mis-entitle an account.
const householdFieldsColumn = z.array(z.enum(HOUSEHOLD_FIELDS));
const careerFieldsColumn = z.array(z.enum(CAREER_FIELDS));
const quotaPeriodColumn = z.enum(QUOTA_PERIODS);
const environmentColumn = z.enum(ENVIRONMENTS);
const snapshotStateColumn = z.enum(SNAPSHOT_STATES);

function toSnapshot(row: Selectable<SnapshotsTable>): SnapshotRecord {
  return {
    id: row.id,
    version: row.version,
    location: row.location,
    state: snapshotStateColumn.parse(row.state),
    households: Number(row.households),
    people: Number(row.people),
    skippedLines: Number(row.skipped_lines),
    failure: row.failure,
    createdAt: row.created_at,
    loadedAt: row.loaded_at,
    activatedAt: row.activated_at,
    loader: row.loader,
    active: Number(row.active) === 1,
  };
}

function fieldsToColumn(fields: FieldEntitlement<string>): string | null {
  return fields === 'all' ? null : JSON.stringify(fields);
}

function toAccount(row: Selectable<AccountsTable>): Account {
  return {
    id: row.id,
    name: row.name,
    careerIntelligence: Number(row.career_intelligence) === 1,
    politicalData: Number(row.political_data) === 1,
    householdFields: row.household_fields === null ? 'all' : householdFieldsColumn.parse(JSON.parse(row.household_fields)),
    careerFields: row.career_fields === null ? 'all' : careerFieldsColumn.parse(JSON.parse(row.career_fields)),
    rateLimit: Number(row.rate_limit),
    quotaLimit: Number(row.quota_limit),
    quotaPeriod: quotaPeriodColumn.parse(row.quota_period),
    createdAt: row.created_at,
  };
}

function toToken(row: Pick<Selectable<TokensTable>, 'id' | 'account_id' | 'environment' | 'created_at' | 'revoked_at'>): TokenRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    environment: environmentColumn.parse(row.environment),
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}

export class KyselyStore implements Store {
  readonly suppressions: SuppressionStore;

  constructor(
    private readonly db: Kysely<Database>,
    /** What else closes with the store (PostgreSQL: the connection that listens for ready jobs). */
    private readonly beforeClose?: () => Promise<void>,
  ) {
    this.suppressions = new SuppressionStore(db);
  }

  async createAccount(input: NewAccount): Promise<Account> {
    const now = new Date().toISOString();
    const row = {
      id: `acct_${randomUUID()}`,
      name: input.name,
      career_intelligence: input.careerIntelligence ? 1 : 0,
      political_data: input.politicalData ? 1 : 0,
      household_fields: fieldsToColumn(input.householdFields),
      career_fields: fieldsToColumn(input.careerFields),
      rate_limit: input.rateLimit,
      quota_limit: input.quotaLimit,
      quota_period: input.quotaPeriod,
      created_at: now,
      updated_at: now,
    };
    try {
      await this.db.insertInto('accounts').values(row).execute();
    } catch (error) {
      if (isUniqueViolation(error)) throw new DuplicateAccountError(input.name);
      throw error;
    }
    return toAccount(row);
  }

  async updateAccount(account: Account): Promise<void> {
    await this.db
      .updateTable('accounts')
      .set({
        career_intelligence: account.careerIntelligence ? 1 : 0,
        political_data: account.politicalData ? 1 : 0,
        household_fields: fieldsToColumn(account.householdFields),
        career_fields: fieldsToColumn(account.careerFields),
        rate_limit: account.rateLimit,
        quota_limit: account.quotaLimit,
        quota_period: account.quotaPeriod,
        updated_at: new Date().toISOString(),
      })
      .where('id', '=', account.id)
      .execute();
  }

  async findAccountByName(name: string): Promise<Account | undefined> {
    const row = await this.db.selectFrom('accounts').selectAll().where('name', '=', name).executeTakeFirst();
    return row === undefined ? undefined : toAccount(row);
  }

  async findAccountById(id: string): Promise<Account | undefined> {
    const row = await this.db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? undefined : toAccount(row);
  }

  async listAccounts(): Promise<Account[]> {
    const rows = await this.db.selectFrom('accounts').selectAll().orderBy('name').execute();
    return rows.map(toAccount);
  }

  async countAccounts(): Promise<number> {
    const row = await this.db
      .selectFrom('accounts')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async createToken(token: NewToken): Promise<TokenRecord> {
    const row = {
      id: token.id,
      account_id: token.accountId,
      environment: token.environment,
      token_hash: token.hash,
      created_at: new Date().toISOString(),
      revoked_at: null,
    };
    await this.db.insertInto('tokens').values(row).execute();
    return toToken(row);
  }

  async findLiveToken(hash: string): Promise<{ token: TokenRecord; account: Account; tokenHash: string } | undefined> {
    const row = await this.db
      .selectFrom('tokens')
      .innerJoin('accounts', 'accounts.id', 'tokens.account_id')
      .selectAll('accounts')
      .select([
        'tokens.id as token_id',
        'tokens.environment as token_environment',
        'tokens.created_at as token_created_at',
        'tokens.revoked_at as token_revoked_at',
        'tokens.token_hash as token_hash',
      ])
      .where('tokens.token_hash', '=', hash)
      .where('tokens.revoked_at', 'is', null)
      .executeTakeFirst();
    if (row === undefined) return undefined;
    return {
      tokenHash: row.token_hash,
      account: toAccount(row),
      token: toToken({
        id: row.token_id,
        account_id: row.id,
        environment: row.token_environment,
        created_at: row.token_created_at,
        revoked_at: row.token_revoked_at,
      }),
    };
  }

  async revokeToken(ref: { hash: string } | { id: string }): Promise<boolean> {
    let query = this.db.updateTable('tokens').set({ revoked_at: new Date().toISOString() }).where('revoked_at', 'is', null);
    query = 'hash' in ref ? query.where('token_hash', '=', ref.hash) : query.where('id', '=', ref.id);
    const result = await query.executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async listTokens(accountId: string): Promise<TokenRecord[]> {
    const rows = await this.db
      .selectFrom('tokens')
      .select(['id', 'account_id', 'environment', 'created_at', 'revoked_at'])
      .where('account_id', '=', accountId)
      .orderBy('created_at')
      .execute();
    return rows.map(toToken);
  }

  async takeQuota(tokenId: string, periodKey: string, limit: number): Promise<QuotaTake> {
    if (limit <= 0) return { granted: false, used: await this.quotaUsed(tokenId, periodKey) };
    // One statement is the whole atomic step: the first take of a period inserts used = 1; later ones
    // add one under the row lock (PostgreSQL) or the write lock (SQLite), only while used < limit.
    const taken = await this.db
      .insertInto('quota_usage')
      .values({ token_id: tokenId, period_key: periodKey, used: 1 })
      .onConflict((oc) =>
        oc
          .columns(['token_id', 'period_key'])
          .doUpdateSet((eb) => ({ used: eb('quota_usage.used', '+', 1) }))
          .where('quota_usage.used', '<', limit),
      )
      .returning('used')
      .executeTakeFirst();
    if (taken !== undefined) return { granted: true, used: Number(taken.used) };
    return { granted: false, used: await this.quotaUsed(tokenId, periodKey) };
  }

  async returnQuota(tokenId: string, periodKey: string): Promise<void> {
    await this.db
      .updateTable('quota_usage')
      .set((eb) => ({ used: eb('used', '-', 1) }))
      .where('token_id', '=', tokenId)
      .where('period_key', '=', periodKey)
      .where('used', '>', 0)
      .execute();
  }

  async quotaUsed(tokenId: string, periodKey: string): Promise<number> {
    const row = await this.db.selectFrom('quota_usage').select('used').where('token_id', '=', tokenId).where('period_key', '=', periodKey).executeTakeFirst();
    return row === undefined ? 0 : Number(row.used);
  }

  async beginSnapshot(snapshot: { id: string; version: string; location: string; createdAt: string; loader: string }): Promise<void> {
    await this.db
      .insertInto('snapshots')
      .values({
        id: snapshot.id,
        version: snapshot.version,
        location: snapshot.location,
        state: 'loading',
        households: 0,
        people: 0,
        skipped_lines: 0,
        failure: null,
        created_at: snapshot.createdAt,
        loaded_at: null,
        activated_at: null,
        active: 0,
        loader: snapshot.loader,
      })
      .execute();
  }

  async activateLoadedSnapshot(id: string, counts: { households: number; people: number; skippedLines: number }): Promise<void> {
    const now = new Date().toISOString();
    await this.db.transaction().execute(async (trx) => {
      await trx.updateTable('snapshots').set({ active: 0 }).where('active', '=', 1).execute();
      await trx
        .updateTable('snapshots')
        .set({
          state: 'ready',
          households: counts.households,
          people: counts.people,
          skipped_lines: counts.skippedLines,
          loaded_at: now,
          activated_at: now,
          active: 1,
        })
        .where('id', '=', id)
        .execute();
      await announceSnapshotChange(trx);
    });
  }

  async failSnapshot(id: string, failure: string): Promise<void> {
    await this.db.updateTable('snapshots').set({ state: 'failed', failure, active: 0 }).where('id', '=', id).execute();
  }

  async abandonSnapshot(id: string, failure: string): Promise<boolean> {
    const result = await this.db
      .updateTable('snapshots')
      .set({ state: 'failed', failure, active: 0 })
      .where('id', '=', id)
      .where('state', '=', 'loading')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async activeSnapshot(): Promise<SnapshotRecord | undefined> {
    const row = await this.db.selectFrom('snapshots').selectAll().where('active', '=', 1).executeTakeFirst();
    return row === undefined ? undefined : toSnapshot(row);
  }

  async listSnapshots(): Promise<SnapshotRecord[]> {
    const rows = await this.db.selectFrom('snapshots').selectAll().orderBy('loaded_at', 'desc').orderBy('id', 'desc').execute();
    return rows.map(toSnapshot);
  }

  async rollbackSnapshot(): Promise<SnapshotRecord | undefined> {
    return this.db.transaction().execute(async (trx) => {
      // Write first: it takes the write lock (SQLite) or the active row's lock (PostgreSQL) before
      // anything is read, so a concurrent writer makes this wait instead of failing with "busy".
      await trx.updateTable('snapshots').set({ active: 1 }).where('active', '=', 1).execute();
      const current = await trx.selectFrom('snapshots').selectAll().where('active', '=', 1).executeTakeFirst();
      let previous = trx.selectFrom('snapshots').selectAll().where('state', '=', 'ready').where('active', '=', 0);
      if (current?.activated_at !== null && current?.activated_at !== undefined) {
        previous = previous.where('activated_at', '<', current.activated_at);
      }
      const target = await previous.where('activated_at', 'is not', null).orderBy('activated_at', 'desc').executeTakeFirst();
      if (target === undefined) return undefined;
      if (current !== undefined) {
        await trx.updateTable('snapshots').set({ active: 0, state: 'rolled_back' }).where('id', '=', current.id).execute();
      }
      await trx.updateTable('snapshots').set({ active: 1 }).where('id', '=', target.id).execute();
      await announceSnapshotChange(trx);
      return toSnapshot({ ...target, active: 1 });
    });
  }

  async deleteSnapshot(id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('snapshots').where('id', '=', id).where('active', '=', 0).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  async close(): Promise<void> {
    await this.beforeClose?.();
    await this.db.destroy();
  }
}

/**
 * On PostgreSQL, tells every instance listening that the active snapshot changed; sent inside the
 * transaction that changes it, so it is delivered when (and only if) the change commits. SQLite has
 * one process per data folder's registry to tell: its poll does.
 */
async function announceSnapshotChange(trx: Transaction<Database>): Promise<void> {
  if (!(trx.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`SELECT pg_notify(${sql.raw(SNAPSHOTS_CHANNEL_SQL)}, '')`.execute(trx);
}
