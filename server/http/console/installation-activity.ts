// What the operator's list of installations shows beside each one: the account it enriches against (by
// name), when it last did anything (the time of its newest log entry), and what went wrong lately
// (failed outcomes over the last seven days, and its dead jobs). Read from what the stores already
// answer (the log's newest entry, the daily outcomes the overview counts, the queue's dead jobs): no
// query of its own.
import type { JobQueue } from '../../../bridge/job-queue.ts';
import type { Installation } from '../../../bridge/model.ts';
import type { PipelineStore } from '../../../bridge/store.ts';
import type { Store } from '../../../core/storage/port.ts';
import { outcomeKind } from './format.ts';

/** How far back the list counts failed outcomes. */
export const ERROR_WINDOW_DAYS = 7;
/** How many dead jobs the list reads to count them per installation (the jobs page shows the first 100). */
export const DEAD_JOBS_READ = 1000;

export interface InstallationActivity {
  readonly installation: Installation;
  /** The account a local target enriches against (its name null when the account is gone); null for a remote endpoint. */
  readonly account: { readonly id: string; readonly name: string | null } | null;
  /** When its newest log entry was written; null when it has none. */
  readonly lastActivity: string | null;
  /** Records whose enrichment failed over the last ERROR_WINDOW_DAYS days. */
  readonly failed: number;
  /** Its dead jobs (among the first DEAD_JOBS_READ). */
  readonly dead: number;
}

export interface ActivitySources {
  readonly pipelineStore: Pick<PipelineStore, 'listInstallations' | 'searchLog' | 'dailyOutcomes'>;
  readonly store: Pick<Store, 'listAccounts'>;
  readonly queue: Pick<JobQueue, 'list'>;
}

/** Every installation with its account, last activity and recent errors, in the store's order. */
export async function installationActivity(sources: ActivitySources, now: Date): Promise<InstallationActivity[]> {
  const since = new Date(now.getTime() - ERROR_WINDOW_DAYS * 86_400_000).toISOString();
  const [installations, accounts, dead] = await Promise.all([
    sources.pipelineStore.listInstallations(),
    sources.store.listAccounts(),
    sources.queue.list({ state: 'dead', limit: DEAD_JOBS_READ }),
  ]);
  const accountNames = new Map(accounts.map((account) => [account.id, account.name]));
  const deadBy = new Map<string, number>();
  for (const job of dead) deadBy.set(job.installationId, (deadBy.get(job.installationId) ?? 0) + 1);
  return Promise.all(
    installations.map(async (installation) => {
      const [newest, outcomes] = await Promise.all([
        sources.pipelineStore.searchLog({ installationId: installation.id, limit: 1 }),
        sources.pipelineStore.dailyOutcomes(installation.id, since),
      ]);
      const target = installation.target;
      return {
        installation,
        account: target.kind === 'local' ? { id: target.accountId, name: accountNames.get(target.accountId) ?? null } : null,
        lastActivity: newest[0]?.at ?? null,
        failed: outcomes.filter((row) => outcomeKind(row.outcome) === 'failed').reduce((sum, row) => sum + row.count, 0),
        dead: deadBy.get(installation.id) ?? 0,
      };
    }),
  );
}
