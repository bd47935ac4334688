// `enrichbridge salesforce …`: connecting one org with a token (QA and single-org use) or with the JWT bearer
// flow (server to server), install links for the OAuth routes, the outbound-message URL, the record
// component's secret, and disconnecting.
// server/cli mounts it with every other module's commands.
import { Command } from 'commander';
import { type TargetFlags, withTargetOptions } from '../kit/cli-target.ts';
import { requireAccount } from '../../core/accounts/admin.ts';
import type { CrmCommandContext } from '../../bridge/crm-module.ts';
import { InstallationError, checkRemoteUrl, targetFromFlags } from '../../bridge/installations.ts';
import { HOUSEHOLD_PLACEMENTS, HOUSEHOLD_PLACEMENT_TEXT, HouseholdPlacementSchema } from '../../bridge/model.ts';
import { SALESFORCE_API_VERSION, SalesforceApi } from './api.ts';
import {
  SALESFORCE_PRODUCTION_LOGIN_URL,
  SALESFORCE_SANDBOX_LOGIN_URL,
  type SalesforceCredentials,
  SalesforceCredentialsSchema,
  checkInstanceUrl,
} from './auth.ts';
import { SALESFORCE_PROVIDER, salesforceApiFor } from './connector.ts';
import { SALESFORCE_OBJECTS } from './fields.ts';
import { PERSON_ACCOUNT } from './person-accounts.ts';
import { householdReadiness } from './npsp-households.ts';
import { toSalesforceId18 } from './ids.ts';
import { type SalesforceAppSettings, connectJwt, createInstallLink, installLinkUrl, readJwtKey, reconnectLinkFor, reconnectOrg } from './install.ts';
import { salesforceOutboundMessagePath } from './paths.ts';
import { recordCredential } from './record-routes.ts';

/** The full outbound-message URL of an installation; without PUBLIC_URL, the path behind a placeholder host. */
function outboundUrl(publicUrl: string | null, secret: string): string {
  return `${publicUrl ?? 'https://YOUR_PUBLIC_HOST'}${salesforceOutboundMessagePath(secret)}`;
}

interface ConnectFlags extends TargetFlags {
  orgId: string;
  instanceUrl: string;
  accessToken: string;
  refreshToken?: string;
  clientId?: string;
  clientSecret?: string;
  sandboxOrg?: boolean;
}

interface InstallLinkFlags extends TargetFlags {
  sandboxOrg?: boolean;
}

interface ConnectJwtFlags extends TargetFlags {
  instanceUrl: string;
  loginUrl?: string;
}

interface ReconnectFlags {
  accessToken?: string;
  orgId?: string;
  instanceUrl?: string;
  refreshToken?: string;
  clientId?: string;
  clientSecret?: string;
  sandboxOrg?: boolean;
  anyOrg?: boolean;
}

/** One GET of the API's version root with the given token: a wrong token or host fails before anything is stored or changed. */
async function checkAccessToken(orgId: string, instanceUrl: string, accessToken: string, allowAnyHost: boolean): Promise<void> {
  const probe = new SalesforceApi({ orgId, session: () => Promise.resolve({ instanceUrl, accessToken }), allowAnyHost });
  await probe.send('check the token', { method: 'GET', url: `/services/data/v${SALESFORCE_API_VERSION}/` });
}

/** The credentials an admin gives on the command line: an access token, refreshable when a refresh token and client id come with it. */
function givenCredentials(
  flags: { refreshToken?: string; clientId?: string; clientSecret?: string },
  given: { orgId: string; instanceUrl: string; accessToken: string; loginUrl: string },
): SalesforceCredentials {
  return {
    kind: flags.refreshToken !== undefined ? 'oauth' : 'static',
    instanceUrl: given.instanceUrl,
    accessToken: given.accessToken,
    refreshToken: flags.refreshToken ?? null,
    issuedAt: null,
    expiresAt: null,
    clientId: flags.clientId ?? null,
    clientSecret: flags.clientSecret ?? null,
    loginUrl: given.loginUrl,
    orgId: given.orgId,
    userId: null,
    jwt: null,
  };
}

export function salesforceCommands(app: SalesforceAppSettings, context: CrmCommandContext): Command {
  const salesforce = new Command('salesforce').description('connect Salesforce orgs');

  const connect = salesforce
    .command('connect')
    .description('connect one org with an access token (and a refresh token to keep it); prints the installation id')
    .requiredOption('--org-id <id>', 'the organization id (00D…, 15 or 18 characters)')
    .requiredOption('--instance-url <url>', "the org's API host, https://<my-domain>.my.salesforce.com")
    .requiredOption('--access-token <token>', 'an access token (session id) of the integration user')
    .option('--refresh-token <token>', 'a refresh token, with --client-id, so the access can be renewed')
    .option('--client-id <id>', "the External Client App's consumer key (needed to refresh)")
    .option('--client-secret <secret>', "the External Client App's consumer secret, if it requires one to refresh")
    .option('--sandbox-org', 'the org is a Salesforce sandbox (tokens from test.salesforce.com)');
  withTargetOptions(connect).action(async (flags: ConnectFlags) => {
    const orgId = toSalesforceId18(flags.orgId);
    if (orgId === null || !orgId.startsWith('00D')) throw new InstallationError('--org-id is an organization id: 00D followed by 12 or 15 characters');
    if (flags.refreshToken !== undefined && flags.clientId === undefined) throw new InstallationError('--refresh-token needs --client-id to be used');
    const instanceUrl = checkInstanceUrl(flags.instanceUrl, { allowAnyHost: app.allowAnyHost });
    const target = targetFromFlags(flags);
    // The token is tried before anything is stored: a wrong one fails here, not in the first batch.
    await checkAccessToken(orgId, instanceUrl, flags.accessToken, app.allowAnyHost);
    const credentials = givenCredentials(flags, {
      orgId,
      instanceUrl,
      accessToken: flags.accessToken,
      loginUrl: flags.sandboxOrg === true ? SALESFORCE_SANDBOX_LOGIN_URL : SALESFORCE_PRODUCTION_LOGIN_URL,
    });
    await context.withRuntime(async ({ installations }) => {
      const installation = await installations.create({
        provider: SALESFORCE_PROVIDER,
        externalAccountId: orgId,
        environment: flags.env,
        target,
        crmCredentials: credentials,
      });
      const secret = await installations.webhookSecret(installation.id);
      context.tell(`connected org ${orgId} (${installation.environment}); deploy manifests/salesforce to create the fields and flows`);
      context.tell(`outbound messages go to: ${outboundUrl(context.publicUrl(), await installations.outboundSecret(installation.id))}`);
      context.tell(`signing secret for the JSON callout (shown once; the Apex class needs it): ${secret}`);
      context.print(installation.id);
    });
  });

  withTargetOptions(
    salesforce
      .command('install-link')
      .description('an expiring link (7 days) a Salesforce admin opens to connect an org with OAuth, for this target')
      .option('--sandbox-org', 'the org is a Salesforce sandbox (logs in at test.salesforce.com); else the admin may pick with org=sandbox'),
  ).action(async (flags: InstallLinkFlags) => {
    const publicUrl = context.publicUrl();
    if (publicUrl === null) throw new InstallationError('set PUBLIC_URL (the address Salesforce and admins reach this server at)');
    const target = targetFromFlags(flags);
    // Checked now rather than after the admin has been through Salesforce's consent screen.
    if (target.kind === 'remote') checkRemoteUrl(target.url);
    else await context.withRuntime((_bridge, opened) => requireAccount(opened.store, target.accountName));
    // Sealed with the data folder's key: only a server with the same key can open it.
    const link = createInstallLink(context.box(), target, flags.env, flags.sandboxOrg === true ? { org: 'sandbox' } : {});
    if (app.clientId === null) context.tell('note: SALESFORCE_CLIENT_ID is not set here; the server that opens this link needs it');
    context.print(installLinkUrl(publicUrl, link));
  });

  withTargetOptions(
    salesforce
      .command('connect-jwt')
      .description(
        'connect one org server to server with the JWT bearer flow (SALESFORCE_JWT_CONSUMER_KEY, _USERNAME, _PRIVATE_KEY_FILE); prints the installation id',
      )
      .requiredOption('--instance-url <url>', "the org's API host the token must be for, https://<my-domain>.my.salesforce.com")
      .option('--login-url <url>', 'where the token is asked for (default SALESFORCE_LOGIN_URL; a sandbox org: https://test.salesforce.com)'),
  ).action(async (flags: ConnectJwtFlags) => {
    const settings = app.jwt;
    if (settings === null) throw new InstallationError('set SALESFORCE_JWT_CONSUMER_KEY, SALESFORCE_JWT_USERNAME and SALESFORCE_JWT_PRIVATE_KEY_FILE');
    const key = readJwtKey(settings);
    const target = targetFromFlags(flags);
    await context.withRuntime(async ({ installations, pipelineStore }) => {
      const result = await connectJwt({
        installations,
        findExisting: (orgId) => pipelineStore.findInstallationByAccount(SALESFORCE_PROVIDER, orgId),
        key,
        loginUrl: flags.loginUrl ?? app.loginUrl,
        instanceUrl: flags.instanceUrl,
        target,
        environment: flags.env,
        allowAnyHost: app.allowAnyHost,
      });
      const { installation } = result;
      context.tell(
        `${result.created ? 'connected' : 'renewed the credentials of'} org ${installation.externalAccountId} (${installation.environment}) with the JWT bearer flow as ${key.username}; deploy manifests/salesforce to create the fields and flows`,
      );
      if (result.newWebhookSecret !== null)
        context.tell(`signing secret for the JSON callout (shown once; the Apex class needs it): ${result.newWebhookSecret}`);
      context.tell(`outbound messages go to: ${outboundUrl(context.publicUrl(), await installations.outboundSecret(installation.id))}`);
      context.print(installation.id);
    });
  });

  salesforce
    .command('reconnect <installation>')
    .description(
      "move an installation to its org's new org id (a refreshed sandbox), keeping its settings, secrets, log and state: with --access-token now, else prints an OAuth link (7 days) for the org's admin",
    )
    .option('--access-token <token>', 'an access token (session id) of the integration user in the new org')
    .option('--org-id <id>', 'the new organization id (default: the one its messages come from now, as `installations show` says)')
    .option('--instance-url <url>', "the org's API host (default: the installation's; a sandbox keeps its My Domain across a refresh)")
    .option('--refresh-token <token>', 'a refresh token, with --client-id, so the access can be renewed')
    .option('--client-id <id>', "the External Client App's consumer key (needed to refresh)")
    .option('--client-secret <secret>', "the External Client App's consumer secret, if it requires one to refresh")
    .option('--sandbox-org', 'the org is a Salesforce sandbox (tokens from test.salesforce.com; default: as the installation was)')
    .option('--any-org', 'move it to this org even when it is not the one its messages came from (or none came)')
    .action(async (id: string, flags: ReconnectFlags) => {
      if (flags.refreshToken !== undefined && flags.clientId === undefined) throw new InstallationError('--refresh-token needs --client-id to be used');
      const given = flags.orgId === undefined ? null : toSalesforceId18(flags.orgId);
      if (flags.orgId !== undefined && (given === null || !given.startsWith('00D'))) {
        throw new InstallationError('--org-id is an organization id: 00D followed by 12 or 15 characters');
      }
      await context.withRuntime(async ({ installations }) => {
        const installation = await installations.require(id);
        if (installation.provider !== SALESFORCE_PROVIDER) throw new InstallationError(`${id} is not a Salesforce installation`);
        const marked = installation.orgChange?.externalAccountId ?? null;
        if (given !== null && marked !== null && given !== marked && flags.anyOrg !== true) {
          throw new InstallationError(
            `installation ${id} gets messages from org ${marked}, not ${given}; give --any-org to move it to ${given} all the same (nothing was changed)`,
          );
        }
        if (flags.accessToken === undefined) {
          // No token: the org's admin authorises the new org through OAuth, and the callback moves the installation.
          const publicUrl = context.publicUrl();
          if (publicUrl === null)
            throw new InstallationError('set PUBLIC_URL (the address Salesforce and admins reach this server at), or give --access-token');
          const link = await reconnectLinkFor({ box: context.box(), installations, installation, publicUrl, orgId: given, anyOrg: flags.anyOrg === true });
          if (app.clientId === null) context.tell('note: SALESFORCE_CLIENT_ID is not set here; the server that opens this link needs it');
          context.tell(
            `the org's admin opens this link and authorises ${link.orgId === null ? 'the org' : `org ${link.orgId}`}; installation ${id} then moves to it`,
          );
          context.print(link.url);
          return;
        }
        const current = SalesforceCredentialsSchema.safeParse((await installations.secrets(id)).crm);
        const sandbox = flags.sandboxOrg === true || (current.success && current.data.loginUrl === SALESFORCE_SANDBOX_LOGIN_URL);
        const orgId = given ?? marked;
        if (orgId === null) throw new InstallationError(`installation ${id} has seen no message from another org: give --org-id (and --any-org)`);
        const rawInstanceUrl = flags.instanceUrl ?? (current.success ? current.data.instanceUrl : undefined);
        if (rawInstanceUrl === undefined) throw new InstallationError('give --instance-url: the installation holds none');
        const instanceUrl = checkInstanceUrl(rawInstanceUrl, { allowAnyHost: app.allowAnyHost });
        // The token is tried before anything is changed: a wrong one fails here, and the installation stays as it was.
        await checkAccessToken(orgId, instanceUrl, flags.accessToken, app.allowAnyHost);
        const credentials = givenCredentials(flags, {
          orgId,
          instanceUrl,
          accessToken: flags.accessToken,
          loginUrl: sandbox ? SALESFORCE_SANDBOX_LOGIN_URL : current.success ? current.data.loginUrl : SALESFORCE_PRODUCTION_LOGIN_URL,
        });
        const result = await reconnectOrg({ installations, installationId: id, credentials, anyOrg: flags.anyOrg === true });
        context.tell(
          `moved installation ${id} from org ${result.movedFrom ?? '?'} to org ${result.installation.externalAccountId}; its settings, secrets and outbound-message URL are unchanged`,
        );
        // A refresh copies production's metadata: the sandbox's outbound messages may now carry production's URL.
        context.tell(`the org's outbound messages must go to: ${outboundUrl(context.publicUrl(), await installations.outboundSecret(id))}`);
        context.print(result.installation.id);
      });
    });

  salesforce
    .command('person-accounts <installation>')
    .description(
      'whether the org has Person Accounts (one describe call) and whether the installation enriches them; --enable adds Account to its objects, --disable takes it out',
    )
    .option('--enable', 'enrich person Accounts (refused when the org has none)')
    .option('--disable', 'stop enriching person Accounts')
    .action(async (id: string, flags: { enable?: boolean; disable?: boolean }) => {
      if (flags.enable === true && flags.disable === true) throw new InstallationError('give --enable or --disable, not both');
      await context.withRuntime(async ({ installations }) => {
        const installation = await installations.require(id);
        if (installation.provider !== SALESFORCE_PROVIDER) throw new InstallationError(`${id} is not a Salesforce installation`);
        const has = await salesforceApiFor(installation, installations, { allowAnyHost: app.allowAnyHost }).hasPersonAccounts();
        const named = installation.settings.objects.length > 0 ? installation.settings.objects : [...SALESFORCE_OBJECTS];
        let objects = named;
        if (flags.enable === true) {
          if (!has) throw new InstallationError(`org ${installation.externalAccountId} has no Person Accounts (its Account has no IsPersonAccount)`);
          if (!named.includes(PERSON_ACCOUNT)) objects = [...named, PERSON_ACCOUNT];
        } else if (flags.disable === true) {
          objects = named.filter((object) => object !== PERSON_ACCOUNT);
        }
        if (objects !== named) await installations.updateSettings(id, { objects });
        context.print(`person accounts in the org: ${has ? 'yes' : 'no'}`);
        context.print(`enriched by ${id}: ${objects.includes(PERSON_ACCOUNT) ? 'yes (Account among its objects)' : 'no'}`);
      });
    });

  salesforce
    .command('households <installation>')
    .description(
      "where the installation writes household fields for a Contact of an NPSP household Account: on the Contact (record, the default), on the household Account (household) or both; checks the org (one describe call) for NPSP and for the households/ project's fields before either of the last two",
    )
    .option('--on <placement>', `record, household or both`)
    .action(async (id: string, flags: { on?: string }) => {
      const placement = flags.on === undefined ? undefined : HouseholdPlacementSchema.safeParse(flags.on);
      if (placement !== undefined && !placement.success) throw new InstallationError(`--on takes ${HOUSEHOLD_PLACEMENTS.join(', ')}, not ${flags.on ?? ''}`);
      await context.withRuntime(async ({ installations }) => {
        const installation = await installations.require(id);
        if (installation.provider !== SALESFORCE_PROVIDER) throw new InstallationError(`${id} is not a Salesforce installation`);
        const readiness = await householdReadiness(salesforceApiFor(installation, installations, { allowAnyHost: app.allowAnyHost }));
        const wanted = placement?.data;
        if (wanted !== undefined && wanted !== 'record' && readiness.missing !== null)
          throw new InstallationError(`org ${installation.externalAccountId}: ${readiness.missing}`);
        if (wanted !== undefined && wanted !== installation.settings.householdFieldsOn) await installations.updateSettings(id, { householdFieldsOn: wanted });
        context.print(`NPSP household Accounts in the org: ${readiness.npsp ? 'yes' : 'no'}`);
        context.print(`household fields on Account deployed: ${readiness.fields ? 'yes' : 'no (deploy manifests/salesforce/households)'}`);
        context.print(`household fields of ${id}: ${HOUSEHOLD_PLACEMENT_TEXT[wanted ?? installation.settings.householdFieldsOn]}`);
      });
    });

  salesforce
    .command('outbound-url <installation>')
    .description(
      "the URL this org's outbound messages must be sent to (the endpointUrl of manifests/salesforce's workflows), with the installation's secret in it",
    )
    .action(async (id: string) => {
      await context.withRuntime(async ({ installations }) => {
        const installation = await installations.require(id);
        if (installation.provider !== SALESFORCE_PROVIDER) throw new InstallationError(`${id} is not a Salesforce installation`);
        context.print(outboundUrl(context.publicUrl(), await installations.outboundSecret(id)));
      });
    });

  salesforce
    .command('record-secret <installation>')
    .description(
      "the secret the record component sends (the admin enters it as the OrgSecret parameter of the External Credential Enrichbridge_Record's principal); --rotate makes a new one, and the old one stops working at once",
    )
    .option('--rotate', 'replace the secret')
    .action(async (id: string, flags: { rotate?: boolean }) => {
      await context.withRuntime(async ({ installations }) => {
        const installation = await installations.require(id);
        if (installation.provider !== SALESFORCE_PROVIDER) throw new InstallationError(`${id} is not a Salesforce installation`);
        const secret = flags.rotate === true ? await installations.rotateRecordSecret(id) : await installations.recordSecret(id);
        context.print(recordCredential(id, secret));
      });
    });

  salesforce
    .command('disconnect <installation>')
    .description('forget an org: its credentials, state and token (the fields stay in Salesforce)')
    .action(async (id: string) => {
      await context.withRuntime(async ({ installations }) => {
        const installation = await installations.require(id);
        if (installation.provider !== SALESFORCE_PROVIDER) throw new InstallationError(`${id} is not a Salesforce installation`);
        await installations.remove(id);
        context.tell(`disconnected ${id}`);
      });
    });

  return salesforce;
}
