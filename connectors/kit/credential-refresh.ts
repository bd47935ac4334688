// Token refresh, one at a time per installation (jsforce's SessionRefreshDelegate, cal.com's
// OAuthManager): callers in this process share the refresh in flight, and processes take turns through
// the credential lease, inside which the CRM's refresh reads the credentials again (another process may
// have refreshed meanwhile, and with rotation its refresh token is the only valid one). What a refresh
// produced is saved before anyone uses it: a rotated refresh token must never exist only in memory.
import type { Installations } from '../../bridge/installations.ts';

/** What a CRM's refresh came to: credentials to save first (null: nothing changed), then what callers use. */
export interface Refreshed<Credentials, Use> {
  readonly save: Credentials | null;
  readonly use: Use;
}

export class SingleFlightRefresh<Credentials extends Record<string, unknown>, Use> {
  /** In-flight refreshes by installation. One instance per CRM, shared by all its token sources. */
  private readonly inFlight = new Map<string, Promise<Use>>();

  run(installations: Installations, installationId: string, refresh: () => Promise<Refreshed<Credentials, Use>>): Promise<Use> {
    const running = this.inFlight.get(installationId);
    if (running !== undefined) return running;
    const task = installations.withCredentialLock(installationId, async () => {
      const { save, use } = await refresh();
      if (save !== null) await installations.updateCrmCredentials(installationId, save);
      return use;
    });
    this.inFlight.set(installationId, task);
    const clear = () => this.inFlight.delete(installationId);
    task.then(clear, clear);
    return task;
  }
}
