// Brings the service up from a Config: the data folder and its database, the enrichment service with
// its data snapshots, the CRM pipeline and its workers, the HTTP or HTTPS listener, and a graceful
// stop that lets in-flight requests and enrichments finish.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createDemo } from '../core/accounts/admin.ts';
import { NoSnapshotMatcher } from '../core/enrich/production-matcher.ts';
import { cleanAbandonedLoads } from '../core/snapshot/loader.ts';
import { SnapshotManager } from '../core/snapshot/manager.ts';
import type { SnapshotStorage } from '../core/snapshot/port.ts';
import { PostgresSnapshots } from '../core/snapshot/postgres-snapshot.ts';
import { SqliteSnapshots } from '../core/snapshot/sqlite-snapshot.ts';
import { EnrichService } from '../core/enrich/service.ts';
import { MemoryRateLimiter } from '../core/limits/rate-limiter.ts';
import { InstanceRegistry, RedisRateLimiter } from '../core/limits/redis-rate-limiter.ts';
import { RedisSpacing } from '../core/limits/redis-spacing.ts';
import { shareSpacing } from '../core/limits/pacing.ts';
import { collectProcessMetrics, readBudgetsFrom, readQueueDepthFrom } from '../core/observe/metrics.ts';
import { budgetState } from '../bridge/budget.ts';
import { Refresher } from '../bridge/refresh.ts';
import { RecurringJobs } from '../bridge/recurring.ts';
import { Redis } from 'ioredis';
import { loadSecretBox } from '../core/secrets/secret-box.ts';
import { ensurePrivateDir, securePrivateFolder } from '../core/storage/data-folder.ts';
import { refuseMigratedFolder } from '../core/storage/migration-marker.ts';
import { checkSecretKey } from './secret-key-check.ts';
import { isDatabaseBusy } from '../core/storage/errors.ts';
import { SERVER_BUSY_TIMEOUT_MS, SQLITE_FILE_NAME } from '../core/storage/sqlite.ts';
import { type OpenedStorage, openStorage } from '../bridge/storage.ts';
import { type Bridge, type ConnectorRegistry, createBridge } from '../bridge/bridge.ts';
import { type CrmModule, type CrmRouteContext, registryOf } from '../bridge/crm-module.ts';
import { hubspotModule } from '../connectors/hubspot/index.ts';
import { salesforceModule } from '../connectors/salesforce/index.ts';
import { Worker, newWorkerId, reclaimDeadWorkers } from '../bridge/worker.ts';
import { setOutboundTimeouts } from '../core/client/timeouts.ts';
import type { SecretBox } from '../core/secrets/secret-box.ts';
import { createApp } from './http/app.ts';
import { crmRouter } from './http/crm-routes.ts';
import { consoleRouter } from './http/console/routes.ts';
import { type Config, loadConfig } from './config.ts';
import { type Logger, createLogger } from './logger.ts';

/**
 * Opens the data folder: 0700 with every file in it 0600 (an older, looser folder is tightened, and
 * `onTightened` hears which paths were), then the database: PostgreSQL when `databaseUrl` is given
 * (DATABASE_URL), else the SQLite file in the folder, unless the folder was migrated to PostgreSQL
 * (MigratedFolderError: its old SQLite file must not become a second, diverging copy of the state).
 */
export async function openDataFolder(
  dataDir: string,
  options: {
    readonly busyTimeoutMs?: number;
    readonly onTightened?: (paths: string[]) => void;
    readonly databaseUrl?: string | null;
    readonly poolSize?: number;
  } = {},
): Promise<OpenedStorage> {
  if (options.databaseUrl === undefined || options.databaseUrl === null) refuseMigratedFolder(dataDir);
  const tightened = securePrivateFolder(dataDir);
  ensurePrivateDir(snapshotsDir(dataDir));
  if (tightened.length > 0) (options.onTightened ?? warnOnStderr)(tightened);
  if (options.databaseUrl !== undefined && options.databaseUrl !== null) {
    return openStorage(options.databaseUrl, options.poolSize === undefined ? {} : { poolSize: options.poolSize });
  }
  return openStorage(path.join(dataDir, SQLITE_FILE_NAME), options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs });
}

/** The data folder and the database a configuration names. */
export function openConfiguredStorage(config: Config, options: { readonly busyTimeoutMs?: number; readonly onTightened?: (paths: string[]) => void } = {}): Promise<OpenedStorage> {
  return openDataFolder(config.dataDir, { ...options, databaseUrl: config.databaseUrl, poolSize: config.databasePoolSize });
}

/** The CLI's way to say it: one line on stderr. */
function warnOnStderr(paths: string[]): void {
  process.stderr.write(`tightened the modes of ${paths.join(', ')} in the data folder: group and others could read them\n`);
}

/** Where data snapshots live without DATABASE_URL: one SQLite file each. */
export function snapshotsDir(dataDir: string): string {
  return path.join(dataDir, 'snapshots');
}

/**
 * Where the configured deployment keeps its data snapshots: a PostgreSQL schema each when
 * DATABASE_URL names PostgreSQL (every instance reads the same ones), else a SQLite file each in the
 * data folder.
 */
export async function openSnapshotStorage(config: Config): Promise<SnapshotStorage> {
  if (config.databaseUrl === null) return new SqliteSnapshots(snapshotsDir(config.dataDir));
  return PostgresSnapshots.open(config.databaseUrl, { poolSize: config.databasePoolSize });
}

/**
 * The CRM modules this build ships, each with its configuration (none: no OAuth app, the defaults).
 * The one place that names the CRMs: everything else takes the modules as they come.
 */
export function crmModules(config?: Config): readonly CrmModule[] {
  if (config === undefined) return [hubspotModule(), salesforceModule()];
  return [
    hubspotModule(config.hubspot),
    salesforceModule({ app: { ...config.salesforce, allowAnyHost: config.salesforceAllowAnyHost }, outbound: config.salesforceOutbound }),
  ];
}

/** The CRM modules this build ships, as the bridge's registry. */
export function defaultConnectors(config?: Config): ConnectorRegistry {
  return registryOf(crmModules(config));
}

export interface Runtime {
  readonly opened: OpenedStorage;
  /** What GET /readyz checks: the database, and Redis when the limits are shared. */
  readonly readiness: Readonly<Record<string, () => Promise<unknown>>>;
  readonly service: EnrichService;
  readonly bridge: Bridge;
  readonly box: SecretBox;
  /** The CRM modules, configured: their routes and commands. */
  readonly modules: readonly CrmModule[];
  /** Stops the snapshot watcher and closes the database. */
  close(): Promise<void>;
}

/**
 * Why the parts are opened. `serve` (the server, a worker process): lock waits of a few tens of
 * milliseconds, the data snapshots watched, killed loads cleaned up, file-mode fixes logged. `command`
 * (a one-shot CLI command that queues or reads but never enriches): the long lock wait, no snapshot,
 * file-mode fixes said on stderr.
 */
export type RuntimePurpose = 'serve' | 'command';

/**
 * The composition root: the service's parts without a listener, built the same way for the server, a
 * standalone worker and every CLI command that needs the pipeline (withRuntime).
 */
export async function openRuntime(
  config: Config,
  logger: Logger,
  connectors: ConnectorRegistry = defaultConnectors(config),
  purpose: RuntimePurpose = 'serve',
): Promise<Runtime> {
  setOutboundTimeouts(config.timeouts);
  const serving = purpose === 'serve';
  // A server or worker process must not stand still while another holds the write lock.
  const opened = serving
    ? await openConfiguredStorage(config, {
        busyTimeoutMs: SERVER_BUSY_TIMEOUT_MS,
        onTightened: (paths) => logger.warn({ paths }, 'tightened file modes in the data folder: group and others could read these'),
      })
    : await openConfiguredStorage(config);
  const { store, queue, db } = opened;
  // What is open so far is closed again if a later part fails (a missing secret key, Redis or the
  // snapshot schema unreachable): a failed start leaves no pool, listener or timer behind.
  let limits: SharedLimits | null = null;
  let snapshots: Awaited<ReturnType<typeof watchSnapshots>> | null = null;
  const closeAll = async () => {
    snapshots?.manager.stop();
    await snapshots?.storage.close();
    await limits?.close();
    await store.close();
  };
  try {
    // A command paces its CRM calls with the servers' too (a backfill beside a running server).
    limits = config.redisUrl === null ? null : await openSharedLimits(config.redisUrl, config.redisKeyPrefix, logger);
    const service = new EnrichService({
      store,
      rateLimiter: limits?.rateLimiter ?? new MemoryRateLimiter(),
      productionMatcher: new NoSnapshotMatcher(),
    });
    snapshots = serving ? await watchSnapshots(config, logger, store, service) : null;
    const box = loadSecretBox({ dataDir: config.dataDir });
    const bridge = createBridge({
      db,
      store,
      queue,
      leaseClock: opened.clock,
      box,
      service,
      connectors,
      remoteRatePerSecond: config.remoteRatePerSecond,
      log: (fields, message) => logger.info(fields, message),
    });
    // A server or worker under a key that opens no stored credential says so once, now.
    if (serving) await checkSecretKey(box, bridge.pipelineStore, config.dataDir, logger);
    const shared = limits;
    return {
      opened,
      service,
      bridge,
      box,
      modules: crmModules(config),
      readiness: {
        database: () => store.countAccounts(),
        ...(shared === null ? {} : { redis: () => shared.ping() }),
      },
      close: closeAll,
    };
  } catch (error) {
    await closeAll().catch(() => undefined);
    throw error;
  }
}

interface SharedLimits {
  readonly rateLimiter: RedisRateLimiter;
  /** Whether Redis answers (GET /readyz). */
  ping(): Promise<unknown>;
  close(): Promise<void>;
}

/** How long a start waits for Redis before serving on the fallback (and Redis's commands, each). */
const REDIS_CONNECT_TIMEOUT_MS = 2_000;
const REDIS_COMMAND_TIMEOUT_MS = 250;

/**
 * The limits several instances share (REDIS_URL): the per-token rate in Redis, and the outbound pacing
 * per enrichment token and CRM account (core/limits/pacing.ts), with this process counted among the
 * live ones for the fallbacks' shares. Redis unreachable at start is not fatal: the fallbacks serve (or
 * refuse) until Redis answers.
 */
async function openSharedLimits(url: string, prefix: string, logger: Logger): Promise<SharedLimits> {
  const redis = new Redis(url, {
    connectTimeout: REDIS_CONNECT_TIMEOUT_MS,
    commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
    // Fail at once while disconnected (the fallback decides), and keep reconnecting in the background.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
  redis.on('error', () => undefined);
  await new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, REDIS_CONNECT_TIMEOUT_MS);
    redis.once('ready', done);
  });
  const instances = new InstanceRegistry(redis, { key: `${prefix}instances` });
  await instances.beat().catch((error: unknown) => logger.warn({ err: error }, 'redis unreachable at start: the rate limit falls back (see README, Running several instances)'));
  instances.start();
  const rateLimiter = new RedisRateLimiter(redis, {
    keyPrefix: `${prefix}rate:`,
    instances,
    onFallback: (error) =>
      error === null
        ? logger.info('redis answers again: the shared rate limit is back')
        : logger.error({ err: error, instances: instances.count }, "redis unreachable: each instance admits its share of a token's rate in process"),
  });
  const spacing = new RedisSpacing(redis, {
    keyPrefix: `${prefix}pace:`,
    instances,
    onFallback: (error) =>
      error === null
        ? logger.info('redis answers again: outbound pacing is shared again')
        : logger.error({ err: error, instances: instances.count }, 'redis unreachable: each process paces its outbound calls at its share of each rate'),
  });
  shareSpacing(spacing);
  return {
    rateLimiter,
    ping: () => redis.ping(),
    close: async () => {
      shareSpacing(null);
      await instances.stop();
      redis.disconnect();
    },
  };
}

/** The active data snapshot behind the service's production matcher, followed as loads activate others. */
async function watchSnapshots(
  config: Config,
  logger: Logger,
  store: OpenedStorage['store'],
  service: EnrichService,
): Promise<{ manager: SnapshotManager; storage: SnapshotStorage }> {
  const storage = await openSnapshotStorage(config);
  const snapshots = new SnapshotManager(
    store,
    storage,
    (matcher) => {
      service.productionMatcher = matcher ?? new NoSnapshotMatcher();
    },
    (event) => {
      if (event.kind === 'activated') {
        logger.info({ snapshot: event.snapshot.id, version: event.snapshot.version, previous: event.previous }, 'data snapshot active');
      } else {
        logger.error({ err: event.error }, 'data snapshot refresh failed');
      }
    },
  );
  const cleaned = await cleanAbandonedLoads(store, storage);
  if (cleaned.abandoned.length > 0 || cleaned.strayFiles.length > 0) {
    logger.warn({ abandoned: cleaned.abandoned, stray_files: cleaned.strayFiles }, 'cleaned up after data loads that were killed');
  }
  await snapshots.refresh();
  snapshots.start();
  return { manager: snapshots, storage };
}

/** A one-shot command's runtime on the configured data folder, closed when `run` is done. */
export async function withRuntime<T>(run: (bridge: Bridge, opened: OpenedStorage) => Promise<T>): Promise<T> {
  const config = loadConfig();
  // Nothing a command opens logs; warnings about the folder go to stderr (openDataFolder).
  const runtime = await openRuntime(config, createLogger('silent'), undefined, 'command');
  try {
    return await run(runtime.bridge, runtime.opened);
  } finally {
    await runtime.close();
  }
}

/**
 * A pipeline worker that logs each batch (counts only: no record data, no e-mail, no token). It first
 * takes back at once the leases a dead process on this host held (a restart after a SIGKILL).
 */
export function startWorker(runtime: Runtime, logger: Logger, concurrency: number, leaseMs?: number, stopGraceMs?: number, remoteRatePerSecond = 5): Worker {
  const workerId = newWorkerId();
  // The scheduled refresh runs beside the workers, wherever they run (issue 14).
  const refresher = new Refresher({
    store: runtime.bridge.pipelineStore,
    queue: runtime.opened.queue,
    owner: workerId,
    rateOf: async (installation) =>
      installation.target.kind === 'local' ? ((await runtime.opened.store.findAccountById(installation.target.accountId))?.rateLimit ?? 5) : remoteRatePerSecond,
    onError: (error) => logger.error({ err: error }, 'scheduled refresh error'),
  });
  // Jobs the CRM modules run on a schedule for each installation (HubSpot's journal pull).
  const recurring = new RecurringJobs({
    store: runtime.bridge.pipelineStore,
    queue: runtime.opened.queue,
    schedules: runtime.modules.flatMap((module) => (module.recurring ?? []).map((job) => ({ provider: module.provider, recurring: job }))),
    onError: (error) => logger.error({ err: error }, 'recurring job scheduling error'),
  });
  const worker = new Worker({
    workerId,
    companions: [refresher, recurring],
    queue: runtime.opened.queue,
    jobs: runtime.bridge.jobs,
    concurrency,
    ...(leaseMs === undefined ? {} : { leaseMs }),
    ...(stopGraceMs === undefined ? {} : { stopGraceMs }),
    onBatch: (summary) => {
      const line = {
        installation: summary.installationId,
        jobs: summary.jobs,
        outcomes: summary.outcomes,
        released: summary.released,
        crm_calls: summary.crmCalls,
        lease_lost: summary.leaseLost,
      };
      // Jobs another worker took over mid-batch: a renewal came too late (a stalled process).
      if (summary.leaseLost > 0) logger.warn(line, 'pipeline batch lost its lease');
      else logger.info(line, 'pipeline batch');
      if (summary.budget?.warning === true) {
        const { spent, budget, resetsAt } = summary.budget;
        logger.warn(
          { installation: summary.installationId, spent, budget, resets_at: resetsAt },
          spent >= budget ? "installation's monthly budget is spent: enrichment waits for next month or a larger budget" : "installation has spent 80% of its monthly budget",
        );
      }
    },
    // A locked database is another process's long write, not a fault of ours: the worker backs off.
    onError: (error) =>
      isDatabaseBusy(error) ? logger.warn('pipeline worker: database busy, backing off') : logger.error({ err: error }, 'pipeline worker error'),
  });
  worker.start();
  reclaimDeadWorkers(runtime.opened.queue).then(
    (reclaimed) => {
      if (reclaimed.jobs === 0) return;
      logger.warn({ workers: reclaimed.workers, jobs: reclaimed.jobs }, 'took back the leases of dead workers on this host');
      worker.wake();
    },
    (error: unknown) => logger.error({ err: error }, 'pipeline worker error'),
  );
  return worker;
}

/** What a CRM module's routes are given by a server on this runtime (tests move the clock with `now`). */
export function routeContext(runtime: Runtime, config: Config, logger: Logger, options: { readonly wake: () => void; readonly now?: () => Date }): CrmRouteContext {
  return {
    publicUrl: config.publicUrl,
    bridge: runtime.bridge,
    queue: runtime.opened.queue,
    box: runtime.box,
    log: logger,
    wake: options.wake,
    ...(options.now === undefined ? {} : { now: options.now }),
  };
}

/**
 * The listener's bounds on a connection. Node checks the headers and request timeouts only every
 * `connectionsCheckingInterval` (30 s by default), so a 10 s headers timeout could hold a socket for
 * 40 s: check at least every second, and more often when a timeout is shorter.
 */
function connectionLimits(config: Config): http.ServerOptions {
  const { headersTimeoutMs, requestTimeoutMs } = config.http;
  return {
    headersTimeout: headersTimeoutMs,
    requestTimeout: requestTimeoutMs,
    connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(headersTimeoutMs / 4))),
  };
}

export interface RunningServer {
  readonly url: string;
  readonly port: number;
  /** The demo's sandbox token when this start found no accounts (outside production mode), else null. */
  readonly demoToken: string | null;
  /** Stops accepting connections, lets in-flight requests finish (up to the timeout), closes the store. */
  stop(): Promise<void>;
}

export async function startServer(config: Config, logger: Logger, connectors?: ConnectorRegistry): Promise<RunningServer> {
  // Read before anything is opened: a TLS file that cannot be read fails the start with no pool,
  // listener or Redis client left behind.
  const tls = config.tls === null ? null : { cert: readFileSync(config.tls.certFile), key: readFileSync(config.tls.keyFile) };
  const runtime = await openRuntime(config, logger, connectors);
  const { store } = runtime.opened;
  let worker: Worker | null = null;
  const app = createApp({
    service: runtime.service,
    logger,
    trustProxy: config.trustProxy,
    requireHttps: config.requireHttps,
    metrics: config.metrics,
    readiness: runtime.readiness,
    routers: [
      crmRouter(runtime.modules, routeContext(runtime, config, logger, { wake: () => worker?.wake() })),
      consoleRouter({ publicUrl: config.publicUrl, box: runtime.box, bridge: runtime.bridge, store, service: runtime.service, queue: runtime.opened.queue, modules: runtime.modules, log: logger }),
    ],
  });
  // GET /metrics reads the queue's depth when scraped, and serves the process's own figures.
  readQueueDepthFrom(() => runtime.opened.queue.countByState());
  readBudgetsFrom(async () => {
    const now = new Date();
    const out: Record<string, number> = {};
    for (const installation of await runtime.bridge.pipelineStore.listInstallations()) {
      const budget = await budgetState(runtime.bridge.pipelineStore, installation, now);
      if (budget !== null) out[installation.id] = budget.ratio;
    }
    return out;
  });
  collectProcessMetrics();
  const limits = connectionLimits(config);
  const server =
    tls === null ? http.createServer(limits, app) : https.createServer({ ...limits, ...tls }, app);
  server.keepAliveTimeout = config.http.keepAliveTimeoutMs;
  server.maxConnections = config.http.maxConnections;
  let dropsLogged = 0;
  server.on('drop', () => {
    // Once a minute at most: a flood must not become a flood of log lines too.
    if (Date.now() - dropsLogged < 60_000) return;
    dropsLogged = Date.now();
    logger.warn({ max_connections: config.http.maxConnections }, 'connection refused: MAX_CONNECTIONS reached');
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  }).catch(async (error: unknown) => {
    await runtime.close();
    throw error;
  });
  const { port } = server.address() as AddressInfo; // a TCP listener always reports an AddressInfo
  // Only once listening: a start that fails (port taken, bad TLS file) must not mint a demo token
  // nobody sees. A data folder without accounts gets one on its next successful start.
  const demoToken = !config.production && (await store.countAccounts()) === 0 ? (await createDemo(store)).token : null;
  const scheme = tls === null ? 'http' : 'https';
  const shownHost = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const url = `${scheme}://${shownHost}:${port}`;
  worker =
    config.workerConcurrency > 0 ? startWorker(runtime, logger, config.workerConcurrency, config.workerLeaseMs, config.shutdownTimeoutMs, config.remoteRatePerSecond) : null;

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Keep-alive connections hold close() open until they time out: close each one as soon as its
      // in-flight request has been answered, and cut whatever is left at the deadline.
      server.closeIdleConnections();
      const sweeper = setInterval(() => server.closeIdleConnections(), 50);
      const deadline = setTimeout(() => server.closeAllConnections(), config.shutdownTimeoutMs);
      deadline.unref();
      // The worker finishes its in-flight enrichments and releases the rest of its batch.
      await Promise.all([closed, worker?.stop()]);
      readQueueDepthFrom(null);
      readBudgetsFrom(null);
      clearInterval(sweeper);
      clearTimeout(deadline);
      await runtime.close();
    })();
    return stopping;
  };

  return { url, port, demoToken, stop };
}
