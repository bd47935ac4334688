// The operator's way into the console that the first-start banner prints: a ready one-time link only
// when nobody on another machine can use it, otherwise the command that prints one; the command names
// the PUBLIC_URL the server defaulted to, which the command alone would not know.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretBox } from '../../core/secrets/secret-box.ts';
import { operatorAccess, redeemConsoleLink } from '../../server/http/console/link.ts';

const box = new SecretBox(randomBytes(32));
const claimAny = () => Promise.resolve(true);

describe('the first-start banner on the console', () => {
  it('offers a ready operator link on loopback, which signs the operator in, and the command naming the defaulted PUBLIC_URL', async () => {
    const now = new Date();
    const access = operatorAccess(box, { publicUrl: 'http://127.0.0.1:3000', listenHost: '127.0.0.1', publicUrlDefaulted: true }, now);
    expect(access.command).toBe('PUBLIC_URL=http://127.0.0.1:3000 npx enrichbridge console-link --operator');
    const link = new URL(access.link ?? '');
    expect(`${link.origin}${link.pathname}`).toBe('http://127.0.0.1:3000/console/link');
    expect(await redeemConsoleLink(box, link.searchParams.get('t') ?? '', now, claimAny)).toEqual({ kind: 'operator' });
  });

  it('names no PUBLIC_URL in the command when it was set', () => {
    const access = operatorAccess(box, { publicUrl: 'http://localhost:3000', listenHost: '127.0.0.1', publicUrlDefaulted: false });
    expect(access.command).toBe('npx enrichbridge console-link --operator');
    expect(access.link).not.toBeNull();
  });

  it.each([
    ['a server listening on every interface', { publicUrl: 'http://localhost:3000', listenHost: '0.0.0.0', publicUrlDefaulted: true }],
    ['a loopback server behind a public address (a tunnel)', { publicUrl: 'https://enrich.example.com', listenHost: '127.0.0.1', publicUrlDefaulted: false }],
  ])('prints only the command for %s: no operator link in a log others may read', (_name, options) => {
    const access = operatorAccess(box, options);
    expect(access.link).toBeNull();
    expect(access.command).toMatch(/npx enrichbridge console-link --operator$/);
  });
});
