// One rule for counts in words, on the console's pages and in the CLI: "1 contact", "2 contacts",
// "0 units", with the count grouped.
import { describe, expect, it } from 'vitest';
import { plural, pluralOf } from '../../server/plural.ts';
import { enqueueQuestion } from '../../server/cli/backfill.ts';

describe('counts in words', () => {
  it('name one thing in the singular and any other count in the plural', () => {
    expect(plural(1, 'unit')).toBe('1 unit');
    expect(plural(0, 'unit')).toBe('0 units');
    expect(plural(2, 'unit')).toBe('2 units');
    expect(plural(1234, 'dead job')).toBe('1,234 dead jobs');
    expect(plural(2, 'person', 'people')).toBe('2 people');
    expect(pluralOf(1, 'contacts')).toBe('1 contact');
    expect(pluralOf(3, 'leads')).toBe('3 leads');
  });

  it('make the CLI ask to enqueue "1 contact (at most 1 quota unit)", never "1 contacts (at most 1 quota units)"', () => {
    expect(enqueueQuestion(1, 'contacts', 1)).toBe('Enqueue 1 contact for enrichment (at most 1 quota unit)? [y/N] ');
    expect(enqueueQuestion(4, 'contacts', 0)).toBe('Enqueue 4 contacts for enrichment (at most 0 quota units)? [y/N] ');
  });
});
