// HubSpot request signatures: the fixed vectors of docs/reference/crm-platforms.md, agreement with @hubspot/api-client's
// own Signature utility, the raw-body and URL rules of v3, the timestamp window, and every refusal.
import { createHmac } from 'node:crypto';
import { Signature } from '@hubspot/api-client';
import { describe, expect, it } from 'vitest';
import {
  HUBSPOT_SIGNATURE_MAX_AGE_MS,
  constantTimeEqual,
  hubspotRequestUrl,
  hubspotV1Signature,
  hubspotV2Signature,
  hubspotV3Signature,
  hubspotV3Uri,
  verifyHubSpotRequest,
  verifyHubSpotV1,
  verifyHubSpotV2,
  verifyHubSpotV3,
} from '../../connectors/hubspot/signature.ts';

// The test vectors of docs/reference/crm-platforms.md, section 2 (HubSpot's SDK tests and docs).
const SECRET = 'yyyyyyyy-yyyy-yyyy-yyyy-yyyyyyyyyyyy';
const EXAMPLE_URL = 'https://www.example.com/webhook_uri';
const EXAMPLE_BODY = '{"example_field":"example_value"}';
const V1_BODY =
  '[{"eventId":1,"subscriptionId":12345,"portalId":62515,"occurredAt":1564113600000,"subscriptionType":"contact.creation","attemptNumber":0,"objectId":123,"changeSource":"CRM","changeFlag":"NEW","appId":54321}]';
const V3_TIMESTAMP = 1_700_000_000_000;
const V3_NOW = V3_TIMESTAMP + 1_000;

const WEBHOOK_URL = 'https://enrich.example.com/webhooks/hubspot';

/** A v3 signature computed the way HubSpot documents it: over the UTF-8 string, URI already decoded. */
function hubspotSignsV3(method: string, signedUri: string, body: string | Buffer, timestamp: number): string {
  return createHmac('sha256', SECRET)
    .update(Buffer.concat([Buffer.from(`${method}${signedUri}`), Buffer.from(body), Buffer.from(String(timestamp))]))
    .digest('base64');
}

/** A v3 request as the webhook route would see it, signed for `now`. */
function v3Request(overrides: { body?: string | Buffer; url?: string; timestamp?: number } = {}) {
  const body = overrides.body ?? V1_BODY;
  const url = overrides.url ?? WEBHOOK_URL;
  const timestamp = overrides.timestamp ?? V3_NOW;
  return {
    clientSecret: SECRET,
    method: 'POST',
    url,
    rawBody: Buffer.isBuffer(body) ? body : Buffer.from(body),
    signature: hubspotSignsV3('POST', hubspotV3Uri(url), body, timestamp),
    timestamp: String(timestamp),
    now: V3_NOW,
  };
}

/** Deterministic inputs for the cross-checks: bodies and URLs of varied shapes and lengths. */
function generatedInputs(count: number): { body: string; url: string; secret: string }[] {
  let seed = 20_240_601;
  const next = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed;
  };
  const words = ['contact', 'Jäger', 'δ', 'emoji 🎉', 'a"b', 'back\\slash', '', 'x'.repeat(300)];
  return Array.from({ length: count }, (_, i) => {
    const events = Array.from({ length: (next() % 5) + 1 }, (_e, j) => ({
      eventId: next(),
      objectId: next(),
      subscriptionType: 'contact.propertyChange',
      propertyName: 'firstname',
      propertyValue: words[(next() + j) % words.length],
    }));
    return {
      body: JSON.stringify(events),
      url: `https://host-${i}.example.com/webhooks/hubspot?portal=${next()}&attempt=${i}`,
      secret: `secret-${next().toString(16)}-${i}`,
    };
  });
}

describe('v3 signature (webhooks)', () => {
  it('matches the fixed vector of crm-platforms.md', () => {
    const input = { clientSecret: SECRET, method: 'POST', url: EXAMPLE_URL, rawBody: EXAMPLE_BODY, timestamp: String(V3_TIMESTAMP) };
    expect(hubspotV3Signature(input)).toBe('rQEKkaNUiu+1qGF//O/pw4BCzstSqO1PyUnGICmf+7o=');
    expect(
      verifyHubSpotV3({
        ...input,
        rawBody: Buffer.from(EXAMPLE_BODY),
        signature: 'rQEKkaNUiu+1qGF//O/pw4BCzstSqO1PyUnGICmf+7o=',
        timestamp: String(V3_TIMESTAMP),
        now: V3_NOW,
      }),
    ).toEqual({ ok: true });
  });

  it("agrees with @hubspot/api-client's Signature.getSignature and isValid on generated inputs", () => {
    for (const { body, url, secret } of generatedInputs(12)) {
      const timestamp = Date.now();
      const ours = hubspotV3Signature({ clientSecret: secret, method: 'POST', url, rawBody: Buffer.from(body), timestamp: String(timestamp) });
      const options = { clientSecret: secret, requestBody: body, url, timestamp, signature: ours };
      expect(Signature.getSignature('POST', 'v3', options)).toBe(ours);
      expect(Signature.isValid({ ...options, signatureVersion: 'v3' })).toBe(true);
      expect(verifyHubSpotV3({ clientSecret: secret, method: 'POST', url, rawBody: Buffer.from(body), signature: ours, timestamp: String(timestamp) })).toEqual(
        { ok: true },
      );
    }
  });

  it('accepts a request HubSpot signed, with the request as received', () => {
    expect(verifyHubSpotV3(v3Request())).toEqual({ ok: true });
  });

  describe('raw body', () => {
    it('signs the bytes received: a body with \\u00e4 escapes and the same JSON with ä differ', () => {
      const escaped = '[{"propertyName":"lastname","propertyValue":"J\\u00e4ger"}]';
      const decoded = '[{"propertyName":"lastname","propertyValue":"Jäger"}]';
      expect(JSON.parse(escaped)).toEqual(JSON.parse(decoded));
      const signed = v3Request({ body: escaped });
      expect(verifyHubSpotV3(signed)).toEqual({ ok: true });
      // Re-serializing the parsed body (what a JSON body parser hands on) loses the escape.
      const reserialized = Buffer.from(JSON.stringify(JSON.parse(escaped)));
      expect(reserialized.toString()).toBe(decoded);
      expect(verifyHubSpotV3({ ...signed, rawBody: reserialized })).toEqual({ ok: false, reason: 'mismatch' });
    });

    it('hashes non-ASCII UTF-8 bytes as they are, not as another encoding of the same text', () => {
      const text = '[{"propertyValue":"Zoë Ødegård, Straße 5, 東京"}]';
      const signed = v3Request({ body: text });
      expect(verifyHubSpotV3({ ...signed, rawBody: Buffer.from(text, 'utf8') })).toEqual({ ok: true });
      expect(verifyHubSpotV3({ ...signed, rawBody: Buffer.from(text, 'latin1') })).toEqual({ ok: false, reason: 'mismatch' });
      // A string body is its UTF-8 bytes.
      expect(verifyHubSpotV3({ ...signed, rawBody: text })).toEqual({ ok: true });
    });

    it('signs bytes that are not valid UTF-8 as received', () => {
      const bytes = Buffer.from([0x5b, 0xff, 0xfe, 0x5d]);
      expect(verifyHubSpotV3(v3Request({ body: bytes }))).toEqual({ ok: true });
    });

    it('refuses a tampered body', () => {
      const signed = v3Request();
      const tampered = Buffer.from(V1_BODY.replace('"objectId":123', '"objectId":124'));
      expect(verifyHubSpotV3({ ...signed, rawBody: tampered })).toEqual({ ok: false, reason: 'mismatch' });
      expect(verifyHubSpotV3({ ...signed, rawBody: Buffer.concat([signed.rawBody, Buffer.from(' ')]) })).toEqual({
        ok: false,
        reason: 'mismatch',
      });
    });
  });

  describe('URL', () => {
    it('decodes %3A %2F %3F %40 %21 %24 %27 %28 %29 %2A %2C %3B, in either case', () => {
      expect(hubspotV3Uri('https://h.example.com/p?x=%3A%2F%3F%40%21%24%27%28%29%2A%2C%3B')).toBe("https://h.example.com/p?x=:/?@!$'()*,;");
      expect(hubspotV3Uri('https://h.example.com/p?x=%3a%2f%3f%2a%2c%3b')).toBe('https://h.example.com/p?x=:/?*,;');
    });

    it('keeps %20 encoded', () => {
      expect(hubspotV3Uri('https://h.example.com/p?name=Amanda%20Taylor')).toBe('https://h.example.com/p?name=Amanda%20Taylor');
    });

    it('leaves + in the query untouched', () => {
      expect(hubspotV3Uri('https://h.example.com/p?q=a+b&email=amanda%2Btest%40x.com')).toBe('https://h.example.com/p?q=a+b&email=amanda%2Btest@x.com');
    });

    it('decodes in one pass: %253A stays %253A, %25 stays', () => {
      expect(hubspotV3Uri('https://h.example.com/p?a=%253A&b=%25')).toBe('https://h.example.com/p?a=%253A&b=%25');
    });

    it('keeps a non-ASCII path as HubSpot sends it (percent-encoded UTF-8)', () => {
      const url = 'https://h.example.com/webhooks/caf%C3%A9/hubspot';
      expect(hubspotV3Uri(url)).toBe(url);
      expect(verifyHubSpotV3(v3Request({ url }))).toEqual({ ok: true });
    });

    it('verifies against what HubSpot signed: the URI with those escapes decoded', () => {
      const url = `${WEBHOOK_URL}?redirect=https%3A%2F%2Fx.example.com%2Fa&name=A%20B&q=a+b`;
      const signature = hubspotSignsV3('POST', `${WEBHOOK_URL}?redirect=https://x.example.com/a&name=A%20B&q=a+b`, V1_BODY, V3_NOW);
      const input = { clientSecret: SECRET, method: 'POST', url, rawBody: Buffer.from(V1_BODY), timestamp: String(V3_NOW), now: V3_NOW };
      expect(verifyHubSpotV3({ ...input, signature })).toEqual({ ok: true });
      // Signing the URL undecoded (the SDK's way) gives a signature HubSpot never sends.
      const undecoded = hubspotSignsV3('POST', url, V1_BODY, V3_NOW);
      expect(verifyHubSpotV3({ ...input, signature: undecoded })).toEqual({ ok: false, reason: 'mismatch' });
    });

    it('refuses a different host, scheme or path (what a proxy rewrite would produce)', () => {
      const signed = v3Request();
      for (const url of ['http://enrich.example.com/webhooks/hubspot', 'https://internal:8080/webhooks/hubspot', `${WEBHOOK_URL}/`]) {
        expect(verifyHubSpotV3({ ...signed, url })).toEqual({ ok: false, reason: 'mismatch' });
      }
    });

    it('builds the called URL from the public URL and the path as received', () => {
      expect(hubspotRequestUrl('https://enrich.example.com', '/webhooks/hubspot')).toBe(WEBHOOK_URL);
      expect(hubspotRequestUrl('https://enrich.example.com/', '/webhooks/hubspot?a=%3A')).toBe('https://enrich.example.com/webhooks/hubspot?a=%3A');
      expect(hubspotRequestUrl('https://example.com/enrich/', '/webhooks/hubspot')).toBe('https://example.com/enrich/webhooks/hubspot');
    });
  });

  describe('timestamp window', () => {
    it('accepts a timestamp up to 5 minutes old or ahead', () => {
      for (const offset of [0, HUBSPOT_SIGNATURE_MAX_AGE_MS, -HUBSPOT_SIGNATURE_MAX_AGE_MS]) {
        expect(verifyHubSpotV3(v3Request({ timestamp: V3_NOW - offset }))).toEqual({ ok: true });
      }
    });

    it('refuses a stale timestamp', () => {
      expect(verifyHubSpotV3(v3Request({ timestamp: V3_NOW - HUBSPOT_SIGNATURE_MAX_AGE_MS - 1 }))).toEqual({
        ok: false,
        reason: 'stale_timestamp',
      });
      expect(verifyHubSpotV3(v3Request({ timestamp: V3_NOW - 86_400_000 }))).toEqual({ ok: false, reason: 'stale_timestamp' });
    });

    it('refuses a timestamp too far in the future', () => {
      expect(verifyHubSpotV3(v3Request({ timestamp: V3_NOW + HUBSPOT_SIGNATURE_MAX_AGE_MS + 1 }))).toEqual({
        ok: false,
        reason: 'future_timestamp',
      });
    });

    it('refuses a missing timestamp', () => {
      for (const timestamp of [undefined, '', '  ', []]) {
        expect(verifyHubSpotV3({ ...v3Request(), timestamp })).toEqual({ ok: false, reason: 'missing_timestamp' });
      }
    });

    it('refuses a timestamp that is not whole milliseconds', () => {
      for (const timestamp of ['abc', '1.7e12', '0x18BCFE56800', '-1700000000000', '1700000000000.5', '17000000000000000000']) {
        expect(verifyHubSpotV3({ ...v3Request(), timestamp })).toEqual({ ok: false, reason: 'invalid_timestamp' });
      }
    });

    it('checks the timestamp that was signed: replaying with a fresh header fails', () => {
      const signed = v3Request({ timestamp: V3_NOW - 60_000 });
      expect(verifyHubSpotV3({ ...signed, timestamp: String(V3_NOW) })).toEqual({ ok: false, reason: 'mismatch' });
    });
  });

  describe('signature', () => {
    it('refuses a wrong secret', () => {
      expect(verifyHubSpotV3({ ...v3Request(), clientSecret: `${SECRET}x` })).toEqual({ ok: false, reason: 'mismatch' });
    });

    it('refuses a signature of the wrong length without throwing', () => {
      const signed = v3Request();
      for (const signature of [signed.signature.slice(0, -1), `${signed.signature}A`, 'x', signed.signature.repeat(2)]) {
        expect(verifyHubSpotV3({ ...signed, signature })).toEqual({ ok: false, reason: 'mismatch' });
      }
    });

    it('refuses a different method', () => {
      expect(verifyHubSpotV3({ ...v3Request(), method: 'PUT' })).toEqual({ ok: false, reason: 'mismatch' });
    });

    it('refuses a missing, empty or repeated signature header', () => {
      const signed = v3Request();
      for (const signature of [undefined, '', [], [signed.signature, signed.signature]]) {
        expect(verifyHubSpotV3({ ...signed, signature })).toEqual({ ok: false, reason: 'missing_signature' });
      }
      expect(verifyHubSpotV3({ ...signed, signature: [signed.signature] })).toEqual({ ok: true });
    });
  });
});

describe('v2 signature (workflow actions)', () => {
  it('matches the fixed GET vector of crm-platforms.md', () => {
    const input = { clientSecret: SECRET, method: 'GET', url: EXAMPLE_URL, rawBody: Buffer.alloc(0) };
    const expected = 'eee2dddcc73c94d699f5e395f4b9d454a069a6855fbfa152e91e88823087200e';
    expect(hubspotV2Signature(input)).toBe(expected);
    expect(verifyHubSpotV2({ ...input, signature: expected })).toEqual({ ok: true });
  });

  it('matches the fixed POST vector of crm-platforms.md', () => {
    const input = { clientSecret: SECRET, method: 'POST', url: EXAMPLE_URL, rawBody: Buffer.from(EXAMPLE_BODY) };
    const expected = '9569219f8ba981ffa6f6f16aa0f48637d35d728c7e4d93d0d52efaa512af7900';
    expect(hubspotV2Signature(input)).toBe(expected);
    expect(verifyHubSpotV2({ ...input, signature: expected })).toEqual({ ok: true });
    expect(verifyHubSpotV2({ ...input, signature: expected.toUpperCase() })).toEqual({ ok: true });
  });

  it("agrees with @hubspot/api-client's Signature on generated inputs", () => {
    for (const { body, url, secret } of generatedInputs(12)) {
      const ours = hubspotV2Signature({ clientSecret: secret, method: 'POST', url, rawBody: Buffer.from(body) });
      const options = { clientSecret: secret, requestBody: body, url, signature: ours };
      expect(Signature.getSignature('POST', 'v2', options)).toBe(ours);
      expect(Signature.isValid({ ...options, method: 'POST', signatureVersion: 'v2' })).toBe(true);
    }
  });

  it('decodes nothing in the URL', () => {
    const base = { clientSecret: SECRET, method: 'POST', rawBody: Buffer.from(EXAMPLE_BODY) };
    const signature = hubspotV2Signature({ ...base, url: `${EXAMPLE_URL}?a=%3A` });
    expect(verifyHubSpotV2({ ...base, url: `${EXAMPLE_URL}?a=%3A`, signature })).toEqual({ ok: true });
    expect(verifyHubSpotV2({ ...base, url: `${EXAMPLE_URL}?a=:`, signature })).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('signs the raw body: \\u00e4 escapes and ä differ', () => {
    const escaped = '{"object":{"properties":{"lastname":"J\\u00e4ger"}}}';
    const base = { clientSecret: SECRET, method: 'POST', url: EXAMPLE_URL };
    const signature = hubspotV2Signature({ ...base, rawBody: Buffer.from(escaped) });
    const reserialized = Buffer.from(JSON.stringify(JSON.parse(escaped)));
    expect(verifyHubSpotV2({ ...base, rawBody: reserialized, signature })).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('refuses a wrong secret, a tampered body, a wrong-length or missing signature', () => {
    const input = { clientSecret: SECRET, method: 'POST', url: EXAMPLE_URL, rawBody: Buffer.from(EXAMPLE_BODY) };
    const signature = hubspotV2Signature(input);
    expect(verifyHubSpotV2({ ...input, clientSecret: 'other', signature })).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifyHubSpotV2({ ...input, rawBody: Buffer.from(`${EXAMPLE_BODY} `), signature })).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifyHubSpotV2({ ...input, signature: signature.slice(0, 32) })).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifyHubSpotV2({ ...input, signature: undefined })).toEqual({ ok: false, reason: 'missing_signature' });
  });
});

describe('v1 signature', () => {
  it('matches the fixed vector of crm-platforms.md', () => {
    const expected = '232db2615f3d666fe21a8ec971ac7b5402d33b9a925784df3ca654d05f4817de';
    expect(hubspotV1Signature({ clientSecret: SECRET, rawBody: V1_BODY })).toBe(expected);
    expect(verifyHubSpotV1({ clientSecret: SECRET, rawBody: Buffer.from(V1_BODY), signature: expected })).toEqual({ ok: true });
  });

  it("agrees with @hubspot/api-client's Signature on generated inputs", () => {
    for (const { body, secret } of generatedInputs(12)) {
      const ours = hubspotV1Signature({ clientSecret: secret, rawBody: Buffer.from(body) });
      expect(Signature.isValid({ clientSecret: secret, requestBody: body, signature: ours })).toBe(true);
    }
  });

  it('refuses a wrong secret, a tampered body, a wrong-length signature', () => {
    const signature = hubspotV1Signature({ clientSecret: SECRET, rawBody: V1_BODY });
    expect(verifyHubSpotV1({ clientSecret: 'other', rawBody: V1_BODY, signature })).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifyHubSpotV1({ clientSecret: SECRET, rawBody: `${V1_BODY}\n`, signature })).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifyHubSpotV1({ clientSecret: SECRET, rawBody: V1_BODY, signature: `${signature}00` })).toEqual({ ok: false, reason: 'mismatch' });
  });
});

describe('constant-time compare', () => {
  it('compares strings of any lengths without throwing (timingSafeEqual alone throws on unequal lengths)', () => {
    expect(constantTimeEqual('abc', 'abc')).toBe(true);
    expect(constantTimeEqual('abc', 'abd')).toBe(false);
    expect(constantTimeEqual('abc', 'abcd')).toBe(false);
    expect(constantTimeEqual('', 'a')).toBe(false);
    expect(constantTimeEqual('', '')).toBe(true);
  });
});

describe('verifying a request by its headers', () => {
  const url = WEBHOOK_URL;
  const rawBody = Buffer.from(V1_BODY);
  const base = { clientSecret: SECRET, method: 'POST', url, rawBody, now: V3_NOW };
  const v3Headers = {
    'x-hubspot-signature-v3': hubspotSignsV3('POST', url, V1_BODY, V3_NOW),
    'x-hubspot-request-timestamp': String(V3_NOW),
  };
  const v2Headers = {
    'x-hubspot-signature': hubspotV2Signature({ clientSecret: SECRET, method: 'POST', url, rawBody }),
    'x-hubspot-signature-version': 'v2',
  };
  const v1Headers = { 'x-hubspot-signature': hubspotV1Signature({ clientSecret: SECRET, rawBody }) };

  it('verifies v3 when the v3 header is present', () => {
    expect(verifyHubSpotRequest({ ...base, headers: v3Headers, accept: ['v3'] })).toEqual({ ok: true });
    expect(verifyHubSpotRequest({ ...base, headers: v3Headers, accept: ['v3'], now: V3_NOW + 3_600_000 })).toEqual({
      ok: false,
      reason: 'stale_timestamp',
    });
  });

  it('verifies v2 and v1 by X-HubSpot-Signature-Version', () => {
    expect(verifyHubSpotRequest({ ...base, headers: v2Headers, accept: ['v2'] })).toEqual({ ok: true });
    expect(verifyHubSpotRequest({ ...base, headers: v1Headers, accept: ['v1'] })).toEqual({ ok: true });
  });

  it('refuses a version the route does not accept, so v3 cannot be downgraded to v1', () => {
    expect(verifyHubSpotRequest({ ...base, headers: v1Headers, accept: ['v3'] })).toEqual({ ok: false, reason: 'unsupported_version' });
    expect(verifyHubSpotRequest({ ...base, headers: v3Headers, accept: ['v2'] })).toEqual({ ok: false, reason: 'unsupported_version' });
    expect(verifyHubSpotRequest({ ...base, headers: { ...v2Headers, 'x-hubspot-signature-version': 'v9' }, accept: ['v1', 'v2', 'v3'] })).toEqual({
      ok: false,
      reason: 'unsupported_version',
    });
  });

  it('refuses a request without a signature', () => {
    expect(verifyHubSpotRequest({ ...base, headers: {}, accept: ['v3'] })).toEqual({ ok: false, reason: 'missing_signature' });
  });
});
