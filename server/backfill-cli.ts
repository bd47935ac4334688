// `enrichbridge backfill hubspot INSTALLATION`: enrich the contacts a portal already has. It reads
// them (no enrichment yet), says how many need enriching and what that will cost, asks, then
// enqueues with a progress bar; an interrupted run resumes where it stopped.
import { createInterface } from 'node:readline/promises';
import { Command, InvalidArgumentError } from 'commander';
import { BackfillProgress, type BackfillPlan, planBackfill, runBackfill } from '../connectors/pipeline/backfill.ts';
import { InstallationError } from '../connectors/pipeline/installations.ts';
import { CONTACT, HUBSPOT_PROVIDER, HubSpotConnector, hubspotApiFor, readProperties } from '../connectors/hubspot/connector.ts';
import { progressReporter } from './data-cli.ts';
import { withBridge } from './pipeline-cli.ts';

function positive(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1) throw new InvalidArgumentError('expected a whole number of at least 1');
  return Number(value);
}

async function confirm(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

function describePlan(plan: BackfillPlan, environment: string): string {
  return [
    `scanned ${plan.scanned} contacts${plan.startCursor === null ? '' : ' (resuming after the last backfill stopped)'}`,
    `  with a match key:       ${plan.withMatchKey}`,
    `  already up to date:     ${plan.upToDate}`,
    `  to enrich:              ${plan.toEnrich}`,
    `  quota units at most:    ${plan.quotaUnits}${environment === 'sandbox' ? ' (sandbox: no quota is spent)' : ''}`,
  ].join('\n');
}

export function backfillCommands(): Command {
  const backfill = new Command('backfill').description('enrich records that already exist in a CRM');
  backfill
    .command('hubspot <installation>')
    .description('page through the portal’s contacts (not the 10,000-capped search) and enqueue those that need enriching')
    .option('--dry-run', 'count and price only; enqueue nothing')
    .option('--limit <n>', 'enqueue at most N contacts', positive)
    .option('--yes', 'do not ask for confirmation (required when not on a terminal)')
    .option('--restart', 'start from the first contact even if an earlier backfill stopped midway')
    .action(async (id: string, flags: { dryRun?: boolean; limit?: number; yes?: boolean; restart?: boolean }) => {
      await withBridge(async ({ installations, pipelineStore }, { db, queue }) => {
        const installation = await installations.require(id);
        if (installation.provider !== HUBSPOT_PROVIDER) throw new InstallationError(`${id} is not a HubSpot installation`);
        {
          const progress = new BackfillProgress(db);
          const api = await hubspotApiFor(installation, installations);
          const connector = new HubSpotConnector(api);
          const properties = readProperties();
          let lastShown = 0;
          const plan = await planBackfill({
            installation,
            object: CONTACT,
            connector,
            store: pipelineStore,
            progress,
            source: async (cursor) => {
              const page = await api.listContacts(cursor, properties);
              return { records: page.contacts, next: page.after };
            },
            ...(flags.limit === undefined ? {} : { limit: flags.limit }),
            restart: flags.restart === true,
            onPage: (scanned) => {
              if (scanned - lastShown >= 1000) {
                lastShown = scanned;
                process.stderr.write(`scanned ${scanned} contacts…\n`);
              }
            },
          });
          console.log(describePlan(plan, installation.environment));
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
            if (!(await confirm(`Enqueue ${plan.toEnrich} contacts for enrichment (at most ${plan.quotaUnits} quota units)? [y/N] `))) {
              console.log('nothing enqueued');
              return;
            }
          }
          const reporter = progressReporter('enqueue', (n) => String(n));
          const result = await runBackfill(plan, { queue, progress, onProgress: (done) => reporter.update(done, plan.toEnrich, '') });
          reporter.stop();
          console.log(`enqueued ${result.enqueued} contacts${result.duplicates > 0 ? ` (${result.duplicates} were already queued)` : ''}; the workers enrich them at the token's rate`);
        }
      });
    });
  return backfill;
}
