// A worker's long run of statements on the shared SQLite connection must give the event loop turns,
// or every request that arrives meanwhile waits for the whole run (issue 10, item 10).
import path from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { runInBackground } from '../../core/storage/event-loop-slices.ts';
import { openStorage } from '../../bridge/storage.ts';
import { tempDir } from '../support/harness.ts';

describe('the database connection shares the event loop', () => {
  it("gives the event loop a turn during a worker's long run of statements, so a waiting callback runs before the run ends", async () => {
    const { db, store } = await openStorage(path.join(tempDir(), 'slices.db'));
    let turns = 0;
    let running = true;
    const tick = () => {
      turns += 1;
      if (running) setImmediate(tick);
    };
    let turnsDuringRun = 0;
    // Started from a timer, as a request's I/O would be: the run is a chain of awaited statements that,
    // without slicing, resolve as microtasks one after another and never let `tick` run.
    await new Promise<void>((resolve, reject) => {
      setTimeout(() => {
        const run = async () => {
          const before = turns;
          setImmediate(tick);
          for (let i = 0; i < 3000; i += 1) await sql`SELECT ${i} AS n`.execute(db);
          turnsDuringRun = turns - before;
          running = false;
        };
        runInBackground(run).then(resolve, reject);
      }, 0);
    });
    expect(turnsDuringRun).toBeGreaterThan(0);
    await store.close();
  });
});
