// The console's settings form (server/http/console/settings.tsx readSettingsForm): the share of a
// Salesforce org's daily API allowance is asked as a whole percentage and stored as a share.
import { describe, expect, it } from 'vitest';
import { InstallationSettingsSchema } from '../../bridge/model.ts';
import { salesforceModule } from '../../connectors/salesforce/index.ts';
import { readSettingsForm } from '../../server/http/console/settings.tsx';
import { FIELD_CATALOGUE } from '../../connectors/kit/field-catalogue.ts';

const current = InstallationSettingsSchema.parse({});
const form = (extra: Record<string, unknown>) => ({
  csrf: 'x',
  overwriteMode: 'tracked',
  reenrichAfterDays: '30',
  minConfidence: '0',
  objects: ['Contact', 'Lead'],
  fields: FIELD_CATALOGUE.map((field) => field.key),
  ...extra,
});

describe("the settings form's share of the org's API allowance", () => {
  it('reads a whole percentage into the share of the allowance', () => {
    expect(readSettingsForm(form({ crmApiShare: '30' }), salesforceModule(), current)).toMatchObject({ ok: true, settings: { crmApiShare: 0.3 } });
  });

  it('keeps the current share when the form has no such field (a CRM without it)', () => {
    expect(readSettingsForm(form({}), salesforceModule(), { ...current, crmApiShare: 0.7 })).toMatchObject({ ok: true, settings: { crmApiShare: 0.7 } });
  });

  it('refuses 0, over 100 and a fraction, next to the field', () => {
    for (const value of ['0', '101', '12.5', 'half']) {
      const read = readSettingsForm(form({ crmApiShare: value }), salesforceModule(), current);
      expect(read.ok, value).toBe(false);
      expect(read.ok ? {} : read.errors, value).toHaveProperty('crmApiShare');
    }
  });
});

describe("the settings form's objects", () => {
  it("stores the CRM's default objects (Contact, Lead) as none, and person Accounts when ticked", () => {
    expect(readSettingsForm(form({}), salesforceModule(), current)).toMatchObject({ ok: true, settings: { objects: [] } });
    expect(readSettingsForm(form({ objects: ['Contact', 'Lead', 'Account'] }), salesforceModule(), current)).toMatchObject({
      ok: true,
      settings: { objects: ['Contact', 'Lead', 'Account'] },
    });
  });
});
