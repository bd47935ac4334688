// Installations on a real SQLite file: secrets sealed at rest and bound to their row, settings defaults
// and validation, one installation per CRM account, the local target's own token, remote URL checks.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import Database, { type BetterSqlite3 } from '../../core/storage/better-sqlite3.ts';
import { afterEach, describe, expect, it } from 'vitest';
import { ZodError, z } from 'zod';
import { createAccount, issueToken } from '../../core/accounts/admin.ts';
import { NoSnapshotMatcher } from '../../core/enrich/production-matcher.ts';
import { EnrichService } from '../../core/enrich/service.ts';
import { MemoryRateLimiter } from '../../core/limits/rate-limiter.ts';
import { PERSONAS } from '../../core/sandbox/personas.ts';
import { SecretBoxError } from '../../core/secrets/secret-box.ts';
import { SQLITE_FILE_NAME } from '../../core/storage/sqlite.ts';
import { openStorage } from '../../bridge/storage.ts';
import { InstallationError, type NewInstallation, checkRemoteUrl } from '../../bridge/installations.ts';
import { type InstallationSettings, SPECIAL_CATEGORY_FIELDS } from '../../bridge/model.ts';
import { DuplicateInstallationError } from '../../bridge/store.ts';
import { KyselyPipelineStore } from '../../bridge/store/kysely-pipeline-store.ts';
import { PROVIDER, type PipelineHarness, startPipeline } from '../support/pipeline-harness.ts';
import { TEST_DATABASES } from '../support/databases.ts';
import { ENRICH_JOB } from '../../bridge/enrich-job.ts';

const REMOTE_TOKEN = 'remote-token-7f3c9a1e5b2d4f60';
const CRM_REFRESH = 'crm-refresh-token-a94b2c7d1e8f';
const CRM_SECRET = 'crm-client-secret-5d6e7f8a9b0c';

const harnesses: PipelineHarness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) {
    await h.close();
    rmSync(h.dataDir, { recursive: true, force: true });
  }
});

async function start(): Promise<PipelineHarness> {
  const h = await startPipeline();
  harnesses.push(h);
  return h;
}

function dbFile(h: PipelineHarness): string {
  return path.join(h.dataDir, SQLITE_FILE_NAME);
}

/** A second connection to the database file, as anyone with a copy of it would have. */
function rawDb(h: PipelineHarness, options: { readonly?: boolean } = {}): BetterSqlite3.Database {
  const db = new Database(dbFile(h), { readonly: options.readonly ?? true });
  db.pragma('busy_timeout = 2000');
  return db;
}

const RowSchema = z.object({ id: z.string(), secrets: z.string() }).passthrough();

function rawRow(h: PipelineHarness, id: string): z.infer<typeof RowSchema> {
  const db = rawDb(h);
  try {
    return RowSchema.parse(db.prepare('SELECT * FROM installations WHERE id = ?').get(id));
  } finally {
    db.close();
  }
}

function remote(externalAccountId: string, overrides: Partial<NewInstallation> = {}): NewInstallation {
  return {
    provider: PROVIDER,
    externalAccountId,
    environment: 'production',
    target: { kind: 'remote', url: 'https://enrich.example.com/v1/', token: REMOTE_TOKEN },
    crmCredentials: { refreshToken: CRM_REFRESH, clientSecret: CRM_SECRET },
    ...overrides,
  };
}

/** A service with a fresh credential cache: what it says about a token is what the database says now. */
function freshService(h: PipelineHarness): EnrichService {
  return new EnrichService({ store: h.opened.store, rateLimiter: new MemoryRateLimiter(), productionMatcher: new NoSnapshotMatcher() });
}

const AMANDA_EMAIL = PERSONAS[0]?.email ?? '';

describe('installation secrets', () => {
  it('are sealed at rest: neither the enrichment token nor the CRM credentials appear in the row or the file', async () => {
    const h = await start();
    await createAccount(h.opened.store, 'acme', {});
    const remoteInst = await h.bridge.installations.create(remote('portal-remote'));
    const localInst = await h.bridge.installations.create({
      provider: PROVIDER,
      externalAccountId: 'portal-local',
      environment: 'sandbox',
      target: { kind: 'local', accountName: 'acme' },
      crmCredentials: { refreshToken: CRM_REFRESH },
    });
    const localToken = (await h.bridge.installations.secrets(localInst.id)).enrichmentToken;
    expect(await h.bridge.installations.secrets(remoteInst.id)).toEqual({
      enrichmentToken: REMOTE_TOKEN,
      crm: { refreshToken: CRM_REFRESH, clientSecret: CRM_SECRET },
    });

    const secrets = [REMOTE_TOKEN, CRM_REFRESH, CRM_SECRET, localToken];
    for (const id of [remoteInst.id, localInst.id]) {
      const row = rawRow(h, id);
      expect(row.secrets).toMatch(/^v1\./);
      const text = JSON.stringify(row);
      for (const secret of secrets) expect(text).not.toContain(secret);
    }
    for (const file of [dbFile(h), `${dbFile(h)}-wal`]) {
      if (!existsSync(file)) continue;
      const bytes = readFileSync(file);
      for (const secret of secrets) expect(bytes.includes(secret)).toBe(false);
    }
  });

  it('a sealed value moved to another installation row does not open', async () => {
    const h = await start();
    const a = await h.bridge.installations.create(remote('portal-a'));
    const b = await h.bridge.installations.create(
      remote('portal-b', { target: { kind: 'remote', url: 'https://enrich.example.com/v1/', token: 'token-of-b' } }),
    );
    const db = rawDb(h, { readonly: false });
    try {
      db.prepare('UPDATE installations SET secrets = (SELECT secrets FROM installations WHERE id = ?) WHERE id = ?').run(a.id, b.id);
    } finally {
      db.close();
    }
    await expect(h.bridge.installations.secrets(b.id)).rejects.toSatisfy(
      (error) => error instanceof SecretBoxError && error.reason === 'authentication_failed',
    );
    expect((await h.bridge.installations.secrets(a.id)).enrichmentToken).toBe(REMOTE_TOKEN);
  });

  it('updated CRM credentials are sealed again and keep the enrichment token', async () => {
    const h = await start();
    const inst = await h.bridge.installations.create(remote('portal-a'));
    const before = rawRow(h, inst.id).secrets;
    await h.bridge.installations.updateCrmCredentials(inst.id, { refreshToken: 'rotated-refresh-0c1d2e3f' });
    const after = rawRow(h, inst.id);
    expect(after.secrets).not.toBe(before);
    expect(JSON.stringify(after)).not.toContain('rotated-refresh-0c1d2e3f');
    expect(await h.bridge.installations.secrets(inst.id)).toEqual({ enrichmentToken: REMOTE_TOKEN, crm: { refreshToken: 'rotated-refresh-0c1d2e3f' } });
  });
});

describe('installation settings', () => {
  it('default to enrich on create, tracked, 30 days, minimum confidence 0, all objects, every field but the political ones, answers reused, no budget, no scheduled refresh, half the CRM’s API allowance, household fields on the person’s record', async () => {
    const h = await start();
    const inst = await h.bridge.installations.create(remote('portal-a'));
    const defaults = {
      enrichOnCreate: true,
      overwriteMode: 'tracked',
      reenrichAfterDays: 30,
      minConfidence: 0,
      objects: [],
      excludedFields: ['household.political_party', 'household.political_donor', 'household.top_political_donor'],
      reuseAnswers: true,
      monthlyBudget: null,
      refreshAfterDays: null,
      refreshShare: 0.2,
      crmApiShare: 0.5,
      householdFieldsOn: 'record',
    };
    expect(inst.settings).toEqual(defaults);
    expect((await h.bridge.installations.require(inst.id)).settings).toEqual(defaults);
    const partial = await h.bridge.installations.create(remote('portal-b', { settings: { minConfidence: 0.5 } }));
    expect(partial.settings).toEqual({ ...defaults, minConfidence: 0.5 });
  });

  it('start a new installation with the political fields off (special-category data in the EU), and keep them on once an admin turns them on', async () => {
    const h = await start();
    const inst = await h.bridge.installations.create(remote('portal-political'));
    expect(inst.settings.excludedFields).toEqual([...SPECIAL_CATEGORY_FIELDS]);
    const on = await h.bridge.installations.updateSettings(inst.id, { excludedFields: [] });
    expect(on.settings.excludedFields).toEqual([]);
    expect((await h.bridge.installations.require(inst.id)).settings.excludedFields).toEqual([]);
    // An installation made with settings of its own names what it excludes itself.
    const chosen = await h.bridge.installations.create(remote('portal-chosen', { settings: { excludedFields: ['career.job_title'] } }));
    expect(chosen.settings.excludedFields).toEqual(['career.job_title']);
  });

  const invalid: [string, unknown][] = [
    ['an unknown overwrite mode', { overwriteMode: 'sometimes' }],
    ['a negative re-enrichment age', { reenrichAfterDays: -1 }],
    ['a fractional re-enrichment age', { reenrichAfterDays: 1.5 }],
    ['a confidence above 1', { minConfidence: 1.5 }],
    ['a negative confidence', { minConfidence: -0.1 }],
    ['an empty object name', { objects: [''] }],
    ['a flag that is not a boolean', { enrichOnCreate: 'yes' }],
    ['a budget of no units', { monthlyBudget: 0 }],
    ['a refresh age other than 30, 60 or 90 days', { refreshAfterDays: 45 }],
    ['an unknown setting', { overwrite: 'always' }],
  ];

  it.each(invalid)('are refused by the schema: %s, and nothing is created', async (_what, settings) => {
    const h = await start();
    const account = await createAccount(h.opened.store, 'acme', {});
    const input: NewInstallation = {
      provider: PROVIDER,
      externalAccountId: 'portal-a',
      environment: 'sandbox',
      target: { kind: 'local', accountName: 'acme' },
      settings: settings as Partial<InstallationSettings>,
    };
    await expect(h.bridge.installations.create(input)).rejects.toBeInstanceOf(ZodError);
    expect(await h.bridge.pipelineStore.listInstallations()).toEqual([]);
    expect(await h.opened.store.listTokens(account.id)).toEqual([]);
  });

  it('are refused by the schema on update, and left as they were', async () => {
    const h = await start();
    const inst = await h.bridge.installations.create(remote('portal-a', { settings: { overwriteMode: 'always' } }));
    const bad: unknown = { overwriteMode: 'sometimes' };
    await expect(h.bridge.installations.updateSettings(inst.id, bad as Partial<InstallationSettings>)).rejects.toBeInstanceOf(ZodError);
    expect((await h.bridge.installations.require(inst.id)).settings.overwriteMode).toBe('always');
    const updated = await h.bridge.installations.updateSettings(inst.id, { excludedFields: ['household.net_worth'] });
    expect(updated.settings).toMatchObject({ overwriteMode: 'always', excludedFields: ['household.net_worth'] });
  });
});

describe('one installation per CRM account', () => {
  it('refuses a second installation of the same provider and external account, without issuing a token', async () => {
    const h = await start();
    const account = await createAccount(h.opened.store, 'acme', {});
    const input: NewInstallation = {
      provider: PROVIDER,
      externalAccountId: 'portal-1',
      environment: 'sandbox',
      target: { kind: 'local', accountName: 'acme' },
    };
    const first = await h.bridge.installations.create(input);
    await expect(h.bridge.installations.create(input)).rejects.toThrow(InstallationError);
    await expect(h.bridge.installations.create(input)).rejects.toThrow(new RegExp(`already connected as ${first.id}`));
    expect(await h.opened.store.listTokens(account.id)).toHaveLength(1);
    // Another provider may use the same external id.
    await h.bridge.installations.create({ ...input, provider: 'othercrm' });
    expect(await h.bridge.pipelineStore.listInstallations()).toHaveLength(2);
  });

  it('the database refuses the duplicate too, when two creations race past the check', async () => {
    const h = await start();
    const first = await h.bridge.installations.create(remote('portal-1'));
    await expect(
      h.bridge.pipelineStore.createInstallation({
        id: 'inst_racer',
        provider: first.provider,
        externalAccountId: first.externalAccountId,
        environment: 'production',
        target: first.target,
        sealedSecrets: 'v1.x.y.z',
        settings: first.settings,
      }),
    ).rejects.toBeInstanceOf(DuplicateInstallationError);
  });
});

describe('local target', () => {
  it('gets a token of its own that enriches, and remove() revokes only that one', async () => {
    const h = await start();
    const account = await createAccount(h.opened.store, 'acme', { careerIntelligence: true });
    const own = await issueToken(h.opened.store, 'acme', 'sandbox');
    const inst = await h.bridge.installations.create({
      provider: PROVIDER,
      externalAccountId: 'portal-1',
      environment: 'sandbox',
      target: { kind: 'local', accountName: 'acme' },
    });
    if (inst.target.kind !== 'local') throw new Error('a local target was expected');
    expect(inst.target.accountId).toBe(account.id);
    const tokenId = inst.target.tokenId;
    expect(tokenId).not.toBe(own.record.id);
    const token = (await h.bridge.installations.secrets(inst.id)).enrichmentToken;
    expect(token).not.toBe(own.token);

    const enrich = (t: string) => freshService(h).enrichRecord({ environment: 'sandbox', token: t, readBody: () => ({ emails: [AMANDA_EMAIL] }) });
    const before = await enrich(token);
    expect(before.ok && before.response.household_matched).toBe(true);

    await h.bridge.installations.remove(inst.id);
    await expect(h.bridge.installations.require(inst.id)).rejects.toThrow(InstallationError);
    const tokens = await h.opened.store.listTokens(account.id);
    expect(tokens.find((t) => t.id === tokenId)?.revokedAt).not.toBeNull();
    expect(tokens.find((t) => t.id === own.record.id)?.revokedAt).toBeNull();
    const after = await enrich(token);
    expect(after.ok ? 'ok' : after.error.code).toBe('unauthorized');
    expect((await enrich(own.token)).ok).toBe(true);
  });

  it('remove() forgets the record states and keeps the enrichment log', async () => {
    const h = await start();
    const inst = await h.install();
    h.crm.create('contact', 'c1', { email: AMANDA_EMAIL });
    await h.enqueue(inst, { object: 'contact', recordId: 'c1' });
    await h.drain();
    expect((await h.bridge.pipelineStore.recordStates(inst.id, 'contact', ['c1'])).size).toBe(1);
    await h.bridge.installations.remove(inst.id);
    expect((await h.bridge.pipelineStore.recordStates(inst.id, 'contact', ['c1'])).size).toBe(0);
    expect((await h.bridge.pipelineStore.listLog({ installationId: inst.id })).map((e) => e.outcome)).toEqual(['enriched']);
  });
});

describe.each(TEST_DATABASES)('a disconnect on $name', (database) => {
  async function startOn(): Promise<PipelineHarness> {
    const h = await startPipeline({ database });
    harnesses.push(h);
    return h;
  }

  it('removes its queued, running and dead jobs: none is listed or can be retried, and another installation keeps its own', async () => {
    const h = await startOn();
    const gone = await h.install();
    const kept = await h.install();
    const { queue } = h.opened;
    // One dead (claimed and failed for good), one running (claimed by a worker still at it), one queued.
    const dead = await h.enqueue(gone, { object: 'contact', recordId: 'd1' });
    await queue.claimBatch({ workerId: 'w-1', limit: 1, leaseMs: 60_000 });
    expect(await queue.fail(dead.id, 'w-1', 'HTTP 400 from the CRM', { retryable: false })).toBe('dead');
    const running = await h.enqueue(gone, { object: 'contact', recordId: 'r1' });
    expect((await queue.claimBatch({ workerId: 'w-2', limit: 1, leaseMs: 60_000 })).map((job) => job.id)).toEqual([running.id]);
    await h.enqueue(gone, { object: 'contact', recordId: 'q1' });
    const other = await h.enqueue(kept, { object: 'contact', recordId: 'k1' });

    await h.bridge.installations.remove(gone.id);

    expect((await queue.list()).map((job) => job.id)).toEqual([other.id]);
    expect(await queue.list({ state: 'dead' })).toEqual([]);
    expect(await queue.retryDead([dead.id])).toBe(0);
    expect(await queue.retryDead('all')).toBe(0);
    // The worker that held one settles nothing of it.
    expect(await queue.complete(running.id, 'w-2')).toBe(false);
    expect(await queue.countByState()).toEqual({ queued: 1 });
  });

  it('leaves no dead job behind for one queued after it (a webhook in flight): it is settled without running', async () => {
    const h = await startOn();
    const gone = await h.install();
    await h.bridge.installations.remove(gone.id);
    h.crm.create('contact', 'late', { email: AMANDA_EMAIL });

    await h.opened.queue.enqueue({ installationId: gone.id, kind: ENRICH_JOB, payload: { object: 'contact', recordId: 'late' } });
    await h.drain();

    expect(await h.opened.queue.list({ state: 'dead' })).toEqual([]);
    expect(await h.opened.queue.countByState()).toEqual({ done: 1 });
    expect(h.crm.get('contact', 'late')).toEqual({ email: AMANDA_EMAIL });
  });
});

describe('remote target', () => {
  it.each([
    ['credentials in the URL', 'https://user:secret-pass@enrich.example.com/v1/'],
    ['a user name in the URL', 'https://user@enrich.example.com/v1/'],
    ['another scheme', 'ftp://enrich.example.com/v1/'],
    ['a file URL', 'file:///etc/passwd'],
    ['a relative URL', '/v1/'],
    ['no URL at all', 'not a url'],
  ])('refuses %s', (_what, url) => {
    expect(() => checkRemoteUrl(url)).toThrow(InstallationError);
  });

  it('does not echo a malformed URL, which may still carry a secret', () => {
    expect(() => checkRemoteUrl('https//user:secret-pass@enrich.example.com')).toThrow(InstallationError);
    expect(() => checkRemoteUrl('https//user:secret-pass@enrich.example.com')).not.toThrow(/secret-pass/);
  });

  it.each(['https://enrich.example.com/v1/', 'http://127.0.0.1:3000/sandbox/v1'])('accepts %s', (url) => {
    expect(checkRemoteUrl(url)).toBe(url);
  });

  it('create() refuses a URL with credentials without echoing them, and a blank token; nothing is stored', async () => {
    const h = await start();
    const withCredentials = remote('portal-1', { target: { kind: 'remote', url: 'https://user:secret-pass@enrich.example.com/v1/', token: REMOTE_TOKEN } });
    await expect(h.bridge.installations.create(withCredentials)).rejects.toSatisfy(
      (error) => error instanceof InstallationError && !error.message.includes('secret-pass'),
    );
    const blankToken = remote('portal-1', { target: { kind: 'remote', url: 'https://enrich.example.com/v1/', token: '  ' } });
    await expect(h.bridge.installations.create(blankToken)).rejects.toThrow(InstallationError);
    expect(await h.bridge.pipelineStore.listInstallations()).toEqual([]);
  });
});

describe('installation status', () => {
  it('pause, resume and disable set the status; a disabled installation cannot be resumed', async () => {
    const h = await start();
    const inst = await h.bridge.installations.create(remote('portal-1'));
    expect(inst).toMatchObject({ status: 'active', pauseReason: null, pausedUntil: null });
    expect(await h.bridge.installations.pause(inst.id)).toMatchObject({ status: 'paused', pauseReason: 'admin', pausedUntil: null });
    expect(await h.bridge.installations.resume(inst.id)).toMatchObject({ status: 'active', pauseReason: null });
    expect(await h.bridge.installations.disable(inst.id)).toMatchObject({ status: 'disabled' });
    await expect(h.bridge.installations.resume(inst.id)).rejects.toThrow(InstallationError);
    expect((await h.bridge.installations.require(inst.id)).status).toBe('disabled');
  });
});

describe('credential lease across processes', () => {
  it('runs one credential refresh at a time per installation, even from two database connections', async () => {
    const first = await startPipeline();
    const installation = await first.install();
    // A second connection to the same data folder stands in for a second process.
    const second = await openStorage(path.join(first.dataDir, SQLITE_FILE_NAME));
    const otherStore = new KyselyPipelineStore(second.db);
    try {
      let inside = 0;
      let most = 0;
      const work = async () => {
        inside += 1;
        most = Math.max(most, inside);
        await new Promise((resolve) => setTimeout(resolve, 50));
        inside -= 1;
      };
      const lockVia = (store: KyselyPipelineStore) => async () => {
        const owner = `owner-${Math.random()}`;
        while (!(await store.acquireLease(`credentials:${installation.id}`, owner, 60_000))) await new Promise((r) => setTimeout(r, 10));
        try {
          await work();
        } finally {
          await store.releaseLease(`credentials:${installation.id}`, owner);
        }
      };
      await Promise.all([
        first.bridge.installations.withCredentialLock(installation.id, work),
        lockVia(otherStore)(),
        first.bridge.installations.withCredentialLock(installation.id, work),
        lockVia(otherStore)(),
      ]);
      expect(most).toBe(1);
    } finally {
      await second.store.close();
      await first.close();
    }
  });

  it('takes over a lease whose holder died (expired), and refuses one still held', async () => {
    const h = await startPipeline();
    try {
      const store = h.bridge.pipelineStore;
      expect(await store.acquireLease('k', 'dead-holder', 1)).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 5));
      expect(await store.acquireLease('k', 'new-holder', 60_000)).toBe(true);
      expect(await store.acquireLease('k', 'third', 60_000)).toBe(false);
      await store.releaseLease('k', 'third'); // not the holder: nothing happens
      expect(await store.acquireLease('k', 'third', 60_000)).toBe(false);
      await store.releaseLease('k', 'new-holder');
      expect(await store.acquireLease('k', 'third', 60_000)).toBe(true);
    } finally {
      await h.close();
    }
  });
});
