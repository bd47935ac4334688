// `npm run build`: bundles the CLI and the server into dist/ (esbuild), so they start without
// compiling TypeScript: `enrichbridge --help` takes about 1.2 s from the bundle against 2.5 s through
// tsx on this machine, nearly all of it tsx's loader hooks resolving and transforming some 250 files.
// Packages stay external (loaded from node_modules as they are); only our own code is bundled.
// In a checkout, bin/launch.js runs a bundle only while it is newer than every source file, otherwise
// the sources through tsx, so a checkout never needs this step and an edit is never shadowed by an old
// build; an installed package (`npm pack` runs this first) holds only the bundles.
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const ROOT = path.resolve(import.meta.dirname, '..');

/** Each bundle and the entry point it is built from (bin/ launches them by these names). */
export const BUNDLES = { 'cli.mjs': 'server/cli/index.ts', 'server.mjs': 'server/main.ts' } as const;

/**
 * Files the server reads beside its code, copied to dist/assets/: a bundle reads them there
 * (server/http/home.ts, server/http/console/assets.ts), so an installed package needs no sources.
 */
export const ASSETS = ['server/http/assets/favicon.ico', 'server/http/console/assets/console.css', 'server/http/console/assets/console.js'] as const;

export async function buildBundles(outDir = path.join(ROOT, 'dist')): Promise<void> {
  for (const name of Object.keys(BUNDLES)) rmSync(path.join(outDir, name), { force: true });
  mkdirSync(path.join(outDir, 'assets'), { recursive: true });
  for (const asset of ASSETS) copyFileSync(path.join(ROOT, asset), path.join(outDir, 'assets', path.basename(asset)));
  await build({
    absWorkingDir: ROOT,
    entryPoints: Object.entries(BUNDLES).map(([name, entry]) => ({ in: entry, out: name.replace(/\.mjs$/, '') })),
    outdir: outDir,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node20',
    // Stack traces name our source files under `node --enable-source-maps`.
    sourcemap: 'linked',
    logLevel: 'warning',
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await buildBundles();
  console.error(
    `built ${Object.keys(BUNDLES)
      .map((name) => `dist/${name}`)
      .join(' and ')}`,
  );
}
