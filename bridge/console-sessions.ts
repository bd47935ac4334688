// Console sessions: who is signed in to the admin console and what they may see, an
// operator (everything) or one installation's CRM admin. The session id is a bearer secret: only its
// hash is stored, and the browser holds it in a sealed cookie (server/http/console). A session ends at
// sign-out, at its expiry, or when its installation is disconnected.
import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { PipelineDatabase } from './schema.ts';

/** How long a console session lasts, whatever is done with it. */
export const CONSOLE_SESSION_TTL_MS = 8 * 3600_000;

export type ConsoleScope = { readonly kind: 'operator' } | { readonly kind: 'installation'; readonly installationId: string };

export interface ConsoleSession {
  /** The bearer id (only in the cookie; never stored). */
  readonly id: string;
  readonly scope: ConsoleScope;
  readonly expiresAt: string;
}

function hashId(id: string): string {
  return createHash('sha256').update(`console-session:${id}`).digest('base64url');
}

export class ConsoleSessions {
  constructor(
    private readonly db: Kysely<PipelineDatabase>,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async create(scope: ConsoleScope): Promise<ConsoleSession> {
    const id = randomBytes(32).toString('base64url');
    const now = this.now();
    const expiresAt = new Date(now.getTime() + CONSOLE_SESSION_TTL_MS).toISOString();
    await this.db
      .insertInto('console_sessions')
      .values({
        id_hash: hashId(id),
        scope: scope.kind,
        installation_id: scope.kind === 'installation' ? scope.installationId : null,
        created_at: now.toISOString(),
        expires_at: expiresAt,
        revoked_at: null,
      })
      .execute();
    return { id, scope, expiresAt };
  }

  /** The live session with this id: not expired, not revoked; else undefined. */
  async find(id: string): Promise<ConsoleSession | undefined> {
    const row = await this.db
      .selectFrom('console_sessions')
      .selectAll()
      .where('id_hash', '=', hashId(id))
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', this.now().toISOString())
      .executeTakeFirst();
    if (row === undefined) return undefined;
    if (row.scope === 'operator') return { id, scope: { kind: 'operator' }, expiresAt: row.expires_at };
    if (row.scope !== 'installation' || row.installation_id === null) return undefined;
    // Disconnected (removed) or disabled since: the session ends with it.
    const installation = await this.db.selectFrom('installations').select('status').where('id', '=', row.installation_id).executeTakeFirst();
    if (installation === undefined || installation.status === 'disabled') {
      await this.revoke(id);
      return undefined;
    }
    return { id, scope: { kind: 'installation', installationId: row.installation_id }, expiresAt: row.expires_at };
  }

  async revoke(id: string): Promise<void> {
    await this.db.updateTable('console_sessions').set({ revoked_at: this.now().toISOString() }).where('id_hash', '=', hashId(id)).execute();
  }

  /** Ends every session of an installation's admins (it was disconnected). */
  async revokeInstallation(installationId: string): Promise<number> {
    const result = await this.db
      .updateTable('console_sessions')
      .set({ revoked_at: this.now().toISOString() })
      .where('installation_id', '=', installationId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }
}
