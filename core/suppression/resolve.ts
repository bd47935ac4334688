// Finding, in a loaded snapshot, the people a list names only by hashed identifiers (a deletion
// platform's e-mails or phones): each e-mail and phone of the snapshot is standardized and hashed as
// the platform does, and a person whose hash is listed is added to the list by their snapshot id, so
// their other identifiers stop leading to them at once rather than from the next load. A scan of the
// whole snapshot, a range of people at a time.
import type { ContactKind, SnapshotStorage } from '../snapshot/port.ts';
import { platformHash, standardEmail, standardPhone } from './identifiers.ts';
import type { SuppressionList } from './list.ts';
import type { SuppressionEntry, SuppressionStore } from './store.ts';

/** People read a query. */
const PEOPLE_A_READ = 20_000;

export interface ResolveProgress {
  readonly kind: ContactKind;
  readonly people: number;
  readonly of: number;
}

export interface Resolved {
  /** People of the snapshot found under a listed identifier (new to the list or not). */
  readonly people: number;
  /** Entries new to the list. */
  readonly added: number;
}

export async function resolveInSnapshot(
  store: SuppressionStore,
  list: SuppressionList,
  snapshot: { readonly storage: SnapshotStorage; readonly location: string; readonly version: string },
  options: { readonly actor: string; readonly onProgress?: (progress: ResolveProgress) => void },
): Promise<Resolved> {
  const kinds = (['email', 'phone'] as const).filter((kind) => list.holdsKind(kind));
  if (kinds.length === 0) return { people: 0, added: 0 };
  const last = await snapshot.storage.lastPerson(snapshot.location);
  const entries: SuppressionEntry[] = [];
  const people = new Set<string>();
  for (const kind of kinds) {
    const standard = kind === 'email' ? standardEmail : standardPhone;
    for (let from = 0; from < last; from += PEOPLE_A_READ) {
      for (const row of await snapshot.storage.contacts(snapshot.location, kind, from, Math.min(last, from + PEOPLE_A_READ))) {
        const value = standard(row.value);
        if (value === null) continue;
        const scope = list.scopeOf(kind, list.digest(kind, platformHash(value)));
        if (scope === undefined) continue;
        people.add(row.personId);
        entries.push({ kind: 'person', value: row.personId, scope });
        if (scope === 'household' && row.householdId !== null) entries.push({ kind: 'household', value: row.householdId, scope });
      }
      options.onProgress?.({ kind, people: Math.min(last, from + PEOPLE_A_READ), of: last });
    }
  }
  const added = await store.add(entries, { actor: options.actor, action: 'resolve', note: `snapshot ${snapshot.version}` });
  await list.refresh();
  return { people: people.size, added };
}
