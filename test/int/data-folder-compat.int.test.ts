// A data folder written by an earlier version opens unchanged: the fixture was made by main as of
// 2026-11-25 (test/fixtures/data-folder-2026-11-25/make.ts.txt), before the pipeline's storage moved
// out of core/. Its migrations keep their names, so nothing runs twice and nothing is lost.
import { chmodSync, cpSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.ts';
import { createLogger } from '../../server/logger.ts';
import { openRuntime } from '../../server/runtime.ts';
import { tempDir } from '../support/harness.ts';

const FIXTURE = path.resolve(import.meta.dirname, '../fixtures/data-folder-2026-11-25');

describe('a data folder made by an earlier version', () => {
  it('opens with its account, installation (secrets included), queued job and enrichment log', async () => {
    const dataDir = tempDir('enrichbridge-compat-');
    // A copy: the fixture stays as the earlier version left it. Its key is its secret.key (a test key).
    for (const file of ['enrichbridge.db', 'secret.key']) {
      cpSync(path.join(FIXTURE, file), path.join(dataDir, file));
      // As the earlier version left them (a checkout gives files 0644, which the key loader refuses).
      chmodSync(path.join(dataDir, file), 0o600);
    }
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
      expect((await runtime.bridge.pipelineStore.recordStates(id, 'contact', ['500'])).get('500')?.windfallId).toBe('wf-1');
    } finally {
      await runtime.close();
    }
  });
});
