// The one interface a CRM implements: what the pipeline and the server need of it, and nothing that
// names a CRM. Each CRM folder's index.ts exports one function that makes its module; the composition
// root (server/runtime.ts) registers every module the build ships, and nothing else there knows which
// CRMs exist.
//
// A module gives its provider name and objects, its connector factory, its post-settlement hook
// (HubSpot's workflow callbacks), its own job kinds, its routes table (its OAuth install, webhooks and
// outbound messages, each a handler that returns its answer as data), its backfill record source and its
// operator commands. server/http mounts the routes, server/cli the commands, all the same way.
import type { CrmRoute } from '../kit/http.ts';
import type { RouteLog } from '../kit/oauth-routes.ts';
import type { SecretBox } from '../../core/secrets/secret-box.ts';
import { type Bridge, type CallbackHandler, type ConnectorFactory, type ConnectorJobHandler, ConnectorRegistry } from './bridge.ts';
import type { JobQueue } from './job-queue.ts';

export interface CrmModule {
  /** The provider name installations are stored under (`hubspot`, `salesforce`). */
  readonly provider: string;
  /** The objects it enriches, in the order an installation enables them by default. */
  readonly objects: readonly string[];
  /** Builds an installation's connector (its API client, credentials and pacing). */
  readonly connector: ConnectorFactory;
  /** Told about settled records whose jobs carried a callback id (a waiting workflow). */
  readonly callbacks?: CallbackHandler;
  /** The module's own job kinds, each with its handler (done when it resolves, retried when it throws). */
  readonly jobs?: Readonly<Record<string, ConnectorJobHandler>>;
  /** The module's HTTP routes, built once per server from what they need of it. */
  readonly routes?: (context: CrmRouteContext) => readonly CrmRoute[];
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
    for (const [kind, handler] of Object.entries(module.jobs ?? {})) {
      if (registry.jobHandlers.has(kind)) throw new Error(`job kind "${kind}" is claimed by two CRM modules`);
      registry.registerJob(kind, handler);
    }
  }
  return registry;
}
