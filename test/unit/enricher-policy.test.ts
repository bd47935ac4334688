// The retry policy's arithmetic: full-jitter backoff bounds and Retry-After parsing; what a refusal keeps.
import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY, PacedEnricher, backoffMs } from '../../core/client/enricher.ts';
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
