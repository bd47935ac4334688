// What every signed request we take has in common, whichever CRM sends it: the body's own bytes, one
// header value (missing, empty or repeated is none), HMAC-SHA256 and SHA-256 over those bytes, a
// timestamp window that refuses numbers written any other way than digits, and a compare whose time
// depends on neither contents nor lengths. Each CRM's scheme (hubspot/signature.ts, salesforce/events.ts)
// is a few lines of what it signs, on top of these.
import { createHash, createHmac } from 'node:crypto';
import { constantTimeEqual } from '../../core/secrets/constant-time.ts';

export { constantTimeEqual };

/** The body exactly as received. A string is taken as its UTF-8 bytes. */
export type RawBody = Buffer | Uint8Array | string;

/** A header as Node gives it: absent, once, or repeated. */
export type HeaderValue = string | readonly string[] | undefined;

export type Headers = Readonly<Record<string, HeaderValue>>;

export function rawBytes(body: RawBody): Buffer {
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  return Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
}

/** One non-empty value, trimmed; missing, empty or repeated is none. */
export function singleValue(value: HeaderValue): string | null {
  const values = typeof value === 'string' ? [value] : (value ?? []);
  const only = values.length === 1 ? values[0]?.trim() : undefined;
  return only === undefined || only === '' ? null : only;
}

/** One non-empty value of a header, its name matched without regard to case; missing, empty or repeated is none. */
export function singleHeader(headers: Headers, name: string): string | null {
  const wanted = name.toLowerCase();
  const values: string[] = [];
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== wanted) continue;
    if (typeof value === 'string') values.push(value);
    else if (value !== undefined) values.push(...value);
  }
  return singleValue(values);
}

/** A part of what is signed: text (UTF-8) or the raw body. */
export type SignedPart = string | RawBody;

const feed = <T extends { update(data: Buffer): T }>(hash: T, parts: readonly SignedPart[]): T => {
  for (const part of parts) hash.update(rawBytes(part));
  return hash;
};

/** HMAC-SHA256 with `secret` over the parts in order, with nothing between them. */
export function hmacSha256(secret: string, parts: readonly SignedPart[]): Buffer {
  return feed(createHmac('sha256', secret), parts).digest();
}

/** SHA-256 over the parts in order, with nothing between them. */
export function sha256(parts: readonly SignedPart[]): Buffer {
  return feed(createHash('sha256'), parts).digest();
}

export type TimestampFailure =
  /** Not digits (Number() would take '1e12', '0x1F', ' 12 ' and '-5'), or too many of them. */
  | 'invalid_timestamp'
  /** Older than the window: a replay, or a delivery that waited too long. */
  | 'stale_timestamp'
  /** Further ahead than the window: a clock far off, or a forged header. */
  | 'future_timestamp';

/**
 * Whether a signed timestamp is within `windowMs` of `nowMs`, either way. `unitMs`: what one unit of
 * the timestamp is (1 for milliseconds, 1000 for seconds). Null when it is.
 */
export function timestampOutsideWindow(
  timestamp: string,
  options: { readonly nowMs: number; readonly windowMs: number; readonly unitMs: number; readonly maxDigits: number },
): TimestampFailure | null {
  if (!new RegExp(`^\\d{1,${options.maxDigits}}$`).test(timestamp)) return 'invalid_timestamp';
  const age = options.nowMs - Number(timestamp) * options.unitMs;
  if (age > options.windowMs) return 'stale_timestamp';
  if (age < -options.windowMs) return 'future_timestamp';
  return null;
}
