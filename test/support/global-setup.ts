// Vitest's global setup: builds dist/ from the sources under test (scripts/build.ts), so every CLI
// and server process the e2e tests start runs the bundle (about half the start-up time of tsx, and
// the suite starts hundreds of them). bin/launch.js would run the sources through tsx were it stale.
import { buildBundles } from '../../scripts/build.ts';

export default async function setup(): Promise<void> {
  await buildBundles();
}
