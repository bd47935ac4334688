// Unit tests of secrets at rest: the sealed-token format and its failures (tamper, key, context,
// malformed input), and where the key comes from (ENRICHBRIDGE_SECRET_KEY, else a 0600 key file).
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inspect } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { KEY_FILE_NAME, SECRET_KEY_ENV, SecretBox, SecretBoxError, type SecretBoxErrorReason, loadSecretBox } from '../../core/secrets/secret-box.ts';

const PLAINTEXT = 'hubspot-refresh-token-5f1e9c2a-never-log-me';
// Unix permission bits do not exist on Windows: the mode checks run only where they mean something.
const isPosix = process.platform !== 'win32';

const tempDirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'eb-secret-'));
  tempDirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Runs `fn`, expects a SecretBoxError with `reason`, and returns it for further checks. */
function expectSecretBoxError(fn: () => unknown, reason: SecretBoxErrorReason): SecretBoxError {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(SecretBoxError);
  if (!(caught instanceof SecretBoxError)) throw new Error('unreachable');
  expect(caught.name).toBe('SecretBoxError');
  expect(caught.reason).toBe(reason);
  return caught;
}

/** Flips one bit of part `index` of a token, keeping it valid base64url so only authentication can catch it. */
function flipBit(sealed: string, index: number): string {
  const parts = sealed.split('.');
  const bytes = Buffer.from(parts[index] ?? '', 'base64url');
  expect(bytes.length).toBeGreaterThan(0);
  bytes[bytes.length - 1] = (bytes[bytes.length - 1] ?? 0) ^ 0x01;
  parts[index] = bytes.toString('base64url');
  return parts.join('.');
}

function newBox(): SecretBox {
  return new SecretBox(randomBytes(32));
}

describe('SecretBox sealing', () => {
  it('round-trips ASCII, unicode and empty plaintexts', () => {
    const box = newBox();
    for (const text of [PLAINTEXT, 'Zoë Ødegård — 東京 🔑 \u0000 end', '', 'x'.repeat(10_000)]) {
      expect(box.open(box.seal(text))).toBe(text);
    }
  });

  it('produces a v1 token of base64url parts with a 12-byte IV and a 16-byte tag', () => {
    const sealed = newBox().seal(PLAINTEXT);
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    expect(sealed).not.toContain(PLAINTEXT);
  });

  it('uses a fresh IV on every seal, so the same text seals differently', () => {
    const box = newBox();
    const first = box.seal(PLAINTEXT);
    const second = box.seal(PLAINTEXT);
    expect(first).not.toBe(second);
    expect(first.split('.')[1]).not.toBe(second.split('.')[1]);
    expect(box.open(first)).toBe(PLAINTEXT);
    expect(box.open(second)).toBe(PLAINTEXT);
  });

  it.each([
    ['IV', 1],
    ['ciphertext', 2],
    ['tag', 3],
  ])('refuses a token whose %s was altered', (_part, index) => {
    const box = newBox();
    const tampered = flipBit(box.seal(PLAINTEXT), index);
    expectSecretBoxError(() => box.open(tampered), 'authentication_failed');
  });

  it('refuses a token sealed under another key', () => {
    const sealed = newBox().seal(PLAINTEXT);
    expectSecretBoxError(() => newBox().open(sealed), 'authentication_failed');
  });

  it('binds a token to its context: the same context opens it, another or none does not', () => {
    const box = newBox();
    const sealed = box.seal(PLAINTEXT, 'installation:42');
    expect(box.open(sealed, 'installation:42')).toBe(PLAINTEXT);
    expectSecretBoxError(() => box.open(sealed, 'installation:43'), 'authentication_failed');
    expectSecretBoxError(() => box.open(sealed), 'authentication_failed');
    expectSecretBoxError(() => box.open(sealed, ''), 'authentication_failed');
  });

  it('keeps "no context" and "empty context" apart', () => {
    const box = newBox();
    expectSecretBoxError(() => box.open(box.seal(PLAINTEXT), ''), 'authentication_failed');
    expectSecretBoxError(() => box.open(box.seal(PLAINTEXT, '')), 'authentication_failed');
    expect(box.open(box.seal(PLAINTEXT, ''), '')).toBe(PLAINTEXT);
  });

  it('refuses a token sealed with a context when opened under another key with that context', () => {
    const sealed = newBox().seal(PLAINTEXT, 'installation:42');
    expectSecretBoxError(() => newBox().open(sealed, 'installation:42'), 'authentication_failed');
  });

  describe('refuses malformed tokens', () => {
    const box = newBox();
    const good = box.seal(PLAINTEXT);
    const [, iv = '', ciphertext = '', tag = ''] = good.split('.');
    const cases: [string, string, SecretBoxErrorReason][] = [
      ['the empty string', '', 'malformed'],
      ['another version', `v2.${iv}.${ciphertext}.${tag}`, 'unsupported_version'],
      ['no version', `.${iv}.${ciphertext}.${tag}`, 'unsupported_version'],
      ['three parts', `v1.${iv}.${ciphertext}`, 'malformed'],
      ['five parts', `${good}.${tag}`, 'malformed'],
      ['a character outside base64url', `v1.${iv}.${ciphertext}!.${tag}`, 'malformed'],
      ['standard-base64 characters', `v1.${iv}.${ciphertext}+/.${tag}`, 'malformed'],
      ['padding', `v1.${iv}.${ciphertext}.${tag}==`, 'malformed'],
      ['non-canonical trailing bits', `v1.${iv}.${ciphertext}.${tag.slice(0, -1)}${tag.endsWith('B') ? 'C' : 'B'}`, 'malformed'],
      ['a short IV', `v1.${iv.slice(0, 12)}.${ciphertext}.${tag}`, 'malformed'],
      ['a short tag', `v1.${iv}.${ciphertext}.${tag.slice(0, 16)}`, 'malformed'],
      ['no tag', `v1.${iv}.${ciphertext}.`, 'malformed'],
    ];
    it.each(cases)('%s', (_name, sealed, reason) => {
      expectSecretBoxError(() => box.open(sealed), reason);
    });
  });

  it('never puts the plaintext or the key in an error message', () => {
    const key = randomBytes(32);
    const box = new SecretBox(key);
    const sealed = box.seal(PLAINTEXT, 'ctx');
    const failures: (() => unknown)[] = [
      () => box.open(sealed, 'other'),
      () => box.open(sealed),
      () => box.open(flipBit(sealed, 2), 'ctx'),
      () => box.open(flipBit(sealed, 3), 'ctx'),
      () => newBox().open(sealed, 'ctx'),
      () => box.open(`v9.${PLAINTEXT}.x.y`),
      () => box.open(`v1.${PLAINTEXT}`),
      () => box.open(`v1.${PLAINTEXT}!.a.b`),
      () => box.seal(`${PLAINTEXT}\uD800`),
    ];
    const secrets = [PLAINTEXT, key.toString('hex'), key.toString('base64'), key.toString('base64url')];
    for (const fail of failures) {
      let caught: unknown;
      try {
        fail();
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(SecretBoxError);
      const shown = inspect(caught);
      for (const secret of secrets) expect(shown).not.toContain(secret);
    }
  });

  it('refuses to seal a string with a lone surrogate, which UTF-8 would silently alter', () => {
    const box = newBox();
    expectSecretBoxError(() => box.seal('abc\uD800def'), 'invalid_plaintext');
    expectSecretBoxError(() => box.seal('\uDC00'), 'invalid_plaintext');
    expect(box.open(box.seal('pair \uD83D\uDD11 ok'))).toBe('pair \uD83D\uDD11 ok');
  });

  it('does not show its key through inspect or JSON', () => {
    const key = randomBytes(32);
    const box = new SecretBox(key);
    const shown = `${inspect(box, { showHidden: true, depth: 5 })} ${JSON.stringify(box)}`;
    for (const form of ['hex', 'base64'] as const) expect(shown).not.toContain(key.toString(form));
    expect(shown).not.toContain(inspect(key));
  });

  it('takes a copy of its key, so wiping the caller buffer does not change it', () => {
    const key = randomBytes(32);
    const box = new SecretBox(key);
    const sealed = box.seal(PLAINTEXT);
    key.fill(0);
    expect(box.open(sealed)).toBe(PLAINTEXT);
  });

  it('refuses a key that is not 32 bytes', () => {
    expectSecretBoxError(() => new SecretBox(randomBytes(31)), 'invalid_key');
    expectSecretBoxError(() => new SecretBox(randomBytes(33)), 'invalid_key');
  });
});

describe('loadSecretBox from ENRICHBRIDGE_SECRET_KEY', () => {
  const key = randomBytes(32);

  it.each([
    ['hex', key.toString('hex')],
    ['upper-case hex', key.toString('hex').toUpperCase()],
    ['base64', key.toString('base64')],
    ['base64 without padding', key.toString('base64').replace(/=+$/, '')],
    ['base64url', key.toString('base64url')],
    ['hex with a trailing newline', `${key.toString('hex')}\n`],
  ])('accepts the key as %s', (_form, value) => {
    const dataDir = tempDir();
    const box = loadSecretBox({ env: { [SECRET_KEY_ENV]: value }, dataDir });
    // The decoded bytes are the key: a box built from them directly opens what this one sealed.
    expect(new SecretBox(key).open(box.seal(PLAINTEXT))).toBe(PLAINTEXT);
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it('uses the environment key over an existing key file', () => {
    const dataDir = tempDir();
    const fileBox = loadSecretBox({ env: {}, dataDir });
    const envBox = loadSecretBox({ env: { [SECRET_KEY_ENV]: key.toString('hex') }, dataDir });
    expect(new SecretBox(key).open(envBox.seal(PLAINTEXT))).toBe(PLAINTEXT);
    expectSecretBoxError(() => fileBox.open(envBox.seal(PLAINTEXT)), 'authentication_failed');
  });

  const short = randomBytes(31);
  it.each([
    ['31 bytes of hex', short.toString('hex')],
    ['31 bytes of base64', short.toString('base64')],
    ['33 bytes of base64', randomBytes(33).toString('base64')],
    ['65 hex characters', `${key.toString('hex')}a`],
    ['neither hex nor base64', 'correct horse battery staple!'],
    ['hex with a non-hex character', `${key.toString('hex').slice(0, 63)}g`],
    ['mixed base64 alphabets', `+_${key.toString('base64url').slice(2)}`],
    ['too much padding', `${key.toString('base64').replace(/=+$/, '')}==`],
    ['an empty value', ''],
  ])('refuses %s, naming the variable without echoing the value', (_form, value) => {
    const dataDir = tempDir();
    const error = expectSecretBoxError(() => loadSecretBox({ env: { [SECRET_KEY_ENV]: value }, dataDir }), 'invalid_key');
    expect(error.message).toContain('ENRICHBRIDGE_SECRET_KEY');
    if (value !== '') expect(error.message).not.toContain(value);
    expect(readdirSync(dataDir)).toEqual([]);
  });
});

describe('loadSecretBox from the key file', () => {
  it('creates the data folder and a 0600 key file of one hex line on first use', () => {
    const dataDir = path.join(tempDir(), 'nested', 'data');
    loadSecretBox({ env: {}, dataDir });
    const keyPath = path.join(dataDir, KEY_FILE_NAME);
    expect(readFileSync(keyPath, 'utf8')).toMatch(/^[0-9a-f]{64}\n$/);
    if (isPosix) expect(statSync(keyPath).mode & 0o777).toBe(0o600);
  });

  it('seals under the key written to the file', () => {
    const dataDir = tempDir();
    const box = loadSecretBox({ env: {}, dataDir });
    const written = Buffer.from(readFileSync(path.join(dataDir, KEY_FILE_NAME), 'utf8').trim(), 'hex');
    expect(new SecretBox(written).open(box.seal(PLAINTEXT))).toBe(PLAINTEXT);
  });

  it('reuses the key file on the next load, so earlier seals still open', () => {
    const dataDir = tempDir();
    const first = loadSecretBox({ env: {}, dataDir });
    const before = readFileSync(path.join(dataDir, KEY_FILE_NAME), 'utf8');
    const sealed = first.seal(PLAINTEXT, 'installation:7');
    const second = loadSecretBox({ env: {}, dataDir });
    expect(second.open(sealed, 'installation:7')).toBe(PLAINTEXT);
    expect(readFileSync(path.join(dataDir, KEY_FILE_NAME), 'utf8')).toBe(before);
  });

  it('reads a key file another process already created', () => {
    const dataDir = tempDir();
    const key = randomBytes(32);
    writeFileSync(path.join(dataDir, KEY_FILE_NAME), `${key.toString('hex')}\n`, { mode: 0o600 });
    const box = loadSecretBox({ env: {}, dataDir });
    expect(new SecretBox(key).open(box.seal(PLAINTEXT))).toBe(PLAINTEXT);
  });

  it.skipIf(!isPosix).each([
    ['0644', 0o644],
    ['0640', 0o640],
    ['0604', 0o604],
    ['0660', 0o660],
  ])('refuses a key file with mode %s, open to group or others', (_name, mode) => {
    const dataDir = tempDir();
    loadSecretBox({ env: {}, dataDir });
    const keyPath = path.join(dataDir, KEY_FILE_NAME);
    const content = readFileSync(keyPath, 'utf8');
    chmodSync(keyPath, mode);
    const error = expectSecretBoxError(() => loadSecretBox({ env: {}, dataDir }), 'invalid_key');
    expect(error.message).toContain(keyPath);
    expect(error.message).toContain('chmod 600');
    expect(error.message).not.toContain(content.trim());
    expect(readFileSync(keyPath, 'utf8')).toBe(content);
  });

  it.each([
    ['truncated', (hex: string) => hex.slice(0, 40)],
    ['empty', () => ''],
    ['over-long', (hex: string) => `${hex}00\n`],
    ['not hex', (hex: string) => `${hex.slice(0, 63)}z\n`],
    ['two lines', (hex: string) => `${hex}\n${hex}\n`],
  ])('refuses a %s key file and leaves it in place', (_kind, corrupt) => {
    const dataDir = tempDir();
    const keyPath = path.join(dataDir, KEY_FILE_NAME);
    const hex = randomBytes(32).toString('hex');
    const content = corrupt(hex);
    writeFileSync(keyPath, content, { mode: 0o600 });
    const error = expectSecretBoxError(() => loadSecretBox({ env: {}, dataDir }), 'invalid_key');
    expect(error.message).toContain(keyPath);
    expect(error.message).not.toContain(hex.slice(0, 40));
    expect(existsSync(keyPath)).toBe(true);
    expect(readFileSync(keyPath, 'utf8')).toBe(content);
  });
});
