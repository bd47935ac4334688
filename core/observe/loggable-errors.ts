// What of an error may reach a log line, a stored error text or the console: no personal data. A
// database error is reduced to its code and the names of its constraint, table and column (never its
// detail, where, parameters or a message that quotes an input); a CRM's HTTP error to its status, the
// CRM's category or error code and its correlation id (never its body); any other message has its
// e-mail addresses and phone numbers masked. Only the fields named here are kept of an error object.
import { databaseErrorOf } from '../storage/errors.ts';

const EMAIL = /[^\s"'`<>()[\]{},;:\\]+@[^\s"'`<>()[\]{},;:\\]+/g;
/** Seven to fifteen digits, alone or grouped by spaces, dots, dashes or brackets, standing on their own. */
const PHONE = /(?<![\w.-])\+?\(?\d(?:[\s().-]{0,2}\d){6,14}(?![\w-])/g;
/** What PHONE also matches that is no phone number: a calendar date, an IPv4 address. */
const NOT_A_PHONE = /^(\d{4}-\d{2}-\d{2}|\d{1,3}(\.\d{1,3}){3})$/;

/** A text with its e-mail addresses and phone numbers (any run of 7 to 15 digits) masked. */
export function maskPersonalText(text: string): string {
  return text.replace(EMAIL, '[email]').replace(PHONE, (match) => (NOT_A_PHONE.test(match.trim()) ? match : '[number]'));
}

/** Primitive fields kept of an error object, under the same name. */
const KEPT_FIELDS = ['code', 'kind', 'status', 'statusCode', 'category', 'errorCode', 'correlationId', 'requestId', 'retryAt'] as const;
const MAX_DEPTH = 3;

export interface LoggableError {
  readonly type: string;
  readonly message: string;
  readonly stack?: string;
  readonly [field: string]: unknown;
}

function keptValue(value: unknown): string | number | boolean | undefined {
  if (typeof value === 'string') return maskPersonalText(value).slice(0, 200);
  if (typeof value === 'number' || typeof value === 'boolean') return value;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : value.toISOString();
  return undefined;
}

/** A database error's message: its code and what it concerns, by name. */
function databaseMessage(facts: NonNullable<ReturnType<typeof databaseErrorOf>>): string {
  const names = (['constraint', 'table', 'column'] as const).flatMap((name) => (facts[name] === undefined ? [] : [`${name} ${facts[name]}`]));
  return `database error ${facts.code}${names.length === 0 ? '' : ` (${names.join(', ')})`}`;
}

/**
 * An error's message as it may be shown or stored: a database error's code and names, any other
 * message masked (a JSON parser's, which quotes the text it could not read, without its quotes).
 */
export function loggableMessage(error: unknown): string {
  const facts = databaseErrorOf(error);
  if (facts !== null) return databaseMessage(facts);
  if (!(error instanceof Error)) return maskPersonalText(typeof error === 'string' ? error : String(error)).slice(0, 1000);
  const message = error instanceof SyntaxError ? error.message.replace(/"[^"]*"|'[^']*'/g, '"…"') : error.message;
  return maskPersonalText(message).slice(0, 1000);
}

/** The stack's frames under the loggable message: the first line of a stack repeats the raw message. */
function loggableStack(error: Error, type: string, message: string): string | undefined {
  if (typeof error.stack !== 'string') return undefined;
  const frames = error.stack.split('\n').filter((line) => /^\s+at /.test(line));
  return [`${type}: ${message}`, ...frames].join('\n');
}

function reduce(error: unknown, depth: number): LoggableError {
  if (!(error instanceof Error)) return { type: typeof error, message: loggableMessage(error) };
  const type = error.constructor.name === 'Object' || error.constructor.name === '' ? error.name : error.constructor.name;
  const message = loggableMessage(error);
  const out: Record<string, unknown> = { type, message };
  const facts = databaseErrorOf(error);
  if (facts !== null) Object.assign(out, facts);
  for (const field of KEPT_FIELDS) {
    if (field in out) continue;
    const value = keptValue(Reflect.get(error, field));
    if (value !== undefined) out[field] = value;
  }
  const stack = loggableStack(error, type, message);
  if (stack !== undefined) out['stack'] = stack;
  if (depth < MAX_DEPTH && error.cause !== undefined && error.cause !== error) out['cause'] = reduce(error.cause, depth + 1);
  if (depth < MAX_DEPTH && error instanceof AggregateError && Array.isArray(error.errors)) {
    out['errors'] = error.errors.slice(0, 10).map((inner: unknown) => reduce(inner, depth + 1));
  }
  return { ...out, type, message };
}

/**
 * The error as a log line may carry it (the logger's `err` serializer): type, loggable message, stack
 * frames, the kept fields and the cause, reduced the same way. Everything else the error object holds
 * (a pg error's detail and parameters, a CRM error's body, a parser error's body) is left out.
 */
export function loggableError(error: unknown): LoggableError {
  return reduce(error, 0);
}

/** What a command prints when it ends on an error it did not expect: the reduced error's stack (or type and message). */
export function loggableErrorText(error: unknown): string {
  const reduced = loggableError(error);
  return reduced.stack ?? `${reduced.type}: ${reduced.message}`;
}
