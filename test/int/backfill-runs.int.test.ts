// Backfills started from the console (bridge/backfill-runs.ts) on real parts: the
// pipeline's store and queue on each test database, the queue's worker running the estimate and run
// jobs and the enrichments they queue; the records paged from the MemoryCrm (the CRM is outside us).
// An estimate queues nothing; a confirmed run queues what it counted, in its group; cancel stops it and
// removes what waits; a run whose CRM failed midway is delivered again and resumes at the saved cursor.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BackfillRecordIdError, type RecordSource } from '../../bridge/backfill.ts';
import { type BackfillRun, BackfillRunError } from '../../bridge/backfill-runs.ts';
import { runStatus } from '../../server/http/console/backfill.tsx';
import type { CrmBackfill } from '../../bridge/crm-module.ts';
import { ENRICH_JOB } from '../../bridge/enrich-job.ts';
import { MemoryCrmConnector, type MemoryCrm } from '../support/memory-crm.ts';
import { type PipelineHarness, startPipeline } from '../support/pipeline-harness.ts';
import { TEST_DATABASES, type TestDatabase } from '../support/databases.ts';

let database: TestDatabase | undefined;
const OBJECT = 'contact';
const IDS = ['c-1', 'c-2', 'c-3', 'c-4', 'c-5', 'c-6', 'c-7'];

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * The MemoryCrm's records in id order, PAGE a page, the cursor being the next page's first id. `before`
 * runs before each page is served (a test cancels there); `failOn` makes one cursor fail until cleared.
 */
function crmBackfill(crm: { current: MemoryCrm | undefined }) {
  const PAGE = 2;
  const state = { cursors: [] as (string | null)[], failOn: null as string | null, before: async (_cursor: string | null) => {} };
  const source: RecordSource = async (cursor) => {
    state.cursors.push(cursor);
    await state.before(cursor);
    if (cursor !== null && cursor === state.failOn) throw new Error('CRM unreachable');
    const ids = IDS;
    const start = cursor === null ? 0 : ids.indexOf(cursor);
    const records = ids.slice(start, start + PAGE).map((id) => ({ id, properties: crm.current?.get(OBJECT, id) ?? {} }));
    return { records, next: ids[start + PAGE] ?? null };
  };
  const spec: CrmBackfill = {
    description: 'the memory CRM',
    nouns: { [OBJECT]: 'contacts' },
    open: () =>
      Promise.resolve({
        connector: new MemoryCrmConnector(crm.current as MemoryCrm),
        source,
        scanned: 'contacts',
        summary: () => ({ restarted: false, lines: [] }),
      }),
  };
  return { spec, state };
}

async function pipeline() {
  const crm: { current: MemoryCrm | undefined } = { current: undefined };
  const backfill = crmBackfill(crm);
  const h: PipelineHarness = await startPipeline({ database, backfill: backfill.spec });
  crm.current = h.crm;
  cleanups.push(() => h.close());
  const installation = await h.install();
  // Seven contacts: five with an e-mail (a match key), two with a name only.
  for (let i = 1; i <= 7; i += 1) {
    h.crm.create(
      OBJECT,
      `c-${i}`,
      i === 3 || i === 6 ? { first_name: 'Name', last_name: `Only${i}` } : { first_name: 'Pat', last_name: `Doe${i}`, email: `pat.doe${i}@example.com` },
    );
  }
  return { h, installation, source: backfill.state, runs: h.bridge.backfillRuns };
}

async function enrichJobs(h: PipelineHarness) {
  return (await h.opened.queue.list()).filter((job) => job.kind === ENRICH_JOB);
}

describe.each(TEST_DATABASES)('on $name', (each) => {
  beforeAll(() => {
    database = each;
  });

  it('an estimate reads and counts without queueing anything; the confirmed run queues what it counted, in its group, and the workers enrich them', async () => {
    const { h, installation, runs } = await pipeline();
    const run = await runs.estimate(installation, { object: OBJECT, flags: {}, limit: null, restart: false });
    await h.drain();
    const estimated = await runs.find(installation.id, run.id);
    expect(estimated).toMatchObject({ state: 'estimated', scanned: 7, withMatchKey: 5, upToDate: 0, toEnrich: 5, quotaUnits: 0, resumed: false });
    expect(await enrichJobs(h)).toEqual([]);

    await runs.confirm(installation, run.id);
    await h.drain();
    expect(await runs.find(installation.id, run.id)).toMatchObject({ state: 'enqueued', enqueued: 5 });
    expect((await runs.jobs(run.id)).enrichments).toEqual({ done: 5 });
    expect((await h.bridge.pipelineStore.searchLog({ installationId: installation.id, limit: 50 })).length).toBe(5);
    // Confirmed once only.
    await expect(runs.confirm(installation, run.id)).rejects.toBeInstanceOf(BackfillRunError);
  });

  it('a cancel removes the run’s queued enrichments, and a resumed backfill estimates only what is left', async () => {
    const { h, installation, runs } = await pipeline();
    const run = await runs.estimate(installation, { object: OBJECT, flags: {}, limit: null, restart: false });
    await h.drain();
    await runs.confirm(installation, run.id);
    // One batch: the run job alone (its enrichments are queued by it, not yet run).
    await h.worker().runOnce();
    expect((await runs.jobs(run.id)).enrichments).toEqual({ queued: 5 });

    expect(await runs.cancel(installation.id, run.id)).toBe(5);
    expect(await enrichJobs(h)).toEqual([]);
    expect(await runs.find(installation.id, run.id)).toMatchObject({ state: 'cancelled' });
    await expect(runs.cancel(installation.id, run.id)).rejects.toBeInstanceOf(BackfillRunError);

    // Its pages were all queued, so the backfill is finished: a new one starts over.
    const again = await runs.estimate(installation, { object: OBJECT, flags: {}, limit: null, restart: false });
    await h.drain();
    expect(await runs.find(installation.id, again.id)).toMatchObject({ state: 'estimated', scanned: 7, toEnrich: 5 });
  });

  it('a cancel during the estimate stops it at its next page', async () => {
    const { h, installation, runs, source } = await pipeline();
    const run = await runs.estimate(installation, { object: OBJECT, flags: {}, limit: null, restart: false });
    source.before = async (cursor) => {
      if (cursor === 'c-3') await runs.cancel(installation.id, run.id);
    };
    await h.drain();
    expect(await runs.find(installation.id, run.id)).toMatchObject({ state: 'cancelled' });
    // Pages 1 and 2 were read; page 2's hook saw the cancel; page 3 was never asked for.
    expect(source.cursors).toEqual([null, 'c-3']);
  });

  it('a run whose CRM failed midway is delivered again and resumes at the saved cursor, queueing no record twice', async () => {
    const { h, installation, runs, source } = await pipeline();
    const run = await runs.estimate(installation, { object: OBJECT, flags: {}, limit: null, restart: false });
    await h.drain();
    await runs.confirm(installation, run.id);

    // The run queues page by page: pages 1 and 2 (c-1, c-2, c-4) are queued, the third fails.
    source.failOn = 'c-5';
    source.cursors.length = 0;
    await h.worker().runOnce();
    expect(source.cursors).toEqual([null, 'c-3', 'c-5']);
    const failed = await runs.find(installation.id, run.id);
    expect(failed).toMatchObject({ state: 'running', enqueued: 3, read: 4 });
    expect(failed?.error).toContain('CRM unreachable (trying again)');
    expect(runStatus(failed as BackfillRun, await runs.jobs(run.id), 'contacts').headline).toContain('Queueing: 3 of 5');

    // Delivered again (its retry brought forward): it reads from c-5 on, not from the first page.
    source.failOn = null;
    source.cursors.length = 0;
    await h.opened.queue.reschedule(installation.id, h.opened.clock.now());
    await h.drain();
    expect(source.cursors).toEqual(['c-5', 'c-7']);
    expect(await runs.find(installation.id, run.id)).toMatchObject({ state: 'enqueued', enqueued: 5, read: 7, error: null });
    const records = (await h.bridge.pipelineStore.searchLog({ installationId: installation.id, limit: 50 })).map((entry) => entry.recordId).sort();
    expect(records).toEqual(['c-1', 'c-2', 'c-4', 'c-5', 'c-7']);
  });

  it('a run that cannot read its CRM on any delivery fails with the reason, and a new estimate takes over from its cursor', async () => {
    const { h, installation, runs, source } = await pipeline();
    const run = await runs.estimate(installation, { object: OBJECT, flags: {}, limit: null, restart: false });
    await h.drain();
    await runs.confirm(installation, run.id);
    source.failOn = 'c-5';
    for (let attempt = 0; attempt < 3; attempt += 1) {
      await h.opened.queue.reschedule(installation.id, h.opened.clock.now());
      await h.worker().runOnce();
    }
    expect(await runs.find(installation.id, run.id)).toMatchObject({ state: 'failed', error: 'CRM unreachable', enqueued: 3 });
    source.failOn = null;
    const next = await runs.estimate(installation, { object: OBJECT, flags: {}, limit: null, restart: false });
    await h.drain();
    // c-1, c-2 and c-4 were queued (and enriched meanwhile); the rest is read from c-5.
    expect(await runs.find(installation.id, next.id)).toMatchObject({ state: 'estimated', resumed: true, scanned: 3, toEnrich: 2 });
  });

  it('an estimate whose CRM lists an id that is not one of its record ids fails at once, naming the id, and nothing is queued', async () => {
    const { h, installation, runs, source } = await pipeline();
    source.before = (cursor) =>
      cursor === 'c-3' ? Promise.reject(new BackfillRecordIdError('MemoryCRM', 'contact', 'c-3x', 'c- and digits')) : Promise.resolve();
    const run = await runs.estimate(installation, { object: OBJECT, flags: {}, limit: null, restart: false });

    await h.drain();

    // Not delivered again: the CRM would list the same id on every reading.
    expect(await runs.find(installation.id, run.id)).toMatchObject({ state: 'failed', error: expect.stringContaining('under the id "c-3x"') });
    expect(await h.opened.queue.countByState()).toEqual({ done: 1 });
    expect(await enrichJobs(h)).toEqual([]);
  });

  it('keeps one installation’s runs from another', async () => {
    const { h, installation, runs } = await pipeline();
    const other = await h.install();
    const run = await runs.estimate(installation, { object: OBJECT, flags: {}, limit: null, restart: false });
    expect(await runs.find(other.id, run.id)).toBeUndefined();
    await expect(runs.cancel(other.id, run.id)).rejects.toBeInstanceOf(BackfillRunError);
    await expect(runs.confirm(other, run.id)).rejects.toBeInstanceOf(BackfillRunError);
    expect(await runs.list(other.id)).toEqual([]);
  });

  it('refuses to start a backfill while an admin has paused the installation', async () => {
    const { h, installation, runs } = await pipeline();
    const run = await runs.estimate(installation, { object: OBJECT, flags: {}, limit: null, restart: false });
    await h.drain();
    const paused = await h.bridge.installations.pause(installation.id);
    await expect(runs.confirm(paused, run.id)).rejects.toThrow(/resume it before starting a backfill/);
    expect(await runs.find(installation.id, run.id)).toMatchObject({ state: 'estimated' });
    await runs.confirm(await h.bridge.installations.resume(installation.id), run.id);
    expect(await runs.find(installation.id, run.id)).toMatchObject({ state: 'running' });
  });

  it('refuses a second estimate while one is under way', async () => {
    const { installation, runs } = await pipeline();
    await runs.estimate(installation, { object: OBJECT, flags: {}, limit: null, restart: false });
    await expect(runs.estimate(installation, { object: OBJECT, flags: {}, limit: null, restart: false })).rejects.toThrow(/being estimated or queued/);
  });
});
