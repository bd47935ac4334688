// Scheduled refresh (issue 14, item 3) on real parts: the pipeline, its store and queue, a production
// installation billed by the in-process service, the Refresher's ticks called under a test clock.
// Records enriched longer ago than the refresh age are enriched again, oldest first, at no more than
// the installation's share of its token's rate, only while active and within the budget; an answer
// that did not change writes nothing to the CRM.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Installation, InstallationSettings } from '../../bridge/model.ts';
import { Refresher } from '../../bridge/refresh.ts';
import { type PipelineHarness, startPipeline } from '../support/pipeline-harness.ts';
import { persona } from '../support/requests.ts';
import { TEST_DATABASES, type TestDatabase } from '../support/databases.ts';

let database: TestDatabase | undefined;

const OBJECT = 'contact';
const DAY_MS = 86_400_000;
const NAMES = ['Amanda Taylor', 'Daniel Garcia', 'Michelle Robinson', 'Jane Doe', 'Robert Smith'];
const PayloadSchema = z.object({ recordId: z.string(), trigger: z.string() });

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function production(settings: Partial<InstallationSettings>): Promise<{ h: PipelineHarness; installation: Installation; refresher: Refresher }> {
  const h = await startPipeline({ database });
  cleanups.push(() => h.close());
  h.clock.now = new Date('2026-01-05T12:00:00Z');
  const installation = await h.install({ environment: 'production', settings, account: { quotaLimit: 100_000, rateLimit: 1000 } });
  // Ticks of 10 s at 20 % of 5 requests a second (the token's rate as the refresher is told it; the
  // account itself is fast, so the test's own enrichments do not wait): 10 records a tick.
  const refresher = new Refresher({
    store: h.bridge.pipelineStore,
    queue: h.opened.queue,
    owner: 'test',
    rateOf: () => Promise.resolve(5),
    now: () => h.clock.now,
    tickMs: 10_000,
  });
  return { h, installation, refresher };
}

/** `count` contacts enriched one after the other, a day apart (c-000 the oldest). */
async function enrichedContacts(h: PipelineHarness, installation: Installation, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) {
    const id = `c-${String(i).padStart(3, '0')}`;
    const name = NAMES[i % NAMES.length] ?? 'Amanda Taylor';
    const who = persona(name);
    // Distinct people: the same persona with another phone is another question (no reuse).
    h.crm.create(OBJECT, id, { first_name: who.first_name, last_name: who.last_name, email: who.email, phone: `555${String(1_000_000 + i)}` });
    await h.enqueue(installation, { object: OBJECT, recordId: id });
    ids.push(id);
  }
  await h.drain();
  return ids;
}

async function queuedRefreshes(h: PipelineHarness): Promise<string[]> {
  return (await h.opened.queue.list({ state: 'queued' }))
    .map((job) => PayloadSchema.parse(job.payload))
    .filter((p) => p.trigger === 'refresh')
    .map((p) => p.recordId);
}

describe.each(TEST_DATABASES)('scheduled refresh on $name', (each) => {
  beforeAll(() => {
    database = each;
  });

  it('re-enriches records older than the refresh age, oldest first, and an unchanged answer writes nothing to the CRM', async () => {
    const { h, installation, refresher } = await production({ refreshAfterDays: 30 });
    const start = h.clock.now.getTime();
    await enrichedContacts(h, installation, 2);
    h.clock.now = new Date(start + DAY_MS);
    h.crm.create(OBJECT, 'c-new', { first_name: 'Jane', last_name: 'Doe', email: persona('Jane Doe').email });
    await h.enqueue(installation, { object: OBJECT, recordId: 'c-new' });
    await h.drain();

    // 20 days on: nothing is old enough.
    h.clock.now = new Date(start + 20 * DAY_MS);
    expect(await refresher.tick()).toEqual({});
    // 30.5 days after the first two: those two, not c-new (enriched a day later).
    h.clock.now = new Date(start + 30.5 * DAY_MS);
    expect(await refresher.tick()).toEqual({ [installation.id]: 2 });
    expect((await queuedRefreshes(h)).sort()).toEqual(['c-000', 'c-001']);

    const writesBefore = h.crm.writes.length;
    await h.drain();
    // Looked up again (a unit each), but the answers are the same: no CRM write at all.
    const refreshed = await h.bridge.pipelineStore.searchLog({ installationId: installation.id, recordId: 'c-000', limit: 5 });
    expect(refreshed[0]).toMatchObject({ outcome: 'enriched', quotaConsumed: 1, fieldsWritten: [] });
    expect(h.crm.writes.length).toBe(writesBefore);
    // Their enrichment time moved on: the next tick has nothing to refresh.
    expect(await refresher.tick()).toEqual({});
  });

  it('a refreshed record whose answer changed is written', async () => {
    const { h, installation, refresher } = await production({ refreshAfterDays: 30 });
    await enrichedContacts(h, installation, 1);
    // Someone cleared one of our properties meanwhile: the answer now differs from the record.
    h.crm.edit(OBJECT, 'c-000', { wf_household_net_worth: null });
    h.clock.now = new Date(h.clock.now.getTime() + 31 * DAY_MS);
    await refresher.tick();
    const writesBefore = h.crm.writes.length;
    await h.drain();
    expect(h.crm.writes.length).toBe(writesBefore + 1);
    expect(h.crm.get(OBJECT, 'c-000')?.wf_household_net_worth).toBeTruthy();
  });

  it('never takes more than its share of the token’s rate over a minute (20 % of 5/s: 60 records)', async () => {
    const { h, installation, refresher } = await production({ refreshAfterDays: 30 });
    await enrichedContacts(h, installation, 150);
    h.clock.now = new Date(h.clock.now.getTime() + 31 * DAY_MS);
    let refreshed = 0;
    // A minute of ticks, every 10 s; the workers run each tick's jobs before the next.
    for (let second = 0; second < 60; second += 10) {
      const queued = await refresher.tick();
      refreshed += queued[installation.id] ?? 0;
      // A tick while the last one's jobs still wait adds nothing.
      expect(await refresher.tick()).toEqual({});
      await h.drain();
      h.clock.now = new Date(h.clock.now.getTime() + 10_000);
    }
    expect(refreshed).toBe(60);
  });

  it('refreshes only while the budget allows, and not while the installation is paused', async () => {
    const { h, installation, refresher } = await production({ refreshAfterDays: 30, monthlyBudget: 20 });
    await enrichedContacts(h, installation, 15);
    h.clock.now = new Date(h.clock.now.getTime() + 31 * DAY_MS);
    // A new month: 20 units left, but only 10 a tick.
    expect(await refresher.tick()).toEqual({ [installation.id]: 10 });
    await h.drain();
    await h.bridge.installations.updateSettings(installation.id, { monthlyBudget: 13 });
    expect(await refresher.tick()).toEqual({ [installation.id]: 3 });
    await h.drain();
    expect(await refresher.tick()).toEqual({});
    await h.bridge.installations.updateSettings(installation.id, { monthlyBudget: 100 });
    await h.bridge.installations.pause(installation.id);
    expect(await refresher.tick()).toEqual({});
  });
});
