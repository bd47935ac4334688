// One lookup per person (issue 14, item 1), on real parts: the pipeline, its store and queue on each
// test database, the in-process service with a production account (quota counted), the MemoryCrm as
// the CRM. A record whose normalized request another record's lookup answered within the re-enrichment
// age, for the same data version, gets that answer for no unit, logged with reused_from; the answers
// are sealed at rest, kept no longer than the age, erased with their record and with the installation,
// and not kept at all when the installation turns reuse off.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { currentPeriod } from '../../core/limits/quota-period.ts';
import type { Installation, InstallationSettings } from '../../bridge/model.ts';
import { type PipelineHarness, startPipeline } from '../support/pipeline-harness.ts';
import { PersonaProductionMatcher } from '../support/persona-matcher.ts';
import { persona } from '../support/requests.ts';
import { TEST_DATABASES, type TestDatabase } from '../support/databases.ts';

let database: TestDatabase | undefined;
const OBJECT = 'contact';
const DAY_MS = 86_400_000;
const amanda = persona('Amanda Taylor');

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function production(settings: Partial<InstallationSettings> = {}, maxBatch?: number): Promise<{ h: PipelineHarness; installation: Installation }> {
  const h = await startPipeline({ database, ...(maxBatch === undefined ? {} : { maxBatch }) });
  cleanups.push(() => h.close());
  const installation = await h.install({ environment: 'production', settings, account: { quotaLimit: 1000 } });
  return { h, installation };
}

/** Amanda as one CRM record holds her; `variant` holds the same person as a duplicate would (other case, spacing, phone format). */
function amandaRecord(h: PipelineHarness, id: string, variant = false): void {
  h.crm.create(
    OBJECT,
    id,
    variant
      ? { first_name: ' amanda ', last_name: 'TAYLOR', email: `  ${amanda.email.toUpperCase()} ` }
      : { first_name: amanda.first_name, last_name: amanda.last_name, email: amanda.email },
  );
}

async function enrich(h: PipelineHarness, installation: Installation, ...ids: string[]): Promise<void> {
  for (const id of ids) await h.enqueue(installation, { object: OBJECT, recordId: id });
  await h.drain();
}

async function entryOf(h: PipelineHarness, installation: Installation, id: string) {
  const entries = await h.bridge.pipelineStore.searchLog({ installationId: installation.id, recordId: id, limit: 10 });
  return entries[0];
}

async function unitsUsed(h: PipelineHarness, installation: Installation): Promise<number> {
  if (installation.target.kind !== 'local') throw new Error('local target expected');
  return h.opened.store.quotaUsed(installation.target.tokenId, currentPeriod('month', h.clock.now).key);
}

async function keptRows(h: PipelineHarness, installation: Installation) {
  return h.opened.db.selectFrom('reusable_answers').selectAll().where('installation_id', '=', installation.id).execute();
}

describe.each(TEST_DATABASES)('on $name', (each) => {
  beforeAll(() => {
    database = each;
  });

  it('a CRM duplicate (the same person in other case and spacing) gets the kept answer for no unit, logged enriched with reused_from', async () => {
    const { h, installation } = await production();
    amandaRecord(h, 'c-1');
    await enrich(h, installation, 'c-1');
    amandaRecord(h, 'c-2', true);
    await enrich(h, installation, 'c-2');

    expect(await entryOf(h, installation, 'c-1')).toMatchObject({ outcome: 'enriched', quotaConsumed: 1 });
    const second = await entryOf(h, installation, 'c-2');
    expect(second).toMatchObject({ outcome: 'enriched', quotaConsumed: 0, reusedFrom: 'contact/c-1', latencyMs: null });
    expect(await unitsUsed(h, installation)).toBe(1);
    // Written to the duplicate as to the first.
    expect(h.crm.get(OBJECT, 'c-2')?.wf_household_windfall_id).toBe(h.crm.get(OBJECT, 'c-1')?.wf_household_windfall_id);
    expect(h.crm.get(OBJECT, 'c-2')?.wf_household_windfall_id).toBeTruthy();
  });

  it('duplicates in one batch cost one lookup: the others follow it', async () => {
    const { h, installation } = await production();
    amandaRecord(h, 'c-1');
    amandaRecord(h, 'c-2', true);
    amandaRecord(h, 'c-3', true);
    await enrich(h, installation, 'c-1', 'c-2', 'c-3');
    const entries = await Promise.all(['c-1', 'c-2', 'c-3'].map((id) => entryOf(h, installation, id)));
    expect(entries.map((e) => e?.quotaConsumed)).toEqual([1, 0, 0]);
    expect(entries.map((e) => e?.reusedFrom)).toEqual([undefined, 'contact/c-1', 'contact/c-1']);
    expect(await unitsUsed(h, installation)).toBe(1);
    expect(h.crm.get(OBJECT, 'c-3')?.wf_household_windfall_id).toBe(h.crm.get(OBJECT, 'c-1')?.wf_household_windfall_id);
  });

  it('a duplicate in a later slice of the same batch reuses the earlier slice’s lookup (kept, not yet saved)', async () => {
    // Two records a CRM call: c-1 and c-2 in the first slice, c-3 (Amanda again) in the second.
    const { h, installation } = await production({}, 2);
    amandaRecord(h, 'c-1');
    h.crm.create(OBJECT, 'c-2', { first_name: 'Pat', last_name: 'Nobody', email: 'pat.nobody@example.com' });
    amandaRecord(h, 'c-3', true);
    await enrich(h, installation, 'c-1', 'c-2', 'c-3');
    expect(await entryOf(h, installation, 'c-3')).toMatchObject({ outcome: 'enriched', quotaConsumed: 0, reusedFrom: 'contact/c-1' });
    expect(await unitsUsed(h, installation)).toBe(2);
    expect((await keptRows(h, installation)).map((row) => row.record_id).sort()).toEqual(['c-1', 'c-2']);
  });

  it('a no_match is reused likewise', async () => {
    const { h, installation } = await production();
    h.crm.create(OBJECT, 'c-1', { first_name: 'Pat', last_name: 'Nobody', email: 'pat.nobody@example.com' });
    await enrich(h, installation, 'c-1');
    h.crm.create(OBJECT, 'c-2', { first_name: 'PAT', last_name: 'nobody', email: 'Pat.Nobody@Example.com' });
    await enrich(h, installation, 'c-2');
    expect(await entryOf(h, installation, 'c-2')).toMatchObject({ outcome: 'no_match', quotaConsumed: 0, reusedFrom: 'contact/c-1' });
    expect(await unitsUsed(h, installation)).toBe(1);
  });

  it('refuses a reuse across a data-version change: the duplicate is looked up against the new snapshot', async () => {
    const { h, installation } = await production();
    amandaRecord(h, 'c-1');
    await enrich(h, installation, 'c-1');
    (h.service.productionMatcher as PersonaProductionMatcher).dataVersion = 'next-week';
    amandaRecord(h, 'c-2', true);
    await enrich(h, installation, 'c-2');
    const second = await entryOf(h, installation, 'c-2');
    expect(second).toMatchObject({ outcome: 'enriched', quotaConsumed: 1 });
    expect(second?.reusedFrom).toBeUndefined();
    expect(await unitsUsed(h, installation)).toBe(2);
    // The new answer is the one kept now, and a third duplicate reuses it.
    amandaRecord(h, 'c-3', true);
    await enrich(h, installation, 'c-3');
    expect(await entryOf(h, installation, 'c-3')).toMatchObject({ quotaConsumed: 0, reusedFrom: 'contact/c-2' });
  });

  it('erases the kept answer with the record it came from: a duplicate afterwards is looked up', async () => {
    const { h, installation } = await production();
    amandaRecord(h, 'c-1');
    await enrich(h, installation, 'c-1');
    expect(await keptRows(h, installation)).toHaveLength(1);
    await h.bridge.pipelineStore.eraseRecord(installation.id, OBJECT, 'c-1');
    expect(await keptRows(h, installation)).toEqual([]);
    amandaRecord(h, 'c-2', true);
    await enrich(h, installation, 'c-2');
    expect(await entryOf(h, installation, 'c-2')).toMatchObject({ quotaConsumed: 1 });
    expect(await unitsUsed(h, installation)).toBe(2);
  });

  it('keeps an answer no longer than the re-enrichment age', async () => {
    const { h, installation } = await production({ reenrichAfterDays: 7 });
    amandaRecord(h, 'c-1');
    await enrich(h, installation, 'c-1');
    h.clock.now = new Date(h.clock.now.getTime() + 8 * DAY_MS);
    amandaRecord(h, 'c-2', true);
    await enrich(h, installation, 'c-2');
    expect(await entryOf(h, installation, 'c-2')).toMatchObject({ quotaConsumed: 1 });
    expect((await entryOf(h, installation, 'c-2'))?.reusedFrom).toBeUndefined();
    // The old answer was purged; only c-2's is kept.
    expect((await keptRows(h, installation)).map((row) => row.record_id)).toEqual(['c-2']);
  });

  it('seals the kept answers at rest', async () => {
    const { h, installation } = await production();
    amandaRecord(h, 'c-1');
    await enrich(h, installation, 'c-1');
    const [row] = await keptRows(h, installation);
    const windfallId = String(h.crm.get(OBJECT, 'c-1')?.wf_household_windfall_id);
    expect(row?.answer).toBeTruthy();
    expect(row?.answer).not.toContain(windfallId);
    expect(row?.answer.toLowerCase()).not.toContain('amanda');
    expect(row?.answer).not.toContain('household');
  });

  it('does not keep or reuse answers when the installation turns reuse off, and forgets those it kept', async () => {
    const { h, installation } = await production();
    amandaRecord(h, 'c-1');
    await enrich(h, installation, 'c-1');
    expect(await keptRows(h, installation)).toHaveLength(1);
    await h.bridge.installations.updateSettings(installation.id, { ...installation.settings, reuseAnswers: false });
    amandaRecord(h, 'c-2', true);
    await enrich(h, installation, 'c-2');
    expect(await entryOf(h, installation, 'c-2')).toMatchObject({ quotaConsumed: 1 });
    expect(await unitsUsed(h, installation)).toBe(2);
    expect(await keptRows(h, installation)).toEqual([]);
  });

  it('forgets the kept answers when the installation is disconnected', async () => {
    const { h, installation } = await production();
    amandaRecord(h, 'c-1');
    await enrich(h, installation, 'c-1');
    expect(await keptRows(h, installation)).toHaveLength(1);
    await h.bridge.installations.remove(installation.id);
    expect(await keptRows(h, installation)).toEqual([]);
  });

  it('a forced re-enrichment looks up again even when an answer is kept', async () => {
    const { h, installation } = await production();
    amandaRecord(h, 'c-1');
    amandaRecord(h, 'c-2', true);
    await enrich(h, installation, 'c-1');
    await h.enqueue(installation, { object: OBJECT, recordId: 'c-2', force: true });
    await h.drain();
    expect(await entryOf(h, installation, 'c-2')).toMatchObject({ quotaConsumed: 1 });
  });
});
