// enrichRecord: the one function behind both endpoints, the CLI, the connectors and the tests.
// Checks run in docs/reference/contract.md's order: token (401) → environment (403) → rate (429) → request (400) →
// [production: data snapshot loaded (503)] → quota (402) → personas or matching → entitlements.
import { type Credential, Authenticator } from '../accounts/authenticator.ts';
import { entitledCareer, entitledHousehold } from '../accounts/entitlements.ts';
import type { Account, Environment } from '../accounts/model.ts';
import { EnrichError } from '../contract/errors.ts';
import {
  type Career,
  type EnrichmentRequest,
  EnrichmentRequestSchema,
  type EnrichmentResponse,
  type Household,
  type ProductionResponse,
  type SandboxResponse,
} from '../contract/schemas.ts';
import { currentPeriod } from '../limits/quota-period.ts';
import { type RateDecision, type RateLimiter, RateLimitUnavailableError } from '../limits/rate-limiter.ts';
import { matchPersona } from '../sandbox/matcher.ts';
import { isDatabaseBusy, isDatabaseUnavailable } from '../storage/errors.ts';
import { quotaUnits } from '../observe/metrics.ts';
import type { QuotaTake, Store } from '../storage/port.ts';
import type { SuppressionList } from '../suppression/list.ts';
import { type ProductionMatch, type ProductionMatcher, noSnapshotError } from './production-matcher.ts';
import { simulatedError } from './sandbox-errors.ts';
import { describeIssues } from './request-errors.ts';

export interface EnrichCall {
  readonly environment: Environment;
  /** The X-WF-Auth-Token value, if any. */
  readonly token: string | undefined;
  /** The sandbox error-simulation header value, if any (ignored in production). */
  readonly simulateError?: string | undefined;
  /**
   * A sandbox call made in-process for the token's account whatever the token's environment: the
   * console's playground, where a production installation has only its production token. The answer is
   * the sandbox's (personas, the account's entitlements, no quota). Never set from a request: the HTTP
   * endpoints do not pass it, so a production token on `/sandbox/v1` is still refused.
   */
  readonly sandboxForAccount?: boolean;
  /** Returns the decoded JSON body; throws an invalid_request EnrichError when it cannot. */
  readonly readBody: () => unknown;
  readonly now?: Date;
}

export interface QuotaState {
  readonly limit: number;
  readonly remaining: number;
  readonly resetsAt: Date | null;
}

interface Outcome {
  readonly credential?: Credential;
  readonly rate?: RateDecision;
  readonly quota?: QuotaState;
  /** What the snapshot answering production was, when one answered. */
  readonly dataVersion?: string;
}

export type EnrichResult =
  | (Outcome & { readonly ok: true; readonly response: EnrichmentResponse })
  | (Outcome & { readonly ok: false; readonly error: EnrichError; readonly cause?: unknown });

export interface EnrichServiceDeps {
  readonly store: Store;
  readonly rateLimiter: RateLimiter;
  readonly productionMatcher: ProductionMatcher;
  readonly authenticator?: Authenticator;
  /** Who production never answers about; none: everyone may be answered (tests of matching alone). */
  readonly suppressions?: SuppressionList;
}

const WRONG_ENVIRONMENT: Record<Environment, string> = {
  sandbox: 'A production token cannot be used on the sandbox endpoint; use a sandbox_ token.',
  production: 'A sandbox token cannot be used on the production endpoint; use a production token.',
};

export class EnrichService {
  private readonly store: Store;
  private readonly rateLimiter: RateLimiter;
  private readonly authenticator: Authenticator;
  private readonly suppressions: SuppressionList | undefined;
  productionMatcher: ProductionMatcher;

  constructor(deps: EnrichServiceDeps) {
    this.store = deps.store;
    this.rateLimiter = deps.rateLimiter;
    this.productionMatcher = deps.productionMatcher;
    this.authenticator = deps.authenticator ?? new Authenticator(deps.store);
    this.suppressions = deps.suppressions;
  }

  async enrichRecord(call: EnrichCall): Promise<EnrichResult> {
    const token = call.token?.trim();
    if (token === undefined || token === '') {
      return { ok: false, error: new EnrichError('unauthorized', 'Missing X-WF-Auth-Token header.') };
    }
    const credential = await this.authenticator.authenticate(token);
    if (credential === undefined) {
      return { ok: false, error: new EnrichError('unauthorized', 'Invalid or revoked X-WF-Auth-Token.') };
    }
    let rate: RateDecision;
    try {
      const forAccount = call.environment === 'sandbox' && call.sandboxForAccount === true;
      if (credential.token.environment !== call.environment && !forAccount) {
        // A refusal for the wrong environment is not charged to the rate, but still reports it.
        rate = await this.rateLimiter.peek(credential.token.id, credential.account.rateLimit);
        return { ok: false, credential, rate, error: new EnrichError('forbidden_environment', WRONG_ENVIRONMENT[call.environment]) };
      }
      rate = await this.rateLimiter.take(credential.token.id, credential.account.rateLimit);
    } catch (error) {
      // The shared limit cannot be read and no safe share of it is known: refuse rather than exceed it.
      if (!(error instanceof RateLimitUnavailableError)) throw error;
      return { ok: false, credential, error: new EnrichError('service_unavailable', 'The rate limiter is unavailable; retry in a moment.') };
    }
    if (!rate.allowed) {
      const error = new EnrichError('rate_limit', `Rate limit exceeded: at most ${rate.limit} requests per second per token.`);
      return this.fail(call, credential, rate, error);
    }
    if (call.environment === 'sandbox' && call.simulateError !== undefined) {
      return { ok: false, credential, rate, error: simulatedError(call.simulateError) };
    }
    let request: EnrichmentRequest;
    try {
      request = parseRequest(call.readBody());
    } catch (error) {
      if (error instanceof EnrichError) return this.fail(call, credential, rate, error);
      throw error;
    }
    if (call.environment === 'sandbox') {
      return { ok: true, credential, rate, response: sandboxResponse(request, credential) };
    }
    return this.production(call, credential, rate, request);
  }

  private async production(call: EnrichCall, credential: Credential, rate: RateDecision, request: EnrichmentRequest): Promise<EnrichResult> {
    const matcher = this.productionMatcher;
    if (matcher.dataVersion === null) {
      // Nothing to match against: say so before touching the quota, so concurrent callers all get
      // 503 and none of them a 402 for a unit another is about to give back.
      return this.fail(call, credential, rate, noSnapshotError());
    }
    // A request naming a suppressed person by one of their identifiers: the answer is a no-match, like
    // any other, and costs no unit.
    if (this.suppressions?.requestSuppressed(request) === true) return this.suppressedAnswer(call, credential, rate, request);
    const { account, token } = credential;
    const period = currentPeriod(account.quotaPeriod, call.now ?? new Date());
    let take: QuotaTake;
    try {
      take = await this.store.takeQuota(token.id, period.key, account.quotaLimit);
    } catch (error) {
      // Another process holds the database's write lock past the store's retries (nothing was taken),
      // or the database is away (the take may have landed before the connection dropped; no answer is
      // given either way): the caller may retry in a moment.
      if (!isDatabaseBusy(error) && !isDatabaseUnavailable(error)) throw error;
      return this.fail(call, credential, rate, new EnrichError('service_unavailable', 'The service is busy; retry in a moment.'));
    }
    const quota: QuotaState = {
      limit: account.quotaLimit,
      remaining: Math.max(0, account.quotaLimit - take.used),
      resetsAt: period.resetsAt,
    };
    if (!take.granted) {
      const when = period.resetsAt === null ? 'It does not refresh.' : `It refreshes at ${period.resetsAt.toISOString()}.`;
      return { ok: false, credential, rate, quota, error: new EnrichError('quota_exhausted', `The token's usage quota is exhausted. ${when}`) };
    }
    let household: Household | null;
    let career: Career | null;
    let subject: ProductionMatch['subject'];
    try {
      ({ household, career, subject } = await matcher.match(request, { career: account.careerIntelligence }));
    } catch (error) {
      // Only a request answered 200 is billed: give the unit back whatever went wrong.
      await this.store.returnQuota(token.id, period.key);
      const restored = { ...quota, remaining: Math.min(quota.limit, quota.remaining + 1) };
      if (error instanceof EnrichError) return { ok: false, credential, rate, quota: restored, error };
      // An unexpected fault still answers with the limit headers; the cause goes to the log only.
      return { ok: false, credential, rate, quota: restored, error: new EnrichError('internal_error', 'Internal server error.'), cause: error };
    }
    if (subject !== undefined && this.suppressions?.subjectSuppressed(subject) === true) {
      // Found through another identifier (a phone, the name at the address): still never answered, and
      // the unit goes back.
      await this.store.returnQuota(token.id, period.key);
      return this.suppressedAnswer(call, credential, rate, request);
    }
    const response: ProductionResponse = {
      ...echoId(request),
      household_matched: household !== null,
      career_matched: career !== null && account.careerIntelligence,
      household: household === null ? null : entitledHousehold(account, household),
      career: career === null || !account.careerIntelligence ? null : entitledCareer(account, career),
    };
    const dataVersion = matcher.dataVersion;
    // Billed: the unit taken above stays taken.
    quotaUnits.inc();
    return { ok: true, credential, rate, quota, response, ...(dataVersion === null ? {} : { dataVersion }) };
  }

  /** The answer about a suppressed person: a normal no-match (200, both flags false), billed nothing. */
  private async suppressedAnswer(call: EnrichCall, credential: Credential, rate: RateDecision, request: EnrichmentRequest): Promise<EnrichResult> {
    const { account, token } = credential;
    const period = currentPeriod(account.quotaPeriod, call.now ?? new Date());
    const used = await this.store.quotaUsed(token.id, period.key);
    const quota = { limit: account.quotaLimit, remaining: Math.max(0, account.quotaLimit - used), resetsAt: period.resetsAt };
    const response: ProductionResponse = { ...echoId(request), household_matched: false, career_matched: false, household: null, career: null };
    const dataVersion = this.productionMatcher.dataVersion;
    return { ok: true, credential, rate, quota, response, ...(dataVersion === null ? {} : { dataVersion }) };
  }

  /** A refusal after authentication; production ones still report the token's quota. */
  private async fail(call: EnrichCall, credential: Credential, rate: RateDecision, error: EnrichError): Promise<EnrichResult> {
    if (call.environment === 'sandbox') return { ok: false, credential, rate, error };
    const { account, token } = credential;
    const period = currentPeriod(account.quotaPeriod, call.now ?? new Date());
    const used = await this.store.quotaUsed(token.id, period.key);
    const quota = { limit: account.quotaLimit, remaining: Math.max(0, account.quotaLimit - used), resetsAt: period.resetsAt };
    return { ok: false, credential, rate, quota, error };
  }
}

function parseRequest(body: unknown): EnrichmentRequest {
  const parsed = EnrichmentRequestSchema.safeParse(body);
  if (!parsed.success) throw new EnrichError('invalid_request', describeIssues(parsed.error));
  return parsed.data;
}

/** `id` is echoed exactly as sent, null included, and left out when the request had none. */
function echoId(request: EnrichmentRequest): Pick<EnrichmentResponse, 'id'> {
  return 'id' in request ? { id: request.id ?? null } : {};
}

/**
 * A persona's household and career as one account may see them, made once per account record (a
 * cached credential's account lives a quarter of a second) and frozen: every answer about the persona
 * shares them, and answer-json.ts writes each once. With every field granted that is the persona's own
 * object (personas.ts), a constant nothing changes.
 */
const entitledParts = new WeakMap<Account, WeakMap<object, object>>();

function entitledPart<T extends object>(account: Account, part: T, entitle: (account: Account, part: T) => T): T {
  let parts = entitledParts.get(account);
  if (parts === undefined) {
    parts = new WeakMap();
    entitledParts.set(account, parts);
  }
  let seen = parts.get(part) as T | undefined;
  if (seen === undefined) {
    seen = Object.freeze(entitle(account, part));
    parts.set(part, seen);
  }
  return seen;
}

/** Sandbox rules 5–7: unmatched objects are omitted, and career needs Career Intelligence. */
function sandboxResponse(request: EnrichmentRequest, { account }: Credential): SandboxResponse {
  const persona = matchPersona(request)?.persona;
  const household = persona?.household;
  const career = account.careerIntelligence ? persona?.career : undefined;
  return {
    ...echoId(request),
    household_matched: household !== undefined,
    career_matched: career !== undefined,
    ...(household === undefined ? {} : { household: entitledPart(account, household, entitledHousehold) }),
    ...(career === undefined ? {} : { career: entitledPart(account, career, entitledCareer) }),
  };
}
