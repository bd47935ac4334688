// What the pipeline works with: installations and their settings, the per-record state, and the
// enrichment log's entries. Plain data; bridge/store.ts keeps them.
import { z } from 'zod';
import { ENVIRONMENTS, type Environment } from '../core/accounts/model.ts';

export const OVERWRITE_MODES = ['fill_empty', 'tracked', 'always'] as const;
export type OverwriteMode = (typeof OVERWRITE_MODES)[number];

export const INSTALLATION_STATUSES = ['active', 'paused', 'disabled'] as const;
export type InstallationStatus = (typeof INSTALLATION_STATUSES)[number];

/**
 * Why an installation stopped sending. `admin`: an operator paused it, jobs are skipped until resumed.
 * `quota` and `crm_limit`: a limit ran out, jobs wait (deferred, not dropped) until `pausedUntil`.
 */
export const PAUSE_REASONS = ['admin', 'quota', 'crm_limit', 'budget'] as const;
export type PauseReason = (typeof PAUSE_REASONS)[number];

export const DEFAULT_REENRICH_AFTER_DAYS = 30;

/**
 * Fields that reveal political opinions, special-category data in the EU (GDPR art. 9): a new
 * installation starts with them excluded, and an admin turns them on explicitly. Installations made
 * before this rule keep the settings they have.
 */
export const SPECIAL_CATEGORY_FIELDS = ['household.political_party', 'household.political_donor', 'household.top_political_donor'] as const;

/** Where household fields are written (InstallationSettings.householdFieldsOn). */
export const HOUSEHOLD_PLACEMENTS = ['record', 'household', 'both'] as const;
export const HouseholdPlacementSchema = z.enum(HOUSEHOLD_PLACEMENTS);
export type HouseholdPlacement = z.infer<typeof HouseholdPlacementSchema>;

/** How each placement reads to an admin or operator (the CLI and the console). */
export const HOUSEHOLD_PLACEMENT_TEXT: Readonly<Record<HouseholdPlacement, string>> = {
  record: "on the person's record (the default)",
  household: 'on their household record only (an NPSP household Account)',
  both: "on the person's record and on their household record (an NPSP household Account)",
};

/** The settings a CRM admin or operator can change; every one has a default. */
export const InstallationSettingsSchema = z
  .object({
    /** Enqueue enrichment when the CRM reports a new record. */
    enrichOnCreate: z.boolean().default(true),
    /** fill_empty: only empty properties. tracked: empty, or still what we last wrote. always: every time. */
    overwriteMode: z.enum(OVERWRITE_MODES).default('tracked'),
    /** A record enriched this recently with the same normalized input is skipped. */
    reenrichAfterDays: z.number().int().min(0).max(3650).default(DEFAULT_REENRICH_AFTER_DAYS),
    /** Household or career data below this confidence is not written. */
    minConfidence: z.number().min(0).max(1).default(0),
    /** CRM objects enriched (e.g. `contact`, `Contact`, `Lead`); empty: the connector's defaults. */
    objects: z.array(z.string().min(1).max(80)).max(20).default([]),
    /** Field keys never written (`household.net_worth`, `career.job_title`, `status.enriched_at`, …). */
    excludedFields: z.array(z.string().min(1).max(80)).max(100).default([]),
    /**
     * One lookup per person: a record whose normalized request the target answered for another record
     * within the re-enrichment age (and the same data version) gets that answer, for no unit.
     */
    reuseAnswers: z.boolean().default(true),
    /**
     * Units this installation may spend per calendar month (UTC); null: no budget. At 80 % the console,
     * the server log and /metrics say so; at 100 % enrichment waits for the next month, or for a
     * larger budget.
     */
    monthlyBudget: z.number().int().min(1).max(1_000_000_000).nullable().default(null),
    /**
     * Scheduled refresh: records enriched longer ago than this many days are enriched again in the
     * background, oldest first; null: off.
     */
    refreshAfterDays: z
      .union([z.literal(30), z.literal(60), z.literal(90)])
      .nullable()
      .default(null),
    /** The share of the token's rate the scheduled refresh may take at most. */
    refreshShare: z.number().min(0.01).max(1).default(0.2),
    /**
     * The share of the CRM account's daily API allowance enrichbridge may use (Salesforce: the org's
     * rolling 24-hour allowance, which its other integrations share). At it, enrichment waits (paused
     * for the CRM's limit) and tries again hourly until the org's usage is back under.
     */
    crmApiShare: z.number().min(0.01).max(1).default(0.5),
    /**
     * Where the household section goes for a person who belongs to a household record of the CRM (an
     * NPSP household Account on Salesforce): `record`, on the person's record only; `household`, on the
     * household record only; `both`. A person without one keeps it on their record whatever this says.
     */
    householdFieldsOn: HouseholdPlacementSchema.default('record'),
  })
  .strict();
export type InstallationSettings = z.infer<typeof InstallationSettingsSchema>;

export type InstallationTarget =
  /** The embedded service, called in-process with a token the installation owns. */
  | { readonly kind: 'local'; readonly accountId: string; readonly tokenId: string }
  /** Any endpoint speaking the contract, over HTTP. */
  | { readonly kind: 'remote'; readonly url: string };

export interface Installation {
  readonly id: string;
  readonly provider: string;
  readonly externalAccountId: string;
  readonly environment: Environment;
  readonly target: InstallationTarget;
  readonly status: InstallationStatus;
  readonly pausedUntil: string | null;
  readonly pauseReason: PauseReason | null;
  readonly settings: InstallationSettings;
  /**
   * Messages came from another account on this installation's CRM host (a refreshed Salesforce sandbox's new
   * org id), not yet reconnected; absent or null: none.
   */
  readonly orgChange?: OrgChange | null;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** The account id messages came from instead of the installation's, and when that was first seen (ISO). */
export interface OrgChange {
  readonly externalAccountId: string;
  readonly since: string;
}

/** What is sealed at rest: the enrichment token (both kinds of target) and the CRM's credentials. */
export const InstallationSecretsSchema = z.object({
  enrichmentToken: z.string().min(1),
  crm: z.record(z.string(), z.unknown()).default({}),
  /** The secret a CRM signs our webhook requests with, when the CRM does not bring its own (Salesforce callouts). */
  webhookSecret: z.string().min(1).optional(),
  /** The secret in the URL a CRM posts unsigned messages to (Salesforce outbound messages). */
  outboundSecret: z.string().min(1).optional(),
  /** The secret a CRM's record component sends in a header, entered by the CRM's admin (a Salesforce External Credential). */
  recordSecret: z.string().min(1).optional(),
});
export type InstallationSecrets = z.infer<typeof InstallationSecretsSchema>;

export const EnvironmentSchema = z.enum(ENVIRONMENTS);

/** An answer kept for reuse (store.ts `findAnswers`): sealed, by the normalized request's hash. */
export interface StoredAnswer {
  readonly installationId: string;
  readonly inputHash: string;
  /** The record it was answered for. */
  readonly object: string;
  readonly recordId: string;
  /** The response as JSON, sealed with the data folder's key (context `reusable-answer`). */
  readonly sealedAnswer: string;
  readonly dataVersion: string | null;
  readonly answeredAt: string;
}

/** What the tracked overwrite mode needs, and what an operator asks about a record. */
export interface RecordState {
  readonly installationId: string;
  readonly object: string;
  readonly recordId: string;
  readonly householdMatched: boolean;
  readonly careerMatched: boolean;
  readonly windfallId: string | null;
  readonly confidence: number | null;
  readonly enrichedAt: string;
  readonly inputHash: string;
  /** CRM property → the value we last wrote there. */
  readonly written: Readonly<Record<string, CrmValue>>;
  /** The target's data version the enrichment was answered under; null or absent: unknown. */
  readonly dataVersion?: string | null;
  /** The career match's own confidence; null or absent: unknown, or no career match. */
  readonly careerConfidence?: number | null;
  /** Keyed hashes of the identifiers its request carried (`kind:hex`), for an erasure to find it; absent: unchanged. */
  readonly identifiers?: readonly string[];
  /**
   * A household record's row (an NPSP household Account): the `object/recordId` of the person whose answer
   * it holds; null or absent: a person's own record.
   */
  readonly householdSource?: string | null;
}

/** Who asked for a record action: the CRM user as the CRM names them (id and e-mail as given). */
export const ActorSchema = z.object({
  userId: z.string().min(1).max(200),
  email: z.string().max(320).nullable(),
});
export type Actor = z.infer<typeof ActorSchema>;

/** What a CRM user decided about one record (record-actions.ts): excluded, or its last enrichment undone. */
export interface RecordControl {
  readonly installationId: string;
  readonly object: string;
  readonly recordId: string;
  readonly excludedAt: string | null;
  readonly excludedBy: Actor | null;
  readonly undoneAt: string | null;
  readonly undoneBy: Actor | null;
  /** The input hash the record had when undone: another one (its identity changed) is enriched again. */
  readonly undoneInputHash: string | null;
}

/** The record actions a CRM user can take on a record, each logged as `action:<name>`. */
export const RECORD_ACTIONS = ['enrich_now', 'undo', 'exclude', 'include'] as const;
export type RecordAction = (typeof RECORD_ACTIONS)[number];

/** A value as a CRM stores it: null is empty. */
export type CrmValue = string | number | boolean | null;

export const SKIP_REASONS = [
  'no_match_key',
  'unchanged',
  'installation_paused',
  'installation_disabled',
  'quota_paused',
  'crm_limit_paused',
  'budget_paused',
  'record_deleted',
  /** The record is not a person (a Salesforce business Account): left alone. */
  'not_a_person',
  'object_not_enabled',
  'below_min_confidence',
  /** The record is excluded (Exclude, or the CRM's do-not-enrich checkbox). */
  'excluded',
  /** Its last enrichment was undone and its identity has not changed since (only Enrich now enriches it). */
  'undone',
  /** The person is on the suppression list, or this installation's CRM asked us to forget them (a privacy deletion). */
  'suppressed',
] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

export type Outcome = 'enriched' | 'no_match' | `skipped:${SkipReason}` | `failed:${string}` | `action:${RecordAction}`;

/** One property a write changed: the value sent, and the value it replaced (null: the property was empty). */
export interface LoggedChange {
  readonly value: CrmValue;
  readonly replaced: CrmValue;
}

export interface LogEntry {
  readonly id: string;
  readonly installationId: string;
  readonly object: string;
  readonly recordId: string;
  readonly at: string;
  readonly outcome: Outcome;
  readonly fieldsWritten: readonly string[];
  /**
   * CRM property → what we wrote there and what the record held before (null: empty); empty when
   * nothing was written, on entries logged before values were recorded, once cleared on disconnect, and
   * once purged past the log's retention period (`valuesPurgedAt`).
   */
  readonly changes: Readonly<Record<string, LoggedChange>>;
  /** When the values written and replaced were purged, past the log's retention period; absent while kept. */
  readonly valuesPurgedAt?: string;
  readonly quotaConsumed: number;
  readonly latencyMs: number | null;
  readonly detail: string | null;
  /** `object/recordId` of the record whose stored answer was applied (no lookup, no unit); absent otherwise. */
  readonly reusedFrom?: string;
  /** The CRM user who asked for a record action (`action:*` entries); absent otherwise. */
  readonly actor?: Actor;
}
