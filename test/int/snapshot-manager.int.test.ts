// The snapshot watcher when the active snapshot cannot be opened (a file gone, a schema renamed, a
// database that did not answer): it keeps what it has, says so, and tries again after a wait, so a
// passing fault does not leave a server on the old snapshot (or none) until the next load.
import { renameSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { loadSnapshot } from '../../core/snapshot/storage/loader.ts';
import { SnapshotManager, type SnapshotEvent } from '../../core/snapshot/storage/manager.ts';
import { TEST_DATABASES } from '../support/databases.ts';
import { household, person, writeSnapshot } from '../support/snapshot-fixture.ts';
import { type TestSnapshots, openTestSnapshots } from '../support/snapshot-storage.ts';

const opened: TestSnapshots[] = [];
afterEach(async () => {
  for (const snapshots of opened.splice(0)) await snapshots.close();
});

/** Moves a snapshot's data out of the way and back: its file renamed, or its schema. */
async function hide(snapshots: TestSnapshots, location: string): Promise<() => Promise<void>> {
  if (snapshots.location.startsWith('postgres')) {
    const client = new pg.Client({ connectionString: snapshots.location });
    await client.connect();
    await client.query(`ALTER SCHEMA "${location}" RENAME TO "${location}_away"`);
    return async () => {
      await client.query(`ALTER SCHEMA "${location}_away" RENAME TO "${location}"`);
      await client.end();
    };
  }
  const file = path.join(snapshots.root, location);
  renameSync(file, `${file}.away`);
  return () => Promise.resolve(renameSync(`${file}.away`, file));
}

for (const database of TEST_DATABASES) {
  describe(`the snapshot watcher on ${database.name}`, () => {
    it('tries an active snapshot it could not open again after the wait, not at every poll', async () => {
      const snapshots = await openTestSnapshots(database);
      opened.push(snapshots);
      const h = household([{ address: '1 Oak Street', zipcode: '30301' }], { windfall_id: 'c'.repeat(32) });
      const source = writeSnapshot(path.join(snapshots.root, 'v1'), { version: 'v1', households: [h], people: [person('p1', 'Pat', 'Doe', h)] });
      const result = await loadSnapshot(snapshots.store, snapshots.storage, source);
      const restore = await hide(snapshots, snapshots.storage.locationFor(result.id));

      const events: SnapshotEvent[] = [];
      const manager = new SnapshotManager(
        snapshots.store,
        snapshots.storage,
        () => undefined,
        (event) => events.push(event),
        1_000,
      );
      await manager.refresh();
      expect(manager.activeId).toBeNull();
      expect(events.map((event) => event.kind)).toEqual(['error']);

      await restore();
      await manager.refresh();
      // Within the wait: not tried again (a poll a second must not retry a broken snapshot each time).
      expect(manager.activeId).toBeNull();
      expect(events).toHaveLength(1);
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      await manager.refresh();
      expect(manager.activeId).toBe(result.id);
      expect(events.map((event) => event.kind)).toEqual(['error', 'activated']);
      manager.stop();
    });
  });
}
