// The CLI's one parser of whole-number options, for commander: digits only (no signs, exponents,
// fractions or spaces), within bounds, and a message that says which.
import { InvalidArgumentError } from 'commander';

/** A commander option parser for whole numbers from `min` to `max` (no upper bound when it is absent). */
export function wholeNumber(min: number, max?: number): (value: string) => number {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || n < min || (max !== undefined && n > max) || !Number.isSafeInteger(n)) {
      throw new InvalidArgumentError(max === undefined ? `expected a whole number of at least ${min}` : `expected a whole number from ${min} to ${max}`);
    }
    return n;
  };
}
