// What the bridge keeps of what it handles, and for how long. The enrichment log keeps the values of
// each write (what we wrote, what it replaced: personal data) for a retention period
// (LOG_VALUES_RETENTION_DAYS, 90 days by default); past it the values are purged and the entry stays,
// with its outcome, the fields written and its units, so the overview's counts and a budget's spend do
// not change. Undo needs what a write replaced, so it is offered only within the period (record-view.ts).
// Kept answers follow the installation's re-enrichment age (pipeline/answer-reuse.ts); console sessions
// their lifetime (console-sessions.ts).
//
// The purge runs beside the workers, wherever they run: each process ticks on its own timer (and once
// at start, so a restart after downtime catches up at once), one at a time holds the lease for a tick,
// and a run purges in bounded batches, oldest first, so no statement holds the log for long.
import { retryWhileBusy } from '../core/storage/errors.ts';
import { CONSOLE_SESSION_TTL_MS } from './console-sessions.ts';
import type { Installation } from './model.ts';
import type { EnrichmentLogStore, LeaseStore } from './store.ts';

/** How long the enrichment log keeps the values written and replaced, unless configured otherwise. */
export const DEFAULT_LOG_VALUES_RETENTION_DAYS = 90;

/** How often each process looks for values past the period. */
export const LOG_VALUES_PURGE_EVERY_MS = 10 * 60_000;
/** Entries purged per statement. */
export const LOG_VALUES_PURGE_BATCH = 500;
/** Statements per run at most (a backlog, after the period was shortened, is worked off run by run). */
export const LOG_VALUES_PURGE_BATCHES = 20;

const PURGE_LEASE = 'log-values-purge';
const DAY_MS = 86_400_000;

/** The time before which the log keeps no values: an entry logged earlier is past the retention period. */
export function valuesKeptSince(retentionDays: number, now: Date): string {
  return new Date(now.getTime() - retentionDays * DAY_MS).toISOString();
}

const days = (n: number): string => `${n} day${n === 1 ? '' : 's'}`;

/** One kind of data the bridge keeps, and for how long, in words for the operator and the CRM admin. */
export interface Kept {
  readonly what: string;
  readonly kept: string;
}

/** What is kept for an installation and for how long, from the figures the code runs on. */
export function whatIsKept(installation: Installation, logValuesRetentionDays: number): Kept[] {
  const { reuseAnswers, reenrichAfterDays } = installation.settings;
  const sessionHours = CONSOLE_SESSION_TTL_MS / 3_600_000;
  return [
    {
      what: 'Written and replaced values',
      kept: `kept ${days(logValuesRetentionDays)} in the enrichment log, then purged (the entries and their counts are kept); Undo is offered within that time`,
    },
    {
      what: 'Kept answers',
      kept: reuseAnswers
        ? `used up to ${days(reenrichAfterDays)} (the re-enrichment age), sealed; older ones are purged as the installation's batches run`
        : 'none kept (reuse answers is off)',
    },
    {
      what: 'Console sessions',
      kept: `end after ${sessionHours} hours, at sign-out, or when the installation is disconnected or disabled`,
    },
  ];
}

export interface LogValuesPurgeDeps {
  readonly store: Pick<EnrichmentLogStore, 'purgeLogValues'> & LeaseStore;
  readonly retentionDays: number;
  /** Who takes the lease of a run (several processes may run a purge). */
  readonly owner: string;
  readonly now?: () => Date;
  readonly everyMs?: number;
  readonly batchSize?: number;
  readonly batchesPerRun?: number;
  readonly onError?: (error: unknown) => void;
}

/** Purges the log's values past the retention period, on a timer beside the workers. */
export class LogValuesPurge {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> = Promise.resolve();
  private readonly now: () => Date;
  private readonly everyMs: number;

  constructor(private readonly deps: LogValuesPurgeDeps) {
    this.now = deps.now ?? (() => new Date());
    this.everyMs = deps.everyMs ?? LOG_VALUES_PURGE_EVERY_MS;
  }

  start(): void {
    if (this.timer !== null) return;
    const tick = () => {
      this.running = this.running.then(() => this.run()).catch((error: unknown) => this.deps.onError?.(error));
    };
    tick();
    this.timer = setInterval(tick, this.everyMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** One run: how many entries' values it purged; 0 when another process holds this tick's run. */
  async run(): Promise<number> {
    const { store, owner } = this.deps;
    if (!(await retryWhileBusy(() => store.acquireLease(PURGE_LEASE, owner, this.everyMs)))) return 0;
    const batchSize = this.deps.batchSize ?? LOG_VALUES_PURGE_BATCH;
    const before = valuesKeptSince(this.deps.retentionDays, this.now());
    let purged = 0;
    for (let batch = 0; batch < (this.deps.batchesPerRun ?? LOG_VALUES_PURGE_BATCHES); batch += 1) {
      const n = await retryWhileBusy(() => store.purgeLogValues(before, this.now().toISOString(), batchSize));
      purged += n;
      if (n < batchSize) break;
    }
    return purged;
  }
}
