// Household wealth and the household fields of the synthetic snapshot: a log-normal net worth with a
// thin ultra-high tail, and every flag drawn with odds that depend on it, so the values agree.
import { STATE_LEAN } from './places.ts';
import { type Rng, Weighted } from './random.ts';
import { isoDay } from './careers.ts';

/** Median household net worth of the generated data and the spread of its logarithm. */
const MEDIAN_NET_WORTH = 400_000;
const LOG_SIGMA = 1.65;

/** Raw net worth in dollars, log-normal between $20K and $5B. */
export function drawNetWorth(rng: Rng): number {
  const raw = Math.exp(Math.log(MEDIAN_NET_WORTH) + LOG_SIGMA * rng.normal());
  return Math.min(5_000_000_000, Math.max(20_000, raw));
}

/** 0: under $250K, 1: under $1M, 2: under $5M, 3: under $10M, 4: under $30M, 5: $30M and over (ultra-high). */
export function wealthTier(netWorth: number): number {
  if (netWorth < 250_000) return 0;
  if (netWorth < 1_000_000) return 1;
  if (netWorth < 5_000_000) return 2;
  if (netWorth < 10_000_000) return 3;
  if (netWorth < 30_000_000) return 4;
  return 5;
}

type ByTier = readonly [number, number, number, number, number, number];

/** Odds per wealth tier. */
const ODDS = {
  multiProperty: [0.03, 0.08, 0.2, 0.35, 0.45, 0.55],
  rentalProperty: [0.04, 0.1, 0.22, 0.35, 0.45, 0.55],
  boat: [0.02, 0.04, 0.09, 0.18, 0.28, 0.4],
  plane: [0.001, 0.002, 0.01, 0.04, 0.12, 0.35],
  recentMover: [0.1, 0.08, 0.07, 0.06, 0.06, 0.05],
  giver: [0.35, 0.55, 0.72, 0.82, 0.88, 0.94],
  topDonorIfGiver: [0.002, 0.02, 0.12, 0.35, 0.55, 0.8],
  donorAdvisedIfGiver: [0.002, 0.01, 0.06, 0.18, 0.35, 0.55],
  foundation: [0.003, 0.01, 0.04, 0.12, 0.25, 0.5],
  board: [0.01, 0.03, 0.08, 0.15, 0.25, 0.4],
  politicalDonor: [0.08, 0.15, 0.28, 0.4, 0.5, 0.65],
  topPoliticalIfDonor: [0, 0.005, 0.03, 0.1, 0.25, 0.5],
  moneyInMotion: [0.06, 0.08, 0.12, 0.15, 0.18, 0.22],
  liquidity: [0.01, 0.02, 0.04, 0.07, 0.1, 0.15],
  debt: [0.78, 0.72, 0.55, 0.42, 0.35, 0.25],
  crypto: [0.1, 0.12, 0.15, 0.17, 0.18, 0.2],
  smallBusiness: [0.05, 0.09, 0.18, 0.28, 0.35, 0.4],
  trust: [0.01, 0.04, 0.15, 0.3, 0.45, 0.7],
  loanToValue: [0.65, 0.55, 0.4, 0.3, 0.22, 0.15],
  secondHome: [0.005, 0.02, 0.12, 0.3, 0.5, 0.7],
  thirdHomeIfSecond: [0, 0, 0.05, 0.15, 0.3, 0.5],
} as const satisfies Record<string, ByTier>;

export function odds(table: keyof typeof ODDS, tier: number): number {
  return ODDS[table][tier] ?? 0;
}

/** NTEE major groups weighted by their share of US individual giving (religion and education lead). */
const NTEE = new Weighted([
  ['X', 25],
  ['B', 15],
  ['P', 14],
  ['E', 10],
  ['A', 8],
  ['T', 6],
  ['O', 5],
  ['W', 4],
  ['S', 4],
  ['D', 4],
  ['C', 4],
  ['Q', 3],
  ['K', 3],
  ['L', 3],
  ['G', 3],
  ['H', 2],
  ['N', 2],
  ['R', 2],
  ['U', 1],
  ['F', 1],
  ['I', 1],
  ['J', 1],
  ['M', 1],
] as const);

const PARTY_BY_LEAN = {
  [-1]: new Weighted([
    ['Democrat', 52],
    ['Republican', 28],
    ['Independent', 20],
  ] as const),
  0: new Weighted([
    ['Democrat', 41],
    ['Republican', 39],
    ['Independent', 20],
  ] as const),
  1: new Weighted([
    ['Democrat', 30],
    ['Republican', 50],
    ['Independent', 20],
  ] as const),
} as const;

const round100k = (n: number): number => Math.round(n / 100_000) * 100_000;

export interface HouseholdInput {
  readonly netWorth: number;
  /** State or province of the primary address. */
  readonly state: string;
  readonly addressCount: number;
  readonly today: number;
}

/** Every household field of the contract except windfall_id and confidence, in the contract's order. */
export function householdFields(rng: Rng, input: HouseholdInput): Record<string, unknown> {
  const tier = wealthTier(input.netWorth);
  const p = (table: keyof typeof ODDS): boolean => rng.chance(odds(table, tier));
  const netWorth = Math.max(100_000, round100k(input.netWorth));
  const spread = 0.1 + 0.25 * rng.next();
  const low = Math.max(0, Math.min(netWorth - 100_000, round100k(netWorth * (1 - spread))));
  const high = Math.max(netWorth + 100_000, round100k(netWorth * (1 + spread)));
  const debt = p('debt');
  const loanToValue = debt ? Math.round(Math.min(0.95, Math.max(0.02, odds('loanToValue', tier) + 0.15 * rng.normal())) * 100) / 100 : 0;
  const giver = p('giver');
  const topDonor = giver && p('topDonorIfGiver');
  const causes = new Set<string>();
  if (giver) for (let n = 1 + (rng.chance(0.45) ? 1 : 0) + (rng.chance(0.2) ? 1 : 0); causes.size < n;) causes.add(NTEE.draw(rng));
  const regional: string[] = [];
  if (giver) {
    const national = rng.chance(tier >= 3 ? 0.6 : 0.3);
    const local = !national || rng.chance(0.7);
    if (national) regional.push('National');
    if (local) regional.push(input.state);
  }
  const rental = p('rentalProperty');
  const foundation = p('foundation');
  const politicalDonor = p('politicalDonor');
  return {
    net_worth: netWorth,
    low_confidence_net_worth: low,
    high_confidence_net_worth: high,
    net_worth_last_calculated: isoDay(input.today - rng.int(150)),
    loan_to_value: loanToValue,
    multi_property_owner: input.addressCount > 1 || rental || p('multiProperty'),
    rental_property_owner: rental,
    boat_owner: p('boat'),
    plane_owner: p('plane'),
    recent_mover: p('recentMover'),
    recently_divorced: rng.chance(0.02),
    recent_death_in_family: rng.chance(0.012),
    philanthropic_giver: giver,
    top_philanthropic_donor: topDonor,
    philanthropic_cause: [...causes].sort(),
    regional_focus: regional,
    donor_advised_funds: giver && p('donorAdvisedIfGiver'),
    foundation_association: foundation,
    foundation_officer_trustee: foundation && rng.chance(0.35),
    nonprofit_board_member: p('board'),
    political_donor: politicalDonor,
    top_political_donor: politicalDonor && p('topPoliticalIfDonor'),
    political_party: PARTY_BY_LEAN[STATE_LEAN[input.state] ?? 0].draw(rng),
    money_in_motion: p('moneyInMotion'),
    liquidity_trigger: p('liquidity'),
    has_household_debt: debt,
    crypto_interest: p('crypto'),
    small_business_owner: p('smallBusiness'),
    trust_association: p('trust'),
    primary_address_incorrect: rng.chance(0.02),
  };
}
