// Unit tests of operator input checks (field lists for entitlements, the setting a refusal names) and of API tokens: minting,
// entropy and prefix, the stored hash, constant-time digest comparison and revoke references.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AdminError, createAccount, parseFieldList } from '../../core/accounts/admin.ts';
import { openSqliteStore } from '../../core/storage/sqlite.ts';
import { digestsEqual, hashToken, mintToken, tokenReference } from '../../core/accounts/tokens.ts';
import { CAREER_FIELDS, HOUSEHOLD_FIELDS } from '../../core/contract/schemas.ts';

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('parseFieldList', () => {
  it("'all' (with surrounding spaces) grants every field", () => {
    expect(parseFieldList('all', HOUSEHOLD_FIELDS, 'household')).toBe('all');
    expect(parseFieldList('  all ', CAREER_FIELDS, 'career')).toBe('all');
  });

  it('a comma-separated list with spaces gives exactly those fields', () => {
    expect(parseFieldList(' net_worth , boat_owner,political_party ', HOUSEHOLD_FIELDS, 'household')).toEqual(['net_worth', 'boat_owner', 'political_party']);
  });

  it('the result follows catalogue order and drops duplicates and empty entries', () => {
    expect(parseFieldList('company_name,job_title,,job_title,', CAREER_FIELDS, 'career')).toEqual(['job_title', 'company_name']);
  });

  it('an unknown name is rejected with an AdminError naming it', () => {
    const error = thrown(() => parseFieldList('net_worth, net_wealth', HOUSEHOLD_FIELDS, 'household'));
    expect(error).toBeInstanceOf(AdminError);
    expect(error).toHaveProperty('name', 'AdminError');
    expect(error).toHaveProperty('message', expect.stringContaining('net_wealth'));
    expect(error).toHaveProperty('message', expect.stringContaining('household'));
  });

  it('every unknown name is named in the message', () => {
    expect(() => parseFieldList('job_title,salary,bonus', CAREER_FIELDS, 'career')).toThrow(/salary, bonus/);
  });

  it('a career field is unknown in the household catalogue', () => {
    expect(() => parseFieldList('job_title', HOUSEHOLD_FIELDS, 'household')).toThrow(AdminError);
  });

  it("'all' is only accepted alone and in lowercase", () => {
    expect(() => parseFieldList('ALL', HOUSEHOLD_FIELDS, 'household')).toThrow(/ALL/);
    expect(() => parseFieldList('all,net_worth', HOUSEHOLD_FIELDS, 'household')).toThrow(AdminError);
  });

  it.each(['', '   ', ',', ' , ,'])('an empty list %j is rejected', (value) => {
    expect(() => parseFieldList(value, HOUSEHOLD_FIELDS, 'household')).toThrow(AdminError);
  });
});

describe('mintToken', () => {
  it('a sandbox token starts with sandbox_ and carries at least 32 bytes of base64url entropy', () => {
    const { token } = mintToken('sandbox');
    expect(token.startsWith('sandbox_')).toBe(true);
    const secret = token.slice('sandbox_'.length);
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    expect(Buffer.from(secret, 'base64url').length).toBeGreaterThanOrEqual(32);
  });

  it('a production token does not start with sandbox_ and carries the same entropy', () => {
    const { token } = mintToken('production');
    expect(token.startsWith('sandbox_')).toBe(false);
    expect(token).toMatch(/[A-Za-z0-9_-]{43,}$/);
  });

  it('two mints differ in token and id', () => {
    const a = mintToken('sandbox');
    const b = mintToken('sandbox');
    expect(a.token).not.toBe(b.token);
    expect(a.id).not.toBe(b.id);
  });

  it('the public id is tok_ and 16 hex chars, and never part of the token', () => {
    const { token, id } = mintToken('production');
    expect(id).toMatch(/^tok_[0-9a-f]{16}$/);
    expect(token).not.toContain(id.slice(4));
  });
});

describe('hashToken', () => {
  it('is 64 lowercase hex chars', () => {
    expect(hashToken(mintToken('sandbox').token)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is deterministic and is SHA-256 of the token', () => {
    expect(hashToken('sandbox_abc')).toBe(hashToken('sandbox_abc'));
    expect(hashToken('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });

  it('different tokens hash differently, and the hash never contains the token', () => {
    const token = mintToken('sandbox').token;
    expect(hashToken(token)).not.toBe(hashToken(`${token}x`));
    expect(hashToken(token)).not.toContain(token);
  });
});

describe('digestsEqual', () => {
  it('equal digests are equal', () => {
    const digest = hashToken('sandbox_x');
    expect(digestsEqual(digest, hashToken('sandbox_x'))).toBe(true);
  });

  it('digests differing in one character are unequal', () => {
    const digest = hashToken('sandbox_x');
    const flipped = `${digest.slice(0, -1)}${digest.endsWith('0') ? '1' : '0'}`;
    expect(digestsEqual(digest, flipped)).toBe(false);
  });

  it('digests of unequal length are unequal', () => {
    const digest = hashToken('sandbox_x');
    expect(digestsEqual(digest, digest.slice(0, 62))).toBe(false);
    expect(digestsEqual(digest.slice(0, 62), digest)).toBe(false);
    expect(digestsEqual(digest, '')).toBe(false);
  });
});

describe('tokenReference', () => {
  it('a public tok_ id is referenced by id', () => {
    expect(tokenReference('tok_0123456789abcdef')).toEqual({ id: 'tok_0123456789abcdef' });
  });

  it('a token is referenced by its hash', () => {
    const token = mintToken('production').token;
    expect(tokenReference(token)).toEqual({ hash: hashToken(token) });
  });

  it.each(['tok_0123456789ABCDEF', 'tok_0123456789abcde', 'tok_0123456789abcdef0', ' tok_0123456789abcdef', 'sandbox_tok_0123456789abcdef'])(
    'any other string (%j) is referenced by its hash',
    (value) => {
      expect(tokenReference(value)).toEqual({ hash: hashToken(value) });
    },
  );
});

describe('digestsEqual on malformed input', () => {
  it('never calls two different strings equal, hex or not', () => {
    expect(digestsEqual('ab', 'abc')).toBe(false);
    expect(digestsEqual('zz', 'yy')).toBe(false);
  });
});

describe('a refusal names the account setting it is about', () => {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'eb-admin-'));
  const opened = openSqliteStore(path.join(folder, 'state.db'));
  afterAll(async () => {
    await (await opened).store.close();
    fs.rmSync(folder, { recursive: true, force: true });
  });

  const refusal = async (name: string, settings: Parameters<typeof createAccount>[2]) => {
    const error = await createAccount((await opened).store, name, settings).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(AdminError);
    return error as AdminError;
  };

  it.each([
    ['name', 'no spaces allowed', {}],
    ['rateLimit', 'acme', { rateLimit: 0 }],
    ['quotaLimit', 'acme', { quotaLimit: -1 }],
    ['quotaPeriod', 'acme', { quotaPeriod: 'fortnight' }],
    ['householdFields', 'acme', { householdFields: 'net_worth,nonsense' }],
    ['careerFields', 'acme', { careerFields: 'salary' }],
  ] as const)('%s', async (field, name, settings) => {
    expect((await refusal(name, settings)).field).toBe(field);
  });

  it('a refusal about no one setting names none', () => {
    expect(new AdminError('no live token matches; it may be revoked already').field).toBeUndefined();
  });
});
