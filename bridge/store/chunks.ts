// Statement-sized pieces: a multi-row insert or an `in (…)` list stays under SQLite's bound-parameter
// ceiling when its rows are cut into chunks of these sizes.

/** Rows per statement, under SQLite's bound-parameter ceiling. */
export const CHUNK = 50;

export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
