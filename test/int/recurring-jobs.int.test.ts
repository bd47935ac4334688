// Jobs a CRM module runs on a schedule for each installation (HubSpot's journal pull): queued for
// every active installation of its CRM when the schedule starts, one waiting at a time, none for a
// paused installation or another CRM's.
import { afterEach, describe, expect, it } from 'vitest';
import { RecurringJobs } from '../../bridge/recurring.ts';
import { type PipelineHarness, startPipeline } from '../support/pipeline-harness.ts';

const harnesses: PipelineHarness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.close();
});

describe('recurring jobs', () => {
  it('queue one job for each active installation of the CRM, and no second one while the first waits', async () => {
    const h = await startPipeline();
    harnesses.push(h);
    const active = await h.install({ externalAccountId: 'portal-active' });
    const paused = await h.install({ externalAccountId: 'portal-paused' });
    await h.bridge.installations.pause(paused.id);
    const provider = active.provider;
    const ours = {
      provider,
      recurring: {
        everyMs: 3_600_000,
        job: (installation: { id: string }) => ({ installationId: installation.id, kind: 'pull', payload: {}, dedupeKey: `pull:${installation.id}` }),
      },
    };
    const theirs = {
      provider: 'another-crm',
      recurring: { everyMs: 3_600_000, job: (installation: { id: string }) => ({ installationId: installation.id, kind: 'other', payload: {} }) },
    };
    const recurring = new RecurringJobs({ store: h.bridge.pipelineStore, queue: h.opened.queue, schedules: [ours, theirs] });
    expect(await recurring.queue(ours)).toBe(1);
    expect(await recurring.queue(ours)).toBe(0);
    expect(await recurring.queue(theirs)).toBe(0);
    const jobs = await h.opened.db.selectFrom('jobs').select(['installation_id', 'kind']).where('kind', 'in', ['pull', 'other']).execute();
    expect(jobs).toEqual([{ installation_id: active.id, kind: 'pull' }]);
  });
});
