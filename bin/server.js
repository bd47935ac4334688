#!/usr/bin/env node
// The server (`npm start`): from dist/server.mjs after `npm run build`, or from the TypeScript
// sources through tsx (bin/launch.js says which).
import { launch } from './launch.js';

await launch('server.mjs', 'server/main.ts');
