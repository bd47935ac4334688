// The name rule at its limit, on each database: a name shared by more than NAME_LOOKUP_LIMIT people
// is too common to decide anything, even when only one of them lives in the place supplied (on
// PostgreSQL the lookup sends only the people in the place, so the count must come from the index).
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSnapshot } from '../../core/snapshot/storage/loader.ts';
import { SnapshotMatcher } from '../../core/snapshot/matching/matcher.ts';
import { NAME_LOOKUP_LIMIT } from '../../core/snapshot/port.ts';
import { TEST_DATABASES } from '../support/databases.ts';
import { household, person, writeSnapshot } from '../support/snapshot-fixture.ts';
import { type TestSnapshots, openTestSnapshots } from '../support/snapshot-storage.ts';

for (const database of TEST_DATABASES) {
  describe(`a name lookup on ${database.name}`, () => {
    let snapshots: TestSnapshots;
    let matcher: SnapshotMatcher;
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
      ];
      const source = writeSnapshot(path.join(snapshots.root, 'common'), { version: 'common', households: [...atlanta, boston, denver], people });
      const result = await loadSnapshot(snapshots.store, snapshots.storage, source);
      matcher = new SnapshotMatcher(await snapshots.storage.open(snapshots.storage.locationFor(result.id)), result.version);
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
  });
}
