// The data folder, its database and the data snapshots, opened as a Config says: the SQLite file in
// the folder or PostgreSQL (DATABASE_URL), and the snapshots followed as loads activate others.
import path from 'node:path';
import { NoSnapshotMatcher } from '../../core/enrich/production-matcher.ts';
import { cleanAbandonedLoads } from '../../core/snapshot/storage/loader.ts';
import { SnapshotManager } from '../../core/snapshot/storage/manager.ts';
import type { SnapshotStorage } from '../../core/snapshot/port.ts';
import { PostgresSnapshots } from '../../core/snapshot/storage/postgres-snapshot.ts';
import { SqliteSnapshots } from '../../core/snapshot/storage/sqlite-snapshot.ts';
import { EnrichService } from '../../core/enrich/service.ts';
import { ensurePrivateDir, securePrivateFolder } from '../../core/storage/data-folder.ts';
import { refuseMigratedFolder } from '../../core/storage/migration-marker.ts';
import { SQLITE_FILE_NAME } from '../../core/storage/sqlite.ts';
import type { CheckpointThreadOptions } from '../../core/storage/sqlite-checkpoints.ts';
import { type OpenedStorage, openStorage } from '../../bridge/storage.ts';
import { type Config } from '../config.ts';
import { type Logger } from '../logger.ts';

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
    readonly checkpointThread?: CheckpointThreadOptions;
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
  return openStorage(path.join(dataDir, SQLITE_FILE_NAME), {
    ...(options.busyTimeoutMs === undefined ? {} : { busyTimeoutMs: options.busyTimeoutMs }),
    ...(options.checkpointThread === undefined ? {} : { checkpointThread: options.checkpointThread }),
  });
}

/** The data folder and the database a configuration names. */
export function openConfiguredStorage(
  config: Config,
  options: { readonly busyTimeoutMs?: number; readonly checkpointThread?: CheckpointThreadOptions; readonly onTightened?: (paths: string[]) => void } = {},
): Promise<OpenedStorage> {
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

/** The active data snapshot behind the service's production matcher, followed as loads activate others. */
export async function watchSnapshots(
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
