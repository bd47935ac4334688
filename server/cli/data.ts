// `enrichbridge data …`: generate a synthetic snapshot, load one (with progress on a terminal), show
// what is active, and roll back. Loads write beside the active snapshot; running servers switch alone.
import { Command, Option } from 'commander';
import { wholeNumber } from './options.ts';
import { SingleBar } from 'cli-progress';
import { generateSnapshot } from '../../core/snapshot/generator/generate.ts';
import { type LoadProgress, SnapshotLoadError, loadSnapshot } from '../../core/snapshot/storage/loader.ts';
import type { Store } from '../../core/storage/port.ts';
import { loadConfig } from '../config.ts';
import { openDataFolder, openSnapshotStorage } from '../runtime/storage.ts';
import { suppressionListOf } from '../runtime/compose.ts';
import { plural } from '../plural.ts';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { MigrationRefusedError, copyState, requireSealingKey } from '../../bridge/migrate.ts';
import { SQLITE_FILE_NAME } from '../../core/storage/sqlite.ts';
import { KEY_FILE_NAME, SECRET_KEY_ENV, type SecretBox, SecretBoxError, loadSecretBox } from '../../core/secrets/secret-box.ts';
import { redactDatabaseUrl } from '../../core/observe/connection-urls.ts';
import { MIGRATION_MARKER_FILE, migrationMarkerPath, readMigrationMarker, writeMigrationMarker } from '../../core/storage/migration-marker.ts';

type WithStore = <T>(run: (store: Store) => Promise<T>) => Promise<T>;

const mib = (bytes: number) => `${(bytes / 1048576).toFixed(0)} MiB`;

/** A bar on a terminal; a line per tenth of the work otherwise, so CI logs stay readable. */
export function progressReporter(label: string, unit: (value: number) => string) {
  if (process.stderr.isTTY) {
    const bar = new SingleBar({ format: `${label} [{bar}] {percentage}% | {done} of {all} | {detail}`, hideCursor: true, stream: process.stderr });
    let started = false;
    return {
      update(done: number, total: number, detail: string) {
        if (!started) {
          bar.start(total, 0, { done: unit(0), all: unit(total), detail });
          started = true;
        }
        bar.update(done, { done: unit(done), all: unit(total), detail });
      },
      stop: () => bar.stop(),
    };
  }
  let lastTenth = -1;
  return {
    update(done: number, total: number, detail: string) {
      const tenth = total === 0 ? 10 : Math.floor((done / total) * 10);
      if (tenth > lastTenth) {
        lastTenth = tenth;
        process.stderr.write(`${label}: ${tenth * 10}% (${unit(done)} of ${unit(total)}) ${detail}\n`);
      }
    },
    stop: () => undefined,
  };
}

/**
 * The key the migration copies under: ENRICHBRIDGE_SECRET_KEY, which must be set (the instances on
 * PostgreSQL have no common key file to fall back on), with a hint of where the folder's own key is.
 */
function sealingKey(dataDir: string): { readonly box: SecretBox; readonly hint: string } {
  const keyFile = path.join(dataDir, KEY_FILE_NAME);
  const hint = existsSync(keyFile)
    ? `this folder's own key: export ${SECRET_KEY_ENV}=$(cat ${keyFile})`
    : `this folder has no ${KEY_FILE_NAME}, so the ${SECRET_KEY_ENV} its servers ran with, or a new key (openssl rand -hex 32) if it never held a CRM installation`;
  if (process.env[SECRET_KEY_ENV] === undefined) {
    throw new MigrationRefusedError(`set ${SECRET_KEY_ENV} to the key that sealed this folder's credentials, the one every instance will share (${hint})`);
  }
  try {
    return { box: loadSecretBox({ dataDir }), hint };
  } catch (error) {
    if (error instanceof SecretBoxError) throw new MigrationRefusedError(`${error.message} (${hint})`);
    throw error;
  }
}

export function dataCommands(withStore: WithStore): Command {
  const data = new Command('data').description('household and career data snapshots for production matching');

  data
    .command('generate <dir>')
    .description('write a realistic synthetic snapshot, and queries.jsonl with expected answers, into DIR')
    .requiredOption('--people <n>', 'how many people', wholeNumber(1))
    .option('--seed <s>', 'random seed (same seed, same files)', wholeNumber(1), 1)
    .option('--queries <n>', 'how many queries to derive (default: people/50, 1,000 to 20,000)', wholeNumber(1))
    .option('--gzip', 'write .jsonl.gz files')
    .addOption(
      new Option(
        '--noise <set>',
        'also write queries-typos.jsonl (name-and-address duplicates with one data-entry error each) and queries-multi.jsonl (with several each), and negatives',
      ).choices(['typos']),
    )
    .action(async (dir: string, flags: { people: number; seed: number; queries?: number; gzip?: boolean; noise?: string }) => {
      const progress = progressReporter('generate', (n) => n.toLocaleString('en-US'));
      const started = performance.now();
      const summary = await generateSnapshot(dir, {
        people: flags.people,
        seed: flags.seed,
        gzip: flags.gzip === true,
        typos: flags.noise === 'typos',
        ...(flags.queries === undefined ? {} : { queries: flags.queries }),
        onProgress: (done, total) => progress.update(done, total, 'people'),
      });
      progress.stop();
      console.error(
        `wrote ${summary.households.toLocaleString('en-US')} households, ${summary.people.toLocaleString('en-US')} people and ` +
          `${summary.queries.toLocaleString('en-US')} queries to ${dir} in ${((performance.now() - started) / 1000).toFixed(1)} s`,
      );
    });

  data
    .command('load <dir>')
    .description('validate, normalize and index the snapshot in DIR, then make it the active one')
    .action(async (dir: string) => {
      await withStore(async (store) => {
        const progress = progressReporter('load', mib);
        const phases: Record<LoadProgress['phase'], string> = { households: 'households', people: 'people', indexing: 'building indexes' };
        // Ctrl-C stops the load cleanly: its entry marked failed, its file removed, the active one kept.
        const abort = new AbortController();
        const interrupt = () => abort.abort();
        process.once('SIGINT', interrupt);
        process.once('SIGTERM', interrupt);
        const config = loadConfig();
        const snapshots = await openSnapshotStorage(config);
        try {
          // People on the suppression list are left out of the new snapshot.
          const suppressions = suppressionListOf(store, loadSecretBox({ dataDir: config.dataDir }));
          await suppressions.refresh();
          const result = await loadSnapshot(store, snapshots, dir, {
            suppressions,
            signal: abort.signal,
            onProgress: (p) => progress.update(p.bytesRead, p.bytesTotal, `${phases[p.phase]}, ${p.lines.toLocaleString('en-US')} lines, ${p.badLines} bad`),
          });
          progress.stop();
          for (const line of result.badLines) console.error(`skipped ${line}`);
          if (result.pruneError !== null) console.error(`warning: older snapshots were not all removed: ${result.pruneError}`);
          console.log(
            `loaded ${result.version} (${result.id}): ${result.households.toLocaleString('en-US')} households, ` +
              `${result.people.toLocaleString('en-US')} people, ${result.skippedLines} bad lines skipped, ` +
              (result.suppressed.people === 0 ? '' : `${plural(result.suppressed.people, 'suppressed person', 'suppressed people')} left out, `) +
              `in ${result.seconds.toFixed(1)} s. ` +
              'Active now; running servers switch within seconds.',
          );
        } catch (error) {
          progress.stop();
          if (error instanceof SnapshotLoadError) for (const line of error.badLines) console.error(`bad ${line}`);
          throw error;
        } finally {
          process.off('SIGINT', interrupt);
          process.off('SIGTERM', interrupt);
          await snapshots.close();
        }
      });
    });

  data
    .command('status')
    .description('the active snapshot and the others kept')
    .option('--json', 'print JSON')
    .action(async (flags: { json?: boolean }) => {
      await withStore(async (store) => {
        const snapshots = await store.listSnapshots();
        if (flags.json === true) {
          console.log(JSON.stringify(snapshots, null, 2));
          return;
        }
        const active = snapshots.find((s) => s.active);
        console.log(
          active === undefined
            ? 'no active snapshot: production answers 503 until one is loaded (enrichbridge data load DIR)'
            : `active: ${active.version} (${active.id}), ${active.households.toLocaleString('en-US')} households, ` +
                `${active.people.toLocaleString('en-US')} people, ${active.skippedLines} bad lines skipped, loaded ${active.loadedAt ?? '?'}`,
        );
        for (const s of snapshots.filter((x) => !x.active)) {
          console.log(`  ${s.id}  ${s.state}${s.failure === null ? '' : `: ${s.failure}`}  loaded ${s.loadedAt ?? '-'}`);
        }
      });
    });

  data
    .command('rollback')
    .description('make the previously active snapshot active again')
    .action(async () => {
      await withStore(async (store) => {
        const now = await store.rollbackSnapshot();
        if (now === undefined) throw new SnapshotLoadError('there is no earlier snapshot to roll back to');
        console.log(`active: ${now.version} (${now.id}); running servers switch within seconds.`);
      });
    });

  data
    .command('migrate-to-postgres')
    .description(
      "copy this data folder's state (accounts, tokens, quotas, installations, record state, the log, jobs) from its SQLite file into the empty PostgreSQL database DATABASE_URL names, under the ENRICHBRIDGE_SECRET_KEY that sealed its credentials, and mark the folder as migrated; stop the servers first, then load the snapshots again",
    )
    .action(async () => {
      const config = loadConfig();
      if (config.databaseUrl === null) throw new MigrationRefusedError('set DATABASE_URL to the PostgreSQL database to copy into');
      const marker = readMigrationMarker(config.dataDir);
      if (marker !== null) {
        throw new MigrationRefusedError(
          `this data folder was already migrated to ${marker.migratedTo ?? 'PostgreSQL'} (${migrationMarkerPath(config.dataDir)}): point every instance at that database`,
        );
      }
      const file = path.join(config.dataDir, SQLITE_FILE_NAME);
      if (!existsSync(file)) throw new MigrationRefusedError(`there is no SQLite database to copy at ${file}`);
      const box = sealingKey(config.dataDir);
      const target = redactDatabaseUrl(config.databaseUrl);
      console.error(`enrichbridge: copying SQLite ${file} into PostgreSQL ${target}`);
      const from = await openDataFolder(config.dataDir);
      try {
        await requireSealingKey(from.db, box.box, box.hint);
        const to = await openDataFolder(config.dataDir, { databaseUrl: config.databaseUrl });
        try {
          const progress = progressReporter('copy', (n) => n.toLocaleString('en-US'));
          const copied = await copyState(from.db, to.db, ({ table, copied: done, total }) => progress.update(done, total, table));
          progress.stop();
          for (const [table, rows] of Object.entries(copied)) console.log(`${table.padEnd(20)} ${rows}`);
        } finally {
          await to.store.close();
        }
      } finally {
        await from.store.close();
      }
      // Only once the copy is committed: from now on this folder opens only with DATABASE_URL.
      writeMigrationMarker(config.dataDir, target);
      console.log(
        `copied, and marked ${config.dataDir} as migrated (${MIGRATION_MARKER_FILE}): run every instance with this DATABASE_URL and this ${SECRET_KEY_ENV}, ` +
          'then load the active snapshot again (enrichbridge data load DIR).',
      );
    });

  return data;
}
