// The console's session cookie and request checks: the session id sealed in an HttpOnly, SameSite=Lax
// cookie (Secure under HTTPS) scoped to the console's path; a CSRF token derived from the session
// (only its holder can know it) on every form, and the Origin checked on every state-changing request.
import { createHash } from 'node:crypto';
import { parse as parseCookies, serialize as serializeCookie } from 'cookie';
import { z } from 'zod';
import { CONSOLE_SESSION_TTL_MS } from '../../../bridge/console-sessions.ts';
import { constantTimeEqual } from '../../../core/secrets/constant-time.ts';
import type { SecretBox } from '../../../core/secrets/secret-box.ts';

const COOKIE = 'eb_console';
const CONTEXT = 'console-session';

function cookiePath(publicUrl: string): string {
  return `${new URL(publicUrl).pathname.replace(/\/+$/, '')}/console`;
}

/**
 * The session cookie: the session id, and who signed in when the CRM named them (`person`, shown in the
 * header; kept in the sealed cookie, not in the database, and never logged). A link's session carries the id alone.
 */
export function sessionCookie(box: SecretBox, publicUrl: string, sessionId: string, person?: string): string {
  const sealed = person === undefined ? sessionId : JSON.stringify({ id: sessionId, person });
  return serializeCookie(COOKIE, box.seal(sealed, CONTEXT), {
    httpOnly: true,
    sameSite: 'lax',
    secure: publicUrl.startsWith('https:'),
    path: cookiePath(publicUrl),
    maxAge: CONSOLE_SESSION_TTL_MS / 1000,
  });
}

export function clearedSessionCookie(publicUrl: string): string {
  return serializeCookie(COOKIE, '', { httpOnly: true, sameSite: 'lax', secure: publicUrl.startsWith('https:'), path: cookiePath(publicUrl), maxAge: 0 });
}

/** What the sealed cookie holds besides the id: who the CRM said signed in. */
const CookieWithPerson = z.object({ id: z.string().min(1), person: z.string().min(1).max(320) });

/**
 * The session id the request's cookie carries, and who signed in if the CRM named them (null: a link's
 * session); undefined when there is none (no cookie, altered, or sealed elsewhere).
 */
export function sessionCookieOf(box: SecretBox, cookieHeader: string | undefined): { readonly id: string; readonly person: string | null } | undefined {
  const sealed = parseCookies(cookieHeader ?? '')[COOKIE];
  if (sealed === undefined || sealed === '') return undefined;
  let opened: string;
  try {
    opened = box.open(sealed, CONTEXT);
  } catch {
    return undefined;
  }
  if (!opened.startsWith('{')) return { id: opened, person: null };
  let parsed: unknown;
  try {
    parsed = JSON.parse(opened);
  } catch {
    return undefined;
  }
  const read = CookieWithPerson.safeParse(parsed);
  return read.success ? read.data : undefined;
}

/** The session id the request's cookie carries, or undefined (none, altered, or sealed elsewhere). */
export function sessionIdOf(box: SecretBox, cookieHeader: string | undefined): string | undefined {
  return sessionCookieOf(box, cookieHeader)?.id;
}

/** The session's CSRF token: put in every form, required back on every state-changing request. */
export function csrfToken(sessionId: string): string {
  return createHash('sha256').update(`console-csrf:${sessionId}`).digest('base64url');
}

export function csrfMatches(sessionId: string, sent: unknown): boolean {
  return typeof sent === 'string' && constantTimeEqual(csrfToken(sessionId), sent);
}

/**
 * A state-changing request must come from a page of ours: its Origin is PUBLIC_URL's. Under
 * `Referrer-Policy: no-referrer` a browser sends `Origin: null` on a form post, so then the browser's
 * own Fetch Metadata must say the request came from this origin (`Sec-Fetch-Site: same-origin`).
 */
export function sameOrigin(
  headers: { readonly origin?: string | undefined; readonly 'sec-fetch-site'?: string | string[] | undefined },
  publicUrl: string,
): boolean {
  const origin = headers.origin;
  if (origin === new URL(publicUrl).origin) return true;
  return origin === 'null' && headers['sec-fetch-site'] === 'same-origin';
}

/** Every console response: nothing inline, nothing framed, nothing in caches or referrers. */
export const CONSOLE_HEADERS = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
} as const;
