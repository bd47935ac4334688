// Test harness: the real app on a real SQLite file in a temporary data folder, listening on a loopback
// port, so integration tests speak real HTTP to the same code `npm start` runs.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type AccountSettings, createAccount, issueToken } from '../../core/accounts/admin.ts';
import type { Environment } from '../../core/accounts/model.ts';
import type { ProductionMatcher } from '../../core/enrich/production-matcher.ts';
import { NoSnapshotMatcher } from '../../core/enrich/production-matcher.ts';
import { EnrichService } from '../../core/enrich/service.ts';
import { MemoryRateLimiter } from '../../core/limits/rate-limiter.ts';
import type { KyselyStore } from '../../core/storage/kysely-store.ts';
import { SQLITE_FILE_NAME, openSqliteStore } from '../../core/storage/sqlite.ts';
import { createApp } from '../../server/http/app.ts';
import { createLogger } from '../../server/logger.ts';

/** A JSON-lines file's lines, each parsed (a generated snapshot's people, households or queries). */
export function readJsonl<T>(file: string, parse: (value: unknown) => T): T[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => parse(JSON.parse(line)));
}

export function tempDir(prefix = 'enrichbridge-test-'): string {
  return mkdtempSync(path.join(tmpdir(), prefix));
}

export interface TestServer {
  readonly url: string;
  readonly dataDir: string;
  readonly dbFile: string;
  readonly store: KyselyStore;
  readonly service: EnrichService;
  /** Creates an account and returns a fresh token for it. */
  account(name: string, settings: AccountSettings, environment: Environment): Promise<string>;
  /** Another token for an existing account. */
  token(name: string, environment: Environment): Promise<string>;
  close(): Promise<void>;
}

export interface TestServerOptions {
  readonly requireHttps?: boolean;
  readonly trustProxy?: string | false;
  readonly productionMatcher?: ProductionMatcher;
}

export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = tempDir();
  const dbFile = path.join(dataDir, SQLITE_FILE_NAME);
  const { store } = await openSqliteStore(dbFile);
  const service = new EnrichService({
    store,
    rateLimiter: new MemoryRateLimiter(),
    productionMatcher: options.productionMatcher ?? new NoSnapshotMatcher(),
  });
  const app = createApp({
    service,
    logger: createLogger('silent'),
    trustProxy: options.trustProxy ?? false,
    requireHttps: options.requireHttps ?? false,
  });
  const server: Server = await new Promise((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    dataDir,
    dbFile,
    store,
    service,
    async account(name, settings, environment) {
      await createAccount(store, name, settings);
      return (await issueToken(store, name, environment)).token;
    },
    async token(name, environment) {
      return (await issueToken(store, name, environment)).token;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface Reply {
  readonly status: number;
  readonly headers: Headers;
  readonly body: unknown;
  readonly text: string;
}

/** POSTs to an enrichment endpoint; `body` is JSON-encoded unless it is already a string. */
export async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = undefined;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed, text };
}

/** What a promise rejects with; fails when it resolves instead. */
export async function caught(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}
