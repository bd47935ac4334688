// Brings the service up from a Config: the data folder and its database, the enrichment service with
// its data snapshots, the CRM pipeline and its workers, the HTTP or HTTPS listener, and a graceful
// stop that lets in-flight requests and enrichments finish. One file per job, under runtime/:
// compose.ts (the composition root and the one list of CRM modules), storage.ts (the data folder, the
// database and the snapshots), limits.ts (what several instances share in Redis), workers.ts (the
// pipeline's workers) and listener.ts (the HTTP server).
export { crmModules, defaultConnectors, openRuntime, withRuntime, type Runtime, type RuntimePurpose } from './runtime/compose.ts';
export { openConfiguredStorage, openDataFolder, openSnapshotStorage, snapshotsDir } from './runtime/storage.ts';
export { startWorker } from './runtime/workers.ts';
export { routeContext, startServer, type RunningServer } from './runtime/listener.ts';
