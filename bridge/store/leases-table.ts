// The leases table: work that must not run twice at once across processes (a credential refresh, a
// budget's batch) takes a lease by key. One owner at a time; an expired lease, or one its owner takes
// again, is taken over. Times are the lease clock's (the database's on PostgreSQL), whichever host asks.
import type { Kysely } from 'kysely';
import type { LeaseClock } from '../../core/storage/database-clock.ts';
import type { PipelineDatabase as Database } from '../schema.ts';

export async function acquireLease(db: Kysely<Database>, clock: LeaseClock, key: string, owner: string, ms: number): Promise<boolean> {
  const now = clock.now();
  const rows = await db
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

export async function releaseLease(db: Kysely<Database>, key: string, owner: string): Promise<void> {
  await db.deleteFrom('leases').where('key', '=', key).where('owner', '=', owner).execute();
}
