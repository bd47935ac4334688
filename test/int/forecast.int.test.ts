// The quota forecast of an installation (issue 14, item 4) on real parts: a production installation
// whose lookups the in-process service bills, its log, and the account's quota, at a fixed clock.
import { afterEach, describe, expect, it } from 'vitest';
import { usageForecast } from '../../bridge/forecast.ts';
import { startPipeline } from '../support/pipeline-harness.ts';
import { persona } from '../support/requests.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('usageForecast', () => {
  it('reads the units used this period, the seven-day average, and the day the quota runs out at that pace', async () => {
    const h = await startPipeline();
    cleanups.push(() => h.close());
    h.clock.now = new Date('2026-11-10T12:00:00Z');
    const installation = await h.install({ environment: 'production', account: { quotaLimit: 3 } });
    for (const [i, name] of ['Amanda Taylor', 'Daniel Garcia'].entries()) {
      const who = persona(name);
      h.crm.create('contact', `c-${i}`, { first_name: who.first_name, last_name: who.last_name, email: who.email });
      await h.enqueue(installation, { object: 'contact', recordId: `c-${i}` });
    }
    await h.drain();
    const forecast = await usageForecast({ store: h.opened.store, pipelineStore: h.bridge.pipelineStore }, installation, h.clock.now);
    // 2 of 3 used; 2 units in 7 days; the last unit lasts 3.5 days: 14 November, before the 1 December reset.
    expect(forecast).toMatchObject({ sandbox: false, used: 2, limit: 3, period: 'month', resetsAt: '2026-12-01T00:00:00.000Z', runsOutOn: '2026-11-14' });
    expect(forecast.dailyAverage).toBeCloseTo(2 / 7, 5);
  });
});
