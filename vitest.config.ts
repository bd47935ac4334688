import { defineConfig } from 'vitest/config';

// Most test files run without isolation: each worker keeps the modules it has imported from one file to
// the next instead of importing the server, the connectors and their dependencies again per file (vitest's
// summed module import time: 44-74 s with this split, 126-233 s with every file isolated, on a loaded
// 2-core machine). The files below change what a shared worker would hand to the next file, so each
// still gets a fresh worker of its own:
const ISOLATED = [
  // vi.mock('libphonenumber-js') must apply before core/normalize/phone.ts first imports it; in a shared
  // worker another file has loaded the real module already, and the call counts come out wrong.
  'test/unit/normalize-phone.test.ts',
  // Importing nock patches Node's http and https for the rest of the process (nock.cleanAll and
  // enableNetConnect leave the interceptor installed), so every file that imports it is isolated: the
  // files after it in a shared worker would make their requests through nock's interceptor.
  'test/int/hubspot-api.int.test.ts',
  'test/int/crm-oauth.int.test.ts', // also vi.stubEnv and vi.spyOn
  'test/int/hubspot-provision.int.test.ts',
  'test/int/observability.int.test.ts', // also reads counters of the process-wide metrics registry
  'test/int/salesforce-api.int.test.ts',
  'test/int/salesforce-backfill.int.test.ts', // also vi.stubEnv
  // Checks that hung calls close their connections, with the process-wide outbound timeouts
  // (core/client/timeouts.ts, which a runtime opened in-process by another file sets from its
  // configuration); it failed with a connection left open when it shared a worker.
  'test/int/outbound-timeouts.int.test.ts',
  // vi.spyOn on the harness's CRM and service, restored after each test.
  'test/int/pipeline.int.test.ts',
  // vi.stubEnv(ENRICHBRIDGE_SECRET_KEY), and counts the PostgreSQL connections and listeners a failed
  // start leaves behind, which a runtime left open by another file in the same process would add to.
  'test/int/runtime-start.int.test.ts',
  // vi.stubEnv of the secret key (and the CRM settings) that the in-process runtime reads. (The console's
  // browser tests seed their data folder through test/support/folder-runtime.ts instead, which stubs nothing.)
  'test/e2e/salesforce-backfill.e2e.test.ts',
];

// Shared by both projects (a project does not inherit the root's test options unless it `extends` the
// root config, which would also give it the root's globalSetup and run the build once more per project).
const limits = {
  // Generous: e2e tests start node processes, which on a busy 2-core machine can take seconds each.
  // These are limits against hangs, not performance targets.
  testTimeout: 60_000,
  hookTimeout: 60_000,
};

export default defineConfig({
  test: {
    // The CLI and server bundles the e2e tests' processes start (test/support/global-setup.ts). The
    // root config's global setup runs once for the whole run, before either project's files.
    globalSetup: ['test/support/global-setup.ts'],
    // e2e suites spawn server and CLI processes; two cores keep this modest. One pool for both projects.
    maxWorkers: 2,
    // Both projects run side by side (same sequence.groupOrder). Vitest queues a project's files together,
    // in the order of the projects' names: 'isolated' first, then 'shared', whose files go largest first
    // (longest first once vitest has timed them), so the long e2e files start early and the short unit files
    // finish the run.
    projects: [
      {
        test: {
          name: 'isolated',
          include: ISOLATED,
          isolate: true,
          ...limits,
        },
      },
      {
        test: {
          name: 'shared',
          include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
          exclude: ISOLATED,
          isolate: false,
          ...limits,
        },
      },
    ],
  },
});
