// HubSpot credentials as an installation keeps them (sealed), the OAuth token endpoint, and the token
// source every API call draws from: refreshed ahead of expiry, one refresh per portal at a time, and
// a rotated refresh token persisted before it is used.
import { z } from 'zod';
import { SingleFlightRefresh } from '../kit/credential-refresh.ts';
import { outboundTimeouts } from '../../core/client/timeouts.ts';
import { CrmError, type CrmErrorKind } from '../../bridge/connector.ts';
import type { Installations } from '../../bridge/installations.ts';
import type { Installation } from '../../bridge/model.ts';
import { DEFAULT_HUBSPOT_API_BASE, hubspotUrl } from './api.ts';
import { HUBSPOT_PATHS } from './version.ts';

export const HubSpotCredentialsSchema = z.object({
  /** oauth: a public app's tokens, refreshed. static: a private/static app token, used as is. */
  kind: z.enum(['oauth', 'static']),
  accessToken: z.string().min(1),
  refreshToken: z.string().min(1).nullable().default(null),
  /** When the access token expires (ISO); null for a static token. */
  expiresAt: z.string().nullable().default(null),
  clientId: z.string().min(1).nullable().default(null),
  /** The app's client secret: webhook and workflow-action signatures, and token refresh. */
  clientSecret: z.string().min(1),
  appId: z.string().min(1),
  apiBaseUrl: z.url().default(DEFAULT_HUBSPOT_API_BASE),
});
export type HubSpotCredentials = z.infer<typeof HubSpotCredentialsSchema>;

/** Refresh when less than this is left, so no call starts with a token about to expire. */
export const REFRESH_AHEAD_MS = 5 * 60_000;

/** A refused or failed token request is an auth failure unless HubSpot was only busy or down. */
function authErrorKind(status: number | null): CrmErrorKind {
  if (status === 429) return 'rate_limited';
  if (status !== null && status >= 500) return 'transient';
  return 'auth';
}

/**
 * A CrmError, so a refresh that fails inside an API call (invalid_grant, no refresh token) reaches the
 * pipeline as `auth` (an admin must reconnect) rather than as an unknown, transient error.
 */
export class HubSpotAuthError extends CrmError {
  constructor(
    message: string,
    readonly status: number | null,
    /** Overrides what the status says (a timeout: transient, nothing is wrong with the credentials). */
    kind?: CrmErrorKind,
  ) {
    super(kind ?? authErrorKind(status), message);
    this.name = 'HubSpotAuthError';
  }
}

const TokenResponseSchema = z.object({
  access_token: z.string().min(1),
  refresh_token: z.string().min(1).optional(),
  expires_in: z.number().int().positive(),
  hub_id: z.union([z.number(), z.string()]).optional(),
  user_id: z.union([z.number(), z.string()]).optional(),
  scopes: z.array(z.string()).optional(),
});
export type TokenResponse = z.infer<typeof TokenResponseSchema>;

/**
 * A form POST to one of HubSpot's OAuth endpoints (token, introspection): the credentials and the
 * token travel in the body, never in the URL. Its status and JSON body, within TOKEN_TIMEOUT_MS.
 * Docs: https://developers.hubspot.com/docs/api-reference/latest/authentication/oauth-tokens/exchange-oauth-tokens
 */
export async function postOAuthForm(apiBaseUrl: string, path: string, form: Record<string, string>): Promise<{ status: number; body: unknown }> {
  // One signal for the request and its body: an endpoint that stalls is given up.
  const timeoutMs = outboundTimeouts().tokenMs;
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const response = await fetch(hubspotUrl(apiBaseUrl, path), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams(form).toString(),
      signal,
    });
    const body: unknown = await response.json().catch(() => null);
    // A body that stopped coming is a timeout, not an answer without a token.
    if (signal.aborted) throw new HubSpotAuthError(`HubSpot OAuth endpoint: no answer within ${timeoutMs} ms`, null, 'transient');
    return { status: response.status, body };
  } catch (error) {
    if (error instanceof HubSpotAuthError) throw error;
    // Neither the address nor the cause (which may quote the body, with its secrets) goes into the error.
    throw new HubSpotAuthError(`HubSpot OAuth endpoint: no answer${signal.aborted ? ` within ${timeoutMs} ms` : ''}`, null, 'transient');
  }
}

/** The token endpoint: an authorization code or a refresh token exchanged for tokens. */
export async function requestToken(apiBaseUrl: string, form: Record<string, string>): Promise<TokenResponse> {
  const { status, body } = await postOAuthForm(apiBaseUrl, HUBSPOT_PATHS.token, form);
  if (status < 200 || status >= 300) {
    const detail = z.object({ error: z.string().optional(), error_description: z.string().optional(), message: z.string().optional() }).safeParse(body);
    const why = detail.success ? (detail.data.error_description ?? detail.data.message ?? detail.data.error ?? '') : '';
    throw new HubSpotAuthError(`HubSpot token endpoint answered ${status}${why === '' ? '' : `: ${why}`}`, status);
  }
  const parsed = TokenResponseSchema.safeParse(body);
  if (!parsed.success) throw new HubSpotAuthError(`HubSpot token endpoint answered ${status} without a usable token`, status);
  return parsed.data;
}

/** One refresh per portal at a time, in this process and across processes (connectors/kit/credential-refresh.ts). */
const refreshing = new SingleFlightRefresh<HubSpotCredentials, string>();

export class HubSpotTokenSource {
  constructor(
    private readonly installationId: string,
    private readonly installations: Installations,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async credentials(): Promise<HubSpotCredentials> {
    return HubSpotCredentialsSchema.parse((await this.installations.secrets(this.installationId)).crm);
  }

  /** A token good for at least REFRESH_AHEAD_MS, refreshing first when needed. */
  async accessToken(): Promise<string> {
    const credentials = await this.credentials();
    if (!this.expiring(credentials)) return credentials.accessToken;
    return this.refresh('expiring');
  }

  private expiring(credentials: HubSpotCredentials): boolean {
    if (credentials.kind === 'static' || credentials.expiresAt === null) return false;
    return Date.parse(credentials.expiresAt) - this.now().getTime() < REFRESH_AHEAD_MS;
  }

  /**
   * Refreshes even a token that looks fresh: HubSpot just refused it (once per installation at a
   * time). Null when the token cannot be refreshed (a static token).
   */
  async refreshAfterRefusal(): Promise<string | null> {
    const credentials = await this.credentials();
    if (credentials.kind === 'static' || credentials.refreshToken === null) return null;
    return this.refresh('refused');
  }

  /** `expiring`: refresh unless another process already did; `refused`: refresh whatever the expiry says. */
  private refresh(reason: 'expiring' | 'refused'): Promise<string> {
    // Inside the lease another process may have refreshed since we read: use its token when it is fresh.
    return refreshing.run(this.installations, this.installationId, async () => {
      const credentials = await this.credentials();
      if (reason === 'expiring' && !this.expiring(credentials)) return { save: null, use: credentials.accessToken };
      if (credentials.refreshToken === null || credentials.clientId === null) {
        throw new HubSpotAuthError('the HubSpot token expired and cannot be refreshed (no refresh token or client id)', null);
      }
      const token = await requestToken(credentials.apiBaseUrl, {
        grant_type: 'refresh_token',
        client_id: credentials.clientId,
        client_secret: credentials.clientSecret,
        refresh_token: credentials.refreshToken,
      });
      const next: HubSpotCredentials = {
        ...credentials,
        accessToken: token.access_token,
        refreshToken: token.refresh_token ?? credentials.refreshToken,
        expiresAt: new Date(this.now().getTime() + token.expires_in * 1000).toISOString(),
      };
      return { save: next, use: next.accessToken };
    });
  }
}

/**
 * Opened credentials by installation, reused while the installation row is unchanged (a token
 * refresh or reconnect changes its updatedAt): the webhook routes need the client secret and app id
 * on every request, and opening the sealed secrets each time cost milliseconds per batch.
 */
export class HubSpotCredentialsCache {
  private readonly entries = new Map<string, { updatedAt: string; credentials: HubSpotCredentials | null }>();

  constructor(private readonly installations: Installations) {}

  async get(installation: Installation): Promise<HubSpotCredentials | null> {
    const cached = this.entries.get(installation.id);
    if (cached !== undefined && cached.updatedAt === installation.updatedAt) return cached.credentials;
    const parsed = HubSpotCredentialsSchema.safeParse((await this.installations.secrets(installation.id)).crm);
    const credentials = parsed.success ? parsed.data : null;
    if (this.entries.size >= 10_000) this.entries.clear();
    this.entries.set(installation.id, { updatedAt: installation.updatedAt, credentials });
    return credentials;
  }
}
