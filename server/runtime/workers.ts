// The pipeline's workers in this process, with the scheduled refresh and the CRM modules' recurring
// jobs beside them, logging each batch by counts only.
import { Refresher } from '../../bridge/refresh.ts';
import { RecurringJobs } from '../../bridge/recurring.ts';
import { LogValuesPurge } from '../../bridge/retention.ts';
import { loggableMessage } from '../../core/observe/loggable-errors.ts';
import { isDatabaseBusy, isDatabaseUnavailable } from '../../core/storage/errors.ts';
import { Worker, newWorkerId, reclaimDeadWorkers } from '../../bridge/worker.ts';
import { type Logger } from '../logger.ts';
import type { Runtime } from './compose.ts';

/**
 * A pipeline worker that logs each batch (counts only: no record data, no e-mail, no token). It first
 * takes back at once the leases a dead process on this host held (a restart after a SIGKILL).
 */
export function startWorker(runtime: Runtime, logger: Logger, concurrency: number, leaseMs?: number, stopGraceMs?: number, remoteRatePerSecond = 5): Worker {
  const workerId = newWorkerId();
  // The scheduled refresh runs beside the workers, wherever they run.
  const refresher = new Refresher({
    store: runtime.bridge.pipelineStore,
    queue: runtime.opened.queue,
    owner: workerId,
    rateOf: async (installation) =>
      installation.target.kind === 'local'
        ? ((await runtime.opened.store.findAccountById(installation.target.accountId))?.rateLimit ?? 5)
        : remoteRatePerSecond,
    onError: (error) => logger.error({ err: error }, 'scheduled refresh error'),
  });
  // Jobs the CRM modules run on a schedule for each installation (HubSpot's journal pull).
  const recurring = new RecurringJobs({
    store: runtime.bridge.pipelineStore,
    queue: runtime.opened.queue,
    schedules: runtime.modules.flatMap((module) => (module.recurring ?? []).map((job) => ({ provider: module.provider, recurring: job }))),
    onError: (error) => logger.error({ err: error }, 'recurring job scheduling error'),
  });
  // The enrichment log's values past the retention period, purged (one process at a time, in batches).
  const purge = new LogValuesPurge({
    store: runtime.bridge.pipelineStore,
    retentionDays: runtime.bridge.logValuesRetentionDays,
    owner: workerId,
    onError: (error) => {
      if (isDatabaseBusy(error) || isDatabaseUnavailable(error))
        logger.warn({ err_message: loggableMessage(error) }, 'log values purge: database unavailable, retried later');
      else logger.error({ err: error }, 'log values purge error');
    },
  });
  const worker = new Worker({
    workerId,
    companions: [refresher, recurring, purge],
    queue: runtime.opened.queue,
    jobs: runtime.bridge.jobs,
    concurrency,
    ...(leaseMs === undefined ? {} : { leaseMs }),
    ...(stopGraceMs === undefined ? {} : { stopGraceMs }),
    onBatch: (summary) => {
      const line = {
        installation: summary.installationId,
        jobs: summary.jobs,
        outcomes: summary.outcomes,
        released: summary.released,
        crm_calls: summary.crmCalls,
        lease_lost: summary.leaseLost,
      };
      // Jobs another worker took over mid-batch: a renewal came too late (a stalled process).
      if (summary.leaseLost > 0) logger.warn(line, 'pipeline batch lost its lease');
      else logger.info(line, 'pipeline batch');
      if (summary.budget?.warning === true) {
        const { spent, budget, resetsAt } = summary.budget;
        logger.warn(
          { installation: summary.installationId, spent, budget, resets_at: resetsAt },
          spent >= budget
            ? "installation's monthly budget is spent: enrichment waits for next month or a larger budget"
            : 'installation has spent 80% of its monthly budget',
        );
      }
    },
    // A locked database is another process's long write, not a fault of ours: the worker backs off.
    onError: (error) => {
      if (isDatabaseBusy(error)) logger.warn('pipeline worker: database busy, backing off');
      else if (isDatabaseUnavailable(error)) logger.warn({ err_message: loggableMessage(error) }, 'pipeline worker: database unavailable, backing off');
      else logger.error({ err: error }, 'pipeline worker error');
    },
  });
  worker.start();
  reclaimDeadWorkers(runtime.opened.queue).then(
    (reclaimed) => {
      if (reclaimed.jobs === 0) return;
      logger.warn({ workers: reclaimed.workers, jobs: reclaimed.jobs }, 'took back the leases of dead workers on this host');
      worker.wake();
    },
    (error: unknown) => logger.error({ err: error }, 'pipeline worker error'),
  );
  return worker;
}
