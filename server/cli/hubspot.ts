// `enrichbridge hubspot …`: connecting a portal with a private/static app token, install links for
// the OAuth flow, and disconnecting.
import { Command, Option } from 'commander';
import { ENVIRONMENTS, type Environment } from '../../core/accounts/model.ts';
import { loadSecretBox } from '../../core/secrets/secret-box.ts';
import { InstallationError, targetFromFlags } from '../../connectors/pipeline/installations.ts';
import { HUBSPOT_PROVIDER } from '../../connectors/hubspot/connector.ts';
import { checkStaticToken, connectPortal, createInstallLink, disconnectPortal } from '../../connectors/hubspot/install.ts';
import { HUBSPOT_OAUTH_INSTALL_ROUTE } from '../../connectors/hubspot/routes.ts';
import { loadConfig } from '../config.ts';
import { withRuntime } from '../runtime.ts';

interface TargetFlags {
  account?: string;
  remoteUrl?: string;
  remoteToken?: string;
}

function withTargetOptions(command: Command): Command {
  return command
    .option('--account <name>', 'enrich in-process against this local account')
    .option('--remote-url <url>', 'enrich over HTTP against this endpoint (…/v1/ or …/sandbox/v1)')
    .option('--remote-token <token>', "the remote endpoint's token")
    .addOption(new Option('--env <environment>', 'sandbox or production').choices(ENVIRONMENTS).makeOptionMandatory());
}

export function hubspotCommands(): Command {
  const hubspot = new Command('hubspot').description('connect HubSpot portals');

  withTargetOptions(
    hubspot
      .command('connect')
      .description('connect one portal with a private/static app token; prints the installation id')
      .requiredOption('--portal-id <id>', 'the HubSpot portal (hub) id')
      .requiredOption('--access-token <token>', "the app's access token")
      .requiredOption('--client-secret <secret>', "the app's client secret (verifies webhook signatures)")
      .requiredOption('--app-id <id>', "the app's id (tells our own writes apart in webhook events)")
      .option('--api-base-url <url>', 'HubSpot API base URL (a local fake for QA)'),
  ).action(
    async (
      flags: TargetFlags & { portalId: string; accessToken: string; clientSecret: string; appId: string; apiBaseUrl?: string; env: Environment },
    ) => {
      if (!/^\d+$/.test(flags.portalId)) throw new InstallationError('--portal-id is a number');
      const target = targetFromFlags(flags);
      await checkStaticToken(flags.apiBaseUrl, flags.portalId, flags.accessToken);
      await withRuntime(async ({ installations, pipelineStore }) => {
        const existing = await pipelineStore.findInstallationByAccount(HUBSPOT_PROVIDER, flags.portalId);
        const result = await connectPortal({
          installations,
          portalId: flags.portalId,
          credentials: {
            kind: 'static',
            accessToken: flags.accessToken,
            refreshToken: null,
            expiresAt: null,
            clientId: null,
            clientSecret: flags.clientSecret,
            appId: flags.appId,
            apiBaseUrl: flags.apiBaseUrl ?? 'https://api.hubapi.com',
          },
          target,
          environment: flags.env,
          existing,
        });
        const p = result.provisioned;
        console.error(
          `${result.created ? 'connected' : 'renewed the credentials of'} portal ${flags.portalId} (${result.installation.environment}); properties: ${p.created.length} created, ${p.updated.length} updated, ${p.unchanged.length} in place${p.conflicting.length > 0 ? `, conflicting: ${p.conflicting.join(', ')}` : ''}`,
        );
        console.log(result.installation.id);
      });
    },
  );

  withTargetOptions(
    hubspot
      .command('install-link')
      .description('an expiring link (7 days) a HubSpot admin opens to install the public app (OAuth) for this target'),
  ).action(async (flags: TargetFlags & { env: Environment }) => {
    const config = loadConfig();
    const publicUrl = config.publicUrl;
    if (publicUrl === null) throw new InstallationError('set PUBLIC_URL (the address HubSpot and admins reach this server at)');
    const target = targetFromFlags(flags);
    // Sealed with the data folder's key: only a server with the same key can open it.
    const link = createInstallLink(loadSecretBox({ dataDir: config.dataDir }), target, flags.env);
    // Appended, not resolved: a PUBLIC_URL with a path prefix keeps it.
    const url = new URL(`${publicUrl.replace(/\/+$/, '')}${HUBSPOT_OAUTH_INSTALL_ROUTE}`);
    url.searchParams.set('link', link);
    console.log(url.toString());
  });

  hubspot
    .command('disconnect <installation>')
    .description('forget a portal: its credentials, state and token; optionally archive our properties in it')
    .option('--remove-properties', 'also archive the wf_* contact properties and their group in the portal')
    .action(async (id: string, flags: { removeProperties?: boolean }) => {
      await withRuntime(async ({ installations }) => {
        const { removedProperties } = await disconnectPortal(installations, id, flags.removeProperties === true);
        console.error(`disconnected ${id}${flags.removeProperties === true ? `; archived ${removedProperties} properties` : ''}`);
      });
    });

  return hubspot;
}
