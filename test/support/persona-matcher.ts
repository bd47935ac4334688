// A production matcher answering from the sandbox personas. It stands in for the data-snapshot matcher
// (the next issue) so tests can drive production's own rules (nulls, billing, quota) through the real
// pipeline; everything else on the request path is the real code.
import type { ProductionMatch, ProductionMatcher } from '../../core/enrich/production-matcher.ts';
import type { EnrichmentRequest } from '../../core/contract/schemas.ts';
import { matchPersona } from '../../core/sandbox/matcher.ts';

export class PersonaProductionMatcher implements ProductionMatcher {
  /** Tests change it to stand for a new weekly snapshot. */
  dataVersion: string | null = 'test-personas';
  match(request: EnrichmentRequest, options: { readonly career: boolean }): Promise<ProductionMatch> {
    const persona = matchPersona(request)?.persona;
    return Promise.resolve({
      household: persona?.household ?? null,
      career: options.career ? (persona?.career ?? null) : null,
    });
  }
}
