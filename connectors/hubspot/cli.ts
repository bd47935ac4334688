// `enrichbridge hubspot …`: connecting a portal with a private/static app token, install links for
// the OAuth flow, and disconnecting. server/cli mounts it with every other module's commands.
import { Command } from 'commander';
import { type TargetFlags, withTargetOptions } from '../kit/cli-target.ts';
import { installLinkUrl } from '../kit/oauth-install.ts';
import type { CrmCommandContext } from '../../bridge/crm-module.ts';
import { InstallationError, targetFromFlags } from '../../bridge/installations.ts';
import { DEFAULT_HUBSPOT_API_BASE } from './api.ts';
import { HUBSPOT_PROVIDER } from './connector.ts';
import { type HubSpotAppSettings, checkStaticToken, connectPortal, createInstallLink, disconnectPortal } from './install.ts';
import { HUBSPOT_OAUTH_INSTALL_ROUTE } from './paths.ts';

interface ConnectFlags extends TargetFlags {
  portalId: string;
  accessToken: string;
  clientSecret: string;
  appId: string;
  apiBaseUrl?: string;
}

/** The settings of the public app that are missing here, by their variable's name (none: an OAuth install can run). */
function missingAppSettings(app: HubSpotAppSettings): string[] {
  return [
    ...(app.clientId === null ? ['HUBSPOT_CLIENT_ID'] : []),
    ...(app.clientSecret === null ? ['HUBSPOT_CLIENT_SECRET'] : []),
    ...(app.appId === null ? ['HUBSPOT_APP_ID'] : []),
  ];
}

/** The operator's HubSpot commands, for the public app this process is configured with (`app`). */
export function hubspotCommands(app: HubSpotAppSettings, context: CrmCommandContext): Command {
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
  ).action(async (flags: ConnectFlags) => {
    if (!/^\d+$/.test(flags.portalId)) throw new InstallationError('--portal-id is a number');
    const target = targetFromFlags(flags);
    await checkStaticToken(flags.apiBaseUrl, flags.portalId, flags.accessToken);
    await context.withRuntime(async ({ installations, pipelineStore }) => {
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
          apiBaseUrl: flags.apiBaseUrl ?? DEFAULT_HUBSPOT_API_BASE,
        },
        target,
        environment: flags.env,
        existing,
      });
      const p = result.provisioned;
      context.tell(
        `${result.created ? 'connected' : 'renewed the credentials of'} portal ${flags.portalId} (${result.installation.environment}); properties: ${p.created.length} created, ${p.updated.length} updated, ${p.unchanged.length} in place${p.conflicting.length > 0 ? `, conflicting: ${p.conflicting.join(', ')}` : ''}`,
      );
      context.print(result.installation.id);
    });
  });

  withTargetOptions(
    hubspot.command('install-link').description('an expiring link (7 days) a HubSpot admin opens to install the public app (OAuth) for this target'),
  ).action((flags: TargetFlags) => {
    const publicUrl = context.publicUrl();
    if (publicUrl === null) throw new InstallationError('set PUBLIC_URL (the address HubSpot and admins reach this server at)');
    const target = targetFromFlags(flags);
    // A link is only handed out for an app that can install: without one, the admin would reach a
    // refusal after opening it, any day of its 7.
    const missing = missingAppSettings(app);
    if (missing.length > 0) {
      throw new InstallationError(
        `no HubSpot public app is configured, so no install link is made: set ${missing.join(', ')} (the app's, as the server has them), or connect a portal with its own app token (enrichbridge hubspot connect)`,
      );
    }
    // Sealed with the data folder's key: only a server with the same key can open it.
    const link = createInstallLink(context.box(), target, flags.env);
    context.print(installLinkUrl(publicUrl, HUBSPOT_OAUTH_INSTALL_ROUTE, link));
  });

  hubspot
    .command('disconnect <installation>')
    .description('forget a portal: its credentials, state and token; optionally archive our properties in it')
    .option('--remove-properties', 'also archive the wf_* contact properties and their group in the portal')
    .action(async (id: string, flags: { removeProperties?: boolean }) => {
      await context.withRuntime(async ({ installations }) => {
        const { removedProperties } = await disconnectPortal(installations, id, flags.removeProperties === true);
        context.tell(`disconnected ${id}${flags.removeProperties === true ? `; archived ${removedProperties} properties` : ''}`);
      });
    });

  return hubspot;
}
