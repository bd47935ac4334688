// `enrichbridge log`, `enrichbridge installations …` and `enrichbridge worker` as an operator runs them
// against a data folder the pipeline has worked on. Commands that only read run side by side: each CLI
// start costs seconds of CPU.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAccount } from '../../core/accounts/admin.ts';
import { NoSnapshotMatcher } from '../../core/enrich/production-matcher.ts';
import { EnrichService } from '../../core/enrich/service.ts';
import { MemoryRateLimiter } from '../../core/limits/rate-limiter.ts';
import { loadSecretBox } from '../../core/secrets/secret-box.ts';
import type { OpenedStorage } from '../../bridge/storage.ts';
import { type Bridge, ConnectorRegistry, createBridge } from '../../bridge/bridge.ts';
import type { Installation } from '../../bridge/model.ts';
import { enrichJob } from '../../bridge/enrich-job.ts';
import { Worker } from '../../bridge/worker.ts';
import { openDataFolder } from '../../server/runtime.ts';
import { tempDir } from '../support/harness.ts';
import { MemoryCrm, MemoryCrmConnector } from '../support/memory-crm.ts';
import { type Proc, cli, startProcess, killProcess } from '../support/processes.ts';
import { persona } from '../support/requests.ts';

const PROVIDER = 'memcrm';
const OBJECT = 'contact';

const LogEntriesSchema = z.array(
  z.object({ id: z.string(), installationId: z.string(), object: z.string(), recordId: z.string(), outcome: z.string(), fieldsWritten: z.array(z.string()) }),
);
const InstallationJsonSchema = z.object({
  id: z.string(),
  provider: z.string(),
  externalAccountId: z.string(),
  status: z.string(),
  settings: z.object({ overwriteMode: z.string() }),
});

interface Folder {
  readonly env: Record<string, string>;
  readonly opened: OpenedStorage;
  readonly bridge: Bridge;
  readonly crm: MemoryCrm;
  readonly enriched: Installation;
  readonly idle: Installation;
}

const cleanups: (() => Promise<void> | void)[] = [];
const running: Proc[] = [];

afterEach(async () => {
  for (const proc of running.splice(0)) await killProcess(proc);
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A data folder with two installations of one local account: `enriched` has had three records through
 * the pipeline (enriched, no match, no match key), `idle` nothing.
 */
async function setUp(): Promise<Folder> {
  const dataDir = tempDir('enrichbridge-pipeline-cli-');
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const key = randomBytes(32).toString('hex');
  const env = { DATA_DIR: dataDir, ENRICHBRIDGE_SECRET_KEY: key, LOG_LEVEL: 'info' };
  const opened = await openDataFolder(dataDir);
  cleanups.push(() => opened.store.close());
  const { store, queue, db } = opened;
  const crm = new MemoryCrm();
  const bridge = createBridge({
    db,
    store,
    queue,
    box: loadSecretBox({ dataDir, env: { ENRICHBRIDGE_SECRET_KEY: key } }),
    service: new EnrichService({ store, rateLimiter: new MemoryRateLimiter(), productionMatcher: new NoSnapshotMatcher() }),
    connectors: new ConnectorRegistry().register(PROVIDER, () => Promise.resolve(new MemoryCrmConnector(crm))),
  });
  await createAccount(store, 'owner', { careerIntelligence: true, rateLimit: 1000 });
  const install = (externalAccountId: string) =>
    bridge.installations.create({ provider: PROVIDER, externalAccountId, environment: 'sandbox', target: { kind: 'local', accountName: 'owner' } });
  const enriched = await install('portal-1');
  const idle = await install('portal-2');

  const amanda = persona('Amanda Taylor');
  crm.create(OBJECT, 'c-1', { first_name: amanda.first_name, last_name: amanda.last_name, email: amanda.email });
  crm.create(OBJECT, 'c-2', { first_name: 'Nobody', last_name: 'Known', email: 'nobody.known@example.com' });
  crm.create(OBJECT, 'c-3', { first_name: 'Name', last_name: 'Only' });
  for (const recordId of ['c-1', 'c-2', 'c-3']) await queue.enqueue(enrichJob(enriched.id, { object: OBJECT, recordId }));
  const worker = new Worker({ queue, jobs: bridge.jobs, workerId: 'test-worker' });
  while (await worker.runOnce()) {
    // drain
  }
  return { env, opened, bridge, crm, enriched, idle };
}

function lines(stdout: string): string[] {
  return stdout.split('\n').filter((line) => line !== '');
}

describe('enrichbridge log', () => {
  it('prints the entries of an installation or of a record, as text or JSON', async () => {
    const { env, enriched, idle } = await setUp();
    const [all, none, ofRecord, allJson, ofRecordJson] = await Promise.all([
      cli(['log', '--installation', enriched.id], env),
      cli(['log', '--installation', idle.id], env),
      cli(['log', '--record', 'c-1'], env),
      cli(['log', '--installation', enriched.id, '--json'], env),
      cli(['log', '--record', 'c-3', '--json'], env),
    ]);

    const byInstallation = lines(all.stdout);
    expect(byInstallation).toHaveLength(3);
    expect(byInstallation).toEqual(
      expect.arrayContaining([
        expect.stringMatching(new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\S+  ${enriched.id}  contact/c-1  enriched  wrote \\d+  \\d+ ms$`)),
        expect.stringMatching(new RegExp(`  ${enriched.id}  contact/c-2  no_match  wrote 4  \\d+ ms$`)),
        expect.stringMatching(new RegExp(`  ${enriched.id}  contact/c-3  skipped:no_match_key  wrote 1$`)),
      ]),
    );
    expect(none.stdout).toBe('no log entries\n');

    const byRecord = lines(ofRecord.stdout);
    expect(byRecord).toEqual([expect.stringContaining(`${enriched.id}  contact/c-1  enriched`)]);

    const json = LogEntriesSchema.parse(JSON.parse(allJson.stdout));
    expect(json.map((e) => [e.recordId, e.outcome]).sort()).toEqual([
      ['c-1', 'enriched'],
      ['c-2', 'no_match'],
      ['c-3', 'skipped:no_match_key'],
    ]);
    expect(json.every((e) => e.installationId === enriched.id && e.object === OBJECT)).toBe(true);
    expect(json.find((e) => e.recordId === 'c-1')?.fieldsWritten).toEqual(expect.arrayContaining(['wf_household_windfall_id', 'wf_status_enrichment_status']));
    const oneRecord = LogEntriesSchema.parse(JSON.parse(ofRecordJson.stdout));
    expect(oneRecord.map((e) => e.outcome)).toEqual(['skipped:no_match_key']);
  });
});

describe('the log of a disconnected installation', () => {
  it('is kept for the operator, as the disconnect page says: log --installation ID still prints it', async () => {
    const { env, bridge, enriched } = await setUp();
    await bridge.installations.remove(enriched.id);

    const { stdout } = await cli(['log', '--installation', enriched.id], env);

    expect(lines(stdout).map((line) => line.split('  ').slice(1, 4))).toEqual(
      expect.arrayContaining([
        [enriched.id, 'contact/c-1', 'enriched'],
        [enriched.id, 'contact/c-2', 'no_match'],
        [enriched.id, 'contact/c-3', 'skipped:no_match_key'],
      ]),
    );
    expect(lines(stdout)).toHaveLength(3);
  });
});

describe('tokens an installation enriches with', () => {
  it('a token an installation enriches with is named beside it and not revoked blind', async () => {
    const { env, enriched } = await setUp();
    if (enriched.target.kind !== 'local') throw new Error('a local installation was set up');
    const tokenId = enriched.target.tokenId;
    const [shown, refused] = await Promise.all([
      cli(['accounts', 'show', 'owner'], env),
      cli(['tokens', 'revoke', tokenId], env).then(
        () => undefined,
        (error: unknown) => error,
      ),
    ]);
    expect(shown.stdout).toMatch(new RegExp(`^  ${tokenId} .* live .* used by memcrm account portal-1 \\(installation ${enriched.id}\\)$`, 'm'));
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringContaining(`memcrm account portal-1 (installation ${enriched.id}) enriches with`) });
    expect(refused).toMatchObject({ stderr: expect.stringContaining('--force') });

    const forced = await cli(['tokens', 'revoke', tokenId, '--force'], env);
    expect(forced.stderr).toContain(`revoked; memcrm account portal-1 (installation ${enriched.id}) no longer enriches`);
    const json = z
      .object({
        tokens: z.array(
          z.object({ token: z.object({ id: z.string(), revokedAt: z.string().nullable() }), usedBy: z.object({ installation: z.string() }).nullable() }),
        ),
      })
      .parse(JSON.parse((await cli(['accounts', 'show', 'owner', '--json'], env)).stdout));
    expect(json.tokens.find((t) => t.token.id === tokenId)).toMatchObject({ usedBy: { installation: enriched.id }, token: { revokedAt: expect.any(String) } });
  });
});

describe('enrichbridge installations', () => {
  it('lists and shows installations, and names a missing one', async () => {
    const { env, enriched, idle } = await setUp();
    // Four reads, side by side; the last names a missing installation.
    const [listed, shownText, shownJson] = await Promise.all([
      cli(['installations', 'list'], env),
      cli(['installations', 'show', enriched.id], env),
      cli(['installations', 'show', enriched.id, '--json'], env),
      expect(cli(['installations', 'show', 'inst_missing'], env)).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringContaining('no installation inst_missing'),
      }),
    ]);

    expect(lines(listed.stdout)).toEqual([
      `${enriched.id}  memcrm portal-1  sandbox  active  tracked`,
      `${idle.id}  memcrm portal-2  sandbox  active  tracked`,
    ]);
    const shown = shownText.stdout;
    expect(shown).toMatch(new RegExp(`^installation\\s+${enriched.id}$`, 'm'));
    expect(shown).toMatch(/^crm\s+memcrm portal-1$/m);
    expect(shown).toMatch(/^environment\s+sandbox$/m);
    // The account by the name the operator gave it, its id beside.
    expect(shown).toMatch(/^target\s+local account owner \(acct_[\w-]+, token tok_\w+\)$/m);
    expect(shown).toMatch(/^status\s+active$/m);
    expect(shown).toMatch(/^overwrite mode\s+tracked$/m);
    const json = InstallationJsonSchema.parse(JSON.parse(shownJson.stdout));
    expect(json).toMatchObject({
      id: enriched.id,
      provider: PROVIDER,
      externalAccountId: 'portal-1',
      status: 'active',
      settings: { overwriteMode: 'tracked' },
    });
  });

  it('installations show says what is kept and for how long', async () => {
    const { env, enriched } = await setUp();
    const withRetention = { ...env, LOG_VALUES_RETENTION_DAYS: '30' };
    const [shownText, shownJson] = await Promise.all([
      cli(['installations', 'show', enriched.id], withRetention),
      cli(['installations', 'show', enriched.id, '--json'], withRetention),
    ]);
    const shown = shownText.stdout;
    expect(shown).toMatch(/^kept, and for how long$/m);
    expect(shown).toMatch(
      /^ {2}Written and replaced values: kept 30 days in the enrichment log, then purged \(the entries and their counts are kept\); Undo is offered within that time$/m,
    );
    expect(shown).toMatch(/^ {2}Kept answers: used up to 30 days \(the re-enrichment age\), sealed; older ones are purged as the installation's batches run$/m);
    expect(shown).toMatch(/^ {2}Console sessions: end after 8 hours, at sign-out, or when the installation is disconnected or disabled$/m);
    const json = z.object({ kept: z.array(z.object({ what: z.string(), kept: z.string() })) }).parse(JSON.parse(shownJson.stdout));
    expect(json.kept.map((item) => item.what)).toEqual(['Written and replaced values', 'Kept answers', 'Console sessions']);
    expect(json.kept[0]?.kept).toContain('kept 30 days');
  });

  it('changes settings, pauses and resumes one installation, leaving the other alone', async () => {
    const { env, bridge, enriched, idle } = await setUp();
    const changed = (await cli(['installations', 'settings', enriched.id, '--overwrite-mode', 'fill_empty', '--crm-api-share', '0.3'], env)).stdout;
    expect(changed).toMatch(/^overwrite mode\s+fill_empty$/m);
    expect(changed).toMatch(/^crm api share\s+30 % of the CRM's daily API allowance \(Salesforce\)$/m);

    expect((await cli(['installations', 'pause', enriched.id], env)).stdout).toBe(`paused ${enriched.id}\n`);
    // Two reads of the paused installation, side by side.
    const [listed, shown] = await Promise.all([cli(['installations', 'list'], env), cli(['installations', 'show', enriched.id], env)]);
    expect(lines(listed.stdout)).toContain(`${enriched.id}  memcrm portal-1  sandbox  paused  fill_empty`);
    expect(shown.stdout).toMatch(/^status\s+paused \(admin\)$/m);
    expect(await bridge.installations.require(enriched.id)).toMatchObject({ status: 'paused', pauseReason: 'admin' });

    expect((await cli(['installations', 'resume', enriched.id], env)).stdout).toBe(`resumed ${enriched.id}\n`);
    expect(await bridge.installations.require(enriched.id)).toMatchObject({ status: 'active', pauseReason: null, settings: { overwriteMode: 'fill_empty' } });
    expect(await bridge.installations.require(idle.id)).toMatchObject({ status: 'active', settings: { overwriteMode: 'tracked' } });
  });
});

describe('enrichbridge worker', () => {
  it('works the queue until SIGTERM, then exits 0', async () => {
    const { env, bridge, opened, enriched } = await setUp();
    // A paused installation's job needs no CRM to be worked: the worker logs it as skipped.
    await bridge.installations.pause(enriched.id);
    await opened.queue.enqueue(enrichJob(enriched.id, { object: OBJECT, recordId: 'c-9' }));

    const worker = startProcess(process.execPath, ['bin/enrichbridge.js', 'worker', '--concurrency', '1'], env);
    running.push(worker);
    await worker.waitFor(/"msg":"worker started"/);
    const deadline = Date.now() + 15_000;
    while ((await bridge.pipelineStore.listLog({ recordId: 'c-9' })).length === 0) {
      if (Date.now() > deadline) throw new Error(`the worker did not work the queue:\n${worker.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect((await bridge.pipelineStore.listLog({ recordId: 'c-9' })).map((e) => e.outcome)).toEqual(['skipped:installation_paused']);
    expect(await worker.stop()).toBe(0);
    expect(worker.output()).toContain('"msg":"worker stopped"');
    expect((await opened.queue.list()).filter((job) => job.state !== 'done')).toEqual([]);
  });
});
