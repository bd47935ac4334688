// How the console writes values: times in UTC, CRM record ids isolated from the text around them,
// an installation's status in words. The markup around them (a `<time>`, a `<bdi>`) is
// components.tsx's, which escapes every value.
import type { Installation } from '../../../bridge/model.ts';

/** Characters that open or close a bidi embedding, override or isolate, or mark a direction. */
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;

/** A CRM record id with its bidi controls written as their codes: none of them can end the isolate it is shown in. */
export function visibleRecordId(id: string): string {
  return id.replace(BIDI_CONTROLS, (c) => `\\u{${(c.codePointAt(0) ?? 0).toString(16)}}`);
}

/**
 * A CRM record id in text that cannot hold markup (a page's title), between FIRST STRONG ISOLATE and POP
 * DIRECTIONAL ISOLATE; in a page's markup it is in a `<bdi>` (components.tsx's RecordId).
 */
export function recordIdText(id: string): string {
  return `\u2068${visibleRecordId(id)}\u2069`;
}

/**
 * One rule for times in the console: every time is shown in UTC, to the second, with the zone named
 * (`2026-11-25 08:02:13 UTC`), on every page and whatever the viewer's own zone, so the same event
 * reads the same on the overview, in the log and in its detail, and beside the UTC days of the filters
 * and the daily table. A text that is not a time is shown as it is.
 */
export function utcText(iso: string): string {
  const when = new Date(iso);
  if (Number.isNaN(when.getTime())) return iso;
  return `${when.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

export interface Chrome {
  /** The console's path under PUBLIC_URL: `/console`, or `/prefix/console`. */
  readonly base: string;
  /** Who is signed in, and the token the sign-out form carries; null on pages before sign-in. */
  readonly session: { readonly who: string; readonly csrf: string } | null;
}

/** The server's root under PUBLIC_URL (where /favicon.ico is): the console's path without `/console`. */
export function siteRoot(chrome: Chrome): string {
  return chrome.base.replace(/\/console$/, '');
}

export function statusText(installation: Installation): { text: string; kind: 'active' | 'paused' | 'disabled' } {
  if (installation.status === 'disabled') return { text: 'disabled', kind: 'disabled' };
  if (installation.status === 'paused') {
    const until = installation.pausedUntil === null ? '' : ` until ${utcText(installation.pausedUntil)}`;
    if (installation.pauseReason === 'quota') return { text: `paused for quota${until}`, kind: 'paused' };
    if (installation.pauseReason === 'crm_limit') return { text: `paused for the CRM's limit${until}`, kind: 'paused' };
    if (installation.pauseReason === 'budget') return { text: `paused: the month's budget is spent${until}`, kind: 'paused' };
    return { text: `paused by an admin${until}`, kind: 'paused' };
  }
  return { text: 'active', kind: 'active' };
}

/**
 * The outcome kinds the overview counts by (skipped and failed ones by reason below); `action`: a CRM
 * user's record action (Enrich now, Undo, Exclude, Include again), logged but not an enrichment's outcome.
 */
export function outcomeKind(outcome: string): 'enriched' | 'no_match' | 'skipped' | 'failed' | 'action' {
  if (outcome === 'enriched' || outcome === 'no_match') return outcome;
  if (outcome.startsWith('action:')) return 'action';
  return outcome.startsWith('skipped:') ? 'skipped' : 'failed';
}

/** What each CRM calls the account an installation is in; another CRM's is an "account". */
const ACCOUNT_NOUNS: Readonly<Record<string, string>> = { hubspot: 'HubSpot portal', salesforce: 'Salesforce org' };

/**
 * The one way the console names an installation's CRM account, on every page and in the header:
 * `HubSpot portal 22334455`, `Salesforce org 00D…` (never `hubspot 22334455`, never an installation id).
 */
export function accountName(installation: Pick<Installation, 'provider' | 'externalAccountId'>): string {
  return `${ACCOUNT_NOUNS[installation.provider] ?? `${installation.provider} account`} ${installation.externalAccountId}`;
}

/**
 * Who the header says is signed in: the operator (who signs in by a link only), or the CRM account and
 * the person when the CRM signed them in (`HubSpot portal 22334455 · jane@example.org`), else how they came in (a one-time link).
 */
export function signedInText(
  scope: { readonly kind: 'operator' } | { readonly kind: 'installation'; readonly account: Pick<Installation, 'provider' | 'externalAccountId'> | undefined },
  person: string | null,
): string {
  if (scope.kind === 'operator') return 'operator';
  const how = person ?? 'one-time link';
  return scope.account === undefined ? how : `${accountName(scope.account)} · ${how}`;
}
