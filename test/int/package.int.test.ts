// The production artefact (docs/deploy/README.md): what `npm pack` puts in the tarball, and what an
// `npm install --omit=dev` of it installs. scripts/check-package.sh, run by .ci/run, installs and starts it.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ASSETS, BUNDLES } from '../../scripts/build.ts';
import { REPO } from '../support/processes.ts';

const manifest = JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  files: string[];
  allowScripts?: Record<string, boolean>;
};
const lock = JSON.parse(readFileSync(path.join(REPO, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { name?: string; hasInstallScript?: boolean }>;
};

/** Packages that compile or check TypeScript, or test it: never needed to run the bundle. */
const TOOLING = /^(typescript|tsx|esbuild|vitest|ts-node|@types\/.*|@swc\/.*|@esbuild\/.*)$/;

describe('the production artefact', () => {
  it('runtime dependencies hold no TypeScript tooling', () => {
    expect(Object.keys(manifest.dependencies).filter((name) => TOOLING.test(name))).toEqual([]);
  });

  it('every dependency with an install script is named in allowScripts, so npm 12 neither skips nor asks about one', () => {
    // An aliased package (better-sqlite3-n22) keeps its own name in the lock; the folder name is the alias.
    const scripted = Object.entries(lock.packages)
      .filter(([, entry]) => entry.hasInstallScript === true)
      .map(([folder, entry]) => entry.name ?? folder.slice(folder.lastIndexOf('node_modules/') + 'node_modules/'.length));
    expect(scripted.length).toBeGreaterThan(0);
    const unreviewed = [...new Set(scripted)].filter((name) => manifest.allowScripts?.[name] === undefined);
    expect(unreviewed).toEqual([]);
    expect(manifest.allowScripts?.['better-sqlite3']).toBe(true);
  });

  it('the packed tarball holds bin/, the bundles with their source maps and assets, and no TypeScript source', async () => {
    // dist/ is built by the test run's global setup; --ignore-scripts leaves out prepack's build of it.
    const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: REPO, maxBuffer: 16 * 1024 * 1024 });
    const [packed] = JSON.parse(stdout) as { files: { path: string }[] }[];
    const files = (packed?.files ?? []).map((file) => file.path);
    for (const bundle of Object.keys(BUNDLES)) expect(files).toEqual(expect.arrayContaining([`dist/${bundle}`, `dist/${bundle}.map`]));
    for (const asset of ASSETS) expect(files).toContain(`dist/assets/${path.basename(asset)}`);
    expect(files).toEqual(expect.arrayContaining(['bin/enrichbridge.js', 'bin/launch.js', 'bin/server.js', 'package.json', 'README.md']));
    expect(files.filter((file) => /\.tsx?$/.test(file))).toEqual([]);
    expect(files.filter((file) => !/^(bin|dist|docs\/deploy)\//.test(file) && !['package.json', 'README.md'].includes(file))).toEqual([]);
  });
});
