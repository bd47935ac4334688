// What a CLI command loads before it runs: every command is a process start, so the bundle must not load
// at start what only some commands or the server use. jsforce (about 0.4 s of CPU to load) is loaded
// when a Salesforce call is first made, ioredis only when REDIS_URL is set, and express and the HTTP
// layer not at all (the server's bundle has them).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from '../support/processes.ts';

/** The packages the bundle imports statically (at start), by name. */
function loadedAtStart(bundle: string): Set<string> {
  const text = readFileSync(path.join(REPO, 'dist', bundle), 'utf8');
  return new Set([...text.matchAll(/^import .* from "([^".][^"]*)";$/gm)].map((match) => match[1] ?? ''));
}

describe('the CLI bundle (dist/cli.mjs, built by the test run)', () => {
  it('loads neither jsforce, ioredis nor express when a command starts', () => {
    const start = loadedAtStart('cli.mjs');
    expect(start.has('commander')).toBe(true);
    for (const heavy of ['jsforce', 'ioredis', 'express']) expect(start.has(heavy), heavy).toBe(false);
  });

  it('the server bundle loads express at start, and jsforce only when Salesforce is first called', () => {
    const start = loadedAtStart('server.mjs');
    expect(start.has('express')).toBe(true);
    expect(start.has('jsforce')).toBe(false);
  });
});
