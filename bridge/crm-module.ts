// The one interface a CRM implements: what the pipeline and the server need of it, and nothing that
// names a CRM. Each CRM folder's index.ts exports one function that makes its module; the composition
// root (server/runtime.ts) registers every module the build ships, and nothing else there knows which
// CRMs exist.
//
// A module gives its provider name and objects, its connector factory, its post-settlement hook
// (HubSpot's workflow callbacks), its own job kinds, its routes table (its OAuth install, webhooks and
// outbound messages, each a handler that returns its answer as data), its backfill record source, its
// operator commands and its console sign-in (who a CRM user is and whether they administer the account).
// server/http mounts the routes and the sign-in, server/cli the commands, all the same way.
import type { Command } from 'commander';
import type { CrmRoute, RouteLog } from './http.ts';
import type { SecretBox } from '../core/secrets/secret-box.ts';
import { type Bridge, type CallbackHandler, type ConnectorFactory, type ConnectorJobHandler, ConnectorRegistry } from './bridge.ts';
import type { RecordSource } from './backfill.ts';
import type { CrmConnector } from './connector.ts';
import type { Installations } from './installations.ts';
import type { JobQueue, NewJob } from './job-queue.ts';
import type { Installation } from './model.ts';
import type { OpenedStorage } from './storage.ts';

/** A job a module wants run for each of its installations on a schedule (HubSpot's journal pull). */
export interface RecurringJob {
  readonly everyMs: number;
  /** The job, with a dedupe key so that one waits at a time. */
  readonly job: (installation: Installation) => NewJob;
}

export interface CrmModule {
  /** The provider name installations are stored under (`hubspot`, `salesforce`). */
  readonly provider: string;
  /** The CRM's name as people read it (`HubSpot`). */
  readonly name: string;
  /** The objects it can enrich, in the order the console lists them. */
  readonly objects: readonly string[];
  /** The objects an installation that names none enriches (the connector's defaults); absent: all of `objects`. */
  readonly defaultObjects?: readonly string[];
  /** Builds an installation's connector (its API client, credentials and pacing). */
  readonly connector: ConnectorFactory;
  /** Told about settled records whose jobs carried a callback id (a waiting workflow). */
  readonly callbacks?: CallbackHandler;
  /** The module's own job kinds, each with its handler (done when it resolves, retried when it throws). */
  readonly jobs?: Readonly<Record<string, ConnectorJobHandler>>;
  /** Jobs queued for each of the module's active installations when a worker starts and every `everyMs` after (one waiting at a time). */
  readonly recurring?: readonly RecurringJob[];
  /** The module's HTTP routes, built once per server from what they need of it. */
  readonly routes?: (context: CrmRouteContext) => readonly CrmRoute[];
  /** The operator's commands for this CRM (`enrichbridge hubspot …`): connect, install links, disconnect. */
  readonly commands?: (context: CrmCommandContext) => Command;
  /** How `enrichbridge backfill <provider>` reads the records the CRM already has. */
  readonly backfill?: CrmBackfill;
  /** The module's errors that are the operator's to fix: the command line prints their message alone. */
  readonly isUserError?: (error: unknown) => boolean;
  /** The CRM property (or field API name) a pipeline field key is written to; null for one it does not write. */
  readonly propertyFor?: (fieldKey: string) => string | null;
  /**
   * The address of a record in the CRM's own app, from the installation and its (unsealed) CRM
   * credentials; null when it cannot be told.
   */
  readonly recordUrl?: (installation: Installation, crm: Readonly<Record<string, unknown>>, object: string, recordId: string) => string | null;
  /** How the CRM's admins sign in to the console with the CRM itself (the install's OAuth app and redirect URI). */
  readonly consoleSignIn?: ConsoleSignIn;
}

/**
 * A console sign-in through the CRM's OAuth: the same app (client id) and the same registered redirect
 * URI as the install, so nothing new is registered with the CRM; the callback tells a sign-in from an
 * install by its sealed state (connectors/kit/console-signin.ts). The server seals and checks the state
 * and makes the session; the module talks to the CRM: where the browser goes, and, from the code, who
 * signed in, for which account, and whether the CRM calls them an admin of it. The access token that
 * answers this is used for the check only: never stored, never logged.
 */
export interface ConsoleSignIn {
  /** Whether this server can run it: the OAuth app configured and PUBLIC_URL set. */
  available(publicUrl: string | null): boolean;
  /** The sign-in page's buttons, each with the query its start is given (a Salesforce sandbox org). */
  readonly choices: readonly ConsoleSignInChoice[];
  /** What an admin holds in the CRM, as a refusal names it (`Super Admin`, …). */
  readonly adminPermission: string;
  /**
   * The CRM's authorize URL. `seal` makes the state out of what the callback needs back (a PKCE
   * verifier); it throws ConsoleSignInRefusal for a query it cannot start from.
   */
  authorizeUrl(request: ConsoleSignInStart): string;
  /**
   * The code for a token, then who signed in, the account (portal id, org id) and the admin check.
   * ConsoleSignInRefusal for what the person signing in can act on (a code refused); other errors are
   * the CRM unreachable or answering what it should not.
   */
  identify(request: ConsoleSignInCallback): Promise<ConsoleSignInResult>;
}

export interface ConsoleSignInChoice {
  readonly label: string;
  readonly query: Readonly<Record<string, string>>;
}

export interface ConsoleSignInStart {
  /** PUBLIC_URL: the redirect URI is built on it. */
  readonly publicUrl: string;
  readonly query: Readonly<Record<string, string>>;
  readonly seal: (carry: Readonly<Record<string, string>>) => string;
}

export interface ConsoleSignInCallback {
  readonly publicUrl: string;
  readonly code: string;
  /** What `seal` was given at the start, back from the verified state. */
  readonly carry: Readonly<Record<string, string>>;
}

export interface ConsoleSignInResult {
  /** The account signed in to, as installations are keyed (a portal id, an 18-character org id). */
  readonly externalAccountId: string;
  /** Who signed in, for the pages (an e-mail address, a user id); never logged. */
  readonly userLabel: string;
  readonly isAdmin: boolean;
  /** What the CRM said, in words for the page (why the user is, or is not, an admin). */
  readonly reason: string;
}

/** What a module's commands are given: each opens what it needs when it runs, not when it is built. */
export interface CrmCommandContext {
  /** PUBLIC_URL, or null. */
  readonly publicUrl: () => string | null;
  /** The data folder's key (install links are sealed with it). */
  readonly box: () => SecretBox;
  /** The parts a command needs, opened on the data folder and closed once `run` is done. */
  readonly withRuntime: <T>(run: (bridge: Bridge, opened: OpenedStorage) => Promise<T>) => Promise<T>;
  /** The command's result, for a script to read (stdout): an installation id, a URL. */
  readonly print: (line: string) => void;
  /** What the operator is told beside it (stderr). */
  readonly tell: (line: string) => void;
}

/** A CRM's side of a backfill; the command line does the rest (plan, confirm, enqueue, progress). */
export interface CrmBackfill {
  /** What `backfill <provider>` says it does. */
  readonly description: string;
  /** The objects it reads, each with its plural for the output. More than one: `--object` is required. */
  readonly nouns: Readonly<Record<string, string>>;
  /** Boolean options of the CRM's own, by their long flag (`--where-not-enriched`), with their help. */
  readonly flags?: Readonly<Record<string, string>>;
  /** The record source for one installation and object. */
  open(request: BackfillRequest): Promise<BackfillReader>;
}

export interface BackfillRequest {
  readonly installation: Installation;
  readonly installations: Installations;
  readonly object: string;
  /** The CRM's own flags, by their long flag, true when given. */
  readonly flags: Readonly<Record<string, boolean>>;
  /** A line for the operator, as it happens (a query that had to start again). */
  readonly notice: (line: string) => void;
}

export interface BackfillReader {
  readonly connector: Pick<CrmConnector, 'toRequest'>;
  readonly source: RecordSource;
  /** What the plan's count says was scanned (`contacts`, `leads with an empty WF_Enriched_At__c`). */
  readonly scanned: string;
  /** After planning: whether it started over though a backfill had stopped midway, and lines of its own (API calls spent). */
  summary(): { readonly restarted: boolean; readonly lines: readonly string[] };
}

/** What a module's routes are given by the server that mounts them. */
export interface CrmRouteContext {
  /** The address the CRM and admins reach this server at (PUBLIC_URL); null when it is not set. */
  readonly publicUrl: string | null;
  readonly bridge: Bridge;
  readonly queue: JobQueue;
  readonly box: SecretBox;
  readonly log: RouteLog;
  /** Nudges the in-process workers after an enqueue. */
  readonly wake: () => void;
  /** The clock (tests move it). */
  readonly now?: () => Date;
}

/** The registry the bridge uses, from the modules the build ships. Two modules may not share a provider or a job kind. */
export function registryOf(modules: readonly CrmModule[]): ConnectorRegistry {
  const registry = new ConnectorRegistry();
  const providers = new Set<string>();
  for (const module of modules) {
    if (providers.has(module.provider)) throw new Error(`two CRM modules for provider "${module.provider}"`);
    providers.add(module.provider);
    registry.register(module.provider, module.connector, module.callbacks);
    if (module.backfill !== undefined) registry.registerBackfill(module.provider, module.backfill);
    for (const [kind, handler] of Object.entries(module.jobs ?? {})) {
      if (registry.jobHandlers.has(kind)) throw new Error(`job kind "${kind}" is claimed by two CRM modules`);
      registry.registerJob(kind, handler);
    }
  }
  return registry;
}
