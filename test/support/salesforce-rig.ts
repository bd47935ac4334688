// What the Salesforce integration tests share: the server's app (its CRM routes) on a server of its own
// and the runtime with a worker, on a data folder of its own, an enrichment account, and a way to
// connect a fake org (test/support/fake-salesforce.ts) as a static-token installation whose outbound
// messages reach the app.
import { rmSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type AccountSettings, createAccount } from '../../core/accounts/admin.ts';
import type { Worker } from '../../bridge/worker.ts';
import type { InstallationSettings } from '../../bridge/model.ts';
import type { CrmCommandContext } from '../../bridge/crm-module.ts';
import { salesforceCommands } from '../../connectors/salesforce/cli.ts';
import { SALESFORCE_PROVIDER } from '../../connectors/salesforce/connector.ts';
import { NO_SALESFORCE_APP } from '../../connectors/salesforce/install.ts';
import { salesforceOutboundMessagePath } from '../../connectors/salesforce/paths.ts';
import { createApp } from '../../server/http/app.ts';
import { crmRouter } from '../../server/http/crm-routes.ts';
import { loadConfig } from '../../server/config.ts';
import { createLogger } from '../../server/logger.ts';
import { type Runtime, openRuntime, routeContext, startWorker } from '../../server/runtime.ts';
import type { FakeSalesforce } from './fake-salesforce.ts';
import { tempDir } from './harness.ts';

/** The enrichment account every installation of the rig enriches for. */
export const RIG_ACCOUNT = 'rig';

export interface SalesforceRig {
  readonly runtime: Runtime;
  readonly worker: Worker;
  /** Where the app listens (`http://127.0.0.1:PORT`). */
  readonly origin: string;
  /**
   * Connects an org as a sandbox installation with a static token on the fake's URL (`orgId` defaults to
   * the fake's own: another id makes a second installation on the same fake), with these settings, and
   * points the fake's outbound messages at it unless told not to. Gives the installation's id.
   */
  connect(
    fake: FakeSalesforce,
    options?: { readonly orgId?: string; readonly settings?: Partial<InstallationSettings>; readonly outbound?: boolean },
  ): Promise<string>;
  close(): Promise<void>;
}

export async function startSalesforceRig(name: string, account: AccountSettings = { careerIntelligence: true }): Promise<SalesforceRig> {
  const logger = createLogger('silent');
  const dataDir = tempDir(`enrichbridge-salesforce-${name}-`);
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', WORKER_CONCURRENCY: '2', SALESFORCE_ALLOW_ANY_HOST: 'true' });
  const runtime = await openRuntime(config, logger);
  const worker = startWorker(runtime, logger, 2);
  const app = createApp({
    service: runtime.service,
    logger,
    trustProxy: false,
    requireHttps: false,
    routers: [crmRouter(runtime.modules, routeContext(runtime, config, logger, { wake: () => worker.wake() }))],
  });
  const server: Server = createServer((req, res) => {
    app(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`; // a TCP listener always reports an AddressInfo
  await createAccount(runtime.opened.store, RIG_ACCOUNT, account);
  const { installations } = runtime.bridge;
  return {
    runtime,
    worker,
    origin,
    async connect(fake, options = {}) {
      const orgId = options.orgId ?? fake.orgId;
      const installation = await installations.create({
        provider: SALESFORCE_PROVIDER,
        externalAccountId: orgId,
        environment: 'sandbox',
        target: { kind: 'local', accountName: RIG_ACCOUNT },
        crmCredentials: {
          kind: 'static',
          instanceUrl: fake.url,
          accessToken: fake.accessToken,
          refreshToken: null,
          issuedAt: null,
          expiresAt: null,
          clientId: null,
          clientSecret: null,
          loginUrl: 'https://test.salesforce.com',
          orgId,
          userId: null,
          jwt: null,
        },
      });
      if (options.settings !== undefined) await installations.updateSettings(installation.id, options.settings);
      if (options.outbound !== false && orgId === fake.orgId) {
        fake.setOutboundUrl(`${origin}${salesforceOutboundMessagePath(await installations.outboundSecret(installation.id))}`);
      }
      return installation.id;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await worker.stop();
      await runtime.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** `enrichbridge salesforce …` on the rig's runtime (any host allowed, no app settings), and what it printed. */
export function salesforceCli(rig: SalesforceRig): { run: (...args: string[]) => Promise<unknown>; printed: string[] } {
  const printed: string[] = [];
  const context: CrmCommandContext = {
    publicUrl: () => null,
    box: () => rig.runtime.box,
    withRuntime: (run) => run(rig.runtime.bridge, rig.runtime.opened),
    print: (line) => printed.push(line),
    tell: () => undefined,
  };
  const run = (...args: string[]) =>
    salesforceCommands({ ...NO_SALESFORCE_APP, allowAnyHost: true }, context)
      .exitOverride()
      .configureOutput({ writeErr: () => undefined })
      .parseAsync(args, { from: 'user' });
  return { run, printed };
}
