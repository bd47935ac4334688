// `data load` on real files into a real registry: plain and gzipped snapshots, bad lines reported with
// file and line, the 0.1% refusal that leaves the active snapshot untouched, retention and rollback;
// each on SQLite snapshot files and, when the run has PostgreSQL, on snapshot schemas.
import { createWriteStream, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { KEPT_SNAPSHOTS, MAX_LINE_BYTES, SnapshotLoadError, cleanAbandonedLoads, loadSnapshot } from '../../core/snapshot/storage/loader.ts';
import { TEST_DATABASES, type TestDatabase } from '../support/databases.ts';
import { openTestSnapshots } from '../support/snapshot-storage.ts';
import { openSqliteStore } from '../../core/storage/sqlite.ts';
import { tempDir } from '../support/harness.ts';
import { household, person, writeSnapshot } from '../support/snapshot-fixture.ts';

function world(size: number) {
  const households = Array.from({ length: size }, (_, i) => household([{ address: `${i + 1} Elm Street`, zipcode: '30301' }]));
  const people = households.map((h, i) => person(`p-${i}`, 'Ann', `Lee${i}`, h, { emails: [`ann${i}@example.com`] }));
  return { households, people };
}

for (const database of TEST_DATABASES) describeLoads(database);

function describeLoads(database: TestDatabase): void {
  const setup = () => openTestSnapshots(database);

  describe(`data load into ${database.name}`, () => {
    it('loads a snapshot, plain or gzipped, and makes it active with its counts', async () => {
      const { root, store, storage, close } = await setup();
      for (const gzip of [false, true]) {
        const source = writeSnapshot(path.join(root, `src-${gzip}`), { version: `v-${gzip}`, ...world(50), gzip });
        const result = await loadSnapshot(store, storage, source);
        expect(result).toMatchObject({ version: `v-${gzip}`, households: 50, people: 50, skippedLines: 0 });
        expect(await store.activeSnapshot()).toMatchObject({ id: result.id, state: 'ready', households: 50, people: 50, active: true });
        expect(await storage.present()).toContain(storage.locationFor(result.id));
      }
      await close();
    });

    it('skips and reports bad lines with their file and line number when they are at most 0.1%', async () => {
      const { root, store, storage, close } = await setup();
      const { households, people } = world(1500);
      const source = writeSnapshot(path.join(root, 'src'), {
        version: 'few-bad',
        households,
        people,
        extraPeopleLines: [
          '{"person_id": 42}',
          'not json at all',
          JSON.stringify(person('orphan', 'A', 'B', household([{ address: '1 X St', zipcode: '30301' }]))),
        ],
      });
      const result = await loadSnapshot(store, storage, source);
      expect(result.skippedLines).toBe(3);
      expect(result.people).toBe(1500);
      expect(result.badLines).toEqual([
        'people.jsonl:1501: person_id: Invalid input: expected string, received number',
        'people.jsonl:1502: not valid JSON',
        expect.stringMatching(/^people\.jsonl:1503: windfall_id \w+ names no household of this snapshot$/),
      ]);
      await close();
    });

    it('refuses a snapshot with more than 0.1% bad lines whole, leaving the active one and no file behind', async () => {
      const { root, store, storage, close } = await setup();
      const good = await loadSnapshot(store, storage, writeSnapshot(path.join(root, 'good'), { version: 'good', ...world(20) }));
      const { households, people } = world(100);
      const bad = writeSnapshot(path.join(root, 'bad'), {
        version: 'bad',
        households,
        people,
        extraHouseholdLines: [JSON.stringify({ ...households[0], windfall_id: households[0]?.windfall_id }), '{"windfall_id": "nope"}'],
      });
      const error = await loadSnapshot(store, storage, bad).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SnapshotLoadError);
      expect(error instanceof SnapshotLoadError ? error.badLines : []).toEqual([
        expect.stringMatching(/^households\.jsonl:101: windfall_id \w+ appears twice$/),
        expect.stringMatching(/^households\.jsonl:102: windfall_id: /),
      ]);
      expect((await store.activeSnapshot())?.id).toBe(good.id);
      expect(await storage.present()).toEqual([storage.locationFor(good.id)]);
      expect((await store.listSnapshots()).find((s) => s.version === 'bad')).toMatchObject({ state: 'failed' });
      await close();
    });

    it('reads a byte-order mark and a date-only created_at as the data team may send them', async () => {
      const { root, store, storage, close } = await setup();
      const source = writeSnapshot(path.join(root, 'bom'), { version: 'bom', ...world(10) });
      writeFileSync(path.join(source, 'manifest.json'), '\uFEFF{"version": "bom", "created_at": "2026-11-16"}');
      const households = readFileSync(path.join(source, 'households.jsonl'), 'utf8');
      writeFileSync(path.join(source, 'households.jsonl'), `\uFEFF${households}`);
      expect(await loadSnapshot(store, storage, source)).toMatchObject({ households: 10, people: 10, skippedLines: 0 });
      await close();
    });

    it('refuses a corrupt gzip naming the file, and a snapshot without people', async () => {
      const { root, store, storage, close } = await setup();
      const corrupt = writeSnapshot(path.join(root, 'corrupt'), { version: 'corrupt', ...world(10), gzip: true });
      const gz = readFileSync(path.join(corrupt, 'people.jsonl.gz'));
      writeFileSync(path.join(corrupt, 'people.jsonl.gz'), gz.subarray(0, gz.length - 12));
      await expect(loadSnapshot(store, storage, corrupt)).rejects.toThrow(/^people\.jsonl\.gz: cannot be read after line \d+/);
      const { households } = world(5);
      const empty = writeSnapshot(path.join(root, 'empty'), { version: 'empty', households, people: [] });
      await expect(loadSnapshot(store, storage, empty)).rejects.toThrow(/5 valid households and 0 valid people/);
      expect(await store.activeSnapshot()).toBeUndefined();
      await close();
    });

    it('keeps what rollback can return to: after rolling back twice and loading again, rollback reaches the snapshot rolled back to', async () => {
      const { root, store, storage, close } = await setup();
      for (let i = 1; i <= 4; i += 1) await loadSnapshot(store, storage, writeSnapshot(path.join(root, `r${i}`), { version: `r${i}`, ...world(5) }));
      await store.rollbackSnapshot();
      expect((await store.rollbackSnapshot())?.version).toBe('r2');
      await loadSnapshot(store, storage, writeSnapshot(path.join(root, 'r5'), { version: 'r5', ...world(5) }));
      expect((await store.rollbackSnapshot())?.version).toBe('r2');
      const active = await store.activeSnapshot();
      expect(await storage.present()).toContain(active?.location);
      await close();
    });

    it('stops an interrupted load, leaving the active snapshot and no file behind', async () => {
      const { root, store, storage, close } = await setup();
      const good = await loadSnapshot(store, storage, writeSnapshot(path.join(root, 'kept'), { version: 'kept', ...world(10) }));
      const abort = new AbortController();
      const load = loadSnapshot(store, storage, writeSnapshot(path.join(root, 'cut'), { version: 'cut', ...world(3000) }), {
        signal: abort.signal,
        onProgress: () => abort.abort(),
      });
      await expect(load).rejects.toThrow('the load was interrupted');
      expect((await store.activeSnapshot())?.id).toBe(good.id);
      expect(await storage.present()).toEqual([storage.locationFor(good.id)]);
      await close();
    });

    it('refuses a folder without a manifest or data files, naming what is missing', async () => {
      const { root, store, storage, close } = await setup();
      await expect(loadSnapshot(store, storage, path.join(root, 'nowhere'))).rejects.toThrow(/manifest\.json/);
      await close();
    });

    it('rolls back to the previous snapshot, and keeps only the newest few', async () => {
      const { root, store, storage, close } = await setup();
      const ids: string[] = [];
      for (let i = 1; i <= 5; i += 1) {
        ids.push((await loadSnapshot(store, storage, writeSnapshot(path.join(root, `s${i}`), { version: `s${i}`, ...world(5) }))).id);
      }
      const kept = (await store.listSnapshots()).map((s) => s.version);
      expect(kept).toHaveLength(1 + KEPT_SNAPSHOTS);
      expect(kept).toEqual(['s5', 's4', 's3']);
      expect(await storage.present()).toHaveLength(1 + KEPT_SNAPSHOTS);
      expect((await store.rollbackSnapshot())?.version).toBe('s4');
      expect((await store.activeSnapshot())?.version).toBe('s4');
      expect((await store.rollbackSnapshot())?.version).toBe('s3');
      expect(await store.rollbackSnapshot()).toBeUndefined();
      expect((await store.activeSnapshot())?.version).toBe('s3');
      await close();
    });
  });

  describe(`data load into ${database.name}: a huge line`, () => {
    it('refuses a line longer than the cap with its file and line number, leaving the active snapshot and no file behind', async () => {
      const { root, store, storage, close } = await setup();
      const active = await loadSnapshot(store, storage, writeSnapshot(path.join(root, 'ok'), { version: 'ok', ...world(20) }));
      const source = writeSnapshot(path.join(root, 'long'), { version: 'long', ...world(20) });
      const file = path.join(source, 'households.jsonl');
      const lines = readFileSync(file, 'utf8').split('\n');
      lines.splice(2, 0, JSON.stringify({ windfall_id: 'x', note: 'y'.repeat(5000) }));
      writeFileSync(file, lines.join('\n'));
      await expect(loadSnapshot(store, storage, source, { maxLineBytes: 4096 })).rejects.toThrow(/households\.jsonl: line 3 is longer than 4,096 bytes/);
      expect((await store.activeSnapshot())?.id).toBe(active.id);
      expect(await storage.present()).toEqual([storage.locationFor(active.id)]);
      await close();
    });

    it('refuses a real line of tens of megabytes with no newline under the default cap', async () => {
      const { root, store, storage, close } = await setup();
      const source = writeSnapshot(path.join(root, 'blob'), { version: 'blob', ...world(5) });
      const file = path.join(source, 'people.jsonl');
      const out = createWriteStream(file, { flags: 'a' });
      const block = Buffer.alloc(1 << 20, 0x61);
      for (let i = 0; i < 40; i += 1) out.write(block); // 40 MiB, no newline: a binary blob or a lost line ending
      await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
      const lineOfBlob = readFileSync(file, 'utf8').split('\n').length;
      const error = await loadSnapshot(store, storage, source).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SnapshotLoadError);
      expect((error as Error).message).toBe(
        `people.jsonl: line ${lineOfBlob} is longer than ${MAX_LINE_BYTES.toLocaleString('en-US')} bytes: snapshot refused`,
      );
      await close();
    });
  });
}

describe('data load: a killed loader on SQLite', () => {
  it("cleans up a dead loader's entry and partial file, and stray snapshot files, but never a live loader's", async () => {
    const root = tempDir();
    const { store } = await openSqliteStore(path.join(root, 'state.db'));
    const dir = path.join(root, 'snapshots');
    const begin = async (id: string, loader: string) => {
      await store.beginSnapshot({ id, version: 'v', location: `${id}.db`, createdAt: '2026-11-01T00:00:00Z', loader });
      writeFileSync(path.join(dir, `${id}.db`), 'partial');
    };
    mkdirSync(dir);
    await begin('v-20261101T000000-dead', `${hostname()}:999001`);
    await begin('v-20261101T000000-live', `${hostname()}:999002`);
    await begin('v-20261101T000000-away', 'another-host:999003');
    writeFileSync(path.join(dir, 'v-20261101T000000-abcd.db'), 'stray');
    writeFileSync(path.join(dir, 'notes.db'), 'not ours');
    const cleaned = await cleanAbandonedLoads(store, dir, { isAlive: (pid) => pid === 999002 });
    expect(cleaned).toEqual({ abandoned: ['v-20261101T000000-dead'], strayFiles: ['v-20261101T000000-abcd.db'] });
    const states = Object.fromEntries((await store.listSnapshots()).map((s) => [s.id, s.state]));
    expect(states).toEqual({ 'v-20261101T000000-dead': 'failed', 'v-20261101T000000-live': 'loading', 'v-20261101T000000-away': 'loading' });
    expect(readdirSync(dir).sort()).toEqual(['notes.db', 'v-20261101T000000-away.db', 'v-20261101T000000-live.db']);
    await store.close();
  });
});
