// The job that asks for one record's enrichment: its kind, its payload (what triggered it, whether to
// enrich even an unchanged record, a workflow waiting on it) and its dedupe key, so the webhook, the
// workflow action, the backfill and the CLI queue the same thing.
import { z } from 'zod';
import type { NewJob } from './job-queue.ts';

export const ENRICH_JOB = 'enrich';

export const TRIGGERS = ['create', 'update', 'backfill', 'manual', 'action', 'refresh'] as const;

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
