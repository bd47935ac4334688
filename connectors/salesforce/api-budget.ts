// enrichbridge's share of an org's daily API allowance. A Salesforce org has one allowance of REST calls
// over a rolling 24 hours for every integration it runs; an enrichment backlog could spend it all and
// stop the org's other integrations. So an installation uses at most a share of it (`crmApiShare`,
// default 50 %): before each call, the org's usage as Salesforce last reported it (Sforce-Limit-Info on
// every answer) plus the calls this process has in flight is
// compared with the share, and at the share the call is not made: a `limit_exhausted` CrmError pauses
// the installation for an hour (the allowance is rolling: it frees up as the day's calls age), after
// which the first call reads the usage again.
//
// Usage is kept per org for this process; each instance learns it from its own answers, which every
// call carries, so instances that share an org stay within a call or two of each other. Until the
// first answer (or an hour after the last), the usage is unknown and calls go: at most the org's pacer
// concurrency (5) can pass the share that way.
import type { ApiUsage } from './api.ts';

export interface ApiBudget {
  /** The share of the org's daily allowance enrichbridge may use (0.01 to 1). */
  readonly share: number;
}

/** A usage older than this is not trusted to refuse a call (the pause is as long: the first call after it reads usage afresh). */
export const USAGE_FRESH_MS = 60 * 60_000;

interface Known {
  readonly usage: ApiUsage;
  readonly at: number;
}

class OrgUsageBook {
  private readonly known = new Map<string, Known>();
  private readonly inFlight = new Map<string, number>();

  observe(orgId: string, usage: ApiUsage, now: number): void {
    this.known.set(orgId, { usage, at: now });
  }

  /** The org's usage, if this process learnt it within USAGE_FRESH_MS. */
  latest(orgId: string, now: number): ApiUsage | null {
    const known = this.known.get(orgId);
    return known === undefined || now - known.at > USAGE_FRESH_MS ? null : known.usage;
  }

  /** A call about to be made (queued in the org's pacer or on the wire). */
  begin(orgId: string): void {
    this.inFlight.set(orgId, (this.inFlight.get(orgId) ?? 0) + 1);
  }

  end(orgId: string): void {
    const left = (this.inFlight.get(orgId) ?? 1) - 1;
    if (left <= 0) this.inFlight.delete(orgId);
    else this.inFlight.set(orgId, left);
  }

  /**
   * Whether one more call would take the org past the budget: its last known usage plus the calls in
   * flight, against `share` of its allowance. Null when the usage is not known (the call may go).
   */
  exhausted(orgId: string, budget: ApiBudget, now: number): { readonly used: number; readonly max: number; readonly allowed: number } | null {
    const usage = this.latest(orgId, now);
    if (usage === null) return null;
    const allowed = Math.floor(budget.share * usage.max);
    const used = usage.used + (this.inFlight.get(orgId) ?? 0);
    return used >= allowed ? { used: usage.used, max: usage.max, allowed } : null;
  }

  /** Tests: forget what was learnt. */
  clear(): void {
    this.known.clear();
    this.inFlight.clear();
  }
}

export const orgUsage = new OrgUsageBook();

export function budgetMessage(what: string, spent: { readonly used: number; readonly max: number; readonly allowed: number }, budget: ApiBudget): string {
  return (
    `Salesforce ${what}: enrichbridge's share of the org's daily API allowance is used ` +
    `(${spent.used} of ${spent.max} calls in 24 h by every integration; enrichbridge stops at ${spent.allowed}, ${Math.round(budget.share * 100)} %)`
  );
}
