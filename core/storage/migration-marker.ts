// The mark a data folder carries once its state has moved to PostgreSQL (`data migrate-to-postgres`):
// where the data went, so that a server or a command opening the folder without DATABASE_URL refuses
// instead of quietly reading and writing the old SQLite file beside the instances on PostgreSQL.
import { closeSync, constants, fchmodSync, openSync, readFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { PRIVATE_FILE_MODE } from './data-folder.ts';

export const MIGRATION_MARKER_FILE = 'MIGRATED-TO-POSTGRES.json';

const MarkerSchema = z.object({
  /** The database the state went to, its password masked (core/observe/connection-urls.ts). */
  migrated_to: z.string().min(1),
  migrated_at: z.string().min(1),
  note: z.string(),
});

export interface MigrationMarker {
  /** Where the data went, or null when the marker is there but does not say (edited or truncated). */
  readonly migratedTo: string | null;
  readonly migratedAt: string | null;
}

/** A refusal to open a migrated folder without DATABASE_URL; its message is one sentence saying where the data went. */
export class MigratedFolderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MigratedFolderError';
  }
}

export function migrationMarkerPath(dataDir: string): string {
  return path.join(dataDir, MIGRATION_MARKER_FILE);
}

/**
 * Marks `dataDir` as migrated to `redactedDatabaseUrl` (which must already have its password masked:
 * the file is written as given). The file is 0600, like everything in the folder.
 */
export function writeMigrationMarker(dataDir: string, redactedDatabaseUrl: string, at: Date = new Date()): void {
  const marker: z.infer<typeof MarkerSchema> = {
    migrated_to: redactedDatabaseUrl,
    migrated_at: at.toISOString(),
    note:
      "This data folder's state (accounts, tokens, quotas, installations, record state, the log, jobs) was copied to the " +
      'PostgreSQL database above, and is no longer read from here: every server and command refuses this folder unless ' +
      'DATABASE_URL is set. The SQLite file is kept as it was at the copy; delete this file only to go back to it.',
  };
  const fd = openSync(migrationMarkerPath(dataDir), constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC, PRIVATE_FILE_MODE);
  try {
    fchmodSync(fd, PRIVATE_FILE_MODE);
    writeSync(fd, `${JSON.stringify(marker, null, 2)}\n`);
  } finally {
    closeSync(fd);
  }
}

/** The folder's marker, or null when the folder was never migrated. */
export function readMigrationMarker(dataDir: string): MigrationMarker | null {
  let text: string;
  try {
    text = readFileSync(migrationMarkerPath(dataDir), 'utf8');
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return null;
    throw error;
  }
  // The file's presence is the mark; what it says is only for the message.
  let parsed: ReturnType<typeof MarkerSchema.safeParse>;
  try {
    parsed = MarkerSchema.safeParse(JSON.parse(text));
  } catch {
    return { migratedTo: null, migratedAt: null };
  }
  return parsed.success ? { migratedTo: parsed.data.migrated_to, migratedAt: parsed.data.migrated_at } : { migratedTo: null, migratedAt: null };
}

/** Throws MigratedFolderError when `dataDir` was migrated: a process without DATABASE_URL must not open it. */
export function refuseMigratedFolder(dataDir: string): void {
  const marker = readMigrationMarker(dataDir);
  if (marker === null) return;
  const where = marker.migratedTo === null ? 'PostgreSQL' : marker.migratedTo;
  const when = marker.migratedAt === null ? '' : ` on ${marker.migratedAt}`;
  throw new MigratedFolderError(
    `the data folder ${dataDir} was migrated to ${where}${when} (${migrationMarkerPath(dataDir)}), so its SQLite file is no longer used: set DATABASE_URL to that database`,
  );
}
