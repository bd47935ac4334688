// The port production matching plugs into, and the matcher in force until a data snapshot is loaded:
// it answers 503 service_unavailable, so production never invents a result and never bills for one.
import { EnrichError } from '../contract/errors.ts';
import type { Career, EnrichmentRequest, Household } from '../contract/schemas.ts';

export interface ProductionMatch {
  readonly household: Household | null;
  readonly career: Career | null;
  /** Who the answer is about, by the snapshot's ids (checked against the suppression list; never answered). */
  readonly subject?: { readonly person: string | null; readonly household: string | null };
}

export interface ProductionMatcher {
  /** Version of the snapshot answering now, or null when none is loaded. */
  readonly dataVersion: string | null;
  /** `career: false` when the account lacks Career Intelligence: career is then never matched. */
  match(request: EnrichmentRequest, options: { readonly career: boolean }): Promise<ProductionMatch>;
  /** Who these identifiers lead to, by the snapshot's ids (the suppression list's lookups); absent without a snapshot. */
  subjectsOf?(request: EnrichmentRequest): Promise<{ person: string | null; household: string | null }[]>;
}

/** The answer production gives while no snapshot is loaded. */
export function noSnapshotError(): EnrichError {
  return new EnrichError('service_unavailable', 'No household and career data snapshot is loaded yet; production matching is unavailable.');
}

export class NoSnapshotMatcher implements ProductionMatcher {
  readonly dataVersion = null;

  match(): Promise<ProductionMatch> {
    return Promise.reject(noSnapshotError());
  }
}
