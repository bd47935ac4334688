// `enrichbridge suppress …`: the people production never answers about again (a deletion request, an
// objection). Nothing here prints or stores an identifier in clear: entries are keyed hashes, and the
// audit trail says who changed the list, when, and by how many entries.
import { userInfo } from 'node:os';
import { Command, Option } from 'commander';
import { AdminError } from '../../core/accounts/admin.ts';
import { SnapshotMatcher } from '../../core/snapshot/matching/matcher.ts';
import type { OpenedSnapshot, SnapshotStorage } from '../../core/snapshot/port.ts';
import { loadSecretBox } from '../../core/secrets/secret-box.ts';
import { importList } from '../../core/suppression/import.ts';
import { resolveInSnapshot } from '../../core/suppression/resolve.ts';
import type { Identifiers } from '../../core/suppression/list.ts';
import { type Suppressor, check, suppress, unsuppress } from '../../core/suppression/operations.ts';
import type { Store } from '../../core/storage/port.ts';
import { loadConfig } from '../config.ts';
import { plural } from '../plural.ts';
import { suppressionListOf } from '../runtime/compose.ts';
import { openSnapshotStorage } from '../runtime/storage.ts';
import { wholeNumber } from './options.ts';
import { progressReporter } from './data.ts';

type WithStore = <T>(run: (store: Store) => Promise<T>) => Promise<T>;

export interface IdentifierFlags {
  email?: string;
  phone?: string;
  firstName?: string;
  lastName?: string;
  address?: string;
  zipcode?: string;
}

export function withIdentifierOptions(command: Command): Command {
  return command
    .option('--email <email>', 'an e-mail address of theirs')
    .option('--phone <phone>', 'a phone number of theirs')
    .option('--first-name <name>', 'their first name (with --last-name, --address and --zipcode)')
    .option('--last-name <name>', 'their last name')
    .option('--address <street>', 'their street address ("12 Elm Street")')
    .option('--zipcode <zip>', "their address's ZIP code");
}

export function identifiersFrom(flags: IdentifierFlags): Identifiers {
  const named = [flags.lastName, flags.address, flags.zipcode].filter((v) => v !== undefined).length;
  if (named > 0 && named < 3) throw new AdminError('a name and address needs --last-name, --address and --zipcode (and --first-name, if known)');
  if (flags.email === undefined && flags.phone === undefined && named === 0) {
    throw new AdminError('name the person: --email, --phone, or --first-name with --last-name, --address and --zipcode');
  }
  return {
    ...(flags.email === undefined ? {} : { emails: [flags.email] }),
    ...(flags.phone === undefined ? {} : { phones: [flags.phone] }),
    ...(named === 3
      ? { nameAddress: { firstName: flags.firstName ?? null, lastName: flags.lastName, address: { address: flags.address, zipcode: flags.zipcode } } }
      : {}),
  };
}

export function actorOf(by: string | undefined): string {
  if (by !== undefined && by.trim() !== '') return by.trim().slice(0, 100);
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // no user name (a container's uid without a passwd entry)
  }
  return `cli:${user}`;
}

/** The active snapshot: where it is, for a scan of it. */
interface ActiveSnapshot {
  readonly storage: SnapshotStorage;
  readonly location: string;
  readonly version: string;
}

/** The list, keyed with the data folder's key, and the active snapshot to find people in (if any is loaded). */
async function withSuppressor<T>(withStore: WithStore, run: (suppressor: Suppressor, snapshot: ActiveSnapshot | null) => Promise<T>): Promise<T> {
  return withStore((store) => withSuppressorOn(store, (suppressor, _matcher, snapshot) => run(suppressor, snapshot)));
}

/** The same on a store already open; `run` also gets the active snapshot's matcher (null: none loaded). */
export async function withSuppressorOn<T>(
  store: Store,
  run: (suppressor: Suppressor, matcher: SnapshotMatcher | null, snapshot: ActiveSnapshot | null) => Promise<T>,
): Promise<T> {
  const config = loadConfig();
  const list = suppressionListOf(store, loadSecretBox({ dataDir: config.dataDir }));
  await list.refresh();
  const snapshots = await openSnapshotStorage(config);
  let opened: OpenedSnapshot | null = null;
  try {
    const active = await store.activeSnapshot();
    opened = active === undefined ? null : await snapshots.open(active.location);
    const matcher = opened === null || active === undefined ? null : new SnapshotMatcher(opened, active.version);
    return await run(
      { store: store.suppressions, list, findSubjects: matcher === null ? null : (request) => matcher.subjectsOf(request) },
      matcher,
      active === undefined || opened === null ? null : { storage: snapshots, location: active.location, version: active.version },
    );
  } finally {
    opened?.close();
    await snapshots.close();
  }
}

function found(people: number, households: number): string {
  if (people === 0 && households === 0) return 'nobody in the active snapshot under these identifiers (the next load leaves them out if they appear)';
  return `${plural(people, 'person', 'people')} in the active snapshot`;
}

export function suppressCommands(withStore: WithStore): Command {
  const command = new Command('suppress').description('people production never answers about again (deletion requests, objections)');

  withIdentifierOptions(
    command.command('add').description('suppress a person (or, with --household, their whole household); every instance stops answering within seconds'),
  )
    .option('--household', 'their whole household')
    .option('--by <who>', 'who asks, for the audit trail (default: cli:<user>)')
    .action(async (flags: IdentifierFlags & { household?: boolean; by?: string }) => {
      const identifiers = identifiersFrom(flags);
      await withSuppressor(withStore, async (suppressor) => {
        const outcome = await suppress(suppressor, identifiers, { household: flags.household === true, actor: actorOf(flags.by) });
        console.log(
          `suppressed${flags.household === true ? ' with their household' : ''}: ${plural(outcome.added, 'new entry', 'new entries')}; ${found(outcome.people, outcome.households)}`,
        );
      });
    });

  command
    .command('import <file>')
    .description(
      'suppress everyone in FILE: CSV with a header row (email, phone, first_name, last_name, address, zipcode, household) or JSON Lines ' +
        'with the same fields; with --hashed, SHA-256 hashes of standardized e-mails or phones as deletion platforms send them ' +
        '(a column "hash", else the last column; Base64 or hex)',
    )
    .addOption(new Option('--hashed <kind>', 'the file holds hashes of this kind of identifier').choices(['email', 'phone']))
    .option('--household', "every line's whole household")
    .option('--by <who>', 'who asks, for the audit trail (default: cli:<user>)')
    .action(async (file: string, flags: { hashed?: 'email' | 'phone'; household?: boolean; by?: string }) => {
      await withSuppressor(withStore, async (suppressor, snapshot) => {
        const progress = progressReporter('import', (n) => `${(n / 1024).toFixed(0)} KiB`);
        const result = await importList(suppressor, file, {
          ...(flags.hashed === undefined ? {} : { hashed: flags.hashed }),
          household: flags.household === true,
          actor: actorOf(flags.by),
          onProgress: (p) => progress.update(p.bytesRead, p.bytesTotal, `${p.lines.toLocaleString('en-US')} lines, ${p.bad} bad`),
        });
        progress.stop();
        for (const line of result.badLines) console.error(`skipped ${line}`);
        console.log(
          `imported ${plural(result.lines, 'line')}: ${plural(result.added, 'new entry', 'new entries')}, ${plural(result.bad, 'bad line')} skipped` +
            (flags.hashed === undefined ? `; ${plural(result.people, 'person', 'people')} found in the active snapshot` : ''),
        );
        // Hashes cannot be looked up in the snapshot: it is read through once for the people they name.
        if (flags.hashed !== undefined && snapshot !== null) {
          const scan = progressReporter('find', (n) => n.toLocaleString('en-US'));
          const resolved = await resolveInSnapshot(suppressor.store, suppressor.list, snapshot, {
            actor: actorOf(flags.by),
            onProgress: (p) => scan.update(p.people, p.of, `${p.kind}s`),
          });
          scan.stop();
          console.log(`${plural(resolved.people, 'person', 'people')} of the active snapshot found under listed e-mails and phones`);
        }
      });
    });

  withIdentifierOptions(command.command('check').description('whether production would refuse to answer about this person'))
    .option('--json', 'print JSON')
    .action(async (flags: IdentifierFlags & { json?: boolean }) => {
      const identifiers = identifiersFrom(flags);
      await withSuppressor(withStore, async (suppressor) => {
        const outcome = await check(suppressor, identifiers);
        if (flags.json === true) {
          console.log(JSON.stringify({ suppressed: outcome.byIdentifier || outcome.bySubject, ...outcome }));
          return;
        }
        if (outcome.byIdentifier) console.log('suppressed: one of these identifiers is on the list');
        else if (outcome.bySubject) console.log('suppressed: the person these identifiers lead to is on the list (by another identifier)');
        else console.log(`not suppressed (${found(outcome.people, 0)})`);
      });
    });

  command
    .command('count')
    .description('how many entries the list holds, by kind')
    .option('--json', 'print JSON')
    .action(async (flags: { json?: boolean }) => {
      await withStore(async (store) => {
        const counts = await store.suppressions.counts();
        if (flags.json === true) {
          console.log(JSON.stringify(counts));
          return;
        }
        const { byKind } = counts;
        console.log(
          `${plural(counts.entries, 'entry', 'entries')}: ${plural(byKind.email, 'e-mail')}, ${plural(byKind.phone, 'phone')}, ` +
            `${plural(byKind.name_address, 'name at an address', 'names at addresses')}, ${plural(byKind.person, 'person', 'people')}, ` +
            `${plural(byKind.household, 'household')} (${plural(counts.households, 'entry', 'entries')} with the whole household)`,
        );
      });
    });

  withIdentifierOptions(command.command('remove').description("an operator's correction: take a person off the list (logged)"))
    .option('--household', 'their household too')
    .option('--by <who>', 'who corrects, for the audit trail (default: cli:<user>)')
    .action(async (flags: IdentifierFlags & { household?: boolean; by?: string }) => {
      const identifiers = identifiersFrom(flags);
      await withSuppressor(withStore, async (suppressor) => {
        const { removed } = await unsuppress(suppressor, identifiers, { household: flags.household === true, actor: actorOf(flags.by) });
        if (removed === 0) throw new AdminError('nothing of this person is on the list');
        console.log(`removed ${plural(removed, 'entry', 'entries')}; production answers about them again`);
      });
    });

  command
    .command('audit')
    .description('every change to the list, newest first: who, when, what and how many entries')
    .option('--limit <n>', 'at most N changes (default 50)', wholeNumber(1))
    .action(async (flags: { limit?: number }) => {
      await withStore(async (store) => {
        const entries = await store.suppressions.audit(flags.limit ?? 50);
        if (entries.length === 0) console.log('the list was never changed');
        for (const entry of entries) {
          console.log(
            `${entry.at}  ${entry.action.padEnd(7)}  ${plural(entry.entries, 'entry', 'entries').padEnd(12)}  ${entry.actor}${entry.note === null ? '' : `  ${entry.note}`}`,
          );
        }
      });
    });

  return command;
}
