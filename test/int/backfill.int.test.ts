// Backfill on real parts: the pipeline's SQLite store and queue (test/support/pipeline-harness.ts),
// records paged from the MemoryCrm or from the fake HubSpot through HubSpotApi.listContacts. What a plan
// counts (match keys, up-to-date records, quota units, the limit) and how enqueueing resumes from the
// saved cursor without duplicates and starts over once finished.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HubSpotApi } from '../../connectors/hubspot/api.ts';
import { hubspotRecordSource } from '../../connectors/hubspot/backfill.ts';
import { contactToRequest } from '../../connectors/hubspot/mapping.ts';
import type { CrmRecord } from '../../bridge/connector.ts';
import { HubSpotConnector, readProperties } from '../../connectors/hubspot/connector.ts';
import { BackfillProgress, BackfillRecordIdError, type RecordSource, planBackfill, runBackfill } from '../../bridge/backfill.ts';
import type { Installation } from '../../bridge/model.ts';
import { type FakeHubSpot, startFakeHubSpot } from '../support/fake-hubspot.ts';
import { MemoryCrmConnector, type Properties } from '../support/memory-crm.ts';
import { type PipelineHarness, startPipeline } from '../support/pipeline-harness.ts';
import { persona } from '../support/requests.ts';
import { TEST_DATABASES, type TestDatabase } from '../support/databases.ts';
import { HUBSPOT_PATHS } from '../../connectors/hubspot/version.ts';

/** The database of the block running now: every block below runs once per test database (SQLite, and PostgreSQL when TEST_DATABASE_URL is set). */
let database: TestDatabase | undefined;

const OBJECT = 'contact';
const DAY_MS = 86_400_000;

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function pipeline(): Promise<PipelineHarness> {
  const h = await startPipeline({ database });
  cleanups.push(() => h.close());
  return h;
}

/** `count` records in the MemoryCrm, each with a match key (an e-mail) unless `keyless` names it. */
function seed(h: PipelineHarness, count: number, keyless: readonly number[] = []): string[] {
  const ids: string[] = [];
  for (let i = 1; i <= count; i += 1) {
    const id = `c-${String(i).padStart(3, '0')}`;
    const properties: Properties = keyless.includes(i)
      ? { first_name: 'Name', last_name: `Only${i}` }
      : { first_name: 'Pat', last_name: `Doe${i}`, email: `pat.doe${i}@example.com` };
    h.crm.create(OBJECT, id, properties);
    ids.push(id);
  }
  return ids;
}

/**
 * The MemoryCrm's records in `ids` order, `pageSize` per page; the cursor is the next page's first id
 * (as HubSpot's `after`). Every cursor asked for is kept in `cursors`; after `failOn(cursor)`, asking
 * for that cursor fails (the CRM going away midway).
 */
function source(h: PipelineHarness, ids: readonly string[], pageSize: number) {
  const cursors: (string | null)[] = [];
  let failAt: string | null = null;
  const read: RecordSource = (cursor) => {
    cursors.push(cursor);
    if (cursor !== null && cursor === failAt) return Promise.reject(new Error('CRM unreachable'));
    const start = cursor === null ? 0 : ids.indexOf(cursor);
    if (start === -1) return Promise.reject(new Error(`unknown cursor ${cursor ?? ''}`));
    const records = ids.slice(start, start + pageSize).flatMap((id) => {
      const properties = h.crm.get(OBJECT, id);
      return properties === undefined ? [] : [{ id, properties }];
    });
    return Promise.resolve({ records, next: ids[start + pageSize] ?? null });
  };
  return {
    read,
    cursors,
    failOn(cursor: string) {
      failAt = cursor;
    },
  };
}

const PayloadSchema = z.object({ object: z.string(), recordId: z.string(), trigger: z.string().optional() });

async function queuedRecordIds(h: PipelineHarness, installation: Installation): Promise<string[]> {
  const jobs = await h.opened.queue.list({ state: 'queued' });
  return jobs.filter((j) => j.installationId === installation.id).map((j) => PayloadSchema.parse(j.payload).recordId);
}

async function backfillRow(h: PipelineHarness, installation: Installation) {
  return h.opened.db.selectFrom('backfills').selectAll().where('installation_id', '=', installation.id).where('object', '=', OBJECT).executeTakeFirst();
}

function planner(h: PipelineHarness, installation: Installation, read: RecordSource) {
  const progress = new BackfillProgress(h.opened.db);
  const plan = (options: { limit?: number; restart?: boolean } = {}) =>
    planBackfill({
      installation,
      object: OBJECT,
      connector: new MemoryCrmConnector(h.crm),
      source: read,
      store: h.bridge.pipelineStore,
      progress,
      now: h.clock.now,
      ...options,
    });
  return { progress, plan };
}

describe.each(TEST_DATABASES)('on $name', (each) => {
  beforeAll(() => {
    database = each;
  });

  describe('planBackfill', () => {
    it('counts only records with a match key, and reads without enqueueing or saving anything', async () => {
      const h = await pipeline();
      const installation = await h.install();
      const ids = seed(h, 7, [3, 6]);
      const { read } = source(h, ids, 3);
      const { plan } = planner(h, installation, read);

      const result = await plan();

      expect(result).toMatchObject({ startCursor: null, scanned: 7, withMatchKey: 5, upToDate: 0, toEnrich: 5 });
      expect(result.pages.flatMap((p) => p.ids)).toEqual(['c-001', 'c-002', 'c-004', 'c-005', 'c-007']);
      expect(result.pages.at(-1)).toMatchObject({ resumeAt: null, last: true });
      expect(await queuedRecordIds(h, installation)).toEqual([]);
      expect(await backfillRow(h, installation)).toBeUndefined();
    });

    it('skips records enriched recently with the same input, and counts them again when the input changed or the time is up', async () => {
      const h = await pipeline();
      const installation = await h.install();
      const amanda = persona('Amanda Taylor');
      h.crm.create(OBJECT, 'c-001', { first_name: amanda.first_name, last_name: amanda.last_name, email: amanda.email });
      h.crm.create(OBJECT, 'c-002', { first_name: 'Nobody', last_name: 'Known', email: 'nobody.known@example.com' });
      h.crm.create(OBJECT, 'c-003', { first_name: 'Pat', last_name: 'Doe', email: 'pat.doe@example.com' });
      // c-001 and c-002 go through the pipeline (one matches, one does not: both leave a state).
      await h.enqueue(installation, { object: OBJECT, recordId: 'c-001' });
      await h.enqueue(installation, { object: OBJECT, recordId: 'c-002' });
      await h.drain();
      const states = await h.bridge.pipelineStore.recordStates(installation.id, OBJECT, ['c-001', 'c-002', 'c-003']);
      expect([...states.keys()].sort()).toEqual(['c-001', 'c-002']);
      const { read } = source(h, ['c-001', 'c-002', 'c-003'], 100);
      const { plan } = planner(h, installation, read);

      const first = await plan();
      expect(first).toMatchObject({ scanned: 3, withMatchKey: 3, upToDate: 2, toEnrich: 1 });
      expect(first.pages.flatMap((p) => p.ids)).toEqual(['c-003']);

      // A human edits c-002's e-mail: a new input, so it needs enriching again.
      h.crm.edit(OBJECT, 'c-002', { email: 'nobody.else@example.com' });
      const edited = await plan();
      expect(edited).toMatchObject({ upToDate: 1, toEnrich: 2 });
      expect(edited.pages.flatMap((p) => p.ids)).toEqual(['c-002', 'c-003']);

      // Past the installation's re-enrichment age, the unchanged one is due again too.
      h.clock.now = new Date(h.clock.now.getTime() + (installation.settings.reenrichAfterDays + 1) * DAY_MS);
      const later = await plan();
      expect(later).toMatchObject({ upToDate: 0, toEnrich: 3 });
    });

    it('prices nothing in the sandbox and one quota unit per record to enrich in production', async () => {
      const h = await pipeline();
      const sandbox = await h.install({ environment: 'sandbox' });
      const production = await h.install({ environment: 'production' });
      const ids = seed(h, 5, [2]);

      const inSandbox = await planner(h, sandbox, source(h, ids, 2).read).plan();
      const inProduction = await planner(h, production, source(h, ids, 2).read).plan();

      expect(inSandbox).toMatchObject({ toEnrich: 4, quotaUnits: 0 });
      expect(inProduction).toMatchObject({ toEnrich: 4, quotaUnits: 4 });
      expect(await planner(h, production, source(h, ids, 2).read).plan({ limit: 3 })).toMatchObject({ toEnrich: 3, quotaUnits: 3 });
    });

    it('--limit stops after N records to enrich, reading no further page than it needs', async () => {
      const h = await pipeline();
      const installation = await h.install();
      const ids = seed(h, 10, [2]);
      const { read, cursors } = source(h, ids, 3);
      const { plan } = planner(h, installation, read);

      const result = await plan({ limit: 4 });

      // Pages c-001..003 (two with a key) and c-004..006 (the limit is reached at c-005).
      expect(result.toEnrich).toBe(4);
      expect(result.pages.flatMap((p) => p.ids)).toEqual(['c-001', 'c-003', 'c-004', 'c-005']);
      expect(result.scanned).toBe(5);
      expect(cursors).toEqual([null, 'c-004']);
      // The page cut short resumes at its own start.
      expect(result.pages.at(-1)).toMatchObject({ resumeAt: 'c-004', last: false });
    });
  });

  describe('runBackfill', () => {
    it('enqueues page by page and saves the cursor; interrupted after the first page, a rerun continues from it with no duplicate', async () => {
      const h = await pipeline();
      const installation = await h.install();
      const ids = seed(h, 7);
      const { read, cursors } = source(h, ids, 3);
      const { plan, progress } = planner(h, installation, read);

      const first = await plan();
      expect(first.toEnrich).toBe(7);
      // Stopped (Ctrl-C, a crash) while enqueueing the second page's first record.
      const interrupted = await runBackfill(first, {
        queue: h.opened.queue,
        progress,
        onProgress: (done) => {
          if (done === 4) throw new Error('interrupted');
        },
      }).catch((e: unknown) => e);
      expect(interrupted).toEqual(new Error('interrupted'));
      expect(await queuedRecordIds(h, installation)).toEqual(['c-001', 'c-002', 'c-003', 'c-004']);
      expect(await backfillRow(h, installation)).toMatchObject({ cursor: 'c-004', state: 'running' });

      cursors.length = 0;
      const resumed = await plan();
      expect(resumed.startCursor).toBe('c-004');
      expect(cursors).toEqual(['c-004', 'c-007']);
      expect(resumed).toMatchObject({ scanned: 4, toEnrich: 4 });
      const outcome = await runBackfill(resumed, { queue: h.opened.queue, progress });

      // c-004 was queued already: the queue keeps one job per record.
      expect(outcome).toEqual({ enqueued: 3, duplicates: 1 });
      const queued = await queuedRecordIds(h, installation);
      expect(queued.sort()).toEqual(ids);
      expect(await backfillRow(h, installation)).toMatchObject({ cursor: null, state: 'done' });
    });

    it('a source failing midway plans nothing, enqueues nothing and leaves the saved cursor as it was', async () => {
      const h = await pipeline();
      const installation = await h.install();
      const ids = seed(h, 6);
      const crm = source(h, ids, 2);
      const { plan, progress } = planner(h, installation, crm.read);
      await runBackfill(await plan({ limit: 2 }), { queue: h.opened.queue, progress });
      expect(await backfillRow(h, installation)).toMatchObject({ cursor: 'c-003', state: 'running' });

      crm.failOn('c-005');
      await expect(plan()).rejects.toThrow('CRM unreachable');

      expect(await queuedRecordIds(h, installation)).toEqual(['c-001', 'c-002']);
      expect(await backfillRow(h, installation)).toMatchObject({ cursor: 'c-003', state: 'running' });
    });

    it('a limited run resumes where the limit stopped it; a finished backfill starts over on the next run; --restart starts over at once', async () => {
      const h = await pipeline();
      const installation = await h.install();
      const ids = seed(h, 5);
      const { read } = source(h, ids, 2);
      const { plan, progress } = planner(h, installation, read);

      // Limit 3: c-001, c-002, then c-003 of page c-003..004, which resumes at its own start.
      expect(await runBackfill(await plan({ limit: 3 }), { queue: h.opened.queue, progress })).toEqual({ enqueued: 3, duplicates: 0 });
      expect(await backfillRow(h, installation)).toMatchObject({ cursor: 'c-003', state: 'running' });

      const rest = await plan();
      expect(rest.startCursor).toBe('c-003');
      expect(await runBackfill(rest, { queue: h.opened.queue, progress })).toEqual({ enqueued: 2, duplicates: 1 });
      expect((await queuedRecordIds(h, installation)).sort()).toEqual(ids);
      expect(await backfillRow(h, installation)).toMatchObject({ state: 'done' });

      // The workers enrich everything; the next backfill reads from the start and finds all up to date.
      await h.drain();
      const again = await plan();
      expect(again).toMatchObject({ startCursor: null, scanned: 5, upToDate: 5, toEnrich: 0 });

      // --restart: from the first record even though a backfill stopped midway.
      h.clock.now = new Date(h.clock.now.getTime() + 40 * DAY_MS);
      await runBackfill(await plan({ limit: 3 }), { queue: h.opened.queue, progress });
      expect(await backfillRow(h, installation)).toMatchObject({ cursor: 'c-003', state: 'running' });
      expect((await plan()).startCursor).toBe('c-003');
      const restarted = await plan({ restart: true });
      expect(restarted).toMatchObject({ startCursor: null, scanned: 5, toEnrich: 5 });
    });
  });

  describe('backfill from the fake HubSpot (HubSpotApi.listContacts)', () => {
    let fake: FakeHubSpot | undefined;
    afterEach(async () => {
      await fake?.close();
      fake = undefined;
    });

    it('pages past 10,000 contacts with the list endpoint and `after`, never the search endpoint, counting only those with a match key', async () => {
      fake = await startFakeHubSpot();
      const total = 10_250;
      for (let i = 0; i < total; i += 1) {
        // Every 50th contact has only a first name: no match key.
        const properties = i % 50 === 0 ? { firstname: `Solo${i}` } : { firstname: 'Pat', lastname: `Doe${i}`, email: `pat.doe${i}@example.com` };
        await fake.createContact(properties, { notify: false });
      }
      const h = await pipeline();
      const installation = await h.install();
      const hub = fake;
      const api = new HubSpotApi({
        portalId: 'backfill-10k',
        apiBaseUrl: hub.url,
        accessToken: () => Promise.resolve(hub.tokens.staticToken),
        requestsPer10s: 100_000,
      });
      const properties = readProperties();

      const result = await planBackfill({
        installation,
        object: OBJECT,
        connector: new HubSpotConnector(api),
        source: async (cursor) => {
          const page = await api.listContacts(cursor, properties);
          return { records: page.contacts, next: page.after };
        },
        store: h.bridge.pipelineStore,
        progress: new BackfillProgress(h.opened.db),
      });

      const keyless = Math.ceil(total / 50);
      expect(result).toMatchObject({ scanned: total, withMatchKey: total - keyless, toEnrich: total - keyless, quotaUnits: 0 });
      expect(new Set(result.pages.flatMap((p) => p.ids)).size).toBe(total - keyless);
      const calls = hub.requests.filter((r) => r.path.startsWith('/crm/'));
      expect(calls.every((r) => r.method === 'GET' && r.path === HUBSPOT_PATHS.contacts && r.status === 200)).toBe(true);
      expect(calls).toHaveLength(Math.ceil(total / 100));
      expect(calls[0]?.query.after).toBeUndefined();
      expect(calls.slice(1).every((r) => r.query.after?.length === 1)).toBe(true);
      expect(calls.every((r) => r.query.limit?.[0] === '100')).toBe(true);
      expect(hub.requests.some((r) => r.path.includes('/search'))).toBe(false);
    }, 60_000);
  });
});

describe('record ids in a HubSpot backfill', () => {
  /** What a plan asks of the connector: HubSpot's own mapping of a contact. */
  const HUBSPOT_MAPPING = { toRequest: (_object: string, record: CrmRecord) => contactToRequest(record.properties) };

  /** HubSpot's contact list as `listContacts` reads it, one page per entry, the ids as listed. */
  function listing(pages: readonly (readonly string[])[]) {
    const api = {
      calls: 0,
      listContacts(after: string | null) {
        api.calls += 1;
        const index = after === null ? 0 : Number(after);
        const ids = pages[index] ?? [];
        const contacts = ids.map((id) => ({ id, properties: { firstname: 'Pat', lastname: 'Doe', email: `pat.doe.${index}@example.com` } }));
        return Promise.resolve({ contacts, after: index + 1 < pages.length ? String(index + 1) : null });
      },
    };
    return api;
  }

  it.each([
    ['letters', '12ab'],
    ['a path', '101/../../owners'],
    ['a bidi override', '\u202e1011'],
    ['nothing', ''],
  ])('accepts only ids a webhook would (digits): a contact listed with %s is refused by its id, and nothing is queued', async (_what, bad) => {
    const h = await pipeline();
    const installation = await h.install();
    const api = listing([
      ['101', '102'],
      ['103', bad, '104'],
    ]);
    const progress = new BackfillProgress(h.opened.db);

    const planned = planBackfill({
      installation,
      object: OBJECT,
      connector: HUBSPOT_MAPPING,
      source: hubspotRecordSource({ api }),
      store: h.bridge.pipelineStore,
      progress,
    });

    await expect(planned).rejects.toBeInstanceOf(BackfillRecordIdError);
    await expect(planned).rejects.toThrow(
      `HubSpot listed a contact under the id ${JSON.stringify(bad).replace('\u202e', '\\u{202e}')}, which is not a HubSpot contact id (digits only)`,
    );
    expect(await queuedRecordIds(h, installation)).toEqual([]);
    expect(await progress.cursor(installation.id, OBJECT)).toBeUndefined();
  });

  it('takes the digits HubSpot lists, as before', async () => {
    const h = await pipeline();
    const installation = await h.install();
    const api = listing([['101', '102'], ['103']]);

    const plan = await planBackfill({
      installation,
      object: OBJECT,
      connector: HUBSPOT_MAPPING,
      source: hubspotRecordSource({ api }),
      store: h.bridge.pipelineStore,
      progress: new BackfillProgress(h.opened.db),
    });

    expect(plan.pages.flatMap((page) => page.ids)).toEqual(['101', '102', '103']);
  });
});
