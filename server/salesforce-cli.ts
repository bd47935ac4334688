// `enrichbridge salesforce …`: connecting one org with a token (QA and single-org use) and
// disconnecting. The OAuth install routes are the other way in.
import { Command, Option } from 'commander';
import { ENVIRONMENTS, type Environment } from '../core/accounts/model.ts';
import { InstallationError, type TargetInput } from '../connectors/pipeline/installations.ts';
import { SALESFORCE_API_VERSION, SalesforceApi } from '../connectors/salesforce/api.ts';
import { SALESFORCE_PRODUCTION_LOGIN_URL, SALESFORCE_SANDBOX_LOGIN_URL, type SalesforceCredentials, checkInstanceUrl } from '../connectors/salesforce/auth.ts';
import { SALESFORCE_PROVIDER } from '../connectors/salesforce/connector.ts';
import { toSalesforceId18 } from '../connectors/salesforce/outbound.ts';
import { loadConfig } from './config.ts';
import { withBridge } from './pipeline-cli.ts';

interface ConnectFlags {
  orgId: string;
  instanceUrl: string;
  accessToken: string;
  refreshToken?: string;
  clientId?: string;
  clientSecret?: string;
  sandboxOrg?: boolean;
  account?: string;
  remoteUrl?: string;
  remoteToken?: string;
  env: Environment;
}

function targetFrom(flags: ConnectFlags): TargetInput {
  const remote = flags.remoteUrl !== undefined || flags.remoteToken !== undefined;
  if (flags.account !== undefined && remote) throw new InstallationError('give --account, or --remote-url with --remote-token, not both');
  if (flags.account !== undefined) return { kind: 'local', accountName: flags.account };
  if (flags.remoteUrl !== undefined && flags.remoteToken !== undefined) return { kind: 'remote', url: flags.remoteUrl, token: flags.remoteToken };
  throw new InstallationError('give --account NAME, or --remote-url URL with --remote-token T');
}

export function salesforceCommands(): Command {
  const salesforce = new Command('salesforce').description('connect Salesforce orgs');

  salesforce
    .command('connect')
    .description('connect one org with an access token (and a refresh token to keep it); prints the installation id')
    .requiredOption('--org-id <id>', 'the organization id (00D…, 15 or 18 characters)')
    .requiredOption('--instance-url <url>', "the org's API host, https://<my-domain>.my.salesforce.com")
    .requiredOption('--access-token <token>', 'an access token (session id) of the integration user')
    .option('--refresh-token <token>', 'a refresh token, with --client-id, so the access can be renewed')
    .option('--client-id <id>', "the External Client App's consumer key (needed to refresh)")
    .option('--client-secret <secret>', "the External Client App's consumer secret, if it requires one to refresh")
    .option('--sandbox-org', 'the org is a Salesforce sandbox (tokens from test.salesforce.com)')
    .option('--account <name>', 'enrich in-process against this local account')
    .option('--remote-url <url>', 'enrich over HTTP against this endpoint (…/v1/ or …/sandbox/v1)')
    .option('--remote-token <token>', "the remote endpoint's token")
    .addOption(new Option('--env <environment>', 'sandbox or production').choices(ENVIRONMENTS).makeOptionMandatory())
    .action(async (flags: ConnectFlags) => {
      const config = loadConfig();
      const orgId = toSalesforceId18(flags.orgId);
      if (orgId === null || !orgId.startsWith('00D')) throw new InstallationError('--org-id is an organization id: 00D followed by 12 or 15 characters');
      if (flags.refreshToken !== undefined && flags.clientId === undefined) throw new InstallationError('--refresh-token needs --client-id to be used');
      const instanceUrl = checkInstanceUrl(flags.instanceUrl, { allowAnyHost: config.salesforceAllowAnyHost });
      const target = targetFrom(flags);
      // The token is tried before anything is stored: a wrong one fails here, not in the first batch.
      const probe = new SalesforceApi({
        orgId,
        session: () => Promise.resolve({ instanceUrl, accessToken: flags.accessToken }),
        allowAnyHost: config.salesforceAllowAnyHost,
      });
      await probe.send('check the token', { method: 'GET', url: `/services/data/v${SALESFORCE_API_VERSION}/` });
      const credentials: SalesforceCredentials = {
        kind: flags.refreshToken !== undefined ? 'oauth' : 'static',
        instanceUrl,
        accessToken: flags.accessToken,
        refreshToken: flags.refreshToken ?? null,
        issuedAt: null,
        expiresAt: null,
        clientId: flags.clientId ?? null,
        clientSecret: flags.clientSecret ?? null,
        loginUrl: flags.sandboxOrg === true ? SALESFORCE_SANDBOX_LOGIN_URL : SALESFORCE_PRODUCTION_LOGIN_URL,
        orgId,
        userId: null,
        jwt: null,
      };
      await withBridge(async ({ installations }) => {
        const installation = await installations.create({
          provider: SALESFORCE_PROVIDER,
          externalAccountId: orgId,
          environment: flags.env,
          target,
          crmCredentials: credentials,
        });
        const secret = await installations.webhookSecret(installation.id);
        console.error(`connected org ${orgId} (${installation.environment}); deploy manifests/salesforce to create the fields and flows`);
        console.error(`signing secret for the JSON callout (shown once; the Apex class needs it): ${secret}`);
        console.log(installation.id);
      });
    });

  salesforce
    .command('disconnect <installation>')
    .description('forget an org: its credentials, state and token (the fields stay in Salesforce)')
    .action(async (id: string) => {
      await withBridge(async ({ installations }) => {
        const installation = await installations.require(id);
        if (installation.provider !== SALESFORCE_PROVIDER) throw new InstallationError(`${id} is not a Salesforce installation`);
        await installations.remove(id);
        console.error(`disconnected ${id}`);
      });
    });

  return salesforce;
}
