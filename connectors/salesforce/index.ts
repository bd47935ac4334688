// The Salesforce module: what the composition root registers (bridge/crm-module.ts).
import type { CrmModule } from '../../bridge/crm-module.ts';
import { salesforceBackfill } from './backfill.ts';
import { salesforceCommands } from './cli.ts';
import { salesforceConsoleSignIn } from './console-signin.ts';
import { SALESFORCE_ENRICHED_OBJECTS, SALESFORCE_PROVIDER, salesforceApiFor, salesforceConnectorFactory } from './connector.ts';
import { CrmError } from '../../bridge/connector.ts';
import { PRIVACY_SWEEP_EVERY_MS, SALESFORCE_PRIVACY_JOB, individualAccess, isInvalidField, privacySweepJob, sweepForgetRequests } from './privacy.ts';
import { SALESFORCE_OBJECTS, salesforceFieldFor } from './fields.ts';
import { SalesforceCredentialsSchema } from './auth.ts';
import { NO_SALESFORCE_APP, type SalesforceAppSettings } from './install.ts';
import { DEFAULT_OUTBOUND_SETTINGS, type OutboundSettings, salesforceRoutes } from './routes.ts';

export type { SalesforceAppSettings } from './install.ts';
export type { OutboundSettings } from './routes.ts';
export { SALESFORCE_STATE_COOKIE } from './routes.ts';

export interface SalesforceModuleSettings {
  /** The External Client App (none: orgs connect with a token from the command line). */
  readonly app?: Partial<SalesforceAppSettings>;
  readonly outbound?: Partial<OutboundSettings>;
}

export function salesforceModule(settings: SalesforceModuleSettings = {}): CrmModule {
  const app: SalesforceAppSettings = { ...NO_SALESFORCE_APP, ...settings.app };
  const outbound: OutboundSettings = { ...DEFAULT_OUTBOUND_SETTINGS, ...settings.outbound };
  return {
    provider: SALESFORCE_PROVIDER,
    name: 'Salesforce',
    // Person Accounts (Account) only where an installation names them: an org without them has no IsPersonAccount.
    objects: SALESFORCE_ENRICHED_OBJECTS,
    defaultObjects: SALESFORCE_OBJECTS,
    connector: salesforceConnectorFactory({ allowAnyHost: app.allowAnyHost }),
    routes: (context) => salesforceRoutes(app, outbound, context),
    commands: (context) => salesforceCommands(app, context),
    backfill: salesforceBackfill({ allowAnyHost: app.allowAnyHost }),
    jobs: {
      // The records whose person the org flagged "Forget this Individual" since the last sweep, forgotten.
      [SALESFORCE_PRIVACY_JOB]: async (installation, _jobs, { installations, deliveries, forget, log }) => {
        const readableBefore = individualAccess.readable(installation.id);
        try {
          const api = salesforceApiFor(installation, installations, { allowAnyHost: app.allowAnyHost, withinApiShare: false });
          const sweep = await sweepForgetRequests(installation, { api, deliveries, forget });
          if (sweep.unavailable && readableBefore) {
            log(
              { installation: installation.id },
              'salesforce privacy flags unavailable: the org has no Data Protection and Privacy, or the integration user cannot read Individual',
            );
          } else if (sweep.read > 0) {
            log(
              { installation: installation.id, forgotten: sweep.read, blanked: sweep.blanked, notBlanked: sweep.notBlanked },
              'salesforce privacy requests honoured',
            );
          }
        } catch (error) {
          // Credentials refused: the enrichment jobs say so (and the console); the sweep waits for the next hour.
          if (!(error instanceof CrmError && error.kind === 'auth') && !isInvalidField(error)) throw error;
          log({ installation: installation.id, reason: error instanceof Error ? error.message : String(error) }, 'salesforce privacy sweep not run');
        }
      },
    },
    recurring: [{ everyMs: PRIVACY_SWEEP_EVERY_MS, job: (installation) => privacySweepJob(installation.id) }],
    propertyFor: salesforceFieldFor,
    // An org's admin (Modify All Data or Customize Application) signs in to the console through the same app.
    consoleSignIn: salesforceConsoleSignIn(app),
    // The org's own host, from its credentials; a record id alone opens the record there (Classic and Lightning).
    recordUrl: (_installation, crm, _object, recordId) => {
      const parsed = SalesforceCredentialsSchema.safeParse(crm);
      return parsed.success && /^[a-zA-Z0-9]{15,18}$/.test(recordId) ? `${parsed.data.instanceUrl.replace(/\/+$/, '')}/${recordId}` : null;
    },
  };
}
