// The jobs CRM modules want run for each of their installations on a schedule (HubSpot's journal
// pull): queued for every active installation of the module's CRM when a worker starts (a restart
// after downtime pulls at once) and every `everyMs` after. The job's dedupe key keeps one waiting at
// a time; several workers or instances each queue it on their own timers, so the job itself must
// make a run that comes too soon after the last one a no-op (the journal pull does).
import type { RecurringJob } from './crm-module.ts';
import type { JobQueue } from './job-queue.ts';
import type { PipelineStore } from './store.ts';

export interface RecurringSchedule {
  readonly provider: string;
  readonly recurring: RecurringJob;
}

export interface RecurringJobsDeps {
  readonly store: PipelineStore;
  readonly queue: JobQueue;
  readonly schedules: readonly RecurringSchedule[];
  readonly onError?: (error: unknown) => void;
}

export class RecurringJobs {
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(private readonly deps: RecurringJobsDeps) {}

  start(): void {
    if (this.timers.length > 0) return;
    for (const schedule of this.deps.schedules) {
      const run = () => void this.queue(schedule).catch((error: unknown) => this.deps.onError?.(error));
      run();
      const timer = setInterval(run, schedule.recurring.everyMs);
      timer.unref();
      this.timers.push(timer);
    }
  }

  stop(): void {
    for (const timer of this.timers.splice(0)) clearInterval(timer);
  }

  /** Queues the schedule's job for each active installation of its CRM; returns how many were new. */
  async queue(schedule: RecurringSchedule): Promise<number> {
    const installations = (await this.deps.store.listInstallations()).filter((i) => i.provider === schedule.provider && i.status === 'active');
    if (installations.length === 0) return 0;
    const { created } = await this.deps.queue.enqueueMany(installations.map((installation) => schedule.recurring.job(installation)));
    return created;
  }
}
