// Deliveries a CRM identifies itself (a Salesforce notification id, a HubSpot event), remembered long
// enough to recognise a redelivery: Salesforce retries an outbound message for up to 24 hours, and
// HubSpot's Webhooks Journal holds 3 days of events that may repeat what its webhooks brought.
//
// Use: `unseen` before queueing the work, `remember` after it is queued. A crash in between means a
// redelivery queues the work again, which the queue's dedupe and the pipeline's unchanged-input skip
// make harmless; remembering first could lose a delivery.
import type { Kysely } from 'kysely';
import type { PipelineDatabase as Database } from './schema.ts';

/** Kept a little longer than the longest redelivery window we know (HubSpot's journal: 3 days). */
export const DELIVERY_MEMORY_MS = 96 * 3600_000;

const CHUNK = 100;

/**
 * The ledger's provider under which an installation's events recovered from its CRM's own journal
 * (HubSpot's Webhooks Journal) are kept, so the console can say how many were.
 */
export const recoveredEventsLedger = (installationId: string): string => `recovered:${installationId}`;

export class InboundDeliveries {
  private lastPrune = 0;

  constructor(private readonly db: Kysely<Database>) {}

  /** The ids not delivered within the memory window (an older entry awaiting the prune does not count). */
  async unseen(provider: string, ids: readonly string[], now: Date = new Date()): Promise<Set<string>> {
    const unique = [...new Set(ids)];
    const since = new Date(now.getTime() - DELIVERY_MEMORY_MS).toISOString();
    const seen = new Set<string>();
    for (let i = 0; i < unique.length; i += CHUNK) {
      const rows = await this.db
        .selectFrom('inbound_deliveries')
        .select('delivery_id')
        .where('provider', '=', provider)
        .where('delivery_id', 'in', unique.slice(i, i + CHUNK))
        .where('received_at', '>=', since)
        .execute();
      for (const row of rows) seen.add(row.delivery_id);
    }
    return new Set(unique.filter((id) => !seen.has(id)));
  }

  /** The id of `provider` remembered last, and when; null when none is within the memory window. */
  async latest(provider: string, now: Date = new Date()): Promise<{ id: string; at: Date } | null> {
    const row = await this.db
      .selectFrom('inbound_deliveries')
      .select(['delivery_id', 'received_at'])
      .where('provider', '=', provider)
      .where('received_at', '>=', new Date(now.getTime() - DELIVERY_MEMORY_MS).toISOString())
      .orderBy('received_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row === undefined ? null : { id: row.delivery_id, at: new Date(row.received_at) };
  }

  /** Forgets every id of `provider` (a cursor that no longer holds). */
  async forget(provider: string): Promise<void> {
    await this.db.deleteFrom('inbound_deliveries').where('provider', '=', provider).execute();
  }

  /** How many ids of `provider` were remembered since `since` (a count shown to an admin). */
  async count(provider: string, since: Date): Promise<number> {
    const row = await this.db
      .selectFrom('inbound_deliveries')
      .select((eb) => eb.fn.countAll<number | string | bigint>().as('n'))
      .where('provider', '=', provider)
      .where('received_at', '>=', since.toISOString())
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  async remember(provider: string, ids: readonly string[], now: Date = new Date()): Promise<void> {
    const unique = [...new Set(ids)];
    for (let i = 0; i < unique.length; i += CHUNK) {
      await this.db
        .insertInto('inbound_deliveries')
        .values(unique.slice(i, i + CHUNK).map((id) => ({ provider, delivery_id: id, received_at: now.toISOString() })))
        .onConflict((oc) => oc.columns(['provider', 'delivery_id']).doNothing())
        .execute();
    }
    if (now.getTime() - this.lastPrune > 3600_000) {
      this.lastPrune = now.getTime();
      await this.db
        .deleteFrom('inbound_deliveries')
        .where('received_at', '<', new Date(now.getTime() - DELIVERY_MEMORY_MS).toISOString())
        .execute();
    }
  }
}
