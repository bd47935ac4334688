// `enrichbridge jobs …`: what the durable queue holds, and putting dead-lettered jobs back in line.
import { Command, Option } from 'commander';
import { wholeNumber } from './options.ts';
import { JOB_STATES, type Job, type JobQueue, type JobState } from '../../bridge/job-queue.ts';
import { AdminError } from '../../core/accounts/admin.ts';

type WithQueue = <T>(run: (queue: JobQueue) => Promise<T>) => Promise<T>;

function line(job: Job): string {
  const error = job.lastError === null ? '' : `  last error: ${job.lastError}`;
  return `${job.id}  ${job.state.padEnd(7)}  ${job.installationId}  ${job.kind}  attempts ${job.attempts}/${job.maxAttempts}  run at ${job.runAt}${error}`;
}

export function jobsCommands(withQueue: WithQueue): Command {
  const jobs = new Command('jobs').description('the durable job queue of the CRM pipeline');

  jobs
    .command('list')
    .description('jobs, oldest first')
    .addOption(new Option('--state <state>', 'only jobs in this state').choices(JOB_STATES))
    .option('--limit <n>', 'at most N jobs, oldest first (default 1000)', wholeNumber(1))
    .option('--json', 'print JSON')
    .action(async (flags: { state?: JobState; limit?: number; json?: boolean }) => {
      await withQueue(async (queue) => {
        const limit = flags.limit ?? 1000;
        // One more than shown, to say so when the list is cut.
        const list = await queue.list({ ...(flags.state === undefined ? {} : { state: flags.state }), limit: limit + 1 });
        const shown = list.slice(0, limit);
        if (flags.json === true) console.log(JSON.stringify(shown, null, 2));
        else if (shown.length === 0) console.log(flags.state === undefined ? 'no jobs' : `no ${flags.state} jobs`);
        else for (const job of shown) console.log(line(job));
        if (list.length > limit) console.error(`showing the oldest ${limit}; there are more (--limit N to see more)`);
      });
    });

  jobs
    .command('retry [id]')
    .description('put a dead job (or, with --all-dead, every dead job) back in the queue')
    .option('--all-dead', 'every dead job')
    .action(async (id: string | undefined, flags: { allDead?: boolean }) => {
      if ((id === undefined) === (flags.allDead !== true)) throw new AdminError('give a job id or --all-dead, not both');
      await withQueue(async (queue) => {
        const count = await queue.retryDead(flags.allDead === true ? 'all' : [id ?? '']);
        if (count === 0 && flags.allDead !== true) throw new AdminError(`no dead job ${id ?? ''}`);
        console.log(`${count} job${count === 1 ? '' : 's'} back in the queue`);
      });
    });

  return jobs;
}
