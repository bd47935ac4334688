// The retry policy's arithmetic: full-jitter backoff bounds and Retry-After parsing.
import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY, backoffMs } from '../../core/client/enricher.ts';
import { parseRetryAfter } from '../../core/client/http-enricher.ts';

describe('backoff with full jitter', () => {
  it('grows exponentially from the base and never passes the cap', () => {
    const policy = { maxAttempts: 10, baseDelayMs: 100, maxDelayMs: 1000 };
    expect(backoffMs(1, policy, () => 1)).toBe(100);
    expect(backoffMs(3, policy, () => 1)).toBe(400);
    expect(backoffMs(8, policy, () => 1)).toBe(1000);
    expect(backoffMs(3, policy, () => 0)).toBe(0);
    expect(backoffMs(3, policy, () => 0.5)).toBe(200);
  });

  it('is bounded by default', () => {
    expect(DEFAULT_RETRY.maxAttempts).toBeGreaterThan(1);
    expect(backoffMs(50, DEFAULT_RETRY, () => 1)).toBe(DEFAULT_RETRY.maxDelayMs);
  });
});

describe('Retry-After', () => {
  it('reads seconds and HTTP dates, and ignores what it cannot read', () => {
    const now = Date.parse('2026-11-21T12:00:00Z');
    expect(parseRetryAfter('2', now)).toBe(2);
    expect(parseRetryAfter('Sat, 21 Nov 2026 12:00:05 GMT', now)).toBe(5);
    expect(parseRetryAfter('Sat, 21 Nov 2026 11:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter(null, now)).toBeNull();
    expect(parseRetryAfter('soon', now)).toBeNull();
  });
});
