// API tokens: how they are minted, what is stored of them (a SHA-256 hash, never the token), and the
// constant-time comparison. Sandbox tokens carry the `sandbox_` prefix the spec requires.
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Environment } from './model.ts';

export const TOKEN_PREFIX: Record<Environment, string> = {
  sandbox: 'sandbox_',
  production: 'prod_',
};

/** 32 random bytes (256 bits) of entropy, base64url-encoded behind the environment's prefix. */
export function mintToken(environment: Environment): { token: string; id: string } {
  return {
    token: `${TOKEN_PREFIX[environment]}${randomBytes(32).toString('base64url')}`,
    id: `tok_${randomBytes(8).toString('hex')}`,
  };
}

/**
 * A fast hash is the right one here: tokens carry 256 bits of entropy, so there is nothing for a slow
 * password hash to protect against, and this runs on every request (crypto.hash, one call: a Hash
 * object a request cost twice the time).
 */
export function hashToken(token: string): string {
  return hash('sha256', token, 'hex');
}

/** Constant-time equality of two digests as text; unequal lengths are unequal without a timing leak. */
export function digestsEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  if (left.length !== right.length) return false;
  return timingSafeEqual(left, right);
}

/** What an operator may pass to `tokens revoke`: the token itself or its public `tok_…` id. */
export function tokenReference(value: string): { hash: string } | { id: string } {
  return /^tok_[0-9a-f]{16}$/.test(value) ? { id: value } : { hash: hashToken(value) };
}
