// The HTTP or HTTPS listener on a runtime: the app with the CRM modules' routes and the console, the
// connection bounds, the in-server workers, and a graceful stop.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { createDemo } from '../../core/accounts/admin.ts';
import { collectProcessMetrics, readBudgetsFrom, readQueueDepthFrom } from '../../core/observe/metrics.ts';
import { budgetState } from '../../bridge/budget.ts';
import { type ConnectorRegistry } from '../../bridge/bridge.ts';
import { type CrmRouteContext } from '../../bridge/crm-module.ts';
import { Worker } from '../../bridge/worker.ts';
import { createApp } from '../http/app.ts';
import { crmRouter } from '../http/crm-routes.ts';
import { consoleRouter } from '../http/console/routes.ts';
import { type Config } from '../config.ts';
import { type Logger } from '../logger.ts';
import { type Runtime, openRuntime } from './compose.ts';
import { startWorker } from './workers.ts';

/** What a CRM module's routes are given by a server on this runtime (tests move the clock with `now`). */
export function routeContext(
  runtime: Runtime,
  config: Config,
  logger: Logger,
  options: { readonly wake: () => void; readonly now?: () => Date },
): CrmRouteContext {
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
      consoleRouter({
        publicUrl: config.publicUrl,
        box: runtime.box,
        bridge: runtime.bridge,
        store,
        service: runtime.service,
        queue: runtime.opened.queue,
        modules: runtime.modules,
        log: logger,
        suppressions: runtime.suppressions,
        wake: () => worker?.wake(),
      }),
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
  const server = tls === null ? http.createServer(limits, app) : https.createServer({ ...limits, ...tls }, app);
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
    config.workerConcurrency > 0
      ? startWorker(runtime, logger, config.workerConcurrency, config.workerLeaseMs, config.shutdownTimeoutMs, config.remoteRatePerSecond)
      : null;

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
