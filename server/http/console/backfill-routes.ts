// The console's backfill routes: ask for an estimate, see a run (its estimate, then its progress, polled
// as JSON), confirm, cancel. The work itself is done by the job queue's workers
// (bridge/backfill-runs.ts), so any instance shows any run and a run survives a restart.
import { BackfillRunError, type BackfillRun } from '../../../bridge/backfill-runs.ts';
import { budgetState } from '../../../bridge/budget.ts';
import type { Installation } from '../../../bridge/model.ts';
import { BackfillFormSchema, backfillPage, runPage, runStatus } from './backfill.tsx';
import type { ConsoleKit } from './kit.ts';
import type { InstallationResponse } from './guards.ts';
import { messagePage } from './components.tsx';
import { formErrors } from './form-errors.ts';
import { queryCount, stringFields } from './query.ts';
import { plural } from '../../plural.ts';

export function mountBackfillRoutes(kit: ConsoleKit): void {
  const { router, context, base, page, moduleOf } = kit;
  const onInstallation = kit.guards.installation;
  const runs = context.bridge.backfillRuns;
  const at = (installation: Installation) => `${base}/installations/${encodeURIComponent(installation.id)}/backfill`;
  const nounOf = (installation: Installation, run: BackfillRun) => moduleOf(installation)?.backfill?.nouns[run.object] ?? 'records';

  router.get('/console/installations/:id/backfill', ...onInstallation.view, async (req, res: InstallationResponse) => {
    const { session, installation } = res.locals;
    const spec = moduleOf(installation)?.backfill;
    page(res, 200, backfillPage(session.chrome, { installation, spec, runs: await runs.list(installation.id), values: {}, errors: {} }));
  });

  router.post('/console/installations/:id/backfill', ...onInstallation.post, async (req, res: InstallationResponse) => {
    const { session, installation } = res.locals;
    const spec = moduleOf(installation)?.backfill;
    const values = stringFields(req.body);
    const refuse = async (errors: Record<string, string>) =>
      page(res, 400, backfillPage(session.chrome, { installation, spec, runs: await runs.list(installation.id), values, errors }));
    if (spec === undefined) {
      await refuse({ form: "This server cannot read this CRM's records for a backfill." });
      return;
    }
    const parsed = BackfillFormSchema.safeParse(req.body);
    if (!parsed.success) {
      const errors = formErrors(parsed.error);
      await refuse(errors);
      return;
    }
    const { object, limit, restart } = parsed.data;
    if (!(object in spec.nouns)) {
      await refuse({ object: 'choose one of the objects listed' });
      return;
    }
    const asked = new Set(parsed.data.flags === undefined ? [] : [parsed.data.flags].flat());
    const known = Object.keys(spec.flags ?? {});
    if ([...asked].some((flag) => !known.includes(flag))) {
      await refuse({ form: 'An option this CRM does not have was sent; nothing was started.' });
      return;
    }
    let run: BackfillRun;
    try {
      run = await runs.estimate(installation, {
        object,
        limit,
        restart: restart === 'on',
        flags: Object.fromEntries(known.map((flag) => [flag, asked.has(flag)])),
      });
    } catch (error) {
      if (!(error instanceof BackfillRunError)) throw error;
      await refuse({ form: error.message });
      return;
    }
    context.log.info({ installation: installation.id, run: run.id, object, by: session.scope.kind }, 'console: backfill estimate');
    res.redirect(303, `${at(installation)}/${encodeURIComponent(run.id)}`);
  });

  /** The run in the address, of this installation; else a 404 page (and undefined). */
  const runOf = async (installation: Installation, id: string, res: Parameters<typeof page>[0], chrome: Parameters<typeof messagePage>[0]) => {
    const run = await runs.find(installation.id, id);
    if (run === undefined) page(res, 404, messagePage(chrome, 'Not found', ['There is no such backfill for this installation.'], 'bad'));
    return run;
  };

  router.get('/console/installations/:id/backfill/:run', ...onInstallation.view, async (req, res: InstallationResponse) => {
    const { session, installation } = res.locals;
    const run = await runOf(installation, req.params.run, res, session.chrome);
    if (run === undefined) return;
    const noun = nounOf(installation, run);
    const budget = await budgetState(context.bridge.pipelineStore, installation, kit.now());
    const removed = queryCount(req.query, 'removed');
    const notice = removed === null ? null : `Cancelled: ${plural(removed, 'queued enrichment')} removed.`;
    page(res, 200, runPage(session.chrome, installation, run, runStatus(run, await runs.jobs(run.id), noun), noun, notice, budget));
  });

  router.get('/console/installations/:id/backfill/:run/status', ...onInstallation.view, async (req, res: InstallationResponse) => {
    const { session, installation } = res.locals;
    const run = await runOf(installation, req.params.run, res, session.chrome);
    if (run === undefined) return;
    res.json(runStatus(run, await runs.jobs(run.id), nounOf(installation, run)));
  });

  router.post('/console/installations/:id/backfill/:run/confirm', ...onInstallation.post, async (req, res: InstallationResponse) => {
    const { session, installation } = res.locals;
    const run = await runOf(installation, req.params.run, res, session.chrome);
    if (run === undefined) return;
    const budget = await budgetState(context.bridge.pipelineStore, installation, kit.now());
    const overBudget = typeof req.body === 'object' && req.body !== null && (req.body as Record<string, unknown>).overBudget === 'on';
    try {
      await runs.confirm(installation, run.id, { left: budget?.left ?? null, overBudget });
    } catch (error) {
      if (!(error instanceof BackfillRunError)) throw error;
      page(res, 409, messagePage(session.chrome, 'Not started', [error.message], 'bad'));
      return;
    }
    context.log.info({ installation: installation.id, run: run.id, by: session.scope.kind }, 'console: backfill confirmed');
    res.redirect(303, `${at(installation)}/${encodeURIComponent(run.id)}`);
  });

  router.post('/console/installations/:id/backfill/:run/cancel', ...onInstallation.post, async (req, res: InstallationResponse) => {
    const { session, installation } = res.locals;
    const run = await runOf(installation, req.params.run, res, session.chrome);
    if (run === undefined) return;
    let removed: number;
    try {
      removed = await runs.cancel(installation.id, run.id);
    } catch (error) {
      if (!(error instanceof BackfillRunError)) throw error;
      page(res, 409, messagePage(session.chrome, 'Not cancelled', [error.message], 'bad'));
      return;
    }
    context.log.info({ installation: installation.id, run: run.id, removed, by: session.scope.kind }, 'console: backfill cancelled');
    res.redirect(303, `${at(installation)}/${encodeURIComponent(run.id)}?removed=${removed}`);
  });
}
