// The console's checks before a handler runs, as middleware: who is signed in, that a post came from a
// console page, that the session may see the installation in the address, that a page is the
// operator's. Each guard sends its own refusal page, or leaves what it checked in `res.locals` (typed:
// InstallationLocals, SessionLocals), so a handler starts with what it may use and repeats no check.
import type express from 'express';
import type { ConsoleScope } from '../../../bridge/console-sessions.ts';
import type { Installation } from '../../../bridge/model.ts';
import { messagePage } from './components.tsx';
import { type Chrome, signedInText } from './format.ts';
import type { ConsoleContext, Signed } from './kit.ts';
import { csrfMatches, csrfToken, sameOrigin, sessionCookieOf } from './session.ts';

/** What a guard of a signed-in page leaves for its handler. */
export interface SessionLocals {
  readonly session: Signed;
}

/** What an installation page's guard leaves for its handler. */
export interface InstallationLocals extends SessionLocals {
  readonly installation: Installation;
}

/** A handler's answer after an installation page's guard: `res.locals.session` and `.installation` are set. */
export type InstallationResponse = express.Response<unknown, InstallationLocals>;
/** A handler's answer after a signed-in or operator page's guard: `res.locals.session` is set. */
export type SessionResponse = express.Response<unknown, SessionLocals>;

/** A page's guards: `view` for a GET, `post` for a form post (the bounded form reader first). */
export interface GuardPair {
  readonly view: readonly AnyRouteHandler[];
  readonly post: readonly AnyRouteHandler[];
}

/**
 * A guard as the router sees it: for any route's parameters, so a handler after it keeps the
 * parameters its path names (`req.params.entry` a string).
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the route's own parameter type is inferred from its path
type AnyRouteHandler = express.RequestHandler<any>;

export interface ConsoleGuards {
  /** The request's live session, if any (no refusal sent). */
  readonly sessionOf: (req: express.Request) => Promise<Signed | undefined>;
  /** The signed-in session, or the sign-in page sent with a 401 (and undefined). */
  readonly signedIn: (req: express.Request, res: express.Response) => Promise<Signed | undefined>;
  /** Any signed-in page. */
  readonly signed: GuardPair;
  /** An installation's page (`:id`): the operator may see any, a CRM admin only their own; else 404. */
  readonly installation: GuardPair;
  /** The operator's pages: anyone else gets the 404 of a page that does not exist. */
  readonly operator: GuardPair;
}

export interface GuardOptions {
  readonly context: ConsoleContext & { readonly publicUrl: string };
  readonly base: string;
  readonly form: express.RequestHandler;
  readonly page: (res: express.Response, status: number, html: string) => void;
  /** The sign-in page a request without a session gets. */
  readonly signInPage: () => string;
}

/** Whether a session may see an installation: the operator any, a CRM admin only their own. */
export function mayOpen(scope: ConsoleScope, installationId: string): boolean {
  return scope.kind === 'operator' || scope.installationId === installationId;
}

export function consoleGuards(options: GuardOptions): ConsoleGuards {
  const { context, base, form, page } = options;
  const sessions = context.bridge.consoleSessions;

  const sessionOf = async (req: express.Request): Promise<Signed | undefined> => {
    const cookie = sessionCookieOf(context.box, req.headers.cookie);
    const session = cookie === undefined ? undefined : await sessions.find(cookie.id);
    if (session === undefined || cookie === undefined) return undefined;
    // The header names the CRM account and who signed in (the CRM's name for them, or a one-time link).
    const who = signedInText(
      session.scope.kind === 'operator'
        ? session.scope
        : { kind: 'installation', account: await context.bridge.pipelineStore.findInstallation(session.scope.installationId) },
      cookie.person,
    );
    return { ...session, person: cookie.person, chrome: { base, session: { who, csrf: csrfToken(session.id) } } };
  };

  const signedIn = async (req: express.Request, res: express.Response): Promise<Signed | undefined> => {
    const session = await sessionOf(req);
    if (session === undefined) page(res, 401, options.signInPage());
    return session;
  };

  /** A form post's checks: signed in, from a console page (Origin, form token); else a refusal page. */
  const posted = async (req: express.Request, res: express.Response): Promise<Signed | undefined> => {
    const session = await signedIn(req, res);
    if (session === undefined) return undefined;
    const body: unknown = req.body;
    const sent = typeof body === 'object' && body !== null && 'csrf' in body ? body.csrf : undefined;
    if (!sameOrigin(req.headers, context.publicUrl) || !csrfMatches(session.id, sent)) {
      page(
        res,
        403,
        messagePage(session.chrome, 'Refused', ['This request did not come from a console page (its origin or form token is missing or wrong).'], 'bad'),
      );
      return undefined;
    }
    return session;
  };

  const notFound = (res: express.Response, chrome: Chrome, line: string) => page(res, 404, messagePage(chrome, 'Not found', [line], 'bad'));

  type Need = 'session' | 'installation' | 'operator';
  const guard =
    (how: 'view' | 'post', need: Need): express.RequestHandler =>
    async (req, res, next) => {
      const session = how === 'post' ? await posted(req, res) : await signedIn(req, res);
      if (session === undefined) return;
      if (need === 'operator' && session.scope.kind !== 'operator') {
        notFound(res, session.chrome, 'There is no such page here.');
        return;
      }
      if (need === 'installation') {
        const id = typeof req.params.id === 'string' ? req.params.id : '';
        const installation = mayOpen(session.scope, id) ? await context.bridge.pipelineStore.findInstallation(id) : undefined;
        if (installation === undefined) {
          notFound(res, session.chrome, 'There is no such installation here.');
          return;
        }
        res.locals.installation = installation;
      }
      res.locals.session = session;
      next();
    };

  const pair = (need: Need) => ({ view: [guard('view', need)], post: [form, guard('post', need)] });
  return { sessionOf, signedIn, signed: pair('session'), installation: pair('installation'), operator: pair('operator') };
}
