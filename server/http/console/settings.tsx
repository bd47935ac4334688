// The settings an installation's admin steers from the console: what is written (overwrite mode, the
// fields), when (enrich on create, re-enrichment age, minimum confidence, objects), and pause, resume
// and disconnect. The form is read with zod; an error is shown next to its field, nothing half-saved.
import { z } from 'zod';
import { FIELD_CATALOGUE } from '../../../connectors/kit/field-catalogue.ts';
import type { CrmModule } from '../../../bridge/crm-module.ts';
import { HOUSEHOLD_PLACEMENT_TEXT, type Installation, type InstallationSettings, OVERWRITE_MODES } from '../../../bridge/model.ts';
import type { VNode } from 'preact';
import { CsrfField, Field, InstallationNav, Layout, Notice, renderPage } from './components.tsx';
import { type FieldErrors, formErrors } from './form-errors.ts';
import { type Chrome, accountName, statusText } from './format.ts';

export const OVERWRITE_HELP: Record<(typeof OVERWRITE_MODES)[number], { label: string; help: string }> = {
  fill_empty: { label: 'Fill empty only', help: 'Write a property only while it is empty: nothing a person or another tool entered is ever replaced.' },
  tracked: {
    label: 'Keep ours current (default)',
    help: 'Write empty properties, and update those that still hold what we wrote last; a value someone changed is left alone.',
  },
  always: { label: 'Always overwrite', help: 'Write every enriched property each time, replacing whatever it holds.' },
};

const many = z
  .union([z.string(), z.array(z.string())])
  .optional()
  .transform((value) => (value === undefined ? [] : Array.isArray(value) ? value : [value]));

/** The form as the browser posts it (urlencoded), read into settings. */
export const SettingsFormSchema = z.object({
  csrf: z.string(),
  enrichOnCreate: z.literal('on').optional(),
  reuseAnswers: z.literal('on').optional(),
  monthlyBudget: z
    .string()
    .trim()
    .regex(/^\d{0,10}$/, 'a whole number of units, or empty for no budget')
    .transform((text) => (text === '' ? null : Number(text)))
    .refine((units) => units === null || (units >= 1 && units <= 1_000_000_000), 'from 1 to 1,000,000,000 units, or empty for no budget')
    .optional()
    .transform((units) => units ?? null),
  refreshAfterDays: z.enum(['off', '30', '60', '90'], { error: 'choose off, 30, 60 or 90 days' }).optional(),
  overwriteMode: z.enum(OVERWRITE_MODES, { error: 'choose one of the three modes' }),
  reenrichAfterDays: z
    .string()
    .trim()
    .regex(/^\d{1,4}$/, 'a whole number of days, 0 to 3650')
    .transform(Number)
    .refine((days) => days <= 3650, 'at most 3650 days'),
  minConfidence: z
    .string()
    .trim()
    .regex(/^(0(\.\d{1,2})?|1(\.0{1,2})?)$/, 'a number from 0 to 1, such as 0.6'),
  /** Salesforce only: the percentage of the org's daily API allowance enrichbridge may use. */
  crmApiShare: z
    .string()
    .trim()
    .regex(/^\d{1,3}$/, 'a whole percentage, 1 to 100')
    .transform(Number)
    .refine((percent) => percent >= 1 && percent <= 100, 'from 1 to 100 %')
    .optional(),
  objects: many,
  fields: many,
});

export type { FieldErrors };

const sameObjects = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((object) => b.includes(object));

/** The settings the form asks for, or the message for each field that is wrong. */
export function readSettingsForm(
  body: unknown,
  module: CrmModule | undefined,
  current: InstallationSettings,
): { ok: true; settings: Partial<InstallationSettings> } | { ok: false; errors: FieldErrors } {
  const parsed = SettingsFormSchema.safeParse(body);
  if (!parsed.success) return { ok: false, errors: formErrors(parsed.error) };
  const errors: Record<string, string> = {};
  const form = parsed.data;
  const known = new Set(module?.objects ?? []);
  const objects = form.objects.filter((object) => known.has(object));
  if (known.size > 0 && objects.length === 0) errors.objects = 'choose at least one object to enrich';
  const chosen = new Set(form.fields);
  const catalogue = FIELD_CATALOGUE.map((field) => field.key);
  if (catalogue.every((key) => !chosen.has(key))) errors.fields = 'choose at least one field to write';
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  // Fields outside the form (the status fields) keep whatever exclusion they had.
  const kept = current.excludedFields.filter((key) => !catalogue.includes(key));
  return {
    ok: true,
    settings: {
      enrichOnCreate: form.enrichOnCreate === 'on',
      reuseAnswers: form.reuseAnswers === 'on',
      monthlyBudget: form.monthlyBudget,
      refreshAfterDays: form.refreshAfterDays === undefined || form.refreshAfterDays === 'off' ? null : (Number(form.refreshAfterDays) as 30 | 60 | 90),
      refreshShare: current.refreshShare,
      crmApiShare: form.crmApiShare === undefined ? current.crmApiShare : form.crmApiShare / 100,
      overwriteMode: form.overwriteMode,
      reenrichAfterDays: form.reenrichAfterDays,
      minConfidence: Number(form.minConfidence),
      // The CRM's default objects are stored as none, so a new default object later is included.
      objects: sameObjects(objects, module?.defaultObjects ?? module?.objects ?? []) ? [] : objects,
      excludedFields: [...kept, ...catalogue.filter((key) => !chosen.has(key))],
    },
  };
}

/** A group of inputs (a fieldset) with its error: marked invalid and described by it. */
function Group({
  name,
  legend,
  errors,
  children,
}: {
  readonly name: string;
  readonly legend: string;
  readonly errors: FieldErrors;
  readonly children: VNode[];
}): VNode {
  const error = errors[name];
  return (
    <fieldset {...(error === undefined ? {} : { 'aria-invalid': 'true', 'aria-describedby': `${name}-error` })}>
      <legend>{legend}</legend>
      {children}
      {error === undefined ? null : (
        <p class="error" id={`${name}-error`}>
          {error}
        </p>
      )}
    </fieldset>
  );
}

export interface SettingsView {
  readonly installation: Installation;
  readonly module: CrmModule | undefined;
  /** What the form shows: the saved settings, or what was just posted and refused. */
  readonly values: InstallationSettings;
  readonly errors: FieldErrors;
  readonly saved: boolean;
}

export function settingsPage(chrome: Chrome, view: SettingsView): string {
  const { installation, module, values, errors } = view;
  const csrf = chrome.session?.csrf ?? '';
  const base = `${chrome.base}/installations/${encodeURIComponent(installation.id)}`;
  const excluded = new Set(values.excludedFields);
  const objectsChosen = new Set(values.objects.length === 0 ? (module?.defaultObjects ?? module?.objects ?? []) : values.objects);
  const fieldset = (group: 'household' | 'career', legend: string) => (
    <fieldset>
      <legend>{legend}</legend>
      {FIELD_CATALOGUE.filter((field) => field.group === group).map((field) => {
        const property = module?.propertyFor?.(field.key) ?? null;
        const id = `field-${field.key.replace(/[^a-z0-9]/gi, '-')}`;
        return (
          <div class="check">
            <input type="checkbox" name="fields" value={field.key} id={id} checked={!excluded.has(field.key)} />
            <label for={id}>
              {field.label}
              {property === null ? null : (
                <>
                  {' '}
                  <code>{property}</code>
                </>
              )}
            </label>
          </div>
        );
      })}
    </fieldset>
  );
  const status = statusText(installation);
  const refreshChosen = values.refreshAfterDays === null ? 'off' : String(values.refreshAfterDays);
  const fieldsError = errors.fields;
  return renderPage(
    <Layout chrome={chrome} title={`Settings: ${accountName(installation)}`}>
      <InstallationNav base={base} current="settings" />
      {view.saved ? (
        <Notice>
          <p>Saved. The next batch uses these settings.</p>
        </Notice>
      ) : null}
      {Object.keys(errors).length > 0 ? (
        <Notice tone="bad">
          <p>Nothing was saved: see the fields marked below.</p>
        </Notice>
      ) : null}
      <form method="post" action={`${base}/settings`} novalidate>
        <CsrfField token={csrf} />
        <h2>When</h2>
        <div class="check">
          <input type="checkbox" name="enrichOnCreate" id="enrichOnCreate" checked={values.enrichOnCreate} />
          <label for="enrichOnCreate">Enrich each new record when the CRM reports it</label>
        </div>
        <div class="check">
          <input type="checkbox" name="reuseAnswers" id="reuseAnswers" checked={values.reuseAnswers} />
          <label for="reuseAnswers">
            One lookup per person: a record asking exactly what another record asked (after normalizing case, spacing, phone and address formats) within the
            re-enrichment age gets that answer without spending a unit. The answers are kept sealed, no longer than that age.
          </label>
        </div>
        <Field
          name="monthlyBudget"
          id="monthlyBudget"
          label="Monthly budget (units per UTC calendar month; empty: none)"
          error={errors.monthlyBudget}
          input={(field) => <input type="text" inputmode="numeric" {...field} value={values.monthlyBudget === null ? '' : String(values.monthlyBudget)} />}
        />
        <p>
          <label for="refreshAfterDays">Scheduled refresh: re-enrich in the background records enriched longer ago than</label>
          <br />
          <select name="refreshAfterDays" id="refreshAfterDays">
            {(['off', '30', '60', '90'] as const).map((option) => (
              <option value={option} selected={refreshChosen === option}>
                {option === 'off' ? 'off' : `${option} days`}
              </option>
            ))}
          </select>
          <br />
          <span class="muted">
            {`Oldest first, at most ${Math.round(values.refreshShare * 100)} % of the token's rate, only within the budget; an unchanged answer writes nothing.`}
          </span>
        </p>
        {module?.provider === 'salesforce' ? (
          <Field
            name="crmApiShare"
            id="crmApiShare"
            label="Share of the org's daily API allowance enrichbridge may use (%; the org's other integrations share the rest; at it, enrichment waits an hour and tries again)"
            error={errors.crmApiShare}
            input={(field) => <input type="text" inputmode="numeric" {...field} value={String(Math.round(values.crmApiShare * 100))} />}
          />
        ) : null}
        {module?.provider === 'salesforce' ? (
          <p id="householdFieldsOn">
            {`Household fields: ${HOUSEHOLD_PLACEMENT_TEXT[values.householdFieldsOn]}.`}
            <br />
            <span class="muted">
              Changed by the operator with <code>enrichbridge salesforce households INSTALLATION --on record|household|both</code>, which first asks the org
              whether it has NPSP household Accounts and our fields on Account.
            </span>
          </p>
        ) : null}
        <Field
          name="reenrichAfterDays"
          id="reenrichAfterDays"
          label="Re-enrich a record after (days)"
          error={errors.reenrichAfterDays}
          input={(field) => <input type="text" inputmode="numeric" {...field} value={String(values.reenrichAfterDays)} />}
        />
        <Field
          name="minConfidence"
          id="minConfidence"
          label="Minimum confidence written (0 to 1)"
          error={errors.minConfidence}
          input={(field) => <input type="text" inputmode="decimal" {...field} value={String(values.minConfidence)} />}
        />
        <Group name="objects" legend="Objects enriched" errors={errors}>
          {(module?.objects ?? []).map((object) => (
            <div class="check">
              <input type="checkbox" name="objects" value={object} id={`object-${object}`} checked={objectsChosen.has(object)} />
              <label for={`object-${object}`}>{object}</label>
            </div>
          ))}
        </Group>
        <h2>How</h2>
        <Group name="overwriteMode" legend="Overwrite mode" errors={errors}>
          {OVERWRITE_MODES.map((value) => (
            <div class="check">
              <input type="radio" name="overwriteMode" value={value} id={`mode-${value}`} checked={values.overwriteMode === value} />
              <label for={`mode-${value}`}>
                <strong>{OVERWRITE_HELP[value].label}</strong>: {OVERWRITE_HELP[value].help}
              </label>
            </div>
          ))}
        </Group>
        <h2>Fields written</h2>
        {fieldsError === undefined ? null : (
          <p class="error" id="fields-error">
            {fieldsError}
          </p>
        )}
        <div class="fields">
          {fieldset('household', 'Household')}
          {fieldset('career', 'Career')}
        </div>
        <p>
          <button type="submit">Save settings</button>
        </p>
      </form>
      <h2>Pause or disconnect</h2>
      <p>
        Status:{' '}
        <span id="status" class={`status-${status.kind}`}>
          {status.text}
        </span>
      </p>
      <div class="actions">
        <form method="post" action={`${base}/${installation.status === 'paused' ? 'resume' : 'pause'}`}>
          <CsrfField token={csrf} />
          <button type="submit">{installation.status === 'paused' ? 'Resume' : 'Pause'}</button>
        </form>
        <a href={`${base}/disconnect`}>Disconnect…</a>
      </div>
    </Layout>,
  );
}

/**
 * What becomes of a disconnected installation's enrichment log, and where the operator reads it (the
 * console's pages go with the installation; the command reads the log of any installation id).
 */
export function keptLogSentence(installationId: string): string {
  return `The enrichment log is kept for the operator without the values it recorded (which records were enriched, when and how, stays): the operator reads it with enrichbridge log --installation ${installationId}.`;
}

export function disconnectPage(chrome: Chrome, installation: Installation): string {
  const base = `${chrome.base}/installations/${encodeURIComponent(installation.id)}`;
  return renderPage(
    <Layout chrome={chrome} title={`Disconnect ${accountName(installation)}?`}>
      <div class="notice bad">
        <p>
          {`Disconnecting removes this installation from enrichbridge: its stored CRM credentials, its enrichment token (revoked), what it knows of each record it enriched, and its jobs (waiting, running or failed: none is retried); its admins are signed out. Nothing already written to the CRM is removed. ${keptLogSentence(installation.id)} To enrich again, the app must be installed again.`}
        </p>
      </div>
      <form method="post" action={`${base}/disconnect`}>
        <CsrfField token={chrome.session?.csrf ?? ''} />
        <p>
          <button type="submit" class="danger">
            Disconnect
          </button>{' '}
          <a href={`${base}/settings`}>Keep it connected</a>
        </p>
      </form>
    </Layout>,
  );
}
