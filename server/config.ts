// Process configuration from the environment, validated once at start so a typo fails loudly instead
// of running with a silent default.
import path from 'node:path';
import { z } from 'zod';

const flag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

const EnvSchema = z.object({
  NODE_ENV: z.string().optional(),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).optional(),
  DATA_DIR: z.string().min(1).default('./data'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  TLS_CERT_FILE: z.string().min(1).optional(),
  TLS_KEY_FILE: z.string().min(1).optional(),
  /** express "trust proxy": hop count, or comma-separated addresses/subnets (`loopback`, `10.0.0.0/8`). */
  TRUST_PROXY: z.string().min(1).optional(),
  REQUIRE_HTTPS: flag.optional(),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).default(10_000),
});

export interface Config {
  readonly production: boolean;
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  readonly logLevel: z.infer<typeof EnvSchema>['LOG_LEVEL'];
  readonly tls: { readonly certFile: string; readonly keyFile: string } | null;
  readonly trustProxy: string | number | false;
  readonly requireHttps: boolean;
  readonly shutdownTimeoutMs: number;
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
  const trustProxy = e.TRUST_PROXY === undefined ? false : /^\d+$/.test(e.TRUST_PROXY) ? Number(e.TRUST_PROXY) : e.TRUST_PROXY;
  return {
    production,
    port: e.PORT,
    // Development binds loopback only: plain HTTP with live tokens should not leave the machine.
    host: e.HOST ?? (production ? '0.0.0.0' : '127.0.0.1'),
    dataDir: path.resolve(e.DATA_DIR),
    logLevel: e.LOG_LEVEL,
    tls: e.TLS_CERT_FILE !== undefined && e.TLS_KEY_FILE !== undefined ? { certFile: e.TLS_CERT_FILE, keyFile: e.TLS_KEY_FILE } : null,
    trustProxy,
    requireHttps: e.REQUIRE_HTTPS ?? production,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
  };
}
