// The storage port of the enrichment service: accounts, tokens and quota ledgers. Adapters (SQLite
// now, PostgreSQL next) implement it; nothing above this line knows which database is underneath.
import type { Account, NewAccount, TokenRecord } from '../accounts/model.ts';
import type { SuppressionStore } from '../suppression/store.ts';

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

export const SNAPSHOT_STATES = ['loading', 'ready', 'failed', 'rolled_back'] as const;
export type SnapshotState = (typeof SNAPSHOT_STATES)[number];

/** One data snapshot as the registry knows it; the data itself lives at `location`. */
export interface SnapshotRecord {
  readonly id: string;
  readonly version: string;
  readonly location: string;
  readonly state: SnapshotState;
  readonly households: number;
  readonly people: number;
  readonly skippedLines: number;
  readonly failure: string | null;
  readonly createdAt: string;
  readonly loadedAt: string | null;
  readonly activatedAt: string | null;
  readonly active: boolean;
  /** `host:pid` of the process that loads (or loaded) it. */
  readonly loader: string | null;
}

export interface Store {
  /** Who production never answers about (core/suppression). */
  readonly suppressions: SuppressionStore;
  createAccount(input: NewAccount): Promise<Account>;
  /** Replaces the account's settings (all but id, name and creation time). */
  updateAccount(account: Account): Promise<void>;
  findAccountByName(name: string): Promise<Account | undefined>;
  findAccountById(id: string): Promise<Account | undefined>;
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

  /** Registers a snapshot whose load is starting. */
  beginSnapshot(snapshot: { id: string; version: string; location: string; createdAt: string; loader: string }): Promise<void>;
  /** Marks a loaded snapshot ready and makes it the active one, in one transaction. */
  activateLoadedSnapshot(id: string, counts: { households: number; people: number; skippedLines: number }): Promise<void>;
  failSnapshot(id: string, failure: string): Promise<void>;
  /** Marks a snapshot failed only while it is still `loading` (its loader is gone); false otherwise. */
  abandonSnapshot(id: string, failure: string): Promise<boolean>;
  activeSnapshot(): Promise<SnapshotRecord | undefined>;
  /** Newest first. */
  listSnapshots(): Promise<SnapshotRecord[]>;
  /**
   * Makes the previously active ready snapshot active again and marks the current one rolled back;
   * returns the snapshot now active, or undefined when there is none to go back to.
   */
  rollbackSnapshot(): Promise<SnapshotRecord | undefined>;
  /** Removes an inactive snapshot's entry; false when it is active (or gone). */
  deleteSnapshot(id: string): Promise<boolean>;

  close(): Promise<void>;
}
