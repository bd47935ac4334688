// docs/operator-guide.md's "Running several instances", followed as written: a data folder with a HubSpot
// installation is moved to PostgreSQL by the section's own shell blocks, two instances start with the
// variables those blocks export, and a signed HubSpot webhook is enriched through each. Beside it, what
// keeps a migrated folder from splitting the state in two: the marker, the refusals without
// DATABASE_URL, and the database and Redis every process names. The PostgreSQL parts run when the run
// has PostgreSQL and Redis (TEST_DATABASE_URL, TEST_REDIS_URL; .ci/run sets them).
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { HUBSPOT_PROVIDER } from '../../connectors/hubspot/connector.ts';
import { createAccount } from '../../core/accounts/admin.ts';
import { redactDatabaseUrl, redactRedisUrl } from '../../core/observe/connection-urls.ts';
import { MIGRATION_MARKER_FILE, MigratedFolderError } from '../../core/storage/migration-marker.ts';
import { openDataFolder } from '../../server/runtime.ts';
import { TEST_DATABASE_URL, freshPostgresSchema } from '../support/databases.ts';
import { type FakeHubSpot, startFakeHubSpot } from '../support/fake-hubspot.ts';
import { withFolderRuntime } from '../support/folder-runtime.ts';
import { tempDir } from '../support/harness.ts';
import { type Proc, REPO, freePort, killProcess, startProcess, until } from '../support/processes.ts';
import { TEST_REDIS_URL, freshPrefix } from '../support/redis.ts';
import { persona } from '../support/requests.ts';

const execFileAsync = promisify(execFile);
const CLI = path.join(REPO, 'bin/enrichbridge.js');
const APP_ID = '1160452';
const PORTAL_ID = '62515';
const KEY_ENV = 'ENRICHBRIDGE_SECRET_KEY';
const HAS_POSTGRES_AND_REDIS = TEST_DATABASE_URL !== undefined && TEST_DATABASE_URL !== '' && TEST_REDIS_URL !== undefined;

const running: Proc[] = [];
const fakes: FakeHubSpot[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((proc) => killProcess(proc)));
  await Promise.all(fakes.splice(0).map((fake) => fake.close()));
});

/** What a fresh shell gives a process: PATH and HOME, and none of the test run's own variables. */
function shellEnv(env: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? tmpdir(), ...env };
}

/** `enrichbridge …` as an operator types it, with exactly `env` set. */
function run(args: readonly string[], env: Record<string, string>): Promise<{ stdout: string; stderr: string }> {
  return execFileAsync(process.execPath, [CLI, ...args], { cwd: REPO, env: shellEnv(env), timeout: 60_000 });
}

const FailureSchema = z.object({ code: z.number(), stdout: z.string(), stderr: z.string() });

/** `enrichbridge …` that must fail: its exit code and output. */
async function refused(args: readonly string[], env: Record<string, string>): Promise<z.infer<typeof FailureSchema>> {
  let printed: { stdout: string; stderr: string };
  try {
    printed = await run(args, env);
  } catch (error) {
    return FailureSchema.parse(error);
  }
  throw new Error(`expected enrichbridge ${args.join(' ')} to fail; it printed:\n${printed.stdout}${printed.stderr}`);
}

/** The server as `npm start` runs it, with exactly `env` set. */
function server(env: Record<string, string>): Proc {
  const proc = startProcess(process.execPath, ['bin/server.js'], shellEnv(env), { inherit: false });
  running.push(proc);
  return proc;
}

const LineSchema = z.object({ level: z.number(), msg: z.string() }).loose();

/** The server's JSON log lines (the banner and other plain text left out). */
function logLines(proc: Proc): z.infer<typeof LineSchema>[] {
  return proc
    .output()
    .split('\n')
    .flatMap((line) => {
      if (!line.startsWith('{')) return [];
      const parsed = LineSchema.safeParse(JSON.parse(line));
      return parsed.success ? [parsed.data] : [];
    });
}

function listeningLine(proc: Proc): Record<string, unknown> {
  const line = logLines(proc).find((entry) => entry.msg === 'listening');
  if (line === undefined) throw new Error(`no listening line in:\n${proc.output()}`);
  return line;
}

/** The operator's guide's section under `heading`, up to the next second-level heading. */
function guideSection(heading: string): string {
  const readme = readFileSync(path.join(REPO, 'docs', 'operator-guide.md'), 'utf8');
  const start = readme.indexOf(`\n## ${heading}\n`);
  expect(start, `docs/operator-guide.md has a "## ${heading}" section`).toBeGreaterThanOrEqual(0);
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end === -1 ? undefined : end);
}

/** A `sh` block's text in a shell script, the guide's values replaced by the test's own (each must be there). */
function substitute(script: string, replacements: readonly (readonly [string, string])[]): string {
  let out = script;
  for (const [from, to] of replacements) {
    expect(out, `the guide's steps name ${from}`).toContain(from);
    out = out.replaceAll(from, to);
  }
  return out;
}

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const quoted = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;

/**
 * A data folder at `dir` whose servers ran without ENRICHBRIDGE_SECRET_KEY (so `secret.key` sealed its
 * credentials), with the account `e2e` and a HubSpot portal connected to it; made in-process, as
 * `accounts create` and `hubspot connect` would.
 */
async function folderWithInstallation(dir: string): Promise<string> {
  return withFolderRuntime({ DATA_DIR: dir }, async ({ bridge, opened }) => {
    await createAccount(opened.store, 'e2e', { careerIntelligence: true });
    const created = await bridge.installations.create({
      provider: HUBSPOT_PROVIDER,
      externalAccountId: PORTAL_ID,
      environment: 'sandbox',
      target: { kind: 'local', accountName: 'e2e' },
      crmCredentials: { kind: 'static', accessToken: 'pat-na1-test', clientSecret: randomUUID(), appId: APP_ID },
    });
    return created.id;
  });
}

const identity = (p: ReturnType<typeof persona>) => ({ firstname: p.first_name, lastname: p.last_name, email: p.email });

describe("The operator's guide's steps are a test", () => {
  it.skipIf(!HAS_POSTGRES_AND_REDIS)(
    '"Running several instances" as written moves a data folder with a HubSpot installation to PostgreSQL, and a signed webhook to either instance is enriched',
    async () => {
      // The folder an operator has: the account and the portal connected by the CLI, under the folder's own key.
      const work = tempDir('enrichbridge-readme-');
      const dataDir = path.join(work, 'data');
      const clientSecret = randomUUID();
      const fake = await startFakeHubSpot({ webhookUrl: null, appId: APP_ID, portalId: PORTAL_ID, clientSecret, subscribedProperties: [] });
      fakes.push(fake);
      await run(['accounts', 'create', 'e2e', '--career-intelligence'], { DATA_DIR: dataDir });
      await run(
        [
          ...['hubspot', 'connect', '--portal-id', PORTAL_ID, '--access-token', fake.tokens.staticToken, '--client-secret', clientSecret],
          ...['--app-id', APP_ID, '--account', 'e2e', '--env', 'sandbox', '--api-base-url', fake.url],
        ],
        { DATA_DIR: dataDir },
      );

      // The section's shell blocks, run in one shell in the folder's parent. The first installs and starts
      // PostgreSQL and Redis: the run's own stand in for them. `npm start` is where the instances start:
      // the shell's environment is kept there and handed to them.
      const blocks = [...guideSection('Running several instances').matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
      const [infrastructure, ...steps] = blocks;
      expect(infrastructure).toContain('createdb enrichbridge');
      const databaseUrl = await freshPostgresSchema(TEST_DATABASE_URL ?? '');
      const redisUrl = TEST_REDIS_URL ?? '';
      const envFile = path.join(work, 'instance.env');
      const script = substitute(steps.join('\n'), [
        ['postgres://postgres@127.0.0.1:5432/enrichbridge', quoted(databaseUrl)],
        ['redis://127.0.0.1:6379', quoted(redisUrl)],
        ['npx enrichbridge', `${quoted(process.execPath)} ${quoted(CLI)}`],
        ['npm start', `env -0 > ${quoted(envFile)}`],
      ]);
      const prefix = freshPrefix(); // this test's keys in the shared Redis; not one of the guide's variables
      const followed = await execFileAsync('bash', ['-c', `set -euo pipefail\n${script}`], {
        cwd: work,
        env: shellEnv({ REDIS_KEY_PREFIX: prefix }),
        timeout: 120_000,
      });
      expect(followed.stdout).toMatch(/^installations\s+1$/m);

      const exported = [...steps.join('\n').matchAll(/^export (\w+)=/gm)].map((match) => match[1] ?? '');
      const shellAtStart = Object.fromEntries(
        readFileSync(envFile, 'utf8')
          .split('\0')
          .filter((entry) => entry.includes('='))
          .map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]),
      );
      const variables = Object.fromEntries(exported.map((name) => [name, shellAtStart[name] ?? '']));
      expect(Object.keys(variables).sort()).toEqual(['DATABASE_URL', KEY_ENV, 'REDIS_URL']);

      // Two instances: one on the folder's own host, one on another host with a data folder of its own.
      const ports = [await freePort(), await freePort()];
      const instances = ports.map((port, i) =>
        server({
          ...variables,
          REDIS_KEY_PREFIX: prefix,
          DATA_DIR: i === 0 ? dataDir : tempDir(),
          PORT: String(port),
          PUBLIC_URL: `http://127.0.0.1:${port}`,
          HUBSPOT_API_BASE_URL: fake.url,
          LOG_LEVEL: 'info',
        }),
      );
      await Promise.all(instances.map((proc) => proc.waitFor(/"msg":"listening"/, 40_000)));
      for (const proc of instances) {
        expect(listeningLine(proc)).toMatchObject({ database: `PostgreSQL ${redactDatabaseUrl(databaseUrl)}`, redis: redactRedisUrl(redisUrl) });
        expect(listeningLine(proc)).not.toHaveProperty('data_dir');
        expect(proc.output()).not.toContain(KEY_ENV);
      }

      // A contact created in the portal, its creation signed and sent to one instance, then another to the other.
      const people = [persona('Amanda Taylor'), persona('Daniel Garcia')];
      for (const [i, someone] of people.entries()) {
        const contact = await fake.createContact(identity(someone));
        const creation = fake.events.filter((event) => event.subscriptionType === 'contact.creation' && String(event.objectId) === contact.id);
        const delivery = await fake.sendEvents(creation, { url: `http://127.0.0.1:${ports[i] ?? 0}/webhooks/hubspot` });
        expect(delivery.status).toBe(200);
        const enriched = await until(
          `contact ${contact.id} enriched`,
          () => (fake.contacts.get(contact.id)?.properties.wf_enrichment_status === 'enriched' ? fake.contacts.get(contact.id) : undefined),
          { timeoutMs: 30_000, context: () => instances.map((proc) => proc.output().slice(-2_000)).join('\n') },
        );
        expect(enriched.properties.wf_career_job_title).toBe(someone.career?.job_title);
      }
    },
    180_000,
  );

  it.skipIf(!HAS_POSTGRES_AND_REDIS)(
    'data migrate-to-postgres copies nothing unless ENRICHBRIDGE_SECRET_KEY opens the credentials sealed in the folder, and says where its key is',
    async () => {
      const dataDir = tempDir('enrichbridge-migrate-key-');
      await folderWithInstallation(dataDir);
      const databaseUrl = await freshPostgresSchema(TEST_DATABASE_URL ?? '');
      const keyFile = path.join(dataDir, 'secret.key');

      const unset = await refused(['data', 'migrate-to-postgres'], { DATA_DIR: dataDir, DATABASE_URL: databaseUrl });
      expect(unset.stderr).toContain(`set ${KEY_ENV} to the key that sealed this folder's credentials`);
      expect(unset.stderr).toContain(`export ${KEY_ENV}=$(cat ${keyFile})`);

      const wrong = await refused(['data', 'migrate-to-postgres'], {
        DATA_DIR: dataDir,
        DATABASE_URL: databaseUrl,
        [KEY_ENV]: randomBytes(32).toString('hex'),
      });
      expect(wrong.stderr).toContain(`${KEY_ENV} opens 0 of the 1 installations' sealed credentials in this folder`);
      expect(wrong.stderr).toContain('nothing was copied');

      // Nothing landed and nothing was marked: the same database takes the copy under the right key.
      const key = readFileSync(keyFile, 'utf8').trim();
      const copied = await run(['data', 'migrate-to-postgres'], { DATA_DIR: dataDir, DATABASE_URL: databaseUrl, [KEY_ENV]: key });
      expect(copied.stdout).toMatch(/^installations\s+1$/m);
    },
    120_000,
  );

  it('a server whose key opens no stored credential says so at start in one line naming ENRICHBRIDGE_SECRET_KEY', async () => {
    const dataDir = tempDir('enrichbridge-wrong-key-');
    await folderWithInstallation(dataDir);
    const proc = server({
      DATA_DIR: dataDir,
      [KEY_ENV]: randomBytes(32).toString('hex'),
      PORT: String(await freePort()),
      LOG_LEVEL: 'info',
      WORKER_CONCURRENCY: '0',
    });
    await proc.waitFor(/"msg":"listening"/, 40_000);
    const told = logLines(proc).filter((line) => line.msg.includes(KEY_ENV));
    expect(told).toHaveLength(1);
    expect(told[0]).toMatchObject({ level: 50, installations_checked: 1 });
    expect(told[0]?.msg).toMatch(
      /^the secret key \(ENRICHBRIDGE_SECRET_KEY\) opens none of the 1 stored CRM credentials checked.*: set ENRICHBRIDGE_SECRET_KEY to the key that sealed them/,
    );
  }, 60_000);
});

describe('No silent split brain', () => {
  it.skipIf(!HAS_POSTGRES_AND_REDIS)(
    'a migrated folder is marked with where the data went (no password), and every command and the server refuse it without DATABASE_URL',
    async () => {
      const dataDir = tempDir('enrichbridge-split-brain-');
      await withFolderRuntime({ DATA_DIR: dataDir }, ({ opened }) => createAccount(opened.store, 'acme', {}));
      const key = readFileSync(path.join(dataDir, 'secret.key'), 'utf8').trim();
      // A password in the URL (the test database trusts loopback and ignores it): it must appear nowhere.
      const password = `pw-${randomBytes(6).toString('hex')}`;
      const withPassword = new URL(await freshPostgresSchema(TEST_DATABASE_URL ?? ''));
      withPassword.password = password;
      const databaseUrl = withPassword.toString();
      const shown = redactDatabaseUrl(databaseUrl);
      expect(shown).not.toContain(password);

      const migrated = await run(['data', 'migrate-to-postgres'], { DATA_DIR: dataDir, DATABASE_URL: databaseUrl, [KEY_ENV]: key });
      expect(migrated.stderr).toContain(`into PostgreSQL ${shown}`);
      expect(`${migrated.stdout}${migrated.stderr}`).not.toContain(password);

      const markerFile = path.join(dataDir, MIGRATION_MARKER_FILE);
      expect(statSync(markerFile).mode & 0o777).toBe(0o600);
      const marker = readFileSync(markerFile, 'utf8');
      expect(marker).not.toContain(password);
      expect(z.object({ migrated_to: z.string(), migrated_at: z.string() }).loose().parse(JSON.parse(marker)).migrated_to).toBe(shown);

      // Without DATABASE_URL: one sentence saying where the data went, and nothing else.
      const sentence = new RegExp(
        `^enrichbridge: the data folder ${escaped(dataDir)} was migrated to ${escaped(shown)} on \\S+ \\(${escaped(markerFile)}\\), so its SQLite file is no longer used: set DATABASE_URL to that database\\n$`,
      );
      const listed = await refused(['accounts', 'list'], { DATA_DIR: dataDir, [KEY_ENV]: key });
      expect(listed).toMatchObject({ code: 1, stdout: '' });
      expect(listed.stderr).toMatch(sentence);
      const alone = server({ DATA_DIR: dataDir, [KEY_ENV]: key, PORT: String(await freePort()) });
      expect(await alone.exited()).toBe(1);
      expect(`${alone.output()}`).toMatch(new RegExp(sentence.source.replace('^enrichbridge: ', '^')));
      // What the server, a worker and every command open the folder through.
      await expect(openDataFolder(dataDir)).rejects.toBeInstanceOf(MigratedFolderError);

      // With it: the command names the database on stderr (password masked), and its JSON stays clean.
      const described = await run(['accounts', 'show', 'acme', '--json'], { DATA_DIR: dataDir, DATABASE_URL: databaseUrl, [KEY_ENV]: key });
      expect(
        z
          .object({ account: z.object({ name: z.literal('acme') }).loose() })
          .loose()
          .parse(JSON.parse(described.stdout)),
      ).toBeTruthy();
      expect(described.stderr).toBe(`enrichbridge: database PostgreSQL ${shown}, redis in-process\n`);
    },
    120_000,
  );

  it('on one SQLite file, the start-up log and every command name its path and the in-process limits', async () => {
    const dataDir = tempDir('enrichbridge-named-');
    const listed = await run(['accounts', 'list'], { DATA_DIR: dataDir });
    expect(listed.stderr).toBe(`enrichbridge: database SQLite ${path.join(dataDir, 'enrichbridge.db')}, redis in-process\n`);
    const proc = server({ DATA_DIR: dataDir, PORT: String(await freePort()), LOG_LEVEL: 'info', WORKER_CONCURRENCY: '0' });
    await proc.waitFor(/"msg":"listening"/, 40_000);
    expect(listeningLine(proc)).toMatchObject({ database: `SQLite ${path.join(dataDir, 'enrichbridge.db')}`, redis: 'in-process' });
    expect(listeningLine(proc)).not.toHaveProperty('data_dir');
  }, 60_000);
});
