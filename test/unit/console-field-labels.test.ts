// A log entry names each field it wrote by its label from the shared field catalogue ("Household: Net
// worth"), the CRM's property name beside it in <code> (`wf_hh_net_worth`, `WF_HH_Net_Worth__c`), for the
// values it kept and for an entry logged before it kept values (property names or field keys).
import { describe, expect, it } from 'vitest';
import { anInstallation } from '../support/console-fixtures.ts';
import type { LogEntry } from '../../bridge/model.ts';
import { hubspotPropertyFor } from '../../connectors/hubspot/fields.ts';
import { salesforceFieldFor } from '../../connectors/salesforce/fields.ts';
import { fieldNamer } from '../../server/http/console/field-labels.ts';
import { logEntryPage } from '../../server/http/console/log.tsx';

const chrome = { base: '/console', session: { who: 'operator', csrf: 'c' } };

const entry = (changes: LogEntry['changes'], fieldsWritten: readonly string[] = Object.keys(changes)): LogEntry => ({
  id: 'log_01JDZ0000000000000000000AA',
  installationId: 'inst_1',
  object: 'contact',
  recordId: '501',
  at: '2026-11-27T10:00:00.000Z',
  outcome: 'enriched',
  fieldsWritten,
  changes,
  quotaConsumed: 1,
  latencyMs: 12,
  detail: null,
});

describe('field labels in the log', () => {
  it('name a HubSpot property and a Salesforce field by their catalogue label, and a field key the same', () => {
    const hubspot = fieldNamer(hubspotPropertyFor);
    expect(hubspot('wf_hh_net_worth')).toEqual({ label: 'Household: Net worth', property: 'wf_hh_net_worth' });
    expect(hubspot('wf_career_job_title')).toEqual({ label: 'Career: Job title', property: 'wf_career_job_title' });
    expect(hubspot('wf_enrichment_status')).toEqual({ label: 'Enrichment status', property: 'wf_enrichment_status' });
    expect(hubspot('household.net_worth')).toEqual({ label: 'Household: Net worth', property: 'wf_hh_net_worth' });
    expect(hubspot('jobtitle')).toEqual({ label: null, property: 'jobtitle' });
    const salesforce = fieldNamer(salesforceFieldFor);
    expect(salesforce(salesforceFieldFor('household.net_worth') ?? '')).toMatchObject({ label: 'Household: Net worth' });
    expect(salesforce('WF_Enriched_At__c')).toEqual({ label: 'Enriched at', property: 'WF_Enriched_At__c' });
  });

  it("show each written value's field by its label, the property name beside it in <code>", () => {
    const html = logEntryPage(
      chrome,
      anInstallation(),
      entry({ wf_hh_net_worth: { value: 2400000, replaced: null }, jobtitle: { value: 'CFO', replaced: 'Chief' } }),
      null,
      hubspotPropertyFor,
    );
    expect(html).toContain('<th scope="col">Field</th>');
    expect(html).toContain('<td><span class="field-label">Household: Net worth</span> <code>wf_hh_net_worth</code></td><td>2400000</td>');
    // A property that is none of ours: its name alone.
    expect(html).toContain('<td><code>jobtitle</code></td><td>CFO</td>');
  });

  it('show the fields of an entry logged before values were kept by their labels too', () => {
    const html = logEntryPage(chrome, anInstallation(), entry({}, ['household.net_worth', 'wf_career_job_title']), null, hubspotPropertyFor);
    expect(html).toContain('<li><span class="field-label">Household: Net worth</span> <code>wf_hh_net_worth</code></li>');
    expect(html).toContain('<li><span class="field-label">Career: Job title</span> <code>wf_career_job_title</code></li>');
  });
});
