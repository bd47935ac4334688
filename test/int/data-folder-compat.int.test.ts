// A data folder written by an earlier version opens unchanged: the fixture was made by main as of
// 2026-11-25 (test/fixtures/data-folder-2026-11-25/make.ts.txt), before the pipeline's storage moved
// out of core/, and kept as the SQL dump of its database (text to review, not a binary file). Its
// migrations keep their names, so nothing runs twice and nothing is lost.
import { chmodSync, cpSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import Database from '../../core/storage/better-sqlite3.ts';
import { SQLITE_FILE_NAME } from '../../core/storage/sqlite.ts';
import { loadConfig } from '../../server/config.ts';
import { createLogger } from '../../server/logger.ts';
import { openRuntime } from '../../server/runtime.ts';
import { tempDir } from '../support/harness.ts';

const FIXTURE = path.resolve(import.meta.dirname, '../fixtures/data-folder-2026-11-25');

describe('a data folder made by an earlier version', () => {
  it('opens with its account, installation (secrets included), queued job and enrichment log', async () => {
    const dataDir = tempDir('enrichbridge-compat-');
    // The database as the earlier version left it, from its dump; its key is its secret.key (a test
    // key), 0600 as the earlier version wrote it (a checkout gives 0644, which the key loader refuses).
    const database = new Database(path.join(dataDir, SQLITE_FILE_NAME));
    database.exec(readFileSync(path.join(FIXTURE, 'enrichbridge.sql'), 'utf8'));
    database.close();
    cpSync(path.join(FIXTURE, 'secret.key'), path.join(dataDir, 'secret.key'));
    chmodSync(path.join(dataDir, 'secret.key'), 0o600);
    const runtime = await openRuntime(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), createLogger('silent'), undefined, 'command');
    try {
      expect((await runtime.opened.store.findAccountByName('acme'))?.careerIntelligence).toBe(true);
      const installation = await runtime.bridge.pipelineStore.findInstallationByAccount('hubspot', '62515');
      expect(installation).toMatchObject({ provider: 'hubspot', environment: 'sandbox', status: 'active' });
      const id = installation?.id ?? '';
      expect((await runtime.bridge.installations.secrets(id)).crm).toMatchObject({ kind: 'static', accessToken: 'pat-na1-fixture' });
      const jobs = await runtime.opened.queue.list();
      expect(jobs.map((job) => ({ installationId: job.installationId, kind: job.kind, state: job.state, payload: job.payload }))).toEqual([
        { installationId: id, kind: 'enrich', state: 'queued', payload: { object: 'contact', recordId: '501', trigger: 'create' } },
      ]);
      const log = await runtime.bridge.pipelineStore.listLog({ installationId: id, limit: 10 });
      expect(log.map((entry) => [entry.recordId, entry.outcome, entry.fieldsWritten])).toEqual([['500', 'enriched', ['wf_household_windfall_id']]]);
      // Logged before the log kept the values written (0015_log_changes): none, not a parse error.
      expect(log[0]?.changes).toEqual({});
      expect((await runtime.bridge.pipelineStore.recordStates(id, 'contact', ['500'])).get('500')?.windfallId).toBe('wf-1');
    } finally {
      await runtime.close();
    }
  });
});
