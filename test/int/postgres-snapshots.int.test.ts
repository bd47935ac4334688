// Snapshots in PostgreSQL (issue 12): a schema per snapshot, filled with COPY; every instance swapping
// to a newly active one on the database's notification alone; a killed load's schema cleaned up, never
// a live load's or another deployment's; values COPY must escape arriving intact.
import path from 'node:path';
import { hostname } from 'node:os';
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanAbandonedLoads, loadSnapshot } from '../../core/snapshot/storage/loader.ts';
import { SnapshotManager } from '../../core/snapshot/storage/manager.ts';
import { SnapshotMatcher } from '../../core/snapshot/matching/matcher.ts';
import { linkageQuery } from '../../core/snapshot/matching/linkage.ts';
import { PostgresSnapshotSource } from '../../core/snapshot/storage/postgres-snapshot-reader.ts';
import { PostgresSnapshots } from '../../core/snapshot/storage/postgres-snapshot.ts';
import { TcpOutage } from '../support/tcp-outage.ts';
import { TEST_DATABASES } from '../support/databases.ts';
import { type TestSnapshots, openTestSnapshots } from '../support/snapshot-storage.ts';
import { career, household, person, writeSnapshot } from '../support/snapshot-fixture.ts';

const postgres = TEST_DATABASES.find((database) => database.name === 'PostgreSQL');

function world(size: number, tag: string) {
  const households = Array.from({ length: size }, (_, i) => household([{ address: `${i + 1} Elm Street`, zipcode: '30301' }]));
  const people = households.map((h, i) => person(`${tag}-${i}`, 'Ann', `Lee${i}`, h, { emails: [`${tag}${i}@example.com`] }));
  return { households, people };
}

const opened: TestSnapshots[] = [];
afterEach(async () => {
  for (const snapshots of opened.splice(0)) await snapshots.close();
});

async function setup(): Promise<TestSnapshots> {
  if (postgres === undefined) throw new Error('no PostgreSQL');
  const snapshots = await openTestSnapshots(postgres);
  opened.push(snapshots);
  return snapshots;
}

// Without TEST_DATABASE_URL there is no PostgreSQL to test against; .ci/run always sets it.
describe.skipIf(postgres === undefined)('snapshots in PostgreSQL', () => {
  it('loads a snapshot into a schema of its own, with its rows and indexes, and activates it', async () => {
    const { store, storage, location: url, root } = await setup();
    const result = await loadSnapshot(store, storage, writeSnapshot(path.join(root, 'one'), { version: 'one', ...world(30, 'one') }));
    const schema = storage.locationFor(result.id);
    expect(await store.activeSnapshot()).toMatchObject({ id: result.id, location: schema, households: 30, people: 30 });
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const counts = await client.query<{ people: string; emails: string }>(
        `SELECT (SELECT count(*) FROM "${schema}".people) AS people, (SELECT count(*) FROM "${schema}".emails) AS emails`,
      );
      expect(counts.rows[0]).toEqual({ people: '30', emails: '30' });
      const indexes = await client.query<{ indexname: string }>('SELECT indexname FROM pg_indexes WHERE schemaname = $1 ORDER BY indexname', [schema]);
      expect(indexes.rows.map((row) => row.indexname)).toEqual(
        expect.arrayContaining([
          'addresses_key',
          'emails_email',
          'households_windfall_id',
          'names_last_first',
          'people_hh',
          'people_person_id',
          'phones_phone',
        ]),
      );
    } finally {
      await client.end();
    }
  });

  it('every instance swaps to a newly active snapshot within 2 s on the notification alone, and back on rollback', async () => {
    const { store, storage, root, another } = await setup();
    const first = await loadSnapshot(store, storage, writeSnapshot(path.join(root, 'first'), { version: 'first', ...world(5, 'first') }));
    // Two instances' managers, each on its own pool and listener, with no poll: only NOTIFY can move them.
    const managers = await Promise.all(
      [1, 2].map(async () => {
        const manager = new SnapshotManager(store, await another(), () => undefined);
        await manager.refresh();
        manager.start(null);
        return manager;
      }),
    );
    try {
      expect(managers.map((m) => m.activeId)).toEqual([first.id, first.id]);
      // The listeners are connected once a notification sent now reaches them; give them that first.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const second = await loadSnapshot(store, storage, writeSnapshot(path.join(root, 'second'), { version: 'second', ...world(5, 'second') }));
      await vi.waitFor(() => expect(managers.map((m) => m.activeId)).toEqual([second.id, second.id]), { timeout: 2_000, interval: 20 });
      await store.rollbackSnapshot();
      await vi.waitFor(() => expect(managers.map((m) => m.activeId)).toEqual([first.id, first.id]), { timeout: 2_000, interval: 20 });
    } finally {
      for (const manager of managers) manager.stop();
    }
  });

  it("cleans up a dead loader's schema and stray schemas, never a live loader's nor another deployment's", async () => {
    const mine = await setup();
    const theirs = await setup();
    const begin = async (snapshots: TestSnapshots, id: string, loader: string) => {
      const location = snapshots.storage.locationFor(id);
      await snapshots.store.beginSnapshot({ id, version: 'v', location, createdAt: '2026-11-01T00:00:00Z', loader });
      // A partial load: the schema with its tables, as a killed `data load` leaves it.
      await (await snapshots.storage.create(location)).abort();
      return location;
    };
    await begin(mine, 'v-20261101T000000-dead', `${hostname()}:999001`);
    const live = await begin(mine, 'v-20261101T000000-1111', `${hostname()}:999002`);
    const away = await begin(mine, 'v-20261101T000000-2222', 'another-host:999003');
    const stray = mine.storage.locationFor('v-20261101T000000-abcd');
    await (await mine.storage.create(stray)).abort();
    // Another deployment on the same database (another schema for its own tables): its stray is its own.
    const theirStray = theirs.storage.locationFor('v-20261101T000000-abcd');
    await (await theirs.storage.create(theirStray)).abort();
    expect(theirStray).not.toBe(stray);

    const cleaned = await cleanAbandonedLoads(mine.store, mine.storage, { isAlive: (pid) => pid === 999002 });
    expect(cleaned).toEqual({ abandoned: ['v-20261101T000000-dead'], strayFiles: [stray] });
    expect(await mine.storage.present()).toEqual([live, away].sort());
    expect(await theirs.storage.present()).toEqual([theirStray]);
  });

  it('keeps tabs, newlines, backslashes and quotes in snapshot values as they were (COPY text escaping)', async () => {
    const { store, storage, root } = await setup();
    const home = household([{ address: '5 Tab\tStreet', zipcode: '30301' }]);
    const title = 'VP \\ Sales\t"EMEA"\nand\\nmore';
    const ann = person('esc', 'Ann', 'O\\Brien', home, { emails: ['ann.escape@example.com'], career: career({ job_title: title }) });
    const result = await loadSnapshot(store, storage, writeSnapshot(path.join(root, 'esc'), { version: 'esc', households: [home], people: [ann] }));
    const matcher = new SnapshotMatcher(await storage.open(storage.locationFor(result.id)), result.version);
    const answer = await matcher.match({ emails: ['ann.escape@example.com'] }, { career: true });
    expect(answer.household?.windfall_id).toBe(home.windfall_id);
    expect(answer.career?.job_title).toBe(title);
  });

  it("reads a building's households' rows only when asked, a duplex's ahead, and still matches the record's unit", async () => {
    const { store, storage, root } = await setup();
    const place = { city: 'Testville', state: 'LA', zipcode: '70001' };
    const flats = Array.from({ length: 6 }, (_, i) => household([{ address: `10 Tower Street Apt ${i + 1}`, ...place }]));
    const duplex = [1, 2].map((unit) => household([{ address: `20 Elm Street Apt ${unit}`, ...place }]));
    const people = [
      ...flats.map((home, i) => person(`flat-${i}`, ['Ann', 'Bea', 'Cy', 'Dee', 'Eve', 'Flo'][i] ?? 'Gus', `Tower${'abcdef'[i] ?? 'g'}`, home)),
      ...duplex.map((home, i) => person(`duplex-${i}`, 'Hal', `Elm${'ab'[i] ?? 'c'}`, home)),
    ];
    const result = await loadSnapshot(
      store,
      storage,
      writeSnapshot(path.join(root, 'building'), { version: 'building', households: [...flats, ...duplex], people }),
    );
    const location = storage.locationFor(result.id);
    const atFlat = { first_name: 'Cy', last_name: 'Towerc', addresses: [{ address: '10 Tower Street Apt 3', ...place }] };
    const keyOf = (address: string) => linkageQuery({ first_name: 'Cy', last_name: 'Towerc', addresses: [{ address, ...place }] })?.addresses[0]?.key ?? '';
    const opened = await storage.open(location);
    try {
      if (opened.kind !== 'fetched') throw new Error('a PostgreSQL snapshot is read in rounds');
      const reader = opened.requestReader();
      reader.householdsAtAddress(keyOf('10 Tower Street'));
      reader.householdsAtAddress(keyOf('20 Elm Street'));
      await reader.fetchLacking();
      const building = reader.householdsAtAddress(keyOf('10 Tower Street'));
      const pair = reader.householdsAtAddress(keyOf('20 Elm Street'));
      expect(building).toHaveLength(6);
      expect(pair).toHaveLength(2);
      // The duplex's rows came with its hits; the building's are asked for, and come in the next round.
      expect(pair.map((hit) => reader.household(hit.hh)?.windfall_id).sort()).toEqual(duplex.map((home) => home.windfall_id).sort());
      expect(reader.lacking()).toBe(false);
      expect(building.map((hit) => reader.household(hit.hh))).toEqual(building.map(() => undefined));
      expect(reader.lacking()).toBe(true);
      await reader.fetchLacking();
      expect(building.map((hit) => reader.household(hit.hh)?.windfall_id).sort()).toEqual(flats.map((home) => home.windfall_id).sort());
    } finally {
      opened.close();
    }
    const matcher = new SnapshotMatcher(await storage.open(location), result.version);
    expect((await matcher.match(atFlat, { career: false })).household?.windfall_id).toBe(flats[2]?.windfall_id);
  });

  it('sends one snapshot statement at a time: the rounds asked while it is out go in the next, together', async () => {
    const { store, storage, root, location: url } = await setup();
    const { households, people } = world(4, 'turn');
    const result = await loadSnapshot(store, storage, writeSnapshot(path.join(root, 'turn'), { version: 'turn', households, people }));
    const pool = new pg.Pool({ connectionString: url, max: 4 });
    const sent: number[] = [];
    // PostgreSQL's answer to the first statement is held back until the other rounds have been asked.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const query = pool.query.bind(pool) as (config: pg.QueryConfig) => Promise<pg.QueryResult>;
    vi.spyOn(pool, 'query').mockImplementation((async (config: pg.QueryConfig) => {
      sent.push(config.values?.[0] instanceof Array ? config.values[0].length : 0);
      const first = sent.length === 1;
      const answer = await query(config);
      if (first) await held;
      return answer;
    }) as unknown as typeof pool.query);
    try {
      const source = new PostgresSnapshotSource(pool, storage.locationFor(result.id), true);
      const readers = [0, 1, 2, 3].map(() => source.requestReader());
      const rounds: Promise<void>[] = [];
      for (const [i, reader] of readers.entries()) {
        reader.peopleByEmail(`turn${i}@example.com`);
        rounds.push(reader.fetchLacking());
        // Each in a turn of the event loop of its own, as requests arrive.
        await new Promise((resolve) => setImmediate(resolve));
      }
      expect(sent).toHaveLength(1);
      release();
      await Promise.all(rounds);
      // The first reader's statement, then one for the three that asked while it was out.
      expect(sent).toEqual([1, 3]);
      expect(readers.map((reader, i) => reader.peopleByEmail(`turn${i}@example.com`)[0]?.person_id)).toEqual(['turn-0', 'turn-1', 'turn-2', 'turn-3']);
    } finally {
      await pool.end();
    }
  });

  it('fails a lookup whose connection went silent, and answers the next over a new one', { timeout: 30_000 }, async () => {
    const { store, storage, root, location: url } = await setup();
    const { households, people } = world(2, 'mute');
    const result = await loadSnapshot(store, storage, writeSnapshot(path.join(root, 'mute'), { version: 'mute', households, people }));
    const relay = await TcpOutage.start(url);
    const through = await PostgresSnapshots.open(relay.url);
    try {
      const opened = await through.open(storage.locationFor(result.id));
      if (opened.kind !== 'fetched') throw new Error('a PostgreSQL snapshot is read in rounds');
      const warm = opened.requestReader();
      warm.peopleByEmail('mute0@example.com');
      await warm.fetchLacking();
      // The connection stays open but nothing comes back: the server's statement timeout cannot end it.
      relay.silence();
      const stuck = opened.requestReader();
      stuck.peopleByEmail('mute1@example.com');
      await expect(stuck.fetchLacking()).rejects.toThrow(/timeout/i);
      const next = opened.requestReader();
      next.peopleByEmail('mute1@example.com');
      await next.fetchLacking();
      expect(next.peopleByEmail('mute1@example.com')[0]?.person_id).toBe('mute-1');
    } finally {
      await through.close();
      await relay.close();
    }
  });
});

describe.skipIf(postgres === undefined)('a snapshot writer on PostgreSQL', () => {
  it('is aborted cleanly after a failed finish: the real error stands, nothing is given back twice, the schema can go', async () => {
    const { storage } = await setup();
    const location = storage.locationFor('v-20261101T000000-beef');
    const writer = await storage.create(location);
    writer.addHousehold({ windfallId: 'e'.repeat(32), data: '{}', postal: '30301', region: 'GA', city: 'atlanta', blocks: [] }, [
      { key: '1|oak st|30301', unit: '' },
    ]);
    // A NUL cannot be stored in a PostgreSQL text value: the meta insert fails after the COPYs committed.
    await expect(writer.finish({ id: 'a\u0000b' })).rejects.toThrow();
    await expect(writer.abort()).resolves.toBeUndefined();
    await storage.remove(location);
    expect(await storage.present()).not.toContain(location);
  });
});
