// What the card receives from enrichbridge, as JSON: the record view (bridge/record-view.ts,
// RecordViewSchema) and an action's answer (bridge/record-actions.ts, ActionResultSchema). The card is
// built by HubSpot from this folder alone, so it keeps its own copy of the shapes it reads;
// test/unit/hubspot-card.test.tsx checks that the server's types fit these.

export type CrmValue = string | number | boolean | null;

export const RECORD_STATUSES = ['enriched', 'no_match', 'undone', 'excluded', 'pending', 'failed', 'skipped', 'never'] as const;
export type RecordStatus = (typeof RECORD_STATUSES)[number];

export type CardAction = 'enrich_now' | 'undo' | 'exclude' | 'include';

export interface Actor {
  readonly userId: string;
  readonly email: string | null;
}

export interface Match {
  readonly matched: boolean;
  readonly confidence: number | null;
}

export interface RecordField {
  readonly property: string;
  readonly value: CrmValue;
  readonly writtenAt: string;
  readonly replaced: CrmValue;
  readonly state: 'ours' | 'edited' | 'reused';
  readonly written: CrmValue;
  readonly reusedFrom: string | null;
}

export interface ActionAvailability {
  readonly allowed: boolean;
  readonly reason: string | null;
  readonly message: string | null;
  readonly units: number;
  readonly budgetLeft: number | null;
}

export interface RecordView {
  readonly environment: 'sandbox' | 'production';
  readonly recordId: string;
  readonly status: { readonly value: RecordStatus; readonly reason: string | null; readonly detail: string | null; readonly at: string | null };
  readonly lastEnrichedAt: string | null;
  readonly dataVersion: string | null;
  readonly household: Match;
  readonly career: Match;
  readonly excluded: { readonly by: 'user' | 'crm_checkbox'; readonly at: string | null; readonly actor: Actor | null } | null;
  readonly undone: { readonly at: string; readonly actor: Actor | null } | null;
  readonly fields: readonly RecordField[];
  readonly actions: Readonly<Record<CardAction, ActionAvailability>>;
}

export interface UndoField {
  readonly property: string;
  readonly result: 'restored' | 'left_alone';
  readonly value: CrmValue;
  readonly written: CrmValue;
  readonly replaced: CrmValue;
}

export type ActionResult =
  | {
      readonly ok: true;
      readonly action: CardAction;
      readonly queued?: boolean | undefined;
      readonly fields?: readonly UndoField[] | undefined;
      readonly leftAlone?: readonly string[] | undefined;
    }
  | { readonly ok: false; readonly action: CardAction; readonly reason: string; readonly message: string };

/** The view route's answer: the view, or why there is none (a 2xx either way: HubSpot's proxy hides other statuses). */
export type ViewAnswer = { readonly ok: true; readonly view: RecordView } | { readonly ok: false; readonly reason: string; readonly message: string };

/** An action route's answer: the action's result, or why the request was refused before it ran. */
export type ActionAnswer = ActionResult | { readonly ok: false; readonly reason: string; readonly message: string };

/** The HubSpot properties the card's summary reads (connectors/hubspot/fields.ts names them). */
export const SUMMARY_PROPERTIES = {
  netWorth: 'wf_hh_net_worth',
  netWorthLow: 'wf_hh_low_confidence_net_worth',
  netWorthHigh: 'wf_hh_high_confidence_net_worth',
  giver: 'wf_hh_philanthropic_giver',
  topDonor: 'wf_hh_top_philanthropic_donor',
  cause: 'wf_hh_philanthropic_cause',
  jobTitle: 'wf_career_job_title',
  jobLevel: 'wf_career_job_level',
  company: 'wf_career_company_name',
} as const;

export const STATUS_LABELS: Readonly<Record<RecordStatus, string>> = {
  enriched: 'Enriched',
  no_match: 'No match',
  undone: 'Enrichment undone',
  excluded: 'Excluded from enrichment',
  pending: 'Enrichment queued',
  failed: 'Enrichment failed',
  skipped: 'Not enriched',
  never: 'Never enriched',
};

export const STATUS_VARIANTS: Readonly<Record<RecordStatus, 'danger' | 'warning' | 'info' | 'success' | 'default'>> = {
  enriched: 'success',
  no_match: 'default',
  undone: 'warning',
  excluded: 'warning',
  pending: 'info',
  failed: 'danger',
  skipped: 'default',
  never: 'default',
};

export const ACTION_LABELS: Readonly<Record<CardAction, string>> = {
  enrich_now: 'Enrich now',
  undo: 'Undo',
  exclude: 'Exclude',
  include: 'Include again',
};

export const FIELD_STATE_LABELS: Readonly<Record<RecordField['state'], string>> = {
  ours: 'Ours',
  edited: 'Edited since',
  reused: 'Reused',
};

/** A field's current value by property, null when we manage no such property on the record. */
export function valueOf(view: RecordView, property: string): CrmValue {
  return view.fields.find((field) => field.property === property)?.value ?? null;
}

/** A CRM value as a number (HubSpot returns numbers as text); null when it is none. */
export function numberOf(value: CrmValue): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string' || value.trim() === '') return null;
  const parsed = Number(value);
  return Number.isFinite(parsed) ? parsed : null;
}

/** A CRM value as a yes/no (HubSpot returns checkboxes as `true`/`false` text); null when empty. */
export function booleanOf(value: CrmValue): boolean | null {
  if (typeof value === 'boolean') return value;
  if (value === 'true') return true;
  if (value === 'false') return false;
  return null;
}

/** Dollars, short: $950K, $1.2M, $3B. */
export function money(amount: number): string {
  const abs = Math.abs(amount);
  const [divisor, suffix] = abs >= 1e9 ? [1e9, 'B'] : abs >= 1e6 ? [1e6, 'M'] : abs >= 1e3 ? [1e3, 'K'] : [1, ''];
  const scaled = amount / divisor;
  const text = Math.abs(scaled) >= 100 || divisor === 1 ? scaled.toFixed(0) : scaled.toFixed(1).replace(/\.0$/, '');
  return `$${text}${suffix}`;
}

/** The net-worth band: low to high with the estimate, or what of it the record has; null when none. */
export function netWorthBand(view: RecordView): string | null {
  const p = SUMMARY_PROPERTIES;
  const estimate = numberOf(valueOf(view, p.netWorth));
  const low = numberOf(valueOf(view, p.netWorthLow));
  const high = numberOf(valueOf(view, p.netWorthHigh));
  if (low !== null && high !== null) return `${money(low)}–${money(high)}${estimate === null ? '' : ` (estimate ${money(estimate)})`}`;
  return estimate === null ? null : money(estimate);
}

/** Giving in a phrase: top donor, giver or not, with the causes; null when nothing is known. */
export function givingHeadline(view: RecordView): string | null {
  const p = SUMMARY_PROPERTIES;
  const top = booleanOf(valueOf(view, p.topDonor));
  const giver = booleanOf(valueOf(view, p.giver));
  const cause = valueOf(view, p.cause);
  const causes = typeof cause === 'string' && cause.trim() !== '' ? ` (${cause})` : '';
  if (top === true) return `Top philanthropic donor${causes}`;
  if (giver === true) return `Philanthropic giver${causes}`;
  if (giver === false) return 'No philanthropic giving found';
  return causes === '' ? null : `Causes: ${cause}`;
}

/** The career headline: job title at company, with the level; null when none is known. */
export function careerHeadline(view: RecordView): string | null {
  const p = SUMMARY_PROPERTIES;
  const text = (value: CrmValue): string | null => (value === null || value === '' ? null : String(value));
  const title = text(valueOf(view, p.jobTitle));
  const company = text(valueOf(view, p.company));
  const level = text(valueOf(view, p.jobLevel));
  const head = title !== null && company !== null ? `${title} at ${company}` : (title ?? company);
  if (head === null) return level;
  return level === null ? head : `${head} (${level})`;
}

/** A confidence (0–1) as a percentage; `n/a` when none. */
export function percent(confidence: number | null): string {
  return confidence === null ? 'n/a' : `${Math.round(confidence * 100)}%`;
}

/** An ISO instant as its date and minute, in UTC: `2026-11-20 14:03 UTC`. */
export function when(iso: string | null): string {
  if (iso === null) return 'never';
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})/.exec(iso);
  return match === null ? iso : `${match[1]} ${match[2]} UTC`;
}

/** A property's name as people read it: `wf_hh_net_worth` → `Net worth`, `wf_career_job_title` → `Job title`. */
export function propertyLabel(property: string): string {
  const bare = property.replace(/^wf_(hh_|career_)?/, '').replace(/_/g, ' ');
  return bare.charAt(0).toUpperCase() + bare.slice(1);
}

/** A CRM value as shown in the table: `(empty)` for none. */
export function shown(value: CrmValue): string {
  return value === null || value === '' ? '(empty)' : String(value);
}

/** What an action costs, as the button says it: `1 unit, 240 left this month`, `no units`. */
export function costLine(availability: ActionAvailability): string {
  const units = availability.units === 0 ? 'no units' : `${availability.units} unit${availability.units === 1 ? '' : 's'}`;
  return availability.budgetLeft === null || availability.units === 0 ? units : `${units}, ${availability.budgetLeft} left this month`;
}
