// Linkage's candidates on a snapshot with a busy street: the keys of the postal code's number and
// street, which keep every household they find, must not crowd the name's keys out of the
// MAX_CANDIDATES a record is compared with. Read as the matcher reads (a round at a time on PostgreSQL).
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EnrichmentRequest } from '../../core/contract/schemas.ts';
import { type LinkageReader, MAX_CANDIDATES, blockedCandidates, linkageQuery } from '../../core/snapshot/matching/linkage.ts';
import { loadSnapshot } from '../../core/snapshot/storage/loader.ts';
import { TEST_DATABASES } from '../support/databases.ts';
import { household, person, writeSnapshot } from '../support/snapshot-fixture.ts';
import { type TestSnapshots, openTestSnapshots } from '../support/snapshot-storage.ts';

const PLACE = { city: 'Testville', state: 'LA', zipcode: '70001' };
// 199 households at number 777 of other streets, and 150 on Elm Street at other numbers: a record at
// 777 Elm Street asks both keys, 349 households together, past MAX_CANDIDATES.
const atNumber = Array.from({ length: 199 }, (_, i) => household([{ address: `777 Alder ${i + 1} Road`, ...PLACE }]));
const onStreet = Array.from({ length: 150 }, (_, i) => household([{ address: `${i + 1} Elm Street`, ...PLACE }]));
// Loaded last, so the street's key lists it last.
const quills = household([{ address: '500 Elm Street', ...PLACE }]);
const households = [...atNumber, ...onStreet, quills];
const people = [...[...atNumber, ...onStreet].map((home, i) => person(`z-${i}`, 'Paul', 'Zanetti', home)), person('ann-quill', 'Ann', 'Quill', quills)];

for (const database of TEST_DATABASES) {
  describe(`Linkage's candidates on a snapshot in ${database.name}`, () => {
    let snapshots: TestSnapshots;
    let location: string;

    beforeAll(async () => {
      snapshots = await openTestSnapshots(database);
      const source = writeSnapshot(path.join(snapshots.root, 'source'), { version: 'busy-street', households, people });
      location = snapshots.storage.locationFor((await loadSnapshot(snapshots.store, snapshots.storage, source)).id);
    });
    afterAll(() => snapshots.close());

    const candidatesOf = async (request: EnrichmentRequest): Promise<string[]> => {
      const query = linkageQuery(request);
      if (query === null) throw new Error('the record has no name or no street address');
      const opened = await snapshots.storage.open(location);
      try {
        const source = opened.kind === 'immediate' ? opened.reader : opened.requestReader();
        const fetching = 'lacking' in source ? source : null;
        const reader: LinkageReader = Object.assign(source, { pending: () => false });
        for (let round = 0; round < 8; round += 1) {
          const ids = blockedCandidates(reader, query).map((hh) => reader.household(hh)?.windfall_id ?? '');
          if (fetching?.lacking() === true) {
            await fetching.fetchLacking();
            continue;
          }
          return ids;
        }
        throw new Error('the reader kept lacking rows');
      } finally {
        opened.close();
      }
    };

    it('takes the keys with the fewest households first, so a busy street’s number and street never crowd out the name’s sound', async () => {
      const found = await candidatesOf({ first_name: 'Ann', last_name: 'Quill', addresses: [{ address: '777 Elm Street', ...PLACE }] });
      expect(found).toHaveLength(MAX_CANDIDATES);
      expect(found).toContain(quills.windfall_id);
    });
  });
}
