// The name rule at its limit, on each database: a name shared by more than NAME_LOOKUP_LIMIT people
// is too common to decide anything, even when only one of them lives in the place supplied (the lookup
// sends only the people in the place, so the count must come from the index). On SQLite, the name
// index carries the scope, and a file loaded before it did is still read.
import { copyFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { loadSnapshot } from '../../core/snapshot/storage/loader.ts';
import { SnapshotMatcher } from '../../core/snapshot/matching/matcher.ts';
import { NAME_LOOKUP_LIMIT, type NameHits, type NameScope } from '../../core/snapshot/port.ts';
import { SqliteSnapshotReader } from '../../core/snapshot/storage/sqlite-snapshot.ts';
import Database from '../../core/storage/better-sqlite3.ts';
import { TEST_DATABASES } from '../support/databases.ts';
import { household, person, writeSnapshot } from '../support/snapshot-fixture.ts';
import { type TestSnapshots, openTestSnapshots } from '../support/snapshot-storage.ts';

for (const database of TEST_DATABASES) {
  describe(`a name lookup on ${database.name}`, () => {
    let snapshots: TestSnapshots;
    let matcher: SnapshotMatcher;
    let location = '';
    const boston = household([{ address: '45 Beacon Street', city: 'Boston', state: 'MA', zipcode: '02108' }], { windfall_id: 'b'.repeat(32) });
    const denver = household([{ address: '9 Larimer Street', city: 'Denver', state: 'CO', zipcode: '80202' }], { windfall_id: 'd'.repeat(32) });

    beforeAll(async () => {
      snapshots = await openTestSnapshots(database);
      // NAME_LOOKUP_LIMIT John Smiths in Atlanta, one in Boston; one Zeb Quartermaine in Denver.
      const atlanta = Array.from({ length: NAME_LOOKUP_LIMIT }, (_, i) =>
        household([{ address: `${i + 1} Peachtree Street`, zipcode: '30301' }], { windfall_id: i.toString(16).padStart(32, '0') }),
      );
      const people = [
        ...atlanta.map((h, i) => person(`atl-${i}`, 'John', 'Smith', h)),
        person('bos', 'John', 'Smith', boston),
        person('den', 'Zeb', 'Quartermaine', denver),
        person('ada-bos', 'Ada', 'Lovelace', boston),
        person('ada-den', 'Ada', 'Lovelace', denver),
      ];
      const source = writeSnapshot(path.join(snapshots.root, 'common'), { version: 'common', households: [...atlanta, boston, denver], people });
      const result = await loadSnapshot(snapshots.store, snapshots.storage, source);
      location = snapshots.storage.locationFor(result.id);
      matcher = new SnapshotMatcher(await snapshots.storage.open(location), result.version);
    }, 120_000);
    afterAll(() => snapshots.close());

    it('refuses a name shared by more than NAME_LOOKUP_LIMIT people, even when one alone is in the place supplied', async () => {
      const answer = await matcher.match(
        { first_name: 'John', last_name: 'Smith', addresses: [{ city: 'Boston', state: 'MA', zipcode: '02108' }] },
        { career: true },
      );
      expect(answer).toEqual({ household: null, career: null });
    });

    it('matches a rarer name with its place', async () => {
      const answer = await matcher.match({ first_name: 'Zeb', last_name: 'Quartermaine', addresses: [{ zipcode: '80202' }] }, { career: true });
      expect(answer.household?.windfall_id).toBe(denver.windfall_id);
    });

    /** One name lookup as the snapshot's reader answers it, in as many rounds as a fetching reader takes. */
    const lookUp = async (last: string, firstKey: string, scope: NameScope): Promise<NameHits> => {
      const opened = await snapshots.storage.open(location);
      try {
        if (opened.kind === 'immediate') return opened.reader.peopleByName(last, firstKey, scope);
        const reader = opened.requestReader();
        reader.peopleByName(last, firstKey, scope);
        await reader.fetchLacking();
        return reader.peopleByName(last, firstKey, scope);
      } finally {
        opened.close();
      }
    };
    const personIds = (hits: NameHits) => hits.people.map((row) => row.person_id);

    it('reads only the people of the scope from the name index, and no one for a name too common', async () => {
      // Namesakes elsewhere are passed over in the index: the one in Boston is not sent for Denver.
      expect(personIds(await lookUp('lovelace', 'ada', { company: '', postals: ['80202'], places: [] }))).toEqual(['ada-den']);
      expect(personIds(await lookUp('lovelace', 'ada', { company: '', postals: ['99999'], places: [{ city: 'boston', region: 'MA' }] }))).toEqual(['ada-bos']);
      expect(await lookUp('quartermaine', 'zeb', { company: '', postals: ['80202'], places: [] })).toMatchObject({
        people: [{ person_id: 'den' }],
        tooCommon: false,
      });
      // Too common: counted in the index, and no one read, in the scope or out of it.
      expect(await lookUp('smith', 'john', { company: '', postals: ['02108'], places: [] })).toEqual({ people: [], tooCommon: true });
    });

    it.runIf(database.name === 'SQLite')('still answers the name rule from a SQLite file whose name index carries no scope', async () => {
      // What a load before the scope left: the name rows with the name key and the person only (made
      // on a copy: the suite's matcher holds the file).
      const file = path.join(snapshots.root, `before-${location}`);
      copyFileSync(path.join(snapshots.root, location), file);
      const older = new Database(file);
      older.exec(`CREATE TABLE names_before AS SELECT last, first_key, p FROM names; DROP TABLE names;
        ALTER TABLE names_before RENAME TO names; CREATE INDEX names_last_first ON names (last, first_key, p);`);
      older.close();
      const reader = new SqliteSnapshotReader(file);
      onTestFinished(() => reader.close());
      const olderMatcher = new SnapshotMatcher({ kind: 'immediate', reader, close: () => reader.close() }, 'before');
      const rare = await olderMatcher.match({ first_name: 'Zeb', last_name: 'Quartermaine', addresses: [{ zipcode: '80202' }] }, { career: true });
      expect(rare.household?.windfall_id).toBe(denver.windfall_id);
      const common = await olderMatcher.match(
        { first_name: 'John', last_name: 'Smith', addresses: [{ city: 'Boston', state: 'MA', zipcode: '02108' }] },
        { career: true },
      );
      expect(common).toEqual({ household: null, career: null });
    });
  });
}
