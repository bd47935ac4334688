// Counts in words, as English says them: `1 contact`, `2 contacts`, `0 units`. One rule (the en-US
// plural rules) for the console's pages and the command line alike.
const RULES = new Intl.PluralRules('en-US');

/** A count and its noun: `one` for one, `other` (`one` + s unless given) for any other count; the count grouped (`1,234`). */
export function plural(count: number, one: string, other = `${one}s`): string {
  return `${count.toLocaleString('en-US')} ${RULES.select(count) === 'one' ? one : other}`;
}

/**
 * A count of records by the plural a CRM module names them with (a backfill's `contacts`, `leads`,
 * `records`): `1 contact`, `2 contacts`. The singular is the plural without its final s, which those
 * nouns are.
 */
export function pluralOf(count: number, nouns: string): string {
  return plural(count, nouns.replace(/s$/, ''), nouns);
}
