// `enrichbridge backfill hubspot|salesforce INSTALLATION`: enrich the records a CRM already has. It
// reads them (no enrichment yet), says how many need enriching and what that will cost, asks, then
// enqueues with a progress bar; an interrupted run resumes where it stopped.
import { createInterface } from 'node:readline/promises';
import { Command, Option } from 'commander';
import type { JobQueue } from '../../connectors/pipeline/job-queue.ts';
import { type BackfillPlan, type BackfillProgress, planBackfill, runBackfill } from '../../connectors/pipeline/backfill.ts';
import { InstallationError } from '../../connectors/pipeline/installations.ts';
import { hubspotRecordSource } from '../../connectors/hubspot/backfill.ts';
import { CONTACT, HUBSPOT_PROVIDER, HubSpotConnector, hubspotApiFor } from '../../connectors/hubspot/connector.ts';
import { DEFAULT_ENRICHED_AT_FIELD, SALESFORCE_API_VERSION } from '../../connectors/salesforce/api.ts';
import { salesforceRecordSource } from '../../connectors/salesforce/backfill.ts';
import { SALESFORCE_PROVIDER, SalesforceConnector, salesforceApiFor } from '../../connectors/salesforce/connector.ts';
import { SALESFORCE_OBJECTS, type SalesforceObject } from '../../connectors/salesforce/fields.ts';
import { loadConfig } from '../config.ts';
import { progressReporter } from './data.ts';
import { withRuntime } from '../runtime.ts';
import { wholeNumber } from './options.ts';

async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

interface BackfillFlags {
  dryRun?: boolean;
  limit?: number;
  yes?: boolean;
  restart?: boolean;
}

/** What a plan says about where it started, when that is not simply the first record. */
function startNote(plan: BackfillPlan, requeried: boolean): string {
  if (requeried) return ' (the last backfill stopped midway, but its query can no longer be read: from the first record again)';
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

/**
 * The part every CRM shares once a plan is made: a dry run stops there; otherwise confirm on a terminal
 * (`--yes` elsewhere), then enqueue with a progress bar, saving the cursor page by page.
 */
async function confirmAndEnqueue(
  plan: BackfillPlan,
  options: { noun: string; flags: BackfillFlags; queue: JobQueue; progress: BackfillProgress },
): Promise<void> {
  const { noun, flags, queue, progress } = options;
  if (flags.dryRun === true) {
    console.log('dry run: nothing enqueued');
    return;
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
    if (!(await confirm(`Enqueue ${plan.toEnrich} ${noun} for enrichment (at most ${plan.quotaUnits} quota units)? [y/N] `))) {
      console.log('nothing enqueued');
      return;
    }
  }
  const reporter = progressReporter('enqueue', (n) => String(n));
  const result = await runBackfill(plan, { queue, progress, onProgress: (done) => reporter.update(done, plan.toEnrich, '') });
  reporter.stop();
  console.log(`enqueued ${result.enqueued} ${noun}${result.duplicates > 0 ? ` (${result.duplicates} were already queued)` : ''}; the workers enrich them at the token's rate`);
}

const SALESFORCE_NOUNS: Record<SalesforceObject, string> = { Contact: 'contacts', Lead: 'leads' };

export function backfillCommands(): Command {
  const backfill = new Command('backfill').description('enrich records that already exist in a CRM');
  backfill
    .command('hubspot <installation>')
    .description('page through the portal’s contacts (not the 10,000-capped search) and enqueue those that need enriching')
    .option('--dry-run', 'count and price only; enqueue nothing')
    .option('--limit <n>', 'enqueue at most N contacts', wholeNumber(1))
    .option('--yes', 'do not ask for confirmation (required when not on a terminal)')
    .option('--restart', 'start from the first contact even if an earlier backfill stopped midway')
    .action(async (id: string, flags: BackfillFlags) => {
      await withRuntime(async ({ installations, pipelineStore, backfills: progress }, { queue }) => {
        const installation = await installations.require(id);
        if (installation.provider !== HUBSPOT_PROVIDER) throw new InstallationError(`${id} is not a HubSpot installation`);
        const api = await hubspotApiFor(installation, installations);
        const connector = new HubSpotConnector(api);
        const plan = await planBackfill({
          installation,
          object: CONTACT,
          connector,
          store: pipelineStore,
          progress,
          source: hubspotRecordSource({ api }),
          ...(flags.limit === undefined ? {} : { limit: flags.limit }),
          restart: flags.restart === true,
          onPage: scanReporter('contacts'),
        });
        console.log(describePlan(plan, installation.environment, 'contacts', startNote(plan, false)));
        await confirmAndEnqueue(plan, { noun: 'contacts', flags, queue, progress });
      });
    });

  backfill
    .command('salesforce <installation>')
    .description(
      'list the ids of an object’s records with a Bulk API 2.0 query job, read them 200 per call, and enqueue those that need enriching',
    )
    .addOption(new Option('--object <object>', 'the object to backfill').choices(SALESFORCE_OBJECTS).makeOptionMandatory())
    .option('--where-not-enriched', `only records whose ${DEFAULT_ENRICHED_AT_FIELD} is empty (filtered in the bulk query)`)
    .option('--dry-run', 'count and price only; enqueue nothing')
    .option('--limit <n>', 'enqueue at most N records', wholeNumber(1))
    .option('--yes', 'do not ask for confirmation (required when not on a terminal)')
    .option('--restart', 'start a new query from the first record even if an earlier backfill stopped midway')
    .action(async (id: string, flags: BackfillFlags & { object: SalesforceObject; whereNotEnriched?: boolean }) => {
      const config = loadConfig();
      await withRuntime(async ({ installations, pipelineStore, backfills: progress }, { queue }) => {
        const installation = await installations.require(id);
        if (installation.provider !== SALESFORCE_PROVIDER) throw new InstallationError(`${id} is not a Salesforce installation`);
        const { object } = flags;
        const whereNotEnriched = flags.whereNotEnriched === true;
        const noun = SALESFORCE_NOUNS[object];
        const api = salesforceApiFor(installation, installations, { allowAnyHost: config.salesforceAllowAnyHost });
        const connector = new SalesforceConnector(api);
        let requeried = false;
        const plan = await planBackfill({
          installation,
          object,
          connector,
          store: pipelineStore,
          progress,
          source: salesforceRecordSource({
            api,
            connector,
            object,
            whereNotEnriched,
            onRequery: ({ jobId, reason }) => {
              requeried = true;
              const why = reason === 'gone' ? 'Salesforce no longer has it' : `it was made with another API version than ${SALESFORCE_API_VERSION}`;
              process.stderr.write(`the bulk query job ${jobId} of the last backfill cannot be resumed (${why}): querying again\n`);
            },
          }),
          ...(flags.limit === undefined ? {} : { limit: flags.limit }),
          restart: flags.restart === true,
          onPage: scanReporter(noun),
        });
        const usage = api.apiUsage === null ? '' : ` (the org has used ${api.apiUsage.used} of ${api.apiUsage.max} in 24 h)`;
        const scanned = whereNotEnriched ? `${noun} with an empty ${DEFAULT_ENRICHED_AT_FIELD}` : noun;
        console.log(describePlan(plan, installation.environment, scanned, startNote(plan, requeried), [`  Salesforce API calls:   ${api.calls}${usage}`]));
        await confirmAndEnqueue(plan, { noun, flags, queue, progress });
      });
    });
  return backfill;
}
