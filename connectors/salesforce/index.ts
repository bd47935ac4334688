// The Salesforce module: what the composition root registers (bridge/crm-module.ts).
import type { CrmModule } from '../../bridge/crm-module.ts';
import { salesforceBackfill } from './backfill.ts';
import { salesforceCommands } from './cli.ts';
import { salesforceConsoleSignIn } from './console-signin.ts';
import { SALESFORCE_PROVIDER, salesforceConnectorFactory } from './connector.ts';
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
    objects: SALESFORCE_OBJECTS,
    connector: salesforceConnectorFactory({ allowAnyHost: app.allowAnyHost }),
    routes: (context) => salesforceRoutes(app, outbound, context),
    commands: (context) => salesforceCommands(app, context),
    backfill: salesforceBackfill({ allowAnyHost: app.allowAnyHost }),
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
