// The OAuth install kit both CRMs use (cal.com's OAuthManager, as a few functions): a sealed install
// link and a sealed OAuth state, each expiring, opened with guarded parsing (a tampered, foreign or
// malformed token is refused with a message, never a crash); the browser binding (a random nonce in
// the state and in an HttpOnly cookie, compared in constant time); and the result page the admin
// sees, kept out of caches and referrers (it can hold a secret, its address a code and a state) and
// under a Content-Security-Policy that allows nothing but its own markup.
//
// Each CRM's install.ts keeps what is its own: its schemas, its seal context (a HubSpot link never
// opens as a Salesforce one), its authorize URL, and what the callback stores.
import { randomBytes, randomUUID } from 'node:crypto';
import { parse as parseCookies, serialize as serializeCookie } from 'cookie';
import { z } from 'zod';
import { constantTimeEqual } from '../../core/secrets/constant-time.ts';
import type { SecretBox } from '../../core/secrets/secret-box.ts';
import type { HttpResult } from '../../bridge/http.ts';

/** How long an install link stays good: long enough to reach the admin who installs. */
export const INSTALL_LINK_TTL_MS = 7 * 24 * 3600_000;
/** How long the OAuth dance may take, from the link opened to the callback. */
export const OAUTH_STATE_TTL_MS = 10 * 60_000;

export const INSTALL_MESSAGES = {
  linkExpired: 'the install link has expired; ask for a new one',
  stateExpired: 'the install took too long (over 10 minutes); start it again',
  otherBrowser: 'this install was started in another browser (or its cookie was lost); start it again',
} as const;

/** What an install link grants: a local account of this server, or any endpoint with the contract and its token. */
export const InstallTargetSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('local'), accountName: z.string().min(1) }),
  z.object({ kind: z.literal('remote'), url: z.string().min(1), token: z.string().min(1) }),
]);

/** Builds the CRM's own error for a refusal the admin can act on. */
export type InstallFailure = (message: string) => Error;

export function sealJson(box: SecretBox, context: string, value: unknown): string {
  return box.seal(JSON.stringify(value), context);
}

/** Opens a sealed token: refused (never thrown at raw) when altered, sealed elsewhere, not JSON or not the schema's. */
export function openSealedJson<T>(box: SecretBox, context: string, sealed: string, schema: z.ZodType<T>, what: string, fail: InstallFailure): T {
  let text: string;
  try {
    text = box.open(sealed, context);
  } catch {
    throw fail(`the ${what} is not valid (altered, or made by another server)`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw fail(`the ${what} is not valid`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw fail(`the ${what} is not valid`);
  return parsed.data;
}

/** Opens a sealed token that carries its own `expiresAt` (ms), refusing it once that has passed. */
export function openUnexpired<T extends { readonly expiresAt: number }>(
  box: SecretBox,
  context: string,
  sealed: string,
  kind: { readonly schema: z.ZodType<T>; readonly what: string; readonly expired: string },
  now: Date,
  fail: InstallFailure,
): T {
  const value = openSealedJson(box, context, sealed, kind.schema, kind.what, fail);
  if (value.expiresAt < now.getTime()) throw fail(kind.expired);
  return value;
}

/** The browser binding's nonce: in the sealed state and in the admin's cookie. */
export function newBrowserNonce(): string {
  return randomBytes(18).toString('base64url');
}

/**
 * A CRM's two sealed install tokens under a seal context of its own (a HubSpot link never opens as a
 * Salesforce one): the install link's intent, and the OAuth state bound to the admin's browser.
 */
export class InstallSeals<Intent extends { readonly expiresAt: number }, State extends { readonly expiresAt: number; readonly nonce: string }> {
  constructor(
    private readonly spec: { readonly context: string; readonly intent: z.ZodType<Intent>; readonly state: z.ZodType<State>; readonly fail: InstallFailure },
  ) {}

  seal(box: SecretBox, value: Intent | State): string {
    return sealJson(box, this.spec.context, value);
  }

  /** The intent of a link: ours, untampered, unexpired (else the CRM's refusal). */
  openLink(box: SecretBox, sealed: string, now: Date): Intent {
    return openUnexpired(
      box,
      this.spec.context,
      sealed,
      { schema: this.spec.intent, what: 'install link', expired: INSTALL_MESSAGES.linkExpired },
      now,
      this.spec.fail,
    );
  }

  /** The state the CRM hands back: ours, unexpired, and from the browser that started. */
  verifyState(box: SecretBox, sealed: string, cookieNonce: string | undefined, now: Date): State {
    const state = openUnexpired(
      box,
      this.spec.context,
      sealed,
      { schema: this.spec.state, what: 'OAuth state', expired: INSTALL_MESSAGES.stateExpired },
      now,
      this.spec.fail,
    );
    requireSameBrowser(state.nonce, cookieNonce, this.spec.fail);
    return state;
  }
}

/** The address an admin opens: PUBLIC_URL with the install route appended (a path prefix stays) and the link. */
export function installLinkUrl(publicUrl: string, installRoute: string, link: string): string {
  const url = new URL(`${publicUrl.replace(/\/+$/, '')}${installRoute}`);
  url.searchParams.set('link', link);
  return url.toString();
}

/**
 * One state, one install: the first callback with a state claims it (a lease that outlives the state,
 * which expires first); a replay (the same URL opened twice, or sent by someone else) finds it taken
 * and is refused before its code is spent. False when taken.
 */
export function claimOAuthState(leases: { acquireLease(key: string, owner: string, ms: number): Promise<boolean> }, nonce: string): Promise<boolean> {
  return leases.acquireLease(`oauth-state:${nonce}`, randomUUID(), 2 * OAUTH_STATE_TTL_MS);
}

/** Refuses a callback that did not come back to the browser that started the install. */
export function requireSameBrowser(stateNonce: string, cookieNonce: string | undefined, fail: InstallFailure): void {
  if (cookieNonce === undefined || !constantTimeEqual(stateNonce, cookieNonce)) throw fail(INSTALL_MESSAGES.otherBrowser);
}

/**
 * The state cookie of a CRM's install: sent back only to its OAuth routes under PUBLIC_URL's path (a
 * proxy serving us under `/enrich` still gets it), HttpOnly, SameSite=Lax (the callback is a top-level
 * redirect from the CRM), Secure under HTTPS, for as long as the state lasts.
 */
export class StateCookie {
  constructor(
    readonly name: string,
    private readonly provider: string,
  ) {}

  private path(publicUrl: string): string {
    return `${new URL(publicUrl).pathname.replace(/\/+$/, '')}/oauth/${this.provider}`;
  }

  set(nonce: string, publicUrl: string): string {
    return serializeCookie(this.name, nonce, {
      httpOnly: true,
      sameSite: 'lax',
      secure: publicUrl.startsWith('https:'),
      path: this.path(publicUrl),
      maxAge: OAUTH_STATE_TTL_MS / 1000,
    });
  }

  clear(publicUrl: string): string {
    return serializeCookie(this.name, '', { path: this.path(publicUrl), maxAge: 0 });
  }

  read(cookieHeader: string | undefined): string | undefined {
    return parseCookies(cookieHeader ?? '')[this.name];
  }
}

export interface ResultPageContent {
  readonly title: string;
  readonly lines: readonly string[];
  /** Shown in a block of its own (a secret to copy), after the lines. */
  readonly secret?: { readonly label: string; readonly value: string };
}

export const RESULT_PAGE_HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'no-referrer',
  'Content-Security-Policy': "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
} as const;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The page an admin sees at the end (or on a refusal) of an install: text only, every value escaped. */
export function resultPage(status: number, content: ResultPageContent): HttpResult {
  const lines = content.lines.map((line) => `<p>${escapeHtml(line)}</p>`);
  if (content.secret !== undefined) {
    lines.push(`<p>${escapeHtml(content.secret.label)}</p>`, `<pre><code>${escapeHtml(content.secret.value)}</code></pre>`);
  }
  const title = escapeHtml(content.title);
  return {
    status,
    headers: RESULT_PAGE_HEADERS,
    body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1>\n${lines.join('\n')}\n</body></html>`,
  };
}
