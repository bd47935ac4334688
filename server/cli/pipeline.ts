// `enrichbridge worker`, `enrichbridge log` and `enrichbridge installations …`: running the pipeline in
// a process of its own, reading the enrichment log, and looking after installations.
import type { Store } from '../../core/storage/port.ts';
import { describeForecast, usageForecast } from '../../bridge/forecast.ts';
import { whatIsKept } from '../../bridge/retention.ts';
import { Command, InvalidArgumentError, Option } from 'commander';
import { wholeNumber } from './options.ts';
import type { ConnectorRegistry } from '../../bridge/bridge.ts';
import { orgChangeNotice } from '../../bridge/installations.ts';
import { type Installation, type LogEntry, OVERWRITE_MODES, type OverwriteMode } from '../../bridge/model.ts';
import { backendsOf, loadConfig } from '../config.ts';
import { createServerLogger } from '../logger.ts';
import { openRuntime, withRuntime } from '../runtime/compose.ts';
import { startWorker } from '../runtime/workers.ts';
import { HOUSEHOLD_PLACEMENT_TEXT } from '../../bridge/model.ts';

/**
 * Runs pipeline workers until SIGTERM or SIGINT, then finishes what is in flight, releases the rest of
 * its batches and exits 0. Resolves once stopped.
 */
export async function runWorkerProcess(concurrency: number, connectors?: ConnectorRegistry): Promise<void> {
  const config = loadConfig();
  const logger = createServerLogger(config.logLevel);
  const runtime = await openRuntime(config, logger, connectors);
  const worker = startWorker(runtime, logger, concurrency, config.workerLeaseMs, config.shutdownTimeoutMs, config.remoteRatePerSecond);
  logger.info({ worker: worker.workerId, concurrency, ...backendsOf(config) }, 'worker started');
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off('SIGTERM', stop);
      process.off('SIGINT', stop);
      logger.info({ signal }, 'worker stopping: finishing in-flight enrichments, releasing the rest');
      resolve();
    };
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
  });
  await worker.stop();
  await runtime.close();
  logger.info('worker stopped');
  await new Promise<void>((resolve) => logger.flush(() => resolve()));
}

function ratio(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1) throw new InvalidArgumentError('expected a number from 0 to 1');
  return n;
}

function logLine(entry: LogEntry): string {
  const fields = entry.fieldsWritten.length === 0 ? '' : `  wrote ${entry.fieldsWritten.length}`;
  const quota = entry.quotaConsumed === 0 ? '' : `  quota ${entry.quotaConsumed}`;
  const latency = entry.latencyMs === null ? '' : `  ${entry.latencyMs} ms`;
  const detail = entry.detail === null ? '' : `  (${entry.detail})`;
  const reused = entry.reusedFrom === undefined ? '' : `  reused_from ${entry.reusedFrom}`;
  return `${entry.at}  ${entry.installationId}  ${entry.object}/${entry.recordId}  ${entry.outcome}${fields}${quota}${latency}${reused}${detail}`;
}

/** The account an installation enriches against, by the name the operator gave it (its id beside). */
async function accountNameOf(store: Pick<Store, 'findAccountById'>, i: Installation): Promise<string | null> {
  return i.target.kind === 'local' ? ((await store.findAccountById(i.target.accountId))?.name ?? null) : null;
}

/** `installations show`'s text: who, where, status (and an org that changed under it), settings. */
export function describeInstallation(i: Installation, accountName: string | null): string {
  const target =
    i.target.kind === 'local'
      ? `local account ${accountName === null ? `${i.target.accountId} (` : `${accountName} (${i.target.accountId}, `}token ${i.target.tokenId})`
      : `remote ${i.target.url}`;
  const pause = i.status === 'paused' ? ` (${i.pauseReason ?? 'paused'}${i.pausedUntil === null ? '' : ` until ${i.pausedUntil}`})` : '';
  const s = i.settings;
  return [
    `installation       ${i.id}`,
    `crm                ${i.provider} ${i.externalAccountId}`,
    `environment        ${i.environment}`,
    `target             ${target}`,
    `status             ${i.status}${pause}`,
    ...(orgChangeNotice(i) === null ? [] : [`org changed        ${orgChangeNotice(i) ?? ''}`]),
    `enrich on create   ${s.enrichOnCreate ? 'on' : 'off'}`,
    `overwrite mode     ${s.overwriteMode}`,
    `re-enrich after    ${s.reenrichAfterDays} days (same input)`,
    `min confidence     ${s.minConfidence}`,
    `objects            ${s.objects.length === 0 ? "the connector's defaults" : s.objects.join(', ')}`,
    `excluded fields    ${s.excludedFields.length === 0 ? 'none' : s.excludedFields.join(', ')}`,
    `monthly budget     ${s.monthlyBudget === null ? 'none' : `${s.monthlyBudget} units (UTC calendar month)`}`,
    `scheduled refresh  ${s.refreshAfterDays === null ? 'off' : `records enriched over ${s.refreshAfterDays} days ago, at most ${Math.round(s.refreshShare * 100)} % of the token's rate`}`,
    `crm api share      ${Math.round(s.crmApiShare * 100)} % of the CRM's daily API allowance (Salesforce)`,
    `household fields   ${HOUSEHOLD_PLACEMENT_TEXT[s.householdFieldsOn]}`,
    `reuse answers      ${s.reuseAnswers ? 'on (a duplicate of a record looked up within the re-enrichment age costs no unit)' : 'off'}`,
    `connected          ${i.createdAt}`,
  ].join('\n');
}

function list(value: string): string[] {
  return value
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

export function pipelineCommands(): Command[] {
  const worker = new Command('worker')
    .description('run pipeline workers in this process until SIGTERM (set WORKER_CONCURRENCY=0 on the server to leave the queue to them)')
    .option('--concurrency <n>', 'batches worked on at once', wholeNumber(1, 32), 2)
    .action(async (flags: { concurrency: number }) => {
      await runWorkerProcess(flags.concurrency);
    });

  const log = new Command('log')
    .description('the enrichment log, oldest of the shown entries first')
    .option('--installation <id>', 'only this installation')
    .option('--record <id>', 'only this CRM record')
    .option('--limit <n>', 'the newest N entries', wholeNumber(1, 100_000), 50)
    .option('--json', 'print JSON')
    .action(async (flags: { installation?: string; record?: string; limit: number; json?: boolean }) => {
      await withRuntime(async ({ pipelineStore }) => {
        const entries = await pipelineStore.listLog({
          limit: flags.limit,
          ...(flags.installation === undefined ? {} : { installationId: flags.installation }),
          ...(flags.record === undefined ? {} : { recordId: flags.record }),
        });
        if (flags.json === true) console.log(JSON.stringify(entries, null, 2));
        else if (entries.length === 0) console.log('no log entries');
        else for (const entry of entries) console.log(logLine(entry));
      });
    });

  const installations = new Command('installations').description('CRM installations: settings, pause and resume, disconnect');
  installations
    .command('list')
    .description('every installation')
    .action(async () => {
      await withRuntime(async ({ pipelineStore }) => {
        const all = await pipelineStore.listInstallations();
        if (all.length === 0) console.log('no installations');
        for (const i of all) console.log(`${i.id}  ${i.provider} ${i.externalAccountId}  ${i.environment}  ${i.status}  ${i.settings.overwriteMode}`);
      });
    });
  installations
    .command('show <id>')
    .option('--json', 'print JSON')
    .action(async (id: string, flags: { json?: boolean }) => {
      await withRuntime(async ({ installations: all, pipelineStore, logValuesRetentionDays }, { store }) => {
        const installation = await all.require(id);
        const forecast = await usageForecast({ store, pipelineStore }, installation, new Date());
        const kept = whatIsKept(installation, logValuesRetentionDays);
        console.log(
          flags.json === true
            ? JSON.stringify({ ...installation, forecast, kept }, null, 2)
            : [
                describeInstallation(installation, await accountNameOf(store, installation)),
                `quota              ${describeForecast(forecast)}`,
                'kept, and for how long',
                ...kept.map((item) => `  ${item.what}: ${item.kept}`),
              ].join('\n'),
        );
      });
    });
  installations
    .command('settings <id>')
    .description("change an installation's settings")
    .addOption(new Option('--overwrite-mode <mode>', 'fill_empty, tracked or always').choices(OVERWRITE_MODES))
    .option('--reenrich-after-days <n>', 'skip a record enriched this recently with the same input', wholeNumber(0, 3650))
    .option('--min-confidence <x>', 'do not write household or career data below this confidence (0 to 1)', ratio)
    .option('--objects <list>', 'comma-separated CRM objects to enrich')
    .option('--exclude-fields <list>', 'comma-separated field keys never written, e.g. household.net_worth')
    .option('--enrich-on-create', 'enrich new records automatically')
    .option('--no-enrich-on-create', 'do not enrich new records automatically')
    .option('--reuse-answers', 'apply a kept answer to a record asking what another record asked (no unit spent)')
    .option('--no-reuse-answers', 'look every record up, and keep no answers')
    .addOption(
      new Option('--refresh-after-days <days>', 're-enrich in the background records enriched longer ago than this, or off').choices(['30', '60', '90', 'off']),
    )
    .option('--refresh-share <x>', "the share of the token's rate the scheduled refresh may take (default 0.2)", ratio)
    .option('--crm-api-share <x>', "the share of the CRM's daily API allowance enrichbridge may use (Salesforce; default 0.5; 1: no share held back)", ratio)
    .option('--monthly-budget <units>', "units this installation may spend per UTC calendar month, or 'none'", (value: string) =>
      value === 'none' ? null : wholeNumber(1, 1_000_000_000)(value),
    )
    .action(
      async (
        id: string,
        flags: {
          overwriteMode?: OverwriteMode;
          reenrichAfterDays?: number;
          minConfidence?: number;
          objects?: string;
          excludeFields?: string;
          enrichOnCreate?: boolean;
          reuseAnswers?: boolean;
          monthlyBudget?: number | null;
          refreshAfterDays?: string;
          refreshShare?: number;
          crmApiShare?: number;
        },
      ) => {
        await withRuntime(async ({ installations: all }, { store }) => {
          const updated = await all.updateSettings(id, {
            ...(flags.overwriteMode === undefined ? {} : { overwriteMode: flags.overwriteMode }),
            ...(flags.reenrichAfterDays === undefined ? {} : { reenrichAfterDays: flags.reenrichAfterDays }),
            ...(flags.minConfidence === undefined ? {} : { minConfidence: flags.minConfidence }),
            ...(flags.objects === undefined ? {} : { objects: list(flags.objects) }),
            ...(flags.excludeFields === undefined ? {} : { excludedFields: list(flags.excludeFields) }),
            ...(flags.enrichOnCreate === undefined ? {} : { enrichOnCreate: flags.enrichOnCreate }),
            ...(flags.reuseAnswers === undefined ? {} : { reuseAnswers: flags.reuseAnswers }),
            ...(flags.monthlyBudget === undefined ? {} : { monthlyBudget: flags.monthlyBudget }),
            ...(flags.refreshAfterDays === undefined
              ? {}
              : { refreshAfterDays: flags.refreshAfterDays === 'off' ? null : (Number(flags.refreshAfterDays) as 30 | 60 | 90) }),
            ...(flags.refreshShare === undefined ? {} : { refreshShare: Math.max(0.01, flags.refreshShare) }),
            ...(flags.crmApiShare === undefined ? {} : { crmApiShare: Math.max(0.01, flags.crmApiShare) }),
          });
          console.log(describeInstallation(updated, await accountNameOf(store, updated)));
        });
      },
    );
  installations
    .command('pause <id>')
    .description('stop enriching: jobs are skipped (and logged) until resumed')
    .action(async (id: string) => {
      await withRuntime(async ({ installations: all }) => {
        await all.pause(id);
        console.log(`paused ${id}`);
      });
    });
  installations
    .command('resume <id>')
    .description("lift a pause, an operator's or a limit's, and run the jobs held back")
    .action(async (id: string) => {
      await withRuntime(async ({ installations: all }) => {
        await all.resume(id);
        console.log(`resumed ${id}`);
      });
    });
  return [worker, log, installations];
}
