// The HTTP adapter of the Enricher port: any endpoint that speaks the enrichRecord contract (ours,
// or the maker's production or sandbox), given its URL and token, behind the shared pacing policy.
import type { EnrichmentRequest } from '../contract/schemas.ts';
import { type Attempt, PacedEnricher, type PacingOptions, type Transport } from './enricher.ts';
import { outboundTimeouts } from './timeouts.ts';

export interface HttpEnricherOptions extends PacingOptions {
  /** The endpoint itself: `https://…/v1/` or `https://…/sandbox/v1`. */
  readonly url: string;
  readonly token: string;
  /** Per attempt, the answer's body included (default: the process's ENRICH_TIMEOUT_MS). */
  readonly timeoutMs?: number;
}

/** Seconds from a Retry-After header: a number of seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

function parseDate(value: string | null): Date | null {
  if (value === null) return null;
  const at = new Date(value);
  return Number.isNaN(at.getTime()) ? null : at;
}

export function httpTransport(url: string, token: string, timeoutMs: number): Transport {
  return async (request: EnrichmentRequest, stop?: AbortSignal): Promise<Attempt> => {
    // One signal for the request and the body read: an endpoint that answers headers and then stalls
    // times out too.
    const timeout = AbortSignal.timeout(timeoutMs);
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-wf-auth-token': token },
      body: JSON.stringify(request),
      signal: stop === undefined ? timeout : AbortSignal.any([timeout, stop]),
    });
    const text = await response.text();
    let body: unknown = null;
    try {
      body = JSON.parse(text);
    } catch {
      body = null;
    }
    return {
      status: response.status,
      body,
      retryAfterSeconds: parseRetryAfter(response.headers.get('retry-after')),
      quotaResetsAt: parseDate(response.headers.get('x-quota-reset')),
      dataVersion: response.headers.get('x-data-version'),
    };
  };
}

export class HttpEnricher extends PacedEnricher {
  constructor(options: HttpEnricherOptions) {
    const url = new URL(options.url);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`enrichment endpoint must be http(s): ${url.protocol}`);
    super({ ...options, transport: httpTransport(url.toString(), options.token, options.timeoutMs ?? outboundTimeouts().enrichMs) });
  }
}
