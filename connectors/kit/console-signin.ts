// The console sign-in's OAuth state, written once for both CRMs and the server: sealed with the server's
// key under a context of each CRM's own (a HubSpot sign-in never opens at Salesforce's callback, and an
// install's state never opens as a sign-in), it carries where the sign-in continues, the browser's
// nonce, what the CRM's module needs back at the callback (a PKCE verifier) and its expiry.
//
// A sign-in uses the install's OAuth app and its registered redirect URI: the CRM's callback route
// (oauth-routes.ts) sends a state that opens as a sign-in on to the console, which checks the rest
// (expiry, the browser, one use) and signs the admin in; any other state goes on to the install.
import { z } from 'zod';
import type { SecretBox } from '../../core/secrets/secret-box.ts';
import { type HttpResult, redirectResult } from '../../bridge/http.ts';
import { OAUTH_STATE_TTL_MS, sealJson } from './oauth-install.ts';

/** How long a sign-in may take, from the button to the callback: as long as an install's dance. */
export const SIGN_IN_STATE_TTL_MS = OAUTH_STATE_TTL_MS;

const SignInStateSchema = z.object({
  purpose: z.literal('console-signin'),
  provider: z.string().min(1),
  /** The console's sign-in callback, under PUBLIC_URL. */
  returnUrl: z.string().min(1),
  /** Also in a cookie on the browser that started: the callback must come back to it. */
  nonce: z.string().min(16),
  /** What the module asked to have back (ConsoleSignInStart.seal). */
  carry: z.record(z.string(), z.string()),
  expiresAt: z.number().int(),
});
export type SignInState = z.infer<typeof SignInStateSchema>;

const contextOf = (provider: string): string => `console-signin:${provider}`;

export function sealSignInState(box: SecretBox, state: SignInState): string {
  return sealJson(box, contextOf(state.provider), SignInStateSchema.parse(state));
}

/**
 * The sign-in state `sealed` holds, or undefined when it is not one of this CRM's sign-ins (an install's
 * state, another CRM's, one altered or made by another server). Its expiry is the caller's to check.
 */
export function openSignInState(box: SecretBox, provider: string, sealed: string): SignInState | undefined {
  let text: string;
  try {
    text = box.open(sealed, contextOf(provider));
  } catch {
    return undefined;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = SignInStateSchema.safeParse(json);
  return parsed.success && parsed.data.provider === provider ? parsed.data : undefined;
}

/** A sign-in refused for a reason the person signing in can act on (a code refused, a bad choice): its message is shown. */
export class ConsoleSignInRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConsoleSignInRefusal';
  }
}

/** The callback's parameters passed on to the console: the CRM's answer and the state. */
const FORWARDED = ['code', 'state', 'error'] as const;

/**
 * At a CRM's OAuth callback: a sign-in's state sends the browser on to the console's callback with the
 * CRM's answer (its code or its error) and the state, nothing checked yet but that the state is a
 * sign-in's; undefined for any other state (the install's to answer).
 */
export function forwardSignIn(box: SecretBox, provider: string, publicUrl: string, query: Readonly<Record<string, string>>): HttpResult | undefined {
  const sealed = query.state;
  if (sealed === undefined || sealed === '') return undefined;
  const state = openSignInState(box, provider, sealed);
  if (state === undefined) return undefined;
  // Sealed by this server, so it names the console; checked all the same: never a redirect off PUBLIC_URL.
  if (!state.returnUrl.startsWith(`${publicUrl.replace(/\/+$/, '')}/`)) return undefined;
  const url = new URL(state.returnUrl);
  for (const name of FORWARDED) {
    const value = query[name];
    if (value !== undefined) url.searchParams.set(name, value);
  }
  // The address carries a code: kept out of caches and referrers, as the install's pages are.
  return redirectResult(url.toString(), { 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' });
}
