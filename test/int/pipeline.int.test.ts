// The connector pipeline end to end on real parts (SQLite store and queue, the real EnrichService,
// SecretBox, Worker) with MemoryCrm as the only double: every skip reason, every overwrite mode, record
// state and the enrichment log, dedupe, retries and dead letters, limits and pauses, batching, shutdown.
import { rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { updateAccount } from '../../core/accounts/admin.ts';
import { CREDENTIAL_CACHE_MS } from '../../core/accounts/authenticator.ts';
import { currentPeriod } from '../../core/limits/quota-period.ts';
import { type Job, retryDelayMs } from '../../bridge/job-queue.ts';
import { PERSONAS, type Persona } from '../../core/sandbox/personas.ts';
import { CrmError } from '../../bridge/connector.ts';
import { inputHash } from '../../bridge/input.ts';
import type { Installation } from '../../bridge/model.ts';
import { EnrichJobPayloadSchema, type EnrichJobPayload, enrichJob } from '../../bridge/enrich-job.ts';
import { type Properties, propertyName as p, recordToRequest } from '../support/memory-crm.ts';
import { type PipelineHarness, startPipeline } from '../support/pipeline-harness.ts';
import pg from 'pg';
import { TEST_DATABASES, type TestDatabase } from '../support/databases.ts';

/** The database of the block running now: every block below runs once per test database (SQLite, and PostgreSQL when TEST_DATABASE_URL is set). */
let database: TestDatabase | undefined;

const CONTACT = 'contact';
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

function persona(first: string): Persona {
  const found = PERSONAS.find((candidate) => candidate.first_name === first);
  if (found === undefined) throw new Error(`no sandbox persona ${first}`);
  return found;
}

/** Household and career. */
const AMANDA = persona('Amanda');
const DANIEL = persona('Daniel');
const MICHELLE = persona('Michelle');
const JAMES = persona('James');
/** Household only; Jane's confidence is 0.62. */
const JANE = persona('Jane');
const ROBERT = persona('Robert');
/** Career only. */
const DAVID = persona('David');

/** A CRM contact that identifies the persona by name and e-mail. */
function contact(who: Persona): Properties {
  return { first_name: who.first_name, last_name: who.last_name, email: who.email };
}
const NOBODY: Properties = { first_name: 'Nobody', last_name: 'Known', email: 'nobody.known@example.com' };

const harnesses: PipelineHarness[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const h of harnesses.splice(0)) {
    await h.close();
    rmSync(h.dataDir, { recursive: true, force: true });
  }
});

async function start(options: Parameters<typeof startPipeline>[0] = {}): Promise<PipelineHarness> {
  const h = await startPipeline({ ...options, database });
  harnesses.push(h);
  return h;
}

type Payload = Omit<EnrichJobPayload, 'object' | 'recordId'>;

/** A record in the CRM and a job to enrich it. */
async function add(h: PipelineHarness, inst: Installation, id: string, properties: Properties, payload: Payload = {}) {
  h.crm.create(CONTACT, id, properties);
  return h.enqueue(inst, { object: CONTACT, recordId: id, ...payload });
}

/** Another event for an existing record. */
function again(h: PipelineHarness, inst: Installation, id: string, payload: Payload = {}) {
  return h.enqueue(inst, { object: CONTACT, recordId: id, ...payload });
}

async function outcomes(h: PipelineHarness, inst: Installation, recordId?: string): Promise<string[]> {
  const entries = await h.bridge.pipelineStore.listLog({ installationId: inst.id, ...(recordId === undefined ? {} : { recordId }), limit: 10_000 });
  return entries.map((entry) => entry.outcome);
}

async function logOf(h: PipelineHarness, inst: Installation, recordId: string) {
  return h.bridge.pipelineStore.listLog({ installationId: inst.id, recordId });
}

async function stateOf(h: PipelineHarness, inst: Installation, recordId: string) {
  return (await h.bridge.pipelineStore.recordStates(inst.id, CONTACT, [recordId])).get(recordId);
}

function recordIdOf(job: Job): string {
  return EnrichJobPayloadSchema.parse(job.payload).recordId;
}

async function jobOf(h: PipelineHarness, recordId: string): Promise<Job> {
  const job = (await h.opened.queue.list()).find((candidate) => recordIdOf(candidate) === recordId);
  if (job === undefined) throw new Error(`no job for ${recordId}`);
  return job;
}

/** The enrichment properties (ours) a CRM record holds now. */
function ours(h: PipelineHarness, id: string): Properties {
  return Object.fromEntries(Object.entries(h.crm.get(CONTACT, id) ?? {}).filter(([key]) => key.startsWith('wf_')));
}

function writesTo(h: PipelineHarness, id: string): Properties[] {
  return h.crm.writes.filter((write) => write.id === id).map((write) => write.properties);
}

function crmCalls(h: PipelineHarness, kind: 'read' | 'write'): number {
  return h.crm.calls.filter((call) => call.kind === kind).length;
}

/** Quota units the installation's own token used in the current period of the harness clock. */
async function quotaUsed(h: PipelineHarness, inst: Installation): Promise<number> {
  const target = inst.target;
  if (target.kind !== 'local') throw new Error('a local target was expected');
  const account = (await h.opened.store.listAccounts()).find((candidate) => candidate.id === target.accountId);
  if (account === undefined) throw new Error('the installation has no account');
  return h.opened.store.quotaUsed(target.tokenId, currentPeriod(account.quotaPeriod, h.clock.now).key);
}

async function accountName(h: PipelineHarness, inst: Installation): Promise<string> {
  const target = inst.target;
  if (target.kind !== 'local') throw new Error('a local target was expected');
  const account = (await h.opened.store.listAccounts()).find((candidate) => candidate.id === target.accountId);
  if (account === undefined) throw new Error('the installation has no account');
  return account.name;
}

/** Claims what is ready at `now` (the queue's clock) and runs it, as a worker would at that time. */
async function runAt(h: PipelineHarness, now: Date, workerId = 'clock-worker') {
  const jobs = await h.opened.queue.claimBatch({ workerId, limit: 500, leaseMs: 60_000, now });
  const summary = await h.bridge.pipeline.processBatch(jobs, workerId);
  return { jobs, summary };
}

function later(h: PipelineHarness, ms: number): void {
  h.clock.now = new Date(h.clock.now.getTime() + ms);
}

describe.each(TEST_DATABASES)('on $name', (each) => {
  beforeAll(() => {
    database = each;
  });

  describe('skip reasons', () => {
    it('no_match_key: a record with a name only is skipped without an enrichment', async () => {
      const h = await start();
      const inst = await h.install({ environment: 'production' });
      await add(h, inst, 'c1', { first_name: 'Amanda', last_name: 'Taylor' });
      await h.drain();
      expect(await outcomes(h, inst, 'c1')).toEqual(['skipped:no_match_key']);
      expect((await jobOf(h, 'c1')).state).toBe('done');
      expect(await quotaUsed(h, inst)).toBe(0);
      // Only its status property, saying why (issue 28).
      expect(h.crm.writes).toEqual([{ object: CONTACT, id: 'c1', properties: { [p('status.enrichment_status')]: 'no_match_key' } }]);
      expect(await stateOf(h, inst, 'c1')).toBeUndefined();
    });

    it('unchanged: the same normalized input within the re-enrichment age is skipped, re-formatted e-mail and phone included', async () => {
      const h = await start();
      const inst = await h.install({ environment: 'production' });
      await add(h, inst, 'c1', { ...contact(AMANDA), phone: '5553000001' });
      await h.drain();
      h.crm.edit(CONTACT, 'c1', { email: '  Amanda.Taylor@SANDBOX.Windfall.com ', phone: '(555) 300-0001', first_name: 'AMANDA' });
      later(h, 29 * DAY_MS);
      await again(h, inst, 'c1');
      await h.drain();
      expect(await outcomes(h, inst, 'c1')).toEqual(['enriched', 'skipped:unchanged']);
      expect(writesTo(h, 'c1')).toHaveLength(1);
      expect((await logOf(h, inst, 'c1'))[1]?.quotaConsumed).toBe(0);
    });

    it('unchanged does not hold back a record whose e-mail changed', async () => {
      const h = await start();
      const inst = await h.install({ environment: 'production' });
      await add(h, inst, 'c1', contact(AMANDA));
      await h.drain();
      h.crm.edit(CONTACT, 'c1', { email: 'amanda.taylor@example.com' });
      await again(h, inst, 'c1');
      await h.drain();
      expect(await outcomes(h, inst, 'c1')).toEqual(['enriched', 'no_match']);
      expect(await quotaUsed(h, inst)).toBe(2);
    });

    it('unchanged input is enriched again once older than reenrichAfterDays', async () => {
      const h = await start();
      const inst = await h.install({ settings: { reenrichAfterDays: 7 } });
      await add(h, inst, 'c1', contact(AMANDA));
      await h.drain();
      later(h, 7 * DAY_MS - 60_000);
      await again(h, inst, 'c1');
      await h.drain();
      later(h, 60_000);
      await again(h, inst, 'c1');
      await h.drain();
      expect(await outcomes(h, inst, 'c1')).toEqual(['enriched', 'skipped:unchanged', 'enriched']);
      expect((await stateOf(h, inst, 'c1'))?.enrichedAt).toBe(h.clock.now.toISOString());
    });

    it('force enriches unchanged, recent input again', async () => {
      const h = await start();
      const inst = await h.install({ environment: 'production' });
      await add(h, inst, 'c1', contact(AMANDA));
      await h.drain();
      await again(h, inst, 'c1', { force: true, trigger: 'manual' });
      await h.drain();
      expect(await outcomes(h, inst, 'c1')).toEqual(['enriched', 'enriched']);
      expect(await quotaUsed(h, inst)).toBe(2);
    });

    it('installation_paused: an admin pause completes and logs the jobs without reading or enriching', async () => {
      const h = await start();
      const inst = await h.install({ environment: 'production' });
      await h.bridge.installations.pause(inst.id);
      await add(h, inst, 'c1', contact(AMANDA));
      await h.drain();
      expect(await outcomes(h, inst, 'c1')).toEqual(['skipped:installation_paused']);
      expect((await jobOf(h, 'c1')).state).toBe('done');
      expect(h.crm.calls).toEqual([]);
      expect(await quotaUsed(h, inst)).toBe(0);
      expect(await stateOf(h, inst, 'c1')).toBeUndefined();
    });

    it('installation_disabled: a disabled installation completes and logs the jobs without reading or enriching', async () => {
      const h = await start();
      const inst = await h.install({ environment: 'production' });
      await h.bridge.installations.disable(inst.id);
      await add(h, inst, 'c1', contact(AMANDA));
      await h.drain();
      expect(await outcomes(h, inst, 'c1')).toEqual(['skipped:installation_disabled']);
      expect((await jobOf(h, 'c1')).state).toBe('done');
      expect(h.crm.calls).toEqual([]);
      expect(await quotaUsed(h, inst)).toBe(0);
    });

    it('record_deleted: a record gone when read is skipped without an enrichment', async () => {
      const h = await start();
      const inst = await h.install({ environment: 'production' });
      await add(h, inst, 'c1', contact(AMANDA));
      h.crm.delete(CONTACT, 'c1');
      await h.drain();
      expect(await outcomes(h, inst, 'c1')).toEqual(['skipped:record_deleted']);
      expect((await jobOf(h, 'c1')).state).toBe('done');
      expect(await quotaUsed(h, inst)).toBe(0);
    });

    it('record_deleted: a write answered not_found completes the job, with the enrichment it spent', async () => {
      const h = await start();
      const inst = await h.install({ environment: 'production' });
      await add(h, inst, 'c1', contact(AMANDA));
      h.crm.writeErrors.set('c1', { reason: 'not_found', message: 'merged away' });
      await h.drain();
      const [entry] = await logOf(h, inst, 'c1');
      expect(entry).toMatchObject({ outcome: 'skipped:record_deleted', quotaConsumed: 1 });
      expect((await jobOf(h, 'c1')).state).toBe('done');
      expect(await stateOf(h, inst, 'c1')).toBeUndefined();
    });

    it('object_not_enabled: an object the installation does not enrich is skipped without a read', async () => {
      const h = await start();
      const named = await h.install({ settings: { objects: ['contact'] } });
      const defaults = await h.install();
      h.crm.create('deal', 'd1', contact(AMANDA));
      h.crm.create('company', 'o1', contact(AMANDA));
      await h.enqueue(named, { object: 'deal', recordId: 'd1' });
      await h.enqueue(defaults, { object: 'company', recordId: 'o1' });
      await h.drain();
      expect(await outcomes(h, named)).toEqual(['skipped:object_not_enabled']);
      expect(await outcomes(h, defaults)).toEqual(['skipped:object_not_enabled']);
      expect(h.crm.calls).toEqual([]);
      expect((await h.opened.queue.list()).map((job) => job.state)).toEqual(['done', 'done']);
    });

    it('below_min_confidence: a match under the minimum writes status only; an object under it is left out', async () => {
      const h = await start();
      const inst = await h.install({ environment: 'production', settings: { minConfidence: 0.97 } });
      await add(h, inst, 'low', contact(JANE));
      await add(h, inst, 'mixed', contact(AMANDA));
      await h.drain();
      const [low] = await logOf(h, inst, 'low');
      expect(low).toMatchObject({ outcome: 'skipped:below_min_confidence', quotaConsumed: 1 });
      expect(Object.keys(ours(h, 'low')).sort()).toEqual(
        [p('status.enriched_at'), p('status.household_matched'), p('status.career_matched'), p('status.enrichment_status')].sort(),
      );
      expect(ours(h, 'low')[p('status.enrichment_status')]).toBe('below_min_confidence');
      // Amanda: household 0.98 is written, career 0.96 is not.
      expect(await outcomes(h, inst, 'mixed')).toEqual(['enriched']);
      expect(ours(h, 'mixed')[p('household.net_worth')]).toBe(AMANDA.household?.net_worth);
      expect(Object.keys(ours(h, 'mixed')).filter((key) => key.startsWith('wf_career_'))).toEqual([]);
      expect(ours(h, 'mixed')[p('status.career_matched')]).toBe(false);
    });
  });

  describe('overwrite modes', () => {
    it('fill_empty never overwrites a non-empty value, fills the empty ones, and still writes status', async () => {
      const h = await start();
      const inst = await h.install({ settings: { overwriteMode: 'fill_empty', excludedFields: [] } });
      await add(h, inst, 'c1', {
        ...contact(AMANDA),
        [p('household.net_worth')]: 5,
        [p('career.job_title')]: 'CFO',
        [p('household.political_party')]: '',
        [p('status.enrichment_status')]: 'stale',
      });
      await h.drain();
      later(h, HOUR_MS);
      await again(h, inst, 'c1', { force: true });
      await h.drain();
      const record = ours(h, 'c1');
      expect(record[p('household.net_worth')]).toBe(5);
      expect(record[p('career.job_title')]).toBe('CFO');
      expect(record[p('household.political_party')]).toBe('Democrat');
      expect(record[p('household.windfall_id')]).toBe(AMANDA.household?.windfall_id);
      expect(record[p('status.enrichment_status')]).toBe('enriched');
      expect(record[p('status.enriched_at')]).toBe(h.clock.now.toISOString());
      expect(h.crm.writes.some((write) => p('household.net_worth') in write.properties || p('career.job_title') in write.properties)).toBe(false);
    });

    it('tracked overwrites our own previous value and fills empties, but never a human edit or a value it did not write', async () => {
      const h = await start();
      const inst = await h.install({ settings: { excludedFields: [] } });
      await add(h, inst, 'c1', { ...contact(AMANDA), [p('career.job_level')]: 'Director' });
      await h.drain();
      expect(ours(h, 'c1')[p('household.net_worth')]).toBe(AMANDA.household?.net_worth);
      expect(ours(h, 'c1')[p('career.job_level')]).toBe('Director');

      // A human edits one of our values and clears another; the CRM stores our number as text.
      h.crm.edit(CONTACT, 'c1', {
        [p('career.job_title')]: 'Chief Bean Counter',
        [p('household.political_party')]: null,
        [p('household.net_worth')]: String(AMANDA.household?.net_worth),
      });
      // The record now identifies Daniel: a re-enrichment with new values.
      h.crm.edit(CONTACT, 'c1', contact(DANIEL));
      await again(h, inst, 'c1');
      await h.drain();
      let record = ours(h, 'c1');
      expect(record[p('household.net_worth')]).toBe(DANIEL.household?.net_worth);
      expect(record[p('household.windfall_id')]).toBe(DANIEL.household?.windfall_id);
      expect(record[p('household.political_party')]).toBe(DANIEL.household?.political_party);
      expect(record[p('career.job_title')]).toBe('Chief Bean Counter');
      expect(record[p('career.job_level')]).toBe('Director');

      // Still the human's on the enrichment after that.
      h.crm.edit(CONTACT, 'c1', contact(AMANDA));
      await again(h, inst, 'c1');
      await h.drain();
      record = ours(h, 'c1');
      expect(record[p('household.net_worth')]).toBe(AMANDA.household?.net_worth);
      expect(record[p('career.job_title')]).toBe('Chief Bean Counter');
      expect(await outcomes(h, inst, 'c1')).toEqual(['enriched', 'enriched', 'enriched']);
    });

    it('always overwrites human edits', async () => {
      const h = await start();
      const inst = await h.install({ settings: { overwriteMode: 'always' } });
      await add(h, inst, 'c1', { ...contact(AMANDA), [p('household.net_worth')]: 5 });
      await h.drain();
      expect(ours(h, 'c1')[p('household.net_worth')]).toBe(AMANDA.household?.net_worth);
      h.crm.edit(CONTACT, 'c1', { [p('household.net_worth')]: 7, [p('career.job_title')]: 'Chief Bean Counter' });
      await again(h, inst, 'c1', { force: true });
      await h.drain();
      expect(ours(h, 'c1')[p('household.net_worth')]).toBe(AMANDA.household?.net_worth);
      expect(ours(h, 'c1')[p('career.job_title')]).toBe(AMANDA.career?.job_title);
    });
  });

  describe('what is never written, and what always is', () => {
    it('after a match to someone else, our unedited values are replaced or cleared; after a no-match, cleared; a human edit stays', async () => {
      const h = await start();
      const inst = await h.install({ settings: { overwriteMode: 'tracked' } });
      await add(h, inst, 'c1', contact(AMANDA));
      await h.drain();
      // The contact now names Robert: another household (his windfall_id), household only. Amanda's
      // values describe someone else: his replace hers, and hers that he lacks (her career) are cleared.
      h.crm.edit(CONTACT, 'c1', contact(ROBERT));
      await again(h, inst, 'c1');
      await h.drain();
      const afterRobert = ours(h, 'c1');
      expect(afterRobert[p('household.net_worth')]).toBe(ROBERT.household?.net_worth);
      expect(afterRobert[p('household.windfall_id')]).toBe(ROBERT.household?.windfall_id);
      expect(afterRobert[p('career.job_title')] ?? null).toBeNull();
      expect(afterRobert[p('status.career_matched')]).toBe(false);
      // A human sets the net worth by hand; then the contact matches nobody.
      h.crm.edit(CONTACT, 'c1', { [p('household.net_worth')]: 1_234_567 });
      h.crm.edit(CONTACT, 'c1', NOBODY);
      await again(h, inst, 'c1');
      await h.drain();
      const afterNoMatch = ours(h, 'c1');
      expect(await outcomes(h, inst, 'c1')).toEqual(['enriched', 'enriched', 'no_match']);
      expect(afterNoMatch[p('household.net_worth')]).toBe(1_234_567);
      for (const [key, value] of Object.entries(afterNoMatch)) {
        if (!key.startsWith('wf_status_') && key !== p('household.net_worth')) expect(value ?? null, key).toBeNull();
      }
      expect(afterNoMatch[p('status.enrichment_status')]).toBe('no_match');
      expect(afterNoMatch[p('status.household_matched')]).toBe(false);
      // What we cleared is no longer ours: a later match to Amanda fills it again, and the human's value stays.
      expect((await stateOf(h, inst, 'c1'))?.written).not.toHaveProperty(p('household.windfall_id'));
    });

    it('a match to the same person again clears nothing, as before', async () => {
      const h = await start();
      const inst = await h.install({ settings: { overwriteMode: 'always' } });
      await add(h, inst, 'c1', contact(AMANDA));
      await h.drain();
      const before = ours(h, 'c1');
      // The same person, enriched again: Amanda's values are all still there.
      await again(h, inst, 'c1', { force: true });
      await h.drain();
      const after = ours(h, 'c1');
      for (const [key, value] of Object.entries(before)) if (!key.startsWith('wf_status_')) expect(after[key], key).toEqual(value);
      const sent = h.crm.writes.flatMap((write) => Object.values(write.properties));
      expect(sent.filter((value) => value === null || String(value).trim() === '')).toEqual([]);
    });

    it('a field missing from the response does not clear the CRM value', async () => {
      const h = await start();
      const inst = await h.install({
        settings: { overwriteMode: 'always' },
        account: { householdFields: 'net_worth', careerFields: 'job_title' },
      });
      await add(h, inst, 'c1', { ...contact(AMANDA), [p('household.political_party')]: 'Republican', [p('career.company_name')]: 'Acme' });
      await h.drain();
      const record = ours(h, 'c1');
      expect(record[p('household.net_worth')]).toBe(AMANDA.household?.net_worth);
      expect(record[p('career.job_title')]).toBe(AMANDA.career?.job_title);
      expect(record[p('household.political_party')]).toBe('Republican');
      expect(record[p('career.company_name')]).toBe('Acme');
    });

    it('excluded fields are never written, status fields included, even in always mode', async () => {
      const h = await start();
      const excluded = ['household.net_worth', 'career.job_title', 'status.enriched_at'];
      const inst = await h.install({ settings: { overwriteMode: 'always', excludedFields: excluded } });
      await add(h, inst, 'c1', { ...contact(AMANDA), [p('career.job_title')]: 'CFO' });
      await h.drain();
      later(h, HOUR_MS);
      await again(h, inst, 'c1', { force: true });
      await h.drain();
      const sent = h.crm.writes.flatMap((write) => Object.keys(write.properties));
      expect(sent.length).toBeGreaterThan(0);
      expect(sent.filter((property) => excluded.map(p).includes(property))).toEqual([]);
      const record = ours(h, 'c1');
      expect(record[p('household.net_worth')]).toBeUndefined();
      expect(record[p('career.job_title')]).toBe('CFO');
      expect(record[p('household.windfall_id')]).toBe(AMANDA.household?.windfall_id);
      expect(Object.keys((await stateOf(h, inst, 'c1'))?.written ?? {})).not.toContain(p('household.net_worth'));
    });

    it('status fields are written on every enrichment: when, household and career matched, status', async () => {
      const h = await start();
      const inst = await h.install();
      await add(h, inst, 'c1', contact(DAVID));
      await h.drain();
      expect(ours(h, 'c1')).toMatchObject({
        [p('status.enriched_at')]: h.clock.now.toISOString(),
        [p('status.household_matched')]: false,
        [p('status.career_matched')]: true,
        [p('status.enrichment_status')]: 'enriched',
      });
    });
  });

  describe('record state and the enrichment log', () => {
    it('keeps per record: matched flags, windfall_id, confidence, enriched_at, input hash and the values written', async () => {
      const h = await start();
      const inst = await h.install({ environment: 'production' });
      await add(h, inst, 'full', contact(AMANDA));
      await add(h, inst, 'career', contact(DAVID));
      await add(h, inst, 'none', NOBODY);
      await h.drain();
      expect(await stateOf(h, inst, 'full')).toEqual({
        installationId: inst.id,
        object: CONTACT,
        recordId: 'full',
        householdMatched: true,
        careerMatched: true,
        windfallId: AMANDA.household?.windfall_id,
        confidence: AMANDA.household?.confidence,
        enrichedAt: h.clock.now.toISOString(),
        inputHash: inputHash(recordToRequest({ id: 'full', properties: contact(AMANDA) }), 'production'),
        written: ours(h, 'full'),
        // The data version it was answered under, and the career match's own confidence (issue 28's record view).
        dataVersion: 'test-personas',
        careerConfidence: AMANDA.career?.confidence,
      });
      expect(await stateOf(h, inst, 'career')).toMatchObject({
        householdMatched: false,
        careerMatched: true,
        windfallId: null,
        confidence: DAVID.career?.confidence,
        written: ours(h, 'career'),
      });
      expect(await stateOf(h, inst, 'none')).toMatchObject({ householdMatched: false, careerMatched: false, windfallId: null, confidence: null });
      expect(Object.keys((await stateOf(h, inst, 'none'))?.written ?? {}).every((key) => key.startsWith('wf_status_'))).toBe(true);
    });

    it('logs outcome, fields written, quota consumed (1 per production enrichment, 0 in sandbox) and latency', async () => {
      const h = await start();
      const production = await h.install({ environment: 'production' });
      const sandbox = await h.install({ environment: 'sandbox' });
      await add(h, production, 'p1', contact(AMANDA));
      await add(h, production, 'p2', NOBODY);
      await add(h, production, 'p3', { first_name: 'Amanda', last_name: 'Taylor' });
      await add(h, sandbox, 's1', contact(AMANDA));
      await h.drain();
      const [p1] = await logOf(h, production, 'p1');
      expect(p1).toMatchObject({
        installationId: production.id,
        object: CONTACT,
        recordId: 'p1',
        outcome: 'enriched',
        quotaConsumed: 1,
        at: h.clock.now.toISOString(),
      });
      expect([...(p1?.fieldsWritten ?? [])].sort()).toEqual(Object.keys(writesTo(h, 'p1')[0] ?? {}).sort());
      expect(p1?.fieldsWritten).toContain(p('household.net_worth'));
      expect(p1?.latencyMs).toEqual(expect.any(Number));
      expect(p1?.latencyMs).toBeGreaterThanOrEqual(0);
      const [p2] = await logOf(h, production, 'p2');
      expect(p2).toMatchObject({ outcome: 'no_match', quotaConsumed: 1 });
      expect(p2?.fieldsWritten.every((field) => field.startsWith('wf_status_'))).toBe(true);
      expect(await logOf(h, production, 'p3')).toMatchObject([
        // Its status property says why (issue 28).
        {
          outcome: 'skipped:no_match_key',
          quotaConsumed: 0,
          latencyMs: null,
          fieldsWritten: [p('status.enrichment_status')],
          changes: { [p('status.enrichment_status')]: { value: 'no_match_key', replaced: null } },
        },
      ]);
      expect(await quotaUsed(h, production)).toBe(2);
      const [s1] = await logOf(h, sandbox, 's1');
      expect(s1).toMatchObject({ outcome: 'enriched', quotaConsumed: 0 });
      expect(s1?.fieldsWritten.length).toBeGreaterThan(0);
    });

    it('the log records the value each write replaced: a human value overwritten in always mode, null where the property was empty', async () => {
      const h = await start();
      const inst = await h.install({ settings: { overwriteMode: 'always', excludedFields: [] } });
      await add(h, inst, 'c1', { ...contact(AMANDA), [p('household.net_worth')]: 5, [p('household.political_party')]: '' });
      await h.drain();
      const [first] = await logOf(h, inst, 'c1');
      expect(first?.changes[p('household.net_worth')]).toEqual({ value: AMANDA.household?.net_worth, replaced: 5 });
      expect(first?.changes[p('household.political_party')]).toEqual({ value: AMANDA.household?.political_party, replaced: null });
      expect(first?.changes[p('career.job_title')]).toEqual({ value: AMANDA.career?.job_title, replaced: null });
      // Every property written and only those, each with the value the CRM received.
      expect(Object.keys(first?.changes ?? {}).sort()).toEqual([...(first?.fieldsWritten ?? [])].sort());
      expect(Object.fromEntries(Object.entries(first?.changes ?? {}).map(([property, change]) => [property, change.value]))).toEqual(writesTo(h, 'c1')[0]);

      // A human edits one of our values; the next enrichment puts ours back and logs the human's as replaced.
      h.crm.edit(CONTACT, 'c1', { [p('career.job_title')]: 'Chief Bean Counter' });
      later(h, HOUR_MS);
      await again(h, inst, 'c1', { force: true });
      await h.drain();
      const [, second] = await logOf(h, inst, 'c1');
      expect(second?.changes[p('career.job_title')]).toEqual({ value: AMANDA.career?.job_title, replaced: 'Chief Bean Counter' });
      expect(second?.changes[p('status.enriched_at')]).toEqual({ value: h.clock.now.toISOString(), replaced: first?.changes[p('status.enriched_at')]?.value });
      // A property already holding the value is not written, so it has no change to log.
      expect(second?.changes).not.toHaveProperty(p('household.net_worth'));
    });

    it('the values a write replaced go with the record when it is erased, and from the kept log when the installation is disconnected', async () => {
      const h = await start();
      const inst = await h.install({ settings: { overwriteMode: 'always' } });
      await add(h, inst, 'erased', { ...contact(AMANDA), [p('career.job_title')]: 'Chief Bean Counter' });
      await add(h, inst, 'kept', { ...contact(DANIEL), [p('career.job_title')]: 'Head of Beans' });
      await h.drain();
      /** The log's rows as stored, every column as text: what a copy of the database would hold. */
      const stored = async () => JSON.stringify(await h.opened.db.selectFrom('enrichment_log').selectAll().where('installation_id', '=', inst.id).execute());
      expect((await logOf(h, inst, 'erased'))[0]?.changes[p('career.job_title')]?.replaced).toBe('Chief Bean Counter');
      expect(await stored()).toContain('Head of Beans');

      await h.bridge.pipelineStore.eraseRecord(inst.id, CONTACT, 'erased');
      expect(await logOf(h, inst, 'erased')).toEqual([]);
      expect(await stored()).not.toContain('Chief Bean Counter');
      expect((await logOf(h, inst, 'kept'))[0]?.changes[p('career.job_title')]?.replaced).toBe('Head of Beans');

      // Disconnected: the log stays for the operator (outcome, the properties written), not the values.
      await h.bridge.installations.remove(inst.id);
      const [kept] = await logOf(h, inst, 'kept');
      expect(kept).toMatchObject({ outcome: 'enriched', changes: {} });
      expect(kept?.fieldsWritten).toContain(p('career.job_title'));
      expect(await stored()).not.toContain('Head of Beans');
    });
  });

  describe('dedupe', () => {
    it('a duplicate event for a waiting record is one job and one enrichment', async () => {
      const h = await start();
      const inst = await h.install({ environment: 'production' });
      const first = await add(h, inst, 'c1', contact(AMANDA));
      expect(await again(h, inst, 'c1', { trigger: 'update' })).toEqual({ id: first.id, created: false });
      expect(await h.opened.queue.list()).toHaveLength(1);
      await h.drain();
      expect(await outcomes(h, inst, 'c1')).toEqual(['enriched']);
      expect(await quotaUsed(h, inst)).toBe(1);
      expect(writesTo(h, 'c1')).toHaveLength(1);
    });

    it('a duplicate while the job runs makes it run once more, logged skipped:unchanged with no second enrichment', async () => {
      const h = await start();
      const inst = await h.install({ environment: 'production' });
      const first = await add(h, inst, 'c1', contact(AMANDA));
      const claimed = await h.opened.queue.claimBatch({ workerId: 'w', limit: 10, leaseMs: 60_000 });
      expect(await again(h, inst, 'c1', { trigger: 'update' })).toEqual({ id: first.id, created: false });
      await h.bridge.pipeline.processBatch(claimed, 'w');
      expect(await jobOf(h, 'c1')).toMatchObject({ state: 'queued', attempts: 0 });
      await h.drain();
      expect(await outcomes(h, inst, 'c1')).toEqual(['enriched', 'skipped:unchanged']);
      expect(await jobOf(h, 'c1')).toMatchObject({ state: 'done' });
      expect(await quotaUsed(h, inst)).toBe(1);
      expect(writesTo(h, 'c1')).toHaveLength(1);
    });
  });

  describe('retries and dead letters', () => {
    it('a transient CRM failure is retried with backoff, and dead after maxAttempts', async () => {
      const h = await start();
      const inst = await h.install();
      h.crm.create(CONTACT, 'c1', contact(AMANDA));
      await h.opened.queue.enqueue({ ...enrichJob(inst.id, { object: CONTACT, recordId: 'c1' }), maxAttempts: 3 });
      // The queue's own clock (the database's on PostgreSQL): the job was queued at its time, not the host's.
      let now = h.opened.clock.now();
      for (let attempt = 1; attempt <= 3; attempt += 1) {
        h.crm.failNext('write', () => new CrmError('transient', 'the CRM answered 503'));
        const claimed = await h.opened.queue.claimBatch({ workerId: 'w', limit: 10, leaseMs: 60_000, now });
        expect(claimed.map((job) => job.attempts)).toEqual([attempt]);
        // On the clock the queue writes run times on (PostgreSQL: the database's, read as this host's
        // plus a measured offset that can differ from it by a millisecond or more).
        const before = h.opened.clock.now().getTime();
        await h.bridge.pipeline.processBatch(claimed, 'w');
        const after = h.opened.clock.now().getTime();
        const job = await jobOf(h, 'c1');
        if (attempt < 3) {
          expect(job.state).toBe('queued');
          const due = Date.parse(job.runAt);
          expect(due).toBeGreaterThanOrEqual(before + retryDelayMs(attempt));
          expect(due).toBeLessThanOrEqual(after + retryDelayMs(attempt));
          expect(await h.opened.queue.claimBatch({ workerId: 'w', limit: 10, leaseMs: 60_000, now: new Date(due - 1) })).toEqual([]);
          now = new Date(due);
        } else {
          expect(job).toMatchObject({ state: 'dead', attempts: 3 });
          expect(job.lastError).toMatch(/transient.*503/);
        }
      }
      expect(await outcomes(h, inst, 'c1')).toEqual(['failed:crm_transient', 'failed:crm_transient', 'failed:crm_transient']);
      expect(ours(h, 'c1')).toEqual({});
      expect(await h.opened.queue.claimBatch({ workerId: 'w', limit: 10, leaseMs: 60_000, now: new Date(Date.now() + DAY_MS) })).toEqual([]);
    });

    it('a record the CRM rejects is dead at once; a transient per-record write error is retried', async () => {
      const h = await start();
      const inst = await h.install();
      await add(h, inst, 'rejected', contact(AMANDA));
      await add(h, inst, 'flaky', contact(DANIEL));
      h.crm.writeErrors.set('rejected', { reason: 'rejected', message: 'INVALID_FIELD' });
      h.crm.writeErrors.set('flaky', { reason: 'transient', message: 'UNABLE_TO_LOCK_ROW' });
      await h.drain();
      expect(await jobOf(h, 'rejected')).toMatchObject({ state: 'dead', attempts: 1 });
      expect((await jobOf(h, 'rejected')).lastError).toMatch(/rejected.*INVALID_FIELD/);
      expect(await outcomes(h, inst, 'rejected')).toEqual(['failed:crm_rejected']);
      const flaky = await jobOf(h, 'flaky');
      expect(flaky).toMatchObject({ state: 'queued', attempts: 1 });
      expect(Date.parse(flaky.runAt)).toBeGreaterThan(Date.now());
      expect(await outcomes(h, inst, 'flaky')).toEqual(['failed:crm_write']);
      expect(await stateOf(h, inst, 'flaky')).toBeUndefined();

      h.crm.writeErrors.clear();
      const { jobs } = await runAt(h, new Date(Date.parse(flaky.runAt)));
      expect(jobs.map(recordIdOf)).toEqual(['flaky']);
      expect(await outcomes(h, inst, 'flaky')).toEqual(['failed:crm_write', 'enriched']);
      expect(await jobOf(h, 'rejected')).toMatchObject({ state: 'dead' });
    });

    it('retrying dead jobs skips a record queued again and takes one job per record, and the records are enriched', async () => {
      const h = await start();
      const inst = await h.install();
      await add(h, inst, 'queued-again', contact(AMANDA));
      await add(h, inst, 'dead-twice', contact(DANIEL));
      for (const id of ['queued-again', 'dead-twice']) h.crm.writeErrors.set(id, { reason: 'rejected', message: 'INVALID_FIELD' });
      await h.drain();
      for (const id of ['queued-again', 'dead-twice']) await again(h, inst, id);
      await h.drain();
      expect(await h.opened.queue.list({ state: 'dead' })).toHaveLength(4);

      // The admin fixes the CRM field; a new event for one record arrives; then every dead job is retried.
      h.crm.writeErrors.clear();
      await again(h, inst, 'queued-again');
      expect(await h.opened.queue.retryDead('all')).toBe(1);
      await h.drain();
      for (const id of ['queued-again', 'dead-twice']) {
        expect(await outcomes(h, inst, id)).toEqual(['failed:crm_rejected', 'failed:crm_rejected', 'enriched']);
      }
      const states = (await h.opened.queue.list()).map((job) => job.state);
      expect(states.filter((state) => state === 'queued' || state === 'running')).toEqual([]);
    });

    it('an enrichment refused with 401 is failed:rejected_401 and dead, never retried', async () => {
      const h = await start();
      const inst = await h.install({ environment: 'production' });
      if (inst.target.kind !== 'local') throw new Error('a local target was expected');
      // Revoked before its first use, so no cached credential outlives it.
      expect(await h.opened.store.revokeToken({ id: inst.target.tokenId })).toBe(true);
      await add(h, inst, 'c1', contact(AMANDA));
      await h.drain();
      expect(await outcomes(h, inst, 'c1')).toEqual(['failed:rejected_401']);
      expect(await jobOf(h, 'c1')).toMatchObject({ state: 'dead', attempts: 1 });
      expect(await h.opened.queue.claimBatch({ workerId: 'w', limit: 10, leaseMs: 60_000, now: new Date(Date.now() + DAY_MS) })).toEqual([]);
      expect(h.crm.writes).toEqual([]);
    });
  });

  describe('limits and pauses', () => {
    it('a 402 pauses the installation until the quota resets, holds its jobs, and it resumes by itself after', async () => {
      const h = await start();
      const inst = await h.install({ environment: 'production', account: { quotaLimit: 2, quotaPeriod: 'day' } });
      await add(h, inst, 'c1', contact(AMANDA));
      await add(h, inst, 'c2', contact(DANIEL));
      await add(h, inst, 'c3', contact(MICHELLE));
      await h.drain();

      const reset = currentPeriod('day', h.clock.now).resetsAt;
      if (reset === null) throw new Error('a daily quota resets');
      expect(reset.getTime() % DAY_MS).toBe(0);
      expect(await h.bridge.installations.require(inst.id)).toMatchObject({ status: 'paused', pauseReason: 'quota', pausedUntil: reset.toISOString() });
      const jobs = await h.opened.queue.list();
      const held = jobs.filter((job) => job.state === 'queued');
      expect(jobs.filter((job) => job.state === 'done')).toHaveLength(2);
      expect(held).toHaveLength(1);
      const [heldJob] = held;
      if (heldJob === undefined) throw new Error('one job is held');
      expect(heldJob).toMatchObject({ attempts: 0, runAt: reset.toISOString() });
      const heldId = recordIdOf(heldJob);
      expect((await logOf(h, inst, heldId)).map((entry) => [entry.outcome, entry.quotaConsumed])).toEqual([['skipped:quota_paused', 0]]);
      expect(await quotaUsed(h, inst)).toBe(2);

      // While paused, a new record waits as well, and nothing is read or sent.
      const calls = h.crm.calls.length;
      await add(h, inst, 'c4', contact(JAMES));
      expect(await h.drain()).toBe(1);
      expect(await outcomes(h, inst, 'c4')).toEqual(['skipped:quota_paused']);
      expect(await jobOf(h, 'c4')).toMatchObject({ state: 'queued', attempts: 0, runAt: reset.toISOString() });
      expect(h.crm.calls.length).toBe(calls);
      expect(await quotaUsed(h, inst)).toBe(2);

      // Past the reset: the installation resumes by itself and the held records are enriched.
      h.clock.now = new Date(reset.getTime() + 60_000);
      const { jobs: resumed } = await runAt(h, h.clock.now);
      expect(resumed.map(recordIdOf).sort()).toEqual([heldId, 'c4'].sort());
      expect(await h.bridge.installations.require(inst.id)).toMatchObject({ status: 'active', pauseReason: null, pausedUntil: null });
      expect((await h.opened.queue.list()).every((job) => job.state === 'done')).toBe(true);
      expect((await outcomes(h, inst)).filter((outcome) => outcome === 'enriched')).toHaveLength(4);
      expect(await quotaUsed(h, inst)).toBe(2);
    });

    it('resume() brings the jobs held for a quota back at once', async () => {
      const h = await start();
      const inst = await h.install({ environment: 'production', account: { quotaLimit: 1, quotaPeriod: 'day' } });
      await add(h, inst, 'c1', contact(AMANDA));
      await add(h, inst, 'c2', contact(DANIEL));
      await h.drain();
      expect((await h.bridge.installations.require(inst.id)).status).toBe('paused');
      expect(await h.drain()).toBe(0);

      // The operator raises the quota and resumes, well before the reset.
      await updateAccount(h.opened.store, await accountName(h, inst), { quotaLimit: 10 });
      expect(await h.bridge.installations.resume(inst.id)).toMatchObject({ status: 'active', pauseReason: null, pausedUntil: null });
      const held = (await h.opened.queue.list()).filter((job) => job.state === 'queued');
      expect(held).toHaveLength(1);
      expect(Date.parse(held[0]?.runAt ?? '')).toBeLessThanOrEqual(Date.now());
      // The service honours a cached account for this long; the new quota counts after it.
      await sleep(CREDENTIAL_CACHE_MS + 20);
      expect(await h.drain()).toBe(1);
      expect((await outcomes(h, inst)).filter((outcome) => outcome === 'enriched')).toHaveLength(2);
      expect((await h.opened.queue.list()).every((job) => job.state === 'done')).toBe(true);
    });

    it('crm_limit_paused: a CRM limit on read pauses the installation until its reset, then it resumes', async () => {
      const h = await start();
      const inst = await h.install({ environment: 'production' });
      const retryAt = new Date(h.clock.now.getTime() + 2 * HOUR_MS);
      await add(h, inst, 'c1', contact(AMANDA));
      await add(h, inst, 'c2', contact(DANIEL));
      h.crm.failNext('read', () => new CrmError('limit_exhausted', 'daily API limit reached', retryAt));
      await h.drain();
      expect(await h.bridge.installations.require(inst.id)).toMatchObject({ status: 'paused', pauseReason: 'crm_limit', pausedUntil: retryAt.toISOString() });
      expect(await outcomes(h, inst)).toEqual(['skipped:crm_limit_paused', 'skipped:crm_limit_paused']);
      for (const id of ['c1', 'c2']) expect(await jobOf(h, id)).toMatchObject({ state: 'queued', attempts: 0, runAt: retryAt.toISOString() });
      expect(await quotaUsed(h, inst)).toBe(0);

      const calls = h.crm.calls.length;
      await add(h, inst, 'c3', contact(MICHELLE));
      await h.drain();
      expect(await outcomes(h, inst, 'c3')).toEqual(['skipped:crm_limit_paused']);
      expect(h.crm.calls.length).toBe(calls);

      h.clock.now = new Date(retryAt.getTime() + 1_000);
      const { jobs } = await runAt(h, h.clock.now);
      expect(jobs).toHaveLength(3);
      expect((await h.bridge.installations.require(inst.id)).status).toBe('active');
      expect((await outcomes(h, inst)).filter((outcome) => outcome === 'enriched')).toHaveLength(3);
    });

    it('resume() brings the jobs held for a CRM limit back at once', async () => {
      const h = await start();
      const inst = await h.install();
      await add(h, inst, 'c1', contact(AMANDA));
      h.crm.failNext('read', () => new CrmError('limit_exhausted', 'daily API limit reached', new Date(h.clock.now.getTime() + DAY_MS)));
      await h.drain();
      expect(await h.drain()).toBe(0);
      await h.bridge.installations.resume(inst.id);
      expect(await h.drain()).toBe(1);
      expect(await outcomes(h, inst, 'c1')).toEqual(['skipped:crm_limit_paused', 'enriched']);
    });

    it('a CRM limit on write pauses the installation and the rest of the batch is neither read nor enriched', async () => {
      const h = await start({ maxBatch: 2 });
      const inst = await h.install({ environment: 'production' });
      const retryAt = new Date(h.clock.now.getTime() + HOUR_MS);
      for (const [id, who] of [
        ['c1', AMANDA],
        ['c2', DANIEL],
        ['c3', MICHELLE],
        ['c4', JAMES],
      ] as const)
        await add(h, inst, id, contact(who));
      h.crm.failNext('write', () => new CrmError('limit_exhausted', 'daily API limit reached', retryAt));
      await h.drain();
      expect(await h.bridge.installations.require(inst.id)).toMatchObject({ status: 'paused', pauseReason: 'crm_limit', pausedUntil: retryAt.toISOString() });
      expect(crmCalls(h, 'read')).toBe(1);
      expect(await quotaUsed(h, inst)).toBe(2);
      for (const id of ['c1', 'c2', 'c3', 'c4']) {
        expect(await jobOf(h, id)).toMatchObject({ state: 'queued', attempts: 0, runAt: retryAt.toISOString() });
        expect(await outcomes(h, inst, id)).toEqual(['skipped:crm_limit_paused']);
      }
    });

    it('a rate_limited read releases the batch to retryAt without counting an attempt', async () => {
      const h = await start({ maxBatch: 2 });
      const inst = await h.install();
      const retryAt = new Date(h.clock.now.getTime() + 10_000);
      for (const [id, who] of [
        ['c1', AMANDA],
        ['c2', DANIEL],
        ['c3', MICHELLE],
      ] as const)
        await add(h, inst, id, contact(who));
      h.crm.failNext('read', () => new CrmError('rate_limited', 'ten-second limit', retryAt));
      expect(await h.drain()).toBe(1);
      expect(crmCalls(h, 'read')).toBe(1);
      for (const id of ['c1', 'c2', 'c3']) expect(await jobOf(h, id)).toMatchObject({ state: 'queued', attempts: 0, runAt: retryAt.toISOString() });
      expect(await outcomes(h, inst)).toEqual([]);
      expect((await h.bridge.installations.require(inst.id)).status).toBe('active');

      h.clock.now = retryAt;
      const { jobs } = await runAt(h, retryAt);
      expect(jobs.map((job) => job.attempts)).toEqual([1, 1, 1]);
      expect(await outcomes(h, inst)).toEqual(['enriched', 'enriched', 'enriched']);
    });
  });

  describe('batching', () => {
    // One claim of all 250 jobs: the pipeline itself cuts them into CRM-sized calls.
    it('250 records with maxBatch 100 take at most 3 reads and 3 writes', async () => {
      const h = await start({ maxBatch: 100 });
      const inst = await h.install();
      for (let i = 0; i < 250; i += 1) {
        const who = PERSONAS[i % PERSONAS.length];
        if (who === undefined) throw new Error('no persona');
        await add(h, inst, `c${i}`, contact(who));
      }
      await h.drain(h.worker({ batchSize: 250 }));
      expect(crmCalls(h, 'read')).toBeLessThanOrEqual(3);
      expect(crmCalls(h, 'write')).toBeLessThanOrEqual(3);
      expect(Math.max(...h.crm.calls.map((call) => call.ids.length))).toBeLessThanOrEqual(100);
      expect(new Set(h.crm.writes.map((write) => write.id)).size).toBe(250);
      expect((await outcomes(h, inst)).filter((outcome) => outcome === 'enriched')).toHaveLength(250);
    });
  });

  describe('worker stop', () => {
    it('stop() during a batch finishes the slice being written and releases the rest untouched', async () => {
      const h = await start({ maxBatch: 4 });
      const inst = await h.install();
      for (let i = 1; i <= 10; i += 1) {
        const who = PERSONAS[i - 1];
        if (who === undefined) throw new Error('no persona');
        await add(h, inst, `c${i}`, contact(who));
      }
      const worker = h.worker();
      const write = h.crm.write.bind(h.crm);
      const stopped = new Promise<void>((resolve, reject) => {
        vi.spyOn(h.crm, 'write').mockImplementationOnce((object, updates) => {
          worker.stop().then(resolve, reject);
          return write(object, updates);
        });
      });
      worker.start();
      await stopped;

      const jobs = await h.opened.queue.list();
      const done = jobs.filter((job) => job.state === 'done').map(recordIdOf);
      const queued = jobs.filter((job) => job.state === 'queued');
      expect(done.sort()).toEqual(['c1', 'c2', 'c3', 'c4']);
      expect(queued).toHaveLength(6);
      expect(queued.every((job) => job.attempts === 0 && job.leaseOwner === null)).toBe(true);
      for (const job of queued) {
        expect(await outcomes(h, inst, recordIdOf(job))).toEqual([]);
        expect(ours(h, recordIdOf(job))).toEqual({});
      }
      expect(crmCalls(h, 'read')).toBe(1);

      // The released records are there for the next worker.
      await h.drain();
      expect((await outcomes(h, inst)).filter((outcome) => outcome === 'enriched')).toHaveLength(10);
    });

    it('stop() while enrichments are in flight writes those and releases the records not yet sent', async () => {
      const h = await start();
      const inst = await h.install();
      for (let i = 1; i <= 12; i += 1) {
        const who = PERSONAS[i - 1];
        if (who === undefined) throw new Error('no persona');
        await add(h, inst, `c${i}`, contact(who));
      }
      const worker = h.worker();
      const enrich = h.service.enrichRecord.bind(h.service);
      const stopped = new Promise<void>((resolve, reject) => {
        vi.spyOn(h.service, 'enrichRecord').mockImplementationOnce((call) => {
          worker.stop().then(resolve, reject);
          return enrich(call);
        });
      });
      worker.start();
      await stopped;

      const jobs = await h.opened.queue.list();
      const done = jobs.filter((job) => job.state === 'done');
      const queued = jobs.filter((job) => job.state === 'queued');
      expect(done.length).toBeGreaterThan(0);
      expect(queued.length).toBeGreaterThan(0);
      expect(done.length + queued.length).toBe(12);
      for (const job of done) {
        const id = recordIdOf(job);
        expect(await outcomes(h, inst, id)).toEqual(['enriched']);
        expect(ours(h, id)[p('status.enrichment_status')]).toBe('enriched');
      }
      for (const job of queued) {
        const id = recordIdOf(job);
        expect(job.attempts).toBe(0);
        expect(await outcomes(h, inst, id)).toEqual([]);
        expect(await stateOf(h, inst, id)).toBeUndefined();
        expect(ours(h, id)).toEqual({});
      }
    });
  });
});

// Only PostgreSQL runs transactions side by side; SQLite's one writer already keeps them apart.
describe.skipIf(TEST_DATABASES.length < 2)('erasures on PostgreSQL', () => {
  it('saving outcomes waits for an erasure of the installation in flight, so an erasure is never undone', async () => {
    const h = await startPipeline({ database: TEST_DATABASES[1] });
    harnesses.push(h);
    const inst = await h.install();
    // An erasure in flight: its transaction holds the installation's erasure lock.
    const locking = new pg.Client({ connectionString: h.location });
    await locking.connect();
    await locking.query('BEGIN');
    await locking.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`eb-erasure:${inst.id}`]);
    let saved = false;
    const save = h.bridge.pipelineStore
      .saveOutcomes(
        [
          {
            installationId: inst.id,
            object: CONTACT,
            recordId: 'r1',
            householdMatched: true,
            careerMatched: false,
            windfallId: null,
            confidence: null,
            enrichedAt: new Date().toISOString(),
            inputHash: 'h',
            written: {},
          },
        ],
        [],
      )
      .then(() => (saved = true));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(saved).toBe(false);
    await locking.query('COMMIT');
    await locking.end();
    await save;
    expect(saved).toBe(true);
  });
});
