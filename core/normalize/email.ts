// E-mail normalization for matching, and the redaction used wherever an address could reach a log.

/** Trimmed, lowercased e-mail, or null when the value has no `local@domain` shape. */
export function normalizeEmail(raw: string): string | null {
  const email = raw.trim().toLowerCase();
  const at = email.lastIndexOf('@');
  if (at < 1 || at === email.length - 1 || /\s/.test(email)) return null;
  return email;
}

/** `a***@example.com`: enough to tell records apart in a log, never the full address. */
export function redactEmail(raw: string): string {
  const at = raw.lastIndexOf('@');
  if (at < 1) return '***';
  return `${raw.slice(0, 1)}***${raw.slice(at)}`;
}
