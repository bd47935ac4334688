// A pipeline worker in a process of its own (the real `enrichbridge worker` path, test/support/
// pipeline-worker.ts) against a MemoryCrm served by this process: killed with SIGKILL mid-batch, or
// stopped with SIGTERM mid-batch, then restarted. Nothing is lost and the final CRM state is right.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAccount } from '../../core/accounts/admin.ts';
import { NoSnapshotMatcher } from '../../core/enrich/production-matcher.ts';
import { EnrichService } from '../../core/enrich/service.ts';
import { MemoryRateLimiter } from '../../core/limits/rate-limiter.ts';
import type { Job } from '../../bridge/job-queue.ts';
import { PERSONAS, type Persona } from '../../core/sandbox/personas.ts';
import { loadSecretBox } from '../../core/secrets/secret-box.ts';
import type { OpenedStorage } from '../../bridge/storage.ts';
import { type Bridge, ConnectorRegistry, createBridge } from '../../bridge/bridge.ts';
import type { RecordUpdate, WriteResult } from '../../bridge/connector.ts';
import type { Installation } from '../../bridge/model.ts';
import { enrichJob } from '../../bridge/enrich-job.ts';
import { openDataFolder } from '../../server/runtime.ts';
import { tempDir } from '../support/harness.ts';
import { MemoryCrm, type Properties, serveMemoryCrm } from '../support/memory-crm.ts';
import { type Proc, REPO, startProcess } from '../support/processes.ts';

/** The provider test/support/pipeline-worker.ts registers. */
const PROVIDER = 'memcrm-http';
const OBJECT = 'contact';

/** The worker's log line for a batch (counts only). */
const BatchLineSchema = z.object({ jobs: z.number(), released: z.number(), outcomes: z.record(z.string(), z.number()) });

/**
 * A MemoryCrm that runs an action once its Nth read or write call has been applied, before the answer
 * goes back: the worker's process is signalled while the CRM holds its writes and it does not know.
 */
class TrippedCrm extends MemoryCrm {
  private trip: { on: 'read' | 'write'; call: number; action: () => void } | null = null;

  tripOn(on: 'read' | 'write', call: number, action: () => void): void {
    this.trip = { on, call, action };
  }

  private check(on: 'read' | 'write'): void {
    const trip = this.trip;
    if (trip === null || trip.on !== on) return;
    if (this.calls.filter((c) => c.kind === on).length < trip.call) return;
    this.trip = null;
    trip.action();
  }

  override read(object: string, ids: readonly string[]) {
    const records = super.read(object, ids);
    this.check('read');
    return records;
  }

  override write(object: string, updates: readonly RecordUpdate[]): WriteResult[] {
    const results = super.write(object, updates);
    this.check('write');
    return results;
  }
}

interface Folder {
  readonly env: Record<string, string>;
  readonly opened: OpenedStorage;
  readonly bridge: Bridge;
  readonly installation: Installation;
  readonly crm: TrippedCrm;
  readonly records: readonly { id: string; persona: Persona }[];
}

const cleanups: (() => Promise<void> | void)[] = [];
const workers: Proc[] = [];

function killGroup(proc: Proc, signal: NodeJS.Signals): void {
  const { pid } = proc.child;
  if (pid === undefined || proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

afterEach(async () => {
  for (const proc of workers.splice(0)) {
    killGroup(proc, 'SIGKILL');
    await proc.exited();
  }
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A data folder with a fixed secret key (a 2 s worker lease unless `defaultLease`), a local account at `rate`/s, a `memcrm-http` installation in
 * the sandbox whose sealed CRM credentials point at a served MemoryCrm, and `count` contacts (the
 * sandbox personas in turn, each under its own record id) queued for enrichment.
 */
async function setUp(count: number, rate: number, options: { defaultLease?: boolean } = {}): Promise<Folder> {
  const dataDir = tempDir('enrichbridge-crash-');
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const key = randomBytes(32).toString('hex');
  // A short lease unless the test is about the default one (WORKER_LEASE_MS unset, also in our own env).
  const env: Record<string, string> = { DATA_DIR: dataDir, ENRICHBRIDGE_SECRET_KEY: key, LOG_LEVEL: 'info', WORKER_LEASE_MS: '2000' };
  if (options.defaultLease === true) delete env['WORKER_LEASE_MS'];
  const opened = await openDataFolder(dataDir);
  cleanups.push(() => opened.store.close());
  const { store, queue, db } = opened;
  const bridge = createBridge({
    db,
    store,
    queue,
    box: loadSecretBox({ dataDir, env: { ENRICHBRIDGE_SECRET_KEY: key } }),
    service: new EnrichService({ store, rateLimiter: new MemoryRateLimiter(), productionMatcher: new NoSnapshotMatcher() }),
    connectors: new ConnectorRegistry(),
  });
  const crm = new TrippedCrm();
  const served = await serveMemoryCrm(crm);
  cleanups.push(() => served.close());
  await createAccount(store, 'crm-owner', { careerIntelligence: true, rateLimit: rate });
  const installation = await bridge.installations.create({
    provider: PROVIDER,
    externalAccountId: 'portal-1',
    environment: 'sandbox',
    target: { kind: 'local', accountName: 'crm-owner' },
    crmCredentials: { baseUrl: served.url },
  });
  const records = Array.from({ length: count }, (_, i) => {
    const persona = PERSONAS[i % PERSONAS.length];
    if (persona === undefined) throw new Error('no sandbox personas');
    return { id: `c-${String(i + 1).padStart(4, '0')}`, persona };
  });
  for (const { id, persona: p } of records) {
    crm.create(OBJECT, id, {
      first_name: p.first_name,
      last_name: p.last_name,
      email: p.email,
      phone: p.phone,
      street: p.address,
      city: p.city,
      state: p.state,
      zip: p.zipcode,
      company: null,
    });
    await queue.enqueue(enrichJob(installation.id, { object: OBJECT, recordId: id }));
  }
  return { env, opened, bridge, installation, crm, records };
}

/**
 * test/support/pipeline-worker.ts bundled once for the file, beside the CLI's and the server's bundles (the
 * global setup's), as scripts/build.ts bundles them: each of the six worker starts then loads one file
 * instead of tsx transforming some 250 (about half the start-up time).
 */
const WORKER_BUNDLE = path.join(REPO, 'dist', 'pipeline-worker.test.mjs');
beforeAll(async () => {
  await build({
    absWorkingDir: REPO,
    entryPoints: ['test/support/pipeline-worker.ts'],
    outfile: WORKER_BUNDLE,
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'warning',
  });
});

function startWorker(folder: Folder, options: { concurrency: number; maxBatch: number }): Proc {
  const proc = startProcess(
    process.execPath,
    [WORKER_BUNDLE, '--concurrency', String(options.concurrency), '--max-batch', String(options.maxBatch)],
    folder.env,
  );
  workers.push(proc);
  return proc;
}

async function waitUntil(what: string, condition: () => Promise<boolean>, timeoutMs = 25_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function jobs(folder: Folder): Promise<Job[]> {
  return folder.opened.queue.list({ limit: 100_000 });
}

function recordIdOf(job: Job): string {
  const payload = job.payload;
  if (typeof payload !== 'object' || payload === null || !('recordId' in payload) || typeof payload.recordId !== 'string') {
    throw new Error(`job ${job.id} has no record id`);
  }
  return payload.recordId;
}

function countBy<T>(items: readonly T[], key: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[key(item)] = (counts[key(item)] ?? 0) + 1;
  return counts;
}

async function allDone(folder: Folder): Promise<boolean> {
  const all = await jobs(folder);
  return all.length === folder.records.length && all.every((job) => job.state === 'done');
}

/** What a sandbox enrichment of the persona leaves on the record. */
function expectEnriched(props: Properties | undefined, persona: Persona): void {
  expect(props).toMatchObject({
    wf_status_enrichment_status: 'enriched',
    wf_status_household_matched: persona.household !== undefined,
    wf_status_career_matched: persona.career !== undefined,
    wf_status_enriched_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
  });
  if (persona.household !== undefined) expect(props?.wf_household_windfall_id).toBe(persona.household.windfall_id);
  else expect(props?.wf_household_windfall_id).toBeUndefined();
  if (persona.career?.linkedin_url !== undefined) expect(props?.wf_career_linkedin_url).toBe(persona.career.linkedin_url);
}

/**
 * Every record carries its persona's enrichment, the record state agrees with the CRM (what `tracked`
 * compares with next time is what is there), and the log has one `enriched` entry per record.
 */
async function expectFinalState(folder: Folder): Promise<void> {
  const { records, crm, bridge, installation } = folder;
  const states = await bridge.pipelineStore.recordStates(
    installation.id,
    OBJECT,
    records.map((r) => r.id),
  );
  const log = await bridge.pipelineStore.listLog({ installationId: installation.id, limit: 100_000 });
  const logged = new Map<string, string[]>();
  for (const entry of log) logged.set(entry.recordId, [...(logged.get(entry.recordId) ?? []), entry.outcome]);
  for (const { id, persona } of records) {
    const props = crm.get(OBJECT, id);
    expectEnriched(props, persona);
    const state = states.get(id);
    expect(state, `record state of ${id}`).toBeDefined();
    expect(state?.windfallId ?? null).toBe(persona.household?.windfall_id ?? null);
    const written = state?.written ?? {};
    expect(Object.keys(written)).toContain('wf_status_enriched_at');
    expect(Object.fromEntries(Object.keys(written).map((property) => [property, props?.[property]])), `CRM values of ${id} vs its record state`).toEqual(
      written,
    );
    expect(logged.get(id), `log of ${id}`).toEqual(['enriched']);
  }
}

describe('a pipeline worker in its own process', () => {
  it('killed with SIGKILL mid-batch: after a restart every record is enriched and no job is lost', { timeout: 40_000 }, async () => {
    const folder = await setUp(300, 50);
    const first = startWorker(folder, { concurrency: 2, maxBatch: 25 });
    // The third write call lands in the CRM, then the worker dies before it hears back: two batches
    // of 100 are leased, three slices of 25 written, no batch finished.
    let writtenBeforeKill: Set<string> | undefined;
    folder.crm.tripOn('write', 3, () => {
      writtenBeforeKill = new Set(folder.crm.writes.map((w) => w.id));
      killGroup(first, 'SIGKILL');
    });
    expect(await first.exited()).toBeNull(); // killed by a signal, no exit code
    expect(first.child.signalCode).toBe('SIGKILL');
    expect(writtenBeforeKill?.size ?? 0).toBeGreaterThan(0);
    // What the killed worker wrote: a write of its other lane may still land between the trip and the
    // signal taking effect, so this is read once the process is gone, not at the trip.
    const killedAfter = new Set(folder.crm.writes.map((w) => w.id));
    expect(killedAfter.size).toBeLessThan(folder.records.length);
    const atKill = countBy(await jobs(folder), (job) => job.state);
    expect(atKill.running ?? 0).toBeGreaterThan(0); // leases the dead worker held
    expect(atKill.done ?? 0).toBe(0);

    const second = startWorker(folder, { concurrency: 2, maxBatch: 25 });
    await waitUntil('every job done after the restart', () => allDone(folder));
    const settled = await jobs(folder);
    expect(countBy(settled, (job) => job.state)).toEqual({ done: folder.records.length });
    expect(new Set(settled.map(recordIdOf))).toEqual(new Set(folder.records.map((r) => r.id)));
    await expectFinalState(folder);

    // At-least-once: a record written by the killed worker may be written again (its job was not
    // completed), but only those, and only once more.
    const writes = countBy(folder.crm.writes, (w) => w.id);
    const rewritten = Object.entries(writes).filter(([, n]) => n > 1);
    for (const [id, n] of rewritten) {
      expect(killedAfter.has(id), `${id} written ${n} times but not by the killed worker`).toBe(true);
      expect(n).toBe(2);
    }
    console.log(
      `crash test: ${killedAfter.size} records written before the SIGKILL; ${rewritten.length} of ${folder.records.length} records written more than once, none more than twice`,
    );

    killGroup(second, 'SIGTERM');
    expect(await second.exited()).toBe(0);
  });

  it(
    "a killed worker's jobs come back in seconds: with the default lease, every queued contact is enriched within 60 s of the restart",
    { timeout: 120_000 },
    async () => {
      expect(process.env['WORKER_LEASE_MS'], 'this test is about the default lease').toBeUndefined();
      const folder = await setUp(300, 50, { defaultLease: true });
      const first = startWorker(folder, { concurrency: 2, maxBatch: 25 });
      folder.crm.tripOn('write', 3, () => killGroup(first, 'SIGKILL'));
      expect(await first.exited()).toBeNull();
      const leased = (await jobs(folder)).filter((job) => job.state === 'running');
      expect(leased.length).toBeGreaterThan(0); // leases the dead worker held

      const second = startWorker(folder, { concurrency: 2, maxBatch: 25 });
      // A hang limit, not a speed measure: with the old 5-minute lease the dead worker's jobs stayed
      // leased far past it.
      await waitUntil('every job done within 60 s of the restart', () => allDone(folder), 60_000);
      await expectFinalState(folder);
      killGroup(second, 'SIGTERM');
      expect(await second.exited()).toBe(0);
    },
  );

  it('stopped with SIGTERM mid-batch: exits 0, gives back its unfinished jobs uncounted, and the next worker finishes them', { timeout: 40_000 }, async () => {
    const folder = await setUp(100, 50);
    // One batch of all 100 jobs, read and written in slices of 25: SIGTERM lands as the second slice
    // is read, after the first slice was written.
    const first = startWorker(folder, { concurrency: 1, maxBatch: 25 });
    folder.crm.tripOn('read', 2, () => killGroup(first, 'SIGTERM'));
    expect(await first.exited()).toBe(0);
    expect(first.output()).toContain('"msg":"worker stopped"');

    const afterStop = await jobs(folder);
    expect(afterStop.filter((job) => job.state === 'running' || job.state === 'dead')).toEqual([]);
    const done = afterStop.filter((job) => job.state === 'done');
    const queued = afterStop.filter((job) => job.state === 'queued');
    expect(done.length).toBeGreaterThanOrEqual(25);
    expect(queued.length).toBeGreaterThan(0);
    expect(done.length + queued.length).toBe(folder.records.length);
    // Released, not failed: the delivery does not count as an attempt, and no error is recorded.
    for (const job of queued) expect(job, `released job ${job.id}`).toMatchObject({ attempts: 0, leaseOwner: null, leaseExpiresAt: null, lastError: null });
    // The CRM agrees with the queue: finished jobs' records are enriched, released ones untouched.
    const personaOf = new Map(folder.records.map((r) => [r.id, r.persona]));
    for (const job of done) {
      const id = recordIdOf(job);
      const persona = personaOf.get(id);
      if (persona === undefined) throw new Error(`no record ${id}`);
      expectEnriched(folder.crm.get(OBJECT, id), persona);
    }
    for (const job of queued) expect(folder.crm.get(OBJECT, recordIdOf(job))?.wf_status_enrichment_status).toBeUndefined();
    const batchLines = first
      .output()
      .split('\n')
      .filter((line) => line.includes('"msg":"pipeline batch"'))
      .map((line) => BatchLineSchema.parse(JSON.parse(line)));
    expect(batchLines).toEqual([expect.objectContaining({ jobs: folder.records.length, released: queued.length })]);

    const second = startWorker(folder, { concurrency: 1, maxBatch: 25 });
    await waitUntil('every job done after the restart', () => allDone(folder));
    await expectFinalState(folder);
    // Nothing was done twice: each record was written exactly once across both workers.
    expect(Object.values(countBy(folder.crm.writes, (w) => w.id))).toEqual(folder.records.map(() => 1));
    killGroup(second, 'SIGTERM');
    expect(await second.exited()).toBe(0);
  });
});
