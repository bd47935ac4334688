// Moving a data folder's state from its SQLite file to PostgreSQL (`enrichbridge data migrate-to-
// postgres`): every table the two share, in an order that keeps the foreign keys whole, row for row
// (both sides run the same migrations, so the columns are the same). What is not copied: the snapshots
// registry (a snapshot is a file of this host: load it again, `data load`), and the short-lived leases
// (an OAuth state claim, a credential refresh in progress). A job a worker held becomes queued again,
// its attempts kept: the worker that held it is stopped with the old server. Sealed credentials are
// copied as they are, so the copy is made only under the key that sealed them (requireSealingKey).
import type { Kysely } from 'kysely';
import { SECRET_KEY_ENV, type SecretBox } from '../core/secrets/secret-box.ts';
import { secretsOpenedBy } from './installations.ts';
import type { PipelineDatabase } from './schema.ts';
import { KyselyPipelineStore } from './store/kysely-pipeline-store.ts';

/** Parents before children: accounts before tokens and installations, installations before what hangs off them. */
export const MIGRATED_TABLES = [
  'accounts',
  'tokens',
  'quota_usage',
  'installations',
  'record_states',
  'record_controls',
  'enrichment_log',
  'backfills',
  'backfill_runs',
  'reusable_answers',
  'erased_records',
  'inbound_deliveries',
  'action_callbacks',
  'jobs',
] as const satisfies readonly (keyof PipelineDatabase)[];

export type MigratedTable = (typeof MIGRATED_TABLES)[number];

/** Rows per INSERT: well under PostgreSQL's 65,535 bound parameters for the widest table. */
const CHUNK = 500;

export class MigrationRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MigrationRefusedError';
  }
}

/**
 * Refuses the copy unless `box` opens every installation's sealed secrets in `from`: the instances on
 * PostgreSQL read them with their ENRICHBRIDGE_SECRET_KEY, so a copy made while the operator holds
 * another key would leave every installation unreadable there. `keyHint` says where the right key is.
 */
export async function requireSealingKey(from: Kysely<PipelineDatabase>, box: SecretBox, keyHint: string): Promise<void> {
  const { tried, opened } = await secretsOpenedBy(box, new KyselyPipelineStore(from));
  if (opened < tried) {
    throw new MigrationRefusedError(
      `${SECRET_KEY_ENV} opens ${opened} of the ${tried} installations' sealed credentials in this folder: set it to the key that sealed them (${keyHint}); nothing was copied`,
    );
  }
}

export interface CopyProgress {
  readonly table: MigratedTable;
  readonly copied: number;
  readonly total: number;
}

async function countRows(db: Kysely<PipelineDatabase>, table: MigratedTable): Promise<number> {
  const row = await db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Copies every table of `from` into `to`, in one transaction on `to` (all of it lands, or none), after
 * checking `to` holds none of these rows yet. Returns the rows copied per table, counted again on `to`.
 */
export async function copyState(
  from: Kysely<PipelineDatabase>,
  to: Kysely<PipelineDatabase>,
  onProgress: (progress: CopyProgress) => void = () => undefined,
): Promise<Record<MigratedTable, number>> {
  for (const table of MIGRATED_TABLES) {
    const already = await countRows(to, table);
    if (already > 0) throw new MigrationRefusedError(`the target database already has ${already} rows in ${table}: migrate into an empty one`);
  }
  const totals = Object.fromEntries(await Promise.all(MIGRATED_TABLES.map(async (table) => [table, await countRows(from, table)] as const))) as Record<
    MigratedTable,
    number
  >;
  return to.transaction().execute(async (trx) => {
    for (const table of MIGRATED_TABLES) {
      const total = totals[table];
      let copied = 0;
      onProgress({ table, copied, total });
      const insert = async (rows: Record<string, unknown>[]): Promise<void> => {
        await trx
          .insertInto(table)
          .values((table === 'jobs' ? rows.map(requeued) : rows) as never)
          .execute();
        copied += rows.length;
        onProgress({ table, copied, total });
      };
      // Read once, streamed in the source's own order; written in multi-row INSERTs.
      let batch: Record<string, unknown>[] = [];
      for await (const row of from.selectFrom(table).selectAll().stream(CHUNK)) {
        batch.push(row as Record<string, unknown>);
        if (batch.length === CHUNK) {
          await insert(batch);
          batch = [];
        }
      }
      if (batch.length > 0) await insert(batch);
    }
    // Counted again before the commit: a copy that does not add up (the source changed under it) rolls back whole.
    const landed: Partial<Record<MigratedTable, number>> = {};
    for (const table of MIGRATED_TABLES) landed[table] = await countRows(trx, table);
    const short = MIGRATED_TABLES.filter((table) => landed[table] !== totals[table]);
    if (short.length > 0)
      throw new MigrationRefusedError(
        `the copy does not add up in ${short.join(', ')} (was a server still writing the SQLite file?): nothing was copied; stop the servers and migrate again`,
      );
    return landed as Record<MigratedTable, number>;
  });
}

/** A job a worker held on the old database: queued again for the new one's workers. */
function requeued(row: Record<string, unknown>): Record<string, unknown> {
  return row.state === 'running' ? { ...row, state: 'queued', lease_owner: null, lease_expires_at: null } : row;
}
