// Installations: one CRM account linked to an enrichment target in an environment, with its settings.
// Secrets (the enrichment token, the CRM's credentials) are sealed with the SecretBox before they touch
// the database, and bound to the installation's id so a sealed value cannot be moved to another row.
import { randomBytes, randomUUID } from 'node:crypto';
import { z } from 'zod';
import { issueToken, requireAccount } from '../core/accounts/admin.ts';
import type { Environment } from '../core/accounts/model.ts';
import { type SecretBox, SecretBoxError } from '../core/secrets/secret-box.ts';
import type { JobQueue } from './job-queue.ts';
import type { Store } from '../core/storage/port.ts';
import {
  type Installation,
  type InstallationSecrets,
  InstallationSecretsSchema,
  type InstallationSettings,
  InstallationSettingsSchema,
  SPECIAL_CATEGORY_FIELDS,
} from './model.ts';
import { DuplicateInstallationError, type PipelineStore } from './store.ts';

export class InstallationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InstallationError';
  }
}

export type TargetInput =
  /** Enrich in-process against this local account; the installation gets a token of its own. */
  { readonly kind: 'local'; readonly accountName: string } | { readonly kind: 'remote'; readonly url: string; readonly token: string };

/** The target an operator names on a command line: `--account NAME`, or `--remote-url` with `--remote-token`. */
export function targetFromFlags(flags: { account?: string | undefined; remoteUrl?: string | undefined; remoteToken?: string | undefined }): TargetInput {
  const remote = flags.remoteUrl !== undefined || flags.remoteToken !== undefined;
  if (flags.account !== undefined && remote) throw new InstallationError('give --account, or --remote-url with --remote-token, not both');
  if (flags.account !== undefined) return { kind: 'local', accountName: flags.account };
  if (flags.remoteUrl !== undefined && flags.remoteToken !== undefined) return { kind: 'remote', url: flags.remoteUrl, token: flags.remoteToken };
  throw new InstallationError('give --account NAME, or --remote-url URL with --remote-token T');
}

export interface NewInstallation {
  readonly provider: string;
  readonly externalAccountId: string;
  readonly environment: Environment;
  readonly target: TargetInput;
  readonly crmCredentials?: Record<string, unknown>;
  readonly settings?: Partial<InstallationSettings>;
}

function secretsContext(installationId: string): string {
  return `installation:${installationId}`;
}

/**
 * How many of the installations' sealed secrets `box` opens, of the first `limit` installations: a key
 * that opens none of them is not the key that sealed them (every webhook and enrichment of theirs would
 * fail). A value that opens but does not parse still counts as opened: the key is right.
 */
export async function secretsOpenedBy(
  box: SecretBox,
  pipeline: PipelineStore,
  limit = Number.POSITIVE_INFINITY,
): Promise<{ readonly tried: number; readonly opened: number }> {
  let tried = 0;
  let opened = 0;
  for (const installation of await pipeline.listInstallations()) {
    if (tried >= limit) break;
    const sealed = await pipeline.sealedSecrets(installation.id);
    if (sealed === undefined) continue;
    tried += 1;
    try {
      box.open(sealed, secretsContext(installation.id));
      opened += 1;
    } catch (error) {
      if (!(error instanceof SecretBoxError)) throw error;
    }
  }
  return { tried, opened };
}

/** A remote endpoint must be http(s), carry no credentials in the URL, and be absolute. */
export function checkRemoteUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    // Not echoed: a mistyped URL can still carry a password or token (`https//user:token@host`).
    throw new InstallationError('remote URL is not an absolute URL (like https://host/path)');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new InstallationError('remote URL must be http or https');
  if (url.username !== '' || url.password !== '') throw new InstallationError('remote URL must not carry credentials; pass the token separately');
  return url.toString();
}

/**
 * What the operator reads (`installations show`, the console's overview) when messages come from another
 * account on the installation's CRM host: a refreshed sandbox's new org id, and the command that moves the
 * installation to it. Null when nothing is marked.
 */
export function orgChangeNotice(installation: Installation): string | null {
  const change = installation.orgChange;
  if (change === undefined || change === null) return null;
  return `org changed (sandbox refreshed?): messages from org ${change.externalAccountId} since ${change.since}; run \`enrichbridge ${installation.provider} reconnect ${installation.id}\``;
}

/**
 * The console's Reconnect (an operator's) hands a CRM's routes a sealed grant naming the installation, at
 * this path with `?grant=`: the CRM's route turns it into its own OAuth link, so the console names no CRM.
 */
export function reconnectRoute(provider: string): string {
  return `/oauth/${encodeURIComponent(provider)}/reconnect`;
}

/** As long as an install link: the operator may send it to the CRM's admin. */
export const RECONNECT_GRANT_TTL_MS = 7 * 24 * 3600_000;
const RECONNECT_GRANT_CONTEXT = 'installation-reconnect';
const ReconnectGrantSchema = z.object({
  purpose: z.literal('installation-reconnect'),
  installationId: z.string().min(1).max(100),
  expiresAt: z.number().int(),
});

/** A reconnect grant: sealed with the data folder's key (neither readable nor forgeable), expiring. */
export function sealReconnectGrant(box: SecretBox, installationId: string, now: Date = new Date()): string {
  const grant: z.infer<typeof ReconnectGrantSchema> = { purpose: 'installation-reconnect', installationId, expiresAt: now.getTime() + RECONNECT_GRANT_TTL_MS };
  return box.seal(JSON.stringify(grant), RECONNECT_GRANT_CONTEXT);
}

/** The installation a grant names; null when it is not ours, altered, or expired. */
export function openReconnectGrant(box: SecretBox, sealed: string, now: Date = new Date()): string | null {
  let text: string;
  try {
    text = box.open(sealed, RECONNECT_GRANT_CONTEXT);
  } catch (error) {
    if (error instanceof SecretBoxError) return null;
    throw error;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const grant = ReconnectGrantSchema.safeParse(value);
  return grant.success && grant.data.expiresAt > now.getTime() ? grant.data.installationId : null;
}

export class Installations {
  constructor(
    private readonly pipeline: PipelineStore,
    private readonly store: Store,
    private readonly box: SecretBox,
    private readonly queue: JobQueue,
  ) {}

  async create(input: NewInstallation): Promise<Installation> {
    // A new installation writes no special-category field until an admin chooses to.
    const settings = InstallationSettingsSchema.parse({ ...input.settings, excludedFields: input.settings?.excludedFields ?? [...SPECIAL_CATEGORY_FIELDS] });
    const id = `inst_${randomUUID().replaceAll('-', '')}`;
    const existing = await this.pipeline.findInstallationByAccount(input.provider, input.externalAccountId);
    if (existing !== undefined) {
      throw new InstallationError(`${input.provider} account ${input.externalAccountId} is already connected as ${existing.id}`);
    }
    let target: Installation['target'];
    let enrichmentToken: string;
    if (input.target.kind === 'local') {
      const account = await requireAccount(this.store, input.target.accountName);
      // A token of its own: revoking it (disconnect) touches no other client of the account, and its
      // usage shows on the account as this installation's.
      const issued = await issueToken(this.store, account.name, input.environment);
      target = { kind: 'local', accountId: account.id, tokenId: issued.record.id };
      enrichmentToken = issued.token;
    } else {
      target = { kind: 'remote', url: checkRemoteUrl(input.target.url) };
      enrichmentToken = input.target.token;
      if (enrichmentToken.trim() === '') throw new InstallationError('a remote target needs its token');
    }
    const secrets: InstallationSecrets = { enrichmentToken, crm: input.crmCredentials ?? {} };
    return this.pipeline.createInstallation({
      id,
      provider: input.provider,
      externalAccountId: input.externalAccountId,
      environment: input.environment,
      target,
      sealedSecrets: this.box.seal(JSON.stringify(secrets), secretsContext(id)),
      settings,
    });
  }

  async require(id: string): Promise<Installation> {
    const installation = await this.pipeline.findInstallation(id);
    if (installation === undefined) throw new InstallationError(`no installation ${id}`);
    return installation;
  }

  async secrets(id: string): Promise<InstallationSecrets> {
    const sealed = await this.pipeline.sealedSecrets(id);
    if (sealed === undefined) throw new InstallationError(`no installation ${id}`);
    return InstallationSecretsSchema.parse(JSON.parse(this.box.open(sealed, secretsContext(id))));
  }

  /** Replaces the CRM credentials (a refreshed or rotated token), sealed as before. */
  async updateCrmCredentials(id: string, crm: Record<string, unknown>): Promise<void> {
    const current = await this.secrets(id);
    const sealed = this.box.seal(JSON.stringify({ ...current, crm }), secretsContext(id));
    await this.pipeline.updateInstallation(id, { sealedSecrets: sealed });
  }

  /** The installation's webhook signing secret, made (256 random bits) and sealed on first use. */
  async webhookSecret(id: string): Promise<string> {
    return this.secretOnFirstUse(id, 'webhookSecret');
  }

  /**
   * The secret in the URL of the installation's unsigned webhook (Salesforce outbound messages carry no
   * signature), made (256 random bits, URL-safe) and sealed on first use.
   */
  async outboundSecret(id: string): Promise<string> {
    return this.secretOnFirstUse(id, 'outboundSecret');
  }

  /**
   * The secret a CRM's record component sends with each call (the Salesforce component's External
   * Credential holds it), made (256 random bits, URL-safe) and sealed on first use.
   */
  async recordSecret(id: string): Promise<string> {
    return this.secretOnFirstUse(id, 'recordSecret');
  }

  /** A new record secret in place of the old one, which stops working at once. */
  async rotateRecordSecret(id: string): Promise<string> {
    const current = await this.secrets(id);
    const made = randomBytes(32).toString('base64url');
    await this.pipeline.updateInstallation(id, { sealedSecrets: this.box.seal(JSON.stringify({ ...current, recordSecret: made }), secretsContext(id)) });
    return made;
  }

  private async secretOnFirstUse(id: string, field: 'webhookSecret' | 'outboundSecret' | 'recordSecret'): Promise<string> {
    const current = await this.secrets(id);
    const existing = current[field];
    if (existing !== undefined) return existing;
    const made = randomBytes(32).toString('base64url');
    await this.pipeline.updateInstallation(id, { sealedSecrets: this.box.seal(JSON.stringify({ ...current, [field]: made }), secretsContext(id)) });
    return made;
  }

  /**
   * Runs `work` holding the installation's credential lease, across processes: one refresh at a time,
   * so with refresh-token rotation no two processes spend the same refresh token. Waits for another
   * holder (up to `waitMs`); a holder that died frees it when its lease runs out.
   */
  async withCredentialLock<T>(id: string, work: () => Promise<T>, options: { leaseMs?: number; waitMs?: number } = {}): Promise<T> {
    const key = `credentials:${id}`;
    const owner = randomUUID();
    const leaseMs = options.leaseMs ?? 60_000;
    const deadline = Date.now() + (options.waitMs ?? 30_000);
    while (!(await this.pipeline.acquireLease(key, owner, leaseMs))) {
      if (Date.now() > deadline) throw new InstallationError(`installation ${id}: another process has been refreshing its credentials for too long`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    try {
      return await work();
    } finally {
      await this.pipeline.releaseLease(key, owner);
    }
  }

  /**
   * Marks the installation: messages arrive from `externalAccountId` on its CRM host (a refreshed Salesforce
   * sandbox's new org id), first seen at `at`. The same account marked again keeps its first time, so the mark
   * says since when; another one replaces it (refreshed again). True when the mark is new or changed.
   */
  async markOrgChanged(id: string, externalAccountId: string, at: Date): Promise<boolean> {
    const installation = await this.require(id);
    if (installation.externalAccountId === externalAccountId) return false;
    if (installation.orgChange?.externalAccountId === externalAccountId) return false;
    await this.pipeline.updateInstallation(id, { orgChange: { externalAccountId, since: at.toISOString() } });
    return true;
  }

  /**
   * Moves the installation to another account of its CRM (a refreshed sandbox's new org id) with the new
   * CRM credentials, in one update: its settings, the other secrets (webhook, outbound and record secrets,
   * the enrichment token), status, log and record states stay; the org-changed mark is cleared. Refused
   * when another installation has that account (two installations never share one).
   */
  async moveToAccount(id: string, change: { readonly externalAccountId: string; readonly crmCredentials: Record<string, unknown> }): Promise<Installation> {
    const installation = await this.require(id);
    const other = await this.pipeline.findInstallationByAccount(installation.provider, change.externalAccountId);
    if (other !== undefined && other.id !== id) {
      throw new InstallationError(`${installation.provider} account ${change.externalAccountId} is already connected as ${other.id}; disconnect it first`);
    }
    const current = await this.secrets(id);
    const sealed = this.box.seal(JSON.stringify({ ...current, crm: change.crmCredentials }), secretsContext(id));
    try {
      const moved = await this.pipeline.updateInstallation(id, { externalAccountId: change.externalAccountId, sealedSecrets: sealed, orgChange: null });
      if (moved === undefined) throw new InstallationError(`no installation ${id}`);
      return moved;
    } catch (error) {
      // Another installation took the account between the check and the update.
      if (error instanceof DuplicateInstallationError)
        throw new InstallationError(`${installation.provider} account ${change.externalAccountId} is already connected`);
      throw error;
    }
  }

  async updateSettings(id: string, changes: Partial<InstallationSettings>): Promise<Installation> {
    const installation = await this.require(id);
    const settings = InstallationSettingsSchema.parse({ ...installation.settings, ...changes });
    if (installation.status === 'paused' && installation.pauseReason === 'budget') {
      // A budget pause ends with any change of settings (a larger budget, none): the next batch counts
      // the month again and pauses once more if it is still spent.
      const resumed = await this.pipeline.updateInstallation(id, { settings, status: 'active', pauseReason: null, pausedUntil: null });
      await this.queue.reschedule(id, new Date());
      return resumed ?? installation;
    }
    return (await this.pipeline.updateInstallation(id, { settings })) ?? installation;
  }

  async pause(id: string): Promise<Installation> {
    await this.require(id);
    return (await this.pipeline.updateInstallation(id, { status: 'paused', pauseReason: 'admin', pausedUntil: null })) as Installation;
  }

  /** Lifts any pause (an operator's, or a limit's before its reset). */
  async resume(id: string): Promise<Installation> {
    const installation = await this.require(id);
    if (installation.status === 'disabled') throw new InstallationError(`installation ${id} is disabled; connect it again`);
    const resumed = (await this.pipeline.updateInstallation(id, { status: 'active', pauseReason: null, pausedUntil: null })) as Installation;
    // Jobs held back for a limit's reset run now.
    await this.queue.reschedule(id, new Date());
    return resumed;
  }

  async disable(id: string): Promise<Installation> {
    await this.require(id);
    return (await this.pipeline.updateInstallation(id, { status: 'disabled' })) as Installation;
  }

  /** Disconnects: revokes the installation's own token (local target), forgets the installation, and drops its jobs. */
  async remove(id: string): Promise<void> {
    const installation = await this.require(id);
    if (installation.target.kind === 'local') {
      await this.store.revokeToken({ id: installation.target.tokenId });
    }
    await this.pipeline.deleteInstallation(id);
    // The installation first: a job that outlives it (one queued after this, or left by a failure here)
    // is settled without running by the pipeline, which finds no installation for it.
    await this.queue.removeInstallation(id);
    // Disconnected means its records' values are gone from the disk too, the jobs' included.
    await this.pipeline.afterErasure(id);
  }
}
