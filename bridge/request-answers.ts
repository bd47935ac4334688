// Requests that must be answered once and then the same way (a CRM's request id that can be replayed
// byte for byte, HubSpot's workflow-action callbackId): the first claim of an id wins, and every later
// one hears what the first stored. The storage adapter of that rule, over the `action_callbacks` table
// (migration 0010); ids older than the memory window are pruned at most once an hour.
import type { Kysely } from 'kysely';
import type { PipelineDatabase as Database } from './schema.ts';

export type Claim =
  /** This request is the first for the id: do the work, then store the answer. */
  | { readonly first: true }
  /** Seen before: `answer` is what the first stored (null while it is still being worked on). */
  | { readonly first: false; readonly answer: unknown }
  /** The id belongs to another installation: nothing of theirs is told. */
  | { readonly first: false; readonly foreign: true };

/**
 * How long an id is remembered: HubSpot retries an action request that failed for up to three days, and
 * the v2 signature has no timestamp, so a replay of the same bytes verifies for ever.
 */
export const REQUEST_ANSWER_MEMORY_MS = 4 * 24 * 3600_000;

export class RequestAnswers {
  private lastPrune = 0;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly memoryMs: number = REQUEST_ANSWER_MEMORY_MS,
  ) {}

  async claim(installationId: string, id: string, now: Date = new Date()): Promise<Claim> {
    const inserted = await this.db
      .insertInto('action_callbacks')
      .values({ callback_id: id, installation_id: installationId, answer: null, received_at: now.toISOString() })
      .onConflict((oc) => oc.column('callback_id').doNothing())
      .executeTakeFirst();
    if (now.getTime() - this.lastPrune > 3600_000) {
      this.lastPrune = now.getTime();
      await this.db
        .deleteFrom('action_callbacks')
        .where('received_at', '<', new Date(now.getTime() - this.memoryMs).toISOString())
        .execute();
    }
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) > 0) return { first: true };
    const row = await this.db.selectFrom('action_callbacks').select(['installation_id', 'answer']).where('callback_id', '=', id).executeTakeFirst();
    if (row === undefined || row.installation_id !== installationId) return { first: false, foreign: true };
    if (row.answer === null) return { first: false, answer: null };
    try {
      return { first: false, answer: JSON.parse(row.answer) as unknown };
    } catch {
      return { first: false, answer: null };
    }
  }

  /** Stores the answer the first request gave. */
  async answered(id: string, answer: unknown): Promise<void> {
    await this.db
      .updateTable('action_callbacks')
      .set({ answer: JSON.stringify(answer) })
      .where('callback_id', '=', id)
      .execute();
  }
}
