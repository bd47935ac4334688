// How long each kind of outbound call may take before it is given up: one setting per kind for the
// whole process, set once at start from the configuration (server/config.ts) and read where the calls
// are made. A call that never answers must not hold a worker, its lease or a shutdown forever.

export interface OutboundTimeouts {
  /** One HubSpot API call, the answer's body included. */
  readonly hubspotMs: number;
  /** One Salesforce REST call (jsforce's own default is 30 minutes). */
  readonly salesforceMs: number;
  /** One OAuth token request to HubSpot or Salesforce: code exchange, refresh, JWT bearer. */
  readonly tokenMs: number;
  /** One attempt at a remote enrichment endpoint. */
  readonly enrichMs: number;
}

export const DEFAULT_OUTBOUND_TIMEOUTS: OutboundTimeouts = { hubspotMs: 30_000, salesforceMs: 120_000, tokenMs: 15_000, enrichMs: 10_000 };

let current: OutboundTimeouts = DEFAULT_OUTBOUND_TIMEOUTS;

export function setOutboundTimeouts(timeouts: Partial<OutboundTimeouts>): void {
  current = { ...current, ...timeouts };
}

export function outboundTimeouts(): OutboundTimeouts {
  return current;
}

/** `promise`, or a rejection with the signal's reason as soon as `signal` aborts (the work itself is the caller's to stop). */
export function abortable<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) {
    // Given up before it is awaited: its own failure, later, must not be an unhandled rejection.
    promise.catch(() => undefined);
    return Promise.reject(signal.reason as Error);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error as Error);
      },
    );
  });
}

/** True for the error a fetch (or our own abort) gives when a timeout signal fired. */
export function isTimeout(error: unknown): boolean {
  return error instanceof Error && error.name === 'TimeoutError';
}
