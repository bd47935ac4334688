// What HubSpot says when it will not write a record, read from its structured error fields (category,
// subCategory, the property a sub-error names), never from its prose: a portal's validation rule, a
// property marked sensitive, a record that is gone. One tested function decides; the API client and
// the console's sentences use its answer.
import { z } from 'zod';

/**
 * An error of a HubSpot answer, whole-request or one entry of a 207's `errors`: HubSpot's
 * `StandardError`/`Error` shapes, every field optional since each endpoint fills a different subset.
 */
export const HubSpotErrorSchema = z
  .object({
    status: z.string().optional(),
    message: z.string().optional(),
    category: z.string().optional(),
    /** A string on most answers; HubSpot's `StandardError` documents it as an object, so it is read only as a string. */
    subCategory: z
      .unknown()
      .transform((v) => (typeof v === 'string' ? v : undefined))
      .optional(),
    policyName: z.string().optional(),
    correlationId: z.string().optional(),
    errorType: z.string().optional(),
    context: z.record(z.string(), z.unknown()).optional(),
    errors: z
      .array(
        z
          .object({
            message: z.string().optional(),
            code: z.string().optional(),
            subCategory: z
              .unknown()
              .transform((v) => (typeof v === 'string' ? v : undefined))
              .optional(),
            in: z.string().optional(),
            context: z.record(z.string(), z.unknown()).optional(),
          })
          .loose(),
      )
      .optional(),
  })
  .loose();
export type HubSpotErrorBody = z.output<typeof HubSpotErrorSchema>;

/** Parses an error body (JSON text or a value); an answer that is not HubSpot's shape gives `{}`. */
export function hubspotErrorBody(body: unknown): HubSpotErrorBody {
  let value = body;
  if (body === '' || body === null || body === undefined) return {};
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body);
    } catch {
      return { message: body.slice(0, 300) };
    }
  }
  const parsed = HubSpotErrorSchema.safeParse(value);
  return parsed.success ? parsed.data : {};
}

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : typeof value === 'string' ? [value] : [];

/** The record ids an error names (`context.ids`). */
export function errorIds(error: HubSpotErrorBody): string[] {
  return strings(error.context?.ids);
}

/** Property names an error names, in its context or its sub-errors' (`propertyName`, `name`). */
export function errorProperties(error: HubSpotErrorBody): string[] {
  const names = new Set<string>();
  for (const context of [error.context, ...(error.errors ?? []).map((e) => e.context)]) {
    if (context === undefined) continue;
    for (const key of ['propertyName', 'propertyNames', 'property', 'name']) for (const name of strings(context[key])) names.add(name);
  }
  // HubSpot's property-value validation lists its problems as JSON inside the message (`"name":"…"`).
  for (const match of (error.message ?? '').matchAll(/"name":"([a-z0-9_]+)"/g)) if (match[1] !== undefined) names.add(match[1]);
  return [...names];
}

/**
 * What may be kept of an error (the enrichment log, a job's error, a log line): its category, the codes
 * of its sub-errors and property-value problems with the properties they name, and its correlation id
 * for HubSpot's support. Never its prose: a VALIDATION_ERROR's message quotes the values sent and the
 * record's own ("Email address jane@… is invalid"), which are personal data.
 */
export function errorSummary(error: HubSpotErrorBody): string {
  const codes = new Set<string>();
  for (const problem of valueProblems(error.message ?? '')) codes.add(problem.name === null ? problem.code : `${problem.code} (${problem.name})`);
  for (const sub of error.errors ?? []) {
    const code = sub.code ?? sub.subCategory;
    if (code !== undefined) codes.add(code);
  }
  if (error.subCategory !== undefined) codes.add(error.subCategory);
  const head = [error.category ?? error.errorType ?? error.policyName ?? 'error', ...codes].join(', ');
  return error.correlationId === undefined ? head : `${head}; correlation id ${error.correlationId}`;
}

/** The rule HubSpot named: a sub-error's code or subCategory, else the error's own subCategory. */
function ruleOf(error: HubSpotErrorBody): string | null {
  for (const sub of error.errors ?? []) {
    const rule = sub.code ?? sub.subCategory;
    if (rule !== undefined) return rule;
  }
  return error.subCategory ?? null;
}

/** Why HubSpot will not take a record's values, as the pipeline acts on it. */
export type HubSpotRefusal =
  /** A portal's own rule (required or conditionally required property, a form rule), or a value or property it refused. */
  | {
      readonly kind: 'validation';
      readonly rule: string | null;
      readonly properties: readonly string[];
      readonly message: string;
      /** `rule`: the portal's own; `value`: a value of ours the property does not take (an option, a number); `property`: the property is missing or read-only. */
      readonly cause: 'rule' | 'value' | 'property';
    }
  /** A property the portal marked sensitive, which an app without sensitive-data scopes may not write. */
  | { readonly kind: 'sensitive'; readonly properties: readonly string[]; readonly message: string }
  | { readonly kind: 'not_found'; readonly message: string }
  | { readonly kind: 'other'; readonly message: string };

const SENSITIVE = /(^|[._])(highly_)?sensitive([._]|$)/i;

/**
 * HubSpot's property-value validation, as JSON inside its message ("Property values were not valid:
 * [{…, "error": "PROPERTY_DOESNT_EXIST", "name": "…"}]"): the codes it names.
 */
function valueErrorCodes(message: string): string[] {
  return valueProblems(message).map((problem) => problem.code);
}

/** Each problem of a property-value validation's message: its code and the property it names, read from the JSON. */
function valueProblems(message: string): { readonly code: string; readonly name: string | null }[] {
  const problems: { code: string; name: string | null }[] = [];
  for (const match of message.matchAll(/\{[^{}]*"error":"([A-Z_]+)"[^{}]*\}/g)) {
    if (match[1] === undefined) continue;
    const name = /"name":"([A-Za-z0-9_.]+)"/.exec(match[0])?.[1] ?? null;
    problems.push({ code: match[1], name });
  }
  if (problems.length > 0) return problems;
  // Not one object per problem (a brace inside a quoted value): the codes alone.
  for (const match of message.matchAll(/"error":"([A-Z_]+)"/g)) if (match[1] !== undefined) problems.push({ code: match[1], name: null });
  return problems;
}

/** Codes that say our request is wrong for every record alike (a property missing or read-only): no record's own rule. */
const DEFINITION_ERRORS = new Set(['PROPERTY_DOESNT_EXIST', 'READ_ONLY_VALUE']);

/** Whether the sub-errors name scopes, and every one of them is a sensitive-data scope. */
function onlySensitiveScopes(scopes: readonly string[]): boolean {
  return scopes.length > 0 && scopes.every((scope) => SENSITIVE.test(scope));
}

/** Reads one error's category and structured fields into a refusal. */
export function refusalOf(error: HubSpotErrorBody): HubSpotRefusal {
  // HubSpot's prose is read for its codes below, never kept: it quotes values.
  const message = errorSummary(error);
  const category = error.category ?? '';
  const details = error.errors ?? [];
  const labels = [category, error.subCategory, ...details.flatMap((e) => [e.subCategory, e.code])].filter((s): s is string => s !== undefined);
  const scopes = details.flatMap((e) => strings(e.context?.requiredGranularScopes)).concat(strings(error.context?.requiredGranularScopes));
  if (category === 'OBJECT_NOT_FOUND') return { kind: 'not_found', message };
  if (labels.some((label) => SENSITIVE.test(label)) || onlySensitiveScopes(scopes)) {
    return { kind: 'sensitive', properties: errorProperties(error), message };
  }
  if (category === 'VALIDATION_ERROR') {
    const codes = valueErrorCodes(error.message ?? '');
    const cause = codes.some((code) => DEFINITION_ERRORS.has(code)) ? 'property' : codes.length > 0 ? 'value' : 'rule';
    return { kind: 'validation', rule: ruleOf(error) ?? codes[0] ?? null, properties: errorProperties(error), message, cause };
  }
  return { kind: 'other', message };
}

/**
 * The sentence an admin reads in the console's log and overview: what HubSpot refused, and what to do
 * about it in HubSpot or in the installation's settings.
 */
export function refusalSentence(refusal: HubSpotRefusal): string {
  const named = (properties: readonly string[]) => (properties.length === 0 ? 'a property' : properties.map((p) => `"${p}"`).join(', '));
  const code = refusal.kind === 'validation' && refusal.rule !== null ? ` (${refusal.rule})` : '';
  if (refusal.kind === 'validation' && refusal.cause === 'property') {
    return (
      `HubSpot refused ${named(refusal.properties)}${code}: the property is missing or read-only in this portal. ` +
      "Reconnect the app (it provisions its properties again) or turn the field off in this installation's settings; the record is not retried."
    );
  }
  if (refusal.kind === 'validation' && refusal.cause === 'value') {
    return (
      `HubSpot refused the value written to ${named(refusal.properties)}${code}: ${refusal.message}. ` +
      "The property's definition in HubSpot (its options or type) was changed: reconnect the app to restore it, or turn the field off in this installation's settings; the record is not retried."
    );
  }
  if (refusal.kind === 'validation') {
    return (
      `HubSpot's validation rules for this portal refused ${named(refusal.properties)}${code}: ${refusal.message}. ` +
      "Change the rule in HubSpot (Settings › Properties or the contact form rules), or turn the field off in this installation's settings; the record is not retried."
    );
  }
  if (refusal.kind === 'sensitive') {
    return (
      `HubSpot refused ${named(refusal.properties)}: the portal marks it as sensitive data, which this app may not write. ` +
      "Unmark it in HubSpot (Settings › Properties › Sensitive data) or turn the field off in this installation's settings; the record is not retried."
    );
  }
  return refusal.message;
}
