// The durable job queue on a real SQLite file and on PostgreSQL (TEST_DATABASE_URL): dedupe, batches of one installation, leases and
// at-least-once delivery, retries with backoff, dead letters, release, restarts and a killed worker.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RETRY_BASE_MS } from '../../bridge/job-queue.ts';
import { openStorage } from '../../bridge/storage.ts';
import pg from 'pg';
import { TEST_DATABASES, TEST_DATABASE_URL } from '../support/databases.ts';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

const at = (iso: string) => new Date(iso);

describe.each(TEST_DATABASES)('Job queue on $name', (database) => {
  async function open(location?: string) {
    const file = location ?? (await database.fresh());
    const opened = await openStorage(file);
    closers.push(() => opened.store.close());
    return { ...opened, file };
  }

  it('dedupes a pending job by key, and takes the same key again once it is done', async () => {
    const { queue } = await open();
    const first = await queue.enqueue({ installationId: 'i1', kind: 'enrich', payload: { id: 'c1' }, dedupeKey: 'i1:c1' });
    const again = await queue.enqueue({ installationId: 'i1', kind: 'enrich', payload: { id: 'c1' }, dedupeKey: 'i1:c1' });
    expect(first.created).toBe(true);
    expect(again).toEqual({ id: first.id, created: false });
    const [job] = await queue.claimBatch({ workerId: 'w', limit: 10, leaseMs: 60_000 });
    await queue.complete(job?.id ?? '', 'w');
    expect((await queue.enqueue({ installationId: 'i1', kind: 'enrich', payload: {}, dedupeKey: 'i1:c1' })).created).toBe(true);
  });

  it('a duplicate that arrives while its twin runs makes the twin run once more, not a second job', async () => {
    const { queue } = await open();
    const first = await queue.enqueue({ installationId: 'i1', kind: 'enrich', payload: {}, dedupeKey: 'i1:c1' });
    const [running] = await queue.claimBatch({ workerId: 'w', limit: 10, leaseMs: 60_000 });
    expect(await queue.enqueue({ installationId: 'i1', kind: 'enrich', payload: {}, dedupeKey: 'i1:c1' })).toEqual({ id: first.id, created: false });
    await queue.complete(running?.id ?? '', 'w');
    const [again] = await queue.claimBatch({ workerId: 'w', limit: 10, leaseMs: 60_000 });
    expect(again).toMatchObject({ id: first.id, attempts: 1 });
    await queue.complete(again?.id ?? '', 'w');
    expect(await queue.list({ state: 'done' })).toHaveLength(1);
    expect(await queue.claimBatch({ workerId: 'w', limit: 10, leaseMs: 60_000 })).toEqual([]);
  });

  it('enqueueMany lands a batch in one transaction with the same dedupe rules as enqueue', async () => {
    const { queue } = await open();
    await queue.enqueue({ installationId: 'i', kind: 'enrich', payload: 0, dedupeKey: 'k0' });
    await queue.enqueue({ installationId: 'i', kind: 'enrich', payload: 1, dedupeKey: 'k1' });
    const [running] = await queue.claimBatch({ workerId: 'w', limit: 1, leaseMs: 60_000 });
    const result = await queue.enqueueMany([
      { installationId: 'i', kind: 'enrich', payload: 'a', dedupeKey: 'k0' },
      { installationId: 'i', kind: 'enrich', payload: 'b', dedupeKey: 'k1' },
      { installationId: 'i', kind: 'enrich', payload: 'c', dedupeKey: 'k2' },
      { installationId: 'i', kind: 'enrich', payload: 'd', dedupeKey: 'k2' },
    ]);
    expect(result).toEqual({ created: 1, duplicates: 3 });
    expect((await queue.list()).map((j) => j.dedupeKey).sort()).toEqual(['k0', 'k1', 'k2']);
    // The twin that was running when its duplicate arrived runs once more.
    await queue.complete(running?.id ?? '', 'w');
    expect((await queue.list({ state: 'queued' })).map((j) => j.dedupeKey).sort()).toEqual(['k0', 'k1', 'k2']);
  });

  it('a job whose lease runs out on its last allowed delivery is dead, not delivered again', async () => {
    const { queue } = await open();
    await queue.enqueue({ installationId: 'i', kind: 'enrich', payload: 1, maxAttempts: 3 });
    const later = (ms: number) => new Date(Date.now() + ms);
    for (let delivery = 1; delivery <= 3; delivery += 1) {
      const [job] = await queue.claimBatch({ workerId: `w${delivery}`, limit: 1, leaseMs: 1, now: later(delivery * 1000) });
      expect(job?.attempts).toBe(delivery);
    }
    expect(await queue.claimBatch({ workerId: 'w4', limit: 1, leaseMs: 1, now: later(10_000) })).toEqual([]);
    const [dead] = await queue.list({ state: 'dead' });
    expect(dead).toMatchObject({ attempts: 3, leaseOwner: null });
    expect(dead?.lastError).toMatch(/lease ran out/);
  });

  it('release with a time, lease extension and rescheduling an installation move only what they should', async () => {
    const { queue } = await open();
    await queue.enqueue({ installationId: 'a', kind: 'enrich', payload: 1 });
    await queue.enqueue({ installationId: 'a', kind: 'enrich', payload: 2 });
    await queue.enqueue({ installationId: 'b', kind: 'enrich', payload: 3 });
    const [held, other] = await queue.claimBatch({ workerId: 'w', limit: 1, leaseMs: 1_000 });
    expect(other).toBeUndefined();
    expect(await queue.extendLease([held?.id ?? ''], 'someone-else', 60_000)).toBe(0);
    expect(await queue.extendLease([held?.id ?? ''], 'w', 60_000)).toBe(1);
    const later = new Date(Date.now() + 3_600_000);
    expect(await queue.reschedule('a', later)).toBe(1);
    expect(await queue.release(held?.id ?? '', 'w', { runAt: later })).toBe(true);
    const ready = await queue.claimBatch({ workerId: 'w', limit: 10, leaseMs: 60_000 });
    expect(ready.map((j) => j.payload)).toEqual([3]);
    await queue.complete(ready[0]?.id ?? '', 'w');
    const afterPause = await queue.claimBatch({ workerId: 'w', limit: 10, leaseMs: 60_000, now: new Date(later.getTime() + 1) });
    expect(afterPause.map((j) => j.payload).sort()).toEqual([1, 2]);
    expect(afterPause.every((j) => j.attempts === 1)).toBe(true);
  });

  it('leases a batch of one installation at a time, oldest first, never the same job twice', async () => {
    const { queue } = await open();
    await queue.enqueue({ installationId: 'a', kind: 'enrich', payload: 1, runAt: at('2026-01-01T00:00:01Z') });
    await queue.enqueue({ installationId: 'b', kind: 'enrich', payload: 2, runAt: at('2026-01-01T00:00:02Z') });
    await queue.enqueue({ installationId: 'a', kind: 'enrich', payload: 3, runAt: at('2026-01-01T00:00:03Z') });
    await queue.enqueue({ installationId: 'a', kind: 'enrich', payload: 4, runAt: at('2026-01-01T00:00:04Z') });
    const first = await queue.claimBatch({ workerId: 'w1', limit: 2, leaseMs: 60_000 });
    expect(first.map((j) => [j.installationId, j.payload])).toEqual([
      ['a', 1],
      ['a', 3],
    ]);
    const second = await queue.claimBatch({ workerId: 'w2', limit: 10, leaseMs: 60_000 });
    expect(second.map((j) => [j.installationId, j.payload])).toEqual([['b', 2]]);
    const third = await queue.claimBatch({ workerId: 'w3', limit: 10, leaseMs: 60_000 });
    expect(third.map((j) => j.payload)).toEqual([4]);
    expect(await queue.claimBatch({ workerId: 'w4', limit: 10, leaseMs: 60_000 })).toEqual([]);
  });

  it('claims running side by side from several connections never lease the same job twice', async () => {
    const { queue, file } = await open();
    const ids = new Set<string>();
    for (let i = 0; i < 120; i += 1) ids.add((await queue.enqueue({ installationId: `i${i % 6}`, kind: 'enrich', payload: { i } })).id);
    // Four processes' worth of connections (four stores on one database), each claiming until it finds nothing.
    const others = await Promise.all([1, 2, 3].map(() => open(file)));
    const claimed: string[] = [];
    await Promise.all(
      [queue, ...others.map((other) => other.queue)].map(async (claimer, n) => {
        for (;;) {
          const batch = await claimer.claimBatch({ workerId: `w${n}`, limit: 7, leaseMs: 60_000 });
          if (batch.length === 0) return;
          claimed.push(...batch.map((job) => job.id));
        }
      }),
    );
    expect(claimed).toHaveLength(ids.size);
    expect(new Set(claimed)).toEqual(ids);
  });

  it('announces enqueues to every connection that listens (PostgreSQL), so idle workers need not poll', async () => {
    const { queue, file } = await open();
    if (database.name === 'SQLite') {
      // One process's file: its workers are woken in process and poll for the CLI's enqueues.
      expect(queue.onReady).toBeUndefined();
      return;
    }
    const other = await open(file);
    let heard = 0;
    const waiters: (() => void)[] = [];
    const stop = queue.onReady?.(() => {
      heard += 1;
      waiters.shift()?.();
    });
    const next = () => new Promise<void>((resolve) => waiters.push(resolve));
    // Told once when the listening connection is up (anything announced before it is not lost)...
    await next();
    // ...and once for an enqueue on another connection.
    const announced = next();
    await other.queue.enqueue({ installationId: 'i', kind: 'enrich', payload: {} });
    await announced;
    stop?.();
    expect(heard).toBe(2);
  });

  it('announces a burst of enqueues in fewer notifications than enqueues, the last sent after the last enqueue was stored (PostgreSQL)', async () => {
    if (database.name === 'SQLite') return; // SQLite announces nothing.
    const { queue, file } = await open();
    const other = await open(file);
    // For each notification heard, in order, the jobs a worker woken by it finds.
    const found: Promise<number>[] = [];
    let lastHeard = 0;
    let up!: () => void;
    const listening = new Promise<void>((resolve) => (up = resolve));
    const stop = queue.onReady?.(() => {
      lastHeard = Date.now();
      found.push(queue.list().then((jobs) => jobs.length));
      up();
    });
    // Told once when the listening connection is up.
    await listening;
    const enqueues = 30;
    await Promise.all(Array.from({ length: enqueues }, (_, n) => other.queue.enqueue({ installationId: 'i', kind: 'enrich', payload: { n } })));
    // Until no notification has come for half a second.
    while (Date.now() - lastHeard < 500) await new Promise((resolve) => setTimeout(resolve, 50));
    stop?.();
    const counts = await Promise.all(found);
    const announcements = counts.length - 1;
    expect(announcements).toBeGreaterThanOrEqual(1);
    expect(announcements).toBeLessThan(enqueues);
    expect(counts.at(-1)).toBe(enqueues);
  });

  it('an enqueue that is stored is reported stored even when its announcement cannot be sent', async () => {
    if (database.name === 'SQLite') return; // SQLite announces nothing.
    // A schema whose name makes the notification channel longer than PostgreSQL allows (63 bytes).
    const base = TEST_DATABASE_URL ?? '';
    // A name of its own: nothing is dropped while other test files read the catalogue side by side.
    const schema = `s${randomBytes(8).toString('hex')}`.padEnd(61, 'x');
    const admin = new pg.Client({ connectionString: base });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.end();
    const { queue } = await open(`${base}${base.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`);
    expect((await queue.enqueue({ installationId: 'i', kind: 'enrich', payload: {} })).created).toBe(true);
    expect(await queue.enqueueMany([{ installationId: 'i', kind: 'enrich', payload: { n: 2 } }])).toEqual({ created: 1, duplicates: 0 });
    expect(await queue.list()).toHaveLength(2);
  });

  it('delivers at least once: a job whose lease expired goes to another worker, and the first cannot complete it', async () => {
    const { queue, clock } = await open();
    await queue.enqueue({ installationId: 'i', kind: 'enrich', payload: {} });
    // The queue's own clock (the database's on PostgreSQL): the job was queued at its time, not the host's.
    const now = clock.now();
    const [leased] = await queue.claimBatch({ workerId: 'slow', limit: 1, leaseMs: 1000, now });
    expect(await queue.claimBatch({ workerId: 'other', limit: 1, leaseMs: 1000, now: new Date(now.getTime() + 500) })).toEqual([]);
    const [again] = await queue.claimBatch({ workerId: 'other', limit: 1, leaseMs: 1000, now: new Date(now.getTime() + 1500) });
    expect(again?.id).toBe(leased?.id);
    expect(again?.attempts).toBe(2);
    expect(await queue.complete(leased?.id ?? '', 'slow')).toBe(false);
    expect(await queue.complete(again?.id ?? '', 'other')).toBe(true);
  });

  it('claims the jobs whose lease ran out before the queued ones, and the queued ones oldest first within an installation', async () => {
    const { queue, clock } = await open();
    await queue.enqueueMany([1, 2, 3].map((n) => ({ installationId: 'b', kind: 'enrich', payload: { n } })));
    await queue.enqueue({ installationId: 'a', kind: 'enrich', payload: { n: 0 } });
    const now = clock.now();
    // A worker takes a's job (the newest) and dies.
    const [stuck] = await queue.claimBatch({ workerId: 'dead', limit: 1, leaseMs: 1000, now, avoid: ['b'] });
    expect(stuck?.installationId).toBe('a');
    const later = new Date(now.getTime() + 5000);
    // The job a dead worker held comes back first, in a claim of its own, though queued jobs wait.
    const recovered = await queue.claimBatch({ workerId: 'w', limit: 10, leaseMs: 1000, now: later });
    expect(recovered.map((job) => job.id)).toEqual([stuck?.id]);
    const queued = await queue.claimBatch({ workerId: 'w', limit: 10, leaseMs: 1000, now: later });
    expect(queued.map((job) => job.payload)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
  });

  it('retries a failed job after a backoff, and dead-letters it once its attempts are spent', async () => {
    const { queue } = await open();
    const t0 = new Date('2026-01-01T00:00:00Z');
    const { id } = await queue.enqueue({ installationId: 'i', kind: 'enrich', payload: {}, maxAttempts: 2, runAt: t0 });
    expect(await queue.claimBatch({ workerId: 'w', limit: 1, leaseMs: 60_000, now: t0 })).toHaveLength(1);
    expect(await queue.fail(id, 'w', 'HTTP 503', { now: t0 })).toBe('retrying');
    expect(await queue.claimBatch({ workerId: 'w', limit: 1, leaseMs: 60_000, now: new Date(t0.getTime() + RETRY_BASE_MS - 1) })).toEqual([]);
    const t1 = new Date(t0.getTime() + RETRY_BASE_MS);
    expect(await queue.claimBatch({ workerId: 'w', limit: 1, leaseMs: 60_000, now: t1 })).toHaveLength(1);
    expect(await queue.fail(id, 'w', 'HTTP 503 again', { now: t1 })).toBe('dead');
    expect(await queue.list({ state: 'dead' })).toMatchObject([{ id, attempts: 2, lastError: 'HTTP 503 again' }]);
    expect(await queue.retryDead('all')).toBe(1);
    expect(await queue.list({ state: 'queued' })).toMatchObject([{ id, attempts: 0, lastError: null }]);
  });

  it('dead-letters at once what retrying cannot help, and retries dead jobs by id', async () => {
    const { queue } = await open();
    const { id } = await queue.enqueue({ installationId: 'i', kind: 'enrich', payload: {} });
    await queue.claimBatch({ workerId: 'w', limit: 1, leaseMs: 60_000 });
    expect(await queue.fail(id, 'w', 'HTTP 401', { retryable: false })).toBe('dead');
    expect(await queue.fail(id, 'w', 'again')).toBe('not_leased');
    expect(await queue.retryDead(['job_unknown'])).toBe(0);
    expect(await queue.retryDead([id])).toBe(1);
  });

  it('takes a released job back without counting the attempt (graceful shutdown)', async () => {
    const { queue } = await open();
    const { id } = await queue.enqueue({ installationId: 'i', kind: 'enrich', payload: {} });
    await queue.claimBatch({ workerId: 'w', limit: 1, leaseMs: 60_000 });
    expect(await queue.release(id, 'w')).toBe(true);
    const [again] = await queue.claimBatch({ workerId: 'w2', limit: 1, leaseMs: 60_000 });
    expect(again).toMatchObject({ id, attempts: 1, leaseOwner: 'w2' });
  });

  it('survives a worker killed mid-batch: nothing is lost, and the batch is delivered again after the lease', async () => {
    const { queue, file } = await open();
    const ids = new Set<string>();
    for (let i = 0; i < 5; i += 1) ids.add((await queue.enqueue({ installationId: 'i', kind: 'enrich', payload: { i } })).id);
    const child = spawn(process.execPath, ['--import', 'tsx', path.resolve('test/support/queue-claimer.ts'), file, 'doomed', '1000'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const claimed = await new Promise<string[]>((resolve) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('\n')) resolve(JSON.parse(out));
      });
    });
    expect(new Set(claimed)).toEqual(ids);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    const later = new Date(Date.now() + 1500);
    const redelivered = await queue.claimBatch({ workerId: 'survivor', limit: 100, leaseMs: 60_000, now: later });
    expect(new Set(redelivered.map((j) => j.id))).toEqual(ids);
    for (const job of redelivered) expect(await queue.complete(job.id, 'survivor')).toBe(true);
    expect(await queue.list({ state: 'done' })).toHaveLength(5);
  });

  // PostgreSQL only: SQLite lives on one host, whose clock is the only one there is.
  it.runIf(database.name === 'PostgreSQL')(
    'leases and claims are on the database clock: a host whose clock runs 10 minutes ahead neither takes a held job nor holds one past its lease',
    async () => {
      const file = await database.fresh();
      const here = await open(file);
      // Another host on the same database, its clock 10 minutes fast (this process's Date, while it acts).
      const asTheFastHost = async <T>(work: () => Promise<T>): Promise<T> => {
        vi.useFakeTimers({ toFake: ['Date'] });
        vi.setSystemTime(Date.now() + 600_000);
        try {
          return await work();
        } finally {
          vi.useRealTimers();
        }
      };
      const ahead = await asTheFastHost(() => openStorage(file));
      closers.push(() => ahead.store.close());
      await here.queue.enqueue({ installationId: 'i', kind: 'enrich', payload: {} });
      const [held] = await here.queue.claimBatch({ workerId: 'here', limit: 1, leaseMs: 60_000 });
      expect(held).toBeDefined();
      // One clock for both: the lease has 60 s to run, whatever the fast host's clock says.
      expect(await asTheFastHost(() => ahead.queue.claimBatch({ workerId: 'ahead', limit: 1, leaseMs: 60_000 }))).toEqual([]);
      // And a lease the fast host takes runs out 60 s from the database's now, not 10 minutes later.
      await here.queue.enqueue({ installationId: 'j', kind: 'enrich', payload: {} });
      const [mine] = await asTheFastHost(() => ahead.queue.claimBatch({ workerId: 'ahead', limit: 1, leaseMs: 60_000 }));
      const left = Date.parse(mine?.leaseExpiresAt ?? '') - Date.now();
      expect(left).toBeGreaterThan(50_000);
      expect(left).toBeLessThan(70_000);
    },
  );

  it('keeps its jobs across a restart', async () => {
    const file = await database.fresh();
    const first = await openStorage(file);
    await first.queue.enqueue({ installationId: 'i', kind: 'enrich', payload: { keep: true } });
    await first.store.close();
    const { queue } = await open(file);
    expect(await queue.claimBatch({ workerId: 'w', limit: 5, leaseMs: 1000 })).toMatchObject([{ payload: { keep: true } }]);
  });
});
