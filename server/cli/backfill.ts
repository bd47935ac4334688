// `enrichbridge backfill <provider> INSTALLATION`: enrich the records a CRM already has. It reads them
// (no enrichment yet), says how many need enriching and what that will cost, asks, then enqueues with a
// progress bar; an interrupted run resumes where it stopped. One subcommand per CRM module that has a
// backfill (bridge/crm-module.ts's CrmBackfill): the module reads, this file does the rest.
import { createInterface } from 'node:readline/promises';
import { Command, Option } from 'commander';
import type { JobQueue } from '../../bridge/job-queue.ts';
import { type BackfillPlan, type BackfillProgress, planBackfill, runBackfill } from '../../bridge/backfill.ts';
import { InstallationError } from '../../bridge/installations.ts';
import type { CrmBackfill, CrmModule } from '../../bridge/crm-module.ts';
import { progressReporter } from './data.ts';
import { budgetState } from '../../bridge/budget.ts';
import { crmModules, withRuntime } from '../runtime/compose.ts';
import { loadConfig } from '../config.ts';
import { wholeNumber } from './options.ts';
import { plural, pluralOf } from '../plural.ts';

async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

interface BackfillFlags {
  overBudget?: boolean;
  dryRun?: boolean;
  limit?: number;
  yes?: boolean;
  restart?: boolean;
}

/** What a plan says about where it started, when that is not simply the first record. */
function startNote(plan: BackfillPlan, restarted: boolean): string {
  if (restarted) return ' (the last backfill stopped midway, but its query can no longer be read: from the first record again)';
  return plan.startCursor === null ? '' : ' (resuming after the last backfill stopped)';
}

function describePlan(plan: BackfillPlan, environment: string, scanned: string, start: string, extra: readonly string[] = []): string {
  return [
    `scanned ${plan.scanned} ${scanned}${start}`,
    `  with a match key:       ${plan.withMatchKey}`,
    `  already up to date:     ${plan.upToDate}`,
    `  to enrich:              ${plan.toEnrich}`,
    `  quota units at most:    ${plan.quotaUnits}${environment === 'sandbox' ? ' (sandbox: no quota is spent)' : ''}`,
    ...extra,
  ].join('\n');
}

/** Every 1,000 records read, a line on stderr: a large object takes a while to plan. */
function scanReporter(noun: string): (scanned: number) => void {
  let lastShown = 0;
  return (scanned) => {
    if (scanned - lastShown >= 1000) {
      lastShown = scanned;
      process.stderr.write(`scanned ${scanned} ${noun}…\n`);
    }
  };
}

/** What the command asks before it enqueues: `Enqueue 1 contact for enrichment (at most 1 quota unit)? [y/N] `. */
export function enqueueQuestion(toEnrich: number, noun: string, quotaUnits: number): string {
  return `Enqueue ${pluralOf(toEnrich, noun)} for enrichment (at most ${plural(quotaUnits, 'quota unit')})? [y/N] `;
}

/**
 * The part every CRM shares once a plan is made: a dry run stops there; otherwise confirm on a terminal
 * (`--yes` elsewhere), then enqueue with a progress bar, saving the cursor page by page.
 */
async function confirmAndEnqueue(
  plan: BackfillPlan,
  options: { noun: string; flags: BackfillFlags; queue: JobQueue; progress: BackfillProgress; budgetLeft: number | null },
): Promise<void> {
  const { noun, flags, queue, progress } = options;
  if (flags.dryRun === true) {
    console.log('dry run: nothing enqueued');
    return;
  }
  if (options.budgetLeft !== null && plan.quotaUnits > options.budgetLeft && flags.overBudget !== true) {
    throw new InstallationError(
      `this backfill may spend up to ${plural(plan.quotaUnits, 'quota unit')} and the month's budget has ${options.budgetLeft} left: nothing enqueued. ` +
        `Pass --limit ${options.budgetLeft} to stay within it, or --over-budget to enqueue anyway (enrichment pauses when the budget is spent).`,
    );
  }
  if (plan.toEnrich === 0) {
    // Nothing to enqueue, but the pages were read: saving that finishes a resumed backfill, so
    // the next run starts over instead of resuming at the same cursor forever.
    await runBackfill(plan, { queue, progress });
    console.log('nothing to enqueue');
    return;
  }
  if (flags.yes !== true) {
    if (!process.stdin.isTTY) throw new InstallationError('not a terminal: pass --yes to enqueue without confirmation');
    if (!(await confirm(enqueueQuestion(plan.toEnrich, noun, plan.quotaUnits)))) {
      console.log('nothing enqueued');
      return;
    }
  }
  const reporter = progressReporter('enqueue', (n) => String(n));
  const result = await runBackfill(plan, { queue, progress, onProgress: (done) => reporter.update(done, plan.toEnrich, '') });
  reporter.stop();
  console.log(
    `enqueued ${pluralOf(result.enqueued, noun)}${result.duplicates > 0 ? ` (${result.duplicates} ${result.duplicates === 1 ? 'was' : 'were'} already queued)` : ''}; the workers enrich them at the token's rate`,
  );
}

/** A flag's name as commander stores it: `--where-not-enriched` → `whereNotEnriched`. */
function attributeOf(flag: string): string {
  return flag.replace(/^--/, '').replace(/-([a-z])/g, (_match, letter: string) => letter.toUpperCase());
}

function backfillCommand(module: CrmModule, spec: CrmBackfill): Command {
  const objects = Object.keys(spec.nouns);
  const command = new Command(module.provider).argument('<installation>').description(spec.description);
  if (objects.length > 1) command.addOption(new Option('--object <object>', 'the object to backfill').choices(objects).makeOptionMandatory());
  for (const [flag, help] of Object.entries(spec.flags ?? {})) command.option(flag, help);
  command
    .option('--dry-run', 'count and price only; enqueue nothing')
    .option('--limit <n>', `enqueue at most N ${objects.length > 1 ? 'records' : (spec.nouns[objects[0] ?? ''] ?? 'records')}`, wholeNumber(1))
    .option('--yes', 'do not ask for confirmation (required when not on a terminal)')
    .option('--restart', 'start from the first record even if an earlier backfill stopped midway')
    .option('--over-budget', "enqueue even when it may spend more than the installation's monthly budget has left")
    .action(async (id: string, flags: BackfillFlags & { object?: string } & Record<string, unknown>) => {
      await withRuntime(async ({ installations, pipelineStore, backfills: progress }, { queue }) => {
        const installation = await installations.require(id);
        if (installation.provider !== module.provider) throw new InstallationError(`${id} is not a ${module.name} installation`);
        const object = flags.object ?? objects[0] ?? '';
        const noun = spec.nouns[object] ?? 'records';
        const own = Object.fromEntries(Object.keys(spec.flags ?? {}).map((flag) => [flag, flags[attributeOf(flag)] === true]));
        const reader = await spec.open({ installation, installations, object, flags: own, notice: (line) => process.stderr.write(`${line}\n`) });
        const plan = await planBackfill({
          installation,
          object,
          connector: reader.connector,
          store: pipelineStore,
          progress,
          source: reader.source,
          ...(flags.limit === undefined ? {} : { limit: flags.limit }),
          restart: flags.restart === true,
          onPage: scanReporter(noun),
        });
        const summary = reader.summary();
        const budget = await budgetState(pipelineStore, installation, new Date());
        const budgetLine = budget === null ? [] : [`  budget left this month: ${budget.left} of ${budget.budget} units`];
        console.log(describePlan(plan, installation.environment, reader.scanned, startNote(plan, summary.restarted), [...summary.lines, ...budgetLine]));
        await confirmAndEnqueue(plan, { noun, flags, queue, progress, budgetLeft: budget?.left ?? null });
      });
    });
  return command;
}

/** `enrichbridge backfill <provider>`, for every module that can read its CRM's records. */
export function backfillCommands(modules: readonly CrmModule[] = crmModules(loadConfig())): Command {
  const backfill = new Command('backfill').description('enrich records that already exist in a CRM');
  for (const module of modules) {
    if (module.backfill !== undefined) backfill.addCommand(backfillCommand(module, module.backfill));
  }
  return backfill;
}
