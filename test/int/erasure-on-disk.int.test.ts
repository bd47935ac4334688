// Erased means gone from the disk too, on the real SQLite store in a data folder: after a record's
// privacy deletion (the HubSpot intake's path) or an installation's disconnect, no file of the data
// folder (the database, its WAL and SHM, anything else) holds a byte of what was erased, while the store
// is open and after it is closed. A reader of another connection that holds the WAL back does not fail
// the erasure: it is reported without the record's values. PostgreSQL keeps its files out of our reach,
// so its side is documented (docs/operator-guide.md), not tested here.
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccount } from '../../core/accounts/admin.ts';
import Database from '../../core/storage/better-sqlite3.ts';
import type { Actor, Installation, LogEntry, RecordState, StoredAnswer } from '../../bridge/model.ts';
import { type PipelineStore, newLogId } from '../../bridge/store.ts';
import { KyselyPipelineStore } from '../../bridge/store/kysely-pipeline-store.ts';
import { CONTACT, HUBSPOT_PROVIDER } from '../../connectors/hubspot/connector.ts';
import { disconnectPortal } from '../../connectors/hubspot/install.ts';
import { HUBSPOT_EVENTS_JOB, applyHubSpotEvents } from '../../connectors/hubspot/intake.ts';
import { type PipelineHarness, startPipeline } from '../support/pipeline-harness.ts';

const harnesses: PipelineHarness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) {
    await h.close();
    rmSync(h.dataDir, { recursive: true, force: true });
  }
});

/** What is kept about one person, each value unique to the test run so that a byte scan finds only it. */
interface Person {
  readonly recordId: string;
  readonly email: string;
  readonly windfallId: string;
  readonly sealedAnswer: string;
}

function person(recordId: string): Person {
  const tag = randomBytes(6).toString('hex');
  return {
    recordId,
    email: `erasure-marker-${tag}@person.example`,
    windfallId: `wf-marker-${tag}`,
    // What a kept answer is at rest: sealed text, itself unique.
    sealedAnswer: `v1.sealed-marker-${tag}.${randomBytes(24).toString('base64url')}`,
  };
}

/** Every byte of the data folder, file by file (the database, -wal, -shm, anything else in it). */
function dataFolderFiles(dir: string): { name: string; bytes: Buffer }[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => {
      const file = path.join(entry.parentPath, entry.name);
      return { name: path.relative(dir, file), bytes: readFileSync(file) };
    });
}

/** How many times each of the person's values occurs in the data folder's bytes, per file that holds any. */
function occurrences(dir: string, who: Person): Record<string, number> {
  const found: Record<string, number> = {};
  for (const { name, bytes } of dataFolderFiles(dir)) {
    for (const value of [who.email, who.windfallId, who.sealedAnswer]) {
      const needle = Buffer.from(value, 'utf8');
      let count = 0;
      for (let at = bytes.indexOf(needle); at !== -1; at = bytes.indexOf(needle, at + 1)) count += 1;
      if (count > 0) found[`${name}: ${value}`] = count;
    }
  }
  return found;
}

const total = (found: Record<string, number>): number => Object.values(found).reduce((sum, n) => sum + n, 0);

async function start(options: { busyTimeoutMs?: number } = {}): Promise<PipelineHarness> {
  const h = await startPipeline(options);
  harnesses.push(h);
  return h;
}

let portals = 0;
/** A HubSpot portal installed against a local account of its own. */
async function hubspotInstallation(h: PipelineHarness): Promise<Installation> {
  portals += 1;
  const name = `erasure-acct-${portals}`;
  await createAccount(h.opened.store, name, { careerIntelligence: true, rateLimit: 1000 });
  return h.bridge.installations.create({
    provider: HUBSPOT_PROVIDER,
    externalAccountId: String(62_000 + portals),
    environment: 'production',
    target: { kind: 'local', accountName: name },
    settings: {},
  });
}

/**
 * Everything the bridge keeps about a person, as the pipeline and the record actions save it: the record
 * state with the values written, log entries with what was written and replaced, a CRM user's Exclude
 * (with their e-mail, which is the person's own here), the kept answer, and a webhook batch's job whose
 * event carried the e-mail.
 */
async function keep(h: PipelineHarness, installation: Installation, who: Person): Promise<void> {
  const store = h.bridge.pipelineStore;
  const at = new Date().toISOString();
  const state: RecordState = {
    installationId: installation.id,
    object: CONTACT,
    recordId: who.recordId,
    householdMatched: true,
    careerMatched: true,
    windfallId: who.windfallId,
    confidence: 0.93,
    enrichedAt: at,
    inputHash: `hash-${who.recordId}`,
    written: { wf_household_windfall_id: who.windfallId, wf_career_work_email: who.email },
  };
  const entry: LogEntry = {
    id: newLogId(),
    installationId: installation.id,
    object: CONTACT,
    recordId: who.recordId,
    at,
    outcome: 'enriched',
    fieldsWritten: ['wf_household_windfall_id', 'wf_career_work_email'],
    changes: { wf_household_windfall_id: { value: who.windfallId, replaced: null }, wf_career_work_email: { value: who.email, replaced: who.email } },
    quotaConsumed: 1,
    latencyMs: 14,
    detail: null,
  };
  const answer: StoredAnswer = {
    installationId: installation.id,
    inputHash: `hash-${who.recordId}`,
    object: CONTACT,
    recordId: who.recordId,
    sealedAnswer: who.sealedAnswer,
    dataVersion: null,
    answeredAt: at,
  };
  await store.saveOutcomes([state], [entry], [answer]);
  const actor: Actor = { userId: `u-${who.recordId}`, email: who.email };
  await store.saveRecordAction(
    { ...entry, id: newLogId(), outcome: 'action:exclude', fieldsWritten: [], changes: {}, quotaConsumed: 0, latencyMs: null, actor },
    { excludedAt: at, excludedBy: actor },
  );
}

/** The HubSpot intake's erasure, as a worker runs it for a `contact.privacyDeletion` webhook event. */
async function privacyDeletion(h: PipelineHarness, installation: Installation, recordId: string, store: PipelineStore = h.bridge.pipelineStore): Promise<void> {
  const summary = await applyHubSpotEvents(
    [
      {
        eventId: 1,
        portalId: installation.externalAccountId,
        occurredAt: Date.now(),
        subscriptionType: 'contact.privacyDeletion',
        objectId: recordId,
        changeFlag: 'DELETED',
      },
    ],
    { store, queue: h.opened.queue, appIdOf: () => Promise.resolve(null) },
  );
  expect(summary.erased).toBe(1);
}

describe('erased means gone from the data folder’s bytes', () => {
  it('an erased record’s values are gone from the data folder’s bytes, WAL included, while the store is open and after it is closed', async () => {
    const h = await start();
    const installation = await hubspotInstallation(h);
    const erased = person('901');
    const kept = person('902');
    await keep(h, installation, erased);
    await keep(h, installation, kept);
    // The scan sees what the store holds: before the erasure, both people are on disk.
    expect(total(occurrences(h.dataDir, erased))).toBeGreaterThan(0);

    await privacyDeletion(h, installation, erased.recordId);

    expect(await h.bridge.pipelineStore.recordStates(installation.id, CONTACT, [erased.recordId])).toEqual(new Map());
    expect(occurrences(h.dataDir, erased)).toEqual({});
    expect(total(occurrences(h.dataDir, kept))).toBeGreaterThan(0);
    await h.close();
    expect(occurrences(h.dataDir, erased)).toEqual({});
    expect(total(occurrences(h.dataDir, kept))).toBeGreaterThan(0);
  });

  it('a disconnected installation’s record values and jobs are gone from the data folder’s bytes, WAL included, while the store is open and after it is closed', async () => {
    const h = await start();
    const installation = await hubspotInstallation(h);
    const other = await hubspotInstallation(h);
    const gone = person('911');
    const kept = person('912');
    await keep(h, installation, gone);
    await keep(h, other, kept);
    // A webhook batch waiting to be expanded: HubSpot's event carries the property's new value.
    await h.opened.queue.enqueue({
      installationId: installation.id,
      kind: HUBSPOT_EVENTS_JOB,
      payload: {
        events: [
          {
            eventId: 7,
            portalId: Number(installation.externalAccountId),
            occurredAt: Date.now(),
            subscriptionType: 'contact.propertyChange',
            objectId: Number(gone.recordId),
            propertyName: 'email',
            propertyValue: gone.email,
          },
        ],
      },
    });
    expect(total(occurrences(h.dataDir, gone))).toBeGreaterThan(0);

    await disconnectPortal(h.bridge.installations, installation.id, false);

    // The log is kept for the operator, without the values.
    expect((await h.bridge.pipelineStore.listLog({ installationId: installation.id })).map((e) => e.changes)).toEqual([{}, {}]);
    expect(occurrences(h.dataDir, gone)).toEqual({});
    expect(total(occurrences(h.dataDir, kept))).toBeGreaterThan(0);
    await h.close();
    expect(occurrences(h.dataDir, gone)).toEqual({});
    expect(total(occurrences(h.dataDir, kept))).toBeGreaterThan(0);
  });

  it('a reader holding the WAL back does not fail the erasure: it is reported without the record’s values, and the bytes go at the close', async () => {
    const warnings: { fields: Readonly<Record<string, unknown>>; message: string }[] = [];
    const h = await start({ busyTimeoutMs: 20 });
    // The store as the server composes it, its warnings going where the server's logger would take them.
    const store = new KyselyPipelineStore(h.opened.db, h.opened.clock, (fields, message) => warnings.push({ fields, message }));
    const installation = await hubspotInstallation(h);
    const erased = person('921');
    await keep(h, installation, erased);
    // Another process's read transaction, on the snapshot from before the erasure.
    const reader = new Database(h.location, { readonly: true });
    reader.exec('BEGIN');
    reader.prepare('SELECT count(*) FROM record_states').get();

    try {
      await privacyDeletion(h, installation, erased.recordId, store);
    } finally {
      reader.exec('COMMIT');
      reader.close();
    }

    expect(await h.bridge.pipelineStore.recordStates(installation.id, CONTACT, [erased.recordId])).toEqual(new Map());
    expect(warnings).toEqual([
      { fields: { installation: installation.id, object: CONTACT, erased: 'record' }, message: expect.stringMatching(/WAL/) as unknown },
    ]);
    expect(JSON.stringify(warnings)).not.toContain(erased.email);
    await h.close();
    expect(occurrences(h.dataDir, erased)).toEqual({});
  });
});
