// The installations table: one row per connected CRM account (a second for the same provider and account
// is refused), its target, status and pause, its settings as JSON read through their schema (fields added
// since get their defaults) and its secrets as sealed.
import type { Kysely, Selectable } from 'kysely';
import { isUniqueViolation } from '../../core/storage/errors.ts';
import { EnvironmentSchema, INSTALLATION_STATUSES, type Installation, InstallationSettingsSchema, PAUSE_REASONS } from '../model.ts';
import type { InstallationsTable, PipelineDatabase as Database } from '../schema.ts';
import { DuplicateInstallationError, type InstallationPatch, type NewInstallationRow } from '../store.ts';
import { z } from 'zod';

const statusColumn = z.enum(INSTALLATION_STATUSES);
const reasonColumn = z.enum(PAUSE_REASONS).nullable();

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
    orgChange: row.org_changed_to === null || row.org_changed_at === null ? null : { externalAccountId: row.org_changed_to, since: row.org_changed_at },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export async function createInstallation(db: Kysely<Database>, row: NewInstallationRow): Promise<Installation> {
  const now = new Date().toISOString();
  try {
    await db
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
  const created = await findInstallation(db, row.id);
  if (created === undefined) throw new Error(`installation ${row.id} vanished after insert`);
  return created;
}

export async function findInstallation(db: Kysely<Database>, id: string): Promise<Installation | undefined> {
  const row = await db.selectFrom('installations').selectAll().where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : toInstallation(row);
}

export async function findInstallationByAccount(db: Kysely<Database>, provider: string, externalAccountId: string): Promise<Installation | undefined> {
  const row = await db
    .selectFrom('installations')
    .selectAll()
    .where('provider', '=', provider)
    .where('external_account_id', '=', externalAccountId)
    .executeTakeFirst();
  return row === undefined ? undefined : toInstallation(row);
}

export async function listInstallations(db: Kysely<Database>): Promise<Installation[]> {
  const rows = await db.selectFrom('installations').selectAll().orderBy('created_at').execute();
  return rows.map(toInstallation);
}

export async function updateInstallation(db: Kysely<Database>, id: string, patch: InstallationPatch): Promise<Installation | undefined> {
  const set: Partial<InstallationsTable> = { updated_at: new Date().toISOString() };
  if (patch.status !== undefined) set.status = patch.status;
  if (patch.pausedUntil !== undefined) set.paused_until = patch.pausedUntil;
  if (patch.pauseReason !== undefined) set.pause_reason = patch.pauseReason;
  if (patch.settings !== undefined) set.settings = JSON.stringify(patch.settings);
  if (patch.sealedSecrets !== undefined) set.secrets = patch.sealedSecrets;
  if (patch.externalAccountId !== undefined) set.external_account_id = patch.externalAccountId;
  if (patch.orgChange !== undefined) {
    set.org_changed_to = patch.orgChange?.externalAccountId ?? null;
    set.org_changed_at = patch.orgChange?.since ?? null;
  }
  try {
    await db.updateTable('installations').set(set).where('id', '=', id).execute();
  } catch (error) {
    // The (provider, account) index refuses a move onto an account another installation has.
    if (isUniqueViolation(error) && patch.externalAccountId !== undefined) {
      const row = await findInstallation(db, id);
      throw new DuplicateInstallationError(row?.provider ?? 'crm', patch.externalAccountId);
    }
    throw error;
  }
  return findInstallation(db, id);
}

/** The installation's row alone (the adapter removes what hangs on it first, in the same transaction). */
export async function deleteInstallationRow(db: Kysely<Database>, id: string): Promise<boolean> {
  const result = await db.deleteFrom('installations').where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function sealedSecrets(db: Kysely<Database>, id: string): Promise<string | undefined> {
  const row = await db.selectFrom('installations').select('secrets').where('id', '=', id).executeTakeFirst();
  return row?.secrets;
}
