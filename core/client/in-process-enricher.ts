// The in-process adapter of the Enricher port, the embedded default: the same enrichRecord pipeline
// (token, limits, quota, entitlements) without a network hop, behind the same pacing policy.
import type { Environment } from '../accounts/model.ts';
import { ERROR_STATUS, errorBody } from '../contract/errors.ts';
import type { EnrichmentRequest } from '../contract/schemas.ts';
import type { EnrichService } from '../enrich/service.ts';
import { type Attempt, type Enricher, type EnrichOutcome, PacedEnricher, type RetryPolicy, type Transport } from './enricher.ts';

export interface InProcessEnricherOptions {
  readonly service: EnrichService;
  readonly token: string;
  readonly environment: Environment;
  readonly ratePerSecond?: number;
  readonly retry?: RetryPolicy;
  readonly sleep?: (ms: number) => Promise<void>;
}

export function inProcessTransport(service: EnrichService, token: string, environment: Environment): Transport {
  return async (request: EnrichmentRequest): Promise<Attempt> => {
    const result = await service.enrichRecord({ environment, token, readBody: () => request });
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

export class InProcessEnricher implements Enricher {
  private readonly paced: PacedEnricher;

  constructor(options: InProcessEnricherOptions) {
    this.paced = new PacedEnricher({
      transport: inProcessTransport(options.service, options.token, options.environment),
      token: options.token,
      ...(options.ratePerSecond === undefined ? {} : { ratePerSecond: options.ratePerSecond }),
      ...(options.retry === undefined ? {} : { retry: options.retry }),
      ...(options.sleep === undefined ? {} : { sleep: options.sleep }),
    });
  }

  enrich(request: EnrichmentRequest): Promise<EnrichOutcome> {
    return this.paced.enrich(request);
  }
}
