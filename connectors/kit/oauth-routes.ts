// The two routes of every CRM's OAuth install, written once: the install link an admin opens (→ the
// CRM's authorize URL, with the browser-binding cookie) and the callback that connects the account.
// What is the CRM's own comes in an OAuthInstallFlow: its app settings, how its link opens and its
// state is sealed, what the callback stores and says, and which of its errors are the admin's to act on.
// Every answer is the kit's result page (no caching, no referrer, a CSP that allows nothing else). The
// callback is also where a console sign-in comes back (the same registered redirect URI): a state that
// opens as a sign-in is sent on to the console (console-signin.ts) before the install looks at it.
import type { SecretBox } from '../../core/secrets/secret-box.ts';
import { forwardSignIn } from './console-signin.ts';
import { type CrmRoute, type HttpResult, type RouteLog, redirectResult } from '../../bridge/http.ts';
import { type ResultPageContent, type StateCookie, claimOAuthState, resultPage } from './oauth-install.ts';

/** A page for an error the admin (or the operator) can act on. */
export interface Refusal {
  readonly status: number;
  readonly content: ResultPageContent;
}

export interface OAuthInstallFlow<App extends { readonly publicUrl: string }, State extends { readonly nonce: string }> {
  /** The provider name, in log lines (`hubspot install failed`). */
  readonly provider: string;
  /** The CRM's name, as the pages say it. */
  readonly crmName: string;
  readonly routes: { readonly install: string; readonly callback: string };
  readonly cookie: StateCookie;
  /** The command an operator runs for a link, named on the page that asks for one. */
  readonly linkCommand: string;
  /** The app's settings, or null when this server cannot run the install. */
  app(): App | null;
  /** What the page says when app() is null. */
  readonly notConfigured: ResultPageContent;
  /** The CRM's refusal (a link or state that will not open, …): its message is shown to the admin. */
  readonly installError: abstract new (...args: never[]) => Error;
  /** The link opened: where the browser goes, and the nonce its cookie carries. */
  begin(app: App, link: string, query: Readonly<Record<string, string>>, now: Date): { readonly authorizeUrl: string; readonly nonce: string };
  /** The state the CRM hands back: ours, unexpired, from this browser (else the installError). */
  verify(sealed: string, cookieNonce: string | undefined, now: Date): State;
  /** Exchanges the code and stores the installation; what the admin is told. */
  complete(app: App, code: string, state: State, now: Date): Promise<ResultPageContent>;
  /** Other errors of the CRM's that deserve their own page (a host that is not the CRM's, a code refused). */
  refusal?(error: unknown, step: 'install' | 'callback'): Refusal | undefined;
  /** Claims a state for one install (a lease). */
  readonly leases: { acquireLease(key: string, owner: string, ms: number): Promise<boolean> };
  /** The server's key: a console sign-in's state (sealed with it) is told apart and sent on to the console. */
  readonly box?: SecretBox;
  readonly log: RouteLog;
  readonly now?: () => Date;
}

export function oauthInstallRoutes<App extends { readonly publicUrl: string }, State extends { readonly nonce: string }>(
  flow: OAuthInstallFlow<App, State>,
): CrmRoute[] {
  const now = flow.now ?? (() => new Date());
  const page = (status: number, content: ResultPageContent, headers: Readonly<Record<string, string>> = {}): HttpResult => {
    const result = resultPage(status, content);
    return { ...result, headers: { ...result.headers, ...headers } };
  };
  const notConfigured = (): HttpResult => page(503, flow.notConfigured);

  const install: CrmRoute = {
    method: 'GET',
    path: flow.routes.install,
    handle: (request) => {
      const app = flow.app();
      if (app === null) return notConfigured();
      const link = request.query.link ?? '';
      if (link === '') return page(400, { title: 'Install link needed', lines: [`Ask your enrichbridge operator for an install link (${flow.linkCommand}).`] });
      try {
        const { authorizeUrl, nonce } = flow.begin(app, link, request.query, now());
        return redirectResult(authorizeUrl, { 'Set-Cookie': flow.cookie.set(nonce, app.publicUrl) });
      } catch (error) {
        if (error instanceof flow.installError) return page(400, { title: 'This install link cannot be used', lines: [error.message] });
        const refusal = flow.refusal?.(error, 'install');
        if (refusal !== undefined) return page(refusal.status, refusal.content);
        throw error;
      }
    },
  };

  const callback: CrmRoute = {
    method: 'GET',
    path: flow.routes.callback,
    handle: async (request) => {
      const app = flow.app();
      if (app === null) return notConfigured();
      const signIn = flow.box === undefined ? undefined : forwardSignIn(flow.box, flow.provider, app.publicUrl, request.query);
      if (signIn !== undefined) return signIn;
      const denied = request.query.error;
      if (denied !== undefined) {
        return page(400, { title: `${flow.crmName} did not grant access`, lines: [`${flow.crmName} said: ${denied}. Nothing was installed.`] });
      }
      const code = request.query.code ?? '';
      const sealed = request.query.state ?? '';
      if (code === '' || sealed === '')
        return page(400, { title: 'Incomplete callback', lines: ['The callback is missing its code or state. Start the install again.'] });
      try {
        const state = flow.verify(sealed, flow.cookie.read(request.headers.cookie), now());
        if (!(await claimOAuthState(flow.leases, state.nonce))) {
          return page(400, {
            title: 'This install was already completed',
            lines: ['This sign-in link has been used for an install already. Start the install again from your install link.'],
          });
        }
        const content = await flow.complete(app, code, state, now());
        return page(200, content, { 'Set-Cookie': flow.cookie.clear(app.publicUrl) });
      } catch (error) {
        if (error instanceof flow.installError) return page(400, { title: 'The install could not finish', lines: [error.message, 'Nothing was installed.'] });
        const refusal = flow.refusal?.(error, 'callback');
        if (refusal !== undefined) return page(refusal.status, refusal.content);
        flow.log.error({ err: error }, `${flow.provider} install failed`);
        return page(502, {
          title: 'The install could not finish',
          lines: [`${flow.crmName} could not be reached or refused the request. Nothing was installed; try again.`],
        });
      }
    },
  };

  return [install, callback];
}
