// A person's deletion request end to end, on SQLite and PostgreSQL: the real server with a HubSpot portal
// and a Salesforce org connected (both fakes on loopback), the same person enriched in each, then one
// `enrichbridge erase --email` erases everything we held on them in both installations, blanks the
// properties we wrote in both CRMs, and suppresses them: nothing in the database holds their e-mail
// (SQLite: every byte of the data folder, WAL included; PostgreSQL: every row of every table), and a
// contact created again with that e-mail is skipped as suppressed. The account is made in-process.
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { type TestContext, describe, expect, it } from 'vitest';
import { createAccount } from '../../core/accounts/admin.ts';
import { isPostgresUrl } from '../../core/storage/postgres.ts';
import { TEST_DATABASES } from '../support/databases.ts';
import { startFakeHubSpot } from '../support/fake-hubspot.ts';
import { personaContact, startFakeSalesforce } from '../support/fake-salesforce.ts';
import { withFolderRuntime } from '../support/folder-runtime.ts';
import { tempDir } from '../support/harness.ts';
import { cli, freePort, startProcess, until } from '../support/processes.ts';
import { persona } from '../support/requests.ts';

const APP_ID = '1234567';
const PORTAL_ID = '62515';
const amanda = persona('Amanda Taylor');

/** Where a value shows up in the database: file names (SQLite, WAL included) or table names (PostgreSQL). */
async function holding(location: string, dataDir: string, value: string): Promise<string[]> {
  const needle = value.toLowerCase();
  if (!isPostgresUrl(location)) {
    return readdirSync(dataDir)
      .filter((name) => name.startsWith('enrichbridge.db'))
      .filter((name) => readFileSync(path.join(dataDir, name)).toString('latin1').toLowerCase().includes(needle));
  }
  const client = new pg.Client({ connectionString: location });
  await client.connect();
  try {
    const tables = await client.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
    );
    const holding: string[] = [];
    for (const { table_name: table } of tables.rows) {
      const hit = await client.query(`SELECT 1 FROM "${table}" t WHERE lower(row_to_json(t)::text) LIKE $1 LIMIT 1`, [`%${needle}%`]);
      if (hit.rowCount !== null && hit.rowCount > 0) holding.push(table);
    }
    return holding;
  } finally {
    await client.end();
  }
}

describe.each(TEST_DATABASES)('erase on $name', (database) => {
  it(
    'one command erases the person from a HubSpot portal and a Salesforce org, blanks what we wrote in both, and a re-created contact is skipped',
    { timeout: 90_000 },
    async ({ onTestFinished }: TestContext) => {
      const port = await freePort();
      const publicUrl = `http://127.0.0.1:${port}`;
      const clientSecret = randomUUID();
      const hubspot = await startFakeHubSpot({ webhookUrl: `${publicUrl}/webhooks/hubspot`, appId: APP_ID, portalId: PORTAL_ID, clientSecret });
      const salesforce = await startFakeSalesforce();
      onTestFinished(async () => {
        await hubspot.close();
        await salesforce.close();
      });
      const dataDir = tempDir('enrichbridge-erase-e2e-');
      const location = await database.fresh();
      const env: Record<string, string> = {
        DATA_DIR: dataDir,
        ENRICHBRIDGE_SECRET_KEY: randomBytes(32).toString('hex'),
        SALESFORCE_ALLOW_ANY_HOST: 'true',
        LOG_LEVEL: 'info',
        ...(isPostgresUrl(location) ? { DATABASE_URL: location } : {}),
      };
      await withFolderRuntime(env, ({ opened }) => createAccount(opened.store, 'e2e', { careerIntelligence: true }));
      const [hubspotConnect, salesforceConnect] = await Promise.all([
        cli(
          [
            ...['hubspot', 'connect', '--portal-id', PORTAL_ID, '--access-token', hubspot.tokens.staticToken, '--client-secret', clientSecret],
            ...['--app-id', APP_ID, '--account', 'e2e', '--env', 'sandbox', '--api-base-url', hubspot.url],
          ],
          env,
        ),
        cli(
          [
            'salesforce',
            'connect',
            '--org-id',
            salesforce.orgId,
            '--instance-url',
            salesforce.url,
            '--access-token',
            salesforce.accessToken,
            '--account',
            'e2e',
            '--env',
            'sandbox',
          ],
          env,
        ),
      ]);
      const outbound =
        /outbound messages go to: https:\/\/YOUR_PUBLIC_HOST(\/webhooks\/salesforce\/outbound-message\/\S+)/.exec(salesforceConnect.stderr)?.[1] ?? '';
      expect(outbound).not.toBe('');
      salesforce.setOutboundUrl(`${publicUrl}${outbound}`);
      const server = startProcess(process.execPath, ['bin/server.js'], {
        ...env,
        PORT: String(port),
        PUBLIC_URL: publicUrl,
        HUBSPOT_CLIENT_ID: hubspot.clientId,
        HUBSPOT_CLIENT_SECRET: clientSecret,
        HUBSPOT_APP_ID: APP_ID,
        HUBSPOT_API_BASE_URL: hubspot.url,
      });
      onTestFinished(async () => {
        await server.stop();
      });
      await server.waitFor(/"msg":"listening"/);
      const wait = <T>(what: string, probe: () => T | undefined | Promise<T | undefined>) =>
        until(what, probe, { timeoutMs: 30_000, context: () => server.output().slice(-3_000) });

      // The same person in both CRMs, enriched in both.
      const contact = await hubspot.createContact({ firstname: amanda.first_name, lastname: amanda.last_name, email: amanda.email });
      const sfContact = await salesforce.createContact(personaContact(amanda));
      await wait('both enriched', () =>
        hubspot.contacts.get(contact.id)?.properties.wf_enrichment_status === 'enriched' &&
        salesforce.record(sfContact.id).fields.WF_Enrichment_Status__c === 'enriched'
          ? true
          : undefined,
      );
      // Their outcomes saved on our side (written before the batch's outcomes are saved).
      await wait('both outcomes saved', async () => {
        const held = await withFolderRuntime(env, ({ bridge }) => Promise.all([bridge.pipelineStore.listLog({ limit: 10 })]));
        return held[0].filter((entry) => entry.outcome === 'enriched').length >= 2 ? true : undefined;
      });

      // What we hold on her before: the household id we wrote (in our state and our log), stored in clear.
      const windfallId = amanda.household?.windfall_id ?? '';
      expect(windfallId).not.toBe('');
      expect(await holding(location, dataDir, windfallId)).not.toEqual([]);

      // The person's access request first: which installations hold what we enriched for her.
      const before = JSON.parse((await cli(['subject-report', '--email', amanda.email, '--json'], env)).stdout) as {
        suppressed: boolean;
        snapshot: string | null;
        installations: { installation: string; object: string; propertiesWritten: string[] }[];
      };
      expect(before.suppressed).toBe(false);
      expect(before.snapshot).toBeNull();
      expect(before.installations.map((one) => one.installation).sort()).toEqual([`HubSpot portal ${PORTAL_ID}`, `Salesforce org ${salesforce.orgId}`]);
      expect(before.installations.every((one) => one.propertiesWritten.length > 0)).toBe(true);

      const erased = await cli(['erase', '--email', amanda.email, '--by', 'privacy-desk'], env);
      const lines = erased.stdout.trim().split('\n');
      expect(lines).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/^HubSpot portal 62515 \(\S+\): 1 record erased; properties blanked on 1 record$/),
          expect.stringMatching(/^Salesforce org \S+ \(\S+\): 1 record erased; properties blanked on 1 record$/),
          expect.stringMatching(/^suppressed: \d+ new entr(y|ies); 0 people in the active snapshot$/),
        ]),
      );
      expect(erased.stdout).not.toContain(amanda.email);

      // Blanked in both CRMs: HubSpot clears with the empty string, Salesforce with null (a checkbox: false).
      const hubspotProperties = hubspot.contacts.get(contact.id)?.properties ?? {};
      expect(hubspotProperties.wf_hh_net_worth ?? '').toBe('');
      expect(hubspotProperties.wf_enrichment_status ?? '').toBe('');
      expect(hubspotProperties.email).toBe(amanda.email);
      const sfFields = salesforce.record(sfContact.id).fields;
      expect(sfFields.WF_HH_Net_Worth__c ?? null).toBeNull();
      expect(sfFields.WF_Enrichment_Status__c ?? null).toBeNull();

      // Nothing in the database holds what we held on her any more, nor her e-mail.
      expect(await holding(location, dataDir, windfallId)).toEqual([]);
      expect(await holding(location, dataDir, amanda.email)).toEqual([]);

      const after = JSON.parse((await cli(['subject-report', '--email', amanda.email, '--json'], env)).stdout) as {
        suppressed: boolean;
        installations: unknown[];
      };
      expect(after).toMatchObject({ suppressed: true, installations: [] });

      // Created again in HubSpot: skipped as suppressed, nothing written.
      const again = await hubspot.createContact({ firstname: amanda.first_name, lastname: amanda.last_name, email: amanda.email });
      await wait('the re-created contact skipped', async () => {
        const log = await withFolderRuntime(env, ({ bridge }) =>
          bridge.pipelineStore.searchLog({ installationId: hubspotConnect.stdout.trim(), recordId: again.id, limit: 5 }),
        );
        return log.some((entry) => entry.outcome === 'skipped:suppressed') ? true : undefined;
      });
      expect(hubspot.contacts.get(again.id)?.properties.wf_enrichment_status ?? '').toBe('');
    },
  );
});
