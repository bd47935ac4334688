// Outbound pacing: how fast this process calls an enrichment endpoint per token and a CRM per account.
// In process, a Bottleneck limiter per key spaces the calls (and caps how many run at once); with
// REDIS_URL, each call also waits for its turn in a spacing every instance and every `enrichbridge
// worker` shares (redis-spacing.ts), so two processes with one token still make 5 calls a second, not 10.
import type Bottleneck from 'bottleneck';

/** Spacing shared across processes: each call reserves the next slot of its key and waits for it. */
export interface SharedSpacing {
  /** Waits until a slot `minTimeMs` after the last one any process reserved for `key`. */
  wait(key: string, minTimeMs: number): Promise<void>;
}

let shared: SharedSpacing | null = null;

/** The process's shared spacing (set once by the composition root when REDIS_URL is given; null: in process only). */
export function shareSpacing(spacing: SharedSpacing | null): void {
  shared = spacing;
}

export interface Pacer {
  schedule<T>(task: () => Promise<T>): Promise<T>;
}

/**
 * The calls of one key: through this process's limiter (its concurrency and spacing), each also waiting
 * for its shared turn when spacing is shared.
 */
export function pacer(limiter: Bottleneck, key: string, minTimeMs: number): Pacer {
  return {
    schedule: <T>(task: () => Promise<T>) =>
      limiter.schedule(async () => {
        if (shared !== null) await shared.wait(key, minTimeMs);
        return task();
      }),
  };
}
