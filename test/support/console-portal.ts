// A HubSpot portal connected to a running server, as the console's pipeline tests need it: a fake
// HubSpot, a local account and the portal's installations made in-process on the server's data folder
// (as `accounts create` and `hubspot connect` do: hubspot-cli.e2e runs those), the server as
// `npm start` runs it (in-server workers) and Chromium. Admins sign in with links minted in-process with
// the server's key, as `console-link` mints them (console.e2e runs that command).
import { randomBytes, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { HUBSPOT_PROVIDER } from '../../connectors/hubspot/connector.ts';
import { checkStaticToken, connectPortal } from '../../connectors/hubspot/install.ts';
import { createAccount } from '../../core/accounts/admin.ts';
import { loadSecretBox } from '../../core/secrets/secret-box.ts';
import { consoleLinkUrl } from '../../server/http/console/link.ts';
import { launchChromium } from './chromium.ts';
import { type FakeHubSpot, startFakeHubSpot } from './fake-hubspot.ts';
import { withFolderRuntime } from './folder-runtime.ts';
import { tempDir } from './harness.ts';
import { type Proc, freePort, startServerProcess } from './processes.ts';

export const APP_ID = '1160452';
export const PORTAL_ID = '62515';
/** The local account every installation enriches with. */
export const ACCOUNT = 'e2e';

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

export interface ConsolePortal {
  readonly fake: FakeHubSpot;
  readonly server: Proc;
  readonly browser: Browser;
  readonly publicUrl: string;
  /** The server's environment: its data folder, key, PUBLIC_URL, PORT and the fake's base URL. */
  readonly env: Readonly<Record<string, string>>;
  /** The installation of each portal connected: PORTAL_ID's, then otherPortals' in order. */
  readonly installationIds: ReadonlyMap<string, string>;
  /** A new browser context signed in as the installation's admin (on its overview). */
  signIn(installationId: string): Promise<Page>;
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
  const dataDir = tempDir(options.folderPrefix);
  let server: Proc | undefined;
  let browser: Browser | undefined;
  const close = async () => {
    await browser?.close();
    await server?.stop();
    await fake.close();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const port = await freePort();
    const publicUrl = `http://127.0.0.1:${port}`;
    const key = randomBytes(32).toString('hex');
    const env = {
      DATA_DIR: dataDir,
      ENRICHBRIDGE_SECRET_KEY: key,
      PUBLIC_URL: publicUrl,
      PORT: String(port),
      HUBSPOT_API_BASE_URL: fake.url,
      LOG_LEVEL: 'info',
    };
    const portals = [PORTAL_ID, ...(options.otherPortals ?? [])];
    const installationIds = await withFolderRuntime(env, async ({ opened, bridge }) => {
      await createAccount(opened.store, ACCOUNT, { careerIntelligence: true, rateLimit: options.rateLimit });
      const ids = new Map<string, string>();
      for (const portalId of portals) {
        // What `hubspot connect --portal-id P --access-token … --client-secret … --app-id … --account e2e
        // --env sandbox --api-base-url FAKE` does: the token checked, then the installation and its properties.
        await checkStaticToken(fake.url, portalId, fake.tokens.staticToken);
        const { installation } = await connectPortal({
          installations: bridge.installations,
          portalId,
          credentials: {
            kind: 'static',
            accessToken: fake.tokens.staticToken,
            refreshToken: null,
            expiresAt: null,
            clientId: null,
            clientSecret,
            appId: APP_ID,
            apiBaseUrl: fake.url,
          },
          target: { kind: 'local', accountName: ACCOUNT },
          environment: 'sandbox',
          existing: await bridge.pipelineStore.findInstallationByAccount(HUBSPOT_PROVIDER, portalId),
        });
        ids.set(portalId, installation.id);
      }
      return ids;
    });
    // The server and the browser start side by side; whichever came up is stopped by close.
    const [started, launched] = await Promise.allSettled([startServerProcess(env), launchChromium()]);
    if (started.status === 'fulfilled') server = started.value.proc;
    if (launched.status === 'fulfilled') browser = launched.value;
    if (started.status === 'rejected') throw started.reason;
    if (launched.status === 'rejected') throw launched.reason;
    const up = { server: started.value.proc, browser: launched.value };
    const box = loadSecretBox({ dataDir, env: { ENRICHBRIDGE_SECRET_KEY: key } });
    return {
      fake,
      ...up,
      publicUrl,
      env,
      installationIds,
      async signIn(installationId) {
        const context = await up.browser.newContext();
        const page = await context.newPage();
        await page.goto(consoleLinkUrl(box, publicUrl, { kind: 'installation', installationId }));
        return page;
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
