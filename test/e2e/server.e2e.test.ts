// The service as an operator runs it, across processes: `npm start` on an empty data folder, the
// printed curl line, the CLI changing tokens under a running server, HTTPS, logs, graceful shutdown.
// What a test only sets up (an account, a token for the HTTPS server) is done in-process on the same
// folder, and commands that do not need each other's result run side by side: each CLI start costs
// seconds of CPU.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { createServer } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { generate } from 'selfsigned';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createAccount, issueToken } from '../../core/accounts/admin.ts';
import type { Store } from '../../core/storage/port.ts';
import { openDataFolder } from '../../server/runtime.ts';
import { post, tempDir } from '../support/harness.ts';
import { type Proc, cli, startProcess, startServerProcess } from '../support/processes.ts';
import { sleep } from '../support/requests.ts';

const running: Proc[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((proc) => proc.stop()));
});

/**
 * One `npm start` on a fresh data folder, for the tests that only read what such a start prints and
 * answers (the curl line, the request logs): started by the first that asks, stopped when the file ends.
 */
let fresh: Promise<{ proc: Proc; url: string }> | undefined;
function freshServer(): Promise<{ proc: Proc; url: string }> {
  fresh ??= startServerProcess({ DATA_DIR: tempDir() });
  return fresh;
}
afterAll(async () => {
  const started = await fresh?.catch(() => undefined);
  await started?.proc.stop();
});

/** Runs `change` on the store of a data folder in-process, as an `accounts` or `tokens` command would. */
async function inFolder<T>(dataDir: string, change: (store: Store) => Promise<T>): Promise<T> {
  const { store } = await openDataFolder(dataDir);
  try {
    return await change(store);
  } finally {
    await store.close();
  }
}

async function serve(env: Record<string, string>, how: 'npm' | 'node' | 'cli' = 'npm') {
  const started = await startServerProcess(env, how);
  running.push(started.proc);
  return started;
}

describe('npm start on a fresh data folder', () => {
  it('creates a demo account and prints a sandbox token and a curl line that enriches Amanda Taylor', async () => {
    const { proc } = await freshServer();
    const line = (await proc.waitFor(/^\s*(curl .+)$/m))[1] ?? '';
    const { stdout } = await promisify(execFile)('sh', ['-c', line]);
    const body = JSON.parse(stdout);
    expect(body).toMatchObject({ id: 'demo-1', household_matched: true, career_matched: true });
    expect(body.household.windfall_id).toBe('bde3d183ad6215f2932217ee5d6d368a');
    expect(body.career.linkedin_url).toBe('linkedin.com/in/amanda-taylor');
  });

  it('enrichbridge start runs the same server: its first start prints the curl line, which is answered', async () => {
    const { proc } = await serve({ DATA_DIR: tempDir() }, 'cli');
    const line = (await proc.waitFor(/^\s*(curl .+)$/m))[1] ?? '';
    const { stdout } = await promisify(execFile)('sh', ['-c', line]);
    expect(JSON.parse(stdout)).toMatchObject({ id: 'demo-1', household_matched: true, career_matched: true });
  });

  it('mints the demo token only once listening: a first start that fails loses nothing', async () => {
    const dataDir = tempDir();
    // The port taken, on the address the server listens on (127.0.0.1 outside production).
    const taken = createServer();
    await new Promise<void>((resolve, reject) => {
      taken.once('error', reject);
      taken.listen(0, '127.0.0.1', () => resolve());
    });
    try {
      const address = taken.address();
      const port = typeof address === 'object' && address !== null ? String(address.port) : '';
      const clash = startProcess(process.execPath, ['bin/server.js'], { DATA_DIR: dataDir, PORT: port });
      expect(await clash.exited()).toBe(1);
      expect(clash.output()).toContain(`port ${port} on 127.0.0.1 is in use: start with PORT=`);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
    const { proc } = await serve({ DATA_DIR: dataDir });
    await proc.waitFor(/sandbox token: sandbox_\S+/);
  });

  it('creates nothing and prints no token in production mode', async () => {
    const { proc, url } = await serve({ DATA_DIR: tempDir(), NODE_ENV: 'production', HOST: '127.0.0.1', REQUIRE_HTTPS: 'false' });
    const health = await fetch(`${url}/healthz`);
    expect(health.status).toBe(200);
    expect(proc.output()).not.toMatch(/sandbox token|sandbox_/);
  });
});

describe('CLI and a running server share the data folder', () => {
  it('honours a token created, then revoked, by the CLI within a second, without a restart', async () => {
    const dataDir = tempDir();
    const { url } = await serve({ DATA_DIR: dataDir });
    // As `accounts create acme --career-intelligence --quota 100 --quota-period week` would.
    await inFolder(dataDir, (store) => createAccount(store, 'acme', { careerIntelligence: true, quotaLimit: 100, quotaPeriod: 'week' }));
    const created = await cli(['tokens', 'create', 'acme', '--env', 'sandbox'], { DATA_DIR: dataDir });
    const token = created.stdout.trim();
    expect(created.stdout).toBe(`${token}\n`); // the token alone on stdout
    expect(token).toMatch(/^sandbox_/);
    const first = await post(`${url}/sandbox/v1`, { emails: ['amanda.taylor@sandbox.windfall.com'] }, { 'X-WF-Auth-Token': token });
    expect(first.status).toBe(200);

    await cli(['tokens', 'revoke', token], { DATA_DIR: dataDir });
    const revokedAt = Date.now();
    let status = 200;
    while (status === 200 && Date.now() - revokedAt < 1000) {
      status = (await post(`${url}/sandbox/v1`, {}, { 'X-WF-Auth-Token': token })).status;
      if (status === 200) await sleep(50);
    }
    expect(status).toBe(401);

    const shown = await cli(['accounts', 'show', 'acme'], { DATA_DIR: dataDir });
    expect(shown.stdout).toMatch(/career intelligence\s+on/);
    expect(shown.stdout).toMatch(/100 per week for each production token/);
    expect(shown.stdout).toMatch(/sandbox\s+created .* revoked /);
  });

  it('explains a mistake and exits non-zero', async () => {
    const dataDir = tempDir();
    // As `accounts create acme` would; the four mistakes below change nothing, and run side by side.
    await inFolder(dataDir, (store) => createAccount(store, 'acme', {}));
    await Promise.all([
      expect(cli(['accounts', 'create', 'acme'], { DATA_DIR: dataDir })).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('already exists') }),
      expect(cli(['tokens', 'create', 'nobody', '--env', 'sandbox'], { DATA_DIR: dataDir })).rejects.toMatchObject({
        code: 1,
        stderr: expect.stringContaining('no account named'),
      }),
      expect(cli(['accounts', 'create', 'x', '--career-fields', 'job_title,shoe_size'], { DATA_DIR: dataDir })).rejects.toMatchObject({
        stderr: expect.stringContaining('shoe_size'),
      }),
      expect(cli(['tokens', 'create', 'acme', '--env', 'staging'], { DATA_DIR: dataDir })).rejects.toMatchObject({ code: 1 }),
    ]);
  });
});

describe('Logs', () => {
  it('write one JSON line per request with no token and no full e-mail address', async () => {
    const { proc, url } = await freshServer();
    const token = (await proc.waitFor(/sandbox token: (\S+)/))[1] ?? '';
    await post(`${url}/sandbox/v1`, { emails: ['amanda.taylor@sandbox.windfall.com'] }, { 'X-WF-Auth-Token': token });
    await post(`${url}/sandbox/v1`, '{bad', { 'X-WF-Auth-Token': `${token}x` });
    // A caller can put anything in the path; the log names the route pattern instead.
    await post(`${url}/sandbox/v1/amanda.taylor@sandbox.windfall.com`, {}, { 'X-WF-Auth-Token': token });
    await fetch(`${url}/${token}`);
    await proc.waitFor(/"status":401/);
    await proc.waitFor(/"method":"GET","route":"unmatched","status":404/);
    const logLines = proc
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'));
    expect(logLines.some((line) => JSON.parse(line).msg === 'request')).toBe(true);
    expect(logLines.join('\n')).not.toContain(token);
    expect(logLines.join('\n')).not.toContain('amanda.taylor@');
  });
});

describe('HTTPS', () => {
  it('serves TLS with a certificate and key from the environment, and requires HTTPS in production mode', async () => {
    const dir = tempDir();
    const pems = await generate([{ name: 'commonName', value: 'localhost' }], { keySize: 2048 });
    writeFileSync(path.join(dir, 'cert.pem'), pems.cert);
    writeFileSync(path.join(dir, 'key.pem'), pems.private);
    const dataDir = path.join(dir, 'data');
    // As `accounts create tls` and `tokens create tls --env sandbox` would.
    const token = await inFolder(dataDir, async (store) => {
      await createAccount(store, 'tls', {});
      return (await issueToken(store, 'tls', 'sandbox')).token;
    });
    const { url } = await serve({
      DATA_DIR: dataDir,
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      TLS_CERT_FILE: path.join(dir, 'cert.pem'),
      TLS_KEY_FILE: path.join(dir, 'key.pem'),
    });
    expect(url.startsWith('https://')).toBe(true);
    const status = await new Promise<number>((resolve, reject) => {
      const request = https.request(
        `${url}/sandbox/v1`,
        { method: 'POST', ca: pems.cert, headers: { 'content-type': 'application/json', 'x-wf-auth-token': token } },
        (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        },
      );
      request.on('error', reject);
      request.end('{"emails":["amanda.taylor@sandbox.windfall.com"]}');
    });
    expect(status).toBe(200);

    const { url: plainUrl } = await serve({ DATA_DIR: dataDir, NODE_ENV: 'production', HOST: '127.0.0.1' });
    const plain = await post(`${plainUrl}/sandbox/v1`, {}, { 'X-WF-Auth-Token': token });
    expect(plain.status).toBe(403);
    expect(plain.body).toEqual({ message: 'HTTPS is required.' });
  });
});

describe('Graceful shutdown', () => {
  it('lets an in-flight request finish on SIGTERM, then exits 0', async () => {
    const { proc, url } = await serve({ DATA_DIR: tempDir() }, 'node');
    const token = (await proc.waitFor(/sandbox token: (\S+)/))[1] ?? '';
    const body = '{"emails":["amanda.taylor@sandbox.windfall.com"]}';
    const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const request = http.request(
        `${url}/sandbox/v1`,
        { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(body.length), 'x-wf-auth-token': token } },
        (response) => {
          let text = '';
          response.on('data', (chunk: Buffer) => (text += chunk.toString()));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
        },
      );
      request.on('error', reject);
      // Half the body now, the rest after SIGTERM: the request is in flight when the signal lands.
      request.write(body.slice(0, 10));
      setTimeout(() => {
        request.end(body.slice(10));
      }, 700);
    });
    await sleep(200);
    const exit = proc.stop();
    await proc.waitFor(/shutting down/);
    const reply = await answer;
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.text)).toMatchObject({ household_matched: true });
    expect(await exit).toBe(0);
    expect(proc.output()).toContain('"msg":"stopped"');
  });
});
