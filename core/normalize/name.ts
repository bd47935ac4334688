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
export function personName(firstName: string | null | undefined, lastName: string | null | undefined): PersonName | null {
  const first = normalizeName(firstName ?? '');
  const last = normalizeName(lastName ?? '');
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
