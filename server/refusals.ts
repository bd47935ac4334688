// The one line a server start or a CLI command ends with when the place it runs in is not ready for it:
// the port taken (or privileged), the database DATABASE_URL names missing. Each line names the fix.
import { z } from 'zod';
import { isMissingDatabase } from '../core/storage/errors.ts';
import { MigratedFolderError } from '../core/storage/migration-marker.ts';

/** What Node's listen error carries (net.Server 'error'), read by its fields, never by its message. */
const ListenErrorSchema = z.object({
  code: z.enum(['EADDRINUSE', 'EACCES']),
  syscall: z.literal('listen'),
  port: z.number().int().optional(),
  address: z.string().optional(),
});

/** A word as a POSIX shell reads it back: bare when it is plain, else single-quoted. */
function shellWord(word: string): string {
  return /^[\w.@%+=:,/-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The `createdb` command that makes the database `url` names, on its server, as its user (never with its password). */
export function createdbCommand(url: string): { readonly database: string; readonly server: string | null; readonly command: string } | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  const user = decodeURIComponent(parsed.username);
  // No database in the URL: PostgreSQL opens the one named after the user.
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, '')) || user;
  if (database === '') return null;
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  const args = [...(host === '' ? [] : ['-h', host]), ...(parsed.port === '' ? [] : ['-p', parsed.port]), ...(user === '' ? [] : ['-U', user]), database];
  return {
    database,
    server: host === '' ? null : `${host}${parsed.port === '' ? '' : `:${parsed.port}`}`,
    command: ['createdb', ...args.map(shellWord)].join(' '),
  };
}

/**
 * The sentence, with its fix, for an error that says where the process runs is not ready (not that the
 * code is wrong); null for any other error, which is reported whole.
 */
export function refusalOf(error: unknown, databaseUrl: string | null): string | null {
  // A data folder whose state moved to PostgreSQL, opened without DATABASE_URL: its message says where.
  if (error instanceof MigratedFolderError) return error.message;
  const listen = ListenErrorSchema.safeParse(error);
  if (listen.success) {
    const { code, port, address } = listen.data;
    const where = `port ${port ?? '(PORT)'}${address === undefined ? '' : ` on ${address}`}`;
    return code === 'EADDRINUSE'
      ? `${where} is in use: start with PORT=<another port>, or stop what listens there`
      : `${where} needs privileges this process does not have: start with PORT=<a port above 1023>`;
  }
  if (isMissingDatabase(error)) {
    const made = databaseUrl === null ? null : createdbCommand(databaseUrl);
    if (made === null) return 'the database DATABASE_URL names does not exist: create it (createdb NAME), or point DATABASE_URL at one that does';
    return `database "${made.database}" does not exist${made.server === null ? '' : ` on ${made.server}`}: create it with \`${made.command}\`, or point DATABASE_URL at one that does`;
  }
  return null;
}
