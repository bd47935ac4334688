// The composition root: the service's parts built from a Config, the same way for the server, a
// standalone worker and every CLI command that needs the pipeline. The one place that names the CRMs.
import { NoSnapshotMatcher } from '../../core/enrich/production-matcher.ts';
import { EnrichService } from '../../core/enrich/service.ts';
import { MemoryRateLimiter } from '../../core/limits/rate-limiter.ts';
import { loadSecretBox } from '../../core/secrets/secret-box.ts';
import { checkSecretKey } from '../secret-key-check.ts';
import { SERVER_BUSY_TIMEOUT_MS } from '../../core/storage/sqlite.ts';
import { type OpenedStorage } from '../../bridge/storage.ts';
import { type Bridge, type ConnectorRegistry, createBridge } from '../../bridge/bridge.ts';
import { type CrmModule, registryOf } from '../../bridge/crm-module.ts';
import { hubspotModule } from '../../connectors/hubspot/index.ts';
import { salesforceModule } from '../../connectors/salesforce/index.ts';
import { setOutboundTimeouts } from '../../core/client/timeouts.ts';
import type { SecretBox } from '../../core/secrets/secret-box.ts';
import type { Store } from '../../core/storage/port.ts';
import { type SuppressionList, keyedSuppressionList } from '../../core/suppression/list.ts';
import { type Config, loadConfig } from '../config.ts';
import { type Logger, createLogger } from '../logger.ts';
import { openConfiguredStorage, watchSnapshots } from './storage.ts';
import { type SharedLimits, openSharedLimits } from './limits.ts';

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
  /** Who production never answers about, as this process holds it (polled while serving). */
  readonly suppressions: SuppressionList;
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
export async function openRuntime(config: Config, logger: Logger, connectors?: ConnectorRegistry, purpose: RuntimePurpose = 'serve'): Promise<Runtime> {
  setOutboundTimeouts(config.timeouts);
  const serving = purpose === 'serve';
  // One list of the CRM modules: their routes and commands, and (unless a test brings its own) the
  // registry the bridge reaches their connectors through.
  const modules = crmModules(config);
  const registry = connectors ?? registryOf(modules);
  // A server or worker process must not stand still while another holds the write lock.
  const opened = serving
    ? await openConfiguredStorage(config, {
        busyTimeoutMs: SERVER_BUSY_TIMEOUT_MS,
        // Nor stand still while its own commit copies the log back into the file.
        checkpointThread: { onError: (message) => logger.warn({ reason: message }, 'the SQLite checkpoint thread could not checkpoint the log') },
        onTightened: (paths) => logger.warn({ paths }, 'tightened file modes in the data folder: group and others could read these'),
      })
    : await openConfiguredStorage(config);
  const { store, queue, db } = opened;
  // What is open so far is closed again if a later part fails (a missing secret key, Redis or the
  // snapshot schema unreachable): a failed start leaves no pool, listener or timer behind.
  let limits: SharedLimits | null = null;
  let snapshots: Awaited<ReturnType<typeof watchSnapshots>> | null = null;
  let suppressions: SuppressionList | null = null;
  const closeAll = async () => {
    suppressions?.stop();
    snapshots?.manager.stop();
    await snapshots?.storage.close();
    await limits?.close();
    await store.close();
  };
  try {
    // A command paces its CRM calls with the servers' too (a backfill beside a running server).
    limits = config.redisUrl === null ? null : await openSharedLimits(config.redisUrl, config.redisKeyPrefix, logger);
    const box = loadSecretBox({ dataDir: config.dataDir });
    suppressions = suppressionListOf(store, box, (error) =>
      logger.error({ err: error }, 'reading the suppression list failed; the copy in memory stays in force'),
    );
    if (serving) {
      await suppressions.refresh();
      suppressions.start();
    }
    const service = new EnrichService({
      store,
      rateLimiter: limits?.rateLimiter ?? new MemoryRateLimiter(),
      productionMatcher: new NoSnapshotMatcher(),
      suppressions,
    });
    snapshots = serving ? await watchSnapshots(config, logger, store, service) : null;
    const bridge = createBridge({
      db,
      store,
      queue,
      leaseClock: opened.clock,
      box,
      service,
      connectors: registry,
      remoteRatePerSecond: config.remoteRatePerSecond,
      log: (fields, message) => logger.info(fields, message),
      warn: (fields, message) => logger.warn(fields, message),
      logValuesRetentionDays: config.logValuesRetentionDays,
      suppressions,
    });
    // A server or worker under a key that opens no stored credential says so once, now.
    if (serving) await checkSecretKey(box, bridge.pipelineStore, config.dataDir, logger);
    const shared = limits;
    return {
      opened,
      service,
      bridge,
      box,
      suppressions,
      modules,
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

/** The suppression list over a store, its entries keyed with the server's secret key. */
export function suppressionListOf(store: Store, box: SecretBox, onError?: (error: unknown) => void): SuppressionList {
  return keyedSuppressionList(store.suppressions, box, onError);
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
