// `enrichbridge hubspot …` and `enrichbridge backfill hubspot …` as an operator runs them: the CLI as a
// child process on a temporary data folder, HubSpot as the fake on loopback (--api-base-url). What a
// test only sets up or reads back (an account, a connected portal, the installations, tokens and jobs)
// is done in-process on the same folder and key: each CLI start costs seconds of CPU. Each test has a
// folder and a fake of its own, so some run two at a time (it.concurrent: vitest runs neighbouring
// concurrent tests together), never more, so that CLI starts do not crowd each other out on two cores.
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { type TestContext, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HUBSPOT_PROVIDER } from '../../connectors/hubspot/connector.ts';
import { connectPortal, openInstallLink } from '../../connectors/hubspot/install.ts';
import { hubspotProperties } from '../../connectors/hubspot/fields.ts';
import { createAccount, describeAccount } from '../../core/accounts/admin.ts';
import { loadSecretBox } from '../../core/secrets/secret-box.ts';
import { withRuntime } from '../../server/runtime.ts';
import { type FakeHubSpot, type FakeRequest, startFakeHubSpot, staticCredentials } from '../support/fake-hubspot.ts';
import { tempDir } from '../support/harness.ts';
import { REPO, withoutBackendsLine } from '../support/processes.ts';
import { HUBSPOT_PATHS } from '../../connectors/hubspot/version.ts';

const execFileAsync = promisify(execFile);
const NAMES = hubspotProperties().map((p) => p.name);

const InstallationSchema = z.object({ id: z.string(), provider: z.string(), externalAccountId: z.string(), environment: z.string(), status: z.string() });
const AccountJsonSchema = z.object({
  tokens: z.array(z.object({ token: z.object({ id: z.string(), environment: z.string(), revokedAt: z.string().nullable() }) })),
});
const JobsSchema = z.array(
  z
    .object({ installationId: z.string(), kind: z.string(), state: z.string(), payload: z.object({ recordId: z.string(), trigger: z.string() }).loose() })
    .loose(),
);

/** A value as the CLI's --json prints it (dates as strings). */
const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value));

interface Folder {
  readonly dataDir: string;
  readonly key: string;
  readonly fake: FakeHubSpot;
  /** `enrichbridge …` with this folder's DATA_DIR and key; `env` adds to (or, with undefined, removes from) it. */
  run(args: readonly string[], env?: Record<string, string | undefined>): Promise<{ stdout: string; stderr: string }>;
  /** The environment the commands run with. */
  readonly env: Record<string, string>;
  /** The same, expected to fail: its exit code and output. */
  fail(args: readonly string[], env?: Record<string, string | undefined>): Promise<{ code: number; stdout: string; stderr: string }>;
  /**
   * Connects the fake portal (or another portal id on it) in-process, as `hubspot connect` does after
   * its token check (the first test runs the command itself); returns the installation id.
   */
  connect(options?: { portalId?: string; env?: 'sandbox' | 'production'; account?: string }): Promise<string>;
  /** What `installations show ID --json` prints, read in-process. */
  installation(id: string): Promise<z.infer<typeof InstallationSchema>>;
  /** What `installations list` lists, read in-process. */
  installations(): Promise<unknown[]>;
  /** The tokens `accounts show NAME --json` prints, read in-process. */
  tokensOf(account: string): Promise<z.infer<typeof AccountJsonSchema>['tokens'][number]['token'][]>;
  /** The queue as `jobs list --json` prints it (its first 1,000), read in-process. */
  jobs(): Promise<z.infer<typeof JobsSchema>>;
}

/** The environment the tests were started with, before any in-process work changed process.env. */
const SHELL_ENV: Readonly<Record<string, string | undefined>> = { ...process.env };

/**
 * Runs in-process work (withRuntime, which reads its configuration from process.env) with a folder's
 * environment, one at a time: the tests running side by side each have a folder of their own.
 */
let inProcessTurn: Promise<unknown> = Promise.resolve();
function withEnvironment<T>(env: Readonly<Record<string, string | undefined>>, run: () => Promise<T>): Promise<T> {
  const set = (values: Readonly<Record<string, string | undefined>>) => {
    for (const [name, value] of Object.entries(values)) {
      if (value === undefined) Reflect.deleteProperty(process.env, name);
      else process.env[name] = value;
    }
  };
  const turn = inProcessTurn.then(async () => {
    const saved = Object.fromEntries(Object.keys(env).map((name) => [name, process.env[name]]));
    set(env);
    try {
      return await run();
    } finally {
      set(saved);
    }
  });
  inProcessTurn = turn.catch(() => undefined);
  return turn;
}

const FailureSchema = z.object({ code: z.number(), stdout: z.string(), stderr: z.string() });

/** A data folder with a local account `owner`, and a fake HubSpot portal; both gone when the test ends. */
async function setUp({ onTestFinished }: TestContext, fakeOptions: Parameters<typeof startFakeHubSpot>[0] = {}): Promise<Folder> {
  const dataDir = tempDir('enrichbridge-hubspot-cli-');
  onTestFinished(() => rmSync(dataDir, { recursive: true, force: true }));
  const fake = await startFakeHubSpot(fakeOptions);
  onTestFinished(() => fake.close());
  const key = randomBytes(32).toString('hex');
  // Whatever the shell running the tests has set must not decide what these commands see.
  const shellOnly = (name: string) => name === 'PUBLIC_URL' || name.startsWith('HUBSPOT_');
  const inherited = Object.entries(SHELL_ENV).filter(([name]) => !shellOnly(name));
  const own = { DATA_DIR: dataDir, ENRICHBRIDGE_SECRET_KEY: key, LOG_LEVEL: 'warn' };
  const baseEnv: Record<string, string | undefined> = { ...Object.fromEntries(inherited), ...own };
  // The in-process side sees the same folder and key, and no shell settings either.
  const inProcessEnv = {
    ...Object.fromEntries(
      Object.keys(SHELL_ENV)
        .filter(shellOnly)
        .map((name) => [name, undefined]),
    ),
    ...own,
  };
  const inFolder = <T>(run: Parameters<typeof withRuntime<T>>[0]) => withEnvironment(inProcessEnv, () => withRuntime(run));
  const envWith = (env: Record<string, string | undefined>) =>
    Object.fromEntries(Object.entries({ ...baseEnv, ...env }).filter((e): e is [string, string] => e[1] !== undefined));
  const run = (args: readonly string[], env: Record<string, string | undefined> = {}) => {
    const merged = envWith(env);
    // stdin is a pipe, not a terminal, as under cron or CI. The timeout is a guard against a hung command,
    // not a time limit: with two or three started at once on a busy two-core machine, each CLI start (a
    // few seconds of CPU) can take tens of seconds.
    return execFileAsync(process.execPath, [path.join(REPO, 'bin/enrichbridge.js'), ...args], { cwd: REPO, env: merged, timeout: 40_000 });
  };
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
  await inFolder((_bridge, { store }) => createAccount(store, 'owner', { careerIntelligence: true }));
  const folder: Folder = {
    dataDir,
    key,
    fake,
    env: envWith({}),
    run,
    fail,
    async connect(options = {}) {
      const portalId = options.portalId ?? fake.portalId;
      return inFolder(async ({ installations, pipelineStore }) => {
        const { installation } = await connectPortal({
          installations,
          portalId,
          credentials: staticCredentials(fake, fake.clientSecret, fake.appId),
          target: { kind: 'local', accountName: options.account ?? 'owner' },
          environment: options.env ?? 'sandbox',
          existing: await pipelineStore.findInstallationByAccount(HUBSPOT_PROVIDER, portalId),
        });
        return installation.id;
      });
    },
    // Read in-process, as the commands read them: pipeline-cli, instances and jobs-cli e2e run those.
    installation: async (id) => InstallationSchema.parse(asJson(await inFolder(({ installations }) => installations.require(id)))),
    installations: () => inFolder(({ pipelineStore }) => pipelineStore.listInstallations()),
    tokensOf: async (account) =>
      AccountJsonSchema.parse(asJson(await inFolder((_bridge, { store }) => describeAccount(store, account)))).tokens.map((t) => t.token),
    jobs: async () => JobsSchema.parse(asJson(await inFolder((_bridge, { queue }) => queue.list({ limit: 1000 })))),
  };
  return folder;
}

const ours = (fake: FakeHubSpot) => [...fake.properties.keys()].filter((name) => name.startsWith('wf_'));
const writes = (fake: FakeHubSpot): FakeRequest[] => fake.requests.filter((r) => r.method !== 'GET');

function lines(text: string): string[] {
  return text.split('\n').filter((line) => line !== '');
}

describe('enrichbridge hubspot connect', () => {
  it('prints the installation id alone on stdout and provisions the properties in the portal; connecting again renews it', async (context) => {
    const folder = await setUp(context);
    const { fake } = folder;
    const args = [
      'hubspot',
      'connect',
      '--portal-id',
      fake.portalId,
      '--access-token',
      fake.tokens.staticToken,
      '--client-secret',
      fake.clientSecret,
      '--app-id',
      fake.appId,
      '--account',
      'owner',
      '--env',
      'sandbox',
      '--api-base-url',
      fake.url,
    ];

    const first = await folder.run(args);

    expect(first.stdout).toMatch(/^inst_[0-9a-f]{32}\n$/);
    const id = first.stdout.trim();
    expect(first.stderr).toContain(`connected portal ${fake.portalId} (sandbox); properties: ${NAMES.length} created, 0 updated, 0 in place`);
    expect(ours(fake).sort()).toEqual([...NAMES].sort());
    expect(fake.groups.has('enrichbridge')).toBe(true);
    // The token was checked with one list call before anything was stored.
    expect(fake.requests[0]).toMatchObject({ method: 'GET', path: HUBSPOT_PATHS.contacts, token: fake.tokens.staticToken, status: 200 });
    const shown = await folder.installation(id);
    expect(shown).toEqual({ id, provider: 'hubspot', externalAccountId: fake.portalId, environment: 'sandbox', status: 'active' });
    expect(await folder.tokensOf('owner')).toEqual([expect.objectContaining({ environment: 'sandbox', revokedAt: null })]);

    const before = writes(fake).length;
    const again = await folder.run(args);
    expect(again.stdout).toBe(`${id}\n`);
    expect(again.stderr).toContain(`renewed the credentials of portal ${fake.portalId} (sandbox); properties: 0 created, 0 updated, ${NAMES.length} in place`);
    expect(writes(fake)).toHaveLength(before);
    expect(await folder.installations()).toHaveLength(1);
  });

  it.concurrent('a token HubSpot refuses fails with a clear message and creates nothing', async (context) => {
    const folder = await setUp(context);
    const { fake } = folder;

    const failed = await folder.fail([
      'hubspot',
      'connect',
      '--portal-id',
      fake.portalId,
      '--access-token',
      'pat-na1-not-a-token',
      '--client-secret',
      fake.clientSecret,
      '--app-id',
      fake.appId,
      '--account',
      'owner',
      '--env',
      'sandbox',
      '--api-base-url',
      fake.url,
    ]);

    expect(failed.code).toBe(1);
    expect(failed.stdout).toBe('');
    expect(failed.stderr).toMatch(/^enrichbridge: .*HubSpot.*401/m);
    expect(failed.stderr).not.toMatch(/\n\s+at /);
    expect(fake.requests.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([`GET ${HUBSPOT_PATHS.contacts} 401`]);
    expect(ours(fake)).toEqual([]);
    expect(await folder.installations()).toEqual([]);
    expect(await folder.tokensOf('owner')).toEqual([]);
  });

  it.concurrent('refuses --account together with --remote-url before calling HubSpot', async (context) => {
    const folder = await setUp(context);
    const { fake } = folder;

    const failed = await folder.fail([
      'hubspot',
      'connect',
      '--portal-id',
      fake.portalId,
      '--access-token',
      fake.tokens.staticToken,
      '--client-secret',
      fake.clientSecret,
      '--app-id',
      fake.appId,
      '--account',
      'owner',
      '--remote-url',
      'https://enrich.example.com/v1/',
      '--remote-token',
      'tok-remote',
      '--env',
      'sandbox',
      '--api-base-url',
      fake.url,
    ]);

    expect(failed.code).toBe(1);
    expect(withoutBackendsLine(failed.stderr)).toBe('enrichbridge: give --account, or --remote-url with --remote-token, not both\n');
    expect(fake.requests).toEqual([]);
    expect(await folder.installations()).toEqual([]);
  });
});

describe('enrichbridge hubspot disconnect', () => {
  it.concurrent('--remove-properties archives our properties and the group, forgets the installation and revokes its local token', async (context) => {
    const folder = await setUp(context);
    const { fake } = folder;
    const id = await folder.connect();
    const [token] = await folder.tokensOf('owner');
    expect(token).toMatchObject({ revokedAt: null });

    const { stderr } = await folder.run(['hubspot', 'disconnect', id, '--remove-properties']);

    expect(stderr).toContain(`disconnected ${id}; archived ${NAMES.length} properties`);
    expect(ours(fake)).toEqual([]);
    expect(fake.groups.has('enrichbridge')).toBe(false);
    expect(fake.properties.has('email')).toBe(true);
    expect(await folder.installations()).toEqual([]);
    expect(await folder.tokensOf('owner')).toEqual([expect.objectContaining({ id: token?.id, revokedAt: expect.any(String) })]);
  });

  it.concurrent('without --remove-properties the portal keeps them; an unknown installation is refused', async (context) => {
    const folder = await setUp(context);
    const { fake } = folder;
    const id = await folder.connect();
    const before = writes(fake).length;

    expect(withoutBackendsLine((await folder.run(['hubspot', 'disconnect', id])).stderr)).toBe(`disconnected ${id}\n`);

    expect(writes(fake)).toHaveLength(before);
    expect(ours(fake)).toHaveLength(NAMES.length);
    const failed = await folder.fail(['hubspot', 'disconnect', id, '--remove-properties']);
    expect(withoutBackendsLine(failed.stderr)).toBe(`enrichbridge: no installation ${id}\n`);
    expect(ours(fake)).toHaveLength(NAMES.length);
  });
});

/** A public app configured, as the server that opens install links has it. */
const HUBSPOT_APP = { HUBSPOT_CLIENT_ID: 'client-id-1', HUBSPOT_CLIENT_SECRET: 'client-secret-1', HUBSPOT_APP_ID: '4242' };

describe('enrichbridge hubspot install-link', () => {
  it('needs PUBLIC_URL; with it, prints a link to /oauth/hubspot/install that only this data folder’s key opens', async (context) => {
    const folder = await setUp(context);
    const target = ['--account', 'owner', '--env', 'production'];

    // Three independent commands that write nothing: run side by side.
    const [failed, { stdout }, both] = await Promise.all([
      folder.fail(['hubspot', 'install-link', ...target], HUBSPOT_APP),
      folder.run(['hubspot', 'install-link', ...target], { PUBLIC_URL: 'https://bridge.example.com', ...HUBSPOT_APP }),
      folder.fail(['hubspot', 'install-link', ...target, '--remote-url', 'https://enrich.example.com/v1/', '--remote-token', 't'], {
        PUBLIC_URL: 'https://bridge.example.com',
      }),
    ]);
    expect(failed.code).toBe(1);
    expect(withoutBackendsLine(failed.stderr)).toMatch(/^enrichbridge: set PUBLIC_URL/);
    expect(failed.stdout).toBe('');

    expect(stdout).toMatch(/^https:\/\/bridge\.example\.com\/oauth\/hubspot\/install\?link=\S+\n$/);
    const link = new URL(stdout.trim()).searchParams.get('link') ?? '';
    const intent = openInstallLink(loadSecretBox({ dataDir: folder.dataDir, env: { ENRICHBRIDGE_SECRET_KEY: folder.key } }), link);
    expect(intent).toMatchObject({ target: { kind: 'local', accountName: 'owner' }, environment: 'production' });
    expect(() => openInstallLink(loadSecretBox({ dataDir: folder.dataDir, env: { ENRICHBRIDGE_SECRET_KEY: randomBytes(32).toString('hex') } }), link)).toThrow(
      /not valid/,
    );

    expect(withoutBackendsLine(both.stderr)).toBe('enrichbridge: give --account, or --remote-url with --remote-token, not both\n');
  });

  it('is refused without a configured HubSpot app: one sentence naming the settings, a non-zero exit and no link', async (context) => {
    const folder = await setUp(context);
    const target = ['--account', 'owner', '--env', 'production'];

    const [none, partial] = await Promise.all([
      folder.fail(['hubspot', 'install-link', ...target], { PUBLIC_URL: 'https://bridge.example.com' }),
      folder.fail(['hubspot', 'install-link', ...target], { PUBLIC_URL: 'https://bridge.example.com', HUBSPOT_CLIENT_ID: 'client-id-1' }),
    ]);

    for (const refused of [none, partial]) {
      expect(refused.code).toBe(1);
      expect(refused.stdout).toBe('');
      // The refusal is the command's last word, in one line (a line naming the database may come first).
      expect(lines(refused.stderr).at(-1)).toMatch(/^enrichbridge: no HubSpot public app is configured, so no install link is made: set HUBSPOT_/);
      expect(lines(refused.stderr).filter((line) => line.includes('HUBSPOT_'))).toHaveLength(1);
    }
    expect(none.stderr).toContain('set HUBSPOT_CLIENT_ID, HUBSPOT_CLIENT_SECRET, HUBSPOT_APP_ID');
    expect(partial.stderr).toContain('set HUBSPOT_CLIENT_SECRET, HUBSPOT_APP_ID');
  });
});

/** Five contacts in the fake: four with a match key (e-mail, phone, address), one with a first name only. */
async function seedContacts(fake: FakeHubSpot): Promise<void> {
  await fake.createContact({ firstname: 'Amanda', lastname: 'Taylor', email: 'amanda.taylor@sandbox.windfall.com' }, { notify: false });
  await fake.createContact({ firstname: 'Jordan', lastname: 'Doe', email: 'j.doe@example.org' }, { notify: false });
  await fake.createContact({ firstname: 'Solo' }, { notify: false });
  await fake.createContact({ firstname: 'Pat', lastname: 'Lee', phone: '+1 415 555 0134' }, { notify: false });
  await fake.createContact({ address: '1 Main St', city: 'Springfield', zip: '62701' }, { notify: false });
}

describe('enrichbridge backfill hubspot', () => {
  it('--dry-run prints the counts and the quota units (none in the sandbox) and enqueues nothing', async (context) => {
    const folder = await setUp(context);
    const { fake } = folder;
    await seedContacts(fake);
    const sandbox = await folder.connect();
    const production = await folder.connect({ portalId: '99887766', env: 'production' });

    // Dry runs read and count only: the three run side by side.
    const [dry, priced, limited] = await Promise.all([
      folder.run(['backfill', 'hubspot', sandbox, '--dry-run']),
      folder.run(['backfill', 'hubspot', production, '--dry-run']),
      folder.run(['backfill', 'hubspot', production, '--dry-run', '--limit', '2']),
    ]);
    expect(lines(dry.stdout)).toEqual([
      'scanned 5 contacts',
      '  with a match key:       4',
      '  already up to date:     0',
      '  to enrich:              4',
      '  quota units at most:    0 (sandbox: no quota is spent)',
      'dry run: nothing enqueued',
    ]);

    expect(priced.stdout).toContain('  to enrich:              4\n  quota units at most:    4\n');
    expect(limited.stdout).toContain('  to enrich:              2\n  quota units at most:    2\n');

    expect(await folder.jobs()).toEqual([]);
    // It read contacts through the list endpoint, never the 10,000-capped search.
    expect(fake.requests.some((r) => r.path.includes('/search'))).toBe(false);
  });

  it.concurrent('refuses to enqueue without --yes when stdin is not a terminal; with --yes it enqueues, and the next run starts over', async (context) => {
    const folder = await setUp(context);
    await seedContacts(folder.fake);
    const id = await folder.connect();

    const refused = await folder.fail(['backfill', 'hubspot', id]);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('  to enrich:              4\n');
    expect(withoutBackendsLine(refused.stderr)).toBe('enrichbridge: not a terminal: pass --yes to enqueue without confirmation\n');
    expect(await folder.jobs()).toEqual([]);

    const done = await folder.run(['backfill', 'hubspot', id, '--yes']);
    expect(done.stdout).toMatch(/^enqueued 4 contacts; /m);
    expect(done.stderr).toContain('enqueue: 100% (4 of 4)');
    const queued = await folder.jobs();
    expect(queued).toHaveLength(4);
    expect(queued.every((j) => j.installationId === id && j.kind === 'enrich' && j.state === 'queued' && j.payload.trigger === 'backfill')).toBe(true);
    const ids = [...folder.fake.contacts.values()].filter((c) => c.properties.firstname !== 'Solo').map((c) => c.id);
    expect(queued.map((j) => j.payload.recordId).sort()).toEqual(ids.sort());

    // Finished: the next run reads from the first contact again, and the queue keeps one job per contact.
    const again = await folder.run(['backfill', 'hubspot', id, '--yes']);
    expect(again.stdout).toMatch(/^scanned 5 contacts$/m);
    expect(again.stdout).toMatch(/^enqueued 0 contacts \(4 were already queued\)/m);
    expect(await folder.jobs()).toHaveLength(4);
  });

  it.concurrent(
    '--limit stops midway and the next run resumes there; a resumed run with nothing left to enqueue finishes, so the one after starts over',
    async (context) => {
      const folder = await setUp(context);
      // 150 contacts: the first 100 (one list page) with an e-mail, the last 50 without any match key.
      for (let i = 0; i < 150; i += 1) {
        await folder.fake.createContact(i < 100 ? { firstname: 'Pat', lastname: `Doe${i}`, email: `pat.doe${i}@example.com` } : { firstname: `Solo${i}` }, {
          notify: false,
        });
      }
      const id = await folder.connect();

      const first = await folder.run(['backfill', 'hubspot', id, '--yes', '--limit', '100']);
      expect(first.stdout).toMatch(/^enqueued 100 contacts; /m);
      expect(await folder.jobs()).toHaveLength(100);

      const resumed = await folder.run(['backfill', 'hubspot', id, '--yes']);
      expect(resumed.stdout).toMatch(/^scanned 50 contacts \(resuming after the last backfill stopped\)$/m);
      expect(resumed.stdout).toContain('  to enrich:              0\n');
      expect(resumed.stdout).toMatch(/^nothing to enqueue$/m);
      expect(await folder.jobs()).toHaveLength(100);

      const fresh = await folder.run(['backfill', 'hubspot', id, '--dry-run']);
      expect(fresh.stdout).toMatch(/^scanned 150 contacts$/m);
    },
  );

  // util-linux `script` gives the command a pseudo-terminal, as an operator's shell would.
  const SCRIPT = '/usr/bin/script';
  it.skipIf(process.platform !== 'linux' || !existsSync(SCRIPT))('on a terminal it asks first: "n" enqueues nothing, "y" enqueues', async (context) => {
    const folder = await setUp(context);
    await seedContacts(folder.fake);
    const id = await folder.connect();

    const answer = async (reply: string) => {
      const command = [process.execPath, path.join(REPO, 'bin/enrichbridge.js'), 'backfill', 'hubspot', id].map((a) => `'${a}'`).join(' ');
      const child = spawn(SCRIPT, ['-qec', command, '/dev/null'], { cwd: REPO, env: folder.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
      context.onTestFinished(() => {
        if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      });
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      for (let waited = 0; !out.includes('[y/N]'); waited += 25) {
        if (child.exitCode !== null || waited > 15_000) throw new Error(`no question asked:\n${out}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      child.stdin.write(`${reply}\n`);
      const code = await exited;
      child.stdin.end();
      return { code, out: out.replace(/\r/g, '') };
    };

    const no = await answer('n');
    expect(no.code).toBe(0);
    expect(no.out).toContain('Enqueue 4 contacts for enrichment (at most 0 quota units)? [y/N] ');
    expect(no.out).toMatch(/^nothing enqueued$/m);
    expect(await folder.jobs()).toEqual([]);

    const yes = await answer('y');
    expect(yes.code).toBe(0);
    expect(yes.out).toMatch(/^enqueued 4 contacts; /m);
    expect(await folder.jobs()).toHaveLength(4);
  });
});
