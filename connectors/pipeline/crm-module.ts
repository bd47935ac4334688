// The one interface a CRM implements: what the pipeline and the server need of it, and nothing that
// names a CRM. Each CRM folder's index.ts exports one function that makes its module; the composition
// root (server/runtime.ts) registers every module the build ships, and nothing else there knows which
// CRMs exist.
//
// Today a module gives its provider name and objects, its connector factory, its post-settlement hook
// (HubSpot's workflow callbacks) and its own job kinds. Its intake handlers, install spec, backfill
// source and routes table are still mounted by server/http and server/cli one CRM at a time (issue 11).
import { type CallbackHandler, type ConnectorFactory, type ConnectorJobHandler, ConnectorRegistry } from './bridge.ts';

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
}

/** What every module may be told when it is made. */
export interface CrmModuleOptions {
  /** Tests and local fakes only: the CRM's API and login hosts may be anywhere. */
  readonly allowAnyHost?: boolean;
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
