// The operator's console routes: accounts (create, edit), tokens (create, shown once; revoke), the
// queue's dead jobs (retry) and the data snapshots (rollback). A CRM admin's session gets the 404 of
// a page that does not exist on every one of them.
import { z } from 'zod';
import { type AccountSettings, AdminError, createAccount, issueToken, updateAccount } from '../../../core/accounts/admin.ts';
import { ENVIRONMENTS } from '../../../core/accounts/model.ts';
import { currentPeriod } from '../../../core/limits/quota-period.ts';
import { DuplicateAccountError } from '../../../core/storage/port.ts';
import type { ConsoleKit } from './kit.ts';
import type { SessionResponse } from './guards.ts';
import { AccountFormSchema, type AccountView, accountPage, accountsPage, installationsUsing, jobsPage, revokeTokenPage, snapshotsPage } from './operator.tsx';
import { messagePage } from './components.tsx';
import { formErrors } from './form-errors.ts';
import { queryCount, stringFields } from './query.ts';

export function mountOperatorRoutes(kit: ConsoleKit): void {
  const { router, context, base, now, page } = kit;
  const operator = kit.guards.operator;

  const accountView = async (name: string, created?: { id: string; secret: string }): Promise<AccountView | undefined> => {
    const account = await context.store.findAccountByName(name);
    if (account === undefined) return undefined;
    const period = currentPeriod(account.quotaPeriod, now());
    const installations = await context.bridge.pipelineStore.listInstallations();
    const tokens = await Promise.all(
      (await context.store.listTokens(account.id)).map(async (token) => ({
        token,
        used: token.environment === 'production' ? await context.store.quotaUsed(token.id, period.key) : null,
        usedBy: installationsUsing(installations, token.id),
      })),
    );
    return { account, tokens, ...(created === undefined ? {} : { created }) };
  };

  router.get('/console/accounts', ...operator.view, async (req, res: SessionResponse) => {
    const { session } = res.locals;
    page(res, 200, accountsPage(session.chrome, await context.store.listAccounts()));
  });

  /** The account form read: settings for core/accounts/admin.ts, or each field's message. */
  const readAccountForm = (body: unknown): { ok: true; name: string; settings: AccountSettings } | { ok: false; errors: Record<string, string> } => {
    const parsed = AccountFormSchema.safeParse(body);
    if (!parsed.success) {
      const errors = formErrors(parsed.error);
      return { ok: false, errors };
    }
    const form = parsed.data;
    return {
      ok: true,
      name: form.name ?? '',
      settings: {
        rateLimit: form.rateLimit,
        quotaLimit: form.quotaLimit,
        quotaPeriod: form.quotaPeriod,
        careerIntelligence: form.careerIntelligence === 'on',
        politicalData: form.politicalData === 'on',
        householdFields: form.householdFields === '' ? 'all' : form.householdFields,
        careerFields: form.careerFields === '' ? 'all' : form.careerFields,
      },
    };
  };

  router.post('/console/accounts', ...operator.post, async (req, res: SessionResponse) => {
    const { session } = res.locals;
    const read = readAccountForm(req.body);
    const values = stringFields(req.body);
    let errors: Record<string, string> | null = read.ok ? null : read.errors;
    if (read.ok) {
      try {
        await createAccount(context.store, read.name, read.settings);
        context.log.info({ account: read.name }, 'console: account created');
        res.redirect(303, `${base}/accounts/${encodeURIComponent(read.name)}`);
        return;
      } catch (error) {
        if (!(error instanceof AdminError) && !(error instanceof DuplicateAccountError)) throw error;
        errors = refusalOnForm(error);
      }
    }
    page(res, 400, accountsPage(session.chrome, await context.store.listAccounts(), { values, errors: errors ?? {} }));
  });

  router.post('/console/accounts/:name', ...operator.post, async (req, res: SessionResponse) => {
    const { session } = res.locals;
    const name = req.params.name;
    if ((await context.store.findAccountByName(name)) === undefined) {
      page(res, 404, messagePage(session.chrome, 'Not found', ['There is no such account.'], 'bad'));
      return;
    }
    const read = readAccountForm(req.body);
    let errors: Record<string, string> | null = read.ok ? null : read.errors;
    if (read.ok) {
      try {
        await updateAccount(context.store, name, read.settings);
        context.log.info({ account: name }, 'console: account changed');
        res.redirect(303, `${base}/accounts/${encodeURIComponent(name)}?saved=1`);
        return;
      } catch (error) {
        if (!(error instanceof AdminError)) throw error;
        errors = refusalOnForm(error);
      }
    }
    const view = await accountView(name);
    if (view === undefined) return;
    page(res, 400, accountPage(session.chrome, { ...view, editing: { values: { ...stringFields(req.body), name }, errors: errors ?? {} } }));
  });

  router.get('/console/accounts/:name', ...operator.view, async (req, res: SessionResponse) => {
    const { session } = res.locals;
    const view = await accountView(req.params.name);
    if (view === undefined) page(res, 404, messagePage(session.chrome, 'Not found', ['There is no such account.'], 'bad'));
    else page(res, 200, accountPage(session.chrome, { ...view, saved: req.query.saved === '1' }));
  });

  router.post('/console/accounts/:name/tokens', ...operator.post, async (req, res: SessionResponse) => {
    const { session } = res.locals;
    const environment = z.object({ environment: z.enum(ENVIRONMENTS) }).safeParse(req.body);
    const account = await context.store.findAccountByName(req.params.name);
    if (account === undefined || !environment.success) {
      page(
        res,
        account === undefined ? 404 : 400,
        messagePage(session.chrome, 'Refused', [account === undefined ? 'There is no such account.' : 'Choose sandbox or production.'], 'bad'),
      );
      return;
    }
    const issued = await issueToken(context.store, account.name, environment.data.environment);
    context.log.info({ account: account.name, token: issued.record.id, environment: environment.data.environment }, 'console: token created');
    // Shown on this answer only (no-store): a reload or a later visit shows the id, never the token.
    const view = await accountView(account.name, { id: issued.record.id, secret: issued.token });
    if (view !== undefined) page(res, 201, accountPage(session.chrome, view));
  });

  router.post('/console/accounts/:name/tokens/:token/revoke', ...operator.post, async (req, res: SessionResponse) => {
    const { session } = res.locals;
    const account = await context.store.findAccountByName(req.params.name);
    const token = account === undefined ? undefined : (await context.store.listTokens(account.id)).find((t) => t.id === req.params.token);
    if (account === undefined || token === undefined) {
      page(res, 404, messagePage(session.chrome, 'Not found', ['There is no such token for this account.'], 'bad'));
      return;
    }
    // A token an installation enriches with is revoked only once the operator has seen which one it cuts off.
    const usedBy = token.revokedAt === null ? installationsUsing(await context.bridge.pipelineStore.listInstallations(), token.id) : [];
    if (usedBy.length > 0 && stringFields(req.body).confirm !== 'yes') {
      page(res, 200, revokeTokenPage(session.chrome, account, token, usedBy));
      return;
    }
    await context.store.revokeToken({ id: token.id });
    context.log.info({ account: account.name, token: token.id }, 'console: token revoked');
    res.redirect(303, `${base}/accounts/${encodeURIComponent(account.name)}`);
  });

  router.get('/console/jobs', ...operator.view, async (req, res: SessionResponse) => {
    const { session } = res.locals;
    const retried = queryCount(req.query, 'retried');
    const [counts, dead] = await Promise.all([context.queue.countByState(), context.queue.list({ state: 'dead', limit: 100 })]);
    page(res, 200, jobsPage(session.chrome, counts, dead, retried));
  });

  router.post('/console/jobs/retry-all', ...operator.post, async (_req, res) => {
    const retried = await context.queue.retryDead('all');
    context.log.info({ retried }, 'console: dead jobs retried');
    res.redirect(303, `${base}/jobs?retried=${retried}`);
  });

  router.post('/console/jobs/:id/retry', ...operator.post, async (req, res) => {
    const retried = await context.queue.retryDead([req.params.id]);
    context.log.info({ job: req.params.id, retried }, 'console: dead job retried');
    res.redirect(303, `${base}/jobs?retried=${retried}`);
  });

  router.get('/console/snapshots', ...operator.view, async (req, res: SessionResponse) => {
    const { session } = res.locals;
    const notice =
      req.query.rolledBack === '1'
        ? 'Rolled back: the snapshot marked active answers from now on.'
        : req.query.rolledBack === '0'
          ? 'There is no earlier snapshot to roll back to.'
          : null;
    page(res, 200, snapshotsPage(session.chrome, await context.store.listSnapshots(), notice));
  });

  router.post('/console/snapshots/rollback', ...operator.post, async (_req, res) => {
    const now = await context.store.rollbackSnapshot();
    context.log.info({ snapshot: now?.id ?? null }, 'console: snapshot rollback');
    res.redirect(303, `${base}/snapshots?rolledBack=${now === undefined ? '0' : '1'}`);
  });
}

/** Where core's refusal shows on the account form: beside the setting it names, else above the form. */
function refusalOnForm(error: AdminError | DuplicateAccountError): Record<string, string> {
  if (error instanceof DuplicateAccountError) return { name: error.message };
  return { [error.field ?? 'form']: error.message };
}
