import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The CLI and server bundles the e2e tests' processes start (test/support/global-setup.ts).
    globalSetup: ['test/support/global-setup.ts'],
    // Generous: e2e tests start node processes, which on a busy 2-core machine can take seconds each.
    // These are limits against hangs, not performance targets.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // e2e suites spawn server and CLI processes; two cores keep this modest.
    maxWorkers: 2,
  },
});
