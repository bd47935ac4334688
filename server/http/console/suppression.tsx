// The operator's suppression page: how many people production never answers about, one form to add,
// check or remove a person (by e-mail, phone, or name at an address; their whole household if asked),
// and the audit trail of every change (who, when, what, how many). No identifier is ever shown back
// after the form is handled: the page that answers names counts, never values.
import { z } from 'zod';
import type { AuditEntry, SuppressionCounts } from '../../../core/suppression/store.ts';
import { plural } from '../../plural.ts';
import { CsrfField, DataTable, Field, Layout, Notice, Time, renderPage } from './components.tsx';
import type { FieldErrors } from './form-errors.ts';
import type { Chrome } from './format.ts';
import { OperatorNav } from './operator.tsx';

const TEXT = (max: number) => z.string().trim().max(max, `at most ${max} characters`);

/** The form as posted: every field optional; which of them name a person is core's to say. */
export const SuppressionFormSchema = z.object({
  email: TEXT(320).optional(),
  phone: TEXT(64).optional(),
  firstName: TEXT(256).optional(),
  lastName: TEXT(256).optional(),
  address: TEXT(512).optional(),
  zipcode: TEXT(16).optional(),
  household: z.literal('on').optional(),
});
export type SuppressionForm = z.infer<typeof SuppressionFormSchema>;

export interface SuppressionPageProps {
  readonly counts: SuppressionCounts;
  readonly audit: readonly AuditEntry[];
  /** What the last action did, in words (never a value of the form). */
  readonly notice: { readonly text: string; readonly tone: 'info' | 'bad' } | null;
  readonly errors: FieldErrors;
}

const ACTIONS: Readonly<Record<AuditEntry['action'], string>> = {
  add: 'added',
  import: 'imported',
  remove: 'removed',
  resolve: 'found by a load',
};

export function suppressionPage(chrome: Chrome, props: SuppressionPageProps): string {
  const { counts, audit, notice, errors } = props;
  const csrf = chrome.session?.csrf ?? '';
  const text = (name: keyof SuppressionForm, label: string) => (
    <Field name={name} id={`s-${name}`} label={label} error={errors[name]} input={(field) => <input type="text" autocomplete="off" {...field} value="" />} />
  );
  return renderPage(
    <Layout chrome={chrome} title="Suppression list">
      <OperatorNav base={chrome.base} />
      {notice === null ? null : (
        <Notice tone={notice.tone} id="suppression-notice">
          <p>{notice.text}</p>
        </Notice>
      )}
      <p id="suppression-counts">
        {`${plural(counts.entries, 'entry', 'entries')} on the list: ${plural(counts.byKind.email, 'e-mail')}, ${plural(counts.byKind.phone, 'phone')}, ` +
          `${plural(counts.byKind.name_address, 'name at an address', 'names at addresses')}, ${plural(counts.byKind.person, 'person', 'people')} and ` +
          `${plural(counts.byKind.household, 'household')} of the data snapshots. Production answers none of them (a no-match, billed nothing); the sandbox is not affected.`}
      </p>
      <p class="muted">
        Entries are keyed hashes, never the identifiers themselves. Large lists (a deletion platform's download) are imported with{' '}
        <code>npx enrichbridge suppress import FILE</code>.
      </p>
      <h2>A person</h2>
      <form method="post" action={`${chrome.base}/suppression`}>
        <CsrfField token={csrf} />
        {errors.form === undefined ? null : (
          <p class="error" id="s-form-error">
            {errors.form}
          </p>
        )}
        {text('email', 'E-mail')}
        {text('phone', 'Phone')}
        <fieldset>
          <legend>Or a name at an address</legend>
          {text('firstName', 'First name')}
          {text('lastName', 'Last name')}
          {text('address', 'Street address (number and street)')}
          {text('zipcode', 'ZIP code')}
        </fieldset>
        <p>
          <input type="checkbox" id="s-household" name="household" value="on" /> <label for="s-household">Their whole household</label>
        </p>
        <p>
          <button type="submit" name="action" value="add" class="danger">
            Suppress
          </button>{' '}
          <button type="submit" name="action" value="check">
            Check
          </button>{' '}
          <button type="submit" name="action" value="remove">
            Remove from the list
          </button>
        </p>
      </form>
      <h2>Changes</h2>
      {audit.length === 0 ? (
        <p class="muted" id="no-audit">
          The list was never changed.
        </p>
      ) : (
        <DataTable
          id="audit"
          rows={audit}
          columns={[
            { header: 'When', cell: (entry) => <Time iso={entry.at} /> },
            { header: 'Who', cell: (entry) => entry.actor },
            { header: 'What', cell: (entry) => ACTIONS[entry.action] },
            { header: 'Entries', cell: (entry) => entry.entries.toLocaleString('en-US') },
            { header: 'Note', class: 'opt', cell: (entry) => entry.note ?? '' },
          ]}
        />
      )}
    </Layout>,
  );
}

/** The audit trail's name for a console user: the person the CRM or link signed in, else the operator's session. */
export function consoleActor(person: string | null): string {
  return person === null ? 'console:operator' : `console:${person}`;
}
