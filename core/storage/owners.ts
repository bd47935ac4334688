// Who holds a lease or a load across processes sharing the data folder: `host:pid`, so a process that
// starts later can tell a holder on this host that is gone (SIGKILL, a crash) from one still at work.
import { hostname } from 'node:os';

/** `host:pid` of this process. */
export function processOwner(): string {
  return `${hostname()}:${process.pid}`;
}

/** True while a process with this pid exists on this host (under any user). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * True when `owner` (`host:pid`, optionally followed by `:suffix`) names a process on this host that
 * no longer exists. Another host's processes cannot be checked, and this process is never dead.
 */
export function ownerKnownDead(owner: string, options: { host?: string; isAlive?: (pid: number) => boolean } = {}): boolean {
  const match = /^(.+):(\d+)(?::[0-9a-f]{8})?$/.exec(owner);
  if (match === null || match[1] === undefined || match[2] === undefined) return false;
  const pid = Number(match[2]);
  return match[1] === (options.host ?? hostname()) && pid !== process.pid && !(options.isAlive ?? processAlive)(pid);
}
