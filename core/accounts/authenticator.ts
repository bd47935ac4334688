// Resolves an API token to its live token record and account, with a short cache so the hot path
// rarely touches the database while a token created or revoked by the CLI still counts within a second.
import type { Store } from '../storage/port.ts';
import type { Account, TokenRecord } from './model.ts';
import { digestsEqual, hashToken } from './tokens.ts';

export interface Credential {
  readonly token: TokenRecord;
  readonly account: Account;
}

interface CacheEntry {
  readonly credential: Credential;
  readonly expiresAt: number;
}

/** Longest a revoked token, or a changed account setting, can go on being honoured. */
export const CREDENTIAL_CACHE_MS = 250;
const CACHE_LIMIT = 10_000;

export class Authenticator {
  private readonly cache = new Map<string, CacheEntry>();

  constructor(
    private readonly store: Store,
    private readonly ttlMs: number = CREDENTIAL_CACHE_MS,
  ) {}

  async authenticate(token: string): Promise<Credential | undefined> {
    const hash = hashToken(token);
    const now = Date.now();
    const cached = this.cache.get(hash);
    if (cached !== undefined && cached.expiresAt > now) return cached.credential;
    // Unknown tokens are not cached, so a token minted a moment ago works on its first request.
    const found = await this.store.findLiveToken(hash);
    // The database found the row by an index lookup; confirm the digest itself in constant time so a
    // lenient collation or a driver quirk can never admit a near-miss.
    if (found === undefined || !digestsEqual(found.tokenHash, hash)) {
      this.cache.delete(hash);
      return undefined;
    }
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    const credential = { token: found.token, account: found.account };
    this.cache.set(hash, { credential, expiresAt: now + this.ttlMs });
    return credential;
  }
}
