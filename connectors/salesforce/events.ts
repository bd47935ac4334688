// The JSON callouts from Salesforce: the signed one for Apex and Flow (`POST /webhooks/salesforce/events`),
// its body `{orgId, object, ids}` checked with zod and its HMAC signature with the installation's secret;
// and the packaged trigger's (`POST /webhooks/salesforce/trigger`), `{deliveryId, orgId, object, ids}`,
// whose caller is known by the org's record credential (record-routes.ts), not by a signature. The packaged
// trigger's may name person Accounts (`Account`, from the optional trigger in
// manifests/salesforce/person-accounts/); the signed one names Contacts and Leads only.
//
// Outbound messages cannot be signed (docs/reference/crm-platforms.md, section 7); this route can, so it is:
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
import { z } from 'zod';
import {
  type HeaderValue,
  type RawBody,
  type TimestampFailure,
  constantTimeEqual,
  hmacSha256,
  rawBytes,
  singleHeader,
  timestampOutsideWindow,
} from '../kit/signature.ts';
import { describeIssues } from '../../core/enrich/request-errors.ts';
import { OrganizationIdSchema, SalesforceIdSchema, recordIdMatchesObject } from './ids.ts';

export const EVENTS_TIMESTAMP_HEADER = 'x-enrichbridge-timestamp';
export const EVENTS_SIGNATURE_HEADER = 'x-enrichbridge-signature';
/** How far the timestamp may be from our clock, either way. */
export const EVENTS_MAX_AGE_SECONDS = 5 * 60;
export const EVENTS_MAX_IDS = 200;
/** 200 ids of 18 characters are about 4.5 KB of JSON; anything much larger is not ours. */
export const EVENTS_MAX_BODY_BYTES = 64 * 1024;

/** The org, the object and up to 200 of its record ids: what the JSON callouts (signed, and the packaged trigger's) share. */
const recordsShape = {
  orgId: OrganizationIdSchema,
  object: z.enum(['Contact', 'Lead']),
  /** Canonical 18-character ids, each once, in the order sent. */
  ids: z.array(SalesforceIdSchema).min(1).max(EVENTS_MAX_IDS),
};

/**
 * The objects the packaged trigger's callout may name: Contacts and Leads, and person Accounts from the
 * optional person-Account trigger. Whether the installation enriches Accounts is the intake's check
 * (acceptTriggerCallout): an Account id it is not to enrich is answered, not refused, so the Queueable
 * does not retry or log it as an error. The signed route keeps to Contact and Lead: it queues what it is
 * given, with no such check.
 */
export const TRIGGER_CALLOUT_OBJECTS = ['Contact', 'Lead', 'Account'] as const;

/** A Lead id under Contact (or any id under another object) would be read from the wrong object: refused whole. */
const idsOfTheObject = (prefixes: string) => ({
  check: (body: { readonly object: string; readonly ids: readonly string[] }): boolean => body.ids.every((id) => recordIdMatchesObject(body.object, id)),
  params: { message: `every id must carry the key prefix of the object (${prefixes})`, path: ['ids'] },
});
const contactOrLeadIds = idsOfTheObject('Contact 003…, Lead 00Q…');
const triggerCalloutIds = idsOfTheObject('Contact 003…, Lead 00Q…, Account 001…');

export const SalesforceEventsSchema = z
  .strictObject(recordsShape)
  .refine(contactOrLeadIds.check, contactOrLeadIds.params)
  .transform((body) => ({ ...body, ids: [...new Set(body.ids)] }));

export type SalesforceEvents = z.output<typeof SalesforceEventsSchema>;

/**
 * The packaged trigger's callout (SALESFORCE_TRIGGER_ROUTE): the records, and the id the Queueable gave
 * this callout when it cut the ids into chunks. A retry of the callout carries the same id, so it is
 * recognised and queues nothing twice (deliveries remember it like an outbound message's notification id).
 */
export const SalesforceTriggerCalloutSchema = z
  .strictObject({ deliveryId: z.uuid(), ...recordsShape, object: z.enum(TRIGGER_CALLOUT_OBJECTS) })
  .refine(triggerCalloutIds.check, triggerCalloutIds.params)
  .transform((body) => ({ ...body, deliveryId: body.deliveryId.toLowerCase(), ids: [...new Set(body.ids)] }));

export type SalesforceTriggerCallout = z.output<typeof SalesforceTriggerCalloutSchema>;

export type { HeaderValue, RawBody };

export type EventsSignatureFailure =
  /** No secret configured for the installation: nothing can be verified, so nothing is accepted. */
  | 'missing_secret'
  /** No signature header, or an empty or repeated one. */
  | 'missing_signature'
  | 'missing_timestamp'
  /** Not whole unix seconds; stale or in the future (kit/signature.ts). */
  | TimestampFailure
  /** Not `v1=` and 64 hex digits: another scheme, a truncated value, the wrong length. */
  | 'malformed_signature'
  /** Wrong secret, altered body or timestamp, or forged. */
  | 'mismatch';

export type EventsSignatureCheck = { readonly ok: true } | { readonly ok: false; readonly reason: EventsSignatureFailure };

const fail = (reason: EventsSignatureFailure): EventsSignatureCheck => ({ ok: false, reason });

const TIMESTAMP = /^\d{1,12}$/;
const SIGNATURE = /^v1=([0-9a-fA-F]{64})$/;

function hmac(secret: string, timestamp: string, rawBody: RawBody): Buffer {
  return hmacSha256(secret, [`${timestamp}.`, rawBody]);
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
  const signature = singleHeader(input.headers, EVENTS_SIGNATURE_HEADER);
  if (signature === null) return fail('missing_signature');
  const timestamp = singleHeader(input.headers, EVENTS_TIMESTAMP_HEADER);
  if (timestamp === null) return fail('missing_timestamp');
  const outside = timestampOutsideWindow(timestamp, { nowMs: input.now ?? Date.now(), windowMs: EVENTS_MAX_AGE_SECONDS * 1000, unitMs: 1000, maxDigits: 12 });
  if (outside !== null) return fail(outside);
  const hex = SIGNATURE.exec(signature)?.[1];
  // `v1=` and 64 hex digits, or not ours at all: another scheme, a truncated value.
  if (hex === undefined) return fail('malformed_signature');
  return constantTimeEqual(hmac(input.secret, timestamp, input.rawBody).toString('hex'), hex.toLowerCase()) ? { ok: true } : fail('mismatch');
}

export type BodyFailure = { readonly ok: false; readonly reason: 'too_large' | 'invalid_json' | 'invalid_body'; readonly message: string };

export type ParsedEvents = { readonly ok: true; readonly events: SalesforceEvents } | BodyFailure;

/** A JSON body of at most EVENTS_MAX_BODY_BYTES, read with `schema`. Never throws. */
function parseJsonBody<T extends z.ZodType>(rawBody: RawBody, schema: T): { readonly ok: true; readonly value: z.output<T> } | BodyFailure {
  const bytes = rawBytes(rawBody);
  if (bytes.length > EVENTS_MAX_BODY_BYTES) return { ok: false, reason: 'too_large', message: `The body is larger than ${EVENTS_MAX_BODY_BYTES} bytes.` };
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch {
    return { ok: false, reason: 'invalid_json', message: 'The body is not UTF-8 JSON.' };
  }
  const parsed = schema.safeParse(json);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, reason: 'invalid_body', message: describeIssues(parsed.error) };
}

/**
 * Reads a verified body (verify first: it signs these exact bytes). Ids come back canonical, 18
 * characters, without repeats. Whether `orgId` is the installation's is the caller's check. Never throws.
 */
export function parseEvents(rawBody: RawBody): ParsedEvents {
  const parsed = parseJsonBody(rawBody, SalesforceEventsSchema);
  return parsed.ok ? { ok: true, events: parsed.value } : parsed;
}

export type ParsedTriggerCallout = { readonly ok: true; readonly callout: SalesforceTriggerCallout } | BodyFailure;

/**
 * Reads the trigger's callout once its credential holds. Ids come back canonical and without repeats,
 * the delivery id in lower case. Whether `orgId` is the credential's org is the caller's check. Never throws.
 */
export function parseTriggerCallout(rawBody: RawBody): ParsedTriggerCallout {
  const parsed = parseJsonBody(rawBody, SalesforceTriggerCalloutSchema);
  return parsed.ok ? { ok: true, callout: parsed.value } : parsed;
}
