// The job that asks for one record's enrichment: its kind, its payload (what triggered it, whether to
// enrich even an unchanged record, a workflow waiting on it) and its dedupe key, so the webhook, the
// workflow action, the backfill and the CLI queue the same thing.
import { z } from 'zod';
import type { NewJob } from './job-queue.ts';

export const ENRICH_JOB = 'enrich';

/** `now`: a CRM user's Enrich now on the record (record-actions.ts): forced, at the front of the queue, and it enriches an undone record again. */
export const TRIGGERS = ['create', 'update', 'backfill', 'manual', 'action', 'refresh', 'now'] as const;

export const EnrichJobPayloadSchema = z.object({
  object: z.string().min(1),
  recordId: z.string().min(1),
  trigger: z.enum(TRIGGERS).default('create'),
  /** Enrich even when the input is unchanged and recent. */
  force: z.boolean().default(false),
  /** A CRM workflow waits on this record (HubSpot's callbackId): told the result once it is settled. */
  callbackId: z.string().min(1).max(200).optional(),
});
export type EnrichJobPayload = z.input<typeof EnrichJobPayloadSchema>;

/** The dedupe key of a record's enrichment job. */
export function enrichDedupeKey(installationId: string, object: string, recordId: string): string {
  return `${ENRICH_JOB}:${installationId}:${object}:${recordId}`;
}

/** The dedupe key of a record's Enrich now (its own: a waiting ordinary job must not absorb it). */
export function enrichNowDedupeKey(installationId: string, object: string, recordId: string): string {
  return `${enrichDedupeKey(installationId, object, recordId)}:now`;
}

/**
 * A CRM user's Enrich now: forced, and at the front of the queue (the queue hands out the readiest
 * installation's readiest jobs first, by run time, so a run time at the epoch comes before any other).
 */
export function enrichNowJob(installationId: string, object: string, recordId: string): NewJob {
  return {
    installationId,
    kind: ENRICH_JOB,
    payload: { object, recordId, trigger: 'now', force: true } satisfies EnrichJobPayload,
    dedupeKey: enrichNowDedupeKey(installationId, object, recordId),
    runAt: new Date(0),
  };
}

/** The queue job for one record; duplicates of a waiting job add nothing. */
export function enrichJob(installationId: string, payload: EnrichJobPayload): NewJob {
  return {
    installationId,
    kind: ENRICH_JOB,
    payload,
    // A workflow's request is its own job: merged into another, its caller would never hear back.
    dedupeKey:
      payload.callbackId === undefined
        ? enrichDedupeKey(installationId, payload.object, payload.recordId)
        : `${enrichDedupeKey(installationId, payload.object, payload.recordId)}:callback:${payload.callbackId}`,
  };
}
