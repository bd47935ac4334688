// Remembered deliveries: a redelivered notification id is recognised, per provider, and forgotten
// once it is older than any redelivery window.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DELIVERY_MEMORY_MS, InboundDeliveries } from '../../bridge/deliveries.ts';
import { type PipelineHarness, startPipeline } from '../support/pipeline-harness.ts';
import { TEST_DATABASES, type TestDatabase } from '../support/databases.ts';

/** The database of the block running now: every block below runs once per test database (SQLite, and PostgreSQL when TEST_DATABASE_URL is set). */
let database: TestDatabase | undefined;

let h: PipelineHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe.each(TEST_DATABASES)('on $name', (each) => {
  beforeAll(() => {
    database = each;
  });

  describe('Inbound deliveries', () => {
    it('reports only ids not delivered before, per provider', async () => {
      h = await startPipeline({ database });
      const deliveries = new InboundDeliveries(h.opened.db);
      expect(await deliveries.unseen('salesforce', ['n1', 'n2', 'n2'])).toEqual(new Set(['n1', 'n2']));
      await deliveries.remember('salesforce', ['n1', 'n2']);
      expect(await deliveries.unseen('salesforce', ['n1', 'n2', 'n3'])).toEqual(new Set(['n3']));
      expect(await deliveries.unseen('other', ['n1'])).toEqual(new Set(['n1']));
      // Remembering twice is harmless.
      await deliveries.remember('salesforce', ['n1']);
    });

    it('forgets ids older than the redelivery window when it prunes', async () => {
      h = await startPipeline({ database });
      const deliveries = new InboundDeliveries(h.opened.db);
      const long = new Date(Date.now() - DELIVERY_MEMORY_MS - 60_000);
      await deliveries.remember('salesforce', ['old'], long);
      // Out of the window it no longer counts, even before a prune removes it.
      expect(await deliveries.unseen('salesforce', ['old'])).toEqual(new Set(['old']));
      // The next remember an hour or more later prunes.
      await deliveries.remember('salesforce', ['new'], new Date(long.getTime() + DELIVERY_MEMORY_MS + 3_700_000));
      expect(await deliveries.unseen('salesforce', ['old', 'new'])).toEqual(new Set(['old']));
    });
  });
});
