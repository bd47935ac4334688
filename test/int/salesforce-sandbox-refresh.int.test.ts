// A refreshed Salesforce sandbox comes back with a new org id on the host it had: its outbound messages
// are refused as an unknown org, the installation of that host is marked "org changed" (once per org id
// per interval), `installations show` and the console's overview say so, and `salesforce reconnect` (a
// token, or the OAuth link the console's Reconnect leads to) moves the installation to the new org with
// its settings, secrets, log and state. On the real store: SQLite, and PostgreSQL when TEST_DATABASE_URL is set.
import { randomBytes } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../../core/secrets/secret-box.ts';
import { createAccount } from '../../core/accounts/admin.ts';
import type { CrmCommandContext, CrmRouteContext } from '../../bridge/crm-module.ts';
import { openReconnectGrant, reconnectRoute, sealReconnectGrant } from '../../bridge/installations.ts';
import type { Installation, InstallationSettings } from '../../bridge/model.ts';
import { newLogId } from '../../bridge/store.ts';
import { SALESFORCE_SANDBOX_LOGIN_URL } from '../../connectors/salesforce/auth.ts';
import { salesforceCommands } from '../../connectors/salesforce/cli.ts';
import { SALESFORCE_PROVIDER } from '../../connectors/salesforce/connector.ts';
import {
  NO_SALESFORCE_APP,
  type SalesforceAppConfig,
  SalesforceInstallError,
  beginOAuth,
  completeOAuth,
  openInstallLink,
  reconnectLinkFor,
  verifyOAuthState,
} from '../../connectors/salesforce/install.ts';
import { NOT_CONNECTED_FAULT, OrgChangeWatch, type SalesforceIntakeDeps, acceptOutboundMessage } from '../../connectors/salesforce/intake.ts';
import { scanInstanceHost } from '../../connectors/salesforce/outbound-xml.ts';
import { salesforceRoutes, DEFAULT_OUTBOUND_SETTINGS } from '../../connectors/salesforce/routes.ts';
import { describeInstallation } from '../../server/cli/pipeline.ts';
import { overviewPage } from '../../server/http/console/overview.tsx';
import { type FakeSalesforce, fakeId18, startFakeSalesforce } from '../support/fake-salesforce.ts';
import { type PipelineHarness, startPipeline } from '../support/pipeline-harness.ts';
import { TEST_DATABASES, type TestDatabase } from '../support/databases.ts';

/** The org the sandbox had when it was connected, and the one it has since its refresh. */
const OLD_ORG = fakeId18('00D8a000001AbCd');
const NEW_ORG = fakeId18('00D8a000002XyZw');
const OTHER_ORG = fakeId18('00D8a000003QrSt');
const SANDBOX_HOST = 'acme--uat.sandbox.my.salesforce.com';
const SEEN_AT = new Date('2026-11-20T09:30:00.000Z');
/** What links and grants are sealed with here (the installations' secrets have the harness's own key). */
const box = new SecretBox(randomBytes(32));

let database: TestDatabase | undefined;
let h: PipelineHarness | undefined;
const fakes: FakeSalesforce[] = [];
afterEach(async () => {
  for (const fake of fakes.splice(0)) await fake.close();
  await h?.close();
  h = undefined;
});

async function fake(options: Parameters<typeof startFakeSalesforce>[0] = {}): Promise<FakeSalesforce> {
  const started = await startFakeSalesforce({ outboundUrl: null, ...options });
  fakes.push(started);
  return started;
}

let accounts = 0;

/** A Salesforce installation of `orgId` whose credentials name `instanceUrl`, as `salesforce connect` leaves it. */
async function install(
  harness: PipelineHarness,
  options: { orgId?: string; instanceUrl?: string; loginUrl?: string; settings?: Partial<InstallationSettings> } = {},
): Promise<Installation> {
  accounts += 1;
  const accountName = `sandbox-refresh-${accounts}`;
  const orgId = options.orgId ?? OLD_ORG;
  await createAccount(harness.opened.store, accountName, {});
  return harness.bridge.installations.create({
    provider: SALESFORCE_PROVIDER,
    externalAccountId: orgId,
    environment: 'sandbox',
    target: { kind: 'local', accountName },
    crmCredentials: {
      kind: 'static',
      instanceUrl: options.instanceUrl ?? `https://${SANDBOX_HOST}`,
      accessToken: 'old-session-token',
      orgId,
      loginUrl: options.loginUrl ?? SALESFORCE_SANDBOX_LOGIN_URL,
    },
    settings: options.settings ?? {},
  });
}

interface Notice {
  readonly fields: Readonly<Record<string, unknown>>;
  readonly what: string;
}

/** The intake's dependencies on the harness, with its notices and errors collected and a clock the test moves. */
function intake(harness: PipelineHarness, clock: { now: Date }, watch = new OrgChangeWatch()): SalesforceIntakeDeps & { notices: Notice[]; errors: unknown[] } {
  const notices: Notice[] = [];
  const errors: unknown[] = [];
  return {
    installations: harness.bridge.installations,
    store: harness.bridge.pipelineStore,
    queue: harness.opened.queue,
    deliveries: harness.bridge.deliveries,
    wake: () => undefined,
    onError: (error) => errors.push(error),
    onNotice: (fields, what) => notices.push({ fields, what }),
    orgChanges: watch,
    now: () => clock.now,
    notices,
    errors,
  };
}

/** An outbound message from `organizationId`, its EnterpriseUrl and PartnerUrl on `host`. */
async function envelopeFrom(organizationId: string, host = SANDBOX_HOST): Promise<Buffer> {
  const org = await fake({ soapHost: `https://${host}` });
  const contact = await org.createContact({ FirstName: 'Amanda', LastName: 'Taylor' }, { notify: false });
  return Buffer.from(org.envelope([contact], { organizationId }).body, 'utf8');
}

/** A command line on the harness's runtime, as server/cli mounts the module's commands. */
function cli(harness: PipelineHarness, publicUrl: string | null = null) {
  const printed: string[] = [];
  const told: string[] = [];
  const context: CrmCommandContext = {
    publicUrl: () => publicUrl,
    box: () => box,
    withRuntime: (run) => run(harness.bridge, harness.opened),
    print: (line) => printed.push(line),
    tell: (line) => told.push(line),
  };
  const run = (...args: string[]) =>
    salesforceCommands({ ...NO_SALESFORCE_APP, allowAnyHost: true }, context)
      .exitOverride()
      .configureOutput({ writeErr: () => undefined })
      .parseAsync(args, { from: 'user' });
  return { run, printed, told };
}

describe('scanInstanceHost', () => {
  it('reads the host of EnterpriseUrl and PartnerUrl from the first bytes, lower-cased', async () => {
    expect(scanInstanceHost(await envelopeFrom(NEW_ORG, 'Acme--UAT.sandbox.my.salesforce.com'))).toBe(SANDBOX_HOST);
  });

  it('reads no host from an envelope whose URLs are not https or name two hosts', () => {
    const envelope = (enterprise: string, partner: string) =>
      Buffer.from(`<notifications><OrganizationId>${NEW_ORG}</OrganizationId><EnterpriseUrl>${enterprise}</EnterpriseUrl><PartnerUrl>${partner}</PartnerUrl>`);
    expect(scanInstanceHost(envelope('http://a.my.salesforce.com/x', 'http://a.my.salesforce.com/y'))).toBeNull();
    expect(scanInstanceHost(envelope('https://a.my.salesforce.com/x', 'https://b.my.salesforce.com/y'))).toBeNull();
    expect(scanInstanceHost(envelope('https://user:pw@a.my.salesforce.com/x', 'https://a.my.salesforce.com/y'))).toBeNull();
  });
});

describe.each(TEST_DATABASES)('on $name', (each) => {
  beforeAll(() => {
    database = each;
  });

  describe('an outbound message from an org that is not connected', () => {
    it('marks the installation whose host it posts from as org changed, logs the ids, and answers a fault that names none of ours', async () => {
      h = await startPipeline({ database });
      const installation = await install(h);
      const deps = intake(h, { now: SEEN_AT });
      const answer = await acceptOutboundMessage(await envelopeFrom(NEW_ORG), undefined, deps);
      expect(answer).toMatchObject({ status: 500, refused: 'unknown_org' });
      expect(answer.body).toContain('refreshed');
      expect(answer.body).not.toContain(installation.id);
      expect(answer.body).not.toContain(OLD_ORG);
      expect((await h.bridge.installations.require(installation.id)).orgChange).toEqual({ externalAccountId: NEW_ORG, since: SEEN_AT.toISOString() });
      expect(deps.notices).toHaveLength(1);
      expect(deps.notices[0]?.fields).toEqual({ installation: installation.id, org: NEW_ORG, new_mark: true });
      expect(deps.notices[0]?.what).toContain(`enrichbridge salesforce reconnect ${installation.id}`);
      expect(JSON.stringify(deps.notices)).not.toContain('old-session-token');
      expect(deps.errors).toEqual([]);
      // Still refused: nothing is queued for an org that is not connected.
      expect(await h.opened.db.selectFrom('jobs').select('id').execute()).toEqual([]);
    });

    it('marks nothing when its host is no installation’s', async () => {
      h = await startPipeline({ database });
      const installation = await install(h);
      const deps = intake(h, { now: SEEN_AT });
      const answer = await acceptOutboundMessage(await envelopeFrom(NEW_ORG, 'someone-else.my.salesforce.com'), undefined, deps);
      expect(answer).toMatchObject({ status: 500, refused: 'unknown_org' });
      expect(answer.body).toContain(NOT_CONNECTED_FAULT);
      expect((await h.bridge.installations.require(installation.id)).orgChange).toBeNull();
      expect(deps.notices).toEqual([]);
    });

    it('looks into one org id once per interval, and a mark keeps the time it was first seen', async () => {
      h = await startPipeline({ database });
      const installation = await install(h);
      const clock = { now: SEEN_AT };
      const deps = intake(h, clock, new OrgChangeWatch({ intervalMs: 60_000, perMinute: 100, remembered: 100 }));
      const body = await envelopeFrom(NEW_ORG);
      await acceptOutboundMessage(body, undefined, deps);
      clock.now = new Date(SEEN_AT.getTime() + 30_000);
      await acceptOutboundMessage(body, undefined, deps);
      expect(deps.notices).toHaveLength(1);
      clock.now = new Date(SEEN_AT.getTime() + 90_000);
      await acceptOutboundMessage(body, undefined, deps);
      expect(deps.notices.map((n) => n.fields.new_mark)).toEqual([true, false]);
      expect((await h.bridge.installations.require(installation.id)).orgChange?.since).toBe(SEEN_AT.toISOString());
    });

    it('keeps its looks within the limit per minute across org ids', () => {
      const watch = new OrgChangeWatch({ intervalMs: 600_000, perMinute: 2, remembered: 100 });
      expect([OLD_ORG, NEW_ORG, OTHER_ORG].map((org) => watch.take(org, SEEN_AT))).toEqual([true, true, false]);
      expect(watch.take(OTHER_ORG, new Date(SEEN_AT.getTime() + 60_000))).toBe(true);
    });
  });

  describe('an outbound message from a connected org', () => {
    it('marks no installation, even one on the same host', async () => {
      h = await startPipeline({ database });
      const connected = await install(h);
      const sameHost = await install(h, { orgId: OTHER_ORG });
      const deps = intake(h, { now: SEEN_AT });
      const secret = await h.bridge.installations.outboundSecret(connected.id);
      const answer = await acceptOutboundMessage(await envelopeFrom(OLD_ORG), secret, deps);
      expect(answer.status).toBe(200);
      for (const id of [connected.id, sameHost.id]) expect((await h.bridge.installations.require(id)).orgChange).toBeNull();
      expect(deps.notices).toEqual([]);
    });
  });

  describe('installations show', () => {
    it('says the org changed, since when, and the command that reconnects it', async () => {
      h = await startPipeline({ database });
      const installation = await install(h);
      expect(describeInstallation(installation, 'acme')).not.toContain('org changed');
      await h.bridge.installations.markOrgChanged(installation.id, NEW_ORG, SEEN_AT);
      const shown = describeInstallation(await h.bridge.installations.require(installation.id), 'acme');
      expect(shown).toContain(
        `org changed (sandbox refreshed?): messages from org ${NEW_ORG} since ${SEEN_AT.toISOString()}; run \`enrichbridge salesforce reconnect ${installation.id}\``,
      );
    });
  });

  describe("the console's overview", () => {
    it('shows the org change, with the Reconnect button for the operator only', async () => {
      h = await startPipeline({ database });
      const installation = await install(h);
      await h.bridge.installations.markOrgChanged(installation.id, NEW_ORG, SEEN_AT);
      const marked = await h.bridge.installations.require(installation.id);
      const data = {
        installation: marked,
        target: 'account acme',
        quota: null,
        forecast: { sandbox: true, used: 0, dailyAverage: 0, runsOutOn: null, budget: null },
        budget: null,
        days: [],
        outcomes: [],
        failures: [],
        recovered: 0,
        kept: [],
      } as unknown as Parameters<typeof overviewPage>[1];
      const chrome = { base: '/console', session: { who: 'operator', csrf: 'token' } };
      const operatorPage = overviewPage(chrome, { ...data, operator: true });
      expect(operatorPage).toContain(`messages from org ${NEW_ORG} since`);
      expect(operatorPage).toContain(`action="/console/installations/${installation.id}/reconnect"`);
      expect(overviewPage(chrome, data)).not.toContain('/reconnect"');
    });
  });

  describe('salesforce reconnect with a token', () => {
    it('moves the installation to the marked org, keeping its settings, secrets, log and state, and clears the mark', async () => {
      h = await startPipeline({ database });
      const org = await fake({ orgId: NEW_ORG });
      const installation = await install(h, { instanceUrl: org.url, settings: { overwriteMode: 'always', monthlyBudget: 500 } });
      const before = {
        outbound: await h.bridge.installations.outboundSecret(installation.id),
        record: await h.bridge.installations.recordSecret(installation.id),
        webhook: await h.bridge.installations.webhookSecret(installation.id),
        token: (await h.bridge.installations.secrets(installation.id)).enrichmentToken,
      };
      await h.bridge.pipelineStore.saveOutcomes(
        [],
        [
          {
            id: newLogId(),
            installationId: installation.id,
            object: 'Contact',
            recordId: fakeId18('0038a000004AbCd'),
            at: SEEN_AT.toISOString(),
            outcome: 'enriched',
            fieldsWritten: [],
            changes: {},
            quotaConsumed: 1,
            latencyMs: 5,
            detail: null,
          },
        ],
      );
      await h.bridge.installations.markOrgChanged(installation.id, NEW_ORG, SEEN_AT);

      const command = cli(h);
      await command.run('reconnect', installation.id, '--access-token', org.accessToken);

      expect(command.printed).toEqual([installation.id]);
      const moved = await h.bridge.installations.require(installation.id);
      expect(moved).toMatchObject({ externalAccountId: NEW_ORG, orgChange: null, settings: installation.settings, status: 'active' });
      const secrets = await h.bridge.installations.secrets(installation.id);
      expect({ outbound: secrets.outboundSecret, record: secrets.recordSecret, webhook: secrets.webhookSecret, token: secrets.enrichmentToken }).toEqual(
        before,
      );
      expect(secrets.crm).toMatchObject({ orgId: NEW_ORG, accessToken: org.accessToken, instanceUrl: org.url, loginUrl: SALESFORCE_SANDBOX_LOGIN_URL });
      expect((await h.bridge.pipelineStore.findInstallationByAccount(SALESFORCE_PROVIDER, NEW_ORG))?.id).toBe(installation.id);
      expect(await h.bridge.pipelineStore.findInstallationByAccount(SALESFORCE_PROVIDER, OLD_ORG)).toBeUndefined();
      expect(await h.bridge.pipelineStore.listLog({ installationId: installation.id })).toHaveLength(1);
      // The new org's messages are taken now, at the same outbound URL.
      const deps = intake(h, { now: SEEN_AT });
      expect((await acceptOutboundMessage(await envelopeFrom(NEW_ORG), before.outbound, deps)).status).toBe(200);
    });

    it('refuses an org id that is not the one the mark recorded, and changes nothing', async () => {
      h = await startPipeline({ database });
      const org = await fake({ orgId: OTHER_ORG });
      const installation = await install(h, { instanceUrl: org.url });
      await h.bridge.installations.markOrgChanged(installation.id, NEW_ORG, SEEN_AT);
      const command = cli(h);
      await expect(command.run('reconnect', installation.id, '--access-token', org.accessToken, '--org-id', OTHER_ORG)).rejects.toThrow(
        `gets messages from org ${NEW_ORG}, not ${OTHER_ORG}`,
      );
      expect(await h.bridge.installations.require(installation.id)).toMatchObject({
        externalAccountId: OLD_ORG,
        orgChange: { externalAccountId: NEW_ORG, since: SEEN_AT.toISOString() },
      });
      expect((await h.bridge.installations.secrets(installation.id)).crm).toMatchObject({ accessToken: 'old-session-token' });
      // Told so, it moves.
      await command.run('reconnect', installation.id, '--access-token', org.accessToken, '--org-id', OTHER_ORG, '--any-org');
      expect((await h.bridge.installations.require(installation.id)).externalAccountId).toBe(OTHER_ORG);
    });

    it('refuses an installation nothing marked, unless told to move it all the same', async () => {
      h = await startPipeline({ database });
      const org = await fake({ orgId: NEW_ORG });
      const installation = await install(h, { instanceUrl: org.url });
      const command = cli(h);
      await expect(command.run('reconnect', installation.id, '--access-token', org.accessToken, '--org-id', NEW_ORG)).rejects.toThrow(
        'has seen no message from another org',
      );
      expect((await h.bridge.installations.require(installation.id)).externalAccountId).toBe(OLD_ORG);
    });

    it('refuses an org another installation has', async () => {
      h = await startPipeline({ database });
      const org = await fake({ orgId: NEW_ORG });
      const installation = await install(h, { instanceUrl: org.url });
      const other = await install(h, { orgId: NEW_ORG, instanceUrl: 'https://other.my.salesforce.com' });
      await h.bridge.installations.markOrgChanged(installation.id, NEW_ORG, SEEN_AT);
      await expect(cli(h).run('reconnect', installation.id, '--access-token', org.accessToken)).rejects.toThrow(`already connected as ${other.id}`);
      expect((await h.bridge.installations.require(installation.id)).externalAccountId).toBe(OLD_ORG);
    });
  });

  describe('salesforce reconnect through OAuth', () => {
    const PUBLIC_URL = 'https://bridge.example.com';

    /** The reconnect link through Salesforce's consent (the fake's) to the callback's work. */
    async function authorise(harness: PipelineHarness, org: FakeSalesforce, linkUrl: string) {
      const app: SalesforceAppConfig = { clientId: 'client', clientSecret: null, loginUrl: org.url, publicUrl: PUBLIC_URL, allowAnyHost: true };
      const link = new URL(linkUrl).searchParams.get('link') ?? '';
      const intent = openInstallLink(box, link);
      const started = beginOAuth(box, app, intent, 'production');
      const authorize = new URL(started.authorizeUrl);
      authorize.searchParams.set('scope', 'api refresh_token');
      const consent = await fetch(authorize, { redirect: 'manual' });
      const back = new URL(consent.headers.get('location') ?? '');
      const state = verifyOAuthState(box, back.searchParams.get('state') ?? '', started.nonce);
      return completeOAuth({
        app,
        code: back.searchParams.get('code') ?? '',
        state,
        installations: harness.bridge.installations,
        findExisting: (orgId) => harness.bridge.pipelineStore.findInstallationByAccount(SALESFORCE_PROVIDER, orgId),
      });
    }

    it("the console's grant leads to a link that moves the installation once the admin authorises the marked org", async () => {
      h = await startPipeline({ database });
      const org = await fake({ orgId: NEW_ORG });
      const installation = await install(h, { instanceUrl: org.url, loginUrl: org.url });
      const outbound = await h.bridge.installations.outboundSecret(installation.id);
      await h.bridge.installations.markOrgChanged(installation.id, NEW_ORG, SEEN_AT);
      // The console's Reconnect: a grant for the CRM's reconnect route, which redirects to the install route.
      const grant = sealReconnectGrant(box, installation.id);
      expect(openReconnectGrant(box, grant)).toBe(installation.id);
      expect(openReconnectGrant(box, grant, new Date(Date.now() + 8 * 24 * 3600_000))).toBeNull();
      const context: CrmRouteContext = {
        publicUrl: PUBLIC_URL,
        bridge: h.bridge,
        queue: h.opened.queue,
        box: box,
        log: { info: () => undefined, warn: () => undefined, error: () => undefined },
        wake: () => undefined,
      };
      const route = salesforceRoutes(NO_SALESFORCE_APP, DEFAULT_OUTBOUND_SETTINGS, context).find((r) => r.path === reconnectRoute(SALESFORCE_PROVIDER));
      if (route === undefined) throw new Error('no reconnect route');
      const request = { url: '/', params: {}, headers: {}, body: Buffer.alloc(0), address: '127.0.0.1' };
      expect((await route.handle({ ...request, query: { grant: `${grant}x` } })).status).toBe(400);
      const redirected = await route.handle({ ...request, query: { grant } });
      expect(redirected.status).toBe(302);
      const location = redirected.headers.Location ?? '';
      expect(location.startsWith(`${PUBLIC_URL}/oauth/salesforce/install?link=`)).toBe(true);

      const result = await authorise(h, org, location);
      expect(result).toMatchObject({ created: false, movedFrom: OLD_ORG });
      expect(await h.bridge.installations.require(installation.id)).toMatchObject({ externalAccountId: NEW_ORG, orgChange: null });
      const secrets = await h.bridge.installations.secrets(installation.id);
      expect(secrets.outboundSecret).toBe(outbound);
      expect(secrets.crm).toMatchObject({ kind: 'oauth', orgId: NEW_ORG, instanceUrl: org.url });
    });

    it('refuses to move the installation to an org the admin authorised that is not the marked one', async () => {
      h = await startPipeline({ database });
      const org = await fake({ orgId: OTHER_ORG });
      const installation = await install(h, { instanceUrl: org.url, loginUrl: org.url });
      await h.bridge.installations.markOrgChanged(installation.id, NEW_ORG, SEEN_AT);
      const link = await reconnectLinkFor({
        box: box,
        installations: h.bridge.installations,
        installation: await h.bridge.installations.require(installation.id),
        publicUrl: PUBLIC_URL,
      });
      const refused = authorise(h, org, link.url);
      await expect(refused).rejects.toThrow(SalesforceInstallError);
      await expect(refused).rejects.toThrow(`the credentials are for org ${OTHER_ORG}`);
      expect(await h.bridge.installations.require(installation.id)).toMatchObject({ externalAccountId: OLD_ORG, orgChange: { externalAccountId: NEW_ORG } });
    });
  });
});
