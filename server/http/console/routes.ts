// The admin console under /console: sign-in by a one-time link or with the CRM
// (signin-routes.ts), the operator's list of installations, and an installation's overview. Every page
// is server-rendered HTML under a strict Content-Security-Policy; a CRM admin's session sees its own
// installation and nothing else (another installation's address answers 404, as one that does not
// exist). The operator's pages are in operator-routes.ts.
import express from 'express';
import type { ConsoleScope } from '../../../bridge/console-sessions.ts';
import { type Installation, InstallationSettingsSchema, type LogEntry } from '../../../bridge/model.ts';
import { EnrichError, errorBody } from '../../../core/contract/errors.ts';
import { currentPeriod } from '../../../core/limits/quota-period.ts';
import { usageForecast } from '../../../bridge/forecast.ts';
import { budgetState } from '../../../bridge/budget.ts';
import { whatIsKept } from '../../../bridge/retention.ts';
import { DELIVERY_MEMORY_MS, recoveredEventsLedger } from '../../../bridge/deliveries.ts';
import { limitHeaders } from '../app.ts';
import { CONSOLE_ASSETS, HASHED_ASSET_CACHE, PLAIN_ASSET_CACHE } from './assets.ts';
import type { ConsoleContext } from './kit.ts';
import { consoleGuards, type InstallationResponse, type SessionResponse } from './guards.ts';
import { ConsoleLinkError, redeemConsoleLink } from './link.ts';
import { LogFilterSchema, logEntryPage, logPage, logSearch } from './log.tsx';
import { mountBackfillRoutes } from './backfill-routes.ts';
import { mountOperatorRoutes } from './operator-routes.ts';
import { mountSuppressionRoutes } from './suppression-routes.ts';
import { messagePage } from './components.tsx';
import { CONSOLE_RECORD_ACTIONS, type RecordPageView, recordPage } from './record.tsx';
import type { ActionResult } from '../../../bridge/record-actions.ts';
import type { RecordView } from '../../../bridge/record-view.ts';
import type { Signed } from './kit.ts';
import { type Chrome, accountName } from './format.ts';
import { type OverviewData, overviewPage, reconnectLinkPage } from './overview.tsx';
import { reconnectRoute, sealReconnectGrant } from '../../../bridge/installations.ts';
import { operatorHome } from './operator.tsx';
import { installationActivity } from './installation-activity.ts';
import { mountSignInRoutes, signInPage, signInsOf } from './signin-routes.ts';
import { consoleForm, consoleFaultHandler } from './request-faults.ts';
import { PlaygroundFormSchema, personaRequest, playgroundPage } from './playground.tsx';
import { CONSOLE_HEADERS, clearedSessionCookie, sessionCookie } from './session.ts';
import { disconnectPage, keptLogSentence, readSettingsForm, settingsPage } from './settings.tsx';
import { formErrors } from './form-errors.ts';
import { queryText, stringFields } from './query.ts';

export type { ConsoleContext } from './kit.ts';

const OVERVIEW_DAYS = 30;
const LATEST_FAILURES = 10;
/** How far back the overview counts events recovered from the CRM's journal (the ledger keeps 4 days). */
const RECOVERED_WINDOW_MS = DELIVERY_MEMORY_MS;

export function consoleRouter(options: ConsoleContext): express.Router {
  const router = express.Router();
  const publicUrl = options.publicUrl;
  if (publicUrl === null) {
    router.use('/console', (_req, res) => {
      res.set(CONSOLE_HEADERS);
      res
        .status(503)
        .type('html')
        .send(
          messagePage(
            { base: '/console', session: null },
            'Console not configured',
            ['The console needs PUBLIC_URL: the address its sign-in links and cookies are made for.'],
            'bad',
          ),
        );
    });
    return router;
  }
  const context = { ...options, publicUrl };
  const now = context.now ?? (() => new Date());
  const base = `${new URL(publicUrl).pathname.replace(/\/+$/, '')}/console`;
  const signedOutChrome: Chrome = { base, session: null };
  const sessions = context.bridge.consoleSessions;
  // The CRMs an admin can sign in with here (their OAuth app configured).
  const signIns = signInsOf(context.modules, publicUrl);

  router.use('/console', (_req, res, next) => {
    res.set(CONSOLE_HEADERS);
    next();
  });

  for (const asset of Object.values(CONSOLE_ASSETS)) {
    for (const [name, cache] of [
      [asset.hashed, HASHED_ASSET_CACHE],
      [asset.name, PLAIN_ASSET_CACHE],
    ] as const) {
      router.get(`/console/assets/${name}`, (_req, res) => {
        res.set({ 'Content-Type': asset.type, 'Cache-Control': cache, 'X-Content-Type-Options': 'nosniff' }).send(asset.body);
      });
    }
  }

  const page = (res: express.Response, status: number, html: string) => res.status(status).type('html').send(html);

  const form = consoleForm();
  const guards = consoleGuards({ context, base, form, page, signInPage: () => signInPage(signedOutChrome, signIns) });
  const { installation: onInstallation, signed, operator } = guards;

  router.get('/console/link', async (req, res) => {
    const token = queryText(req.query, 't') ?? '';
    let scope: ConsoleScope;
    try {
      scope = await redeemConsoleLink(context.box, token, now(), (key, owner, ms) => context.bridge.pipelineStore.acquireLease(key, owner, ms));
    } catch (error) {
      if (!(error instanceof ConsoleLinkError)) throw error;
      page(res, 400, messagePage(signedOutChrome, 'Sign-in link refused', [error.message], 'bad'));
      return;
    }
    if (scope.kind === 'installation' && (await context.bridge.pipelineStore.findInstallation(scope.installationId)) === undefined) {
      page(res, 400, messagePage(signedOutChrome, 'Sign-in link refused', ['The installation this link was made for is no longer connected.'], 'bad'));
      return;
    }
    const session = await sessions.create(scope);
    context.log.info({ scope: scope.kind, installation: scope.kind === 'installation' ? scope.installationId : null }, 'console sign-in');
    res.set('Set-Cookie', sessionCookie(context.box, context.publicUrl, session.id));
    res.redirect(303, scope.kind === 'operator' ? base : `${base}/installations/${encodeURIComponent(scope.installationId)}`);
  });

  mountSignInRoutes({ router, context, base, now, page, signIns });

  router.get('/console', async (req, res) => {
    const session = await guards.sessionOf(req);
    if (session === undefined) {
      page(res, 200, signInPage(signedOutChrome, signIns));
      return;
    }
    if (session.scope.kind === 'installation') {
      res.redirect(303, `${base}/installations/${encodeURIComponent(session.scope.installationId)}`);
      return;
    }
    const activity = await installationActivity({ pipelineStore: context.bridge.pipelineStore, store: context.store, queue: context.queue }, now());
    page(res, 200, operatorHome(session.chrome, activity));
  });

  router.get('/console/installations/:id', ...onInstallation.view, async (_req, res: InstallationResponse) => {
    const { session, installation } = res.locals;
    page(res, 200, overviewPage(session.chrome, { ...(await overview(context, installation, now())), operator: session.scope.kind === 'operator' }));
  });

  // The operator's Reconnect, for an installation whose messages now come from another org of its CRM (a
  // refreshed Salesforce sandbox): a grant for the CRM's own reconnect route, which sends the CRM's admin
  // through its OAuth; the installation moves once they authorise the new org.
  router.post('/console/installations/:id/reconnect', ...operator.post, async (req, res: SessionResponse) => {
    const { session } = res.locals;
    const installation = await context.bridge.pipelineStore.findInstallation(String(req.params.id));
    if (installation === undefined) {
      page(res, 404, messagePage(session.chrome, 'Not found', ['There is no installation at this address.'], 'bad'));
      return;
    }
    if (installation.orgChange === undefined || installation.orgChange === null) {
      page(res, 409, messagePage(session.chrome, 'Nothing to reconnect', ['No message has come from another org for this installation.'], 'bad'));
      return;
    }
    const url = new URL(`${publicUrl.replace(/\/+$/, '')}${reconnectRoute(installation.provider)}`);
    url.searchParams.set('grant', sealReconnectGrant(context.box, installation.id, now()));
    context.log.info({ installation: installation.id, org: installation.orgChange.externalAccountId }, 'console: reconnect link made');
    page(res, 200, reconnectLinkPage(session.chrome, installation, url.toString(), installation.orgChange.externalAccountId));
  });

  const moduleOf = (installation: Installation) => context.modules.find((module) => module.provider === installation.provider);

  router.get('/console/installations/:id/settings', ...onInstallation.view, async (req, res: InstallationResponse) => {
    const { session, installation } = res.locals;
    page(
      res,
      200,
      settingsPage(session.chrome, { installation, module: moduleOf(installation), values: installation.settings, errors: {}, saved: req.query.saved === '1' }),
    );
  });

  router.post('/console/installations/:id/settings', ...onInstallation.post, async (req, res: InstallationResponse) => {
    const { session, installation } = res.locals;
    const module = moduleOf(installation);
    const read = readSettingsForm(req.body, module, installation.settings);
    if (!read.ok) {
      // Shown again as posted where it parses, as saved where it does not.
      const values = InstallationSettingsSchema.safeParse({ ...installation.settings, ...looseValues(req.body) });
      page(
        res,
        400,
        settingsPage(session.chrome, { installation, module, values: values.success ? values.data : installation.settings, errors: read.errors, saved: false }),
      );
      return;
    }
    await context.bridge.installations.updateSettings(installation.id, read.settings);
    context.log.info({ installation: installation.id, by: session.scope.kind }, 'console: settings changed');
    res.redirect(303, `${base}/installations/${encodeURIComponent(installation.id)}/settings?saved=1`);
  });

  for (const action of ['pause', 'resume'] as const) {
    router.post(`/console/installations/:id/${action}`, ...onInstallation.post, async (_req, res: InstallationResponse) => {
      const { session, installation } = res.locals;
      await context.bridge.installations[action](installation.id);
      context.log.info({ installation: installation.id, by: session.scope.kind }, `console: ${action}`);
      res.redirect(303, `${base}/installations/${encodeURIComponent(installation.id)}/settings`);
    });
  }

  /** How a log entry's record opens in its CRM, for this installation (its credentials unsealed once). */
  const recordLinks = async (installation: Installation) => {
    const module = moduleOf(installation);
    if (module?.recordUrl === undefined) return () => null;
    let crm: Readonly<Record<string, unknown>>;
    try {
      ({ crm } = await context.bridge.installations.secrets(installation.id));
    } catch (error) {
      // Credentials this server cannot open (another key): the log still shows, without links.
      context.log.warn({ err: error, installation: installation.id }, 'console: CRM credentials unreadable; no record links');
      return () => null;
    }
    const recordUrl = module.recordUrl;
    return (entry: Pick<LogEntry, 'object' | 'recordId'>) => recordUrl(installation, crm, entry.object, entry.recordId);
  };

  router.get('/console/installations/:id/log', ...onInstallation.view, async (req, res: InstallationResponse) => {
    const { session, installation } = res.locals;
    const values = stringFields(req.query);
    const parsed = LogFilterSchema.safeParse(values);
    const recordUrl = await recordLinks(installation);
    if (!parsed.success) {
      const errors = formErrors(parsed.error);
      page(res, 400, logPage(session.chrome, { installation, values, errors, entries: [], recordUrl }));
      return;
    }
    const entries = await context.bridge.pipelineStore.searchLog(logSearch(installation.id, parsed.data));
    page(res, 200, logPage(session.chrome, { installation, values, errors: {}, entries, recordUrl }));
  });

  router.get('/console/installations/:id/log/:entry', ...onInstallation.view, async (req, res: InstallationResponse) => {
    const { session, installation } = res.locals;
    const entry = await context.bridge.pipelineStore.findLogEntry(installation.id, req.params.entry);
    if (entry === undefined) {
      page(res, 404, messagePage(session.chrome, 'Not found', ['There is no such log entry for this installation.'], 'bad'));
      return;
    }
    const module = moduleOf(installation);
    page(
      res,
      200,
      logEntryPage(session.chrome, installation, entry, (await recordLinks(installation))(entry), (key) => module?.propertyFor?.(key) ?? null),
    );
  });

  /** A record's view with its actions, through the same record desk the CRM's card and component use. */
  const recordAt = (req: express.Request<{ object: string; recordId: string }>, installation: Installation) => ({
    installationId: installation.id,
    object: req.params.object,
    recordId: req.params.recordId,
  });

  router.get('/console/installations/:id/records/:object/:recordId', ...onInstallation.view, async (req, res: InstallationResponse) => {
    const { session, installation } = res.locals;
    const ref = recordAt(req, installation);
    const found = await context.bridge.records.view(ref);
    if (!found.ok) {
      page(res, 404, messagePage(session.chrome, 'Not found', [found.message], 'bad'));
      return;
    }
    page(res, 200, recordPage(session.chrome, await recordPageView(installation, found.view, null)));
  });

  router.post('/console/installations/:id/records/:object/:recordId/:action', ...onInstallation.post, async (req, res: InstallationResponse) => {
    const { session, installation } = res.locals;
    const action = CONSOLE_RECORD_ACTIONS.find(([, path]) => path === req.params.action)?.[0];
    if (action === undefined) {
      page(res, 404, messagePage(session.chrome, 'Not found', ['There is no such record action.'], 'bad'));
      return;
    }
    const ref = recordAt(req, installation);
    const actor = consoleActor(session);
    const desk = context.bridge.records;
    const result = await desk.take(action, ref, actor);
    context.log.info({ installation: installation.id, by: session.scope.kind, action, ok: result.ok }, 'console: record action');
    if (result.ok && action === 'enrich_now') context.wake?.();
    const found = await desk.view(ref);
    if (!found.ok) {
      page(res, 404, messagePage(session.chrome, 'Not found', [found.message], 'bad'));
      return;
    }
    page(res, result.ok ? 200 : 409, recordPage(session.chrome, await recordPageView(installation, found.view, result)));
  });

  /** What the record page needs beside the view: field names and the CRM's link. */
  const recordPageView = async (installation: Installation, view: RecordView, result: ActionResult | null): Promise<RecordPageView> => {
    const module = moduleOf(installation);
    const links = await recordLinks(installation);
    const crm = links(view);
    return { installation, view, result, propertyFor: (key) => module?.propertyFor?.(key) ?? null, crm };
  };

  router.get('/console/installations/:id/playground', ...onInstallation.view, async (_req, res: InstallationResponse) => {
    const { session, installation } = res.locals;
    page(res, 200, playgroundPage(session.chrome, installation, {}, null, null));
  });

  router.post('/console/installations/:id/playground', ...onInstallation.post, async (req, res: InstallationResponse) => {
    const { session, installation } = res.locals;
    const parsed = PlaygroundFormSchema.safeParse(req.body);
    if (!parsed.success) {
      page(res, 400, playgroundPage(session.chrome, installation, {}, null, 'The form was not understood; nothing was sent.'));
      return;
    }
    if (installation.target.kind !== 'local') {
      page(
        res,
        200,
        playgroundPage(
          session.chrome,
          installation,
          parsed.data,
          null,
          "This installation enriches against another endpoint: try requests in that endpoint's own sandbox.",
        ),
      );
      return;
    }
    const text = parsed.data.request.trim() !== '' ? parsed.data.request : JSON.stringify(personaRequest(Number(parsed.data.persona)) ?? {}, null, 2);
    const { enrichmentToken } = await context.bridge.installations.secrets(installation.id);
    const simulate = parsed.data.simulate === '' ? undefined : parsed.data.simulate;
    const result = await context.service.enrichRecord({
      environment: 'sandbox',
      token: enrichmentToken,
      // A production installation's token answers here too: the sandbox of its account.
      sandboxForAccount: true,
      simulateError: simulate,
      readBody: () => {
        try {
          return JSON.parse(text);
        } catch {
          throw new EnrichError('invalid_request', 'Request body is not valid JSON.');
        }
      },
    });
    const exchange = {
      requestHeaders: {
        'Content-Type': 'application/json',
        // The token itself is never shown: its public id stands in.
        'X-WF-Auth-Token': `(this installation's token, ${installation.target.tokenId})`,
        ...(simulate === undefined ? {} : { 'X-Service-Sandbox-Error': simulate }),
      },
      requestBody: text,
      status: result.ok ? 200 : result.error.status,
      responseHeaders: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', ...limitHeaders(result) },
      responseBody: result.ok ? result.response : errorBody('sandbox', result.error),
    };
    page(res, 200, playgroundPage(session.chrome, installation, parsed.data, exchange, null));
  });

  router.get('/console/installations/:id/disconnect', ...onInstallation.view, async (req, res: InstallationResponse) => {
    const { session, installation } = res.locals;
    page(res, 200, disconnectPage(session.chrome, installation));
  });

  router.post('/console/installations/:id/disconnect', ...onInstallation.post, async (req, res: InstallationResponse) => {
    const { session, installation } = res.locals;
    await context.bridge.installations.remove(installation.id);
    await sessions.revokeInstallation(installation.id);
    context.log.info({ installation: installation.id, by: session.scope.kind }, 'console: disconnected');
    const chrome = session.scope.kind === 'operator' ? session.chrome : signedOutChrome;
    if (session.scope.kind !== 'operator') res.set('Set-Cookie', clearedSessionCookie(publicUrl));
    page(
      res,
      200,
      messagePage(chrome, 'Disconnected', [
        `${accountName(installation)} is disconnected. Nothing written to the CRM was removed.`,
        keptLogSentence(installation.id),
      ]),
    );
  });

  const kit = { router, context, base, now, form, page, guards, moduleOf };
  mountOperatorRoutes(kit);
  mountSuppressionRoutes(kit, context.suppressions);
  mountBackfillRoutes(kit);

  router.post('/console/signout', ...signed.post, async (_req, res: SessionResponse) => {
    const { session } = res.locals;
    await sessions.revoke(session.id);
    res.set('Set-Cookie', clearedSessionCookie(publicUrl));
    page(res, 200, messagePage(signedOutChrome, 'Signed out', ['You are signed out. Your session has ended on the server too.']));
  });

  // Last: what a caller got wrong before a handler ran (a form not read, an address not decoded).
  router.use('/console', consoleFaultHandler(signedOutChrome));

  return router;
}

/** The posted values that parse as settings, to show a refused form as it was sent. */
function looseValues(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null) return {};
  const form = body as Record<string, unknown>;
  const out: Record<string, unknown> = { enrichOnCreate: form.enrichOnCreate === 'on', reuseAnswers: form.reuseAnswers === 'on' };
  if (typeof form.overwriteMode === 'string') out.overwriteMode = form.overwriteMode;
  return out;
}

async function overview(context: ConsoleContext & { readonly publicUrl: string }, installation: Installation, now: Date): Promise<OverviewData> {
  const start = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - (OVERVIEW_DAYS - 1)));
  const days = Array.from({ length: OVERVIEW_DAYS }, (_, i) => new Date(start.getTime() + i * 86_400_000).toISOString().slice(0, 10)).reverse();
  const [outcomes, failures, recovered] = await Promise.all([
    context.bridge.pipelineStore.dailyOutcomes(installation.id, start.toISOString()),
    context.bridge.pipelineStore.searchLog({ installationId: installation.id, outcomePrefix: 'failed:', limit: LATEST_FAILURES }),
    context.bridge.deliveries.count(recoveredEventsLedger(installation.id), new Date(now.getTime() - RECOVERED_WINDOW_MS)),
  ]);
  let target: string;
  let quota: OverviewData['quota'] = null;
  if (installation.target.kind === 'remote') {
    target = `endpoint ${new URL(installation.target.url).host}`;
  } else {
    const account = await context.store.findAccountById(installation.target.accountId);
    target = `account ${account?.name ?? installation.target.accountId}`;
    if (account !== undefined) {
      const period = currentPeriod(account.quotaPeriod, now);
      const used = await context.store.quotaUsed(installation.target.tokenId, period.key);
      quota = { used, limit: account.quotaLimit, period: account.quotaPeriod, resetsAt: period.resetsAt?.toISOString() ?? null };
    }
  }
  const forecast = await usageForecast({ store: context.store, pipelineStore: context.bridge.pipelineStore }, installation, now);
  const budget = await budgetState(context.bridge.pipelineStore, installation, now);
  const kept = whatIsKept(installation, context.bridge.logValuesRetentionDays);
  return { installation, target, quota, days, outcomes, failures, forecast, budget, recovered, kept };
}

/**
 * Who took a record action in the console, for the log: the operator, or the installation's admin,
 * with the e-mail their CRM signed them in with when it gave one.
 */
function consoleActor(session: Signed): { userId: string; email: string | null } {
  const email = session.person !== null && session.person.includes('@') ? session.person : null;
  return { userId: session.scope.kind === 'operator' ? 'console:operator' : 'console:admin', email };
}
