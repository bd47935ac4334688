// The record view and the record actions a CRM user takes on one record: Enrich now, Undo,
// Exclude and Include again. Each action is refused with a reason when it cannot apply (the same
// grounds the view's `actions` show), and each one applied is logged in the enrichment log as
// `action:<name>` with the actor (the CRM user's id and e-mail as the CRM gives them: the log is in the
// database, erased with the record and cleared on disconnect; a server log line gets actorForLog's
// masked e-mail only, docs/operator-guide.md's security rules).
//
// - Enrich now queues a forced enrichment of the record at the front of the queue (enrichNowJob); the
//   pipeline paces it per token like any other and lets it through the month's budget (refused here when
//   the budget is spent). It enriches an undone record again.
// - Undo restores, for the writes since the record's last Undo (its last enrichment, and any before it
//   still standing) within the log's retention period, every property to the value it replaced; a
//   property changed since by someone else is left alone and named in the answer. An enrichment older
//   than the period is refused (`past_retention`): what it replaced is no longer kept. The status
//   property says `undone`; the record is then not enriched again automatically (webhooks, workflows,
//   backfills, refresh: `skipped:undone`) until its identity (input hash) changes or someone asks for
//   Enrich now.
// - Exclude / Include again: a per-record do-not-enrich (`skipped:excluded`), kept in step with the CRM's
//   do-not-enrich checkbox (DO_NOT_ENRICH_KEY): Exclude checks it and sets the status `excluded`, Include
//   unchecks it and puts back the status of the record's last enrichment.
import { z } from 'zod';
import { describe } from './batch-run.ts';
import { budgetState } from './budget.ts';
import type { CrmConnector, CrmRecord } from './connector.ts';
import { enrichDedupeKey, enrichNowDedupeKey, enrichNowJob } from './enrich-job.ts';
import { inputHash } from './input.ts';
import type { JobQueue } from './job-queue.ts';
import { type Actor, ActorSchema, type CrmValue, type Installation, type LogEntry, type LoggedChange, type RecordAction } from './model.ts';
import { exclusion } from './record-controls.ts';
import { DEFAULT_LOG_VALUES_RETENTION_DAYS, valuesKeptSince } from './retention.ts';
import { actionRefusal, buildRecordView, type RecordView, type RecordViewInput, writeChain } from './record-view.ts';
import { newLogId, type PipelineStore, type RecordControlPatch } from './store.ts';
import { DO_NOT_ENRICH_KEY, STATUS_KEYS, sameCrmValue, stillWritten } from './write-policy.ts';
import { householdOf, stateHash } from './pipeline/households.ts';

/** Which record: the installation (resolved by the caller from what the CRM vouches for), object and id. */
export interface RecordRef {
  readonly installationId: string;
  readonly object: string;
  readonly recordId: string;
}

/** Why a record cannot be shown or acted on at all. */
export const RECORD_UNAVAILABLE = ['installation_not_found', 'object_not_enabled', 'record_not_found'] as const;

/** Undo's answer per property: restored to what it replaced, or left alone because someone changed it since. */
export const UndoFieldSchema = z.object({
  property: z.string(),
  result: z.enum(['restored', 'left_alone']),
  /** What it holds now, after the Undo (the other person's value when left alone). */
  value: z.union([z.string(), z.number(), z.boolean(), z.null()]),
  /** What we had written there. */
  written: z.union([z.string(), z.number(), z.boolean(), z.null()]),
  /** What it held before our write (what a restore puts back). */
  replaced: z.union([z.string(), z.number(), z.boolean(), z.null()]),
});
export type UndoField = z.infer<typeof UndoFieldSchema>;

/** An action's answer, as JSON to the card and the component. */
export const ActionResultSchema = z.discriminatedUnion('ok', [
  z.object({
    ok: z.literal(true),
    action: z.enum(['enrich_now', 'undo', 'exclude', 'include']),
    /** Enrich now: false when an Enrich now of the record was already waiting (nothing more queued). */
    queued: z.boolean().optional(),
    /** Undo: each property of the undone writes, restored or left alone. */
    fields: z.array(UndoFieldSchema).optional(),
    /** Undo: the properties left alone because someone changed them since (409-style, per field). */
    leftAlone: z.array(z.string()).optional(),
  }),
  z.object({
    ok: z.literal(false),
    action: z.enum(['enrich_now', 'undo', 'exclude', 'include']),
    /** A stable code (`budget_spent`, `excluded`, `nothing_to_undo`, `record_not_found`, `crm_write`, …). */
    reason: z.string(),
    message: z.string(),
  }),
]);
export type ActionResult = z.infer<typeof ActionResultSchema>;

export type RecordViewResult =
  { readonly ok: true; readonly view: RecordView } | { readonly ok: false; readonly reason: (typeof RECORD_UNAVAILABLE)[number]; readonly message: string };

/** An actor as a server log line may show it: the user id, and the e-mail's domain with its first character. */
export function actorForLog(actor: Actor): { userId: string; email: string | null } {
  if (actor.email === null) return { userId: actor.userId, email: null };
  const at = actor.email.lastIndexOf('@');
  return { userId: actor.userId, email: at <= 0 ? '***' : `${actor.email.charAt(0)}***${actor.email.slice(at)}` };
}

export interface RecordDeskDeps {
  readonly store: PipelineStore;
  readonly queue: JobQueue;
  readonly connectorFor: (installation: Installation) => Promise<CrmConnector>;
  readonly now?: () => Date;
  /** How long the enrichment log keeps the values written and replaced (what Undo restores from). */
  readonly logValuesRetentionDays?: number;
}

/** What an action found when it read the record: the view's input and the connector, or why there is none. */
type Loaded =
  | { readonly ok: true; readonly input: RecordViewInput; readonly connector: CrmConnector }
  | { readonly ok: false; readonly reason: (typeof RECORD_UNAVAILABLE)[number]; readonly message: string };

/** How many of a record's newest log entries the view and Undo read (an undo chain longer than this is cut). */
const LOG_DEPTH = 200;

export class RecordDesk {
  private readonly now: () => Date;

  constructor(private readonly deps: RecordDeskDeps) {
    this.now = deps.now ?? (() => new Date());
  }

  /**
   * The record as a CRM user sees it: read now through the installation's connector, or, given `seen`,
   * as the user's own screen read our properties a moment ago (the HubSpot card reads them with
   * HubSpot's own call, so a view costs nothing of the portal's API budget; the values only say what
   * the record holds now, and every action still reads the record afresh).
   */
  async view(ref: RecordRef, seen?: Readonly<Record<string, CrmValue>>): Promise<RecordViewResult> {
    const loaded = await this.load(ref, seen);
    return loaded.ok ? { ok: true, view: buildRecordView(loaded.input) } : loaded;
  }

  /** One of the record actions by name, as the card, the component and the console ask for it. */
  async take(action: RecordAction, ref: RecordRef, actor: Actor): Promise<ActionResult> {
    switch (action) {
      case 'enrich_now':
        return this.enrichNow(ref, actor);
      case 'undo':
        return this.undo(ref, actor);
      case 'exclude':
        return this.exclude(ref, actor);
      case 'include':
        return this.include(ref, actor);
    }
  }

  /** Enrich now: a forced enrichment of the record, at the front of the queue. */
  async enrichNow(ref: RecordRef, actor: Actor): Promise<ActionResult> {
    return this.act(ref, actor, 'enrich_now', async ({ input }) => {
      const { created } = await this.deps.queue.enqueue(enrichNowJob(input.installation.id, ref.object, ref.recordId));
      await this.log(input, 'enrich_now', actor, {}, {}, created ? null : 'an Enrich now of this record was already waiting');
      return { ok: true, action: 'enrich_now', queued: created };
    });
  }

  /** Undo: every property our writes since the last Undo changed goes back to what it replaced, unless someone changed it since. */
  async undo(ref: RecordRef, actor: Actor): Promise<ActionResult> {
    return this.act(ref, actor, 'undo', async ({ input, connector }) => {
      const { object, record, state } = input;
      const statusProperties = new Map(
        STATUS_KEYS.map((key) => [connector.propertyFor(object, key), key] as const).filter(
          (pair): pair is [string, (typeof STATUS_KEYS)[number]] => pair[0] !== null,
        ),
      );
      const empty = connector.emptyValue ?? null;
      const properties: Record<string, CrmValue> = {};
      const fields: z.infer<typeof UndoFieldSchema>[] = [];
      for (const link of writeChain(input.entries, input.valuesKept.since).values()) {
        const current = record.properties[link.property] ?? null;
        if (statusProperties.get(link.property) === 'status.enrichment_status') continue;
        if (!stillWritten(connector, link.property, current, link.written)) {
          // Someone changed it since our write: theirs now, left alone (a status property of ours too).
          if (!statusProperties.has(link.property))
            fields.push({ property: link.property, result: 'left_alone', value: current, written: link.written, replaced: link.replaced });
          continue;
        }
        if (!sameCrmValue(current, link.replaced)) properties[link.property] = link.replaced ?? empty;
        if (!statusProperties.has(link.property))
          fields.push({ property: link.property, result: 'restored', value: link.replaced, written: link.written, replaced: link.replaced });
      }
      // The status says `undone`, unless the record is excluded: that stays what it shows.
      const status = exclusion(connector, object, record, input.control) === null ? this.statusValue(connector, object, 'undone') : null;
      if (status !== null && !sameCrmValue(record.properties[status.property], status.value)) properties[status.property] = status.value;
      const written = await this.write(connector, object, record, properties);
      if (written !== null) return { ok: false, action: 'undo', reason: 'crm_write', message: written };
      const restored = new Set(Object.keys(properties));
      const at = this.now().toISOString();
      const leftAlone = fields.filter((f) => f.result === 'left_alone').map((f) => f.property);
      // As the pipeline keeps it: the input, and the household record its household section goes to.
      const hash = stateHash(
        inputHash(connector.toRequest(object, record), input.installation.environment),
        householdOf(connector, input.installation, object, record),
      );
      await this.log(
        input,
        'undo',
        actor,
        changesOf(properties, record),
        { undoneAt: at, undoneBy: actor, undoneInputHash: hash },
        leftAlone.length === 0 ? null : `left alone, changed since by someone else: ${leftAlone.join(', ')}`,
        // What we wrote and restored is ours no more: the tracked mode must not take it for ours.
        state === undefined
          ? undefined
          : {
              ...state,
              written: Object.fromEntries(Object.entries(state.written).filter(([property]) => !restored.has(property) || statusProperties.has(property))),
            },
      );
      return { ok: true, action: 'undo', fields, leftAlone };
    });
  }

  /** Exclude: the record is never enriched until included again; the CRM's do-not-enrich checkbox is checked. */
  async exclude(ref: RecordRef, actor: Actor): Promise<ActionResult> {
    return this.act(ref, actor, 'exclude', async ({ input, connector }) => {
      const { object, record } = input;
      const properties = this.checkbox(connector, object, record, true);
      const status = this.statusValue(connector, object, 'excluded');
      if (status !== null && !sameCrmValue(record.properties[status.property], status.value)) properties[status.property] = status.value;
      const written = await this.write(connector, object, record, properties);
      if (written !== null) return { ok: false, action: 'exclude', reason: 'crm_write', message: written };
      await this.log(input, 'exclude', actor, changesOf(properties, record), { excludedAt: this.now().toISOString(), excludedBy: actor }, null);
      return { ok: true, action: 'exclude' };
    });
  }

  /** Include again: the exclusion ends and the checkbox is unchecked; the status shows the record's last enrichment again. */
  async include(ref: RecordRef, actor: Actor): Promise<ActionResult> {
    return this.act(ref, actor, 'include', async ({ input, connector }) => {
      const { object, record, state, control } = input;
      const properties = this.checkbox(connector, object, record, false);
      const back = control?.undoneAt != null ? 'undone' : state === undefined ? null : state.householdMatched || state.careerMatched ? 'enriched' : 'no_match';
      const statusProperty = connector.propertyFor(object, 'status.enrichment_status');
      if (statusProperty !== null && !input.installation.settings.excludedFields.includes('status.enrichment_status')) {
        const value = back === null ? (connector.emptyValue ?? null) : connector.formatValue('status.enrichment_status', back);
        if (!sameCrmValue(record.properties[statusProperty], value)) properties[statusProperty] = value;
      }
      const written = await this.write(connector, object, record, properties);
      if (written !== null) return { ok: false, action: 'include', reason: 'crm_write', message: written };
      await this.log(input, 'include', actor, changesOf(properties, record), { excludedAt: null, excludedBy: null }, null);
      return { ok: true, action: 'include' };
    });
  }

  /** Runs an action once the record is read and the action allowed; refuses it otherwise. */
  private async act(
    ref: RecordRef,
    actor: Actor,
    action: RecordAction,
    apply: (loaded: Extract<Loaded, { ok: true }>) => Promise<ActionResult>,
  ): Promise<ActionResult> {
    const parsed = ActorSchema.safeParse(actor);
    if (!parsed.success) return { ok: false, action, reason: 'actor_invalid', message: 'The CRM user asking could not be identified.' };
    const loaded = await this.load(ref);
    if (!loaded.ok) return { ok: false, action, reason: loaded.reason, message: loaded.message };
    const refusal = actionRefusal(loaded.input, action);
    if (refusal !== null) return { ok: false, action, ...refusal };
    return apply(loaded);
  }

  private async load(ref: RecordRef, seen?: Readonly<Record<string, CrmValue>>): Promise<Loaded> {
    const { store, queue } = this.deps;
    const installation = await store.findInstallation(ref.installationId);
    if (installation === undefined) return { ok: false, reason: 'installation_not_found', message: 'This CRM account is not connected.' };
    const connector = await this.deps.connectorFor(installation);
    const objects = installation.settings.objects.length > 0 ? installation.settings.objects : connector.defaultObjects;
    if (!objects.includes(ref.object)) return { ok: false, reason: 'object_not_enabled', message: `${ref.object} records are not enriched for this account.` };
    const record = seen === undefined ? (await connector.read(ref.object, [ref.recordId])).get(ref.recordId) : { id: ref.recordId, properties: seen };
    if (record === undefined) return { ok: false, reason: 'record_not_found', message: 'The CRM has no such record (deleted, or merged into another).' };
    const [states, controls, entries, pending, budget] = await Promise.all([
      store.recordStates(installation.id, ref.object, [ref.recordId]),
      store.recordControls(installation.id, ref.object, [ref.recordId]),
      store.searchLog({ installationId: installation.id, object: ref.object, recordId: ref.recordId, limit: LOG_DEPTH }),
      queue.findPending([enrichNowDedupeKey(installation.id, ref.object, ref.recordId), enrichDedupeKey(installation.id, ref.object, ref.recordId)]),
      budgetState(store, installation, this.now()),
    ]);
    const days = this.deps.logValuesRetentionDays ?? DEFAULT_LOG_VALUES_RETENTION_DAYS;
    return {
      ok: true,
      connector,
      input: {
        installation,
        object: ref.object,
        record,
        connector,
        state: states.get(ref.recordId),
        control: controls.get(ref.recordId),
        entries,
        pending,
        budget,
        valuesKept: { days, since: valuesKeptSince(days, this.now()) },
      },
    };
  }

  /** The status property and a status value as the CRM takes it; null when not written (unmapped, or an excluded field). */
  private statusValue(connector: CrmConnector, object: string, value: 'undone' | 'excluded'): { property: string; value: CrmValue } | null {
    const property = connector.propertyFor(object, 'status.enrichment_status');
    if (property === null) return null;
    return { property, value: connector.formatValue('status.enrichment_status', value) };
  }

  /** The do-not-enrich checkbox set to `on`, when the connector maps it and it is not so already. */
  private checkbox(connector: CrmConnector, object: string, record: CrmRecord, on: boolean): Record<string, CrmValue> {
    const property = connector.propertyFor(object, DO_NOT_ENRICH_KEY);
    if (property === null) return {};
    const value = connector.formatValue(DO_NOT_ENRICH_KEY, on);
    const current = record.properties[property] ?? null;
    const same = on ? sameCrmValue(current, value) : current === null || sameCrmValue(current, value) || current === false;
    return same ? {} : { [property]: value };
  }

  /** Writes the record's properties; returns why the CRM refused, or null when written (or nothing to write). */
  private async write(connector: CrmConnector, object: string, record: CrmRecord, properties: Record<string, CrmValue>): Promise<string | null> {
    if (Object.keys(properties).length === 0) return null;
    try {
      const [result] = await connector.write(object, [{ id: record.id, properties }]);
      if (result === undefined) return 'The CRM returned no result for the record.';
      return result.ok ? null : `The CRM refused the change (${result.reason}): ${result.message}`;
    } catch (error) {
      return `The CRM could not be written: ${describe(error)}`;
    }
  }

  private async log(
    input: RecordViewInput,
    action: RecordAction,
    actor: Actor,
    changes: Record<string, LoggedChange>,
    control: RecordControlPatch,
    detail: string | null,
    state?: RecordViewInput['state'],
  ): Promise<void> {
    const at = this.now();
    const entry: LogEntry = {
      id: newLogId(at),
      installationId: input.installation.id,
      object: input.object,
      recordId: input.record.id,
      at: at.toISOString(),
      outcome: `action:${action}`,
      fieldsWritten: Object.keys(changes),
      changes,
      quotaConsumed: 0,
      latencyMs: null,
      detail,
      actor,
    };
    await this.deps.store.saveRecordAction(entry, control, state);
  }
}

/** The log's record of an action's writes: each property's new value and what it held before. */
function changesOf(properties: Readonly<Record<string, CrmValue>>, record: CrmRecord): Record<string, LoggedChange> {
  return Object.fromEntries(Object.entries(properties).map(([property, value]) => [property, { value, replaced: record.properties[property] ?? null }]));
}
