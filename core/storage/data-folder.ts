// The data folder holds the database (accounts, installations, record states), its WAL, and every
// data snapshot (hundreds of thousands of e-mails, phones and net worths): readable by its owner only.
// Folders are 0700, files 0600, whatever the process umask; a folder made by an older version (0755
// and 0644) is tightened at start, and the caller logs which paths were.
import { chmodSync, closeSync, lstatSync, mkdirSync, openSync, readdirSync } from 'node:fs';
import path from 'node:path';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Left to its owner: the sealing key's loader refuses a key that others could read (like ssh does)
 * instead of quietly tightening it, since such a key may already have been copied.
 */
const LEFT_ALONE = new Set(['secret.key']);

/** Creates `dir` (and its parents) as 0700, and tightens it if it already exists looser. */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  tighten(dir, PRIVATE_DIR_MODE);
}

/**
 * Creates `file` empty as 0600 if it does not exist (and tightens it if it does), so that SQLite,
 * which opens an existing file as it is and gives its -wal and -shm files the database's own mode,
 * never makes one readable by others.
 */
export function ensurePrivateFile(file: string): void {
  closeSync(openSync(file, 'a', PRIVATE_FILE_MODE));
  tighten(file, PRIVATE_FILE_MODE);
}

/**
 * Makes `dir` 0700 and every folder below it 0700 and every file 0600 (symbolic links are not
 * followed). Returns the paths it changed, relative to `dir` ('.' for the folder itself). `list` reads a
 * folder's names (a test's way to list a file that is gone by the time it is looked at).
 */
export function securePrivateFolder(dir: string, options: { readonly list?: (folder: string) => string[] } = {}): string[] {
  const list = options.list ?? ((folder: string) => readdirSync(folder));
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const changed: string[] = [];
  // Another process may remove a file while this one walks (SQLite deletes the -wal and -shm files
  // as the last connection closes): a file gone between the listing and its turn is skipped.
  const walk = (current: string) => {
    const stat = lstatSync(current, { throwIfNoEntry: false });
    if (stat === undefined) return;
    if (stat.isDirectory()) {
      if (goneMeanwhile(() => tighten(current, PRIVATE_DIR_MODE, stat.mode))) changed.push(path.relative(dir, current) || '.');
      for (const name of goneMeanwhile(() => list(current)) || []) walk(path.join(current, name));
    } else if (stat.isFile() && !LEFT_ALONE.has(path.basename(current))) {
      if (goneMeanwhile(() => tighten(current, PRIVATE_FILE_MODE, stat.mode))) changed.push(path.relative(dir, current));
    }
  };
  walk(dir);
  return changed;
}

/** `work`'s result, or false when the file it works on was removed meanwhile (ENOENT). */
function goneMeanwhile<T>(work: () => T): T | false {
  try {
    return work();
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ENOENT') return false;
    throw error;
  }
}

/** Removes the permission bits beyond `mode`; true when there were any. */
function tighten(target: string, mode: number, current = lstatSync(target).mode): boolean {
  if ((current & 0o777 & ~mode) === 0) return false;
  chmodSync(target, current & 0o777 & mode);
  return true;
}
