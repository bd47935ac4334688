// `npm run bench:pipeline [-- --records N]`: N queued records (1,000 by default) drained by one worker
// through the real pipeline, enriched over HTTP against the sandbox of the real server process at the
// default 5 requests/s. Prints drain time, the achieved rate as a share of the limit, 429s and
// requests as the server logged them, CRM calls per record and the log's outcomes; exits non-zero
// when a record was lost (a job not done, or a record without its enrichment status).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { DEFAULT_RATE_PER_SECOND } from '../../core/client/enricher.ts';
import { NoSnapshotMatcher } from '../../core/enrich/production-matcher.ts';
import { EnrichService } from '../../core/enrich/service.ts';
import { MemoryRateLimiter } from '../../core/limits/rate-limiter.ts';
import type { JobQueue } from '../../bridge/job-queue.ts';
import { PERSONAS } from '../../core/sandbox/personas.ts';
import { loadSecretBox } from '../../core/secrets/secret-box.ts';
import { ConnectorRegistry, createBridge } from '../../bridge/bridge.ts';
import type { BatchSummary } from '../../bridge/pipeline.ts';
import { enrichJob } from '../../bridge/enrich-job.ts';
import { Worker } from '../../bridge/worker.ts';
import { openDataFolder } from '../../server/runtime.ts';
import { MemoryCrm, MemoryCrmConnector } from '../support/memory-crm.ts';
import { ROOT, cli, freePort, machine, stopChild, verdict, waitHealthy } from './bench-support.ts';

const PROVIDER = 'memcrm';
const OBJECT = 'contact';
const BATCH_SIZE = 100;
const PROGRESS_EVERY_MS = 10_000;
const TARGETS = { shareOfLimit: 0.95, tooManyRequests: 0, crmCallsPerRecord: 0.03 } as const;

const { values } = parseArgs({ options: { records: { type: 'string', default: '1000' } } });
const RECORDS = z.coerce.number().int().min(1).max(1_000_000).parse(values.records);

/** A server log line, as far as this bench reads it. */
const LogLineSchema = z.object({ msg: z.string(), method: z.string().optional(), route: z.string().optional(), status: z.number().optional() });

/** The server as `npm start` runs it, with its JSON log lines (one per request) kept for counting. */
function startServer(env: Record<string, string>): { child: ChildProcess; lines: () => string[] } {
  // NODE_ENV=production would demand HTTPS on this plain-HTTP loopback bench.
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => key !== 'NODE_ENV'));
  const child = spawn(process.execPath, ['bin/server.js'], { cwd: ROOT, env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return { child, lines: () => out.split('\n').filter((line) => line.startsWith('{')) };
}

/** The operator's path: the CLI creates the account (default rate limit) and prints the sandbox token. */
async function createSandboxToken(dataDir: string): Promise<string> {
  const env = { DATA_DIR: dataDir };
  await cli(['accounts', 'create', 'bench', '--career-intelligence'], env);
  const token = (await cli(['tokens', 'create', 'bench', '--env', 'sandbox'], env)).trim();
  if (!token.startsWith('sandbox_')) throw new Error(`the CLI printed no sandbox token: ${JSON.stringify(token)}`);
  return token;
}

function countBy<T>(items: readonly T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

async function jobStates(queue: JobQueue): Promise<Map<string, number>> {
  return countBy(await queue.list({ limit: RECORDS + 1_000 }), (job) => job.state);
}

const RecordPayloadSchema = z.object({ recordId: z.string() });

/** The records whose enrichment job is done. */
async function doneRecords(queue: JobQueue): Promise<Set<string>> {
  const done = await queue.list({ state: 'done', limit: RECORDS + 1_000 });
  return new Set(done.map((job) => RecordPayloadSchema.parse(job.payload).recordId));
}

const pad = (label: string) => label.padEnd(34);

async function main(): Promise<void> {
  const serverDir = mkdtempSync(path.join(os.tmpdir(), 'enrichbridge-bench-server-'));
  const benchDir = mkdtempSync(path.join(os.tmpdir(), 'enrichbridge-bench-bridge-'));
  let server: ReturnType<typeof startServer> | undefined;
  let opened: Awaited<ReturnType<typeof openDataFolder>> | undefined;
  try {
    const token = await createSandboxToken(serverDir);
    const port = await freePort();
    server = startServer({ PORT: String(port), DATA_DIR: serverDir, LOG_LEVEL: 'info', WORKER_CONCURRENCY: '0' });
    const serverUrl = `http://127.0.0.1:${port}`;
    await waitHealthy('server', server.child, `${serverUrl}/healthz`);

    // The bridge in this process, on a data folder of its own, enriching against the server's sandbox.
    opened = await openDataFolder(benchDir);
    const { store, queue, db } = opened;
    const crm = new MemoryCrm();
    const bridge = createBridge({
      db,
      store,
      queue,
      box: loadSecretBox({ dataDir: benchDir, env: {} }),
      service: new EnrichService({ store, rateLimiter: new MemoryRateLimiter(), productionMatcher: new NoSnapshotMatcher() }),
      connectors: new ConnectorRegistry().register(PROVIDER, () => Promise.resolve(new MemoryCrmConnector(crm, BATCH_SIZE))),
      remoteRatePerSecond: DEFAULT_RATE_PER_SECOND,
    });
    const installation = await bridge.installations.create({
      provider: PROVIDER,
      externalAccountId: 'bench-portal',
      environment: 'sandbox',
      target: { kind: 'remote', url: `${serverUrl}/sandbox/v1`, token },
    });
    // The records are the 15 personas over and over: with answer reuse on, 15 lookups would answer all
    // of them. This bench measures pacing against the rate limit, so every record is looked up.
    await bridge.installations.updateSettings(installation.id, { reuseAnswers: false });
    const ids: string[] = [];
    for (let i = 0; i < RECORDS; i += 1) {
      const p = PERSONAS[i % PERSONAS.length];
      if (p === undefined) throw new Error('no sandbox personas');
      const id = `r-${String(i + 1).padStart(7, '0')}`;
      ids.push(id);
      crm.create(OBJECT, id, {
        first_name: p.first_name,
        last_name: p.last_name,
        email: p.email,
        phone: p.phone,
        street: p.address,
        city: p.city,
        state: p.state,
        zip: p.zipcode,
      });
      await queue.enqueue(enrichJob(installation.id, { object: OBJECT, recordId: id }));
    }
    const linesBefore = server.lines().length;

    const summaries: BatchSummary[] = [];
    let lastBatchAt = 0;
    const errors: unknown[] = [];
    const worker = new Worker({
      queue,
      jobs: bridge.jobs,
      concurrency: 1,
      batchSize: BATCH_SIZE,
      onBatch: (summary) => {
        summaries.push(summary);
        lastBatchAt = performance.now();
      },
      onError: (error) => errors.push(error),
    });
    console.log(`bench:pipeline: ${RECORDS} records, one worker (concurrency 1, batches of ${BATCH_SIZE}), sandbox over HTTP at ${DEFAULT_RATE_PER_SECOND}/s`);
    const started = performance.now();
    // Generous: the limit alone takes RECORDS / 5 seconds.
    const deadline = started + (RECORDS / DEFAULT_RATE_PER_SECOND) * 3_000 + 120_000;
    worker.start();
    let nextProgress = started + PROGRESS_EVERY_MS;
    for (;;) {
      const states = await jobStates(queue);
      const pending = (states.get('queued') ?? 0) + (states.get('running') ?? 0);
      const now = performance.now();
      if (pending === 0) break;
      if (now > deadline) {
        console.log(`gave up after ${((now - started) / 1000).toFixed(0)} s with ${pending} jobs pending`);
        break;
      }
      if (now >= nextProgress) {
        const done = states.get('done') ?? 0;
        console.log(
          `  ${((now - started) / 1000).toFixed(0).padStart(4)} s  ${done}/${RECORDS} done  (${(done / ((now - started) / 1000)).toFixed(2)} records/s)`,
        );
        nextProgress += PROGRESS_EVERY_MS;
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await worker.stop();
    const drainSeconds = ((lastBatchAt === 0 ? performance.now() : lastBatchAt) - started) / 1000;

    const states = await jobStates(queue);
    const log = await bridge.pipelineStore.listLog({ installationId: installation.id, limit: RECORDS * 10 });
    const outcomes = countBy(log, (entry) => entry.outcome);
    const done = await doneRecords(queue);
    const lost = ids.filter((id) => !done.has(id) || crm.get(OBJECT, id)?.wf_status_enrichment_status == null).length;
    await opened.store.close();
    opened = undefined;

    // Stopping the server flushes its log: every request line is in before counting.
    await stopChild(server.child);
    const requests = server
      .lines()
      .slice(linesBefore)
      .map((line) => LogLineSchema.safeParse(JSON.parse(line)))
      .flatMap((parsed) => (parsed.success && parsed.data.msg === 'request' && parsed.data.route === '/sandbox/v1' ? [parsed.data] : []));
    const byStatus = countBy(requests, (r) => String(r.status ?? 'none'));
    const ok = byStatus.get('200') ?? 0;
    const tooMany = byStatus.get('429') ?? 0;
    const rate = ok / drainSeconds;
    const share = rate / DEFAULT_RATE_PER_SECOND;
    const crmCalls = crm.calls.length;
    const crmPerRecord = crmCalls / RECORDS;
    const summedCrmCalls = summaries.reduce((sum, s) => sum + s.crmCalls, 0);

    console.log(
      [
        '',
        `${pad('records')}${RECORDS}`,
        `${pad('drain time')}${drainSeconds.toFixed(1)} s`,
        `${pad('enrichment rate (200s / drain)')}${rate.toFixed(2)}/s = ${(share * 100).toFixed(1)} % of ${DEFAULT_RATE_PER_SECOND}/s   target >= ${TARGETS.shareOfLimit * 100} %: ${verdict(share >= TARGETS.shareOfLimit)}`,
        `${pad('429s received (server log)')}${tooMany}   target ${TARGETS.tooManyRequests}: ${verdict(tooMany === TARGETS.tooManyRequests)}`,
        `${pad('enrichment requests (server log)')}${requests.length}  (${[...byStatus].map(([status, n]) => `${status}: ${n}`).join(', ')})`,
        `${pad('CRM calls')}${crmCalls}  (${countBy(crm.calls, (c) => c.kind).get('read') ?? 0} reads, ${countBy(crm.calls, (c) => c.kind).get('write') ?? 0} writes; the pipeline counted ${summedCrmCalls})`,
        `${pad('CRM calls per record')}${crmPerRecord.toFixed(3)}   target <= ${TARGETS.crmCallsPerRecord}: ${verdict(crmPerRecord <= TARGETS.crmCallsPerRecord)}`,
        `${pad('batches')}${summaries.length}`,
        `${pad('log outcomes')}${[...outcomes].map(([outcome, n]) => `${outcome} ${n}`).join(', ') || 'none'}`,
        `${pad('jobs')}${[...states].map(([state, n]) => `${state} ${n}`).join(', ')}`,
        `${pad('worker errors')}${errors.length}`,
        `${pad('records lost')}${lost}`,
        '',
        machine(),
        '',
      ].join('\n'),
    );
    for (const error of errors.slice(0, 5)) console.error('worker error:', error);
    if (lost > 0) {
      console.error(`bench:pipeline: ${lost} records lost (jobs not done or records without their enrichment status)`);
      process.exitCode = 1;
    }
  } finally {
    await opened?.store.close();
    if (server !== undefined) await stopChild(server.child);
    rmSync(serverDir, { recursive: true, force: true });
    rmSync(benchDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error('bench failed:', error);
  process.exitCode = 1;
});
