// The options every CRM's connect and install-link commands share: what the installation enriches
// against (a local account, or a remote endpoint with the contract and its token) and in which
// environment. targetFromFlags (pipeline/installations.ts) turns them into a target.
import { type Command, Option } from 'commander';
import { ENVIRONMENTS, type Environment } from '../../core/accounts/model.ts';

export interface TargetFlags {
  account?: string;
  remoteUrl?: string;
  remoteToken?: string;
  env: Environment;
}

export function withTargetOptions(command: Command): Command {
  return command
    .option('--account <name>', 'enrich in-process against this local account')
    .option('--remote-url <url>', 'enrich over HTTP against this endpoint (…/v1/ or …/sandbox/v1)')
    .option('--remote-token <token>', "the remote endpoint's token")
    .addOption(new Option('--env <environment>', 'sandbox or production').choices(ENVIRONMENTS).makeOptionMandatory());
}
