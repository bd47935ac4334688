// Person-name normalization for matching: case, accents, punctuation, spacing and middle initials.

/** Lowercase ASCII-folded name with punctuation removed and single spaces: `  O'Brien-Smith ` → `obrien smith`. */
export function normalizeName(raw: string): string {
  return raw
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/['’`]/g, '')
    .replace(/[^a-z0-9]+/g, ' ')
    .trim();
}

export interface PersonName {
  readonly first: string;
  readonly last: string;
}

/**
 * First and last name for matching. The spec lets a caller with only a full name put it in
 * last_name with first_name empty; that form is split on its first and last words. Middle names
 * and initials (`JOHN Q. SMITH`) are dropped. Null when either part is missing.
 */
/** Generational suffixes a CRM keeps in the surname field: `Smith Jr.` is the Smith we know. */
const SURNAME_SUFFIX = /\s(jr|sr|ii|iii|iv|v)$/;

export function personName(firstName: string | null | undefined, lastName: string | null | undefined): PersonName | null {
  const first = normalizeName(firstName ?? '');
  const last = normalizeName(lastName ?? '').replace(SURNAME_SUFFIX, '');
  if (first !== '' && last !== '') {
    return { first: first.split(' ')[0] ?? first, last };
  }
  if (first === '' && last.includes(' ')) {
    const words = last.split(' ');
    const head = words[0];
    const tail = words[words.length - 1];
    if (head !== undefined && tail !== undefined) return { first: head, last: tail };
  }
  return null;
}

/**
 * True when two normalized names differ by at most one edit (insertion, deletion, substitution or
 * swap of neighbours): `tompson` ~ `thompson`, `jhon` ~ `john`. Names under 4 letters must be equal, and a
 * substitution counts only from 5 letters on, since one edit there is most of the name.
 */
export function withinOneEdit(a: string, b: string): boolean {
  if (a === b) return true;
  if (Math.min(a.length, b.length) < 4 || Math.abs(a.length - b.length) > 1) return false;
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i += 1;
  if (a.length === b.length) {
    // A substitution in a short name makes another name (mark, mary): only from five letters on.
    if (a.length >= 5 && a.slice(i + 1) === b.slice(i + 1)) return true;
    return a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2); // swap
  }
  const [longer, shorter] = a.length > b.length ? [a, b] : [b, a];
  return longer.slice(i + 1) === shorter.slice(i); // insertion or deletion
}

/**
 * The name as far as it was given: both parts when personName reads them, else the one part supplied
 * ('' for the other). Error-tolerant matching compares even a lone surname or given name.
 */
export function partialName(firstName: string | null | undefined, lastName: string | null | undefined): PersonName {
  const both = personName(firstName, lastName);
  if (both !== null) return both;
  const first = normalizeName(firstName ?? '');
  return { first: first.split(' ')[0] ?? first, last: normalizeName(lastName ?? '').replace(SURNAME_SUFFIX, '') };
}
