// Retention on real parts (SQLite or PostgreSQL store and queue, the real EnrichService and pipeline;
// MemoryCrm stands for the CRM): the enrichment log keeps the values written and replaced for the
// retention period and then purges them, keeping the entries and every count; Undo reaches no further
// back than the period; and the console's installation page says what is kept and for how long.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Actor, Installation, LogEntry } from '../../bridge/model.ts';
import type { RecordRef } from '../../bridge/record-actions.ts';
import { RecordViewSchema } from '../../bridge/record-view.ts';
import { LogValuesPurge } from '../../bridge/retention.ts';
import { newLogId } from '../../bridge/store.ts';
import { createAccount } from '../../core/accounts/admin.ts';
import { SecretBox } from '../../core/secrets/secret-box.ts';
import { PERSONAS, type Persona } from '../../core/sandbox/personas.ts';
import { loadConfig } from '../../server/config.ts';
import { createLogger } from '../../server/logger.ts';
import { openRuntime, startWorker } from '../../server/runtime.ts';
import { TEST_DATABASES, type TestDatabase } from '../support/databases.ts';
import { tempDir } from '../support/harness.ts';
import { type Properties, propertyName as p } from '../support/memory-crm.ts';
import { type PipelineHarness, startPipeline } from '../support/pipeline-harness.ts';
import { until } from '../support/processes.ts';
import { startConsoleApp } from '../support/console-app.ts';

let database: TestDatabase | undefined;

const CONTACT = 'contact';
const DAY_MS = 86_400_000;
const ALICE: Actor = { userId: 'u-17', email: 'alice.admin@example.org' };
const EPOCH = '1970-01-01T00:00:00.000Z';

function persona(first: string): Persona {
  const found = PERSONAS.find((candidate) => candidate.first_name === first);
  if (found === undefined) throw new Error(`no sandbox persona ${first}`);
  return found;
}
const contact = (who: Persona): Properties => ({ first_name: who.first_name, last_name: who.last_name, email: who.email });

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setUp(): Promise<{ h: PipelineHarness; inst: Installation }> {
  const h = await startPipeline({ database });
  cleanups.push(async () => {
    await h.close();
    rmSync(h.dataDir, { recursive: true, force: true });
  });
  const inst = await h.install({ environment: 'production', settings: { overwriteMode: 'always' }, account: { quotaLimit: 100_000 } });
  return { h, inst };
}

/** Contacts created in the CRM at the harness clock's time, their creation webhooks' jobs run. */
async function created(h: PipelineHarness, inst: Installation, records: Readonly<Record<string, Properties>>): Promise<void> {
  for (const [id, properties] of Object.entries(records)) {
    h.crm.create(CONTACT, id, properties);
    await h.enqueue(inst, { object: CONTACT, recordId: id, trigger: 'create' });
  }
  await h.drain();
}

const ref = (inst: Installation, recordId: string): RecordRef => ({ installationId: inst.id, object: CONTACT, recordId });

async function view(h: PipelineHarness, inst: Installation, recordId: string) {
  const result = await h.bridge.records.view(ref(inst, recordId));
  if (!result.ok) throw new Error(`no view: ${result.reason}`);
  return RecordViewSchema.parse(JSON.parse(JSON.stringify(result.view)));
}

const log = async (h: PipelineHarness, inst: Installation): Promise<LogEntry[]> => h.bridge.pipelineStore.listLog({ installationId: inst.id, limit: 1000 });

/** An entry as the counts see it: everything but the values. */
const counted = (entry: LogEntry) => ({
  id: entry.id,
  at: entry.at,
  recordId: entry.recordId,
  outcome: entry.outcome,
  fieldsWritten: entry.fieldsWritten,
  quotaConsumed: entry.quotaConsumed,
});

describe.each(TEST_DATABASES)('on $name', (each) => {
  beforeAll(() => {
    database = each;
  });

  it('values in the enrichment log older than the retention period are purged and the counts kept', async () => {
    const { h, inst } = await setUp();
    const now = h.clock.now;
    // Enriched 100 days ago (a match, a no match, one without a match key), and one 10 days ago.
    h.clock.now = new Date(now.getTime() - 100 * DAY_MS);
    await created(h, inst, {
      old1: contact(persona('Amanda')),
      old2: { first_name: 'Nobody', last_name: 'Known', email: 'nobody.known@example.com' },
      old3: { first_name: 'Name', last_name: 'Only' },
    });
    h.clock.now = new Date(now.getTime() - 10 * DAY_MS);
    await created(h, inst, { recent: contact(persona('Daniel')) });
    h.clock.now = now;
    const before = await log(h, inst);
    expect(before).toHaveLength(4);
    expect(before.every((entry) => Object.keys(entry.changes).length > 0)).toBe(true);
    const daily = await h.bridge.pipelineStore.dailyOutcomes(inst.id, EPOCH);
    const units = await h.bridge.pipelineStore.unitsSince(inst.id, EPOCH);

    const purge = new LogValuesPurge({ store: h.bridge.pipelineStore, retentionDays: 90, owner: 'worker-a', now: () => h.clock.now });
    expect(await purge.run()).toBe(3);

    const after = await log(h, inst);
    // The entries stay, with their outcome, the fields written and the units: only the values go.
    expect(after.map(counted)).toEqual(before.map(counted));
    for (const entry of after.filter((e) => e.recordId.startsWith('old'))) {
      expect(entry.changes).toEqual({});
      expect(entry.valuesPurgedAt).toBe(now.toISOString());
    }
    const recent = after.find((entry) => entry.recordId === 'recent');
    expect(recent?.changes).toEqual(before.find((entry) => entry.recordId === 'recent')?.changes);
    expect(recent?.valuesPurgedAt).toBeUndefined();
    // The overview's numbers and a budget's spend do not change.
    expect(await h.bridge.pipelineStore.dailyOutcomes(inst.id, EPOCH)).toEqual(daily);
    expect(await h.bridge.pipelineStore.unitsSince(inst.id, EPOCH)).toBe(units);
    // No value past the period is left in the table itself; a second run finds nothing to do.
    const cutoff = new Date(now.getTime() - 90 * DAY_MS).toISOString();
    const left = await h.opened.db.selectFrom('enrichment_log').select('id').where('at', '<', cutoff).where('changes', 'is not', null).execute();
    expect(left).toEqual([]);
    expect(await purge.run()).toBe(0);
  });

  it('the purge works in bounded batches, and of several instances one purges at a time', async () => {
    const { h, inst } = await setUp();
    const now = h.clock.now;
    h.clock.now = new Date(now.getTime() - 91 * DAY_MS);
    await created(h, inst, Object.fromEntries(['a', 'b', 'c', 'd', 'e'].map((id) => [id, { first_name: 'Name', last_name: `Only ${id}` }])));
    h.clock.now = now;
    const instance = (owner: string) =>
      new LogValuesPurge({ store: h.bridge.pipelineStore, retentionDays: 90, owner, now: () => h.clock.now, batchSize: 2, batchesPerRun: 1, everyMs: 60_000 });
    const [a, b] = [instance('worker-a'), instance('worker-b')];
    // Side by side: one takes the run, the other leaves it; a run purges one batch at most.
    const first = await Promise.all([a.run(), b.run()]);
    expect([...first].sort()).toEqual([0, 2]);
    const [holder, other] = first[0] === 2 ? [a, b] : [b, a];
    expect(await other.run()).toBe(0);
    expect(await holder.run()).toBe(2);
    expect(await holder.run()).toBe(1);
    expect(await holder.run()).toBe(0);
    const entries = await log(h, inst);
    expect(entries.every((entry) => entry.valuesPurgedAt !== undefined && Object.keys(entry.changes).length === 0)).toBe(true);
  });

  it('Undo is not offered past the retention period, and an Undo posted for such an enrichment is refused', async () => {
    const { h, inst } = await setUp();
    const enrichedAt = h.clock.now;
    await created(h, inst, { c1: { ...contact(persona('Amanda')), [p('career.job_title')]: 'Volunteer' } });
    const written = h.crm.get(CONTACT, 'c1');
    expect(written?.[p('career.job_title')]).not.toBe('Volunteer');

    // Within the period: offered.
    h.clock.now = new Date(enrichedAt.getTime() + 89 * DAY_MS);
    expect((await view(h, inst, 'c1')).actions.undo).toMatchObject({ allowed: true });

    // Past it, before the purge has run: not offered, and refused when posted; nothing is written or logged.
    h.clock.now = new Date(enrichedAt.getTime() + 91 * DAY_MS);
    const past = await view(h, inst, 'c1');
    expect(past.actions.undo).toMatchObject({ allowed: false, reason: 'past_retention' });
    expect(past.actions.undo.message).toMatch(/more than 90 days old.*kept only 90 days.*can no longer be undone/);
    // What it replaced is no longer shown either.
    expect(past.fields).toEqual([]);
    const refused = await h.bridge.records.undo(ref(inst, 'c1'), ALICE);
    expect(refused).toMatchObject({ ok: false, action: 'undo', reason: 'past_retention' });
    expect(refused.ok ? '' : refused.message).toMatch(/can no longer be undone/);
    expect(h.crm.get(CONTACT, 'c1')).toEqual(written);
    expect((await log(h, inst)).map((entry) => entry.outcome)).toEqual(['enriched']);

    // Once purged: the same.
    await new LogValuesPurge({ store: h.bridge.pipelineStore, retentionDays: 90, owner: 'worker-a', now: () => h.clock.now }).run();
    expect((await view(h, inst, 'c1')).actions.undo).toMatchObject({ allowed: false, reason: 'past_retention' });
    expect(await h.bridge.records.take('undo', ref(inst, 'c1'), ALICE)).toMatchObject({ ok: false, reason: 'past_retention' });
    expect(h.crm.get(CONTACT, 'c1')).toEqual(written);
  });
});

describe("the console's installation page", () => {
  it('says what is kept and for how long', async () => {
    const h = await startPipeline();
    cleanups.push(async () => {
      await h.close();
      rmSync(h.dataDir, { recursive: true, force: true });
    });
    const inst = await h.install({ settings: { reenrichAfterDays: 45 } });
    const box = new SecretBox(randomBytes(32));
    const publicUrl = 'http://console.test';
    const app = await startConsoleApp({ publicUrl, box, bridge: h.bridge, store: h.opened.store, service: h.service, queue: h.opened.queue, modules: [] });
    cleanups.push(() => app.close());
    const { cookie } = await app.signIn({ kind: 'installation', installationId: inst.id }, 'alice.admin@example.org');
    const response = await fetch(`${app.url}/console/installations/${inst.id}`, { headers: { cookie } });
    expect(response.status).toBe(200);
    const page = await response.text();
    const kept = /<dl class="card" id="kept">(.*?)<\/dl>/s.exec(page)?.[1] ?? '';
    expect(kept).toContain(
      '<dt>Written and replaced values</dt><dd>kept 90 days in the enrichment log, then purged (the entries and their counts are kept); Undo is offered within that time</dd>',
    );
    expect(kept).toContain('<dt>Kept answers</dt><dd>used up to 45 days (the re-enrichment age), sealed;');
    expect(kept).toContain('<dt>Console sessions</dt><dd>end after 8 hours, at sign-out,');
  });
});

describe('the workers', () => {
  it('purge, as they start, the values older than LOG_VALUES_RETENTION_DAYS', async () => {
    const dataDir = tempDir('enrichbridge-retention-');
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const logger = createLogger('silent');
    const runtime = await openRuntime(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', WORKER_CONCURRENCY: '0', LOG_VALUES_RETENTION_DAYS: '30' }), logger);
    cleanups.push(() => runtime.close());
    await createAccount(runtime.opened.store, 'acme', { careerIntelligence: false });
    const inst = await runtime.bridge.installations.create({
      provider: 'hubspot',
      externalAccountId: '22334455',
      environment: 'sandbox',
      target: { kind: 'local', accountName: 'acme' },
    });
    const logged = (recordId: string, daysAgo: number): LogEntry => {
      const at = new Date(Date.now() - daysAgo * DAY_MS);
      return {
        id: newLogId(at),
        installationId: inst.id,
        object: CONTACT,
        recordId,
        at: at.toISOString(),
        outcome: 'enriched',
        fieldsWritten: ['wf_career_job_title'],
        changes: { wf_career_job_title: { value: 'Chief Executive', replaced: 'Volunteer' } },
        quotaConsumed: 0,
        latencyMs: 12,
        detail: null,
      };
    };
    await runtime.bridge.pipelineStore.saveOutcomes([], [logged('older', 31), logged('newer', 29)]);
    const worker = startWorker(runtime, logger, 1);
    cleanups.push(() => worker.stop());
    const older = await until('the older entry purged', async () => {
      const [entry] = await runtime.bridge.pipelineStore.listLog({ installationId: inst.id, recordId: 'older' });
      return entry?.valuesPurgedAt === undefined ? undefined : entry;
    });
    expect(older).toMatchObject({ outcome: 'enriched', fieldsWritten: ['wf_career_job_title'], changes: {} });
    const [newer] = await runtime.bridge.pipelineStore.listLog({ installationId: inst.id, recordId: 'newer' });
    expect(newer?.changes).toEqual({ wf_career_job_title: { value: 'Chief Executive', replaced: 'Volunteer' } });
    expect(newer?.valuesPurgedAt).toBeUndefined();
  });
});
