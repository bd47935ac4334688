// The JSON trigger for Apex and Flow HTTP callouts (`POST /webhooks/salesforce/events`): the body
// `{orgId, object, ids}` checked with zod, and its HMAC signature with the installation's secret.
//
// Outbound messages cannot be signed (crm-platforms.md, section 7); this route can, so it is:
//   X-Enrichbridge-Timestamp: unix seconds
//   X-Enrichbridge-Signature: v1=hex(HMAC-SHA256(secret, timestamp + "." + rawBody))
// over the body's own bytes, within 5 minutes either way, compared in constant time.
//
// How an admin signs the callout in Apex (manifests/salesforce/apex/EnrichbridgeCallout.cls does
// this, with the secret from Enrichbridge_Setting__mdt):
//
//   String body = JSON.serialize(new Map<String, Object>{
//       'orgId' => UserInfo.getOrganizationId(), 'object' => 'Contact', 'ids' => contactIds });
//   String ts = String.valueOf(Datetime.now().getTime() / 1000);
//   Blob mac = Crypto.generateMac('hmacSHA256', Blob.valueOf(ts + '.' + body), Blob.valueOf(secret));
//   HttpRequest req = new HttpRequest();
//   req.setEndpoint('callout:Enrichbridge/webhooks/salesforce/events');
//   req.setMethod('POST');
//   req.setHeader('Content-Type', 'application/json');
//   req.setHeader('X-Enrichbridge-Timestamp', ts);
//   req.setHeader('X-Enrichbridge-Signature', 'v1=' + EncodingUtil.convertToHex(mac));
//   req.setBody(body); // exactly the string that was signed
//   new Http().send(req);
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { describeIssues } from '../../core/enrich/request-errors.ts';
import { OrganizationIdSchema, SalesforceIdSchema, recordIdMatchesObject } from './ids.ts';

export const EVENTS_TIMESTAMP_HEADER = 'x-enrichbridge-timestamp';
export const EVENTS_SIGNATURE_HEADER = 'x-enrichbridge-signature';
/** How far the timestamp may be from our clock, either way. */
export const EVENTS_MAX_AGE_SECONDS = 5 * 60;
export const EVENTS_MAX_IDS = 200;
/** 200 ids of 18 characters are about 4.5 KB of JSON; anything much larger is not ours. */
export const EVENTS_MAX_BODY_BYTES = 64 * 1024;

export const SalesforceEventsSchema = z
  .strictObject({
    orgId: OrganizationIdSchema,
    object: z.enum(['Contact', 'Lead']),
    /** Canonical 18-character ids, each once, in the order sent. */
    ids: z.array(SalesforceIdSchema).min(1).max(EVENTS_MAX_IDS),
  })
  .refine((body) => body.ids.every((id) => recordIdMatchesObject(body.object, id)), {
    message: 'every id must carry the key prefix of the object (Contact 003…, Lead 00Q…)',
    path: ['ids'],
  })
  .transform((body) => ({ ...body, ids: [...new Set(body.ids)] }));

export type SalesforceEvents = z.output<typeof SalesforceEventsSchema>;

/** The body exactly as received. A string is taken as its UTF-8 bytes. */
export type RawBody = Buffer | Uint8Array | string;
const toBytes = (body: RawBody): Buffer => (typeof body === 'string' ? Buffer.from(body, 'utf8') : Buffer.from(body.buffer, body.byteOffset, body.byteLength));

/** A header as Node gives it: absent, once, or repeated. */
export type HeaderValue = string | readonly string[] | undefined;

export type EventsSignatureFailure =
  /** No secret configured for the installation: nothing can be verified, so nothing is accepted. */
  | 'missing_secret'
  /** No signature header, or an empty or repeated one. */
  | 'missing_signature'
  | 'missing_timestamp'
  /** The timestamp is not whole unix seconds. */
  | 'invalid_timestamp'
  /** Older than the window: a replay, or a callout that waited too long. */
  | 'stale_timestamp'
  /** Further ahead than the window: a clock far off, or a forged header. */
  | 'future_timestamp'
  /** Not `v1=` and 64 hex digits: another scheme, a truncated value, the wrong length. */
  | 'malformed_signature'
  /** Wrong secret, altered body or timestamp, or forged. */
  | 'mismatch';

export type EventsSignatureCheck = { readonly ok: true } | { readonly ok: false; readonly reason: EventsSignatureFailure };

const fail = (reason: EventsSignatureFailure): EventsSignatureCheck => ({ ok: false, reason });

const TIMESTAMP = /^\d{1,12}$/;
const SIGNATURE = /^v1=([0-9a-fA-F]{64})$/;

function hmac(secret: string, timestamp: string, rawBody: RawBody): Buffer {
  return createHmac('sha256', secret).update(`${timestamp}.`, 'utf8').update(toBytes(rawBody)).digest();
}

/**
 * `v1=<hex>`: the X-Enrichbridge-Signature value for a body sent at `timestamp` (unix seconds). Throws
 * on a timestamp that is not whole non-negative seconds: that is a bug in the caller, not input.
 */
export function signEvents(secret: string, timestamp: number | string, rawBody: RawBody): string {
  const ts = String(timestamp);
  if (!TIMESTAMP.test(ts)) throw new RangeError(`timestamp must be whole unix seconds, got ${ts}`);
  return `v1=${hmac(secret, ts, rawBody).toString('hex')}`;
}

/** One non-empty value of a header, matched without regard to case; missing, empty or repeated is none. */
function header(headers: Readonly<Record<string, HeaderValue>>, name: string): string | null {
  const values: string[] = [];
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name) continue;
    if (typeof value === 'string') values.push(value);
    else if (value !== undefined) values.push(...value);
  }
  const only = values.length === 1 ? values[0]?.trim() : undefined;
  return only === undefined || only === '' ? null : only;
}

export interface VerifyEventsInput {
  /** The installation's signing secret. */
  readonly secret: string;
  readonly rawBody: RawBody;
  /** The request headers (Node gives lower-case names; any case is matched). */
  readonly headers: Readonly<Record<string, HeaderValue>>;
  /** Our clock, milliseconds since the epoch (default Date.now()). */
  readonly now?: number;
}

/** Verifies a signed callout: the timestamp window first, then the HMAC in constant time. Never throws. */
export function verifyEvents(input: VerifyEventsInput): EventsSignatureCheck {
  if (input.secret === '') return fail('missing_secret');
  const signature = header(input.headers, EVENTS_SIGNATURE_HEADER);
  if (signature === null) return fail('missing_signature');
  const timestamp = header(input.headers, EVENTS_TIMESTAMP_HEADER);
  if (timestamp === null) return fail('missing_timestamp');
  // Digits only: Number() would take '1e9', '0x1F', ' 12 ' and '-5'.
  if (!TIMESTAMP.test(timestamp)) return fail('invalid_timestamp');
  const age = (input.now ?? Date.now()) / 1000 - Number(timestamp);
  if (age > EVENTS_MAX_AGE_SECONDS) return fail('stale_timestamp');
  if (age < -EVENTS_MAX_AGE_SECONDS) return fail('future_timestamp');
  const hex = SIGNATURE.exec(signature)?.[1];
  // The expected length is public (32 bytes), so refusing other lengths first leaks nothing, and it is
  // what keeps timingSafeEqual (which throws on unequal lengths) safe.
  if (hex === undefined) return fail('malformed_signature');
  const given = Buffer.from(hex, 'hex');
  const expected = hmac(input.secret, timestamp, input.rawBody);
  return given.length === expected.length && timingSafeEqual(expected, given) ? { ok: true } : fail('mismatch');
}

export type ParsedEvents =
  | { readonly ok: true; readonly events: SalesforceEvents }
  | { readonly ok: false; readonly reason: 'too_large' | 'invalid_json' | 'invalid_body'; readonly message: string };

/**
 * Reads a verified body (verify first: it signs these exact bytes). Ids come back canonical, 18
 * characters, without repeats. Whether `orgId` is the installation's is the caller's check. Never throws.
 */
export function parseEvents(rawBody: RawBody): ParsedEvents {
  const bytes = toBytes(rawBody);
  if (bytes.length > EVENTS_MAX_BODY_BYTES) return { ok: false, reason: 'too_large', message: `The body is larger than ${EVENTS_MAX_BODY_BYTES} bytes.` };
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return { ok: false, reason: 'invalid_json', message: 'The body is not UTF-8 JSON.' };
  }
  const parsed = SalesforceEventsSchema.safeParse(json);
  return parsed.success ? { ok: true, events: parsed.data } : { ok: false, reason: 'invalid_body', message: describeIssues(parsed.error) };
}
