// `enrichbridge salesforce connect|disconnect` as an operator runs them: the CLI as a child process on a
// temporary data folder, the org as the fake on loopback (allowed only with SALESFORCE_ALLOW_ANY_HOST=true).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAccount, describeAccount } from '../../core/accounts/admin.ts';
import { openDataFolder } from '../../server/runtime.ts';
import { type FakeSalesforce, startFakeSalesforce } from '../support/fake-salesforce.ts';
import { asJson, withFolderRuntime } from '../support/folder-runtime.ts';
import { tempDir } from '../support/harness.ts';
import { REPO } from '../support/processes.ts';

const execFileAsync = promisify(execFile);
const FailureSchema = z.object({ code: z.number(), stdout: z.string(), stderr: z.string() });
const InstallationSchema = z
  .object({ id: z.string(), provider: z.string(), externalAccountId: z.string(), environment: z.string(), status: z.string() })
  .loose();
const AccountJsonSchema = z.object({
  tokens: z.array(z.object({ token: z.object({ id: z.string(), environment: z.string(), revokedAt: z.string().nullable() }) })),
});

interface Folder {
  readonly dataDir: string;
  readonly fake: FakeSalesforce;
  /** The folder's own settings (data folder, key, any host allowed): what in-process reads open it with. */
  readonly env: Readonly<Record<string, string>>;
  /** `enrichbridge …` on this folder; `env` adds to the folder's environment (SALESFORCE_ALLOW_ANY_HOST=true unless removed). */
  run(args: readonly string[], env?: Record<string, string | undefined>): Promise<{ stdout: string; stderr: string }>;
  fail(args: readonly string[], env?: Record<string, string | undefined>): Promise<{ code: number; stdout: string; stderr: string }>;
  /** The `salesforce connect` arguments for the fake org, with `overrides` replacing flags by name. */
  connectArgs(overrides?: Record<string, string>): string[];
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setUp(): Promise<Folder> {
  const dataDir = tempDir('enrichbridge-salesforce-cli-');
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const fake = await startFakeSalesforce();
  cleanups.push(() => fake.close());
  // Whatever the shell running the tests has set must not decide what these commands see.
  const inherited = Object.entries(process.env).filter(([name]) => name !== 'PUBLIC_URL' && !name.startsWith('SALESFORCE_') && !name.startsWith('HUBSPOT_'));
  const own = { DATA_DIR: dataDir, ENRICHBRIDGE_SECRET_KEY: randomBytes(32).toString('hex'), SALESFORCE_ALLOW_ANY_HOST: 'true' };
  const base: Record<string, string | undefined> = { ...Object.fromEntries(inherited), ...own, LOG_LEVEL: 'warn' };
  const envWith = (env: Record<string, string | undefined>) =>
    Object.fromEntries(Object.entries({ ...base, ...env }).filter((e): e is [string, string] => e[1] !== undefined));
  const run = (args: readonly string[], env: Record<string, string | undefined> = {}) =>
    execFileAsync(process.execPath, [path.join(REPO, 'bin/enrichbridge.js'), ...args], { cwd: REPO, env: envWith(env), timeout: 20_000 });
  const fail = async (args: readonly string[], env: Record<string, string | undefined> = {}) => {
    try {
      const { stdout, stderr } = await run(args, env);
      throw new Error(`expected enrichbridge ${args.join(' ')} to fail; it printed:\n${stdout}${stderr}`);
    } catch (error) {
      const parsed = FailureSchema.safeParse(error);
      if (!parsed.success) throw error;
      return parsed.data;
    }
  };
  // The account is made in-process (one CLI start less per test); the commands under test run as processes.
  const opened = await openDataFolder(dataDir);
  try {
    await createAccount(opened.store, 'owner', { careerIntelligence: true });
  } finally {
    await opened.store.close();
  }
  const connectArgs = (overrides: Record<string, string> = {}) => {
    const flags: Record<string, string> = {
      '--org-id': fake.orgId,
      '--instance-url': fake.url,
      '--access-token': fake.accessToken,
      '--account': 'owner',
      '--env': 'sandbox',
      ...overrides,
    };
    return ['salesforce', 'connect', ...Object.entries(flags).flat()];
  };
  return { dataDir, fake, env: own, run, fail, connectArgs };
}

/** The installations in the folder's database, read in-process (the commands under test are the processes). */
async function installations(folder: Folder): Promise<string[]> {
  const opened = await openDataFolder(folder.dataDir);
  try {
    return (await opened.db.selectFrom('installations').select('id').execute()).map((row) => row.id);
  } finally {
    await opened.store.close();
  }
}

/** The tokens `accounts show owner --json` prints, read in-process (a CLI start costs seconds of CPU). */
async function tokensOf(folder: Folder) {
  const opened = await openDataFolder(folder.dataDir);
  try {
    return AccountJsonSchema.parse(asJson(await describeAccount(opened.store, 'owner'))).tokens.map((t) => t.token);
  } finally {
    await opened.store.close();
  }
}

describe('enrichbridge salesforce connect', () => {
  it('checks the token against the org, prints the installation id alone on stdout and the signing secret on stderr', async () => {
    const folder = await setUp();
    const { fake } = folder;
    // A 15-character org id is taken as its 18-character form.
    const { stdout, stderr } = await folder.run(folder.connectArgs({ '--org-id': fake.orgId.slice(0, 15) }));
    const id = stdout.trim();
    expect(stdout.split('\n').filter((line) => line !== '')).toEqual([id]);
    expect(id).toMatch(/^inst_[0-9a-f]{32}$/);
    expect(stderr).toMatch(/^signing secret for the JSON callout[^:\n]*: [A-Za-z0-9_-]{43}$/m);
    expect(stderr).toContain(fake.orgId);

    // One call, the versions root, with the token and our call options.
    expect(fake.requests.map((r) => [r.method, r.path, r.status, r.token, r.headers['sforce-call-options']])).toEqual([
      ['GET', '/services/data/v62.0/', 200, fake.accessToken, 'client=enrichbridge'],
    ]);
    // What `installations show ID --json` prints, read in-process (pipeline-cli.e2e runs that command).
    const shown = InstallationSchema.parse(asJson(await withFolderRuntime(folder.env, ({ bridge }) => bridge.installations.require(id))));
    expect(shown).toMatchObject({ id, provider: 'salesforce', externalAccountId: fake.orgId, environment: 'sandbox', status: 'active' });
  });

  it('fails clearly on a token the org refuses (401) and creates nothing', async () => {
    const folder = await setUp();
    const failed = await folder.fail(folder.connectArgs({ '--access-token': 'expired-token' }));
    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe('');
    expect(failed.stderr).toMatch(/^enrichbridge: .*401.*INVALID_SESSION_ID/m);
    expect(failed.stderr).not.toContain('expired-token');
    expect(folder.fake.requests.map((r) => [r.status, r.token])).toEqual([[401, 'expired-token']]);
    expect(await installations(folder)).toEqual([]);
    // Not even the installation's enrichment token was issued.
    expect(await tokensOf(folder)).toEqual([]);
  });

  it('refuses a host that is not Salesforce without SALESFORCE_ALLOW_ANY_HOST, before sending it the token', async () => {
    const folder = await setUp();
    const noOverride = { SALESFORCE_ALLOW_ANY_HOST: undefined };
    const [loopback, elsewhere, lightning] = await Promise.all([
      folder.fail(folder.connectArgs(), noOverride),
      folder.fail(folder.connectArgs({ '--instance-url': 'https://login.example.com' }), noOverride),
      // A UI host of Salesforce's own is not an API host either.
      folder.fail(folder.connectArgs({ '--instance-url': 'https://acme.lightning.force.com' }), noOverride),
    ]);
    expect(loopback.stderr).toMatch(/^enrichbridge: the Salesforce URL must be https/m);
    expect(elsewhere.stderr).toMatch(/^enrichbridge: login\.example\.com is not a Salesforce host/m);
    expect(lightning.stderr).toMatch(/^enrichbridge: .*not the API/m);
    expect(folder.fake.requests).toEqual([]);
    expect(await installations(folder)).toEqual([]);
  });

  it('refuses --refresh-token without --client-id, and an org id that is not one', async () => {
    const folder = await setUp();
    const [refresh, notOrg] = await Promise.all([
      folder.fail([...folder.connectArgs(), '--refresh-token', '5Aep861.refresh']),
      folder.fail(folder.connectArgs({ '--org-id': '0038a00000Rk4TzAAJ' })),
    ]);
    expect(refresh.stderr).toMatch(/^enrichbridge: --refresh-token needs --client-id/m);
    expect(notOrg.stderr).toMatch(/^enrichbridge: --org-id is an organization id/m);
    expect(folder.fake.requests).toEqual([]);
    expect(await installations(folder)).toEqual([]);
  });
});

describe('enrichbridge salesforce disconnect', () => {
  it('removes the installation and revokes the enrichment token it was given', async () => {
    const folder = await setUp();
    const id = (await folder.run(folder.connectArgs())).stdout.trim();
    expect(await installations(folder)).toEqual([id]);

    const { stderr } = await folder.run(['salesforce', 'disconnect', id]);
    expect(stderr).toContain(`disconnected ${id}`);
    expect(await installations(folder)).toEqual([]);
    // The one token of the account was the installation's own, issued by connect: revoked now.
    const tokens = await tokensOf(folder);
    expect(tokens).toHaveLength(1);
    expect(tokens[0]).toMatchObject({ environment: 'sandbox', revokedAt: expect.any(String) });

    const again = await folder.fail(['salesforce', 'disconnect', id]);
    expect(again.stderr).toMatch(new RegExp(`^enrichbridge: no installation ${id}`, 'm'));
  });
});
