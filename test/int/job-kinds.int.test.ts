// The worker runs a claimed batch by job kind (bridge/job-kinds.ts), on the real queue.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../bridge/job-queue.ts';
import { JobKinds, settledBy } from '../../bridge/job-kinds.ts';
import { ENRICH_JOB } from '../../bridge/enrich-job.ts';
import { type PipelineHarness, startPipeline } from '../support/pipeline-harness.ts';
import { persona } from '../support/requests.ts';
import { TEST_DATABASES, type TestDatabase } from '../support/databases.ts';

/** The database of the block running now: every block below runs once per test database (SQLite, and PostgreSQL when TEST_DATABASE_URL is set). */
let database: TestDatabase | undefined;

let h: PipelineHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function jobsByState(harness: PipelineHarness): Promise<Record<string, string[]>> {
  const all = await harness.opened.queue.list({ limit: 100 });
  const out: Record<string, string[]> = {};
  for (const job of all) out[job.state] = [...(out[job.state] ?? []), job.kind].sort();
  return out;
}

describe.each(TEST_DATABASES)('on $name', (each) => {
  beforeAll(() => {
    database = each;
  });

  describe('Job kinds', () => {
    it('each kind of a batch goes to its own handler: enrich to the pipeline, a connector kind to its task, an unknown kind fails for good', async () => {
      h = await startPipeline({ database });
      const installation = await h.install();
      const amanda = persona('Amanda Taylor');
      h.crm.create('contact', 'c1', { first_name: amanda.first_name, last_name: amanda.last_name, email: amanda.email });
      await h.enqueue(installation, { object: 'contact', recordId: 'c1' });
      const { queue } = h.opened;
      await queue.enqueue({ installationId: installation.id, kind: 'expand', payload: { n: 1 } });
      await queue.enqueue({ installationId: installation.id, kind: 'expand', payload: { n: 2 } });
      await queue.enqueue({ installationId: installation.id, kind: 'from-a-newer-version', payload: {} });
      const expanded: unknown[] = [];
      const pipeline = h.bridge.pipeline;
      const kinds = new JobKinds(queue)
        .work(ENRICH_JOB, (jobs, { workerId, signals }) => pipeline.processBatch(jobs, workerId, signals))
        .work(
          'expand',
          settledBy('expand', { store: h.bridge.pipelineStore, queue }, async (_installation, jobs: readonly Job[]) => {
            expanded.push(...jobs.map((job) => job.payload));
          }),
        );

      const claimed = await queue.claimBatch({ workerId: 'w', limit: 10, leaseMs: 60_000 });
      const summary = await kinds.processBatch(claimed, 'w');

      expect(expanded).toEqual([{ n: 1 }, { n: 2 }]);
      expect(summary).toMatchObject({ installationId: installation.id, jobs: 4, outcomes: { enriched: 1 }, leaseLost: 0 });
      expect(await jobsByState(h)).toEqual({ done: ['enrich', 'expand', 'expand'], dead: ['from-a-newer-version'] });
    });

    it("a connector kind's task that throws sends its jobs back to the queue with the queue's backoff, and leaves the other kinds done", async () => {
      h = await startPipeline({ database });
      const installation = await h.install();
      const { queue } = h.opened;
      await queue.enqueue({ installationId: installation.id, kind: 'flaky', payload: {} });
      await queue.enqueue({ installationId: installation.id, kind: 'steady', payload: {} });
      const deps = { store: h.bridge.pipelineStore, queue };
      const kinds = new JobKinds(queue)
        .work(
          'flaky',
          settledBy('flaky', deps, () => Promise.reject(new Error('the CRM said 503'))),
        )
        .work(
          'steady',
          settledBy('steady', deps, () => Promise.resolve()),
        );

      await kinds.processBatch(await queue.claimBatch({ workerId: 'w', limit: 10, leaseMs: 60_000 }), 'w');

      expect(await jobsByState(h)).toEqual({ queued: ['flaky'], done: ['steady'] });
      const [flaky] = await queue.list({ state: 'queued' });
      expect(flaky?.lastError).toBe('flaky: the CRM said 503');
    });

    it('a kind has one handler: registering a second is refused', async () => {
      h = await startPipeline({ database });
      const kinds = new JobKinds(h.opened.queue).work('a', () => Promise.reject(new Error('unused')));
      expect(() => kinds.work('a', () => Promise.reject(new Error('unused')))).toThrow('job kind "a" has a handler already');
    });
  });
});
