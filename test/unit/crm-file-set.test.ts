// STYLE.md: one folder per CRM, the same files in each, each file with the same role; what is one
// CRM's own sits beside them under a name that says so.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
// Beside STYLE.md's set: paths.ts (the paths the CRM calls, which its manifests name), routes.ts (the
// routes table, a handler per path), cli.ts (the operator's commands for that CRM), console-signin.ts
// (who signed in to the console with the CRM, and whether they administer the account), ids.ts (what the
// CRM's ids look like, read with one schema by webhooks and backfills alike) and version.ts (the one API
// version the CRM is spoken to in).
const SHARED = [
  'api.ts',
  'auth.ts',
  'backfill.ts',
  'cli.ts',
  'connector.ts',
  'console-signin.ts',
  'fields.ts',
  'ids.ts',
  'index.ts',
  'install.ts',
  'intake.ts',
  'mapping.ts',
  'paths.ts',
  'routes.ts',
  'version.ts',
];

const filesOf = (crm: string): string[] =>
  readdirSync(path.join(ROOT, 'connectors', crm))
    .filter((name) => name.endsWith('.ts'))
    .sort();

describe('the CRM folders', () => {
  it('hold the same shared file set, HubSpot and Salesforce alike', () => {
    const hubspot = filesOf('hubspot');
    const salesforce = filesOf('salesforce');
    expect(hubspot.filter((name) => salesforce.includes(name))).toEqual(SHARED);
    for (const name of SHARED) {
      expect(hubspot, `connectors/hubspot/${name}`).toContain(name);
      expect(salesforce, `connectors/salesforce/${name}`).toContain(name);
    }
  });
});
