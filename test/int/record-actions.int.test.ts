// The CRM-neutral record view and actions on real parts (SQLite or PostgreSQL store and queue, the real
// EnrichService, the pipeline, backfill planning and the scheduled refresh), with MemoryCrm standing
// for the CRM: the record view (status, provenance, the actions with their cost), the record actions
// (Enrich now, Undo, Exclude, Include again) each logged with its actor, and the status property
// written for a skip. One test per rule.
import { rmSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BackfillProgress, planBackfill } from '../../bridge/backfill.ts';
import type { Actor, Installation, InstallationSettings } from '../../bridge/model.ts';
import { actorForLog, type RecordRef } from '../../bridge/record-actions.ts';
import { RecordViewSchema } from '../../bridge/record-view.ts';
import { Refresher } from '../../bridge/refresh.ts';
import { PERSONAS, type Persona } from '../../core/sandbox/personas.ts';
import { TEST_DATABASES, type TestDatabase } from '../support/databases.ts';
import { MemoryCrmConnector, type Properties, propertyName as p } from '../support/memory-crm.ts';
import { type PipelineHarness, startPipeline } from '../support/pipeline-harness.ts';

let database: TestDatabase | undefined;

const CONTACT = 'contact';
const DAY_MS = 86_400_000;
const ALICE: Actor = { userId: 'u-17', email: 'alice.admin@example.org' };
const BOB: Actor = { userId: 'u-42', email: 'bob@example.org' };
const STATUS = p('status.enrichment_status');
const CHECKBOX = p('control.do_not_enrich');

function persona(first: string): Persona {
  const found = PERSONAS.find((candidate) => candidate.first_name === first);
  if (found === undefined) throw new Error(`no sandbox persona ${first}`);
  return found;
}
const AMANDA = persona('Amanda');
const DANIEL = persona('Daniel');
const MICHELLE = persona('Michelle');

const contact = (who: Persona): Properties => ({ first_name: who.first_name, last_name: who.last_name, email: who.email });

const harnesses: PipelineHarness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) {
    await h.close();
    rmSync(h.dataDir, { recursive: true, force: true });
  }
});

async function setUp(settings: Partial<InstallationSettings> = {}, environment: 'sandbox' | 'production' = 'production') {
  const h = await startPipeline({ database });
  harnesses.push(h);
  const inst = await h.install({ environment, settings, account: { quotaLimit: 100_000 } });
  return { h, inst };
}

const ref = (inst: Installation, recordId: string): RecordRef => ({ installationId: inst.id, object: CONTACT, recordId });

/** A contact created in the CRM, its creation webhook's job queued and run. */
async function created(h: PipelineHarness, inst: Installation, id: string, properties: Properties): Promise<void> {
  h.crm.create(CONTACT, id, properties);
  await h.enqueue(inst, { object: CONTACT, recordId: id, trigger: 'create' });
  await h.drain();
}

/** An edit webhook's job for the record, run. */
async function edited(h: PipelineHarness, inst: Installation, id: string): Promise<void> {
  await h.enqueue(inst, { object: CONTACT, recordId: id, trigger: 'update' });
  await h.drain();
}

async function outcomes(h: PipelineHarness, inst: Installation, recordId: string): Promise<string[]> {
  return (await h.bridge.pipelineStore.listLog({ installationId: inst.id, recordId })).map((entry) => entry.outcome);
}

async function view(h: PipelineHarness, inst: Installation, recordId: string) {
  const result = await h.bridge.records.view(ref(inst, recordId));
  if (!result.ok) throw new Error(`no view: ${result.reason}`);
  // What the card and the component receive: the view as JSON, and it parses as its schema.
  return RecordViewSchema.parse(JSON.parse(JSON.stringify(result.view)));
}

describe.each(TEST_DATABASES)('on $name', (each) => {
  beforeAll(() => {
    database = each;
  });

  it('status and provenance after an enrichment', async () => {
    const { h, inst } = await setUp();
    await created(h, inst, 'c1', contact(AMANDA));
    const v = await view(h, inst, 'c1');
    const state = (await h.bridge.pipelineStore.recordStates(inst.id, CONTACT, ['c1'])).get('c1');
    expect(v.status).toMatchObject({ value: 'enriched', reason: null });
    expect(v.lastEnrichedAt).toBe(state?.enrichedAt);
    expect(v.dataVersion).toBe(state?.dataVersion ?? null);
    expect(v.household).toEqual({ matched: true, confidence: AMANDA.household?.confidence });
    expect(v.career).toEqual({ matched: true, confidence: AMANDA.career?.confidence });
    const netWorth = v.fields.find((f) => f.property === p('household.net_worth'));
    expect(netWorth).toMatchObject({ value: h.crm.get(CONTACT, 'c1')?.[p('household.net_worth')], replaced: null, state: 'ours', reusedFrom: null });
    expect(netWorth?.writtenAt).toBe(state?.enrichedAt);
    expect(v.fields.every((f) => f.state === 'ours')).toBe(true);
    expect(v.actions.enrich_now).toEqual({ allowed: true, reason: null, message: null, units: 1, budgetLeft: null });
    expect(v.actions.undo.allowed).toBe(true);
    expect(v.actions.exclude.allowed).toBe(true);
    expect(v.actions.include).toMatchObject({ allowed: false, reason: 'not_excluded' });
    // A record never enriched, and one the CRM does not have.
    h.crm.create(CONTACT, 'c2', contact(DANIEL));
    expect((await view(h, inst, 'c2')).status.value).toBe('never');
    expect(await h.bridge.records.view(ref(inst, 'gone'))).toMatchObject({ ok: false, reason: 'record_not_found' });
  });

  it('a property a person edited since shows as edited, and a reused answer as reused', async () => {
    const { h, inst } = await setUp();
    await created(h, inst, 'c1', contact(AMANDA));
    h.crm.edit(CONTACT, 'c1', { [p('career.job_title')]: 'Chief Volunteer' });
    await created(h, inst, 'c2', contact(AMANDA));
    const v = await view(h, inst, 'c1');
    expect(v.fields.find((f) => f.property === p('career.job_title'))).toMatchObject({
      state: 'edited',
      value: 'Chief Volunteer',
      written: AMANDA.career?.job_title,
    });
    expect(v.fields.filter((f) => f.state === 'edited')).toHaveLength(1);
    const twin = await view(h, inst, 'c2');
    expect(twin.fields.find((f) => f.property === p('household.net_worth'))).toMatchObject({ state: 'reused', reusedFrom: `${CONTACT}/c1` });
  });

  it('Undo restores the replaced values, leaves a property edited since alone and names it', async () => {
    const { h, inst } = await setUp({ overwriteMode: 'always' });
    await created(h, inst, 'c1', { ...contact(AMANDA), [p('career.job_title')]: 'Volunteer' });
    expect(h.crm.get(CONTACT, 'c1')?.[p('career.job_title')]).toBe(AMANDA.career?.job_title);
    h.crm.edit(CONTACT, 'c1', { [p('household.net_worth')]: 123 });
    const result = await h.bridge.records.undo(ref(inst, 'c1'), ALICE);
    expect(result).toMatchObject({ ok: true, action: 'undo', leftAlone: [p('household.net_worth')] });
    const after = h.crm.get(CONTACT, 'c1') ?? {};
    expect(after[p('career.job_title')]).toBe('Volunteer');
    expect(after[p('household.net_worth')]).toBe(123);
    expect(after[p('career.company_name')] ?? null).toBeNull();
    expect(after[STATUS]).toBe('undone');
    const fields = result.ok ? (result.fields ?? []) : [];
    expect(fields.find((f) => f.property === p('career.job_title'))).toMatchObject({ result: 'restored', value: 'Volunteer' });
    expect(fields.find((f) => f.property === p('household.net_worth'))).toMatchObject({ result: 'left_alone', value: 123 });
    const v = await view(h, inst, 'c1');
    expect(v.status.value).toBe('undone');
    expect(v.undone).toEqual({ at: expect.any(String), actor: ALICE });
    expect(v.actions.undo).toMatchObject({ allowed: false, reason: 'already_undone' });
    expect(await h.bridge.records.undo(ref(inst, 'c1'), ALICE)).toMatchObject({ ok: false, reason: 'already_undone' });
  });

  it('an undone record is not enriched again by a webhook or an edit until Enrich now or a change of identity', async () => {
    const { h, inst } = await setUp();
    await created(h, inst, 'c1', contact(AMANDA));
    await created(h, inst, 'c2', contact(DANIEL));
    await h.bridge.records.undo(ref(inst, 'c1'), ALICE);
    await h.bridge.records.undo(ref(inst, 'c2'), ALICE);
    const undone = h.crm.get(CONTACT, 'c1');
    // An edit of something else than its identity, and a forced job (a workflow, a refresh): skipped.
    h.crm.edit(CONTACT, 'c1', { [p('career.job_title')]: null });
    await edited(h, inst, 'c1');
    await h.enqueue(inst, { object: CONTACT, recordId: 'c1', trigger: 'action', force: true });
    await h.drain();
    expect((await outcomes(h, inst, 'c1')).slice(-2)).toEqual(['skipped:undone', 'skipped:undone']);
    expect(h.crm.get(CONTACT, 'c1')).toEqual({ ...undone, [p('career.job_title')]: null });
    // Enrich now enriches it again, and the undo is over.
    expect(await h.bridge.records.enrichNow(ref(inst, 'c1'), ALICE)).toEqual({ ok: true, action: 'enrich_now', queued: true });
    await h.drain();
    expect((await outcomes(h, inst, 'c1')).at(-1)).toBe('enriched');
    expect(h.crm.get(CONTACT, 'c1')?.[STATUS]).toBe('enriched');
    expect((await view(h, inst, 'c1')).undone).toBeNull();
    // A change of identity (another e-mail) enriches the other one again.
    h.crm.edit(CONTACT, 'c2', { email: 'daniel.other@example.com' });
    await edited(h, inst, 'c2');
    expect((await outcomes(h, inst, 'c2')).at(-1)).not.toBe('skipped:undone');
  });

  it('Exclude stops a creation webhook’s job, a backfill and the scheduled refresh, logged skipped:excluded', async () => {
    const { h, inst } = await setUp({ refreshAfterDays: 30 });
    // The creation webhook's job waits; Exclude comes first.
    h.crm.create(CONTACT, 'c1', contact(AMANDA));
    await h.enqueue(inst, { object: CONTACT, recordId: 'c1', trigger: 'create' });
    expect(await h.bridge.records.exclude(ref(inst, 'c1'), ALICE)).toEqual({ ok: true, action: 'exclude' });
    expect(h.crm.get(CONTACT, 'c1')).toMatchObject({ [CHECKBOX]: true, [STATUS]: 'excluded' });
    await h.drain();
    expect(await outcomes(h, inst, 'c1')).toEqual(['action:exclude', 'skipped:excluded']);
    expect(h.crm.get(CONTACT, 'c1')?.[p('household.net_worth')]).toBeUndefined();
    // A backfill leaves it out.
    await created(h, inst, 'c2', contact(DANIEL));
    const plan = await planBackfill({
      installation: inst,
      object: CONTACT,
      connector: new MemoryCrmConnector(h.crm),
      source: () => Promise.resolve({ records: ['c1', 'c2'].map((id) => ({ id, properties: h.crm.get(CONTACT, id) ?? {} })), next: null }),
      store: h.bridge.pipelineStore,
      progress: new BackfillProgress(h.opened.db),
      now: h.clock.now,
      restart: true,
    });
    expect(plan.excluded).toBe(1);
    expect(plan.pages.flatMap((page) => page.ids)).not.toContain('c1');
    // The scheduled refresh takes c3, enriched long ago, but not c2, as old, once excluded.
    await created(h, inst, 'c3', contact(MICHELLE));
    h.clock.now = new Date(h.clock.now.getTime() + 31 * DAY_MS);
    const refresher = new Refresher({
      store: h.bridge.pipelineStore,
      queue: h.opened.queue,
      owner: 'test',
      rateOf: () => Promise.resolve(5),
      now: () => h.clock.now,
    });
    await h.bridge.records.exclude(ref(inst, 'c2'), BOB);
    expect(await refresher.tick()).toEqual({ [inst.id]: 1 });
    expect((await h.opened.queue.list({ state: 'queued' })).map((job) => job.payload)).toEqual([
      expect.objectContaining({ recordId: 'c3', trigger: 'refresh' }),
    ]);
    // A forced job for it anyway (a workflow action) is skipped, logged.
    await h.enqueue(inst, { object: CONTACT, recordId: 'c2', trigger: 'action', force: true });
    await h.drain();
    expect((await outcomes(h, inst, 'c2')).at(-1)).toBe('skipped:excluded');
    const v = await view(h, inst, 'c2');
    expect(v.status).toMatchObject({ value: 'excluded', reason: 'user' });
    expect(v.excluded).toMatchObject({ by: 'user', actor: BOB });
    expect(v.actions.enrich_now).toMatchObject({ allowed: false, reason: 'excluded' });
    expect(await h.bridge.records.enrichNow(ref(inst, 'c2'), BOB)).toMatchObject({ ok: false, reason: 'excluded' });
  });

  it('the CRM do-not-enrich checkbox excludes too (set by an import, never through us)', async () => {
    const { h, inst } = await setUp();
    await created(h, inst, 'c1', { ...contact(AMANDA), [CHECKBOX]: 'true' });
    expect(await outcomes(h, inst, 'c1')).toEqual(['skipped:excluded']);
    expect(h.crm.get(CONTACT, 'c1')?.[STATUS]).toBe('excluded');
    const v = await view(h, inst, 'c1');
    expect(v.status).toMatchObject({ value: 'excluded', reason: 'crm_checkbox' });
    expect(v.actions.include.allowed).toBe(true);
    expect(v.actions.exclude).toMatchObject({ allowed: false, reason: 'already_excluded' });
    // The two stay in step: a record excluded through us and unchecked in the CRM (a workflow) is included again.
    await created(h, inst, 'c2', contact(DANIEL));
    await h.bridge.records.exclude(ref(inst, 'c2'), ALICE);
    h.crm.edit(CONTACT, 'c2', { [CHECKBOX]: false });
    expect((await view(h, inst, 'c2')).excluded).toBeNull();
    await h.bridge.records.enrichNow(ref(inst, 'c2'), ALICE);
    await h.drain();
    expect((await outcomes(h, inst, 'c2')).at(-1)).toBe('enriched');
    expect((await h.bridge.pipelineStore.recordControls(inst.id, CONTACT, ['c2'])).get('c2')?.excludedAt).toBeNull();
  });

  it('Include again unchecks the box, puts the status back, and the record is enriched again', async () => {
    const { h, inst } = await setUp();
    await created(h, inst, 'c1', contact(AMANDA));
    await h.bridge.records.exclude(ref(inst, 'c1'), ALICE);
    expect(await h.bridge.records.include(ref(inst, 'c1'), BOB)).toEqual({ ok: true, action: 'include' });
    expect(h.crm.get(CONTACT, 'c1')).toMatchObject({ [CHECKBOX]: false, [STATUS]: 'enriched' });
    expect((await view(h, inst, 'c1')).status.value).toBe('enriched');
    await h.bridge.records.enrichNow(ref(inst, 'c1'), BOB);
    await h.drain();
    expect((await outcomes(h, inst, 'c1')).at(-1)).toBe('enriched');
    // A record excluded by the checkbox alone is included by unchecking it.
    await created(h, inst, 'c2', { ...contact(DANIEL), [CHECKBOX]: true });
    await h.bridge.records.include(ref(inst, 'c2'), BOB);
    expect(h.crm.get(CONTACT, 'c2')?.[CHECKBOX]).toBe(false);
    await edited(h, inst, 'c2');
    expect((await outcomes(h, inst, 'c2')).at(-1)).toBe('enriched');
  });

  it('Enrich now goes to the front of the queue and enriches an unchanged record', async () => {
    const { h, inst } = await setUp();
    await created(h, inst, 'c1', contact(AMANDA));
    h.crm.create(CONTACT, 'c2', contact(DANIEL));
    await h.enqueue(inst, { object: CONTACT, recordId: 'c2', trigger: 'create' });
    expect((await view(h, inst, 'c2')).status).toMatchObject({ value: 'pending', reason: 'create' });
    await h.bridge.records.enrichNow(ref(inst, 'c1'), ALICE);
    const [first] = await h.opened.queue.claimBatch({ workerId: 'w', limit: 1, leaseMs: 60_000 });
    expect(first?.payload).toMatchObject({ recordId: 'c1', trigger: 'now', force: true });
    await h.bridge.pipeline.processBatch(first === undefined ? [] : [first], 'w');
    expect(await outcomes(h, inst, 'c1')).toEqual(['enriched', 'action:enrich_now', 'enriched']);
  });

  it('Enrich now is refused when the month’s budget is spent', async () => {
    const { h, inst } = await setUp({ monthlyBudget: 1 });
    await created(h, inst, 'c1', contact(AMANDA));
    const v = await view(h, inst, 'c1');
    expect(v.actions.enrich_now).toMatchObject({ allowed: false, reason: 'budget_spent', units: 1, budgetLeft: 0 });
    const refused = await h.bridge.records.enrichNow(ref(inst, 'c1'), ALICE);
    expect(refused).toMatchObject({ ok: false, action: 'enrich_now', reason: 'budget_spent' });
    expect(refused.ok ? '' : refused.message).toMatch(/budget/);
    expect(await h.opened.queue.countByState()).toEqual({ done: 1 });
    expect(await outcomes(h, inst, 'c1')).toEqual(['enriched']);
  });

  it('every action is logged with its actor', async () => {
    const { h, inst } = await setUp();
    await created(h, inst, 'c1', contact(AMANDA));
    await h.bridge.records.enrichNow(ref(inst, 'c1'), ALICE);
    await h.drain();
    await h.bridge.records.undo(ref(inst, 'c1'), BOB);
    await h.bridge.records.exclude(ref(inst, 'c1'), ALICE);
    await h.bridge.records.include(ref(inst, 'c1'), { userId: 'u-9', email: null });
    const actions = (await h.bridge.pipelineStore.listLog({ installationId: inst.id, recordId: 'c1' })).filter((e) => e.outcome.startsWith('action:'));
    expect(actions.map((e) => [e.outcome, e.actor])).toEqual([
      ['action:enrich_now', ALICE],
      ['action:undo', BOB],
      ['action:exclude', ALICE],
      ['action:include', { userId: 'u-9', email: null }],
    ]);
    expect(actions.every((e) => e.quotaConsumed === 0)).toBe(true);
    // A server log line gets the e-mail masked.
    expect(actorForLog(ALICE)).toEqual({ userId: 'u-17', email: 'a***@example.org' });
    // Disconnecting keeps the log without who asked; a record's erasure forgets its controls too.
    await h.bridge.records.exclude(ref(inst, 'c1'), ALICE);
    await h.bridge.pipelineStore.eraseRecord(inst.id, CONTACT, 'c1');
    expect((await h.bridge.pipelineStore.recordControls(inst.id, CONTACT, ['c1'])).size).toBe(0);
    expect(await h.bridge.pipelineStore.listLog({ installationId: inst.id, recordId: 'c1' })).toEqual([]);
  });

  it('an action the CRM refuses to write is refused, changes nothing and is not logged', async () => {
    const { h, inst } = await setUp();
    await created(h, inst, 'c1', contact(AMANDA));
    h.crm.writeErrors.set('c1', { reason: 'rejected', message: 'a validation rule of the org' });
    expect(await h.bridge.records.exclude(ref(inst, 'c1'), ALICE)).toMatchObject({ ok: false, reason: 'crm_write', message: /validation rule/ });
    expect(await h.bridge.records.undo(ref(inst, 'c1'), ALICE)).toMatchObject({ ok: false, reason: 'crm_write' });
    expect(await outcomes(h, inst, 'c1')).toEqual(['enriched']);
    expect((await view(h, inst, 'c1')).status.value).toBe('enriched');
    expect(await h.bridge.records.enrichNow({ ...ref(inst, 'c1'), object: 'deal' }, ALICE)).toMatchObject({ ok: false, reason: 'object_not_enabled' });
  });

  it('a record with no match key gets its status property written', async () => {
    const { h, inst } = await setUp();
    await created(h, inst, 'c1', { first_name: 'Amanda', last_name: 'Taylor' });
    expect(h.crm.get(CONTACT, 'c1')?.[STATUS]).toBe('no_match_key');
    const [entry] = await h.bridge.pipelineStore.listLog({ installationId: inst.id, recordId: 'c1' });
    expect(entry).toMatchObject({ outcome: 'skipped:no_match_key', fieldsWritten: [STATUS], quotaConsumed: 0 });
    expect((await view(h, inst, 'c1')).status).toMatchObject({ value: 'skipped', reason: 'no_match_key' });
    // Once it holds it, another skip writes nothing.
    const writes = h.crm.writes.length;
    await edited(h, inst, 'c1');
    expect(h.crm.writes).toHaveLength(writes);
    expect(await outcomes(h, inst, 'c1')).toEqual(['skipped:no_match_key', 'skipped:no_match_key']);
  });
});
