// Monthly unit budgets (issue 14, item 2) on real parts: the pipeline, its store and queue on each test
// database, a production installation billed by the in-process service. The budget lets through only
// the lookups it has left; the rest wait (released, nothing dropped) until next month or a larger
// budget; reused answers cost nothing and pass; a backfill is refused beyond it unless told.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { readBudgetsFrom, metricsText } from '../../core/observe/metrics.ts';
import { sql } from 'kysely';
import { budgetState } from '../../bridge/budget.ts';
import { unitsSinceQuery } from '../../bridge/store/enrichment-log-table.ts';
import type { Installation, InstallationSettings } from '../../bridge/model.ts';
import { type PipelineHarness, startPipeline } from '../support/pipeline-harness.ts';
import { persona } from '../support/requests.ts';
import { TEST_DATABASES, type TestDatabase } from '../support/databases.ts';

let database: TestDatabase | undefined;
const OBJECT = 'contact';
const NAMES = ['Amanda Taylor', 'Daniel Garcia', 'Michelle Robinson', 'Jane Doe', 'Robert Smith'];

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function production(settings: Partial<InstallationSettings>): Promise<{ h: PipelineHarness; installation: Installation }> {
  const h = await startPipeline({ database });
  cleanups.push(() => h.close());
  const installation = await h.install({ environment: 'production', settings, account: { quotaLimit: 1000 } });
  return { h, installation };
}

function people(h: PipelineHarness, count: number): string[] {
  return NAMES.slice(0, count).map((name, i) => {
    const who = persona(name);
    h.crm.create(OBJECT, `c-${i}`, { first_name: who.first_name, last_name: who.last_name, email: who.email });
    return `c-${i}`;
  });
}

async function outcomes(h: PipelineHarness, installation: Installation): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const entry of (await h.bridge.pipelineStore.searchLog({ installationId: installation.id, limit: 100 })).reverse()) {
    (out[entry.recordId] ??= []).push(entry.outcome);
  }
  return out;
}

const PayloadSchema = z.object({ recordId: z.string() });

describe.each(TEST_DATABASES)('on $name', (each) => {
  beforeAll(() => {
    database = each;
  });

  it('two batches of one installation running at once never pass its budget together', async () => {
    const { h, installation } = await production({ monthlyBudget: 2 });
    const ids = people(h, 4);
    for (const id of ids) await h.enqueue(installation, { object: OBJECT, recordId: id });
    // Two workers (two processes, or two instances) each claim half of the installation's jobs, and
    // run their batches side by side: each would read the whole budget as left.
    const a = await h.opened.queue.claimBatch({ workerId: 'worker-a', limit: 2, leaseMs: 60_000 });
    const b = await h.opened.queue.claimBatch({ workerId: 'worker-b', limit: 2, leaseMs: 60_000 });
    expect(a).toHaveLength(2);
    expect(b).toHaveLength(2);
    await Promise.all([h.bridge.pipeline.processBatch(a, 'worker-a'), h.bridge.pipeline.processBatch(b, 'worker-b')]);
    await h.drain();
    const spent = Object.values(await outcomes(h, installation)).filter((o) => o.includes('enriched'));
    expect(spent).toHaveLength(2);
    expect(await budgetState(h.bridge.pipelineStore, installation, h.clock.now)).toMatchObject({ spent: 2, left: 0 });
    // Nothing is lost: the two the budget did not allow wait in the queue.
    expect(await h.opened.queue.list({ state: 'queued' })).toHaveLength(2);
  });

  it("the budget's sum reads the log through its index on (installation, time), not a scan", async () => {
    const { h, installation } = await production({ monthlyBudget: 100 });
    const query = unitsSinceQuery(h.opened.db, installation.id, '2026-11-01T00:00:00.000Z').compile();
    if (each.name === 'PostgreSQL') {
      // The test's log is a few rows, where a scan is cheapest: with scans priced out, the plan must
      // still find an index that serves both conditions.
      const plan = await h.opened.db.connection().execute(async (db) => {
        await sql`SET enable_seqscan = off`.execute(db);
        const { rows } = await db.executeQuery<{ 'QUERY PLAN': string }>({ ...query, sql: `EXPLAIN ${query.sql}` });
        await sql`RESET enable_seqscan`.execute(db);
        return rows.map((row) => row['QUERY PLAN']).join('\n');
      });
      expect(plan).toMatch(/enrichment_log_installation_at/);
      expect(plan).toMatch(/Index Cond: \(\(installation_id = .*\) AND \(at >= .*\)\)/s);
    } else {
      const { rows } = await h.opened.db.executeQuery<{ detail: string }>({ ...query, sql: `EXPLAIN QUERY PLAN ${query.sql}` });
      expect(rows.map((row) => row.detail).join('\n')).toMatch(/USING INDEX enrichment_log_installation_at \(installation_id=\? AND at>\?\)/);
    }
  });

  it('a budget reached mid-batch lets through what it has left; the rest wait, nothing lost, and run next month', async () => {
    const { h, installation } = await production({ monthlyBudget: 2 });
    const ids = people(h, 4);
    for (const id of ids) await h.enqueue(installation, { object: OBJECT, recordId: id });
    await h.drain();

    const first = await outcomes(h, installation);
    expect(Object.values(first).filter((o) => o.includes('enriched'))).toHaveLength(2);
    expect(Object.values(first).filter((o) => o.includes('skipped:budget_paused'))).toHaveLength(2);
    const paused = await h.bridge.pipelineStore.findInstallation(installation.id);
    expect(paused).toMatchObject({ status: 'paused', pauseReason: 'budget' });
    expect(paused?.pausedUntil?.startsWith(new Date(Date.UTC(h.clock.now.getUTCFullYear(), h.clock.now.getUTCMonth() + 1, 1)).toISOString().slice(0, 10))).toBe(
      true,
    );
    // The two waiting are queued, not dropped.
    const queued = (await h.opened.queue.list({ state: 'queued' })).map((job) => PayloadSchema.parse(job.payload).recordId).sort();
    expect(queued).toHaveLength(2);
    expect(await budgetState(h.bridge.pipelineStore, installation, h.clock.now)).toMatchObject({ spent: 2, left: 0, reached: true, warning: true });

    // Next month (the test clock; the queue's own clock is brought forward to the jobs' time).
    const next = new Date(Date.UTC(h.clock.now.getUTCFullYear(), h.clock.now.getUTCMonth() + 1, 1, 1));
    h.clock.now = next;
    await h.opened.queue.reschedule(installation.id, h.opened.clock.now());
    await h.drain();
    const after = await outcomes(h, installation);
    for (const id of queued) expect(after[id]?.at(-1)).toBe('enriched');
    expect(await h.bridge.pipelineStore.findInstallation(installation.id)).toMatchObject({ status: 'active' });
    expect((await budgetState(h.bridge.pipelineStore, installation, next))?.spent).toBe(2);
  });

  it('a larger budget set by the operator resumes at once', async () => {
    const { h, installation } = await production({ monthlyBudget: 1 });
    const ids = people(h, 3);
    for (const id of ids) await h.enqueue(installation, { object: OBJECT, recordId: id });
    await h.drain();
    expect(await h.bridge.pipelineStore.findInstallation(installation.id)).toMatchObject({ pauseReason: 'budget' });
    const raised = await h.bridge.installations.updateSettings(installation.id, { monthlyBudget: 10 });
    expect(raised).toMatchObject({ status: 'active' });
    await h.drain();
    const after = await outcomes(h, installation);
    expect(ids.every((id) => after[id]?.at(-1) === 'enriched')).toBe(true);
    expect(await budgetState(h.bridge.pipelineStore, raised, h.clock.now)).toMatchObject({ spent: 3, left: 7, warning: false });
  });

  it('a reused answer costs nothing and passes a spent budget', async () => {
    const { h, installation } = await production({ monthlyBudget: 1 });
    const amanda = persona('Amanda Taylor');
    h.crm.create(OBJECT, 'c-1', { first_name: amanda.first_name, last_name: amanda.last_name, email: amanda.email });
    h.crm.create(OBJECT, 'c-2', { first_name: 'AMANDA', last_name: 'taylor', email: amanda.email.toUpperCase() });
    await h.enqueue(installation, { object: OBJECT, recordId: 'c-1' });
    await h.drain();
    await h.enqueue(installation, { object: OBJECT, recordId: 'c-2' });
    await h.drain();
    expect((await outcomes(h, installation))['c-2']).toEqual(['enriched']);
    expect(await h.bridge.pipelineStore.findInstallation(installation.id)).toMatchObject({ status: 'active' });
  });

  it('warns from 80 %: the batch summary carries it, and /metrics reports the share', async () => {
    const { h, installation } = await production({ monthlyBudget: 5 });
    const ids = people(h, 4);
    for (const id of ids) await h.enqueue(installation, { object: OBJECT, recordId: id });
    const summaries: unknown[] = [];
    const jobs = await h.opened.queue.claimBatch({ workerId: 'w', limit: 10, leaseMs: 60_000 });
    summaries.push(await h.bridge.pipeline.processBatch(jobs, 'w'));
    expect(summaries[0]).toMatchObject({ budget: { spent: 4, budget: 5, warning: true, reached: false } });
    readBudgetsFrom(async () => {
      const budget = await budgetState(h.bridge.pipelineStore, installation, h.clock.now);
      return budget === null ? {} : { [installation.id]: budget.ratio };
    });
    try {
      expect(await metricsText()).toContain(`enrichbridge_budget_used_ratio{installation="${installation.id}"} 0.8`);
    } finally {
      readBudgetsFrom(null);
    }
  });

  it('refuses to start a backfill that may spend more than the budget has left, unless told to', async () => {
    const { h, installation } = await production({ monthlyBudget: 3 });
    const run = await h.bridge.backfillRuns.estimate(installation, { object: OBJECT, flags: {}, limit: null, restart: false });
    await h.bridge.backfillRuns.save(run.id, { state: 'estimated', to_enrich: 5, quota_units: 5 });
    await expect(h.bridge.backfillRuns.confirm(installation, run.id, { left: 3, overBudget: false })).rejects.toThrow(
      /up to 5 units, and the month's budget has 3 left/,
    );
    expect(await h.bridge.backfillRuns.find(installation.id, run.id)).toMatchObject({ state: 'estimated' });
    await h.bridge.backfillRuns.confirm(installation, run.id, { left: 3, overBudget: true });
    expect(await h.bridge.backfillRuns.find(installation.id, run.id)).toMatchObject({ state: 'running' });
  });
});
