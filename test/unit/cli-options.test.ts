// The CLI's one whole-number option parser (server/cli/options.ts).
import { InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { wholeNumber } from '../../server/cli/options.ts';

describe('wholeNumber', () => {
  it('takes digits within the bounds', () => {
    expect(wholeNumber(1)('1')).toBe(1);
    expect(wholeNumber(0, 3650)('3650')).toBe(3650);
    expect(wholeNumber(0)('0')).toBe(0);
  });

  it('refuses signs, exponents, fractions, spaces, hex and numbers past the bounds, saying which bounds', () => {
    for (const bad of ['-1', '+1', '1e3', '1.5', ' 1', '0x10', '', '9007199254740993']) expect(() => wholeNumber(0)(bad)).toThrow(InvalidArgumentError);
    expect(() => wholeNumber(1)('0')).toThrow('expected a whole number of at least 1');
    expect(() => wholeNumber(1, 32)('33')).toThrow('expected a whole number from 1 to 32');
  });
});
