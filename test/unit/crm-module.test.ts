// The CRM module seam (bridge/crm-module.ts) and the modules this build ships.
import { describe, expect, it } from 'vitest';
import { hubspotModule } from '../../connectors/hubspot/index.ts';
import { salesforceModule } from '../../connectors/salesforce/index.ts';
import { type CrmModule, registryOf } from '../../bridge/crm-module.ts';
import { defaultConnectors } from '../../server/runtime.ts';

const quiet: CrmModule = { provider: 'memcrm', name: 'MemCRM', objects: ['contact'], connector: () => Promise.reject(new Error('unused')) };

describe('CRM modules', () => {
  it('the build ships HubSpot and Salesforce, with their own job kinds, registered from their modules only', () => {
    const registry = defaultConnectors();
    expect(registry.providers().sort()).toEqual(['hubspot', 'salesforce']);
    expect([...registry.jobHandlers.keys()].sort()).toEqual(['hubspot-callback', 'hubspot.events', 'hubspot.journal', 'salesforce.privacy']);
    expect(hubspotModule().objects).toEqual(['contact']);
    expect(salesforceModule().objects).toEqual(['Contact', 'Lead', 'Account']);
    expect(salesforceModule().defaultObjects).toEqual(['Contact', 'Lead']);
  });

  it('two modules may not share a provider or a job kind', () => {
    expect(() => registryOf([quiet, { ...quiet }])).toThrow('two CRM modules for provider "memcrm"');
    const handler = () => Promise.resolve();
    expect(() =>
      registryOf([
        { ...quiet, jobs: { k: handler } },
        { ...quiet, provider: 'other', jobs: { k: handler } },
      ]),
    ).toThrow('job kind "k" is claimed by two CRM modules');
  });
});
