// Child processes for end-to-end tests: the server as `npm start` runs it and the CLI as an operator
// types it, with their output captured and waited on.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);
export const REPO = path.resolve(import.meta.dirname, '../..');

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

export interface Proc {
  readonly child: ChildProcess;
  output(): string;
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited(): Promise<number | null>;
  /** SIGTERM to the whole process group (npm, its shell and node). */
  stop(): Promise<number | null>;
}

/** `inherit: false` gives the process `env` alone, none of the test run's own variables (as a fresh shell would). */
export function startProcess(command: string, args: string[], env: Record<string, string>, options: { readonly inherit?: boolean } = {}): Proc {
  const child = spawn(command, args, {
    cwd: REPO,
    env: options.inherit === false ? env : { ...process.env, ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    output: () => out,
    async waitFor(pattern, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const match = pattern.exec(out);
        if (match !== null) return match;
        if (child.exitCode !== null || Date.now() > deadline) {
          throw new Error(`waiting for ${pattern} in:\n${out}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
    exited: () => exit,
    async stop() {
      if (child.exitCode === null && child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGTERM');
        } catch {
          // already gone
        }
      }
      return exit;
    },
  };
}

/**
 * Starts the server on a free port: through `npm start`, as the README says, as the bare node
 * process npm runs, when a test needs the server's own exit code and signal handling, or as an
 * installed package runs it (`enrichbridge start`).
 */
export async function startServerProcess(env: Record<string, string>, how: 'npm' | 'node' | 'cli' = 'npm'): Promise<{ proc: Proc; url: string }> {
  const port = await freePort();
  const proc =
    how === 'npm'
      ? startProcess('npm', ['start', '--silent'], { PORT: String(port), ...env })
      : how === 'cli'
        ? startProcess(process.execPath, ['bin/enrichbridge.js', 'start'], { PORT: String(port), ...env })
        : startProcess(process.execPath, ['bin/server.js'], { PORT: String(port), ...env });
  try {
    const match = await proc.waitFor(/"url":"(https?:\/\/[^"]+)"/);
    return { proc, url: match[1] ?? '' };
  } catch (error) {
    // A server that did not come up is stopped here: the caller never got it to stop.
    await killProcess(proc);
    throw error;
  }
}

/** Runs `enrichbridge …` as `npx enrichbridge` would, returning stdout and stderr. */
export async function cli(args: string[], env: Record<string, string>): Promise<{ stdout: string; stderr: string }> {
  return execFileAsync(process.execPath, [path.join(REPO, 'bin/enrichbridge.js'), ...args], { cwd: REPO, env: { ...process.env, ...env } });
}

/** SIGKILLs a process's whole group (npm, its shell and node) if it still runs, and waits for it. */
export async function killProcess(proc: Proc): Promise<void> {
  const { pid } = proc.child;
  if (pid !== undefined && proc.child.exitCode === null && proc.child.signalCode === null) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await proc.exited();
}

/**
 * Polls `probe` until it returns a value (not undefined), failing after `timeoutMs` with `what` and,
 * when given, the context (a server's recent output) in the message.
 */
export async function until<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  options: { timeoutMs?: number; intervalMs?: number; context?: () => string } = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) {
      const context = options.context?.();
      throw new Error(`timed out waiting for ${what}${context === undefined ? '' : `; server output:\n${context}`}`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 50));
  }
}

/** A command's stderr without the line every CLI command starts it with (the database and Redis it uses). */
export function withoutBackendsLine(stderr: string): string {
  return stderr.replace(/^enrichbridge: database .*, redis .*\n/, '');
}
