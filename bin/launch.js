// How bin/enrichbridge.js and bin/server.js start. An installed package (`npm pack`, then `npm install
// --omit=dev`) holds no sources: it runs dist/, which `npm pack` builds (prepack), with no compiler at
// all. A checkout runs the bundle `npm run build` wrote to dist/ while it is newer than every file of
// core/, bridge/, connectors/ and server/ (it was built from them), else the TypeScript sources through
// tsx, a development dependency: a checkout runs without a build step, and an edit made after a build
// is never shadowed by it. ENRICHBRIDGE_FROM_SOURCE=1 always runs the sources.
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = path.resolve(import.meta.dirname, '..');
const SOURCE_DIRS = ['core', 'bridge', 'connectors', 'server'];

/**
 * The newest modification time under `dir`, its folders' own included: a folder's changes when a
 * file in it is added, removed or renamed, which no remaining file's time shows.
 */
function newestUnder(dir) {
  let newest = statSync(dir).mtimeMs;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestUnder(file) : statSync(file).mtimeMs);
  }
  return newest;
}

/** Whether `bundle` exists and is at least as new as every source file under `root`. */
export function bundleIsFresh(root, bundle) {
  let built;
  try {
    built = statSync(bundle).mtimeMs;
  } catch {
    return false;
  }
  return SOURCE_DIRS.every((dir) => newestUnder(path.join(root, dir)) <= built);
}

/** Whether `root` is a checkout (its TypeScript sources are there), not an installed package. */
export function hasSources(root) {
  return existsSync(path.join(root, 'server', 'main.ts'));
}

/** Runs the entry point: `dist/<bundle>` when installed or fresh, else `<source>` through tsx. */
export async function launch(bundle, source) {
  const bundled = path.join(ROOT, 'dist', bundle);
  if (!hasSources(ROOT)) {
    if (!existsSync(bundled)) {
      console.error(`enrichbridge: this package holds neither its sources nor dist/${bundle}: it was packed without \`npm run build\``);
      process.exit(1);
    }
    await import(pathToFileURL(bundled).href);
    return;
  }
  if (process.env.ENRICHBRIDGE_FROM_SOURCE !== '1' && bundleIsFresh(ROOT, bundled)) {
    await import(pathToFileURL(bundled).href);
    return;
  }
  let register;
  try {
    ({ register } = await import('tsx/esm/api'));
  } catch {
    console.error('enrichbridge: running the TypeScript sources needs tsx (a development dependency): run `npm install`, or `npm run build` to run dist/');
    process.exit(1);
  }
  register();
  await import(pathToFileURL(path.join(ROOT, source)).href);
}
