// `enrichbridge jobs` as an operator runs it against the data folder: listing dead letters and
// putting them back in the queue.
import { describe, expect, it } from 'vitest';
import { openDataFolder } from '../../server/runtime.ts';
import { tempDir } from '../support/harness.ts';
import { cli } from '../support/processes.ts';

describe('jobs CLI', () => {
  it('lists dead jobs with their last error, and retries one by id', async () => {
    const dataDir = tempDir();
    // The data folder and its database made in-process, as any command's first run makes them.
    const { store, queue } = await openDataFolder(dataDir);
    const { id } = await queue.enqueue({ installationId: 'inst_1', kind: 'enrich', payload: { recordId: '42' } });
    await queue.enqueue({ installationId: 'inst_1', kind: 'enrich', payload: { recordId: '43' } });
    await queue.claimBatch({ workerId: 'w', limit: 1, leaseMs: 60_000 });
    await queue.fail(id, 'w', 'HTTP 401 from the enrichment endpoint', { retryable: false });
    await store.close();

    const dead = await cli(['jobs', 'list', '--state', 'dead'], { DATA_DIR: dataDir });
    expect(dead.stdout.trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`^${id}  dead .* last error: HTTP 401 from the enrichment endpoint$`))]);
    expect((await cli(['jobs', 'retry', id], { DATA_DIR: dataDir })).stdout).toBe('1 job back in the queue\n');
    // What follows changes nothing (the second retry is refused): side by side.
    const [deadNow, listed, cut, uncut] = await Promise.all([
      cli(['jobs', 'list', '--state', 'dead'], { DATA_DIR: dataDir }),
      cli(['jobs', 'list', '--json'], { DATA_DIR: dataDir }),
      cli(['jobs', 'list', '--limit', '1'], { DATA_DIR: dataDir }),
      cli(['jobs', 'list', '--limit', '2'], { DATA_DIR: dataDir }),
      expect(cli(['jobs', 'retry', id], { DATA_DIR: dataDir })).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('no dead job') }),
    ]);
    expect(deadNow.stdout).toBe('no dead jobs\n');
    const all = JSON.parse(listed.stdout);
    expect(all).toHaveLength(2);
    // A cut list says so, on stderr, so a long queue is never mistaken for a short one.
    expect(cut.stdout.trim().split('\n')).toHaveLength(1);
    expect(cut.stderr).toContain('showing the oldest 1; there are more');
    expect(uncut.stderr).not.toContain('there are more');
  });
});
