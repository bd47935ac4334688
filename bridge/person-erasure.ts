// A person's erasure across every installation (a deletion request to the operator): the records we
// enriched for them are found by the keyed hashes of their identifiers (record_identifiers), the
// properties we wrote there are blanked in each CRM (unless told not to), our state, log entries, kept
// answers and controls of each are erased and the person remembered for that installation, and the
// person goes on the suppression list, so neither the service nor any installation answers about them
// again. What happened is counted per installation; nothing names the person. The same for records
// whose person the CRM itself asks us to forget (forgetRecords), for that installation alone.
import type { Identifiers, SuppressionList } from '../core/suppression/list.ts';
import { type SuppressOutcome, type Suppressor, personDigests, suppress } from '../core/suppression/operations.ts';
import { retryWhileBusy } from '../core/storage/errors.ts';
import type { CrmConnector, CrmRecord } from './connector.ts';
import type { CrmValue, Installation } from './model.ts';
import type { PipelineStore } from './store.ts';

export interface PersonErasureDeps {
  readonly store: PipelineStore;
  readonly connectorFor: (installation: Installation) => Promise<CrmConnector>;
  readonly suppressor: Suppressor;
}

export interface InstallationErasure {
  readonly installation: Installation;
  /** Records of the installation enriched for the person, each erased from our state. */
  readonly records: number;
  /** Records whose properties we wrote were blanked in the CRM (or were gone from it). */
  readonly blanked: number;
  /** Records the CRM refused to blank, or could not be reached for (their state is erased all the same). */
  readonly notBlanked: number;
}

export interface PersonErasure {
  readonly installations: readonly InstallationErasure[];
  /** The suppression list after the person was added to it. */
  readonly suppressed: SuppressOutcome;
}

export async function erasePerson(
  deps: PersonErasureDeps,
  identifiers: Identifiers,
  options: { readonly blankCrm: boolean; readonly actor: string },
): Promise<PersonErasure> {
  const digests = personDigests(deps.suppressor.list, identifiers);
  const records = await deps.store.recordsWithIdentifiers(digests);
  const byInstallation = new Map<string, Map<string, string[]>>();
  for (const record of records) {
    const objects = byInstallation.get(record.installationId) ?? new Map<string, string[]>();
    objects.set(record.object, [...(objects.get(record.object) ?? []), record.recordId]);
    byInstallation.set(record.installationId, objects);
  }
  const done: InstallationErasure[] = [];
  for (const [installationId, objects] of byInstallation) {
    const installation = await deps.store.findInstallation(installationId);
    if (installation === undefined) continue;
    let blanked = 0;
    let notBlanked = 0;
    let count = 0;
    for (const [object, ids] of objects) {
      count += ids.length;
      if (options.blankCrm) {
        const result = await blank(deps, installation, object, ids);
        blanked += result.blanked;
        notBlanked += result.notBlanked;
      }
      // Erased after the blanking: the state says which properties were ours to blank.
      // A server writing beside the command may hold the database a moment: waited out, not failed.
      for (const id of ids) await retryWhileBusy(() => deps.store.eraseRecord(installation.id, object, id, { suppress: true }));
    }
    done.push({ installation, records: count, blanked, notBlanked });
  }
  const suppressed = await retryWhileBusy(() => suppress(deps.suppressor, identifiers, { household: false, actor: options.actor }));
  return { installations: done, suppressed };
}

/** Empties, in the CRM, every property we last wrote on these records (none: nothing to blank, nothing sent). */
async function blank(
  deps: PersonErasureDeps,
  installation: Installation,
  object: string,
  ids: readonly string[],
): Promise<{ blanked: number; notBlanked: number }> {
  let connector: CrmConnector;
  try {
    connector = await deps.connectorFor(installation);
  } catch {
    // No credentials (a revoked app, a key rotated by hand): our side is erased all the same.
    return { blanked: 0, notBlanked: (await deps.store.recordStates(installation.id, object, ids)).size };
  }
  return blankWritten(deps.store, connector, installation, object, ids);
}

async function blankWritten(
  store: PipelineStore,
  connector: CrmConnector,
  installation: Installation,
  object: string,
  ids: readonly string[],
): Promise<{ blanked: number; notBlanked: number }> {
  const states = await store.recordStates(installation.id, object, ids);
  const empty: CrmValue = connector.emptyValue ?? null;
  const updates = [...states.values()]
    .map((state) => ({ id: state.recordId, properties: Object.fromEntries(Object.keys(state.written).map((property) => [property, empty])) }))
    .filter((update) => Object.keys(update.properties).length > 0);
  let blanked = 0;
  let notBlanked = 0;
  for (let i = 0; i < updates.length; i += connector.maxBatch) {
    try {
      for (const result of await connector.write(object, updates.slice(i, i + connector.maxBatch))) {
        // A record the CRM no longer has holds nothing of ours.
        if (result.ok || result.reason === 'not_found') blanked += 1;
        else notBlanked += 1;
      }
    } catch {
      notBlanked += Math.min(connector.maxBatch, updates.length - i);
    }
  }
  return { blanked, notBlanked };
}

export interface ForgetDeps {
  readonly store: PipelineStore;
  readonly connector: CrmConnector;
  /** How identifiers are hashed (the suppression list's key); absent: only what the records' enrichments carried is remembered. */
  readonly suppressions?: SuppressionList | undefined;
}

/**
 * What forgetting some records did: each erased, with the household records that held one of their
 * answers; `blanked` of them had properties of ours emptied in the CRM (or were gone).
 */
export interface ForgottenRecords {
  readonly records: number;
  readonly blanked: number;
  readonly notBlanked: number;
}

/**
 * Records whose person the CRM itself asks us to forget (Salesforce: the Individual's "Forget this
 * Individual"). The person is remembered for the installation under the keyed hashes of the identifiers
 * each record carries now as well as those its enrichment carried (a record enriched before identifiers
 * were kept has only the former), so a record re-created with them is skipped as suppressed; the
 * properties we wrote there, and on a household record whose answer came from one of them, are blanked
 * in the CRM; then our state, log entries, kept answers and controls of each are erased. Run again on
 * the same records, it sends nothing and changes nothing.
 */
export async function forgetRecords(deps: ForgetDeps, installation: Installation, object: string, records: readonly CrmRecord[]): Promise<ForgottenRecords> {
  if (records.length === 0) return { records: 0, blanked: 0, notBlanked: 0 };
  if (deps.suppressions !== undefined) {
    const list = deps.suppressions;
    const digests = records.flatMap((record) => list.requestDigests({ ...deps.connector.toRequest(object, record), id: record.id }));
    if (digests.length > 0) await retryWhileBusy(() => deps.store.suppressForInstallation(installation.id, [...new Set(digests)]));
  }
  const ids = records.map((record) => record.id);
  // A household record (an NPSP household Account) holding one of their answers goes with them: found
  // by its row's mark, whatever the read carried and wherever the installation puts household fields now.
  const held = await deps.store.householdRecordsHeldBy(
    installation.id,
    ids.map((id) => `${object}/${id}`),
  );
  let { blanked, notBlanked } = await blankWritten(deps.store, deps.connector, installation, object, ids);
  for (const [householdObject, householdIds] of groupByObject(held)) {
    const households = await blankWritten(deps.store, deps.connector, installation, householdObject, householdIds);
    blanked += households.blanked;
    notBlanked += households.notBlanked;
    for (const id of householdIds) await retryWhileBusy(() => deps.store.eraseRecord(installation.id, householdObject, id, { suppress: true }));
  }
  for (const id of ids) await retryWhileBusy(() => deps.store.eraseRecord(installation.id, object, id, { suppress: true }));
  return { records: ids.length + held.length, blanked, notBlanked };
}

function groupByObject(records: readonly { object: string; recordId: string }[]): Map<string, string[]> {
  const grouped = new Map<string, string[]>();
  for (const { object, recordId } of records) grouped.set(object, [...(grouped.get(object) ?? []), recordId]);
  return grouped;
}
