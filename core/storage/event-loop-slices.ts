// better-sqlite3 runs each statement synchronously, and Kysely hands results on through promises that
// resolve as microtasks: a worker that runs hundreds of statements in a row (claim a batch, expand a
// webhook's events, save a batch's outcomes) never gives the event loop a turn, and every request
// that arrives meanwhile waits for the whole chain (webhook acks at p99 144 ms while workers drained).
// This plugin ends such a chain's slice every SLICE_MS: after a statement, if the event loop has not
// had a turn for that long, the caller continues only after a setImmediate, so sockets are served.
// (setImmediate measured better than setTimeout(0) here; 2 ms better than 4 ms, and 1 ms a little better
// than 2 ms on 1,000 batches: bench:hubspot. A worker thread measured worse on 2 cores: docs/decisions.md.)
import { AsyncLocalStorage } from 'node:async_hooks';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';

/** The longest run of statements before the event loop gets a turn (a request waits at most about this). */
export const SLICE_MS = 1;

/** Marks background work (the pipeline's workers): only its runs of statements are sliced. */
const background = new AsyncLocalStorage<true>();

/**
 * Runs `work` as background work: its statements yield to the event loop every slice, so requests
 * are served in between. A request's own few statements never wait behind such a yield.
 */
export function runInBackground<T>(work: () => Promise<T>): Promise<T> {
  return background.run(true, work);
}

export class EventLoopSlices implements KyselyPlugin {
  private sliceStart = 0;
  /** A turn of the event loop is scheduled since the slice began: when it runs, a new slice begins. */
  private turnScheduled = false;

  constructor(private readonly sliceMs: number = SLICE_MS) {}

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return args.node;
  }

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    if (background.getStore() !== true) return args.result;
    const now = performance.now();
    if (!this.turnScheduled) {
      this.sliceStart = now;
      this.turnScheduled = true;
      setImmediate(() => {
        this.turnScheduled = false;
      });
    } else if (now - this.sliceStart > this.sliceMs) {
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    return args.result;
  }
}
