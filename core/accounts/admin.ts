// Operator actions on accounts and tokens, shared by the CLI and first-start set-up: input checks with
// messages an operator can act on, and the quota picture `accounts show` prints.
import { CAREER_FIELDS, type CareerField, HOUSEHOLD_FIELDS, type HouseholdField } from '../contract/schemas.ts';
import { currentPeriod } from '../limits/quota-period.ts';
import type { Store } from '../storage/port.ts';
import {
  ACCOUNT_DEFAULTS,
  type Account,
  type Environment,
  type FieldEntitlement,
  type NewAccount,
  QUOTA_PERIODS,
  type QuotaPeriod,
  type TokenRecord,
} from './model.ts';
import { hashToken, mintToken, tokenReference } from './tokens.ts';

/** A refusal an operator caused and can fix; the CLI prints the message and exits 1. */
/** The account setting a refusal is about: where a form shows it. */
export type AccountField = 'name' | 'rateLimit' | 'quotaLimit' | 'quotaPeriod' | 'householdFields' | 'careerFields';

export class AdminError extends Error {
  /** The setting the refusal is about, when it is about one (a form shows the message beside it). */
  readonly field: AccountField | undefined;

  constructor(message: string, field?: AccountField) {
    super(message);
    this.name = 'AdminError';
    this.field = field;
  }
}

export interface AccountSettings {
  readonly careerIntelligence?: boolean;
  /** Political data (household political_donor, top_political_donor, political_party); off for a new account. */
  readonly politicalData?: boolean;
  readonly quotaLimit?: number;
  readonly quotaPeriod?: string;
  readonly rateLimit?: number;
  /** `all` or a comma-separated list of field names. */
  readonly householdFields?: string;
  readonly careerFields?: string;
}

const ACCOUNT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export function parseFieldList<F extends string>(value: string, catalogue: readonly F[], kind: 'household' | 'career'): FieldEntitlement<F> {
  if (value.trim() === 'all') return 'all';
  const names = value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  const known = new Set<string>(catalogue);
  const unknown = names.filter((name) => !known.has(name));
  if (names.length === 0 || unknown.length > 0) {
    throw new AdminError(
      `unknown ${kind} field${unknown.length === 1 ? '' : 's'}: ${unknown.join(', ') || '(none given)'}. ` +
        `Use "all" or a comma-separated list of: ${catalogue.join(', ')}`,
      kind === 'household' ? 'householdFields' : 'careerFields',
    );
  }
  return catalogue.filter((field) => names.includes(field));
}

function checkInteger(value: number, what: string, min: number, field: AccountField): number {
  if (!Number.isInteger(value) || value < min) throw new AdminError(`${what} must be a whole number of at least ${min}; got ${value}`, field);
  return value;
}

function checkPeriod(value: string): QuotaPeriod {
  const period = QUOTA_PERIODS.find((p) => p === value);
  if (period === undefined) throw new AdminError(`quota period must be one of ${QUOTA_PERIODS.join(', ')}; got "${value}"`, 'quotaPeriod');
  return period;
}

function applySettings<T extends NewAccount>(base: T, settings: AccountSettings): T {
  return {
    ...base,
    ...(settings.careerIntelligence === undefined ? {} : { careerIntelligence: settings.careerIntelligence }),
    ...(settings.politicalData === undefined ? {} : { politicalData: settings.politicalData }),
    ...(settings.quotaLimit === undefined ? {} : { quotaLimit: checkInteger(settings.quotaLimit, 'quota', 0, 'quotaLimit') }),
    ...(settings.quotaPeriod === undefined ? {} : { quotaPeriod: checkPeriod(settings.quotaPeriod) }),
    ...(settings.rateLimit === undefined ? {} : { rateLimit: checkInteger(settings.rateLimit, 'rate limit', 1, 'rateLimit') }),
    ...(settings.householdFields === undefined
      ? {}
      : { householdFields: parseFieldList<HouseholdField>(settings.householdFields, HOUSEHOLD_FIELDS, 'household') }),
    ...(settings.careerFields === undefined ? {} : { careerFields: parseFieldList<CareerField>(settings.careerFields, CAREER_FIELDS, 'career') }),
  };
}

export async function createAccount(store: Store, name: string, settings: AccountSettings): Promise<Account> {
  if (!ACCOUNT_NAME.test(name)) {
    throw new AdminError(`account name "${name}" must be 1-64 letters, digits, dots, dashes or underscores, starting with a letter or digit`, 'name');
  }
  // Political data is a special category: a new account is not entitled to it until an operator grants it.
  const input = applySettings<NewAccount>(
    { name, careerIntelligence: false, politicalData: false, householdFields: 'all', careerFields: 'all', ...ACCOUNT_DEFAULTS },
    settings,
  );
  return store.createAccount(input);
}

export async function requireAccount(store: Store, name: string): Promise<Account> {
  const account = await store.findAccountByName(name);
  if (account === undefined) throw new AdminError(`no account named "${name}"`);
  return account;
}

export async function updateAccount(store: Store, name: string, settings: AccountSettings): Promise<Account> {
  const account = applySettings(await requireAccount(store, name), settings);
  await store.updateAccount(account);
  return account;
}

export interface TokenUsage {
  readonly token: TokenRecord;
  /** Production tokens only: the sandbox draws from no quota. */
  readonly quota?: { readonly used: number; readonly remaining: number; readonly resetsAt: Date | null };
}

export async function describeAccount(store: Store, name: string, now: Date = new Date()): Promise<{ account: Account; tokens: TokenUsage[] }> {
  const account = await requireAccount(store, name);
  const period = currentPeriod(account.quotaPeriod, now);
  const tokens = await Promise.all(
    (await store.listTokens(account.id)).map(async (token): Promise<TokenUsage> => {
      if (token.environment !== 'production') return { token };
      const used = await store.quotaUsed(token.id, period.key);
      return { token, quota: { used, remaining: Math.max(0, account.quotaLimit - used), resetsAt: period.resetsAt } };
    }),
  );
  return { account, tokens };
}

/** Mints a token for the account; the returned token is shown once and never stored. */
export async function issueToken(store: Store, name: string, environment: Environment): Promise<{ token: string; record: TokenRecord }> {
  const account = await requireAccount(store, name);
  const minted = mintToken(environment);
  const record = await store.createToken({ id: minted.id, accountId: account.id, environment, hash: hashToken(minted.token) });
  return { token: minted.token, record };
}

export async function revokeToken(store: Store, tokenOrId: string): Promise<void> {
  const revoked = await store.revokeToken(tokenReference(tokenOrId.trim()));
  if (!revoked) throw new AdminError('no live token matches; it may be revoked already');
}

export const DEMO_ACCOUNT = 'demo';

/**
 * The first-start demo: an account with Career Intelligence, political data and every field, and one
 * sandbox token. It shows the whole contract, political fields included: it is made only outside
 * production mode, and its one token answers from the fictitious sandbox personas.
 */
export async function createDemo(store: Store): Promise<{ account: Account; token: string }> {
  const account = await createAccount(store, DEMO_ACCOUNT, { careerIntelligence: true, politicalData: true });
  const { token } = await issueToken(store, DEMO_ACCOUNT, 'sandbox');
  return { account, token };
}
