// The console's browser tests start from here: a data folder seeded in-process (as the CLI's commands
// would leave it, without their start-up time), the server as `npm start` runs it (in-server workers
// unless the test's env says otherwise) and Chromium, side by side. Admins sign in with links minted
// in-process with the server's key, as `console-link` mints them (console.e2e runs that command).
// startConsolePortal adds a HubSpot portal connected to that server: a fake HubSpot, a local account and
// the portal's installations (as `accounts create` and `hubspot connect` do: hubspot-cli.e2e runs those).
import { randomBytes, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import type { ConsoleScope } from '../../bridge/console-sessions.ts';
import type { Installation } from '../../bridge/model.ts';
import { HUBSPOT_PROVIDER } from '../../connectors/hubspot/connector.ts';
import { checkStaticToken, connectPortal } from '../../connectors/hubspot/install.ts';
import { createAccount } from '../../core/accounts/admin.ts';
import { loadSecretBox } from '../../core/secrets/secret-box.ts';
import { consoleLinkUrl } from '../../server/http/console/link.ts';
import type { Runtime } from '../../server/runtime.ts';
import { launchChromium } from './chromium.ts';
import { type FakeHubSpot, startFakeHubSpot, staticCredentials } from './fake-hubspot.ts';
import { withFolderRuntime } from './folder-runtime.ts';
import { tempDir } from './harness.ts';
import { type Proc, freePort, startServerProcess } from './processes.ts';

export const APP_ID = '1160452';
export const PORTAL_ID = '62515';
/** The local account every installation enriches with. */
export const ACCOUNT = 'e2e';

/**
 * The server (`npm start` with `env`) and Chromium, started side by side: both, or neither (whichever came
 * up is stopped when the other did not).
 */
export async function startServerAndBrowser(env: Record<string, string>): Promise<{ server: Proc; url: string; browser: Browser }> {
  const [started, launched] = await Promise.allSettled([startServerProcess(env), launchChromium()]);
  if (started.status === 'fulfilled' && launched.status === 'fulfilled') return { server: started.value.proc, url: started.value.url, browser: launched.value };
  if (started.status === 'fulfilled') await started.value.proc.stop();
  if (launched.status === 'fulfilled') await launched.value.close();
  throw started.status === 'rejected' ? started.reason : (launched as PromiseRejectedResult).reason;
}

/** An installation as a CRM's `connect` leaves one (its credentials aside), in the sandbox, enriching with a local account. */
export function addInstallation(runtime: Runtime, provider: string, externalAccountId: string, accountName = ACCOUNT): Promise<Installation> {
  return runtime.bridge.installations.create({
    provider,
    externalAccountId,
    environment: 'sandbox',
    target: { kind: 'local', accountName },
    settings: {},
  });
}

export interface ConsoleServerOptions<T> {
  /** The name the data folder starts with. */
  readonly folderPrefix: string;
  /** Further server settings (the CRMs' base URLs and apps, WORKER_CONCURRENCY…). */
  readonly env?: Readonly<Record<string, string>>;
  /** Fills the data folder before the server starts; `env` is the server's (openFolderRuntime opens it). */
  seed(env: Readonly<Record<string, string>>): Promise<T>;
}

export interface ConsoleServer<T> {
  readonly server: Proc;
  readonly browser: Browser;
  readonly publicUrl: string;
  /** The server's environment: its data folder, key, PUBLIC_URL, PORT, LOG_LEVEL and the options' env. */
  readonly env: Readonly<Record<string, string>>;
  /** What `seed` returned. */
  readonly seeded: T;
  /** A link as `console-link` makes it for the scope (at `now`, by default the present), sealed with the server's key. */
  link(scope: ConsoleScope, now?: Date): string;
  /** A new browser context signed in as the installation's admin (on its overview). */
  signIn(installationId: string): Promise<Page>;
  /** Stops the browser and the server, and removes the data folder. */
  close(): Promise<void>;
}

export async function startConsoleServer<T>(options: ConsoleServerOptions<T>): Promise<ConsoleServer<T>> {
  const dataDir = tempDir(options.folderPrefix);
  let up: { server: Proc; browser: Browser } | undefined;
  const close = async () => {
    await up?.browser.close();
    await up?.server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const port = await freePort();
    const publicUrl = `http://127.0.0.1:${port}`;
    const key = randomBytes(32).toString('hex');
    const env = { DATA_DIR: dataDir, ENRICHBRIDGE_SECRET_KEY: key, PUBLIC_URL: publicUrl, PORT: String(port), LOG_LEVEL: 'info', ...options.env };
    const seeded = await options.seed(env);
    const started = await startServerAndBrowser(env);
    up = started;
    const box = loadSecretBox({ dataDir, env: { ENRICHBRIDGE_SECRET_KEY: key } });
    const link = (scope: ConsoleScope, now?: Date) => consoleLinkUrl(box, publicUrl, scope, now);
    return {
      server: started.server,
      browser: started.browser,
      publicUrl,
      env,
      seeded,
      link,
      async signIn(installationId) {
        const context = await started.browser.newContext();
        const page = await context.newPage();
        await page.goto(link({ kind: 'installation', installationId }));
        return page;
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

export interface ConsolePortalOptions {
  /** The name the data folder starts with. */
  readonly folderPrefix: string;
  /** The account's requests a second per token. */
  readonly rateLimit: number;
  /** The properties whose changes the fake's propertyChange events report. */
  readonly subscribedProperties: readonly string[];
  /** Further portals connected on the same fake, after PORTAL_ID. */
  readonly otherPortals?: readonly string[];
}

export interface ConsolePortal extends ConsoleServer<ReadonlyMap<string, string>> {
  readonly fake: FakeHubSpot;
  /** The installation of each portal connected: PORTAL_ID's, then otherPortals' in order. */
  readonly installationIds: ReadonlyMap<string, string>;
  /** Stops the browser, the server and the fake, and removes the data folder. */
  close(): Promise<void>;
}

export async function startConsolePortal(options: ConsolePortalOptions): Promise<ConsolePortal> {
  const clientSecret = randomUUID();
  // Webhooks are sent by the tests (sendEvents) or by nobody: none is set.
  const fake = await startFakeHubSpot({
    webhookUrl: null,
    appId: APP_ID,
    portalId: PORTAL_ID,
    clientSecret,
    subscribedProperties: options.subscribedProperties,
  });
  const portals = [PORTAL_ID, ...(options.otherPortals ?? [])];
  try {
    const app = await startConsoleServer({
      folderPrefix: options.folderPrefix,
      env: { HUBSPOT_API_BASE_URL: fake.url },
      seed: (env) =>
        withFolderRuntime(env, async ({ opened, bridge }) => {
          await createAccount(opened.store, ACCOUNT, { careerIntelligence: true, rateLimit: options.rateLimit });
          const ids = new Map<string, string>();
          for (const portalId of portals) {
            // What `hubspot connect --portal-id P --access-token … --client-secret … --app-id … --account e2e
            // --env sandbox --api-base-url FAKE` does: the token checked, then the installation and its properties.
            await checkStaticToken(fake.url, portalId, fake.tokens.staticToken);
            const { installation } = await connectPortal({
              installations: bridge.installations,
              portalId,
              credentials: staticCredentials(fake, clientSecret, APP_ID),
              target: { kind: 'local', accountName: ACCOUNT },
              environment: 'sandbox',
              existing: await bridge.pipelineStore.findInstallationByAccount(HUBSPOT_PROVIDER, portalId),
            });
            ids.set(portalId, installation.id);
          }
          return ids;
        }),
    });
    return {
      ...app,
      fake,
      installationIds: app.seeded,
      async close() {
        await app.close();
        await fake.close();
      },
    };
  } catch (error) {
    await fake.close();
    throw error;
  }
}
