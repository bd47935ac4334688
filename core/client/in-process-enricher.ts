// The in-process adapter of the Enricher port, the embedded default: the same enrichRecord pipeline
// (token, limits, quota, entitlements) without a network hop, behind the same pacing policy.
import type { Environment } from '../accounts/model.ts';
import { ERROR_STATUS, errorBody } from '../contract/errors.ts';
import type { EnrichmentRequest } from '../contract/schemas.ts';
import type { EnrichService } from '../enrich/service.ts';
import { type Attempt, PacedEnricher, type PacingOptions, type Transport } from './enricher.ts';

export interface InProcessEnricherOptions extends PacingOptions {
  readonly service: EnrichService;
  readonly token: string;
  readonly environment: Environment;
  /** The service's clock (tests move it past a quota reset). */
  readonly now?: () => Date;
}

export function inProcessTransport(service: EnrichService, token: string, environment: Environment, now?: () => Date): Transport {
  return async (request: EnrichmentRequest): Promise<Attempt> => {
    const result = await service.enrichRecord({ environment, token, readBody: () => request, ...(now === undefined ? {} : { now: now() }) });
    const common = {
      quotaResetsAt: result.quota?.resetsAt ?? null,
      dataVersion: result.dataVersion ?? null,
    };
    if (result.ok) return { status: 200, body: result.response, retryAfterSeconds: null, ...common };
    return {
      status: ERROR_STATUS[result.error.code],
      body: errorBody(environment, result.error),
      retryAfterSeconds: result.error.code === 'rate_limit' ? Math.max(1, result.rate?.retryAfterSeconds ?? 1) : null,
      ...common,
    };
  };
}

export class InProcessEnricher extends PacedEnricher {
  private readonly service: EnrichService;
  private readonly environment: Environment;

  constructor(options: InProcessEnricherOptions) {
    super({ ...options, transport: inProcessTransport(options.service, options.token, options.environment, options.now) });
    this.service = options.service;
    this.environment = options.environment;
  }

  /** Production's active snapshot version; the sandbox reports none. */
  currentDataVersion(): string | null {
    return this.environment === 'production' ? this.service.productionMatcher.dataVersion : null;
  }
}
