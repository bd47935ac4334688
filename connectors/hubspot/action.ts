// The "Enrich contact" workflow action: HubSpot posts one request per enrolled contact, signed v2.
// We queue the contact's enrichment (its own job, so no other event swallows it), answer BLOCK at
// once so HubSpot holds the enrollment, and complete the callback with output fields a workflow can
// branch on as soon as the pipeline has settled the record.
import { z } from 'zod';
import type { JobQueue } from '../../core/queue/job-queue.ts';
import type { Installations } from '../pipeline/installations.ts';
import type { CrmValue, Installation } from '../pipeline/model.ts';
import { type SettledCallback, enrichJob } from '../pipeline/pipeline.ts';
import { HUBSPOT_ACTION_OUTPUT_FIELDS } from './action-fields.ts';
import { CONTACT, hubspotApiFor } from './connector.ts';
import { hubspotPropertyFor } from './properties.ts';

/** How long HubSpot holds a BLOCKed enrollment before it moves on without our outputs. */
export const ACTION_EXPIRATION = 'PT15M';

const id = z.union([z.number().int(), z.string().regex(/^\d{1,30}$/)]).transform(String);

export const ActionRequestSchema = z
  .object({
    callbackId: z.string().min(1).max(200),
    origin: z.object({ portalId: id }).loose(),
    object: z.object({ objectId: id, objectType: z.string().max(50) }).loose(),
  })
  .loose();
export type ActionRequest = z.infer<typeof ActionRequestSchema>;

export type ActionResponse = { readonly outputFields: Record<string, string> };

/** Queues the enrollment's contact and tells HubSpot to wait for the callback. */
export async function acceptAction(request: ActionRequest, installation: Installation, queue: JobQueue): Promise<ActionResponse> {
  if (request.object.objectType.toUpperCase() !== 'CONTACT') {
    return { outputFields: { hs_execution_state: 'FAIL_CONTINUE' } };
  }
  await queue.enqueue(enrichJob(installation.id, { object: CONTACT, recordId: request.object.objectId, trigger: 'action', callbackId: request.callbackId }));
  return { outputFields: { hs_execution_state: 'BLOCK', hs_expiration_duration: ACTION_EXPIRATION } };
}

/** The action's output fields from the contact's properties as they stand after our write. */
export function actionOutputs(properties: Readonly<Record<string, CrmValue>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const { name, key } of HUBSPOT_ACTION_OUTPUT_FIELDS) {
    const property = hubspotPropertyFor(key);
    const value = property === null ? null : properties[property];
    if (value === undefined || value === null || String(value).trim() === '') continue;
    out[name] = String(value);
  }
  return out;
}

/** The pipeline's callback hook for HubSpot: completes each waiting workflow action. */
export async function completeHubSpotCallbacks(installation: Installation, installations: Installations, settled: readonly SettledCallback[]): Promise<void> {
  const api = await hubspotApiFor(installation, installations);
  for (const callback of settled) {
    const outputFields =
      callback.failed || callback.properties === null
        ? { hs_execution_state: 'FAIL_CONTINUE' }
        : { ...actionOutputs(callback.properties), hs_execution_state: 'SUCCESS' };
    await api.call('complete workflow callback', (client) => client.automation.actions.callbacksApi.complete(callback.callbackId, { outputFields }));
  }
}
