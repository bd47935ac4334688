// The signed JSON trigger for Apex and Flow callouts: fixed signature vectors (computed with openssl,
// and the same vector the Apex test class checks), the 5-minute window either way, tampered bodies,
// wrong-length and malformed signatures, and the body rules.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  EVENTS_MAX_AGE_SECONDS,
  EVENTS_MAX_BODY_BYTES,
  EVENTS_SIGNATURE_HEADER,
  EVENTS_TIMESTAMP_HEADER,
  parseEvents,
  parseTriggerCallout,
  signEvents,
  verifyEvents,
} from '../../connectors/salesforce/events.ts';

const fixture = (name: string): Buffer => readFileSync(new URL(`../fixtures/salesforce/${name}`, import.meta.url));

const SECRET = 'ebsec_test_4f1c2a9d7e0b3c5a';
const TIMESTAMP = 1_700_000_000;
const NOW = TIMESTAMP * 1000 + 1_500;

// printf '%s' "1700000000." | cat - test/fixtures/salesforce/events-contact.json | openssl dgst -sha256 -hmac "$SECRET"
const CONTACT_SIGNATURE = 'v1=c95fbacf3b3136b544aafbb92a6cffff2c935a1efa407bf2eb0bb6e0162721bc';
const LEAD_SIGNATURE = 'v1=24e4c911703d2b858262c5334c3728a2fd9dac41e65bdf0f77cd8ec550afe273';
// The vector of manifests/salesforce/apex/EnrichbridgeCalloutTest.cls.
const APEX_BODY = '{"orgId":"00D000000000001EAA","object":"Lead","ids":["00Q000000000001EAA"]}';
const APEX_SIGNATURE = 'v1=cb3a9874a5c2e3e31493ce1d1e00d5bcd8dc4be201f51543ca30539b0cff9069';

function request(overrides: { body?: Buffer | string; signature?: string | string[]; timestamp?: string | string[]; now?: number; secret?: string } = {}) {
  const rawBody = overrides.body ?? fixture('events-contact.json');
  return {
    secret: overrides.secret ?? SECRET,
    rawBody,
    headers: {
      [EVENTS_TIMESTAMP_HEADER]: overrides.timestamp ?? String(TIMESTAMP),
      [EVENTS_SIGNATURE_HEADER]: overrides.signature ?? signEvents(SECRET, TIMESTAMP, rawBody),
    },
    now: overrides.now ?? NOW,
  };
}

describe('events signature vectors', () => {
  it('signEvents matches HMAC-SHA256 over timestamp + "." + raw body, as openssl computes it', () => {
    expect(signEvents(SECRET, TIMESTAMP, fixture('events-contact.json'))).toBe(CONTACT_SIGNATURE);
    expect(signEvents(SECRET, String(TIMESTAMP), fixture('events-lead.json'))).toBe(LEAD_SIGNATURE);
    expect(signEvents('secret', TIMESTAMP, APEX_BODY)).toBe(APEX_SIGNATURE);
  });

  it('a string body is signed as its UTF-8 bytes', () => {
    const body = '{"orgId":"00D000000000001EAA","object":"Lead","ids":["00Q000000000001EAA"],"note":"Zoë"}';
    expect(signEvents(SECRET, TIMESTAMP, body)).toBe(signEvents(SECRET, TIMESTAMP, Buffer.from(body, 'utf8')));
    const manual = createHmac('sha256', SECRET)
      .update(Buffer.from(`${TIMESTAMP}.${body}`, 'utf8'))
      .digest('hex');
    expect(signEvents(SECRET, TIMESTAMP, body)).toBe(`v1=${manual}`);
  });

  it('signEvents refuses a timestamp that is not whole unix seconds', () => {
    for (const bad of [-1, 1.5, '17e8', ' 1700000000', Number.NaN]) expect(() => signEvents(SECRET, bad, '{}')).toThrow(RangeError);
  });
});

describe('verifyEvents', () => {
  it('accepts the fixture with its fixed signature', () => {
    expect(verifyEvents(request({ signature: CONTACT_SIGNATURE }))).toEqual({ ok: true });
    expect(verifyEvents(request({ body: fixture('events-lead.json'), signature: LEAD_SIGNATURE }))).toEqual({ ok: true });
  });

  it('accepts upper-case hex and headers in any case', () => {
    expect(verifyEvents(request({ signature: `v1=${CONTACT_SIGNATURE.slice(3).toUpperCase()}` }))).toEqual({ ok: true });
    const { headers, ...rest } = request();
    expect(
      verifyEvents({
        ...rest,
        headers: { 'X-Enrichbridge-Timestamp': headers[EVENTS_TIMESTAMP_HEADER], 'X-Enrichbridge-Signature': headers[EVENTS_SIGNATURE_HEADER] },
      }),
    ).toEqual({ ok: true });
  });

  it('stale and future timestamps are refused outside 5 minutes, accepted at the edge', () => {
    const at = (offsetSeconds: number) => verifyEvents(request({ now: (TIMESTAMP + offsetSeconds) * 1000 }));
    expect(at(EVENTS_MAX_AGE_SECONDS)).toEqual({ ok: true });
    expect(at(-EVENTS_MAX_AGE_SECONDS)).toEqual({ ok: true });
    expect(at(EVENTS_MAX_AGE_SECONDS + 1)).toEqual({ ok: false, reason: 'stale_timestamp' });
    expect(at(-EVENTS_MAX_AGE_SECONDS - 1)).toEqual({ ok: false, reason: 'future_timestamp' });
    expect(at(86_400)).toEqual({ ok: false, reason: 'stale_timestamp' });
  });

  it('the timestamp is signed: moving it into the window breaks the signature', () => {
    const replayed = request({ signature: signEvents(SECRET, TIMESTAMP - 3_600, fixture('events-contact.json')) });
    expect(verifyEvents(replayed)).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('a tampered body is refused: one id changed, one byte added, re-serialised JSON', () => {
    const original = fixture('events-contact.json').toString('utf8');
    const signature = CONTACT_SIGNATURE;
    expect(verifyEvents(request({ signature, body: original.replace('0038a00000Rk4VbAAJ', '0038a00000Rk4VcAAJ') }))).toEqual({ ok: false, reason: 'mismatch' });
    expect(verifyEvents(request({ signature, body: `${original}\n` }))).toEqual({ ok: false, reason: 'mismatch' });
    const reserialised: unknown = JSON.parse(original);
    expect(verifyEvents(request({ signature, body: JSON.stringify(reserialised, null, 1) }))).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('the wrong secret is refused', () => {
    expect(verifyEvents(request({ secret: 'another-installation' }))).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('wrong-length and malformed signatures are refused without throwing', () => {
    const hex = CONTACT_SIGNATURE.slice(3);
    for (const signature of [
      `v1=${hex.slice(0, 63)}`,
      `v1=${hex}0`,
      `v1=${hex}00`,
      'v1=',
      `v1=${hex.slice(0, 2)}`,
      `v2=${hex}`,
      hex,
      `v1=${hex.slice(0, 62)}zz`,
      `v1=${Buffer.from(hex, 'hex').toString('base64')}`,
    ]) {
      expect(verifyEvents(request({ signature }))).toEqual({ ok: false, reason: 'malformed_signature' });
    }
  });

  it('missing, empty and repeated headers are refused', () => {
    const { headers, ...rest } = request();
    expect(verifyEvents({ ...rest, headers: { [EVENTS_TIMESTAMP_HEADER]: headers[EVENTS_TIMESTAMP_HEADER] } })).toEqual({
      ok: false,
      reason: 'missing_signature',
    });
    expect(verifyEvents({ ...rest, headers: { [EVENTS_SIGNATURE_HEADER]: headers[EVENTS_SIGNATURE_HEADER] } })).toEqual({
      ok: false,
      reason: 'missing_timestamp',
    });
    expect(verifyEvents(request({ signature: '' }))).toEqual({ ok: false, reason: 'missing_signature' });
    expect(verifyEvents(request({ signature: [CONTACT_SIGNATURE, CONTACT_SIGNATURE] }))).toEqual({ ok: false, reason: 'missing_signature' });
    expect(verifyEvents(request({ timestamp: [String(TIMESTAMP), String(TIMESTAMP)] }))).toEqual({ ok: false, reason: 'missing_timestamp' });
  });

  it('timestamps that are not whole seconds are refused', () => {
    for (const timestamp of ['1.7e9', '0x6553F100', '-1700000000', '1700000000.5', 'now', String(NOW * 1000)]) {
      expect(verifyEvents(request({ timestamp }))).toEqual({ ok: false, reason: 'invalid_timestamp' });
    }
  });

  it('an installation without a secret accepts nothing, not even an "empty-secret" signature', () => {
    const body = fixture('events-contact.json');
    expect(verifyEvents(request({ secret: '', signature: signEvents('', TIMESTAMP, body) }))).toEqual({ ok: false, reason: 'missing_secret' });
  });
});

describe('parseEvents', () => {
  it('reads the fixtures', () => {
    expect(parseEvents(fixture('events-contact.json'))).toEqual({
      ok: true,
      events: { orgId: '00D8a000001FkQzEAK', object: 'Contact', ids: ['0038a00000Rk4VbAAJ', '0038a00000Rk4WcAAJ', '0038a00000Rk4XdAAJ'] },
    });
    expect(parseEvents(fixture('events-lead.json'))).toEqual({
      ok: true,
      events: { orgId: '00D8a000001FkQzEAK', object: 'Lead', ids: ['00Q8a00000Jd5ZpEAJ', '00Q8a00000Jd5aqEAB'] },
    });
  });

  it('ids come back canonical (15 → 18 characters) and once each', () => {
    const body = JSON.stringify({ orgId: '00D8a000001FkQz', object: 'Contact', ids: ['0038a00000Rk4Vb', '0038a00000Rk4VbAAJ', '0038A00000RK4VBAAJ'] });
    expect(parseEvents(body)).toEqual({ ok: true, events: { orgId: '00D8a000001FkQzEAK', object: 'Contact', ids: ['0038a00000Rk4VbAAJ'] } });
  });

  it('1 to 200 ids', () => {
    const ids = (n: number) => Array.from({ length: n }, (_, i) => `0038a00000Rm${String(i).padStart(3, '0')}`);
    const body = (n: number) => JSON.stringify({ orgId: '00D8a000001FkQzEAK', object: 'Contact', ids: ids(n) });
    const full = parseEvents(body(200));
    expect(full.ok && full.events.ids.length).toBe(200);
    expect(parseEvents(body(201))).toMatchObject({ ok: false, reason: 'invalid_body' });
    expect(parseEvents(body(0))).toMatchObject({ ok: false, reason: 'invalid_body' });
  });

  it.each([
    ['an unknown object', { orgId: '00D8a000001FkQzEAK', object: 'Account', ids: ['0018a00000Vx3LmAAJ'] }],
    ['a Lead id in a Contact event', { orgId: '00D8a000001FkQzEAK', object: 'Contact', ids: ['00Q8a00000Jd5ZpEAJ'] }],
    ['an org id that is not 00D', { orgId: '0038a00000Rk4VbAAJ', object: 'Contact', ids: ['0038a00000Rk4VbAAJ'] }],
    ['a bad id', { orgId: '00D8a000001FkQzEAK', object: 'Contact', ids: ['003; DELETE'] }],
    ['an extra key', { orgId: '00D8a000001FkQzEAK', object: 'Contact', ids: ['0038a00000Rk4VbAAJ'], where: 'x' }],
    ['ids not a list', { orgId: '00D8a000001FkQzEAK', object: 'Contact', ids: '0038a00000Rk4VbAAJ' }],
    ['an array', [{ orgId: '00D8a000001FkQzEAK' }]],
  ])('refuses %s', (_name, body) => {
    const result = parseEvents(JSON.stringify(body));
    expect(result).toMatchObject({ ok: false, reason: 'invalid_body' });
    expect(!result.ok && result.message).toMatch(/^Invalid request: /);
  });

  it('refuses what is not JSON, and bodies over the limit, without throwing', () => {
    expect(parseEvents('{"orgId":')).toMatchObject({ ok: false, reason: 'invalid_json' });
    expect(parseEvents(Buffer.from([0xff, 0xfe, 0x7b, 0x7d]))).toMatchObject({ ok: false, reason: 'invalid_json' });
    expect(parseEvents(' '.repeat(EVENTS_MAX_BODY_BYTES + 1))).toMatchObject({ ok: false, reason: 'too_large' });
  });
});

describe('parseTriggerCallout', () => {
  const DELIVERY = '3f2b8c1e-9a4d-4e6f-8b7a-1c2d3e4f5a6b';
  const callout = (overrides: Record<string, unknown> = {}) =>
    JSON.stringify({ deliveryId: DELIVERY, orgId: '00D8a000001FkQz', object: 'Contact', ids: ['0038a00000Rk4Vb', '0038a00000Rk4VbAAJ'], ...overrides });

  it('reads the Queueable’s body: ids canonical and once each, the delivery id in lower case', () => {
    expect(parseTriggerCallout(callout({ deliveryId: DELIVERY.toUpperCase() }))).toEqual({
      ok: true,
      callout: { deliveryId: DELIVERY, orgId: '00D8a000001FkQzEAK', object: 'Contact', ids: ['0038a00000Rk4VbAAJ'] },
    });
  });

  it('reads person Accounts from the optional trigger: object Account, ids with the Account key prefix 001', () => {
    expect(parseTriggerCallout(callout({ object: 'Account', ids: ['0018a00000Vx3Lm', '0018a00000Vx3LmAAJ'] }))).toEqual({
      ok: true,
      callout: { deliveryId: DELIVERY, orgId: '00D8a000001FkQzEAK', object: 'Account', ids: ['0018a00000Vx3LmAAJ'] },
    });
    const refused = parseTriggerCallout(callout({ object: 'Account', ids: ['0038a00000Rk4VbAAJ'] }));
    expect(!refused.ok && refused.message).toContain('Account 001');
  });

  it('the signed route still names Contacts and Leads only: it queues without asking whether the installation enriches Accounts', () => {
    expect(parseEvents(JSON.stringify({ orgId: '00D8a000001FkQzEAK', object: 'Account', ids: ['0018a00000Vx3LmAAJ'] }))).toMatchObject({
      ok: false,
      reason: 'invalid_body',
    });
  });

  it('takes 200 ids and refuses 201', () => {
    const ids = (n: number) => Array.from({ length: n }, (_, i) => `0038a00000Rm${String(i).padStart(3, '0')}`);
    const full = parseTriggerCallout(callout({ ids: ids(200) }));
    expect(full.ok && full.callout.ids.length).toBe(200);
    expect(parseTriggerCallout(callout({ ids: ids(201) }))).toMatchObject({ ok: false, reason: 'invalid_body' });
  });

  it.each([
    ['no delivery id', { deliveryId: undefined }],
    ['a delivery id that is not a UUID', { deliveryId: 'retry-1' }],
    ['a Lead id under Contact', { ids: ['00Q8a00000Jd5ZpEAJ'] }],
    ['an unknown object', { object: 'Opportunity', ids: ['0068a00000Vx3LmAAJ'] }],
    ['a Contact id under Account', { object: 'Account', ids: ['0038a00000Rk4VbAAJ'] }],
    ['an Account id under Contact', { object: 'Contact', ids: ['0018a00000Vx3LmAAJ'] }],
    ['a Lead id among Account ids', { object: 'Account', ids: ['0018a00000Vx3LmAAJ', '00Q8a00000Jd5ZpEAJ'] }],
    ['an extra key', { secret: 'x' }],
    ['no ids', { ids: [] }],
  ])('refuses %s', (_name, overrides) => {
    expect(parseTriggerCallout(callout(overrides))).toMatchObject({ ok: false, reason: 'invalid_body' });
  });

  it('refuses what is not JSON, and bodies over the limit, without throwing', () => {
    expect(parseTriggerCallout('{"deliveryId":')).toMatchObject({ ok: false, reason: 'invalid_json' });
    expect(parseTriggerCallout(' '.repeat(EVENTS_MAX_BODY_BYTES + 1))).toMatchObject({ ok: false, reason: 'too_large' });
  });
});
