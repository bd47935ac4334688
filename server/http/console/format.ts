// How the console writes values: times in UTC, CRM record ids isolated from the text around them,
// an installation's status in words, and the HTML escape the views that are still strings use.
import type { Installation } from '../../../bridge/model.ts';

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Characters that open or close a bidi embedding, override or isolate, or mark a direction. */
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;

/** A CRM record id with its bidi controls written as their codes: none of them can end the isolate it is shown in. */
export function visibleRecordId(id: string): string {
  return id.replace(BIDI_CONTROLS, (c) => `\\u{${(c.codePointAt(0) ?? 0).toString(16)}}`);
}

/**
 * A CRM record id in a page: in a bidi isolate (`<bdi>`), so an id of right-to-left characters, or one
 * crafted to reorder text, cannot move the words around it on its line.
 */
export function recordIdHtml(id: string): string {
  return `<bdi>${escapeHtml(visibleRecordId(id))}</bdi>`;
}

/** The same for text that cannot hold markup (a page's title): between FIRST STRONG ISOLATE and POP DIRECTIONAL ISOLATE. */
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

/** A time as utcText shows it, marked up for machines too (`<time datetime>`). */
export function timeHtml(iso: string): string {
  return `<time datetime="${escapeHtml(iso)}">${escapeHtml(utcText(iso))}</time>`;
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

/** The outcome kinds the overview counts by: skipped and failed ones by reason below. */
export function outcomeKind(outcome: string): 'enriched' | 'no_match' | 'skipped' | 'failed' {
  if (outcome === 'enriched' || outcome === 'no_match') return outcome;
  return outcome.startsWith('skipped:') ? 'skipped' : 'failed';
}
