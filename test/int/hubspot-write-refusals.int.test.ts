// What a contact write HubSpot refuses for one record does to that record and to the rest of its batch,
// on the real runtime (SQLite store, job queue, pipeline, sandbox enrichment) against the fake HubSpot:
// a portal's validation rule (per input of a batch, or the whole request naming no record) and a
// property the portal marked sensitive each end only the records concerned, with an outcome and a
// sentence for the admin, and are never retried; the other records of the batch are written.
import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccount } from '../../core/accounts/admin.ts';
import type { HubSpotCredentials } from '../../connectors/hubspot/auth.ts';
import { CONTACT } from '../../connectors/hubspot/connector.ts';
import { hubspotPropertyFor } from '../../connectors/hubspot/fields.ts';
import { connectPortal } from '../../connectors/hubspot/install.ts';
import { enrichJob } from '../../bridge/enrich-job.ts';
import type { Installation } from '../../bridge/model.ts';
import { loadConfig } from '../../server/config.ts';
import { createLogger } from '../../server/logger.ts';
import { type Runtime, openRuntime, startWorker } from '../../server/runtime.ts';
import { type FakeContact, type FakeHubSpot, startFakeHubSpot, staticCredentials } from '../support/fake-hubspot.ts';
import { tempDir } from '../support/harness.ts';
import { until } from '../support/processes.ts';
import { persona } from '../support/requests.ts';
import { HUBSPOT_PATHS } from '../../connectors/hubspot/version.ts';

const CLIENT_SECRET = '0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e';
const APP_ID = '1160452';
const logger = createLogger('silent');
const PEOPLE = [persona('Amanda Taylor'), persona('Daniel Garcia'), persona('Amanda Taylor'), persona('Daniel Garcia')];

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Rig {
  readonly runtime: Runtime;
  readonly fake: FakeHubSpot;
  readonly installation: Installation;
  readonly contacts: readonly FakeContact[];
}

/** A portal connected with a static token (properties provisioned), four persona contacts in it. */
async function startRig(): Promise<Rig> {
  const dataDir = tempDir('enrichbridge-hubspot-refusals-');
  const runtime = await openRuntime(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', WORKER_CONCURRENCY: '0' }), logger);
  const fake = await startFakeHubSpot({ appId: APP_ID, clientSecret: CLIENT_SECRET, webhookUrl: null });
  cleanups.push(async () => {
    await fake.close();
    await runtime.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  await createAccount(runtime.opened.store, 'refusals', { careerIntelligence: true });
  const credentials: HubSpotCredentials = staticCredentials(fake, CLIENT_SECRET, APP_ID);
  const { installation } = await connectPortal({
    installations: runtime.bridge.installations,
    portalId: fake.portalId,
    credentials,
    target: { kind: 'local', accountName: 'refusals' },
    environment: 'sandbox',
  });
  const contacts: FakeContact[] = [];
  for (const p of PEOPLE) contacts.push(await fake.createContact({ firstname: p.first_name, lastname: p.last_name, email: p.email }, { notify: false }));
  return { runtime, fake, installation, contacts };
}

/** Queues every contact, lets one worker settle the batch, and returns each contact's log outcomes and details. */
async function enrichAll(rig: Rig): Promise<Map<string, { outcome: string; detail: string | null }[]>> {
  for (const c of rig.contacts) await rig.runtime.opened.queue.enqueue(enrichJob(rig.installation.id, { object: CONTACT, recordId: c.id, trigger: 'create' }));
  const worker = startWorker(rig.runtime, logger, 1);
  worker.wake();
  const db = rig.runtime.opened.db;
  await until(
    'every job settled',
    async () => {
      const open = await db
        .selectFrom('jobs')
        .select('id')
        .where('state', 'in', ['queued', 'running'])
        .where('run_at', '<=', new Date().toISOString())
        .execute();
      return open.length === 0 ? true : undefined;
    },
    { timeoutMs: 20_000 },
  );
  await worker.stop();
  const entries = await rig.runtime.bridge.pipelineStore.searchLog({ installationId: rig.installation.id, limit: 100 });
  const byRecord = new Map<string, { outcome: string; detail: string | null }[]>();
  for (const entry of [...entries].reverse())
    byRecord.set(entry.recordId, [...(byRecord.get(entry.recordId) ?? []), { outcome: entry.outcome, detail: entry.detail }]);
  return byRecord;
}

/** Jobs that will run again (a retry scheduled). */
async function retriesOf(rig: Rig): Promise<number> {
  const rows = await rig.runtime.opened.db.selectFrom('jobs').select('id').where('state', '=', 'queued').execute();
  return rows.length;
}

const NET_WORTH = hubspotPropertyFor('household.net_worth') ?? '';

describe('a contact write HubSpot refuses for one record', () => {
  it('a validation rule refusing one input of a batch ends that record as failed:crm_validation with the property named, writes the others, and schedules no retry', async () => {
    const rig = await startRig();
    const [refused, ...others] = rig.contacts;
    if (refused === undefined) throw new Error('no contacts');
    // The portal requires a phone number on every contact it saves; only the first has none after we set ours.
    for (const other of others) await rig.fake.updateContact(other.id, { phone: '4045550100' }, { notify: false });
    rig.fake.addValidationRule({ property: 'phone', answer: 'per-input' });

    const outcomes = await enrichAll(rig);
    expect(outcomes.get(refused.id)?.map((e) => e.outcome)).toEqual(['failed:crm_validation']);
    expect(outcomes.get(refused.id)?.[0]?.detail).toMatch(
      /^HubSpot's validation rules for this portal refused "phone" \(REQUIRED_PROPERTY_MISSING\): .*not retried\.$/,
    );
    for (const other of others) {
      expect(
        outcomes.get(other.id)?.map((e) => e.outcome),
        other.id,
      ).toEqual(['enriched']);
      expect(rig.fake.contacts.get(other.id)?.properties[NET_WORTH]).not.toBeUndefined();
    }
    expect(rig.fake.contacts.get(refused.id)?.properties[NET_WORTH]).toBeUndefined();
    expect(await retriesOf(rig)).toBe(0);
    // One batch update carried all four.
    expect(rig.fake.requests.filter((r) => r.path === HUBSPOT_PATHS.contactsBatchUpdate).map((r) => r.status)).toEqual([207]);
  });

  it('a validation rule refusing the whole request without naming the record is narrowed down: the others are written, the refused one ends failed:crm_validation, no retry', async () => {
    const rig = await startRig();
    const refused = rig.contacts[2];
    if (refused === undefined) throw new Error('no contacts');
    for (const c of rig.contacts) if (c.id !== refused.id) await rig.fake.updateContact(c.id, { phone: '4045550100' }, { notify: false });
    rig.fake.addValidationRule({ property: 'phone', answer: 'request' });

    const outcomes = await enrichAll(rig);
    expect(outcomes.get(refused.id)?.map((e) => e.outcome)).toEqual(['failed:crm_validation']);
    expect(outcomes.get(refused.id)?.[0]?.detail).toContain('"phone"');
    for (const c of rig.contacts.filter((c) => c.id !== refused.id))
      expect(
        outcomes.get(c.id)?.map((e) => e.outcome),
        c.id,
      ).toEqual(['enriched']);
    expect(await retriesOf(rig)).toBe(0);
    // All four refused; the first half written, the second refused; its halves: the third refused alone, the fourth written.
    expect(rig.fake.requests.filter((r) => r.path === HUBSPOT_PATHS.contactsBatchUpdate).map((r) => r.status)).toEqual([400, 200, 400, 400, 200]);
  });

  it('a property the portal marked sensitive is a refusal of the records that write it (failed:crm_sensitive), not a batch failure or an auth error, and is not retried', async () => {
    const rig = await startRig();
    rig.fake.markSensitive(NET_WORTH);

    const outcomes = await enrichAll(rig);
    for (const c of rig.contacts) {
      const entries = outcomes.get(c.id) ?? [];
      expect(
        entries.map((e) => e.outcome),
        c.id,
      ).toEqual(['failed:crm_sensitive']);
      expect(entries[0]?.detail).toContain(`"${NET_WORTH}"`);
      expect(entries[0]?.detail).toContain('sensitive data');
    }
    expect(await retriesOf(rig)).toBe(0);
    const installation = await rig.runtime.bridge.installations.require(rig.installation.id);
    expect(installation.status).toBe('active');
  });
});
