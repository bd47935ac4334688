// Process configuration from the environment, validated once at start so a typo fails loudly instead
// of running with a silent default.
import { isIP } from 'node:net';
import path from 'node:path';
import { z } from 'zod';
import { DEFAULT_LOG_VALUES_RETENTION_DAYS } from '../bridge/retention.ts';
import type { OutboundTimeouts } from '../core/client/timeouts.ts';
import { redactDatabaseUrl, redactRedisUrl } from '../core/observe/connection-urls.ts';
import { SQLITE_FILE_NAME } from '../core/storage/sqlite.ts';

const flag = z.enum(['true', 'false', '1', '0', 'yes', 'no']).transform((value) => value === 'true' || value === '1' || value === 'yes');

/** One trusted proxy: a named range express knows, an IPv4/IPv6 address, or a subnet in CIDR form. */
function isProxyEntry(entry: string): boolean {
  if (['loopback', 'linklocal', 'uniquelocal'].includes(entry)) return true;
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

const EnvSchema = z.object({
  NODE_ENV: z.string().optional(),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).optional(),
  DATA_DIR: z.string().min(1).default('./data'),
  /**
   * PostgreSQL for the state several instances share (accounts, tokens, quotas, installations, record
   * state, the log, the job queue). Unset: the SQLite file in DATA_DIR, the zero-set-up default.
   */
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\/[^\s]+$/i, 'expected a postgres:// (or postgresql://) URL')
    .optional(),
  /** Connections each instance holds to DATABASE_URL at most. */
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  /** What every key this deployment keeps in Redis starts with (several deployments may share one Redis). */
  REDIS_KEY_PREFIX: z
    .string()
    .regex(/^[\w:.-]{1,64}$/, 'letters, digits and : . _ - only')
    .default('eb:'),
  /** Redis for the limits several instances share: the inbound per-token rate and the outbound pacing. */
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\/[^\s]+$/i, 'expected a redis:// (or rediss://) URL')
    .optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  TLS_CERT_FILE: z.string().min(1).optional(),
  TLS_KEY_FILE: z.string().min(1).optional(),
  /**
   * Proxies whose X-Forwarded-* headers are believed: comma-separated addresses, subnets or
   * `loopback`/`linklocal`/`uniquelocal`. Hop counts and `true` are refused: they would believe any
   * client that connects directly.
   */
  TRUST_PROXY: z
    .string()
    .min(1)
    .refine((value) => value.split(',').every((entry) => isProxyEntry(entry.trim())), {
      message: 'expected comma-separated proxy addresses or subnets (e.g. loopback, 10.0.0.0/8), not a hop count or true',
    })
    .optional(),
  REQUIRE_HTTPS: flag.optional(),
  /** Who may read GET /metrics without a token: comma-separated addresses or subnets of the connecting peer. */
  METRICS_ALLOW: z
    .string()
    .min(1)
    .refine((value) => value.split(',').every((entry) => isProxyEntry(entry.trim())), {
      message: 'expected comma-separated addresses or subnets (e.g. loopback, 10.0.0.0/8)',
    })
    .default('loopback'),
  /** A bearer token that also opens GET /metrics from anywhere (a scraper outside METRICS_ALLOW). */
  METRICS_TOKEN: z.string().min(24, 'at least 24 characters').optional(),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).default(10_000),
  /**
   * How long a client may take to send its request headers: a CRM or a proxy sends them at once, so
   * 10 s is generous, and a client trickling them (or connecting and sending nothing) is cut off.
   */
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(1).max(600_000).default(10_000),
  /** How long a whole request may take to arrive: the largest body is about 1 MiB, and CRMs give up after 5-10 s. */
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(1).max(600_000).default(30_000),
  /**
   * How long an idle keep-alive connection stays open (Node's own default). Behind a load balancer
   * that reuses connections, set it above the balancer's idle timeout. 0 (never) is refused.
   */
  HTTP_KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(1).max(600_000).default(5_000),
  /**
   * Open connections at most; more are closed at once. Below the usual 1,024-descriptor soft limit,
   * so the database, snapshots and outbound CRM calls always have descriptors left.
   */
  MAX_CONNECTIONS: z.coerce.number().int().min(1).max(1_000_000).default(1_000),
  /** Pipeline batches the server works on at once; 0 leaves the queue to `enrichbridge worker` processes. */
  WORKER_CONCURRENCY: z.coerce.number().int().min(0).max(32).default(2),
  /**
   * How long a worker's claim on a batch lasts without renewal (renewed every third of it while the batch
   * runs); a dead worker's jobs return after it, or at once when it ran on this host and we restart.
   */
  WORKER_LEASE_MS: z.coerce.number().int().min(1_000).max(3_600_000).default(30_000),
  /** Per outbound call: a CRM or enrichment endpoint that never answers is given up and retried later. */
  HUBSPOT_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  SALESFORCE_TIMEOUT_MS: z.coerce.number().int().min(100).max(1_800_000).default(120_000),
  /** OAuth token requests (code exchange, refresh, JWT bearer) to HubSpot and Salesforce. */
  TOKEN_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(15_000),
  /** One attempt at a remote enrichment endpoint. */
  ENRICH_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  /** The public base URL CRMs call (webhook signatures and OAuth redirects are checked against it). */
  PUBLIC_URL: z.url().optional(),
  /** The HubSpot public app, for OAuth installs (a static-token `hubspot connect` needs none of these). */
  HUBSPOT_CLIENT_ID: z.string().min(1).optional(),
  HUBSPOT_CLIENT_SECRET: z.string().min(1).optional(),
  HUBSPOT_APP_ID: z.string().regex(/^\d+$/).optional(),
  HUBSPOT_API_BASE_URL: z.url().default('https://api.hubapi.com'),
  HUBSPOT_AUTH_BASE_URL: z.url().default('https://app.hubspot.com'),
  /** Tests and QA only: accept a Salesforce instance URL on any host (a local stand-in). */
  SALESFORCE_ALLOW_ANY_HOST: flag.optional(),
  /** The External Client App, for OAuth installs (web-server flow with PKCE); the secret only if the app requires it. */
  SALESFORCE_CLIENT_ID: z.string().min(1).optional(),
  SALESFORCE_CLIENT_SECRET: z.string().min(1).optional(),
  /** JWT bearer (server to server, `salesforce connect-jwt`): the app's consumer key, the integration user, its key. */
  SALESFORCE_JWT_CONSUMER_KEY: z.string().min(1).optional(),
  SALESFORCE_JWT_USERNAME: z.string().min(1).optional(),
  SALESFORCE_JWT_PRIVATE_KEY_FILE: z.string().min(1).optional(),
  /** Where production orgs log in (a sandbox org always uses https://test.salesforce.com). */
  SALESFORCE_LOGIN_URL: z.url().default('https://login.salesforce.com'),
  /**
   * How long the enrichment log keeps the values each write carried and replaced (personal data); past
   * it they are purged, the entries and their counts kept, and Undo is no longer offered.
   */
  LOG_VALUES_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(DEFAULT_LOG_VALUES_RETENTION_DAYS),
  /** Requests per second per token sent to a remote enrichment endpoint. */
  REMOTE_RATE_PER_SECOND: z.coerce.number().positive().max(1000).default(5),
  /** Also accept outbound messages at the old path without the installation's secret (during a migration). */
  SALESFORCE_OUTBOUND_LEGACY_PATH: flag.optional(),
  /** Refused outbound messages per second from one source address before it is answered 429 unread. */
  SALESFORCE_OUTBOUND_RATE: z.coerce.number().int().positive().max(100_000).default(20),
});

export interface Config {
  readonly production: boolean;
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  /** PostgreSQL's URL when the state lives there; null: the SQLite file in the data folder. */
  readonly databaseUrl: string | null;
  readonly databasePoolSize: number;
  /** Redis's URL when limits are shared across instances; null: in-process limits. */
  readonly redisUrl: string | null;
  readonly redisKeyPrefix: string;
  readonly logLevel: z.infer<typeof EnvSchema>['LOG_LEVEL'];
  readonly tls: { readonly certFile: string; readonly keyFile: string } | null;
  readonly trustProxy: string | false;
  readonly requireHttps: boolean;
  /** GET /metrics: the peers allowed without a token, and the bearer token that opens it from anywhere. */
  readonly metrics: { readonly allow: readonly string[]; readonly token: string | null };
  readonly shutdownTimeoutMs: number;
  /** What bounds a connection, so slow or idle clients cannot hold every descriptor. */
  readonly http: {
    readonly headersTimeoutMs: number;
    readonly requestTimeoutMs: number;
    readonly keepAliveTimeoutMs: number;
    readonly maxConnections: number;
  };
  readonly workerConcurrency: number;
  readonly workerLeaseMs: number;
  /** Days the enrichment log keeps the values written and replaced (Undo's reach). */
  readonly logValuesRetentionDays: number;
  readonly timeouts: OutboundTimeouts;
  readonly remoteRatePerSecond: number;
  readonly publicUrl: string | null;
  readonly salesforceAllowAnyHost: boolean;
  readonly salesforceOutbound: { readonly legacyPath: boolean; readonly ratePerAddress: number };
  readonly hubspot: {
    readonly clientId: string | null;
    readonly clientSecret: string | null;
    readonly appId: string | null;
    readonly apiBaseUrl: string;
    readonly authBaseUrl: string;
  };
  readonly salesforce: {
    readonly clientId: string | null;
    /** Null: the External Client App does not require it (PKCE). */
    readonly clientSecret: string | null;
    readonly loginUrl: string;
    /** All three JWT settings, or null when none is set. */
    readonly jwt: { readonly consumerKey: string; readonly username: string; readonly privateKeyFile: string } | null;
  };
}

/**
 * The database and the Redis a configuration uses, as the start-up log and every CLI command name
 * them: PostgreSQL's URL (password masked) or the SQLite file's path; Redis's URL or "in-process".
 */
export function backendsOf(config: Pick<Config, 'dataDir' | 'databaseUrl' | 'redisUrl'>): { readonly database: string; readonly redis: string } {
  return {
    database: config.databaseUrl === null ? `SQLite ${path.join(config.dataDir, SQLITE_FILE_NAME)}` : `PostgreSQL ${redactDatabaseUrl(config.databaseUrl)}`,
    redis: config.redisUrl === null ? 'in-process' : redactRedisUrl(config.redisUrl),
  };
}

/** Whether a host name or address reaches this machine only (a server listening there is not reachable from another). */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (bare === 'localhost' || bare === '::1') return true;
  return isIP(bare) === 4 && bare.startsWith('127.');
}

/**
 * The address a server with this configuration listens at, as a URL (a wildcard host as `localhost`,
 * as the start-up log shows it); null when the system picks the port at start (PORT=0).
 */
export function listenUrl(config: Pick<Config, 'host' | 'port' | 'tls'>): string | null {
  if (config.port === 0) return null;
  const scheme = config.tls === null ? 'http' : 'https';
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : isIP(config.host) === 6 ? `[${config.host}]` : config.host;
  return `${scheme}://${host}:${config.port}`;
}

/**
 * PUBLIC_URL as the server uses it: as set; unset outside production mode, the address the server
 * listens on, so `npm start` and then opening /console works with nothing to configure. Production
 * mode never guesses: the address CRMs and admins reach is the operator's to give.
 */
export function withDefaultPublicUrl(config: Config): Config {
  if (config.publicUrl !== null || config.production) return config;
  return { ...config, publicUrl: listenUrl(config) };
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
    throw new ConfigError(`invalid configuration: ${problems}`);
  }
  const e = parsed.data;
  const production = e.NODE_ENV === 'production';
  if ((e.TLS_CERT_FILE === undefined) !== (e.TLS_KEY_FILE === undefined)) {
    throw new ConfigError('invalid configuration: TLS_CERT_FILE and TLS_KEY_FILE go together');
  }
  const jwtSettings = [e.SALESFORCE_JWT_CONSUMER_KEY, e.SALESFORCE_JWT_USERNAME, e.SALESFORCE_JWT_PRIVATE_KEY_FILE];
  if (jwtSettings.some((value) => value !== undefined) && jwtSettings.some((value) => value === undefined)) {
    throw new ConfigError('invalid configuration: SALESFORCE_JWT_CONSUMER_KEY, SALESFORCE_JWT_USERNAME and SALESFORCE_JWT_PRIVATE_KEY_FILE go together');
  }
  if (e.HTTP_HEADERS_TIMEOUT_MS > e.HTTP_REQUEST_TIMEOUT_MS) {
    throw new ConfigError('invalid configuration: HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS (the headers are part of the request)');
  }
  const trustProxy =
    e.TRUST_PROXY === undefined
      ? false
      : e.TRUST_PROXY.split(',')
          .map((entry) => entry.trim())
          .join(',');
  return {
    production,
    port: e.PORT,
    // Development binds loopback only: plain HTTP with live tokens should not leave the machine.
    host: e.HOST ?? (production ? '0.0.0.0' : '127.0.0.1'),
    dataDir: path.resolve(e.DATA_DIR),
    databaseUrl: e.DATABASE_URL ?? null,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    redisUrl: e.REDIS_URL ?? null,
    redisKeyPrefix: e.REDIS_KEY_PREFIX,
    logLevel: e.LOG_LEVEL,
    tls: e.TLS_CERT_FILE !== undefined && e.TLS_KEY_FILE !== undefined ? { certFile: e.TLS_CERT_FILE, keyFile: e.TLS_KEY_FILE } : null,
    trustProxy,
    requireHttps: e.REQUIRE_HTTPS ?? production,
    metrics: { allow: e.METRICS_ALLOW.split(',').map((entry) => entry.trim()), token: e.METRICS_TOKEN ?? null },
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    http: {
      headersTimeoutMs: e.HTTP_HEADERS_TIMEOUT_MS,
      requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_MS,
      keepAliveTimeoutMs: e.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      maxConnections: e.MAX_CONNECTIONS,
    },
    workerConcurrency: e.WORKER_CONCURRENCY,
    workerLeaseMs: e.WORKER_LEASE_MS,
    logValuesRetentionDays: e.LOG_VALUES_RETENTION_DAYS,
    timeouts: { hubspotMs: e.HUBSPOT_TIMEOUT_MS, salesforceMs: e.SALESFORCE_TIMEOUT_MS, tokenMs: e.TOKEN_TIMEOUT_MS, enrichMs: e.ENRICH_TIMEOUT_MS },
    remoteRatePerSecond: e.REMOTE_RATE_PER_SECOND,
    salesforceAllowAnyHost: e.SALESFORCE_ALLOW_ANY_HOST ?? false,
    salesforceOutbound: { legacyPath: e.SALESFORCE_OUTBOUND_LEGACY_PATH ?? false, ratePerAddress: e.SALESFORCE_OUTBOUND_RATE },
    publicUrl: e.PUBLIC_URL === undefined ? null : e.PUBLIC_URL.replace(/\/+$/, ''),
    hubspot: {
      clientId: e.HUBSPOT_CLIENT_ID ?? null,
      clientSecret: e.HUBSPOT_CLIENT_SECRET ?? null,
      appId: e.HUBSPOT_APP_ID ?? null,
      apiBaseUrl: e.HUBSPOT_API_BASE_URL,
      authBaseUrl: e.HUBSPOT_AUTH_BASE_URL,
    },
    salesforce: {
      clientId: e.SALESFORCE_CLIENT_ID ?? null,
      clientSecret: e.SALESFORCE_CLIENT_SECRET ?? null,
      loginUrl: e.SALESFORCE_LOGIN_URL.replace(/\/+$/, ''),
      jwt:
        e.SALESFORCE_JWT_CONSUMER_KEY !== undefined && e.SALESFORCE_JWT_USERNAME !== undefined && e.SALESFORCE_JWT_PRIVATE_KEY_FILE !== undefined
          ? { consumerKey: e.SALESFORCE_JWT_CONSUMER_KEY, username: e.SALESFORCE_JWT_USERNAME, privateKeyFile: e.SALESFORCE_JWT_PRIVATE_KEY_FILE }
          : null,
    },
  };
}
