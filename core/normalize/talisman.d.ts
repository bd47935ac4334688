// Types for the three talisman modules the matcher uses (the package ships none): each module's
// default export is the function below (CommonJS `module.exports = fn`).
declare module 'talisman/metrics/jaro-winkler.js' {
  /** Jaro-Winkler similarity in [0, 1] (prefix boost 0.1 above 0.7). */
  const jaroWinkler: (a: string, b: string) => number;
  export default jaroWinkler;
}

declare module 'talisman/metrics/damerau-levenshtein.js' {
  /**
   * Edits (insertions, deletions, substitutions, transpositions of neighbours) between a and b; its
   * `limited(max, a, b)` is the same count when at most max, else Infinity, and stops once past max.
   */
  const damerauLevenshtein: ((a: string, b: string) => number) & { readonly limited: (max: number, a: string, b: string) => number };
  export default damerauLevenshtein;
}

declare module 'talisman/phonetics/double-metaphone.js' {
  /** The primary and alternate Double Metaphone codes of a word. */
  const doubleMetaphone: (word: string) => [string, string];
  export default doubleMetaphone;
}
