// Turns zod's validation issues into the one-line message of a 400 invalid_request: which field, what
// was wrong, so a caller can fix the request without reading our source.
import type { z } from 'zod';

function fieldPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return 'body';
  return path.map((part, i) => (typeof part === 'number' ? `[${part}]` : i === 0 ? String(part) : `.${String(part)}`)).join('');
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const where = fieldPath(issue.path);
  switch (issue.code) {
    case 'too_big':
      return issue.origin === 'array'
        ? `${where}: at most ${String(issue.maximum)} entries are allowed`
        : `${where}: at most ${String(issue.maximum)} characters are allowed`;
    case 'invalid_type':
      return where === 'body' ? 'body: must be a JSON object' : `${where}: expected ${issue.expected}`;
    default:
      return `${where}: ${issue.message}`;
  }
}

export function describeIssues(error: z.ZodError): string {
  const shown = error.issues.slice(0, 5).map(describeIssue);
  const more = error.issues.length > shown.length ? ` (and ${error.issues.length - shown.length} more)` : '';
  return `Invalid request: ${shown.join('; ')}${more}.`;
}
