// The retry policy's arithmetic: full-jitter backoff bounds and Retry-After parsing; what a refusal keeps.
import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY, PacedEnricher, backoffMs, clientSpacingMs } from '../../core/client/enricher.ts';
import { JITTER_ALLOWANCE_MS, MemoryRateLimiter } from '../../core/limits/rate-limiter.ts';
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

describe('our client’s pacing', () => {
  it('never meets a 429 when its first call arrives later than the service’s jitter allowance', () => {
    for (const rate of [1, 5, 10]) {
      let now = 0;
      const limiter = new MemoryRateLimiter(() => now);
      const spacing = clientSpacingMs(rate);
      // Calls leave at 0, spacing, 2×spacing…; the first is held up on the way (1.4 × the allowance), the others are not.
      const arrivals = Array.from({ length: 3 * rate + 2 }, (_, i) => i * spacing + (i === 0 ? 1.4 * JITTER_ALLOWANCE_MS : 0));
      const refused = arrivals
        .sort((a, b) => a - b)
        .filter((at) => {
          now = at;
          return !limiter.takeNow('token', rate).allowed;
        });
      expect({ rate, refused }).toEqual({ rate, refused: [] });
    }
  });

  it('stays within a few percent of the account rate', () => {
    expect(clientSpacingMs(5)).toBe(205);
    expect(1000 / clientSpacingMs(5)).toBeGreaterThan(4.85);
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

describe("a remote endpoint's refusal", () => {
  it('keeps its error code and its message with the e-mail addresses and phone numbers it quotes masked', async () => {
    const enricher = new PacedEnricher({
      token: 'tok-refusal-masking',
      transport: () =>
        Promise.resolve({
          status: 400,
          body: { error: 'invalid_request', message: 'Invalid request: emails[0]: jane.marker@example.org, phones[0]: +1 404-555-0100 refused.' },
          retryAfterSeconds: null,
          quotaResetsAt: null,
          dataVersion: null,
        }),
    });
    expect(await enricher.enrich({})).toMatchObject({
      kind: 'rejected',
      status: 400,
      message: 'invalid_request: Invalid request: emails[0]: [email], phones[0]: [number] refused.',
    });
  });
});
