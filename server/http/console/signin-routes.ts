// CRM admins sign in to the console with their CRM: the sign-in page's buttons (every CRM
// module whose ConsoleSignIn this server can run), the start (a state sealed for 10 minutes, bound to
// this browser by a short-lived cookie, and the CRM's authorize URL), and the callback a CRM's own OAuth
// callback sends a sign-in on to (connectors/kit/console-signin.ts): the state checked (ours, unexpired,
// this browser's, used once), the module's answer (the account, whether the user administers it), the
// installation of that account, and a session for that installation alone, as a sign-in link gives.
// Nothing of the CRM's token reaches this file; who signed in is shown on the pages, never logged.
import { randomBytes, randomUUID } from 'node:crypto';
import { parse as parseCookies, serialize as serializeCookie } from 'cookie';
import type express from 'express';
import { z } from 'zod';
import { ConsoleSignInRefusal, SIGN_IN_STATE_TTL_MS, openSignInState, sealSignInState } from '../../../connectors/kit/console-signin.ts';
import type { ConsoleSignInResult, CrmModule } from '../../../bridge/crm-module.ts';
import { constantTimeEqual } from '../../../core/secrets/constant-time.ts';
import type { ConsoleKit } from './kit.ts';
import { messagePage } from './components.tsx';
import type { Chrome } from './format.ts';
import type { SignInWith } from './signin-page.tsx';
import { sessionCookie } from './session.ts';

// The page itself (its buttons, and what an operator can do) is signin-page.tsx.
export { type SignInWith, signInPage } from './signin-page.tsx';

/** The modules with a sign-in this server can run (their OAuth app configured), in the modules' order. */
export function signInsOf(modules: readonly CrmModule[], publicUrl: string): SignInWith[] {
  return modules.flatMap((module) => {
    const signIn = module.consoleSignIn;
    return signIn !== undefined && signIn.available(publicUrl) ? [{ provider: module.provider, name: module.name, signIn }] : [];
  });
}

const CallbackQuerySchema = z.object({
  code: z.string().min(1).max(4096).optional(),
  state: z.string().min(1).max(16384).optional(),
  error: z.string().max(256).optional(),
});

/** The query's parameters with one string value each (a repeated or nested one is left out). */
function stringQuery(query: unknown): Record<string, string> {
  const values: Record<string, string> = {};
  if (typeof query !== 'object' || query === null) return values;
  for (const [name, value] of Object.entries(query)) if (typeof value === 'string') values[name] = value;
  return values;
}

export const SIGN_IN_MESSAGES = {
  invalid: 'This sign-in could not be verified: its state is not valid (altered, cut short, or made by another server). Sign in again.',
  expired: 'This sign-in took too long (over 10 minutes). Sign in again.',
  otherBrowser: 'This sign-in was started in another browser (or its cookie was lost). Sign in again from this browser.',
  used: 'This sign-in has been used already: each one signs in once. Sign in again.',
} as const;

type SignInKit = Pick<ConsoleKit, 'router' | 'context' | 'base' | 'now' | 'page'> & { readonly signIns: readonly SignInWith[] };

export function mountSignInRoutes(kit: SignInKit): void {
  const { router, context, base, now, page, signIns } = kit;
  const publicUrl = context.publicUrl;
  const chrome: Chrome = { base, session: null };
  const secure = publicUrl.startsWith('https:');
  const cookieName = (provider: string) => `eb_console_signin_${provider}`;
  const cookieOptions = { httpOnly: true, sameSite: 'lax', secure, path: `${base}/signin` } as const;
  const stateCookie = (provider: string, nonce: string) =>
    serializeCookie(cookieName(provider), nonce, { ...cookieOptions, maxAge: SIGN_IN_STATE_TTL_MS / 1000 });
  const clearedStateCookie = (provider: string) => serializeCookie(cookieName(provider), '', { ...cookieOptions, maxAge: 0 });
  const signInOf = (provider: string) => signIns.find((s) => s.provider === provider);
  const notFound = (res: express.Response) => page(res, 404, messagePage(chrome, 'Not found', ['There is no such sign-in here.'], 'bad'));

  router.get('/console/signin/:provider', (req: express.Request<{ provider: string }>, res) => {
    const found = signInOf(req.params.provider);
    if (found === undefined) {
      notFound(res);
      return;
    }
    const { provider, signIn } = found;
    const nonce = randomBytes(18).toString('base64url');
    const returnUrl = `${publicUrl.replace(/\/+$/, '')}/console/signin/${encodeURIComponent(provider)}/callback`;
    const expiresAt = now().getTime() + SIGN_IN_STATE_TTL_MS;
    let authorizeUrl: string;
    try {
      authorizeUrl = signIn.authorizeUrl({
        publicUrl,
        query: stringQuery(req.query),
        seal: (carry) => sealSignInState(context.box, { purpose: 'console-signin', provider, returnUrl, nonce, carry: { ...carry }, expiresAt }),
      });
    } catch (error) {
      if (error instanceof ConsoleSignInRefusal) {
        page(res, 400, messagePage(chrome, 'Sign-in refused', [error.message], 'bad'));
        return;
      }
      // The CRM's configured login address refused (not one of its hosts): the operator's to fix.
      context.log.error({ err: error, provider }, 'console sign-in could not start');
      page(
        res,
        503,
        messagePage(
          chrome,
          'Sign-in is not available',
          [`Signing in with ${found.name} is not configured correctly on this server. Ask your operator.`],
          'bad',
        ),
      );
      return;
    }
    res.set('Set-Cookie', stateCookie(provider, nonce));
    res.redirect(302, authorizeUrl);
  });

  router.get('/console/signin/:provider/callback', async (req: express.Request<{ provider: string }>, res) => {
    const found = signInOf(req.params.provider);
    if (found === undefined) {
      notFound(res);
      return;
    }
    const { provider, name, signIn } = found;
    // Every answer from here on ends this browser's sign-in attempt.
    res.set('Set-Cookie', clearedStateCookie(provider));
    const refuse = (status: number, title: string, lines: readonly string[]) => page(res, status, messagePage(chrome, title, lines, 'bad'));
    const query = CallbackQuerySchema.safeParse(stringQuery(req.query));
    if (!query.success || query.data.state === undefined) {
      refuse(400, 'Sign-in refused', ['The sign-in came back without its state. Sign in again.']);
      return;
    }
    const state = openSignInState(context.box, provider, query.data.state);
    const cookieNonce = parseCookies(req.headers.cookie ?? '')[cookieName(provider)];
    const problem =
      state === undefined
        ? SIGN_IN_MESSAGES.invalid
        : state.expiresAt < now().getTime()
          ? SIGN_IN_MESSAGES.expired
          : cookieNonce === undefined || !constantTimeEqual(state.nonce, cookieNonce)
            ? SIGN_IN_MESSAGES.otherBrowser
            : null;
    if (state === undefined || problem !== null) {
      refuse(400, 'Sign-in refused', [problem ?? SIGN_IN_MESSAGES.invalid]);
      return;
    }
    if (query.data.error !== undefined) {
      // The CRM's own word (access_denied, …), shown only when it is one.
      const said = /^[a-z_]{1,64}$/.test(query.data.error) ? ` (${query.data.error})` : '';
      refuse(400, `${name} did not sign you in`, [`${name} did not let the sign-in go on${said}. Nothing changed.`]);
      return;
    }
    if (query.data.code === undefined) {
      refuse(400, 'Sign-in refused', ['The sign-in came back without its code. Sign in again.']);
      return;
    }
    // One sign-in per state: a replay (the address opened again, or sent elsewhere) finds it taken before its code is spent.
    if (!(await context.bridge.pipelineStore.acquireLease(`console-signin:${state.nonce}`, randomUUID(), 2 * SIGN_IN_STATE_TTL_MS))) {
      refuse(400, 'Sign-in refused', [SIGN_IN_MESSAGES.used]);
      return;
    }
    let result: ConsoleSignInResult;
    try {
      result = await signIn.identify({ publicUrl, code: query.data.code, carry: state.carry });
    } catch (error) {
      if (error instanceof ConsoleSignInRefusal) {
        refuse(400, 'Sign-in refused', [error.message]);
        return;
      }
      context.log.error({ err: error, provider }, 'console sign-in failed');
      refuse(502, 'Sign-in failed', [`${name} could not be reached, or did not answer as it should. Nothing changed; sign in again.`]);
      return;
    }
    const account = result.externalAccountId;
    const installation = await context.bridge.pipelineStore.findInstallationByAccount(provider, account);
    if (installation === undefined) {
      context.log.info({ provider, account, outcome: 'no_installation' }, 'console sign-in refused');
      refuse(403, 'No installation here', [
        `You signed in to ${name} as ${result.userLabel}, in ${name} account ${account}: it has no installation on this server.`,
        'Install enrichbridge in it first (ask your operator for an install link), or sign in to the account that has it.',
      ]);
      return;
    }
    if (!result.isAdmin) {
      context.log.info({ provider, account, installation: installation.id, outcome: 'not_admin' }, 'console sign-in refused');
      refuse(403, 'Only admins may sign in', [result.reason, `Signing in needs ${signIn.adminPermission}. Ask one of its admins.`]);
      return;
    }
    if (installation.status === 'disabled') {
      context.log.info({ provider, account, installation: installation.id, outcome: 'disabled' }, 'console sign-in refused');
      refuse(403, 'Installation disabled', [
        `The installation of ${name} account ${account} is disabled: it must be connected again before its console opens.`,
      ]);
      return;
    }
    const session = await context.bridge.consoleSessions.create({ kind: 'installation', installationId: installation.id });
    context.log.info({ provider, account, installation: installation.id, via: 'crm' }, 'console sign-in');
    res.set('Set-Cookie', [clearedStateCookie(provider), sessionCookie(context.box, publicUrl, session.id, result.userLabel)]);
    res.redirect(303, `${base}/installations/${encodeURIComponent(installation.id)}`);
  });
}
