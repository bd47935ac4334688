// The SQLite snapshot writer on a real file: rows gathered into multi-row inserts are all written, in
// order and whole, however their count falls against a statement's rows and the writer's commits.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ROWS_PER_INSERT, SqliteSnapshotWriter } from '../../core/snapshot/storage/sqlite-snapshot.ts';
import Database from '../../core/storage/better-sqlite3.ts';
import { tempDir } from '../support/harness.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('SQLite snapshot writer', () => {
  it('writes every row gathered for a multi-row insert, a statement’s worth or not, across its commits', async () => {
    const dir = tempDir('enrichbridge-writer-');
    dirs.push(dir);
    const file = path.join(dir, 'snapshot.db');
    const writer = new SqliteSnapshotWriter(file);
    // Past one commit (20,000 records) and not a multiple of a statement's rows.
    const count = 10_000 + ROWS_PER_INSERT * 3 + 5;
    for (let i = 1; i <= count; i += 1) {
      const hh = writer.addHousehold({ windfallId: `w-${i}`, data: `{"n":${i}}`, postal: '30301', region: 'ga', city: 'atlanta', blocks: [`pn|30301|${i}`] }, [
        { key: `${i}|elm st|30301`, unit: i % 2 === 0 ? '' : `apt ${i}` },
      ]);
      writer.addPerson(
        { personId: `p-${i}`, hh, first: 'ann', last: `lee${i}`, company: '', career: i % 3 === 0 ? `{"title":"t${i}"}` : null },
        { emails: [`ann${i}@example.com`], phones: [], firstKeys: ['ann'], blocks: [], place: null },
      );
    }
    await writer.finish({ version: 'v1' });
    const db = new Database(file, { readonly: true });
    try {
      const households = db.prepare<[], { hh: number; windfall_id: string; data: string }>('SELECT hh, windfall_id, data FROM households ORDER BY hh').all();
      expect(households).toHaveLength(count);
      expect(households.every((row, i) => row.hh === i + 1 && row.windfall_id === `w-${i + 1}` && row.data === `{"n":${i + 1}}`)).toBe(true);
      const units = db.prepare<[], { hh: number; unit: string }>('SELECT hh, unit FROM addresses ORDER BY hh').all();
      expect(units.every((row) => row.unit === (row.hh % 2 === 0 ? '' : `apt ${row.hh}`))).toBe(true);
      const people = db.prepare<[], { p: number; hh: number; last: string; has_career: number }>('SELECT p, hh, last, has_career FROM people ORDER BY p').all();
      expect(people).toHaveLength(count);
      expect(
        people.every((row, i) => row.p === i + 1 && row.hh === i + 1 && row.last === `lee${i + 1}` && row.has_career === ((i + 1) % 3 === 0 ? 1 : 0)),
      ).toBe(true);
      expect(db.prepare('SELECT count(*) AS n FROM careers').get()).toEqual({ n: Math.floor(count / 3) });
      expect(db.prepare('SELECT count(*) AS n FROM emails').get()).toEqual({ n: count });
      expect(db.prepare('SELECT count(*) AS n FROM blocks').get()).toEqual({ n: count });
      expect(db.prepare("SELECT value FROM meta WHERE key = 'version'").get()).toEqual({ value: 'v1' });
    } finally {
      db.close();
    }
  });
});
