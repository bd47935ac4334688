// HubSpot request signatures (v3 for webhooks, v2 for workflow actions, v1 for completeness): HMAC or
// SHA-256 over the raw body bytes, the 5-minute timestamp window and a constant-time compare.
//
// We do not call @hubspot/api-client's `Signature` here: it compares with `===`, throws on a stale
// timestamp, and does not decode the URI for v3 (see docs/reference/crm-platforms.md, section 2).
// The tests cross-check our signatures against it.
import {
  type HeaderValue,
  type RawBody,
  type TimestampFailure,
  constantTimeEqual,
  hmacSha256,
  sha256,
  singleValue as single,
  timestampOutsideWindow,
} from '../kit/signature.ts';

/** How far `X-HubSpot-Request-Timestamp` may be from our clock, either way (HubSpot: 5 minutes). */
export const HUBSPOT_SIGNATURE_MAX_AGE_MS = 5 * 60_000;

export const HUBSPOT_SIGNATURE_HEADERS = {
  v3: 'x-hubspot-signature-v3',
  timestamp: 'x-hubspot-request-timestamp',
  /** v1 and v2 signatures; `x-hubspot-signature-version` says which. */
  legacy: 'x-hubspot-signature',
  version: 'x-hubspot-signature-version',
} as const;

export type HubSpotSignatureVersion = 'v1' | 'v2' | 'v3';

export type SignatureFailure =
  /** No signature header, or an empty or repeated one. */
  | 'missing_signature'
  | 'missing_timestamp'
  /** Not a whole number of milliseconds; stale or in the future (kit/signature.ts). */
  | TimestampFailure
  /** The request carries a signature version the route does not accept. */
  | 'unsupported_version'
  /** The signature does not match: wrong secret, altered body or URL, or forged. */
  | 'mismatch';

export type SignatureCheck = { readonly ok: true } | { readonly ok: false; readonly reason: SignatureFailure };

const OK: SignatureCheck = { ok: true };
const fail = (reason: SignatureFailure): SignatureCheck => ({ ok: false, reason });

export type { HeaderValue, RawBody };
export { constantTimeEqual };

// The escapes HubSpot decodes before signing a v3 request, and only these: `%20`, `%2B`, `%25` and
// every other escape stay as sent.
const V3_DECODED_ESCAPES = /%(3A|2F|3F|40|21|24|27|28|29|2A|2C|3B)/gi;

/**
 * The URI as HubSpot signs it for v3: the full URL it called (`https://host/path?query`), with only
 * `%3A : %2F / %3F ? %40 @ %21 ! %24 $ %27 ' %28 ( %29 ) %2A * %2C , %3B ;` decoded (either case), in
 * one pass, so `%253A` stays `%253A`.
 */
export function hubspotV3Uri(url: string): string {
  return url.replace(V3_DECODED_ESCAPES, (_escape, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/**
 * The URL HubSpot called, from our configured public URL and the path and query as received
 * (`req.originalUrl`): a proxy may rewrite scheme, host or a path prefix, but the signature covers
 * what HubSpot sent to the public address. `publicUrl` may carry a path prefix.
 */
export function hubspotRequestUrl(publicUrl: string, originalUrl: string): string {
  const base = publicUrl.replace(/\/+$/, '');
  return `${base}${originalUrl.startsWith('/') ? '' : '/'}${originalUrl}`;
}

export interface V3SignatureInput {
  readonly clientSecret: string;
  readonly method: string;
  /** The full URL HubSpot called; see hubspotRequestUrl. Decoded here, as HubSpot does. */
  readonly url: string;
  readonly rawBody: RawBody;
  /** `X-HubSpot-Request-Timestamp`, milliseconds since the epoch, exactly as sent. */
  readonly timestamp: string;
}

/** base64(HMAC-SHA256(clientSecret, method + uri + rawBody + timestamp)), over the body's own bytes. */
export function hubspotV3Signature(input: V3SignatureInput): string {
  return hmacSha256(input.clientSecret, [`${input.method.toUpperCase()}${hubspotV3Uri(input.url)}`, input.rawBody, input.timestamp]).toString('base64');
}

export interface V3VerifyInput {
  readonly clientSecret: string;
  readonly method: string;
  readonly url: string;
  readonly rawBody: RawBody;
  /** `X-HubSpot-Signature-v3`. */
  readonly signature: HeaderValue;
  /** `X-HubSpot-Request-Timestamp`. */
  readonly timestamp: HeaderValue;
  /** Our clock, milliseconds since the epoch (default Date.now()). */
  readonly now?: number;
}

/**
 * Verifies a v3 request: the timestamp is a whole number of milliseconds within 5 minutes of `now`
 * (either way), and the signature matches. Never throws.
 */
export function verifyHubSpotV3(input: V3VerifyInput): SignatureCheck {
  const signature = single(input.signature);
  if (signature === null) return fail('missing_signature');
  const timestamp = single(input.timestamp);
  if (timestamp === null) return fail('missing_timestamp');
  const outside = timestampOutsideWindow(timestamp, { nowMs: input.now ?? Date.now(), windowMs: HUBSPOT_SIGNATURE_MAX_AGE_MS, unitMs: 1, maxDigits: 16 });
  if (outside !== null) return fail(outside);
  const expected = hubspotV3Signature({ ...input, timestamp });
  return constantTimeEqual(expected, signature) ? OK : fail('mismatch');
}

export interface V2SignatureInput {
  readonly clientSecret: string;
  readonly method: string;
  /** The full URL HubSpot called, as is (v2 decodes nothing). */
  readonly url: string;
  /** Empty for a GET. */
  readonly rawBody: RawBody;
}

/** hex(SHA-256(clientSecret + method + url + rawBody)): workflow-action requests. */
export function hubspotV2Signature(input: V2SignatureInput): string {
  return sha256([`${input.clientSecret}${input.method.toUpperCase()}${input.url}`, input.rawBody]).toString('hex');
}

export interface V2VerifyInput extends V2SignatureInput {
  /** `X-HubSpot-Signature`. */
  readonly signature: HeaderValue;
}

/** Verifies a v2 request. v2 carries no timestamp, so replays cannot be refused here. Never throws. */
export function verifyHubSpotV2(input: V2VerifyInput): SignatureCheck {
  const signature = single(input.signature);
  if (signature === null) return fail('missing_signature');
  return constantTimeEqual(hubspotV2Signature(input), signature.toLowerCase()) ? OK : fail('mismatch');
}

export interface V1SignatureInput {
  readonly clientSecret: string;
  readonly rawBody: RawBody;
}

/** hex(SHA-256(clientSecret + rawBody)): the oldest webhook signature. */
export function hubspotV1Signature(input: V1SignatureInput): string {
  return sha256([input.clientSecret, input.rawBody]).toString('hex');
}

export interface V1VerifyInput extends V1SignatureInput {
  /** `X-HubSpot-Signature`. */
  readonly signature: HeaderValue;
}

/** Verifies a v1 request: neither method, URL nor time is signed. Never throws. */
export function verifyHubSpotV1(input: V1VerifyInput): SignatureCheck {
  const signature = single(input.signature);
  if (signature === null) return fail('missing_signature');
  return constantTimeEqual(hubspotV1Signature(input), signature.toLowerCase()) ? OK : fail('mismatch');
}

export interface RequestVerifyInput {
  readonly clientSecret: string;
  readonly method: string;
  /** The full URL HubSpot called; see hubspotRequestUrl. */
  readonly url: string;
  readonly rawBody: RawBody;
  /** The request headers with lower-case names, as Node gives them. */
  readonly headers: Readonly<Record<string, HeaderValue>>;
  /** The versions this route takes: `['v3']` for webhooks, `['v2']` for workflow actions. */
  readonly accept: readonly HubSpotSignatureVersion[];
  readonly now?: number;
}

/**
 * Verifies a request by the version it carries: v3 when `X-HubSpot-Signature-v3` is present,
 * otherwise `X-HubSpot-Signature` with the version `X-HubSpot-Signature-Version` names (v1 if none).
 * A version outside `accept` fails, so a route that wants v3 cannot be fed a weaker v1 signature.
 */
export function verifyHubSpotRequest(input: RequestVerifyInput): SignatureCheck {
  const h = HUBSPOT_SIGNATURE_HEADERS;
  const version = detectVersion(input.headers);
  if (version === null) return fail('missing_signature');
  if (version === 'unknown' || !input.accept.includes(version)) return fail('unsupported_version');
  switch (version) {
    case 'v3':
      return verifyHubSpotV3({ ...input, signature: input.headers[h.v3], timestamp: input.headers[h.timestamp] });
    case 'v2':
      return verifyHubSpotV2({ ...input, signature: input.headers[h.legacy] });
    case 'v1':
      return verifyHubSpotV1({ ...input, signature: input.headers[h.legacy] });
  }
}

function detectVersion(headers: Readonly<Record<string, HeaderValue>>): HubSpotSignatureVersion | 'unknown' | null {
  const h = HUBSPOT_SIGNATURE_HEADERS;
  if (headers[h.v3] !== undefined) return 'v3';
  if (headers[h.legacy] === undefined) return null;
  const named = single(headers[h.version])?.toLowerCase() ?? 'v1';
  return named === 'v1' || named === 'v2' ? named : 'unknown';
}
