// One-time console sign-in links (`enrichbridge console-link`): sealed by this server's key, good
// for 15 minutes, and for one sign-in only (the first use claims the link's id; a second finds it
// taken). What a link grants: the operator view, or one installation's.
import { randomBytes, randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { ConsoleScope } from '../../../bridge/console-sessions.ts';
import { openUnexpired, sealJson } from '../../../connectors/kit/oauth-install.ts';
import type { SecretBox } from '../../../core/secrets/secret-box.ts';
import { isLoopbackHost } from '../../config.ts';

export const CONSOLE_LINK_TTL_MS = 15 * 60_000;
const CONTEXT = 'console-link';

const ScopeSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('operator') }),
  z.object({ kind: z.literal('installation'), installationId: z.string().min(1) }),
]);
const LinkSchema = z.object({ id: z.string().min(16), scope: ScopeSchema, expiresAt: z.number() });
type Link = z.infer<typeof LinkSchema>;

export class ConsoleLinkError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConsoleLinkError';
  }
}

export const CONSOLE_LINK_MESSAGES = {
  invalid: 'This sign-in link is not valid (altered, cut short, or made by another server).',
  expired: 'This sign-in link has expired (links last 15 minutes). Ask for a new one.',
  used: 'This sign-in link has been used already. Each link signs in once; ask for a new one.',
} as const;

/** The console's address under PUBLIC_URL (a path prefix stays). */
export function consoleBase(publicUrl: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/console`;
}

export function consoleLinkUrl(box: SecretBox, publicUrl: string, scope: ConsoleScope, now: Date = new Date()): string {
  const link: Link = { id: randomBytes(18).toString('base64url'), scope, expiresAt: now.getTime() + CONSOLE_LINK_TTL_MS };
  const url = new URL(`${consoleBase(publicUrl)}/link`);
  url.searchParams.set('t', sealJson(box, CONTEXT, link));
  return url.toString();
}

/**
 * The scope a link grants, once: refused (ConsoleLinkError) when it is not ours, has expired, or was
 * used. `claim` takes the link's id for longer than the link lives (a lease), false when taken.
 */
export async function redeemConsoleLink(
  box: SecretBox,
  sealed: string,
  now: Date,
  claim: (key: string, owner: string, ms: number) => Promise<boolean>,
): Promise<ConsoleScope> {
  const fail = (message: string) => new ConsoleLinkError(message);
  const link = openUnexpired(box, CONTEXT, sealed, { schema: LinkSchema, what: 'sign-in link', expired: CONSOLE_LINK_MESSAGES.expired }, now, (message) =>
    fail(message === CONSOLE_LINK_MESSAGES.expired ? message : CONSOLE_LINK_MESSAGES.invalid),
  );
  if (!(await claim(`console-link:${link.id}`, randomUUID(), 2 * CONSOLE_LINK_TTL_MS))) throw fail(CONSOLE_LINK_MESSAGES.used);
  return link.scope;
}

/** How the first-start banner lets the operator in: a ready link, or none, and the command that prints one. */
export interface OperatorAccess {
  readonly link: string | null;
  readonly command: string;
}

/**
 * A ready operator link only when nobody on another machine can use it: the server listens on loopback
 * and PUBLIC_URL names a loopback host. Such a link left in the terminal's scrollback is worth nothing
 * after one sign-in or 15 minutes. Otherwise (a server others reach, a banner a service manager keeps in
 * its log) only the command that prints one, so no operator credential sits in a log. The command names
 * PUBLIC_URL when the server took the default, which a command started alone would not.
 */
export function operatorAccess(
  box: SecretBox,
  options: { readonly publicUrl: string; readonly listenHost: string; readonly publicUrlDefaulted: boolean },
  now: Date = new Date(),
): OperatorAccess {
  const command = `${options.publicUrlDefaulted ? `PUBLIC_URL=${options.publicUrl} ` : ''}npx enrichbridge console-link --operator`;
  const thisMachineOnly = isLoopbackHost(options.listenHost) && isLoopbackHost(new URL(options.publicUrl).hostname);
  return { link: thisMachineOnly ? consoleLinkUrl(box, options.publicUrl, { kind: 'operator' }, now) : null, command };
}
