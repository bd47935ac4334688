#!/usr/bin/env node
// The `enrichbridge` command: the CLI from dist/cli.mjs after `npm run build`, or from the TypeScript
// sources through tsx (bin/launch.js says which), so `npx enrichbridge …` works in a checkout as is.
import { launch } from './launch.js';

await launch('cli.mjs', 'server/cli/index.ts');
