// Household records: where the CRM groups people into a household record (an NPSP household Account)
// and the installation puts the household section there (`householdFieldsOn`: household, or both).
//
// - One household answer per household record: within a batch, the first answer of its people that
//   carries a household writes it, once; later, another person's answer replaces it only when the one
//   written is older than the re-enrichment age, or names the same household (refreshed values), or
//   comes from the same person. A person whose answer is not written there keeps it on their record
//   (both) or is logged with why (household).
// - The household record has a state row of its own (what the tracked mode compares with), marked with
//   the person whose answer it holds and carrying that person's identifiers, so an erasure of the person
//   finds and blanks it too. Refreshes skip such rows.
// - A person's state remembers which household record their enrichment went to (folded into the input
//   hash it keeps): a person moved to another household is enriched again.
// - No second lookup for a household: when the installation writes household fields on the household
//   record only and no career field at all, a person whose household record holds a household answer
//   younger than the re-enrichment age gets that kept answer (answer-reuse.ts) without a lookup, and
//   people of one household in one batch follow a single lookup.
import { createHash } from 'node:crypto';
import { CAREER_FIELDS } from '../../core/contract/schemas.ts';
import { type BatchPorts, type BatchRun, type Candidate, chunks, DAY_MS, type PlannedWrite, type Stop } from '../batch-run.ts';
import type { CrmConnector, CrmRecord, FieldValue, HouseholdRecord, RecordUpdate, WriteResult } from '../connector.ts';
import type { CrmValue, Installation, RecordState } from '../model.ts';
import type { PipelineStore } from '../store.ts';
import { decideWrites, fieldsFromResponse, stillWritten, type WriteDecision } from '../write-policy.ts';
import { crmFailure } from './crm-failure.ts';

/** The household record the installation writes a person's household section to, if any. */
export function householdOf(connector: CrmConnector, installation: Installation, object: string, record: CrmRecord): HouseholdRecord | null {
  if (installation.settings.householdFieldsOn === 'record') return null;
  return connector.householdOf?.(object, record) ?? null;
}

/** Whether the person's own record keeps the household section (record or both, or no household record). */
export function householdOnRecord(installation: Installation, household: HouseholdRecord | null): boolean {
  return household === null || installation.settings.householdFieldsOn !== 'household';
}

/**
 * The hash a person's state keeps: their request's, with the household record their enrichment went
 * to folded in, so a move to another household is a change of input.
 */
export function stateHash(hash: string, household: HouseholdRecord | null): string {
  if (household === null) return hash;
  return createHash('sha256').update(`${hash}\u0000${household.object}/${household.id}`).digest('hex');
}

/** Whether the installation writes any career field (one not excluded). */
function writesCareer(installation: Installation): boolean {
  const excluded = new Set(installation.settings.excludedFields);
  return CAREER_FIELDS.some((field) => !excluded.has(`career.${field}`));
}

/** Whether a household record's state is younger than the re-enrichment age. */
function fresh(installation: Installation, state: RecordState, now: Date): boolean {
  return now.getTime() - Date.parse(state.enrichedAt) < installation.settings.reenrichAfterDays * DAY_MS;
}

/**
 * The kept answers a candidate may take instead of its own (by record id → the answer's input hash):
 * only when household fields go to the household record alone and no career field is written, from the
 * household record's current answer, or from the first person of the same household in this slice.
 */
export async function householdAliases(
  store: PipelineStore,
  run: BatchRun,
  connector: CrmConnector,
  object: string,
  candidates: readonly Candidate[],
): Promise<Map<string, string>> {
  const aliases = new Map<string, string>();
  const { installation } = run;
  if (installation.settings.householdFieldsOn !== 'household' || writesCareer(installation)) return aliases;
  const households = new Map<string, HouseholdRecord>();
  for (const candidate of candidates) {
    const household = householdOf(connector, installation, object, candidate.record);
    if (household !== null && !candidate.work.force) households.set(candidate.work.recordId, household);
  }
  if (households.size === 0) return aliases;
  const byObject = new Map<string, string[]>();
  for (const household of households.values()) byObject.set(household.object, [...(byObject.get(household.object) ?? []), household.id]);
  const states = new Map<string, RecordState>();
  for (const [householdObject, ids] of byObject) {
    for (const [id, state] of await store.recordStates(installation.id, householdObject, ids)) states.set(`${householdObject}/${id}`, state);
  }
  const now = run.now();
  const firstOfSlice = new Map<string, string>();
  for (const candidate of candidates) {
    const household = households.get(candidate.work.recordId);
    if (household === undefined) continue;
    const key = `${household.object}/${household.id}`;
    const state = states.get(key);
    if (state !== undefined && state.householdSource != null && state.householdMatched && fresh(installation, state, now)) {
      if (state.inputHash !== candidate.hash) aliases.set(candidate.work.recordId, state.inputHash);
      continue;
    }
    const first = firstOfSlice.get(key);
    if (first === undefined) firstOfSlice.set(key, candidate.hash);
    else if (first !== candidate.hash) aliases.set(candidate.work.recordId, first);
  }
  return aliases;
}

/** A household record's write: the person whose answer it holds, what goes out, its state after. */
interface HouseholdWrite {
  readonly household: HouseholdRecord;
  readonly source: PlannedWrite;
  readonly decision: WriteDecision;
  readonly state: RecordState;
}

/**
 * Decides each household record's write from the planned writes of its people: the first whose answer
 * carries a household may write it, unless the household record holds another person's answer for
 * another household younger than the re-enrichment age. Returns the writes, and per person why their
 * household was not written there (for the log).
 */
async function planHouseholdWrites(
  store: PipelineStore,
  run: BatchRun,
  connector: CrmConnector,
  object: string,
  planned: readonly PlannedWrite[],
): Promise<{ writes: HouseholdWrite[]; notes: Map<string, string> }> {
  const { installation } = run;
  const { settings } = installation;
  const notes = new Map<string, string>();
  const people = planned.flatMap((item) => {
    const household = householdOf(connector, installation, object, item.record);
    return household === null ? [] : [{ item, household }];
  });
  if (people.length === 0 || connector.householdPropertyFor === undefined) return { writes: [], notes };
  const propertyFor = connector.householdPropertyFor.bind(connector);
  const states = new Map<string, RecordState>();
  for (const householdObject of new Set(people.map((p) => p.household.object))) {
    const ids = people.filter((p) => p.household.object === householdObject).map((p) => p.household.id);
    for (const [id, state] of await store.recordStates(installation.id, householdObject, ids)) states.set(`${householdObject}/${id}`, state);
  }
  const excluded = new Set(settings.excludedFields);
  const writes = new Map<string, HouseholdWrite>();
  for (const { item, household } of people) {
    const key = `${household.object}/${household.id}`;
    const response = item.outcome.response;
    const source = `${object}/${item.work.recordId}`;
    if (writes.has(key)) {
      // Written once per batch: the household's first answer here.
      if (writes.get(key)?.source.work.recordId !== item.work.recordId)
        notes.set(item.work.recordId, `household ${key} written from ${writes.get(key)?.state.householdSource ?? ''}`);
      continue;
    }
    const fields = fieldsFromResponse(response, settings.minConfidence, item.at);
    if (!fields.householdUsed || response.household == null) continue;
    const state = states.get(key);
    const sameHousehold = state?.windfallId === response.household.windfall_id;
    if (state !== undefined && state.householdMatched && !sameHousehold && state.householdSource !== source && fresh(installation, state, run.now())) {
      notes.set(item.work.recordId, `household ${key} keeps the answer written from ${state.householdSource ?? 'another person'} on ${state.enrichedAt}`);
      continue;
    }
    const decision = decideWrites({
      fields,
      object: household.object,
      connector: {
        propertyFor: (_object, field) => propertyFor(field),
        formatValue: connector.formatValue.bind(connector),
        emptyValue: connector.emptyValue ?? null,
      },
      mode: settings.overwriteMode,
      excluded,
      current: asWritten(connector, household.properties, fields.values, propertyFor),
      lastWritten: state?.written ?? {},
      stale: { household: state !== undefined && state.householdMatched && !sameHousehold, career: false },
    });
    // The same household again from another person, nothing to change: the state stays the first person's.
    const unchanged = state !== undefined && sameHousehold && state.householdSource !== source && Object.keys(decision.properties).length === 0;
    if (unchanged) {
      notes.set(item.work.recordId, `household ${key} already holds this answer`);
      continue;
    }
    writes.set(key, {
      household,
      source: item,
      decision,
      state: {
        installationId: installation.id,
        object: household.object,
        recordId: household.id,
        householdMatched: true,
        careerMatched: false,
        windfallId: response.household.windfall_id,
        confidence: response.household.confidence,
        enrichedAt: item.at.toISOString(),
        // The person's request hash: the kept answer a member of the household may reuse (householdAliases).
        inputHash: item.hash,
        written: decision.written,
        dataVersion: item.outcome.dataVersion,
        careerConfidence: null,
        householdSource: source,
        ...identifiersOf(run, source),
      },
    });
  }
  return { writes: [...writes.values()], notes };
}

/**
 * The household record's values, with each that holds what the answer would write taken as that value:
 * the CRM reads some back otherwise (Salesforce an unchecked box as empty), and the same answer again
 * must write nothing.
 */
function asWritten(
  connector: CrmConnector,
  current: Readonly<Record<string, CrmValue>>,
  values: ReadonlyMap<string, FieldValue>,
  propertyFor: (key: string) => string | null,
): Record<string, CrmValue> {
  const out: Record<string, CrmValue> = { ...current };
  for (const [key, raw] of values) {
    const property = propertyFor(key);
    if (property === null) continue;
    const value = connector.formatValue(key, raw);
    if (value !== null && stillWritten(connector, property, current[property] ?? null, value)) out[property] = value;
  }
  return out;
}

function identifiersOf(run: BatchRun, key: string): { identifiers?: readonly string[] } {
  const identifiers = run.identifiers.get(key);
  return identifiers === undefined ? {} : { identifiers };
}

/**
 * Writes the household records of a slice's people and records their states. A call that fails stops
 * the batch as a person's write does (crmFailure on the people whose household it was; their own writes
 * wait with them); a household record the CRM refuses is noted on its people's log entries.
 * Returns the log notes per person, and the stop, if any.
 */
export async function writeHouseholds(
  ports: BatchPorts,
  run: BatchRun,
  connector: CrmConnector,
  object: string,
  planned: readonly PlannedWrite[],
): Promise<{ notes: Map<string, string>; failed: Set<string>; stop: Stop | null }> {
  const { writes, notes } = await planHouseholdWrites(ports.store, run, connector, object, planned);
  const failed = new Set<string>();
  let stop: Stop | null = null;
  const sending = writes.filter((w) => Object.keys(w.decision.properties).length > 0);
  const results = new Map<string, WriteResult>();
  for (const householdObject of new Set(sending.map((w) => w.household.object))) {
    const ofObject = sending.filter((w) => w.household.object === householdObject);
    for (const slice of chunks(ofObject, connector.maxBatch)) {
      const updates: RecordUpdate[] = slice.map((w) => ({ id: w.household.id, properties: w.decision.properties }));
      try {
        run.crmCalls += 1;
        for (const result of await connector.write(householdObject, updates, { signal: run.cancel })) results.set(`${householdObject}/${result.id}`, result);
      } catch (error) {
        // The people go back with their household: tried again together.
        const people = planned.filter((item) => {
          const household = householdOf(connector, run.installation, object, item.record);
          return household !== null && slice.some((w) => w.household.object === household.object && w.household.id === household.id);
        });
        for (const item of people) failed.add(item.work.recordId);
        stop ??= await crmFailure(
          ports,
          run,
          object,
          people.map((item) => item.work),
          error,
        );
      }
    }
  }
  for (const write of writes) {
    const key = `${write.household.object}/${write.household.id}`;
    if (failed.has(write.source.work.recordId)) continue;
    const sent = Object.keys(write.decision.properties).length > 0;
    const result = results.get(key);
    if (sent && result !== undefined && !result.ok) {
      notes.set(write.source.work.recordId, `household ${key} not written: ${result.message}`);
      continue;
    }
    if (sent && result === undefined) continue;
    run.states.push(write.state);
    const names = Object.keys(write.decision.properties);
    notes.set(
      write.source.work.recordId,
      names.length === 0 ? `household ${key} already holds this answer` : `household ${key}: ${names.length} fields written`,
    );
  }
  return { notes, failed, stop };
}

/** The household keys a person's own record does not take (household fields on the household record only). */
export function keysKeptOffRecord(installation: Installation, household: HouseholdRecord | null, keys: Iterable<string>): Set<string> {
  if (householdOnRecord(installation, household)) return new Set();
  return new Set([...keys].filter((key) => key.startsWith('household.')));
}
