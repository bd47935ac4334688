// E-mail normalization for matching: case and surrounding whitespace do not make a different address.

/** Trimmed, lowercased e-mail, or null when the value has no `local@domain` shape. */
export function normalizeEmail(raw: string): string | null {
  const email = raw.trim().toLowerCase();
  const at = email.lastIndexOf('@');
  if (at < 1 || at === email.length - 1 || /\s/.test(email)) return null;
  return email;
}
