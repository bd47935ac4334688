// The signature primitives both CRMs' schemes are built on (connectors/kit/signature.ts).
import { describe, expect, it } from 'vitest';
import { hmacSha256, rawBytes, sha256, singleHeader, singleValue, timestampOutsideWindow } from '../../connectors/kit/signature.ts';

describe('kit/signature', () => {
  it('HMAC-SHA256 matches the fixed vector of RFC 4231 (test case 2), whether the data comes whole or in parts', () => {
    const expected = '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843';
    expect(hmacSha256('Jefe', ['what do ya want for nothing?']).toString('hex')).toBe(expected);
    expect(hmacSha256('Jefe', ['what do ya ', Buffer.from('want for '), new TextEncoder().encode('nothing?')]).toString('hex')).toBe(expected);
  });

  it('SHA-256 matches the fixed vector of FIPS 180-2 ("abc")', () => {
    expect(sha256(['a', Buffer.from('bc')]).toString('hex')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('signs the raw bytes: a body that is not valid UTF-8 is not decoded and re-encoded', () => {
    const bytes = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
    expect(rawBytes(bytes)).toBe(bytes);
    expect(hmacSha256('k', [bytes]).equals(hmacSha256('k', [bytes.toString('utf8')]))).toBe(false);
  });

  it('one header value: missing, empty or repeated is none; the name is matched without regard to case', () => {
    expect(singleValue(undefined)).toBeNull();
    expect(singleValue('  ')).toBeNull();
    expect(singleValue(['a', 'b'])).toBeNull();
    expect(singleValue([' a '])).toBe('a');
    expect(singleHeader({ 'X-Sig': 'v' }, 'x-sig')).toBe('v');
    expect(singleHeader({ 'x-sig': 'v', 'X-SIG': 'w' }, 'x-sig')).toBeNull();
  });

  it('the timestamp window: digits only, stale and future refused either way, in the scheme’s unit', () => {
    const ms = { nowMs: 1_700_000_000_000, windowMs: 300_000, unitMs: 1, maxDigits: 16 };
    expect(timestampOutsideWindow('1700000000000', ms)).toBeNull();
    expect(timestampOutsideWindow('1699999700000', ms)).toBeNull();
    expect(timestampOutsideWindow('1699999699999', ms)).toBe('stale_timestamp');
    expect(timestampOutsideWindow('1700000300001', ms)).toBe('future_timestamp');
    for (const bad of ['1e12', '0x1F', ' 12', '-5', '', '12345678901234567']) expect(timestampOutsideWindow(bad, ms)).toBe('invalid_timestamp');
    const seconds = { nowMs: 1_700_000_000_000, windowMs: 300_000, unitMs: 1000, maxDigits: 12 };
    expect(timestampOutsideWindow('1700000000', seconds)).toBeNull();
    expect(timestampOutsideWindow('1699999699', seconds)).toBe('stale_timestamp');
  });
});
