// The account and token records of the enrichment service: what an account is entitled to, what a
// token is tied to. Plain data shared by the storage port, the CLI and the request pipeline.
import type { CareerField, HouseholdField } from '../contract/schemas.ts';

export const ENVIRONMENTS = ['sandbox', 'production'] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

export const QUOTA_PERIODS = ['day', 'week', 'month', 'year', 'none'] as const;
export type QuotaPeriod = (typeof QUOTA_PERIODS)[number];

/** `'all'`, or the explicit list of fields the account's purchase order grants. */
export type FieldEntitlement<F extends string> = 'all' | readonly F[];

export interface NewAccount {
  readonly name: string;
  readonly careerIntelligence: boolean;
  /**
   * Political data (a special category): household political_donor, top_political_donor and
   * political_party are answered only when this is on, whatever `householdFields` lists.
   */
  readonly politicalData: boolean;
  readonly householdFields: FieldEntitlement<HouseholdField>;
  readonly careerFields: FieldEntitlement<CareerField>;
  /** Requests per second per token. */
  readonly rateLimit: number;
  /** Usage tokens each production token of the account gets per quota period. */
  readonly quotaLimit: number;
  readonly quotaPeriod: QuotaPeriod;
}

export interface Account extends NewAccount {
  readonly id: string;
  readonly createdAt: string;
}

export interface TokenRecord {
  /** Public identifier (`tok_…`), safe to show and log; the token itself is never stored. */
  readonly id: string;
  readonly accountId: string;
  readonly environment: Environment;
  readonly createdAt: string;
  readonly revokedAt: string | null;
}

export const ACCOUNT_DEFAULTS = {
  rateLimit: 5,
  quotaLimit: 1000,
  quotaPeriod: 'month',
} as const satisfies Partial<NewAccount>;
