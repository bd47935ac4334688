// The pipeline on real parts for tests: a temporary data folder with the real SQLite store and job
// queue (or PostgreSQL's, given a database), the real EnrichService (sandbox personas; production through a persona matcher), a real
// SecretBox, and a MemoryCrm as the only double, registered as provider "memcrm".
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { type AccountSettings, createAccount } from '../../core/accounts/admin.ts';
import type { Environment } from '../../core/accounts/model.ts';
import { EnrichService } from '../../core/enrich/service.ts';
import { MemoryRateLimiter } from '../../core/limits/rate-limiter.ts';
import { SecretBox } from '../../core/secrets/secret-box.ts';
import { SQLITE_FILE_NAME } from '../../core/storage/sqlite.ts';
import { openStorage, type OpenedStorage } from '../../bridge/storage.ts';
import { type Bridge, ConnectorRegistry, createBridge } from '../../bridge/bridge.ts';
import type { Installation, InstallationSettings } from '../../bridge/model.ts';
import { enrichJob, type EnrichJobPayload } from '../../bridge/enrich-job.ts';
import { Worker } from '../../bridge/worker.ts';
import type { TestDatabase } from './databases.ts';
import { tempDir } from './harness.ts';
import { MemoryCrm, MemoryCrmConnector } from './memory-crm.ts';
import { PersonaProductionMatcher } from './persona-matcher.ts';
import type { CrmBackfill } from '../../bridge/crm-module.ts';

export const PROVIDER = 'memcrm';

export interface PipelineHarness {
  readonly dataDir: string;
  /** Where the state lives: the SQLite file's path or the PostgreSQL URL. */
  readonly location: string;
  readonly opened: OpenedStorage;
  readonly service: EnrichService;
  readonly bridge: Bridge;
  readonly crm: MemoryCrm;
  /** The clock the pipeline and the service's quota periods read; tests move it. */
  readonly clock: { now: Date };
  /** A local account and an installation enriching against it. */
  install(options?: {
    environment?: Environment;
    account?: AccountSettings;
    settings?: Partial<InstallationSettings>;
    externalAccountId?: string;
  }): Promise<Installation>;
  enqueue(installation: Installation, payload: EnrichJobPayload): Promise<{ id: string; created: boolean }>;
  /** Runs batches until the queue has nothing ready; returns how many batches ran. */
  drain(worker?: Worker): Promise<number>;
  worker(options?: { batchSize?: number }): Worker;
  close(): Promise<void>;
}

export interface PipelineHarnessOptions {
  maxBatch?: number;
  sleep?: (ms: number) => Promise<void>;
  busyTimeoutMs?: number;
  /** Where the state lives: a database of test/support/databases.ts (default: a SQLite file in the data folder). */
  database?: TestDatabase | undefined;
  /** How the MemoryCrm's records are read for a backfill the console starts (none by default). */
  backfill?: CrmBackfill;
}

export async function startPipeline(options: PipelineHarnessOptions = {}): Promise<PipelineHarness> {
  const dataDir = tempDir('enrichbridge-pipeline-');
  const location = options.database === undefined ? path.join(dataDir, SQLITE_FILE_NAME) : await options.database.fresh();
  const opened = await openStorage(location, options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs });
  const clock = { now: new Date() };
  const now = () => clock.now;
  const service = new EnrichService({ store: opened.store, rateLimiter: new MemoryRateLimiter(), productionMatcher: new PersonaProductionMatcher() });
  const crm = new MemoryCrm();
  const connectors = new ConnectorRegistry().register(PROVIDER, () => Promise.resolve(new MemoryCrmConnector(crm, options.maxBatch ?? 100)));
  if (options.backfill !== undefined) connectors.registerBackfill(PROVIDER, options.backfill);
  const bridge = createBridge({
    db: opened.db,
    store: opened.store,
    queue: opened.queue,
    box: new SecretBox(randomBytes(32)),
    service,
    connectors,
    now,
  });
  let accounts = 0;
  const harness: PipelineHarness = {
    dataDir,
    location,
    opened,
    service,
    bridge,
    crm,
    clock,
    async install(o = {}) {
      accounts += 1;
      const name = `acct-${accounts}`;
      // Entitled to everything: these suites are about what the pipeline writes, political fields included.
      await createAccount(opened.store, name, { careerIntelligence: true, politicalData: true, rateLimit: 1000, ...o.account });
      return bridge.installations.create({
        provider: PROVIDER,
        externalAccountId: o.externalAccountId ?? `portal-${accounts}`,
        environment: o.environment ?? 'sandbox',
        target: { kind: 'local', accountName: name },
        settings: o.settings ?? {},
      });
    },
    enqueue: (installation, payload) => opened.queue.enqueue(enrichJob(installation.id, payload)),
    worker: (o = {}) => new Worker({ queue: opened.queue, jobs: bridge.jobs, batchSize: o.batchSize ?? 100, workerId: 'test-worker' }),
    async drain(worker = harness.worker()) {
      let batches = 0;
      // claimBatch reads the real clock; the pipeline reads the test clock.
      while (await worker.runOnce()) batches += 1;
      return batches;
    },
    close: () => opened.store.close(),
  };
  return harness;
}
