// Scheduled refresh: the provider refreshes its data weekly, so a record enriched
// long ago may be stale. For each installation that turned it on (`refreshAfterDays`: 30, 60 or 90),
// every tick queues its records enriched longer ago than that, oldest first, as `refresh` jobs (forced:
// the input is unchanged, the data may not be). Pacing: a tick queues at most the installation's
// share (`refreshShare`, 20 %) of its token's rate over the tick, and only once the previous tick's
// jobs have all run, so over any minute the refresh takes no more than that share of the token's
// rate. It stops while the installation is paused and while its monthly budget is spent (or would be
// by the tick). A refreshed record whose answer did not change writes nothing to the CRM (pipeline.ts).
import type { Installation } from './model.ts';
import type { JobQueue } from './job-queue.ts';
import { enrichJob } from './enrich-job.ts';
import { budgetState } from './budget.ts';
import type { PipelineStore } from './store.ts';

/** How often the refresh looks (each tick queues a tick's worth of its share of the rate). */
export const REFRESH_TICK_MS = 10_000;
const DAY_MS = 86_400_000;

/** The job group of an installation's refresh jobs (how a tick sees whether the last one's have run). */
export const refreshGroup = (installationId: string): string => `refresh:${installationId}`;

export interface RefresherDeps {
  readonly store: PipelineStore;
  readonly queue: JobQueue;
  /** The installation's token rate (requests a second): its account's, or the remote endpoint's 5. */
  readonly rateOf: (installation: Installation) => Promise<number>;
  /** Who takes the per-installation lease of a tick (several instances may run a refresher). */
  readonly owner: string;
  readonly now?: () => Date;
  readonly tickMs?: number;
  readonly onError?: (error: unknown) => void;
}

export class Refresher {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> = Promise.resolve();
  private readonly tickMs: number;
  private readonly now: () => Date;

  constructor(private readonly deps: RefresherDeps) {
    this.tickMs = deps.tickMs ?? REFRESH_TICK_MS;
    this.now = deps.now ?? (() => new Date());
  }

  start(): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => {
      this.running = this.running.then(() => this.tick()).catch((error: unknown) => this.deps.onError?.(error));
    }, this.tickMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** One look at every installation; returns how many refresh jobs each got. */
  async tick(): Promise<Record<string, number>> {
    const queued: Record<string, number> = {};
    for (const installation of await this.deps.store.listInstallations()) {
      const n = await this.refreshOne(installation);
      if (n > 0) queued[installation.id] = n;
    }
    return queued;
  }

  private async refreshOne(installation: Installation): Promise<number> {
    const { refreshAfterDays, refreshShare } = installation.settings;
    if (refreshAfterDays === null || installation.status !== 'active') return 0;
    // The previous tick's jobs first: a backlog would let the refresh run at the full rate later.
    const pending = await this.deps.queue.countGroup(refreshGroup(installation.id));
    if ((pending.queued ?? 0) + (pending.running ?? 0) > 0) return 0;
    const now = this.now();
    let allowed = Math.floor((refreshShare * (await this.deps.rateOf(installation)) * this.tickMs) / 1000);
    const budget = await budgetState(this.deps.store, installation, now);
    if (budget !== null) allowed = Math.min(allowed, budget.left);
    if (allowed <= 0) return 0;
    // One instance per installation per tick.
    if (!(await this.deps.store.acquireLease(`refresh:${installation.id}`, this.deps.owner, this.tickMs))) return 0;
    const stale = await this.deps.store.staleRecords(installation.id, new Date(now.getTime() - refreshAfterDays * DAY_MS).toISOString(), allowed);
    let created = 0;
    for (const record of stale) {
      const job = enrichJob(installation.id, { object: record.object, recordId: record.recordId, trigger: 'refresh', force: true });
      if ((await this.deps.queue.enqueue({ ...job, group: refreshGroup(installation.id) })).created) created += 1;
    }
    return created;
  }
}
