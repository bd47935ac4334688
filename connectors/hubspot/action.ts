// The "Enrich contact" workflow action: HubSpot posts one request per enrolled contact, signed v2.
// We queue the contact's enrichment (its own job, so no other event swallows it) and wait up to
// 2.5 s: when the pipeline settles it in time, the answer carries the output fields a workflow can
// branch on; otherwise the answer is BLOCK (HubSpot holds the enrollment) and the callback is
// completed with those fields as soon as the contact is settled.
import { z } from 'zod';
import type { Job, JobQueue, NewJob } from '../../bridge/job-queue.ts';
import type { RequestAnswers } from '../../bridge/request-answers.ts';
import type { Installations } from '../../bridge/installations.ts';
import type { Installation } from '../../bridge/model.ts';
import { type SettledCallback } from '../../bridge/pipeline.ts';
import { enrichJob } from '../../bridge/enrich-job.ts';
import { hubspotActionOutputs } from './action-fields.ts';
import { CrmError } from '../../bridge/connector.ts';
import { HubSpotApiError, Ignored } from './api.ts';
import { HUBSPOT_PATHS } from './version.ts';
import { CONTACT, hubspotApiFor } from './connector.ts';
import { HubSpotIdSchema } from './ids.ts';
import type { HubSpotCredentials } from './auth.ts';
import { verifyHubSpotRequest } from './signature.ts';
import { type HttpResult, jsonResult } from '../../bridge/http.ts';
import type { Headers } from '../kit/signature.ts';

/** How long HubSpot holds a BLOCKed enrollment before it moves on without our outputs. */
export const ACTION_EXPIRATION = 'PT15M';
const ACTION_EXPIRATION_MS = 15 * 60_000;

/** A workflow callback HubSpot refused at that moment, tried again by this job kind until its deadline. */
export const HUBSPOT_CALLBACK_JOB = 'hubspot-callback';
/** The first retry's delay; each next one doubles it, and none goes past the deadline. */
export const CALLBACK_RETRY_BASE_MS = 15_000;

const CallbackRetrySchema = z.object({
  callbackId: z.string().min(1).max(200),
  outputFields: z.record(z.string(), z.string()),
  deadline: z.iso.datetime(),
  attempt: z.number().int().min(1),
});
type CallbackRetry = z.infer<typeof CallbackRetrySchema>;

function callbackRetryJob(installationId: string, retry: CallbackRetry, now: Date = new Date()): NewJob {
  const runAt = new Date(Math.min(now.getTime() + CALLBACK_RETRY_BASE_MS * 2 ** (retry.attempt - 1), new Date(retry.deadline).getTime()));
  return { installationId, kind: HUBSPOT_CALLBACK_JOB, payload: retry, runAt, maxAttempts: 1, dedupeKey: `callback:${retry.callbackId}:${retry.attempt}` };
}

/** 429s, 5xx and calls that did not answer: HubSpot may take the completion later. A 4xx (expired, unknown) will not. */
function retryableCompletion(error: unknown): boolean {
  if (error instanceof HubSpotApiError) return error.status >= 500;
  return error instanceof CrmError && (error.kind === 'rate_limited' || error.kind === 'limit_exhausted' || error.kind === 'transient');
}

/** HubSpot's batch completion takes at most 100 callbacks. */
const CALLBACK_BATCH_LIMIT = 100;

/** One enrollment to complete, and what became of it. */
interface Completion {
  readonly callbackId: string;
  readonly outputFields: Record<string, string>;
}

const completionInput = (c: Completion) => ({ callbackId: c.callbackId, outputFields: c.outputFields, typedOutputs: {} });

/**
 * Completes BLOCKed enrollments, 100 to a call. A chunk HubSpot refuses with a 4xx (one expired or
 * unknown callback refuses the whole call) is completed one by one, so the others are not left to
 * expire; a chunk refused at that moment (429, 5xx, no answer) fails as a whole, to be tried again.
 * Returns the error of each completion that did not go through, by callback id.
 * Docs: https://developers.hubspot.com/docs/api-reference/latest/automation/actions-v4/callbacks/complete-batch
 */
async function completeCallbacks(api: Awaited<ReturnType<typeof hubspotApiFor>>, completions: readonly Completion[]): Promise<Map<string, unknown>> {
  const failed = new Map<string, unknown>();
  for (let start = 0; start < completions.length; start += CALLBACK_BATCH_LIMIT) {
    const chunk = completions.slice(start, start + CALLBACK_BATCH_LIMIT);
    try {
      await api.call(
        'complete workflow callbacks',
        { method: 'POST', path: HUBSPOT_PATHS.callbacksComplete, body: { inputs: chunk.map(completionInput) } },
        Ignored,
      );
    } catch (error) {
      if (retryableCompletion(error) || chunk.length === 1) {
        for (const c of chunk) failed.set(c.callbackId, error);
        continue;
      }
      for (const c of chunk) {
        try {
          await api.call(
            'complete workflow callback',
            { method: 'POST', path: HUBSPOT_PATHS.callbacksComplete, body: { inputs: [completionInput(c)] } },
            Ignored,
          );
        } catch (one) {
          failed.set(c.callbackId, one);
        }
      }
    }
  }
  return failed;
}

/**
 * The worker's handler for HUBSPOT_CALLBACK_JOB: completes each callback, and when HubSpot refuses
 * again, queues the next try (backoff doubling from 15 s) while the deadline allows; past it the
 * enrollment has expired in HubSpot and the job ends.
 */
export async function retryHubSpotCallbacks(
  installation: Installation,
  installations: Installations,
  jobs: readonly Job[],
  queue: JobQueue,
  now: Date = new Date(),
): Promise<void> {
  const api = await hubspotApiFor(installation, installations);
  const due = jobs
    .map((job) => CallbackRetrySchema.safeParse(job.payload))
    .flatMap((retry) => (retry.success && now.getTime() < new Date(retry.data.deadline).getTime() ? [retry.data] : []));
  const failed = await completeCallbacks(api, due);
  for (const retry of due) {
    const error = failed.get(retry.callbackId);
    if (error === undefined) continue;
    const next = { ...retry, attempt: retry.attempt + 1 };
    if (retryableCompletion(error) && now.getTime() + CALLBACK_RETRY_BASE_MS * 2 ** retry.attempt < new Date(next.deadline).getTime()) {
      await queue.enqueue(callbackRetryJob(installation.id, next, now));
    }
  }
}

/**
 * How long the action request waits for the pipeline to settle the contact before answering BLOCK.
 * HubSpot gives an action 5 seconds (less is safer); an idle worker in this process settles a
 * contact in well under a second.
 */
export const ACTION_WAIT_MS = 2_500;

/**
 * The callback ids already taken and what they were answered. A v2-signed action request can be
 * replayed byte for byte; the first request for a callback id queues the work, and every later one
 * (HubSpot's own retry, or a replay) gets the stored answer, or BLOCK while the enrollment waits, and
 * queues nothing.
 */
export class ActionCallbacks {
  constructor(private readonly answers: RequestAnswers) {}

  /** Takes the callback id: null when this request is the first for it, else what to answer. */
  async claim(installationId: string, callbackId: string, now: Date = new Date()): Promise<ActionResponse | null> {
    const claim = await this.answers.claim(installationId, callbackId, now);
    if (claim.first) return null;
    // Another installation's callback id: nothing of theirs is told.
    if ('foreign' in claim) return { outputFields: { hs_execution_state: 'FAIL_CONTINUE' } };
    const stored = claim.answer === null ? null : ActionResponseSchema.safeParse(claim.answer);
    return stored?.success === true ? stored.data : blocked();
  }

  /** Records the answer the first request gave with the enrollment's outputs. */
  async answered(callbackId: string, answer: ActionResponse): Promise<void> {
    await this.answers.answered(callbackId, answer);
  }
}

const ActionResponseSchema = z.object({ outputFields: z.record(z.string(), z.string()) });

const blocked = (): ActionResponse => ({ outputFields: { hs_execution_state: 'BLOCK', hs_expiration_duration: ACTION_EXPIRATION } });

/**
 * Action requests waiting in this process for their contact to be settled. Whoever comes first for a
 * callbackId wins: the pipeline's hook hands the outputs to a waiting request (which answers them
 * synchronously, and no callback is sent), or, once the request has given up and answered BLOCK, the
 * hook completes the callback through the API. One thread, so the handoff cannot race.
 */
export class ActionWaiters {
  private readonly waiting = new Map<string, (outputs: Record<string, string>) => void>();

  wait(callbackId: string, ms: number): Promise<Record<string, string> | null> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(callbackId);
        resolve(null);
      }, ms);
      this.waiting.set(callbackId, (outputs) => {
        clearTimeout(timer);
        this.waiting.delete(callbackId);
        resolve(outputs);
      });
    });
  }

  /** True when a request was waiting and took the outputs. */
  deliver(callbackId: string, outputs: Record<string, string>): boolean {
    const waiter = this.waiting.get(callbackId);
    if (waiter === undefined) return false;
    waiter(outputs);
    return true;
  }
}

/** This process's waiters, shared by the action route and the callback hook. */
export const actionWaiters = new ActionWaiters();

const id = HubSpotIdSchema;

export const ActionRequestSchema = z
  .object({
    callbackId: z.string().min(1).max(200),
    origin: z.object({ portalId: id }).loose(),
    object: z.object({ objectId: id, objectType: z.string().max(50) }).loose(),
  })
  .loose();
export type ActionRequest = z.infer<typeof ActionRequestSchema>;

export type ActionResponse = { readonly outputFields: Record<string, string> };

/**
 * Queues the enrollment's contact, then waits a little for a worker of this process to settle it:
 * the outputs come back in the answer when it does, and otherwise the answer is BLOCK and the
 * callback is completed later.
 */
export async function acceptAction(
  request: ActionRequest,
  installation: Installation,
  queue: JobQueue,
  options: { wake?: () => void; waiters?: ActionWaiters; waitMs?: number; callbacks?: ActionCallbacks } = {},
): Promise<ActionResponse> {
  if (request.object.objectType.toUpperCase() !== 'CONTACT') {
    return { outputFields: { hs_execution_state: 'FAIL_CONTINUE' } };
  }
  const seen = await options.callbacks?.claim(installation.id, request.callbackId);
  if (seen !== undefined && seen !== null) return seen;
  const waiters = options.waiters ?? actionWaiters;
  // Waiting starts before the enqueue, so a worker that settles the contact at once finds us.
  const settled = waiters.wait(request.callbackId, options.waitMs ?? ACTION_WAIT_MS);
  await queue.enqueue(enrichJob(installation.id, { object: CONTACT, recordId: request.object.objectId, trigger: 'action', callbackId: request.callbackId }));
  options.wake?.();
  const outputs = await settled;
  if (outputs === null) return blocked();
  await options.callbacks?.answered(request.callbackId, { outputFields: outputs });
  return { outputFields: outputs };
}

export interface ActionRequestDeps {
  /** The public app's client secret (null: no public app); a static-token portal has its own. */
  readonly appClientSecret: string | null;
  readonly installationOf: (portalId: string) => Promise<Installation | undefined>;
  readonly credentialsOf: (installation: Installation) => Promise<HubSpotCredentials | null>;
  readonly queue: JobQueue;
  readonly wake: () => void;
  readonly callbacks: ActionCallbacks;
  /** The job could not be queued (for the operator's log): HubSpot is told to retry. */
  readonly onError: (error: unknown) => void;
}

function portalOf(raw: Buffer): string | null {
  try {
    const parsed: unknown = JSON.parse(raw.toString('utf8'));
    const origin = typeof parsed === 'object' && parsed !== null && 'origin' in parsed ? parsed.origin : null;
    const portal = typeof origin === 'object' && origin !== null && 'portalId' in origin ? origin.portalId : null;
    return typeof portal === 'number' || typeof portal === 'string' ? String(portal) : null;
  } catch {
    return null;
  }
}

/**
 * A workflow action request as HubSpot posts it: verified with the app's secret or the claimed portal's
 * own (v3, timestamped, so a replay goes stale in 5 minutes, when HubSpot sends it, as it does beside
 * the older versions; otherwise v2, whose replays the callback ids catch), parsed, then acceptAction.
 */
export async function acceptActionRequest(
  body: Buffer,
  request: { readonly url: string; readonly headers: Headers; readonly now: number },
  deps: ActionRequestDeps,
): Promise<HttpResult> {
  const portal = portalOf(body);
  const installation = portal === null ? undefined : await deps.installationOf(portal);
  const secrets: string[] = deps.appClientSecret === null ? [] : [deps.appClientSecret];
  if (installation !== undefined) {
    const credentials = await deps.credentialsOf(installation);
    if (credentials !== null && !secrets.includes(credentials.clientSecret)) secrets.push(credentials.clientSecret);
  }
  const verify = (clientSecret: string): boolean =>
    verifyHubSpotRequest({ clientSecret, method: 'POST', url: request.url, rawBody: body, headers: request.headers, accept: ['v3', 'v2'], now: request.now })
      .ok;
  if (!secrets.some(verify)) return jsonResult(401, { message: 'invalid or missing HubSpot signature' });
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    return jsonResult(400, { message: 'the body is not JSON' });
  }
  const parsed = ActionRequestSchema.safeParse(json);
  if (!parsed.success) return jsonResult(400, { message: 'not a workflow action request (callbackId, origin.portalId, object.objectId)' });
  if (installation === undefined || installation.status === 'disabled') return jsonResult(200, { outputFields: { hs_execution_state: 'FAIL_CONTINUE' } });
  try {
    return jsonResult(200, await acceptAction(parsed.data, installation, deps.queue, { wake: deps.wake, callbacks: deps.callbacks }));
  } catch (error) {
    deps.onError(error);
    return jsonResult(503, { message: 'could not queue the enrichment; HubSpot will retry' });
  }
}

/**
 * The outputs for a settled contact: its values and SUCCESS, or FAIL_CONTINUE when it could not be
 * enriched or is gone. A contact deleted between our read and our write still has the properties we
 * read, so the outcome decides, not only whether properties are there.
 */
export function settledOutputs(callback: SettledCallback): Record<string, string> {
  return callback.failed || callback.properties === null || callback.outcome === 'skipped:record_deleted'
    ? { hs_execution_state: 'FAIL_CONTINUE' }
    : { ...hubspotActionOutputs(callback.properties), hs_execution_state: 'SUCCESS' };
}

/**
 * The pipeline's callback hook for HubSpot: hands each settled contact to its waiting request in this
 * process, or completes the workflow's callback through the API when none waits any more.
 */
export async function completeHubSpotCallbacks(
  installation: Installation,
  installations: Installations,
  settled: readonly SettledCallback[],
  context: { queue?: JobQueue; now?: Date } = {},
  waiters: ActionWaiters = actionWaiters,
): Promise<void> {
  const late = settled.filter((callback) => !waiters.deliver(callback.callbackId, settledOutputs(callback)));
  if (late.length === 0) return;
  const api = await hubspotApiFor(installation, installations);
  const completions = late.map((callback) => ({ callbackId: callback.callbackId, outputFields: settledOutputs(callback) }));
  const failed = await completeCallbacks(api, completions);
  const failures: unknown[] = [];
  const deadline = new Date((context.now ?? new Date()).getTime() + ACTION_EXPIRATION_MS);
  for (const { callbackId, outputFields } of completions) {
    const error = failed.get(callbackId);
    if (error === undefined) continue;
    // Refused at this moment (429, 5xx, no answer): a job of its own tries again with backoff until
    // the enrollment's deadline, rather than leaving the enrollment to expire.
    if (context.queue !== undefined && retryableCompletion(error)) {
      await context.queue.enqueue(callbackRetryJob(installation.id, { callbackId, outputFields, deadline: deadline.toISOString(), attempt: 1 }, context.now));
    } else {
      failures.push(error);
    }
  }
  if (failures.length > 0) {
    throw new AggregateError(failures, `${failures.length} of ${late.length} HubSpot workflow callbacks could not be completed`);
  }
}
