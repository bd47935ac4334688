// One record as a CRM user sees it: its status with the reason, when it was last enriched
// and under which data version, what matched, each property we manage with its provenance (what it
// holds now in the CRM, when we wrote it, what it replaced, whether it is still ours, edited by a person
// since, or came from another record's answer), and the record actions with their cost and whether they
// are allowed now. Provenance and Undo reach back as far as the enrichment log keeps the values written
// and replaced (its retention period, retention.ts): an enrichment older than that cannot be undone.
// One shape for every CRM: the HubSpot card, the Salesforce component and the console receive it as
// JSON (RecordViewSchema). Built by RecordDesk (record-actions.ts) from the record as the
// installation's connector reads it, the record's state, controls and log, the queue and the budget.
import { z } from 'zod';
import { quotaPerLookup } from './batch-run.ts';
import { type BudgetState } from './budget.ts';
import type { CrmConnector, CrmRecord } from './connector.ts';
import type { Job } from './job-queue.ts';
import { ActorSchema, type Installation, type LogEntry, RECORD_ACTIONS, type RecordAction, type RecordControl, type RecordState } from './model.ts';
import { exclusion } from './record-controls.ts';
import { stillWritten } from './write-policy.ts';

/** What a record's status can be, first match wins: excluded, pending, undone, then its last outcome. */
export const RECORD_STATUSES = ['enriched', 'no_match', 'undone', 'excluded', 'pending', 'failed', 'skipped', 'never'] as const;
export type RecordStatus = (typeof RECORD_STATUSES)[number];

const CrmValueSchema = z.union([z.string(), z.number(), z.boolean(), z.null()]);

export const FIELD_STATES = ['ours', 'edited', 'reused'] as const;

export const MatchSchema = z.object({
  matched: z.boolean(),
  /** The match's confidence (0–1); null when it did not match or was never enriched. */
  confidence: z.number().nullable(),
});

/** One property we manage on the record, with its provenance. */
export const RecordFieldSchema = z.object({
  /** The CRM property (HubSpot) or field API name (Salesforce). */
  property: z.string(),
  /** What the CRM holds there now (null: empty). */
  value: CrmValueSchema,
  /** When we last wrote it. */
  writtenAt: z.string(),
  /** What it held before our first write (null: empty). */
  replaced: CrmValueSchema,
  /** ours: still what we wrote; edited: a person changed it since (protected under tracked mode); reused: ours, from another record's answer. */
  state: z.enum(FIELD_STATES),
  /** What we last wrote there (differs from `value` when edited). */
  written: CrmValueSchema,
  /** `object/recordId` whose kept answer the value came from, for `reused`; null otherwise. */
  reusedFrom: z.string().nullable(),
});
export type RecordField = z.infer<typeof RecordFieldSchema>;

/** Whether an action applies now, and what it would cost. */
export const ActionAvailabilitySchema = z.object({
  allowed: z.boolean(),
  /** Why not (a stable code: `excluded`, `budget_spent`, `nothing_to_undo`, `past_retention`, …); null when allowed. */
  reason: z.string().nullable(),
  /** The reason in a sentence for the user; null when allowed. */
  message: z.string().nullable(),
  /** Quota units the action spends (Enrich now: 1 in production, 0 in the sandbox; the others 0). */
  units: z.number().int().min(0),
  /** Units the installation's monthly budget has left; null when it has none (or spends none: the sandbox). */
  budgetLeft: z.number().int().min(0).nullable(),
});
export type ActionAvailability = z.infer<typeof ActionAvailabilitySchema>;

export const RecordViewSchema = z.object({
  installationId: z.string(),
  provider: z.string(),
  environment: z.enum(['sandbox', 'production']),
  object: z.string(),
  recordId: z.string(),
  status: z.object({
    value: z.enum(RECORD_STATUSES),
    /** A stable code: the skip or failure reason (`no_match_key`, `crm_write`), `user` or `crm_checkbox` for excluded, the trigger for pending; null when nothing more is to say. */
    reason: z.string().nullable(),
    /** The reason in a sentence; null when none. */
    detail: z.string().nullable(),
    /** When the status began (the log entry's, the exclusion's or the undo's time; the job's creation); null for never. */
    at: z.string().nullable(),
  }),
  lastEnrichedAt: z.string().nullable(),
  /** The target's data version the last enrichment was answered under; null when unknown. */
  dataVersion: z.string().nullable(),
  household: MatchSchema,
  career: MatchSchema,
  /** Set while the record is excluded: by a CRM user (who, when) or by the CRM's do-not-enrich checkbox. */
  excluded: z.object({ by: z.enum(['user', 'crm_checkbox']), at: z.string().nullable(), actor: ActorSchema.nullable() }).nullable(),
  /** Set while the last enrichment stands undone: when and by whom. */
  undone: z.object({ at: z.string(), actor: ActorSchema.nullable() }).nullable(),
  fields: z.array(RecordFieldSchema),
  actions: z.object({
    enrich_now: ActionAvailabilitySchema,
    undo: ActionAvailabilitySchema,
    exclude: ActionAvailabilitySchema,
    include: ActionAvailabilitySchema,
  }),
});
export type RecordView = z.infer<typeof RecordViewSchema>;

/** The outcomes of an enrichment (what writes our values), as opposed to an action's, a skip's status or a pause's. */
const ENRICHMENT_OUTCOMES: readonly string[] = ['enriched', 'no_match', 'skipped:below_min_confidence'];

/** An enrichment that wrote to the record, whether or not the log still holds its values. */
function enrichmentWrite(entry: LogEntry): boolean {
  return ENRICHMENT_OUTCOMES.includes(entry.outcome) && (entry.fieldsWritten.length > 0 || Object.keys(entry.changes).length > 0);
}

/**
 * An enrichment whose values the log holds and keeps: logged within the retention period (since
 * `keptSince`) and not purged. Only these can be undone or shown with what they replaced.
 */
function keptEnrichment(entry: LogEntry, keptSince: string): boolean {
  return enrichmentWrite(entry) && Object.keys(entry.changes).length > 0 && entry.valuesPurgedAt === undefined && entry.at >= keptSince;
}

/** The record's entries since its last Undo, oldest first. */
function sinceLastUndo(entries: readonly LogEntry[]): LogEntry[] {
  const ascending = [...entries].sort((a, b) => a.id.localeCompare(b.id));
  return ascending.slice(ascending.map((entry) => entry.outcome).lastIndexOf('action:undo') + 1);
}

/** What our writes since the last Undo did to each property: the first value replaced, the last value written. */
export interface WriteChain {
  readonly property: string;
  readonly replaced: RecordField['replaced'];
  readonly written: RecordField['written'];
  readonly writtenAt: string;
  readonly reusedFrom: string | null;
}

/**
 * The record's writes since its last Undo, by property, from its log (oldest first), as far as the log
 * keeps their values: writes from before `keptSince` (past the retention period) are not in it, so the
 * chain starts at the first write within the period and Undo goes back no further.
 */
export function writeChain(entries: readonly LogEntry[], keptSince: string): Map<string, WriteChain> {
  const chain = new Map<string, WriteChain>();
  for (const entry of sinceLastUndo(entries)) {
    if (!keptEnrichment(entry, keptSince)) continue;
    for (const [property, change] of Object.entries(entry.changes)) {
      const before = chain.get(property);
      chain.set(property, {
        property,
        replaced: before === undefined ? change.replaced : before.replaced,
        written: change.value,
        writtenAt: entry.at,
        reusedFrom: entry.reusedFrom ?? null,
      });
    }
  }
  return chain;
}

/** What the view is built from: everything read, nothing to fetch. */
export interface RecordViewInput {
  readonly installation: Installation;
  readonly object: string;
  readonly record: CrmRecord;
  readonly connector: Pick<CrmConnector, 'propertyFor' | 'holdsWritten'>;
  readonly state: RecordState | undefined;
  readonly control: RecordControl | undefined;
  /** The record's log entries (any order). */
  readonly entries: readonly LogEntry[];
  /** The record's queued or running enrichment, if any. */
  readonly pending: Job | undefined;
  readonly budget: BudgetState | null;
  /** How long the log keeps the values written and replaced, and the time before which it keeps none. */
  readonly valuesKept: { readonly days: number; readonly since: string };
}

const allowed = (units: number, budgetLeft: number | null): ActionAvailability => ({ allowed: true, reason: null, message: null, units, budgetLeft });
const refused = (reason: string, message: string, units: number, budgetLeft: number | null): ActionAvailability => ({
  allowed: false,
  reason,
  message,
  units,
  budgetLeft,
});

/** Why an action cannot apply to the record now, or null when it can (the action functions refuse on the same grounds). */
export function actionRefusal(input: RecordViewInput, action: RecordAction): { readonly reason: string; readonly message: string } | null {
  const { installation, object, record, connector, control, budget } = input;
  const excluded = exclusion(connector, object, record, control);
  switch (action) {
    case 'enrich_now': {
      if (installation.status === 'disabled') return { reason: 'installation_disabled', message: 'Enrichment is disabled for this account.' };
      if (installation.status === 'paused' && installation.pauseReason === 'budget') {
        return {
          reason: 'budget_spent',
          message: `This month's enrichment budget is spent; it starts again on ${installation.pausedUntil?.slice(0, 10) ?? 'the first of next month'}.`,
        };
      }
      if (installation.status === 'paused')
        return { reason: 'installation_paused', message: `Enrichment is paused for this account (${installation.pauseReason ?? 'admin'}).` };
      if (excluded !== null) return { reason: 'excluded', message: 'This record is excluded from enrichment: include it again first.' };
      if (budget !== null && budget.left <= 0) {
        return {
          reason: 'budget_spent',
          message: `This month's enrichment budget (${budget.budget} units) is spent; it starts again on ${budget.resetsAt.slice(0, 10)}.`,
        };
      }
      return null;
    }
    case 'undo': {
      const { days, since } = input.valuesKept;
      if (writeChain(input.entries, since).size > 0) return null;
      if (control?.undoneAt != null) return { reason: 'already_undone', message: 'The last enrichment is undone already.' };
      // Written, but past the retention period (or purged): what it replaced is no longer kept to put back.
      const pastPeriod = (entry: LogEntry) => enrichmentWrite(entry) && (entry.valuesPurgedAt !== undefined || entry.at < since);
      if (sinceLastUndo(input.entries).some(pastPeriod)) {
        return {
          reason: 'past_retention',
          message: `The last enrichment is more than ${days} days old: the values it replaced are kept only ${days} days, so it can no longer be undone.`,
        };
      }
      return { reason: 'nothing_to_undo', message: 'No enrichment of this record wrote values that can be restored.' };
    }
    case 'exclude':
      return excluded === null ? null : { reason: 'already_excluded', message: 'This record is excluded already.' };
    case 'include':
      return excluded !== null ? null : { reason: 'not_excluded', message: 'This record is not excluded.' };
  }
}

function recordStatus(input: RecordViewInput): RecordView['status'] {
  const { object, record, connector, state, control, pending } = input;
  const excluded = exclusion(connector, object, record, control);
  if (excluded !== null) {
    return excluded.by === 'user'
      ? { value: 'excluded', reason: 'user', detail: 'Excluded from enrichment by a CRM user.', at: control?.excludedAt ?? null }
      : { value: 'excluded', reason: 'crm_checkbox', detail: "The CRM's do-not-enrich checkbox is set on this record.", at: null };
  }
  if (pending !== undefined) {
    const payload = pending.payload as { trigger?: unknown };
    return { value: 'pending', reason: typeof payload.trigger === 'string' ? payload.trigger : null, detail: 'Queued for enrichment.', at: pending.createdAt };
  }
  if (control?.undoneAt != null)
    return { value: 'undone', reason: null, detail: 'The last enrichment was undone: its values were restored.', at: control.undoneAt };
  const fromState = (at: string | null): RecordView['status'] =>
    state === undefined
      ? { value: 'never', reason: null, detail: null, at: null }
      : state.householdMatched || state.careerMatched
        ? { value: 'enriched', reason: null, detail: null, at: at ?? state.enrichedAt }
        : { value: 'no_match', reason: null, detail: null, at: at ?? state.enrichedAt };
  const last = [...input.entries].sort((a, b) => b.id.localeCompare(a.id)).find((entry) => !entry.outcome.startsWith('action:'));
  if (last === undefined) return fromState(null);
  const { outcome } = last;
  if (outcome === 'enriched' || outcome === 'no_match') return { value: outcome, reason: null, detail: last.detail, at: last.at };
  if (outcome === 'skipped:unchanged' || outcome === 'skipped:excluded' || outcome === 'skipped:undone') return fromState(state?.enrichedAt ?? null);
  const [kind, reason = null] = outcome.split(':', 2) as [string, string | undefined];
  return { value: kind === 'failed' ? 'failed' : 'skipped', reason, detail: last.detail, at: last.at };
}

/** The record as a CRM user sees it: one shape for every CRM. */
export function buildRecordView(input: RecordViewInput): RecordView {
  const { installation, object, record, state, control, budget } = input;
  const chain = writeChain(input.entries, input.valuesKept.since);
  const fields: RecordField[] = [...chain.values()].map((link) => {
    const value = record.properties[link.property] ?? null;
    const ours = stillWritten(input.connector, link.property, value, link.written);
    return {
      property: link.property,
      value,
      writtenAt: link.writtenAt,
      replaced: link.replaced,
      state: !ours ? 'edited' : link.reusedFrom !== null ? 'reused' : 'ours',
      written: link.written,
      reusedFrom: link.reusedFrom,
    };
  });
  const excluded = exclusion(input.connector, object, record, control);
  const budgetLeft = budget === null ? null : budget.left;
  const units = quotaPerLookup(installation);
  const actions = Object.fromEntries(
    RECORD_ACTIONS.map((action) => {
      const cost = action === 'enrich_now' ? units : 0;
      const refusal = actionRefusal(input, action);
      return [action, refusal === null ? allowed(cost, budgetLeft) : refused(refusal.reason, refusal.message, cost, budgetLeft)];
    }),
  ) as RecordView['actions'];
  return {
    installationId: installation.id,
    provider: installation.provider,
    environment: installation.environment,
    object,
    recordId: record.id,
    status: recordStatus(input),
    lastEnrichedAt: state?.enrichedAt ?? null,
    dataVersion: state?.dataVersion ?? null,
    household: { matched: state?.householdMatched ?? false, confidence: state?.householdMatched === true ? state.confidence : null },
    career: {
      matched: state?.careerMatched ?? false,
      confidence: state?.careerMatched === true ? (state.careerConfidence ?? (state.householdMatched ? null : state.confidence)) : null,
    },
    excluded:
      excluded === null
        ? null
        : {
            by: excluded.by,
            at: excluded.by === 'user' ? (control?.excludedAt ?? null) : null,
            actor: excluded.by === 'user' ? (control?.excludedBy ?? null) : null,
          },
    undone: control?.undoneAt == null ? null : { at: control.undoneAt, actor: control.undoneBy },
    fields,
    actions,
  };
}
