// What the console reads from a query string or an urlencoded form: express hands either as nested
// values of any shape; a page reads only single strings, and a count only as a bounded whole number.

/** Each single-string value (what a refused form or filter shows back); repeated or nested keys are left out. */
export function stringFields(input: unknown): Record<string, string> {
  const fields: Record<string, string> = {};
  if (typeof input !== 'object' || input === null) return fields;
  for (const [key, value] of Object.entries(input)) if (typeof value === 'string') fields[key] = value;
  return fields;
}

/** One value as a single string, or undefined. */
export function queryText(query: unknown, name: string): string | undefined {
  return stringFields(query)[name];
}

/** One value as a whole number of at most nine digits (a count a redirect carried), or null. */
export function queryCount(query: unknown, name: string): number | null {
  const text = queryText(query, name);
  return text !== undefined && /^\d{1,9}$/.test(text) ? Number(text) : null;
}
