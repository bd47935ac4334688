// The `enrichbridge` command line: accounts and tokens for operators. It works on the same data folder
// as a running server (DATA_DIR), which sees changes within a second without a restart.
import { Command, Option } from 'commander';
import { wholeNumber } from './options.ts';
import { AdminError, type AccountSettings, createAccount, describeAccount, issueToken, revokeToken, updateAccount } from '../../core/accounts/admin.ts';
import { ENVIRONMENTS, type Environment, type FieldEntitlement, QUOTA_PERIODS } from '../../core/accounts/model.ts';
import { CAREER_FIELDS, HOUSEHOLD_FIELDS, POLITICAL_HOUSEHOLD_FIELDS } from '../../core/contract/schemas.ts';
import type { JobQueue } from '../../bridge/job-queue.ts';
import type { Store } from '../../core/storage/port.ts';
import { tokenReference } from '../../core/accounts/tokens.ts';
import type { Installation } from '../../bridge/model.ts';
import { accountName } from '../http/console/format.ts';
import type { PipelineStore } from '../../bridge/store.ts';
import { SnapshotLoadError } from '../../core/snapshot/storage/loader.ts';
import { DuplicateAccountError } from '../../core/storage/port.ts';
import { type Config, backendsOf, loadConfig } from '../config.ts';
import { dataCommands } from './data.ts';
import { jobsCommands } from './jobs.ts';
import { suppressCommands } from './suppress.ts';
import { eraseCommands } from './erase.ts';
import { SuppressionInputError } from '../../core/suppression/operations.ts';
import { pipelineCommands } from './pipeline.ts';
import { backfillCommands } from './backfill.ts';
import { CrmError } from '../../bridge/connector.ts';
import type { CrmModule } from '../../bridge/crm-module.ts';
import { InstallationError } from '../../bridge/installations.ts';
import { MigrationRefusedError } from '../../bridge/migrate.ts';
import { MigratedFolderError, refuseMigratedFolder } from '../../core/storage/migration-marker.ts';
import { crmModules, withRuntime } from '../runtime/compose.ts';
import { openConfiguredStorage } from '../runtime/storage.ts';
import { refusalOf } from '../refusals.ts';
import { crmCommands } from './crm.ts';
import { ConsoleLinkRefused, consoleCommand } from './console.ts';
import { loggableErrorText } from '../../core/observe/loggable-errors.ts';

interface SettingsFlags {
  careerIntelligence?: boolean;
  politicalData?: boolean;
  quota?: number;
  quotaPeriod?: string;
  rateLimit?: number;
  householdFields?: string;
  careerFields?: string;
}

function settingsFrom(flags: SettingsFlags): AccountSettings {
  return {
    ...(flags.careerIntelligence === undefined ? {} : { careerIntelligence: flags.careerIntelligence }),
    ...(flags.politicalData === undefined ? {} : { politicalData: flags.politicalData }),
    ...(flags.quota === undefined ? {} : { quotaLimit: flags.quota }),
    ...(flags.quotaPeriod === undefined ? {} : { quotaPeriod: flags.quotaPeriod }),
    ...(flags.rateLimit === undefined ? {} : { rateLimit: flags.rateLimit }),
    ...(flags.householdFields === undefined ? {} : { householdFields: flags.householdFields }),
    ...(flags.careerFields === undefined ? {} : { careerFields: flags.careerFields }),
  };
}

function withSettingsOptions(command: Command, forUpdate: boolean): Command {
  return command
    .option('--career-intelligence', 'grant Career Intelligence (career matching)')
    .addOption(new Option('--no-career-intelligence', 'withdraw Career Intelligence').hideHelp(!forUpdate))
    .option(
      '--political-data',
      `grant political data: household ${POLITICAL_HOUSEHOLD_FIELDS.join(', ')} (a special category${forUpdate ? '' : '; default off'})`,
    )
    .addOption(new Option('--no-political-data', 'withdraw political data').hideHelp(!forUpdate))
    .option('--quota <n>', `usage tokens per period for each production token${forUpdate ? '' : ' (default 1000)'}`, wholeNumber(0))
    .addOption(new Option('--quota-period <period>', `when the quota refreshes${forUpdate ? '' : ' (default month)'}`).choices(QUOTA_PERIODS))
    .option('--rate-limit <n>', `requests per second per token${forUpdate ? '' : ' (default 5)'}`, wholeNumber(1))
    .option('--household-fields <list>', 'household fields granted: "all" or a comma-separated list')
    .option('--career-fields <list>', 'career fields granted: "all" or a comma-separated list');
}

function describeFields(granted: FieldEntitlement<string>, total: number): string {
  return granted === 'all' ? `all (${total})` : `${granted.length} of ${total}: ${granted.join(', ')}`;
}

async function printAccount(store: Store, name: string, json: boolean, owners: ReadonlyMap<string, Installation>): Promise<void> {
  const { account, tokens } = await describeAccount(store, name);
  if (json) {
    const usedBy = (id: string) => {
      const owner = owners.get(id);
      return owner === undefined ? null : { installation: owner.id, provider: owner.provider, externalAccountId: owner.externalAccountId };
    };
    console.log(JSON.stringify({ account, tokens: tokens.map((usage) => ({ ...usage, usedBy: usedBy(usage.token.id) })) }, null, 2));
    return;
  }
  const lines = [
    `account              ${account.name} (${account.id})`,
    `created              ${account.createdAt}`,
    `career intelligence  ${account.careerIntelligence ? 'on' : 'off'}`,
    `political data       ${account.politicalData ? 'on' : 'off'}`,
    `rate limit           ${account.rateLimit} requests per second per token`,
    `quota                ${account.quotaLimit} per ${account.quotaPeriod === 'none' ? 'lifetime (never refreshes)' : account.quotaPeriod} for each production token`,
    `household fields     ${describeFields(account.householdFields, HOUSEHOLD_FIELDS.length)}`,
    `career fields        ${describeFields(account.careerFields, CAREER_FIELDS.length)}`,
    `tokens               ${tokens.length === 0 ? 'none' : ''}`,
  ];
  for (const { token, quota } of tokens) {
    const state = token.revokedAt === null ? 'live' : `revoked ${token.revokedAt}`;
    const usage =
      quota === undefined
        ? 'sandbox: not billed'
        : `used ${quota.used}, remaining ${quota.remaining}, ${quota.resetsAt === null ? 'never refreshes' : `next refresh ${quota.resetsAt.toISOString()}`}`;
    const owner = owners.get(token.id);
    const usedBy = owner === undefined ? '' : `  used by ${installationName(owner)}`;
    lines.push(`  ${token.id}  ${token.environment.padEnd(10)}  created ${token.createdAt}  ${state}  ${usage}${usedBy}`);
  }
  console.log(lines.join('\n'));
}

/** An installation as an operator recognises it: its CRM account as the console names it, then its id. */
function installationName(installation: Installation): string {
  return `${accountName(installation)} (installation ${installation.id})`;
}

/** Which installation enriches with each token (tokens the server minted when a CRM was connected). */
async function tokenOwners(pipelineStore: Pick<PipelineStore, 'listInstallations'>): Promise<Map<string, Installation>> {
  const owners = new Map<string, Installation>();
  for (const installation of await pipelineStore.listInstallations()) {
    if (installation.target.kind === 'local') owners.set(installation.target.tokenId, installation);
  }
  return owners;
}

async function withQueue<T>(run: (queue: JobQueue) => Promise<T>): Promise<T> {
  const { store, queue } = await openConfiguredStorage(loadConfig());
  try {
    return await run(queue);
  } finally {
    await store.close();
  }
}

export async function withStore<T>(run: (store: Store) => Promise<T>): Promise<T> {
  const { store } = await openConfiguredStorage(loadConfig());
  try {
    return await run(store);
  } finally {
    await store.close();
  }
}

/**
 * The CRM modules as configured. A configuration that does not load still gives every command (so
 * `--help` works); the first command that runs then fails with the configuration's own error.
 */
function configuredModules(program: Command): readonly CrmModule[] {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    program.hook('preAction', () => {
      throw error;
    });
    return crmModules();
  }
  return crmModules(config);
}

/** A command's name from the program down, e.g. `data load`. */
function commandPath(command: Command): string {
  const names: string[] = [];
  for (let at: Command | null = command; at?.parent !== null && at?.parent !== undefined; at = at.parent) names.unshift(at.name());
  return names.join(' ');
}

/**
 * Commands that name no database: `data generate` only writes files where it is told, and
 * `data migrate-to-postgres` names both its own (it reads the SQLite file and writes PostgreSQL).
 */
const NAMES_NO_DATABASE = new Set(['data generate', 'data migrate-to-postgres', 'start']);

/**
 * Before a command runs: a data folder whose state moved to PostgreSQL is refused without DATABASE_URL,
 * and the database and Redis the command uses are named on stderr (stdout stays the command's own
 * output, JSON included), so a command run without the deployment's variables is seen at once.
 */
function announceBackends(command: Command): void {
  if (NAMES_NO_DATABASE.has(commandPath(command))) return;
  let config: Config;
  try {
    config = loadConfig();
  } catch {
    return; // the command fails on the configuration itself, with its own message
  }
  if (config.databaseUrl === null) refuseMigratedFolder(config.dataDir);
  const { database, redis } = backendsOf(config);
  process.stderr.write(`enrichbridge: database ${database}, redis ${redis}\n`);
}

/** The program, and whether an error is one whose message alone tells the operator what to fix. */
export function buildProgram(): { readonly program: Command; readonly isUserError: (error: unknown) => error is Error } {
  const program = new Command('enrichbridge')
    .description('enrichbridge: enrichment service and CRM bridge. Works on the data folder DATA_DIR (default ./data).')
    .showHelpAfterError();

  const accounts = program.command('accounts').description('create, change and inspect accounts');
  withSettingsOptions(accounts.command('create <name>').description('create an account'), false).action(async (name: string, flags: SettingsFlags) => {
    await withStore(async (store) => {
      const account = await createAccount(store, name, settingsFrom(flags));
      console.log(`created account ${account.name} (${account.id})`);
    });
  });
  withSettingsOptions(accounts.command('update <name>').description("change an account's settings"), true).action(
    async (name: string, flags: SettingsFlags) => {
      await withStore(async (store) => {
        await updateAccount(store, name, settingsFrom(flags));
      });
      await withRuntime(async ({ pipelineStore }, { store }) => printAccount(store, name, false, await tokenOwners(pipelineStore)));
    },
  );
  accounts
    .command('show <name>')
    .description('settings, tokens, and quota used and remaining with the next refresh')
    .option('--json', 'print JSON')
    .action(async (name: string, flags: { json?: boolean }) => {
      await withRuntime(async ({ pipelineStore }, { store }) => printAccount(store, name, flags.json === true, await tokenOwners(pipelineStore)));
    });
  accounts
    .command('list')
    .description('all accounts')
    .action(async () => {
      await withStore(async (store) => {
        for (const account of await store.listAccounts()) {
          console.log(`${account.name}\tCI ${account.careerIntelligence ? 'on' : 'off'}\t${account.rateLimit}/s\t${account.quotaLimit}/${account.quotaPeriod}`);
        }
      });
    });

  const tokens = program.command('tokens').description('issue and revoke API tokens');
  tokens
    .command('create <account>')
    .description('issue a token; prints the token alone on stdout (it is shown once)')
    .addOption(new Option('--env <environment>', 'sandbox or production').choices(ENVIRONMENTS).makeOptionMandatory())
    .action(async (name: string, flags: { env: Environment }) => {
      await withStore(async (store) => {
        const { token, record } = await issueToken(store, name, flags.env);
        console.log(token);
        console.error(`issued ${record.environment} token ${record.id} for ${name}`);
      });
    });
  tokens
    .command('revoke <token>')
    .description('revoke a token, given the token itself or its tok_ id')
    .option('--force', 'revoke it even though an installation enriches with it (that installation stops enriching)')
    .action(async (value: string, flags: { force?: boolean }) => {
      await withRuntime(async ({ pipelineStore }, { store }) => {
        const reference = tokenReference(value.trim());
        const id = 'id' in reference ? reference.id : (await store.findLiveToken(reference.hash))?.token.id;
        const owner = id === undefined ? undefined : (await tokenOwners(pipelineStore)).get(id);
        if (owner !== undefined && flags.force !== true) {
          throw new AdminError(
            `${id ?? 'this token'} is the token ${installationName(owner)} enriches with: revoking it stops that installation. ` +
              `Disconnect the installation instead (enrichbridge ${owner.provider} disconnect ${owner.id}), or pass --force.`,
          );
        }
        await revokeToken(store, value);
        console.error(owner === undefined ? 'revoked' : `revoked; ${installationName(owner)} no longer enriches until it is connected again`);
      });
    });

  program.addCommand(dataCommands(withStore));
  program.addCommand(jobsCommands(withQueue));
  program.addCommand(suppressCommands(withStore));
  for (const command of eraseCommands()) program.addCommand(command);
  for (const command of pipelineCommands()) program.addCommand(command);
  const modules = configuredModules(program);
  program.hook('preAction', (_program, command) => announceBackends(command));
  for (const command of crmCommands(modules)) program.addCommand(command);
  program.addCommand(backfillCommands(modules));
  program.addCommand(consoleCommand());
  program
    .command('start')
    .description('run the enrichment server, with its pipeline workers, until SIGTERM or SIGINT (what `npm start` runs)')
    // The server's own entry, beside this module: dist/server.mjs from the CLI's bundle, server/main.ts
    // from the sources. Named by a variable so the bundler leaves it out of the CLI's bundle: a command's
    // start never loads express. It reads the configuration, starts, and logs which backends it uses.
    .action(async () => {
      const entry = import.meta.url.endsWith('.mjs') ? './server.mjs' : '../main.ts';
      await import(entry);
    });
  const isUserError = (error: unknown): error is Error =>
    error instanceof AdminError ||
    error instanceof DuplicateAccountError ||
    error instanceof SnapshotLoadError ||
    error instanceof InstallationError ||
    error instanceof CrmError ||
    error instanceof MigrationRefusedError ||
    error instanceof MigratedFolderError ||
    error instanceof ConsoleLinkRefused ||
    error instanceof SuppressionInputError ||
    (error instanceof Error && modules.some((module) => module.isUserError?.(error) === true));
  return { program, isUserError };
}

/** DATABASE_URL as configured, for the refusal that names it; null when unset or when the configuration does not load. */
function configuredDatabaseUrl(): string | null {
  try {
    return loadConfig().databaseUrl;
  } catch {
    // The command has already failed on the configuration: its own error is the one reported.
    return null;
  }
}

const { program, isUserError } = buildProgram();
program.parseAsync(process.argv).catch((error: unknown) => {
  // A mistake, or a place not ready for the command (the database missing), is one line with its fix.
  const refusal = isUserError(error) ? error.message : refusalOf(error, configuredDatabaseUrl());
  if (refusal !== null) console.error(`enrichbridge: ${refusal}`);
  // Anything else is a fault of ours: its stack, without what the error object carries (a database
  // error's detail holds row values).
  else console.error(loggableErrorText(error));
  process.exitCode = 1;
});
