// The Salesforce module: what the composition root registers (connectors/pipeline/crm-module.ts).
import type { CrmModule, CrmModuleOptions } from '../pipeline/crm-module.ts';
import { SALESFORCE_PROVIDER, salesforceConnectorFactory } from './connector.ts';
import { SALESFORCE_OBJECTS } from './fields.ts';

export function salesforceModule(options: CrmModuleOptions = {}): CrmModule {
  return {
    provider: SALESFORCE_PROVIDER,
    objects: SALESFORCE_OBJECTS,
    connector: salesforceConnectorFactory({ allowAnyHost: options.allowAnyHost ?? false }),
  };
}
