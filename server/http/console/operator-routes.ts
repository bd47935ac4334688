// The operator's console routes: accounts (create, edit), tokens (create, shown once; revoke), the
// queue's dead jobs (retry) and the data snapshots (rollback). A CRM admin's session gets the 404 of
// a page that does not exist on every one of them.
import express from 'express';
import { z } from 'zod';
import { type AccountSettings, AdminError, createAccount, issueToken, updateAccount } from '../../../core/accounts/admin.ts';
import { ENVIRONMENTS } from '../../../core/accounts/model.ts';
import { currentPeriod } from '../../../core/limits/quota-period.ts';
import { DuplicateAccountError } from '../../../core/storage/port.ts';
import type { ConsoleKit, Signed } from './kit.ts';
import { AccountFormSchema, type AccountView, accountPage, accountsPage, jobsPage, snapshotsPage } from './operator.ts';
import { messagePage } from './components.tsx';
import { formErrors } from './form-errors.ts';
import { queryCount, stringFields } from './query.ts';

export function mountOperatorRoutes(kit: ConsoleKit): void {
  const { router, context, base, now, form, page, signedIn, posted } = kit;

  /** The operator's pages: anyone else gets the 404 a page that does not exist gets. */
  const operatorOnly = (session: Signed, res: express.Response): boolean => {
    if (session.scope.kind === 'operator') return true;
    page(res, 404, messagePage(session.chrome, 'Not found', ['There is no such page here.'], 'bad'));
    return false;
  };

  const accountView = async (name: string, created?: { id: string; secret: string }): Promise<AccountView | undefined> => {
    const account = await context.store.findAccountByName(name);
    if (account === undefined) return undefined;
    const period = currentPeriod(account.quotaPeriod, now());
    const tokens = await Promise.all(
      (await context.store.listTokens(account.id)).map(async (token) => ({
        token,
        used: token.environment === 'production' ? await context.store.quotaUsed(token.id, period.key) : null,
      })),
    );
    return { account, tokens, ...(created === undefined ? {} : { created }) };
  };

  router.get('/console/accounts', async (req, res) => {
    const session = await signedIn(req, res);
    if (session === undefined || !operatorOnly(session, res)) return;
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
        householdFields: form.householdFields === '' ? 'all' : form.householdFields,
        careerFields: form.careerFields === '' ? 'all' : form.careerFields,
      },
    };
  };

  /** Where core's refusal belongs on the form. */
  const refusalField = (error: Error): Record<string, string> => {
    const message = error.message;
    if (error instanceof DuplicateAccountError || /account name/.test(message)) return { name: message };
    if (/household/.test(message)) return { householdFields: message };
    if (/career/.test(message)) return { careerFields: message };
    if (/quota period/.test(message)) return { quotaPeriod: message };
    if (/quota/.test(message)) return { quotaLimit: message };
    if (/rate limit/.test(message)) return { rateLimit: message };
    return { form: message };
  };

  router.post('/console/accounts', form, async (req, res) => {
    const session = await posted(req, res);
    if (session === undefined || !operatorOnly(session, res)) return;
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
        errors = refusalField(error);
      }
    }
    page(res, 400, accountsPage(session.chrome, await context.store.listAccounts(), { values, errors: errors ?? {} }));
  });

  router.post('/console/accounts/:name', form, async (req, res) => {
    const session = await posted(req, res);
    if (session === undefined || !operatorOnly(session, res)) return;
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
        errors = refusalField(error);
      }
    }
    const view = await accountView(name);
    if (view === undefined) return;
    page(res, 400, accountPage(session.chrome, { ...view, editing: { values: { ...stringFields(req.body), name }, errors: errors ?? {} } }));
  });

  router.get('/console/accounts/:name', async (req, res) => {
    const session = await signedIn(req, res);
    if (session === undefined || !operatorOnly(session, res)) return;
    const view = await accountView(req.params.name);
    if (view === undefined) page(res, 404, messagePage(session.chrome, 'Not found', ['There is no such account.'], 'bad'));
    else page(res, 200, accountPage(session.chrome, { ...view, saved: req.query.saved === '1' }));
  });

  router.post('/console/accounts/:name/tokens', form, async (req, res) => {
    const session = await posted(req, res);
    if (session === undefined || !operatorOnly(session, res)) return;
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

  router.post('/console/accounts/:name/tokens/:token/revoke', form, async (req, res) => {
    const session = await posted(req, res);
    if (session === undefined || !operatorOnly(session, res)) return;
    const account = await context.store.findAccountByName(req.params.name);
    const token = account === undefined ? undefined : (await context.store.listTokens(account.id)).find((t) => t.id === req.params.token);
    if (account === undefined || token === undefined) {
      page(res, 404, messagePage(session.chrome, 'Not found', ['There is no such token for this account.'], 'bad'));
      return;
    }
    await context.store.revokeToken({ id: token.id });
    context.log.info({ account: account.name, token: token.id }, 'console: token revoked');
    res.redirect(303, `${base}/accounts/${encodeURIComponent(account.name)}`);
  });

  router.get('/console/jobs', async (req, res) => {
    const session = await signedIn(req, res);
    if (session === undefined || !operatorOnly(session, res)) return;
    const retried = queryCount(req.query, 'retried');
    const [counts, dead] = await Promise.all([context.queue.countByState(), context.queue.list({ state: 'dead', limit: 100 })]);
    page(res, 200, jobsPage(session.chrome, counts, dead, retried));
  });

  router.post('/console/jobs/retry-all', form, async (req, res) => {
    const session = await posted(req, res);
    if (session === undefined || !operatorOnly(session, res)) return;
    const retried = await context.queue.retryDead('all');
    context.log.info({ retried }, 'console: dead jobs retried');
    res.redirect(303, `${base}/jobs?retried=${retried}`);
  });

  router.post('/console/jobs/:id/retry', form, async (req, res) => {
    const session = await posted(req, res);
    if (session === undefined || !operatorOnly(session, res)) return;
    const retried = await context.queue.retryDead([req.params.id]);
    context.log.info({ job: req.params.id, retried }, 'console: dead job retried');
    res.redirect(303, `${base}/jobs?retried=${retried}`);
  });

  router.get('/console/snapshots', async (req, res) => {
    const session = await signedIn(req, res);
    if (session === undefined || !operatorOnly(session, res)) return;
    const notice =
      req.query.rolledBack === '1'
        ? 'Rolled back: the snapshot marked active answers from now on.'
        : req.query.rolledBack === '0'
          ? 'There is no earlier snapshot to roll back to.'
          : null;
    page(res, 200, snapshotsPage(session.chrome, await context.store.listSnapshots(), notice));
  });

  router.post('/console/snapshots/rollback', form, async (req, res) => {
    const session = await posted(req, res);
    if (session === undefined || !operatorOnly(session, res)) return;
    const now = await context.store.rollbackSnapshot();
    context.log.info({ snapshot: now?.id ?? null }, 'console: snapshot rollback');
    res.redirect(303, `${base}/snapshots?rolledBack=${now === undefined ? '0' : '1'}`);
  });
}
