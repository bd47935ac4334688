#!/usr/bin/env node
// The `enrichbridge` command: loads the TypeScript CLI through tsx, so `npx enrichbridge …` works in
// a checkout without a build step.
import { register } from 'tsx/esm/api';

register();
await import('../server/cli/index.ts');
