// The standardization a deletion platform hashes identifiers with (California's DROP: e-mails trimmed
// and lowercased, phones to their last ten digits, SHA-256 in Base64), checked on the platform's own
// published test vectors, so a list downloaded from it lands on our entries.
import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretBox } from '../../core/secrets/secret-box.ts';
import { parsePlatformHash, platformHash, standardEmail, standardNameAddress, standardPhone } from '../../core/suppression/identifiers.ts';

describe('identifiers as deletion platforms hash them', () => {
  it("hashes phones as DROP's published test vectors do", () => {
    expect(standardPhone('+1(415)555-9317')).toBe('4155559317');
    expect(platformHash('4155559317')).toBe('vGM7y5n+hBXRSEAklhHDPCbysyNgYTmXdMcagGUOY8E=');
    expect(standardPhone('+84(90)123 4567')).toBe('4901234567');
    expect(platformHash('4901234567')).toBe('ptzVkgbv9DonwvPCHmXmJ2SEOaolSh37z3ZzY/Gmm+U=');
    expect(standardPhone('555-01')).toBeNull();
  });

  it('standardizes e-mails by trimming and lowercasing only: dots and plus signs are kept', () => {
    expect(standardEmail('  A.Lice+tag@Co.COM ')).toBe('a.lice+tag@co.com');
    expect(standardEmail('no-at-sign')).toBeNull();
  });

  it('reads a hash in Base64 or hex, and refuses anything else', () => {
    const bytes = createHash('sha256').update('x').digest();
    expect(parsePlatformHash(bytes.toString('base64'))).toBe(bytes.toString('base64'));
    expect(parsePlatformHash(` ${bytes.toString('hex').toUpperCase()} `)).toBe(bytes.toString('base64'));
    for (const bad of ['', 'abc', bytes.toString('base64').slice(0, 40), `${bytes.toString('hex')}00`]) expect(parsePlatformHash(bad)).toBeNull();
  });

  it('keys a name at an address by surname, each nickname key of the first name, and the address key', () => {
    const forms = standardNameAddress({ firstName: 'Bob', lastName: 'Lee', address: { address: '1 Elm Street', zipcode: '30301' } });
    expect(forms.length).toBeGreaterThan(0);
    expect(forms.every((form) => form.startsWith('lee|') && form.endsWith('|30301'))).toBe(true);
    expect(standardNameAddress({ firstName: 'Bob', lastName: 'Lee', address: { address: 'Elm Street' } })).toEqual([]);
  });

  it('keys a digest under the server key: the same under one key, another under another', () => {
    const key = randomBytes(32);
    const one = new SecretBox(key).keyedDigest('suppression', 'email:abc');
    expect(new SecretBox(key).keyedDigest('suppression', 'email:abc')).toBe(one);
    expect(new SecretBox(key).keyedDigest('other-purpose', 'email:abc')).not.toBe(one);
    expect(new SecretBox(randomBytes(32)).keyedDigest('suppression', 'email:abc')).not.toBe(one);
    expect(one).toMatch(/^[0-9a-f]{64}$/);
  });
});
