// SQLite's write-ahead log is copied back into the database file by a checkpoint. By default the
// commit that takes the log past 1,000 pages (4 MB) runs one, inside the statement: on a server's
// event loop that is a 4 MB write and a flush to disk, about 25 ms on the machine of
// docs/benchmarks.md, and every request in flight waits for it (a 100-event webhook batch is a 25 KB
// row, so one acknowledgement in 160 paid it for nine others). A server's connections leave the
// checkpoints to a thread of their own instead, which copies the log in PASSIVE mode (never waiting
// for a writer, never making one wait) a few times a second. The writers keep a larger limit of their
// own as a fallback: a thread that falls behind or stops leaves a bounded log, never an endless one.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { BETTER_SQLITE3_PACKAGE } from './better-sqlite3.ts';

/** How often the thread checkpoints; one with nothing to copy costs a few microseconds of the thread's time. */
export const CHECKPOINT_EVERY_MS = 100;

/**
 * The log, in pages, past which a writing connection checkpoints in its own commit all the same (the
 * default is 1,000): only when the thread falls behind, as a commit rarely finds the log that long.
 */
export const WRITER_CHECKPOINT_PAGES = 8_000;

/** What the log's file is cut back to when it starts over after a checkpoint (it never shrinks by default). */
export const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

/** At most one report of a failing checkpoint a minute: a full disk fails every 100 ms. */
const ERROR_REPORT_EVERY_MS = 60_000;

// The thread's code, CommonJS run from a string: the same in the bundle and the sources, and given the
// path of the better-sqlite3 package this Node.js line loads.
const THREAD = `
const { workerData, parentPort } = require('node:worker_threads');
const Database = require(workerData.module);
const reason = (error) => (error instanceof Error || (typeof error === 'object' && error !== null && 'message' in error) ? String(error.message) : String(error));
let reported = 0;
const report = (error) => {
  if (Date.now() - reported < workerData.reportEveryMs) return;
  reported = Date.now();
  parentPort.postMessage({ error: reason(error) });
};
let db = null;
try {
  db = new Database(workerData.file, { fileMustExist: true });
} catch (error) {
  report(error);
}
const timer = db === null ? null : setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (error) {
    report(error);
  }
}, workerData.everyMs);
parentPort.once('message', () => {
  if (timer !== null) clearInterval(timer);
  db?.close();
  parentPort.close();
});
`;

export interface CheckpointThreadOptions {
  /** A checkpoint failed (at most once a minute): the writers' fallback still bounds the log. */
  readonly onError?: (message: string) => void;
  readonly everyMs?: number;
}

/** The thread that checkpoints one SQLite file's log while the process serves; stop() before the connections close. */
export class CheckpointThread {
  private readonly exited: Promise<void>;

  private constructor(private readonly worker: Worker) {
    this.exited = new Promise((resolve) => worker.once('exit', () => resolve()));
  }

  static start(file: string, options: CheckpointThreadOptions = {}): CheckpointThread {
    const worker = new Worker(THREAD, {
      eval: true,
      workerData: {
        module: createRequire(import.meta.url).resolve(BETTER_SQLITE3_PACKAGE),
        file,
        everyMs: options.everyMs ?? CHECKPOINT_EVERY_MS,
        reportEveryMs: ERROR_REPORT_EVERY_MS,
      },
      // Only the thread's own checkpoints: it needs no more than a small heap.
      resourceLimits: { maxOldGenerationSizeMb: 32 },
    });
    const { onError } = options;
    worker.on('message', (message: unknown) => {
      if (typeof message === 'object' && message !== null && 'error' in message && onError !== undefined) onError(String(message.error));
    });
    worker.on('error', (error: unknown) => onError?.(error instanceof Error ? error.message : String(error)));
    // A process that forgets to stop it still exits; the writers' fallback keeps the log bounded meanwhile.
    worker.unref();
    return new CheckpointThread(worker);
  }

  /** Ends the thread once its current checkpoint, if any, is done. */
  async stop(): Promise<void> {
    // Held while it stops: an unreferenced thread's exit is no reason to wait, and a process with
    // nothing else left would end here, before the rest of its shutdown.
    this.worker.ref();
    this.worker.postMessage('stop');
    await this.exited;
  }
}
