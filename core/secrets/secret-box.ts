// Secrets at rest: AES-256-GCM sealing of CRM refresh tokens and remote API tokens into `v1.` text
// tokens, and the key they are sealed under (from ENRICHBRIDGE_SECRET_KEY, else `<dataDir>/secret.key`).
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { closeSync, fstatSync, mkdirSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';

export const SECRET_KEY_ENV = 'ENRICHBRIDGE_SECRET_KEY';
export const KEY_FILE_NAME = 'secret.key';

const VERSION = 'v1';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_HEX = /^[0-9a-fA-F]{64}$/;
const BASE64URL = /^[A-Za-z0-9_-]*$/;
const BASE64_ANY = /^[A-Za-z0-9+/_-]+={0,2}$/;
// A string with a lone surrogate would come back from UTF-8 with U+FFFD in its place: a silently
// altered secret. Refuse it at seal time instead.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export type SecretBoxErrorReason = 'malformed' | 'unsupported_version' | 'authentication_failed' | 'invalid_plaintext' | 'invalid_key';

/** Every failure here; messages name what is wrong, never a plaintext, a key or a key's source text. */
export class SecretBoxError extends Error {
  override readonly name = 'SecretBoxError';
  readonly reason: SecretBoxErrorReason;

  constructor(reason: SecretBoxErrorReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

/**
 * The additional authenticated data: a label with the version, then whether a context was given, then
 * the context. The presence flag keeps "no context" and "empty context" apart, which raw GCM would not
 * (an empty AAD is the same as none).
 */
function associatedData(context: string | undefined): Buffer {
  const label = Buffer.from(`enrichbridge-secret-box/${VERSION}\0`, 'utf8');
  if (context === undefined) return Buffer.concat([label, Buffer.from([0])]);
  return Buffer.concat([label, Buffer.from([1]), Buffer.from(context, 'utf8')]);
}

/** Strict base64url: the alphabet only, no padding, and the canonical encoding of what it decodes to. */
function decodeBase64url(part: string): Buffer | null {
  if (!BASE64URL.test(part)) return null;
  const bytes = Buffer.from(part, 'base64url');
  return bytes.toString('base64url') === part ? bytes : null;
}

export class SecretBox {
  // A private field, so neither util.inspect nor JSON.stringify shows the key.
  readonly #key: Buffer;
  readonly #derived = new Map<string, Buffer>();

  constructor(key: Uint8Array) {
    if (key.length !== KEY_BYTES) {
      throw new SecretBoxError('invalid_key', `a secret box key must be ${KEY_BYTES} bytes, got ${key.length}`);
    }
    this.#key = Buffer.from(key); // a copy: the caller may wipe or reuse its buffer
  }

  /** Encrypts `plaintext`; with `context`, the token opens only with the same context. */
  seal(plaintext: string, context?: string): string {
    if (LONE_SURROGATE.test(plaintext)) {
      throw new SecretBoxError('invalid_plaintext', 'plaintext is not well-formed Unicode (lone surrogate)');
    }
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv, { authTagLength: TAG_BYTES });
    cipher.setAAD(associatedData(context));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    const tag = cipher.getAuthTag();
    return [VERSION, iv.toString('base64url'), ciphertext.toString('base64url'), tag.toString('base64url')].join('.');
  }

  /**
   * A keyed hash (HMAC-SHA256, hex) of `value` under a key derived from this key for `purpose` (HKDF):
   * the same value and purpose give the same digest under the same key, and nothing without the key
   * tells which value it was. One derived key a purpose, so a digest never doubles as another's.
   */
  keyedDigest(purpose: string, value: string): string {
    let derived = this.#derived.get(purpose);
    if (derived === undefined) {
      derived = Buffer.from(hkdfSync('sha256', this.#key, Buffer.alloc(0), `enrichbridge-keyed-digest/${purpose}`, KEY_BYTES));
      this.#derived.set(purpose, derived);
    }
    return createHmac('sha256', derived).update(value, 'utf8').digest('hex');
  }

  /** Decrypts a token from `seal`; throws SecretBoxError on a bad format, version, tag, key or context. */
  open(sealed: string, context?: string): string {
    const parts = sealed.split('.');
    if (parts.length !== 4) {
      throw new SecretBoxError('malformed', `sealed secret must have 4 dot-separated parts, got ${parts.length}`);
    }
    const [version = '', ivText = '', ciphertextText = '', tagText = ''] = parts;
    if (version !== VERSION) {
      // Only a short version-like label is echoed back, never arbitrary input.
      const shown = /^v\d{1,4}$/.test(version) ? ` "${version}"` : '';
      throw new SecretBoxError('unsupported_version', `sealed secret version${shown} is not supported (expected ${VERSION})`);
    }
    const iv = decodeBase64url(ivText);
    const ciphertext = decodeBase64url(ciphertextText);
    const tag = decodeBase64url(tagText);
    if (iv === null || ciphertext === null || tag === null) {
      throw new SecretBoxError('malformed', 'sealed secret has a part that is not canonical base64url');
    }
    if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) {
      throw new SecretBoxError('malformed', `sealed secret must carry a ${IV_BYTES}-byte IV and a ${TAG_BYTES}-byte tag`);
    }
    const decipher = createDecipheriv('aes-256-gcm', this.#key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(associatedData(context));
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
    } catch {
      // GCM cannot tell these apart, and the message must not hint at partial plaintext.
      throw new SecretBoxError('authentication_failed', 'sealed secret failed authentication: wrong key, wrong context, or the value was altered');
    }
  }
}

export interface LoadSecretBoxOptions {
  /** Defaults to process.env. */
  env?: NodeJS.ProcessEnv;
  /** The data folder that holds `secret.key` when no key is given in the environment. */
  dataDir: string;
}

/** The box under the key from ENRICHBRIDGE_SECRET_KEY when set, else under `<dataDir>/secret.key`. */
export function loadSecretBox(options: LoadSecretBoxOptions): SecretBox {
  const env = options.env ?? process.env;
  const fromEnv = env[SECRET_KEY_ENV];
  if (fromEnv !== undefined) return new SecretBox(parseEnvKey(fromEnv));
  return new SecretBox(readOrCreateKeyFile(options.dataDir));
}

/**
 * 64 hex characters, or base64 / base64url of exactly 32 bytes. A variable that is set but empty is an
 * error, not "unset": falling back to a key file would seal new secrets under a key the operator did not
 * choose, and the ones sealed under their key would stop opening.
 */
function parseEnvKey(raw: string): Buffer {
  const text = raw.trim();
  if (KEY_HEX.test(text)) return Buffer.from(text, 'hex');
  if (BASE64_ANY.test(text)) {
    const unpadded = text.replace(/=+$/, '');
    const paddingOk = unpadded.length === text.length || text.length % 4 === 0;
    // One alphabet or the other, not a mix of both.
    const mixed = /[+/]/.test(unpadded) && /[-_]/.test(unpadded);
    const urlForm = unpadded.replace(/\+/g, '-').replace(/\//g, '_');
    const bytes = Buffer.from(urlForm, 'base64url');
    if (paddingOk && !mixed && bytes.length === KEY_BYTES && bytes.toString('base64url') === urlForm) return bytes;
  }
  throw new SecretBoxError(
    'invalid_key',
    `${SECRET_KEY_ENV} must be 64 hex characters or the base64/base64url encoding of ${KEY_BYTES} bytes ` +
      `(generate one with: openssl rand -hex ${KEY_BYTES})`,
  );
}

/**
 * The key file: created with `wx` so of two processes starting together exactly one writes it and the
 * other reads the winner's key. Read through one descriptor so the mode checked is the file's read.
 */
function readOrCreateKeyFile(dataDir: string): Buffer {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const keyPath = path.join(dataDir, KEY_FILE_NAME);
  let fd: number;
  try {
    fd = openSync(keyPath, 'wx', 0o600);
  } catch (error) {
    if (isErrnoException(error) && error.code === 'EEXIST') return readKeyFile(keyPath);
    throw error;
  }
  const key = randomBytes(KEY_BYTES);
  try {
    writeSync(fd, `${key.toString('hex')}\n`);
    closeSync(fd);
  } catch (error) {
    // A half-written key file would be refused on every later start; leave none rather than that.
    closeQuietly(fd);
    unlinkSync(keyPath);
    throw error;
  }
  return key;
}

const KEY_FILE_LINE = /^([0-9a-fA-F]{64})\r?\n?$/;
/** A racing creator has the file open but may not have written its line yet: wait this long for it. */
const EMPTY_FILE_WAIT_MS = 200;
const EMPTY_FILE_POLL_MS = 10;

function readKeyFile(keyPath: string): Buffer {
  const deadline = Date.now() + EMPTY_FILE_WAIT_MS;
  for (;;) {
    const content = readOwnerOnlyFile(keyPath);
    if (content.length > 0 || Date.now() >= deadline) {
      const match = KEY_FILE_LINE.exec(content);
      if (match?.[1] === undefined) {
        throw new SecretBoxError(
          'invalid_key',
          `key file ${keyPath} must hold one line of 64 hex characters (${KEY_BYTES} bytes); ` +
            `it holds ${content.length} characters. Restore it from backup; delete it only if no secrets were sealed under it`,
        );
      }
      return Buffer.from(match[1], 'hex');
    }
    sleepSync(EMPTY_FILE_POLL_MS);
  }
}

function readOwnerOnlyFile(keyPath: string): string {
  const fd = openSync(keyPath, 'r');
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) {
      throw new SecretBoxError('invalid_key', `key file ${keyPath} is not a regular file`);
    }
    // Windows reports no POSIX permission bits, so there is nothing to check there.
    if (process.platform !== 'win32' && (stat.mode & 0o077) !== 0) {
      throw new SecretBoxError(
        'invalid_key',
        `key file ${keyPath} is accessible by group or others (mode ${(stat.mode & 0o777).toString(8)}); run: chmod 600 ${keyPath}`,
      );
    }
    // Bounded: a correct file is 65 bytes, so anything past a small buffer is already the wrong length.
    const buffer = Buffer.alloc(256);
    let length = 0;
    let read: number;
    do {
      read = readSync(fd, buffer, length, buffer.length - length, null);
      length += read;
    } while (read > 0 && length < buffer.length);
    return buffer.subarray(0, length).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

function closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // Already closed, or the close failure is not the error worth reporting.
  }
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function isErrnoException(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && 'code' in error;
}
