// Unit tests of the in-process sliding-window rate limiter on a fake clock: never more than `rate`
// admitted in a second, the promise that a client spacing calls 200 ms apart never sees a 429, numbers.
import { describe, expect, it } from 'vitest';
import { MemoryRateLimiter } from '../../core/limits/rate-limiter.ts';

/** A limiter on a clock the test moves by hand. */
function fakeClockLimiter(startMs = 1_000_000) {
  let now = startMs;
  const limiter = new MemoryRateLimiter(() => now);
  return {
    limiter,
    advance(ms: number): void {
      now += ms;
    },
    set(ms: number): void {
      now = ms;
    },
  };
}

/** Deterministic PRNG (mulberry32) so a jittered schedule is the same on every run. */
function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('MemoryRateLimiter burst', () => {
  it('admits a burst of 5 at one instant at rate 5 and refuses the 6th', () => {
    const { limiter } = fakeClockLimiter();
    for (let i = 0; i < 5; i += 1) expect(limiter.takeNow('tok', 5).allowed).toBe(true);
    const sixth = limiter.takeNow('tok', 5);
    expect(sixth.allowed).toBe(false);
    expect(sixth.remaining).toBe(0);
    expect(sixth.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(sixth.limit).toBe(5);
  });

  it('a refused call consumes nothing: once the burst leaves the window, a full burst passes again', () => {
    const { limiter, advance } = fakeClockLimiter();
    for (let i = 0; i < 5; i += 1) limiter.takeNow('tok', 5);
    for (let i = 0; i < 10; i += 1) expect(limiter.takeNow('tok', 5).allowed).toBe(false);
    advance(949);
    expect(limiter.takeNow('tok', 5).allowed).toBe(false);
    advance(1);
    for (let i = 0; i < 5; i += 1) expect(limiter.takeNow('tok', 5).allowed).toBe(true);
    expect(limiter.takeNow('tok', 5).allowed).toBe(false);
  });

  it('more than 5 requests per second gives 429: a burst of 5 then calls every 200 ms are refused', () => {
    const { limiter, set } = fakeClockLimiter(0);
    for (let i = 0; i < 5; i += 1) expect(limiter.takeNow('tok', 5).allowed).toBe(true);
    for (const t of [260, 460, 660, 860]) {
      set(t);
      expect(limiter.takeNow('tok', 5).allowed, `call at ${t} ms`).toBe(false);
    }
  });

  it('never admits more than 5 calls inside any 950 ms, whatever the arrival pattern', () => {
    const { limiter, set } = fakeClockLimiter(0);
    const random = seededRandom(7);
    let t = 0;
    const admitted: number[] = [];
    for (let i = 0; i < 5000; i += 1) {
      t += Math.floor(random() * 120);
      set(t);
      if (limiter.takeNow('tok', 5).allowed) admitted.push(t);
    }
    expect(admitted.length).toBeGreaterThan(100);
    for (let i = 5; i < admitted.length; i += 1) {
      expect((admitted[i] ?? 0) - (admitted[i - 5] ?? 0)).toBeGreaterThanOrEqual(950);
    }
  });

  it('an allowed call has retryAfterSeconds 0', () => {
    const { limiter } = fakeClockLimiter();
    expect(limiter.takeNow('tok', 5).retryAfterSeconds).toBe(0);
  });

  it('a raised rate of 50/s admits 50 at once and refuses the 51st', () => {
    const { limiter } = fakeClockLimiter();
    for (let i = 0; i < 50; i += 1) expect(limiter.takeNow('tok', 50).allowed).toBe(true);
    const refused = limiter.takeNow('tok', 50);
    expect(refused.allowed).toBe(false);
    expect(refused.limit).toBe(50);
    expect(refused.remaining).toBe(0);
  });

  it('after waiting 1 s the full burst is available again', () => {
    const { limiter, advance } = fakeClockLimiter();
    for (let i = 0; i < 5; i += 1) limiter.takeNow('tok', 5);
    expect(limiter.takeNow('tok', 5).allowed).toBe(false);
    advance(1000);
    for (let i = 0; i < 5; i += 1) expect(limiter.takeNow('tok', 5).allowed).toBe(true);
    expect(limiter.takeNow('tok', 5).allowed).toBe(false);
  });
});

describe('MemoryRateLimiter keys', () => {
  it('keys are independent: two tokens each get a burst of 5', () => {
    const { limiter } = fakeClockLimiter();
    for (let i = 0; i < 5; i += 1) expect(limiter.takeNow('tok_a', 5).allowed).toBe(true);
    expect(limiter.takeNow('tok_a', 5).allowed).toBe(false);
    for (let i = 0; i < 5; i += 1) expect(limiter.takeNow('tok_b', 5).allowed).toBe(true);
    expect(limiter.takeNow('tok_b', 5).allowed).toBe(false);
  });

  it('a fresh key is unaffected by another key being refused', () => {
    const { limiter } = fakeClockLimiter();
    for (let i = 0; i < 20; i += 1) limiter.takeNow('tok_a', 5);
    expect(limiter.takeNow('tok_b', 5)).toMatchObject({ allowed: true, remaining: 4 });
  });
});

describe('MemoryRateLimiter steady clients (contract: 200 ms spacing never sees a 429)', () => {
  it('a client spacing calls exactly 200 ms apart is never refused over 1000 calls at rate 5', () => {
    const { limiter, advance } = fakeClockLimiter();
    let refused = 0;
    for (let i = 0; i < 1000; i += 1) {
      if (!limiter.takeNow('tok', 5).allowed) refused += 1;
      advance(200);
    }
    expect(refused).toBe(0);
  });

  it('alternating 190/210 ms gaps (average 200 ms) are never refused over 1000 calls', () => {
    const { limiter, advance } = fakeClockLimiter();
    let refused = 0;
    for (let i = 0; i < 1000; i += 1) {
      if (!limiter.takeNow('tok', 5).allowed) refused += 1;
      advance(i % 2 === 0 ? 190 : 210);
    }
    expect(refused).toBe(0);
  });

  it('a 200 ms send schedule with seeded 0-49 ms network jitter on each arrival is never refused', () => {
    const { limiter, set } = fakeClockLimiter(0);
    const random = seededRandom(20261121);
    const arrivals = Array.from({ length: 1000 }, (_, i) => i * 200 + Math.floor(random() * 50));
    arrivals.sort((a, b) => a - b);
    // The jitter really bunches calls: some arrive well under 200 ms after the previous one.
    const gaps = arrivals.slice(1).map((t, i) => t - (arrivals[i] ?? 0));
    expect(Math.min(...gaps)).toBeLessThan(160);
    let refused = 0;
    for (const t of arrivals) {
      set(t);
      if (!limiter.takeNow('tok', 5).allowed) refused += 1;
    }
    expect(refused).toBe(0);
  });

  it('a client sustaining 150 ms gaps (6.7/s) at rate 5 is refused at its 6th call', () => {
    const { limiter, advance } = fakeClockLimiter();
    let firstRefusal = -1;
    for (let i = 0; i < 100 && firstRefusal < 0; i += 1) {
      if (!limiter.takeNow('tok', 5).allowed) firstRefusal = i;
      advance(150);
    }
    // Calls at 0, 150, …, 600 ms pass; the one at 750 ms would be the 6th inside 950 ms.
    expect(firstRefusal).toBe(5);
  });
});

describe('MemoryRateLimiter RateLimit numbers', () => {
  it('after 1 call at rate 5 remaining is 4', () => {
    const { limiter } = fakeClockLimiter();
    expect(limiter.takeNow('tok', 5)).toMatchObject({ allowed: true, limit: 5, remaining: 4 });
  });

  it('remaining counts down by one per call within a burst', () => {
    const { limiter } = fakeClockLimiter();
    const remaining = Array.from({ length: 5 }, () => limiter.takeNow('tok', 5).remaining);
    expect(remaining).toEqual([4, 3, 2, 1, 0]);
  });

  it('resetSeconds is 1 after a single call on an untouched key (the window is under a second, rounded up)', () => {
    // takeNow always consumes, so the first call is the closest observation of an untouched key.
    const { limiter } = fakeClockLimiter();
    expect(limiter.takeNow('tok', 5).resetSeconds).toBe(1);
  });

  it('resetSeconds does not carry idle time: once the window is empty, one call reports 1 s again', () => {
    const { limiter, advance } = fakeClockLimiter();
    for (let i = 0; i < 5; i += 1) limiter.takeNow('tok', 5);
    const refused = limiter.takeNow('tok', 5);
    expect(refused.resetSeconds).toBeGreaterThanOrEqual(1);
    advance(5000);
    // The window is empty again: one call is 950 ms from leaving it, which rounds up to 1 s.
    expect(limiter.takeNow('tok', 5)).toMatchObject({ allowed: true, remaining: 4, resetSeconds: 1 });
  });

  it('resetSeconds is at least 1 after a burst', () => {
    const { limiter } = fakeClockLimiter();
    let last = limiter.takeNow('tok', 5);
    for (let i = 0; i < 4; i += 1) last = limiter.takeNow('tok', 5);
    expect(last.resetSeconds).toBeGreaterThanOrEqual(1);
  });

  it('a refused call tells the client to wait at least 1 s, and waiting that long admits it', () => {
    const { limiter, advance } = fakeClockLimiter();
    for (let i = 0; i < 5; i += 1) limiter.takeNow('tok', 5);
    const refused = limiter.takeNow('tok', 5);
    expect(refused.allowed).toBe(false);
    advance(refused.retryAfterSeconds * 1000);
    expect(limiter.takeNow('tok', 5).allowed).toBe(true);
  });

  it('take resolves to the same decision as takeNow', async () => {
    const { limiter } = fakeClockLimiter();
    await expect(limiter.take('tok', 5)).resolves.toMatchObject({ allowed: true, remaining: 4, limit: 5 });
  });
});

describe('MemoryRateLimiter at rates whose interval is not a whole number of ms', () => {
  it.each([3, 7, 12, 14, 17, 51, 52, 199])('admits a full burst at rate %i, and not one call more', (rate) => {
    const limiter = new MemoryRateLimiter(() => 0);
    const decisions = Array.from({ length: rate + 1 }, () => limiter.takeNow('k', rate));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(rate);
    expect(decisions.map((d) => d.remaining).slice(0, rate)).toEqual(Array.from({ length: rate }, (_, i) => rate - 1 - i));
  });
});

describe('MemoryRateLimiter peek', () => {
  it('reports the state without taking from the bucket', async () => {
    const limiter = new MemoryRateLimiter(() => 0);
    limiter.takeNow('k', 5);
    for (let i = 0; i < 10; i += 1) expect((await limiter.peek('k', 5)).remaining).toBe(4);
    expect(limiter.takeNow('k', 5).remaining).toBe(3);
  });
});
