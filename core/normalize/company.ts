// Company-name normalization for matching: case, accents, `&`, punctuation, a leading "the" and the
// legal-form suffixes (Inc., LLC, GmbH, …) that one record carries and another leaves off.

/**
 * Legal-form suffixes, as word sequences, dropped from the end of a name. Dotted forms (`L.L.C.`,
 * `S.A.`) arrive here already joined (`llc`, `sa`); spaced ones (`L L C`) as separate words.
 * Longest first, so that `l l c` is tried before `l c` could be.
 */
const LEGAL_SUFFIXES: readonly (readonly string[])[] = [
  ['l', 'l', 'l', 'p'],
  ['l', 'l', 'c'],
  ['l', 'l', 'p'],
  ['p', 'l', 'l', 'c'],
  ['p', 'l', 'c'],
  ['g', 'm', 'b', 'h'],
  ['l', 'p'],
  ['s', 'a'],
  ['a', 'g'],
  ['p', 'c'],
  ['inc'],
  ['incorporated'],
  ['llc'],
  ['lllp'],
  ['pllc'],
  ['ltd'],
  ['limited'],
  ['corp'],
  ['corporation'],
  ['co'],
  ['company'],
  ['plc'],
  ['lp'],
  ['llp'],
  ['pc'],
  ['gmbh'],
  ['sa'],
  ['ag'],
  ['pty'],
].sort((a, b) => b.length - a.length);

/** Single letters joined by dots (`J.P.`, `L.L.C`, `s.a.`) are one word: `jp`, `llc`, `sa`. */
const DOTTED_INITIALS = /\b[a-z](?:\.[a-z])+\.?(?![a-z0-9])/g;

function endsWith(words: readonly string[], suffix: readonly string[]): boolean {
  const offset = words.length - suffix.length;
  for (let i = 0; i < suffix.length; i += 1) {
    if (words[offset + i] !== suffix[i]) return false;
  }
  return true;
}

/**
 * Company name for matching: lowercase ASCII, `&` spelled `and`, punctuation removed, legal-form
 * suffixes and a leading `the` dropped, single spaces. `The Acme Co., Inc.` → `acme`,
 * `AT&T` → `at and t`, `Smith & Sons LLC` → `smith and sons`. A name made only of such words keeps
 * its last one (`The Company` → `company`), so it never normalizes to nothing.
 */
export function normalizeCompany(raw: string): string {
  const ascii = /[\u0080-\uffff]/.test(raw) ? raw.normalize('NFKD').replace(/[\u0300-\u036f]/g, '') : raw;
  const words = ascii
    .toLowerCase()
    .replace(/['’`]/g, '')
    .replace(/&/g, ' and ')
    .replace(DOTTED_INITIALS, (initials) => initials.replace(/\./g, ''))
    .replace(/[^a-z0-9]+/g, ' ')
    .trim()
    .split(' ');
  if (words.length > 1 && words[0] === 'the') words.shift();
  let dropped = true;
  while (dropped) {
    dropped = false;
    for (const suffix of LEGAL_SUFFIXES) {
      if (words.length > suffix.length && endsWith(words, suffix)) {
        words.length -= suffix.length;
        // `Smith & Co.` is Smith: the `and` that joined the suffix goes with it.
        if (words.length > 1 && words[words.length - 1] === 'and') words.length -= 1;
        dropped = true;
        break;
      }
    }
  }
  return words.join(' ');
}
