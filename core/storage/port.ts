// The storage port of the enrichment service: accounts, tokens and quota ledgers. Adapters (SQLite
// now, PostgreSQL next) implement it; nothing above this line knows which database is underneath.
import type { Account, NewAccount, TokenRecord } from '../accounts/model.ts';

export interface NewToken {
  readonly id: string;
  readonly accountId: string;
  readonly environment: TokenRecord['environment'];
  /** SHA-256 of the token, hex. */
  readonly hash: string;
}

export interface QuotaTake {
  /** False when the ledger was already at the limit: nothing was taken. */
  readonly granted: boolean;
  /** Units used in the period after this call. */
  readonly used: number;
}

export class DuplicateAccountError extends Error {
  constructor(name: string) {
    super(`an account named "${name}" already exists`);
    this.name = 'DuplicateAccountError';
  }
}

export interface Store {
  createAccount(input: NewAccount): Promise<Account>;
  /** Replaces the account's settings (all but id, name and creation time). */
  updateAccount(account: Account): Promise<void>;
  findAccountByName(name: string): Promise<Account | undefined>;
  listAccounts(): Promise<Account[]>;
  countAccounts(): Promise<number>;

  createToken(token: NewToken): Promise<TokenRecord>;
  /** The live (unrevoked) token with this hash and its account. */
  findLiveToken(hash: string): Promise<{ token: TokenRecord; account: Account; tokenHash: string } | undefined>;
  /** Revokes by token hash or token id; false when no live token matched. */
  revokeToken(ref: { hash: string } | { id: string }): Promise<boolean>;
  listTokens(accountId: string): Promise<TokenRecord[]>;

  /**
   * Takes one unit from a token's ledger for the period, atomically: when `limit` units are already
   * used, nothing is taken, even with concurrent callers in other processes.
   */
  takeQuota(tokenId: string, periodKey: string, limit: number): Promise<QuotaTake>;
  /** Gives back one unit taken for a request that did not complete. */
  returnQuota(tokenId: string, periodKey: string): Promise<void>;
  quotaUsed(tokenId: string, periodKey: string): Promise<number>;

  close(): Promise<void>;
}
