// bin/launch.js: an installed package (no sources) runs dist/; a checkout runs dist/ only while the
// bundle is newer than every source file it was built from, otherwise the sources through tsx.
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error: bin/launch.js is plain JavaScript without declarations.
import { bundleIsFresh } from '../../bin/launch.js';
import { REPO } from '../support/processes.ts';

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A checkout's shape: one source file in each folder the bundle is built from, files and folders at `at` seconds. */
function checkout(at: number): string {
  const root = mkdtempSync(path.join(os.tmpdir(), 'enrichbridge-launch-'));
  roots.push(root);
  for (const file of ['core/a.ts', 'bridge/d.ts', 'connectors/deep/b.ts', 'server/c.ts']) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), '');
    utimesSync(path.join(root, file), at, at);
  }
  // Folders too: a folder's time counts (a file removed from it shows there only).
  for (const dir of ['core', 'bridge', 'connectors/deep', 'connectors', 'server']) utimesSync(path.join(root, dir), at, at);
  return root;
}

function bundleAt(root: string, at: number): string {
  const bundle = path.join(root, 'dist/cli.mjs');
  mkdirSync(path.dirname(bundle), { recursive: true });
  writeFileSync(bundle, '');
  utimesSync(bundle, at, at);
  return bundle;
}

describe('bin/launch.js', () => {
  it('runs the bundle when it is newer than every source file', () => {
    const root = checkout(1_000);
    expect(bundleIsFresh(root, bundleAt(root, 2_000))).toBe(true);
  });

  it('runs the sources when any source file, however deep, changed after the build', () => {
    const root = checkout(1_000);
    const bundle = bundleAt(root, 2_000);
    utimesSync(path.join(root, 'connectors/deep/b.ts'), 3_000, 3_000);
    expect(bundleIsFresh(root, bundle)).toBe(false);
  });

  it('runs the sources when a source file was removed after the build', () => {
    const root = checkout(1_000);
    mkdirSync(path.join(root, 'core/gone'));
    writeFileSync(path.join(root, 'core/gone/old.ts'), '');
    for (const item of ['core/gone/old.ts', 'core/gone', 'core']) utimesSync(path.join(root, item), 1_000, 1_000);
    const bundle = bundleAt(root, 2_000);
    rmSync(path.join(root, 'core/gone/old.ts'));
    expect(bundleIsFresh(root, bundle)).toBe(false);
  });

  it('runs the sources when nothing was built', () => {
    const root = checkout(1_000);
    expect(bundleIsFresh(root, path.join(root, 'dist/cli.mjs'))).toBe(false);
  });

  it('an installed package (no sources) runs dist/ with no tsx to be found, and names what is missing without it', async () => {
    // The package's shape in node_modules: bin/ and dist/ only, outside any checkout (so no tsx resolves).
    const root = mkdtempSync(path.join(os.tmpdir(), 'enrichbridge-installed-'));
    roots.push(root);
    mkdirSync(path.join(root, 'bin'));
    for (const file of ['launch.js', 'enrichbridge.js']) copyFileSync(path.join(REPO, 'bin', file), path.join(root, 'bin', file));
    writeFileSync(path.join(root, 'package.json'), JSON.stringify({ type: 'module' }));
    mkdirSync(path.join(root, 'dist'));
    writeFileSync(path.join(root, 'dist/cli.mjs'), "console.log('from dist', process.argv.slice(2).join(' '));\n");
    // ENRICHBRIDGE_FROM_SOURCE asks for sources that are not there: the bundle runs all the same.
    const run = () =>
      promisify(execFile)(process.execPath, [path.join(root, 'bin/enrichbridge.js'), 'tokens', 'list'], {
        cwd: root,
        env: { ...process.env, ENRICHBRIDGE_FROM_SOURCE: '1' },
      });
    expect((await run()).stdout).toBe('from dist tokens list\n');
    rmSync(path.join(root, 'dist'), { recursive: true });
    await expect(run()).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('packed without `npm run build`') });
  });

  it('runs the CLI from the sources through tsx with ENRICHBRIDGE_FROM_SOURCE=1', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [path.join(REPO, 'bin/enrichbridge.js'), '--help'], {
      cwd: REPO,
      env: { ...process.env, ENRICHBRIDGE_FROM_SOURCE: '1' },
    });
    expect(stdout).toMatch(/^Usage: enrichbridge/);
  });
});
