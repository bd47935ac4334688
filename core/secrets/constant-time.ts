// Comparing a secret someone sent with the one we hold, without telling them by the time it takes.
import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Equal strings, in time that depends on neither their contents nor their lengths: both sides are
 * hashed to 32 bytes first, so `timingSafeEqual` never sees unequal lengths.
 */
export function constantTimeEqual(expected: string, given: string): boolean {
  const a = createHash('sha256').update(expected, 'utf8').digest();
  const b = createHash('sha256').update(given, 'utf8').digest();
  return timingSafeEqual(a, b);
}
