// The PipelineStore port (../store.ts) on the service database, SQLite or PostgreSQL through Kysely's
// shared subset: each table's queries in a file of their own, composed here, with the transactions
// that span tables (saving a batch's outcomes, removing an installation) written out in this file.
import type { Kysely } from 'kysely';
import { HOST_CLOCK, type LeaseClock } from '../../core/storage/database-clock.ts';
import type { Installation, LogEntry, RecordControl, RecordState, StoredAnswer } from '../model.ts';
import type { PipelineDatabase as Database } from '../schema.ts';
import type { DailyOutcome, InstallationPatch, LogQuery, LogSearch, NewInstallationRow, PipelineStore, RecordControlPatch } from '../store.ts';
import * as controls from './record-controls-table.ts';
import * as log from './enrichment-log-table.ts';
import { type ErasureWarning, afterErasure, eraseRecord, erasedAmong } from './erasure.ts';
import * as installations from './installations-table.ts';
import { acquireLease, releaseLease } from './leases-table.ts';
import * as states from './record-states-table.ts';
import * as identifiers from './record-identifiers-table.ts';
import * as answers from './reusable-answers-table.ts';

export class KyselyPipelineStore implements PipelineStore {
  constructor(
    private readonly db: Kysely<Database>,
    /** Leases are taken and compared on the database's clock, whichever host takes them. */
    private readonly clock: LeaseClock = HOST_CLOCK,
    /** Where an erasure whose bytes could not yet leave the disk is reported. */
    private readonly warn: ErasureWarning = () => undefined,
  ) {}

  createInstallation(row: NewInstallationRow): Promise<Installation> {
    return installations.createInstallation(this.db, row);
  }

  findInstallation(id: string): Promise<Installation | undefined> {
    return installations.findInstallation(this.db, id);
  }

  findInstallationByAccount(provider: string, externalAccountId: string): Promise<Installation | undefined> {
    return installations.findInstallationByAccount(this.db, provider, externalAccountId);
  }

  listInstallations(): Promise<Installation[]> {
    return installations.listInstallations(this.db);
  }

  updateInstallation(id: string, patch: InstallationPatch): Promise<Installation | undefined> {
    return installations.updateInstallation(this.db, id, patch);
  }

  async deleteInstallation(id: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      await states.deleteInstallationStates(trx, id);
      await trx.deleteFrom('record_identifiers').where('installation_id', '=', id).execute();
      await trx.deleteFrom('installation_suppressions').where('installation_id', '=', id).execute();
      await log.clearLoggedValues(trx, id);
      return installations.deleteInstallationRow(trx, id);
    });
  }

  sealedSecrets(id: string): Promise<string | undefined> {
    return installations.sealedSecrets(this.db, id);
  }

  recordStates(installationId: string, object: string, recordIds: readonly string[]): Promise<Map<string, RecordState>> {
    return states.recordStates(this.db, installationId, object, recordIds);
  }

  householdRecordsHeldBy(installationId: string, sources: readonly string[]): Promise<{ object: string; recordId: string }[]> {
    return states.householdRecordsHeldBy(this.db, installationId, sources);
  }

  staleRecords(installationId: string, beforeIso: string, limit: number): Promise<{ object: string; recordId: string; enrichedAt: string }[]> {
    return states.staleRecords(this.db, installationId, beforeIso, limit);
  }

  moveRecordState(installationId: string, object: string, fromId: string, toId: string): Promise<boolean> {
    return states.moveRecordState(this.db, installationId, object, fromId, toId);
  }

  recordControls(installationId: string, object: string, recordIds: readonly string[]): Promise<Map<string, RecordControl>> {
    return controls.recordControls(this.db, installationId, object, recordIds);
  }

  async saveRecordAction(entry: LogEntry, control: RecordControlPatch, state?: RecordState): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const erased = await erasedAmong(trx, [entry]);
      if (erased(entry)) return;
      if (Object.keys(control).length > 0) await controls.updateRecordControl(trx, entry, control, entry.at);
      if (state !== undefined) await states.upsertStates(trx, [state]);
      await log.insertEntries(trx, [entry]);
    });
  }

  async saveOutcomes(allStates: readonly RecordState[], allEntries: readonly LogEntry[], allAnswers: readonly StoredAnswer[] = []): Promise<void> {
    if (allStates.length === 0 && allEntries.length === 0 && allAnswers.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      // A record erased while its batch ran (a deletion or privacy request arrived meanwhile) is not
      // saved again: checked inside the transaction, so an erasure is never undone (on PostgreSQL the
      // transaction first waits for any erasure of these installations in flight, and holds them off).
      const erased = await erasedAmong(trx, [...allStates, ...allEntries, ...allAnswers]);
      // One row per question: the newest answer wins (an upsert may not touch a row twice in one statement).
      const kept = [
        ...new Map(allAnswers.filter((answer) => !erased(answer)).map((answer) => [`${answer.installationId}\u0000${answer.inputHash}`, answer])).values(),
      ];
      await answers.upsertAnswers(trx, kept);
      const saved = allStates.filter((state) => !erased(state));
      await states.upsertStates(trx, saved);
      await identifiers.replaceIdentifiers(trx, saved);
      // A new enrichment ends an undo (and an exclusion lifted in the CRM): the record shows it, and is
      // enriched automatically again.
      await controls.clearControls(trx, saved);
      await log.insertEntries(
        trx,
        allEntries.filter((entry) => !erased(entry)),
      );
    });
  }

  listLog(query: LogQuery): Promise<LogEntry[]> {
    return log.listLog(this.db, query);
  }

  searchLog(search: LogSearch): Promise<LogEntry[]> {
    return log.searchLog(this.db, search);
  }

  findLogEntry(installationId: string, id: string): Promise<LogEntry | undefined> {
    return log.findLogEntry(this.db, installationId, id);
  }

  unitsSince(installationId: string, sinceIso: string): Promise<number> {
    return log.unitsSince(this.db, installationId, sinceIso);
  }

  dailyOutcomes(installationId: string, sinceIso: string): Promise<DailyOutcome[]> {
    return log.dailyOutcomes(this.db, installationId, sinceIso);
  }

  purgeLogValues(beforeIso: string, purgedAtIso: string, limit: number): Promise<number> {
    return log.purgeLogValues(this.db, beforeIso, purgedAtIso, limit);
  }

  findAnswers(installationId: string, hashes: readonly string[], notBeforeIso: string): Promise<Map<string, StoredAnswer>> {
    return answers.findAnswers(this.db, installationId, hashes, notBeforeIso);
  }

  latestAnswerVersion(installationId: string): Promise<string | null | undefined> {
    return answers.latestAnswerVersion(this.db, installationId);
  }

  purgeAnswers(installationId: string, beforeIso: string): Promise<number> {
    return answers.purgeAnswers(this.db, installationId, beforeIso);
  }

  acquireLease(key: string, owner: string, ms: number): Promise<boolean> {
    return acquireLease(this.db, this.clock, key, owner, ms);
  }

  releaseLease(key: string, owner: string): Promise<void> {
    return releaseLease(this.db, key, owner);
  }

  eraseRecord(installationId: string, object: string, recordId: string, options: { readonly suppress?: boolean } = {}): Promise<void> {
    return eraseRecord(this.db, installationId, object, recordId, this.warn, options.suppress === true);
  }

  recordsWithIdentifiers(digests: readonly string[]): Promise<identifiers.RecordRef[]> {
    return identifiers.recordsWithIdentifiers(this.db, digests);
  }

  suppressedForInstallation(installationId: string, digests: readonly string[]): Promise<Set<string>> {
    return identifiers.suppressedForInstallation(this.db, installationId, digests);
  }

  suppressForInstallation(installationId: string, digests: readonly string[]): Promise<void> {
    return identifiers.suppressForInstallation(this.db, installationId, digests);
  }

  afterErasure(installationId: string): Promise<void> {
    return afterErasure(this.db, this.warn, { installation: installationId, erased: 'installation' });
  }
}
