// Row ids (jobs, log entries, suppression entries): ULIDs from a pooled random source, increasing in
// creation order within a process, and as random as ulid's own in their random part.
import { describe, expect, it } from 'vitest';
import { timeOrderedIds } from '../../core/storage/time-ordered-ids.ts';

const CROCKFORD = /^[0-9A-HJKMNP-TV-Z]{26}$/;

describe('time-ordered ids', () => {
  it('ids made in one burst are unique ULIDs in the order they were made', () => {
    const next = timeOrderedIds();
    const ids = Array.from({ length: 10_000 }, () => next());
    expect(ids.every((id) => CROCKFORD.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it('the random part draws every one of the 32 characters, at each position', () => {
    // The first id of a factory is all random after the time (later ones of the same millisecond count up).
    const firsts = Array.from({ length: 2_000 }, () => timeOrderedIds()(0));
    for (let position = 10; position < 26; position += 1) {
      expect(new Set(firsts.map((id) => id[position])).size).toBe(32);
    }
  });
});
