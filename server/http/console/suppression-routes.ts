// The operator's suppression routes: the page, and one form posted to add, check or remove a person.
// Changes reach this process's service at once and every other instance within its poll; the page
// that answers says what was done in counts, and the audit trail records who did it.
import { keyedSuppressionList, type SuppressionList } from '../../../core/suppression/list.ts';
import { type Suppressor, SuppressionInputError, check, identifiersFromFields, suppress, unsuppress } from '../../../core/suppression/operations.ts';
import type { SessionResponse } from './guards.ts';
import type { ConsoleKit } from './kit.ts';
import { formErrors } from './form-errors.ts';
import { stringFields } from './query.ts';
import { SuppressionFormSchema, consoleActor, suppressionPage } from './suppression.tsx';
import { plural } from '../../plural.ts';

export function mountSuppressionRoutes(kit: ConsoleKit, suppressions?: SuppressionList): void {
  const { router, context, page } = kit;
  const operator = kit.guards.operator;
  // The service's own copy when the server hands it over (a change is in force here at once); else one of its own.
  const list = suppressions ?? keyedSuppressionList(context.store.suppressions, context.box);
  const suppressor = (): Suppressor => {
    const matcher = context.service.productionMatcher;
    return {
      store: context.store.suppressions,
      list,
      findSubjects: matcher.subjectsOf === undefined ? null : (request) => matcher.subjectsOf?.(request) ?? Promise.resolve([]),
    };
  };
  const show = async (res: SessionResponse, status: number, notice: { text: string; tone: 'info' | 'bad' } | null, errors: Record<string, string> = {}) => {
    const { session } = res.locals;
    const [counts, audit] = await Promise.all([context.store.suppressions.counts(), context.store.suppressions.audit(50)]);
    page(res, status, suppressionPage(session.chrome, { counts, audit, notice, errors }));
  };

  router.get('/console/suppression', ...operator.view, async (_req, res: SessionResponse) => {
    await show(res, 200, null);
  });

  router.post('/console/suppression', ...operator.post, async (req, res: SessionResponse) => {
    const fields = stringFields(req.body);
    const parsed = SuppressionFormSchema.safeParse(fields);
    if (!parsed.success) {
      await show(res, 400, null, formErrors(parsed.error));
      return;
    }
    const identifiers = identifiersFromFields(parsed.data);
    const household = parsed.data.household === 'on';
    const actor = consoleActor(res.locals.session.person);
    try {
      if (fields.action === 'check') {
        const outcome = await check(suppressor(), identifiers);
        const text = outcome.byIdentifier
          ? 'Suppressed: one of these identifiers is on the list.'
          : outcome.bySubject
            ? 'Suppressed: the person these identifiers lead to is on the list, by another identifier.'
            : `Not suppressed (${plural(outcome.people, 'person', 'people')} in the active snapshot under these identifiers).`;
        await show(res, 200, { text, tone: 'info' });
        return;
      }
      if (fields.action === 'remove') {
        const { removed } = await unsuppress(suppressor(), identifiers, { household, actor });
        context.log.info({ removed }, 'console: suppression entries removed');
        await show(res, 200, {
          text:
            removed === 0 ? 'Nothing of this person is on the list.' : `Removed ${plural(removed, 'entry', 'entries')}: production answers about them again.`,
          tone: removed === 0 ? 'bad' : 'info',
        });
        return;
      }
      const outcome = await suppress(suppressor(), identifiers, { household, actor });
      context.log.info({ added: outcome.added, people: outcome.people }, 'console: person suppressed');
      await show(res, 200, {
        text:
          `Suppressed${household ? ' with their household' : ''}: ${plural(outcome.added, 'new entry', 'new entries')}, ` +
          `${plural(outcome.people, 'person', 'people')} of the active snapshot. Every instance stops answering within seconds.`,
        tone: 'info',
      });
    } catch (error) {
      if (!(error instanceof SuppressionInputError)) throw error;
      await show(res, 400, null, { form: error.message });
    }
  });
}
