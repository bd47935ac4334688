// Brings the service up from a Config: the data folder and its database, the first-start demo, the
// HTTP or HTTPS listener, and a graceful stop that lets in-flight requests finish.
import { mkdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createDemo } from '../core/accounts/admin.ts';
import { NoSnapshotMatcher } from '../core/enrich/production-matcher.ts';
import { SnapshotManager } from '../core/snapshot/manager.ts';
import { EnrichService } from '../core/enrich/service.ts';
import { MemoryRateLimiter } from '../core/limits/rate-limiter.ts';
import { type OpenedStore, SQLITE_FILE_NAME, openSqliteStore } from '../core/storage/sqlite.ts';
import { createApp } from './app.ts';
import type { Config } from './config.ts';
import type { Logger } from './logger.ts';

export async function openDataFolder(dataDir: string): Promise<OpenedStore> {
  mkdirSync(snapshotsDir(dataDir), { recursive: true });
  return openSqliteStore(path.join(dataDir, SQLITE_FILE_NAME));
}

/** Where data snapshots live: one SQLite file each. */
export function snapshotsDir(dataDir: string): string {
  return path.join(dataDir, 'snapshots');
}

export interface RunningServer {
  readonly url: string;
  readonly port: number;
  /** The demo's sandbox token when this start found no accounts (outside production mode), else null. */
  readonly demoToken: string | null;
  /** Stops accepting connections, lets in-flight requests finish (up to the timeout), closes the store. */
  stop(): Promise<void>;
}

export async function startServer(config: Config, logger: Logger): Promise<RunningServer> {
  const { store } = await openDataFolder(config.dataDir);
  const service = new EnrichService({
    store,
    rateLimiter: new MemoryRateLimiter(),
    productionMatcher: new NoSnapshotMatcher(),
  });
  const snapshots = new SnapshotManager(
    store,
    snapshotsDir(config.dataDir),
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
  await snapshots.refresh();
  snapshots.start();
  const app = createApp({ service, logger, trustProxy: config.trustProxy, requireHttps: config.requireHttps });
  const server =
    config.tls === null
      ? http.createServer(app)
      : https.createServer({ cert: readFileSync(config.tls.certFile), key: readFileSync(config.tls.keyFile) }, app);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo; // a TCP listener always reports an AddressInfo
  // Only once listening: a start that fails (port taken, bad TLS file) must not mint a demo token
  // nobody sees. A data folder without accounts gets one on its next successful start.
  const demoToken = !config.production && (await store.countAccounts()) === 0 ? (await createDemo(store)).token : null;
  const scheme = config.tls === null ? 'http' : 'https';
  const shownHost = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const url = `${scheme}://${shownHost}:${port}`;

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
      await closed;
      clearInterval(sweeper);
      clearTimeout(deadline);
      snapshots.stop();
      await store.close();
    })();
    return stopping;
  };

  return { url, port, demoToken, stop };
}
