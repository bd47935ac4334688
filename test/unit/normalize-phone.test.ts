// Unit tests of the North American fast path in normalizePhone: it answers plain NANP numbers without
// libphonenumber-js, and for every input it answers, it answers exactly as libphonenumber-js does.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { normalizePhone, normalizeWithLibphonenumber } from '../../core/normalize/phone.ts';

const libphonenumber = vi.hoisted(() => ({ calls: 0 }));

// Counts calls into libphonenumber-js so the tests can tell which path answered; behaviour is unchanged.
// vi.mock is hoisted above the imports, so phone.ts sees the counting wrapper.
vi.mock('libphonenumber-js', async (importOriginal) => {
  const original = await importOriginal<typeof import('libphonenumber-js')>();
  return {
    ...original,
    parsePhoneNumberFromString: (...args: Parameters<typeof original.parsePhoneNumberFromString>) => {
      libphonenumber.calls += 1;
      return original.parsePhoneNumberFromString(...args);
    },
  };
});

beforeEach(() => {
  libphonenumber.calls = 0;
});

/** mulberry32: a small seeded generator, so a failing case can be reproduced from its seed. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(random: () => number, items: readonly T[]): T {
  const item = items[Math.floor(random() * items.length)];
  if (item === undefined) throw new Error('pick from an empty list');
  return item;
}

function digits(random: () => number, count: number): string {
  let out = '';
  for (let i = 0; i < count; i += 1) out += String(Math.floor(random() * 10));
  return out;
}

/** Ways CRM records write a 10-digit NANP number `a`-`e`-`n` (area code, exchange, line). */
const FORMATS: readonly ((a: string, e: string, n: string) => string)[] = [
  (a, e, n) => `${a}${e}${n}`,
  (a, e, n) => `${a}-${e}-${n}`,
  (a, e, n) => `(${a}) ${e}-${n}`,
  (a, e, n) => `(${a})${e}-${n}`,
  (a, e, n) => `(${a}) ${e} ${n}`,
  (a, e, n) => `${a}.${e}.${n}`,
  (a, e, n) => `${a} ${e} ${n}`,
  (a, e, n) => `${a}/${e}-${n}`,
  (a, e, n) => `${a} / ${e}-${n}`,
  (a, e, n) => `1${a}${e}${n}`,
  (a, e, n) => `1-${a}-${e}-${n}`,
  (a, e, n) => `1 (${a}) ${e}-${n}`,
  (a, e, n) => `1.${a}.${e}.${n}`,
  (a, e, n) => `+1${a}${e}${n}`,
  (a, e, n) => `+1 ${a} ${e} ${n}`,
  (a, e, n) => `+1 (${a}) ${e}-${n}`,
  (a, e, n) => `+1-${a}-${e}-${n}`,
  (a, e, n) => `+1.${a}.${e}.${n}`,
  (a, e, n) => `+ 1 ${a} ${e} ${n}`,
  (a, e, n) => `+(1) ${a}-${e}-${n}`,
  // Shapes the fast path must refuse or get right: a bare +, a misplaced +, doubled punctuation,
  // extensions, letters, other dashes and spaces, long separator runs.
  (a, e, n) => `+${a}${e}${n}`,
  (a, e, n) => `(+1) ${a}-${e}-${n}`,
  (a, e, n) => `++1 ${a} ${e} ${n}`,
  (a, e, n) => `1+${a}${e}${n}`,
  (a, e, n) => `${a}--${e}..${n}-`,
  (a, e, n) => `((${a})) ${e}-${n}`,
  (a, e, n) => `${a}-${e}-${n} x123`,
  (a, e, n) => `${a}-${e}-${n} ext. 45`,
  (a, e, n) => `${a}-${e}-${n}#`,
  (a, e, n) => `${a}-${e}-FLOW`.replace('FLOW', n.slice(0, 2) + 'AB'),
  (a, e, n) => `${a}\u2013${e}\u2013${n}`,
  (a, e, n) => `${a}\u00a0${e}\u00a0${n}`,
  (a, e, n) => `${a}\t${e}\t${n}`,
  (a, e, n) => `${a}-${'-'.repeat(250)}${e}${n}`,
  (a, e, n) => `+44 ${a} ${e} ${n}`,
  (a, e, n) => `tel:+1-${a}-${e}-${n}`,
];

const PADDING: readonly string[] = ['', '', '', ' ', '  ', '\t', '\n', ' \r\n', '\u00a0'];

/** Area codes: real ones, edge digits 0 and 1, and the 011 international prefix libphonenumber-js special-cases. */
function areaCode(random: () => number): string {
  const roll = random();
  if (roll < 0.1) return `01${digits(random, 1)}`;
  if (roll < 0.15) return '011';
  if (roll < 0.25) return `1${digits(random, 2)}`;
  if (roll < 0.3) return '555';
  return digits(random, 3);
}

/** A phone-like string; now and then with a digit too few or too many. */
function generatedPhone(random: () => number): string {
  const a = areaCode(random);
  const e = digits(random, 3);
  let n = digits(random, 4);
  const lengthRoll = random();
  if (lengthRoll < 0.07) n = n.slice(1);
  else if (lengthRoll < 0.14) n += digits(random, 1);
  const format = pick(random, FORMATS);
  return pick(random, PADDING) + format(a, e, n) + pick(random, PADDING);
}

describe('NANP fast path agrees with libphonenumber-js', () => {
  it('gives the libphonenumber-js result for 5,000 generated NANP strings (seed 20240607)', () => {
    const random = seededRandom(20240607);
    const mismatches: string[] = [];
    let fastAnswers = 0;
    for (let i = 0; i < 5000; i += 1) {
      const raw = generatedPhone(random);
      libphonenumber.calls = 0;
      const fast = normalizePhone(raw);
      if (libphonenumber.calls === 0) fastAnswers += 1;
      const reference = normalizeWithLibphonenumber(raw);
      if (fast !== reference) mismatches.push(`${JSON.stringify(raw)}: ${String(fast)} vs ${String(reference)}`);
    }
    expect(mismatches.slice(0, 20)).toEqual([]);
    // The comparison only means something if the fast path answered most of the inputs itself.
    expect(fastAnswers).toBeGreaterThan(1500);
  });

  it.each([
    ['0115553000', '011 starts an international number for libphonenumber-js'],
    ['0114999999', '011 then a digit reads as a country code'],
    ['1234567890', 'a leading 1 in 10 digits is not a trunk prefix'],
    ['0000000000', 'placeholder zeros'],
    ['11234567890', '11 digits whose national part starts with 1'],
    ['+1 023 456 7890', 'an international number whose area code starts with 0'],
    ['+5553000001', 'a + with only ten digits'],
    ['(+1) 555-300-0001', 'a + after an opening bracket'],
    ['555-300-0001-', 'trailing punctuation'],
  ])('edge input %j (%s) matches libphonenumber-js', (raw) => {
    expect(normalizePhone(raw)).toBe(normalizeWithLibphonenumber(raw));
  });
});

describe('NANP fast path is taken for plain North American numbers', () => {
  it.each([
    ['(555) 300-0001', '+15553000001'],
    ['555.300.0001', '+15553000001'],
    ['555/300-0001', '+15553000001'],
    ['5553000001', '+15553000001'],
    ['1-555-300-0001', '+15553000001'],
    ['+1 (555) 300-0001', '+15553000001'],
    ['+15553000001', '+15553000001'],
    ['  404 555 0123\n', '+14045550123'],
  ])('%j gives %j without calling libphonenumber-js', (raw, expected) => {
    expect(normalizePhone(raw)).toBe(expected);
    expect(libphonenumber.calls).toBe(0);
  });
});

describe('NANP fast path leaves everything else to libphonenumber-js', () => {
  it.each([
    ['+44 20 7946 0958', '+442079460958'],
    ['555-300-0001 x123', '+15553000001'],
    ['555-300-0001 ext. 45', '+15553000001'],
    ['555-300-0001#', null],
    ['0115553000', null],
    // A + with ten digits is an international number: +55 is Brazil.
    ['+5553000001', '+5553000001'],
    ['555300000', null],
    ['555300000123', null],
    ['555\t300\t0001', null],
    ['1-800-FLOWERS', null],
  ])('%j goes to libphonenumber-js and gives %j', (raw, expected) => {
    expect(normalizePhone(raw)).toBe(expected);
    expect(libphonenumber.calls).toBeGreaterThan(0);
  });
});
