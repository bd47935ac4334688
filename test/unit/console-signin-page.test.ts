// The sign-in page offers a CRM admin the CRMs this server can sign in with ("Sign in with HubSpot", a
// link to its sign-in route), and says in one sentence what an operator can do: the one-time link
// command with the flag `console-link` requires (exactly one of --installation ID and --operator).
import { describe, expect, it } from 'vitest';
import type { ConsoleSignIn } from '../../bridge/crm-module.ts';
import { consoleCommand } from '../../server/cli/console.ts';
import { CONSOLE_LINK_COMMANDS, signInPage } from '../../server/http/console/signin-page.tsx';

const chrome = { base: '/console', session: null };
const signIn = (choices: ConsoleSignIn['choices'], adminPermission: string): ConsoleSignIn => ({
  available: () => true,
  choices,
  adminPermission,
  authorizeUrl: () => 'https://crm.example/authorize',
  identify: () => Promise.reject(new Error('not here')),
});
const HUBSPOT = { provider: 'hubspot', name: 'HubSpot', signIn: signIn([{ label: 'Sign in with HubSpot', query: {} }], 'Super Admin rights') };
const SALESFORCE = {
  provider: 'salesforce',
  name: 'Salesforce',
  signIn: signIn(
    [
      { label: 'Sign in with Salesforce', query: {} },
      { label: 'Sign in with a Salesforce sandbox org', query: { org: 'sandbox' } },
    ],
    'Modify All Data',
  ),
};

describe('the sign-in page', () => {
  it('offers a sign-in with each CRM this server has configured, each a link to its sign-in route', () => {
    const html = signInPage(chrome, [HUBSPOT, SALESFORCE]);
    expect([...html.matchAll(/<a class="button" href="([^"]+)">([^<]+)<\/a>/g)].map((m) => [m[1], m[2]])).toEqual([
      ['/console/signin/hubspot', 'Sign in with HubSpot'],
      ['/console/signin/salesforce', 'Sign in with Salesforce'],
      ['/console/signin/salesforce?org=sandbox', 'Sign in with a Salesforce sandbox org'],
    ]);
    expect(signInPage(chrome, [HUBSPOT])).not.toContain('/console/signin/salesforce');
    expect(signInPage(chrome, [])).not.toContain('class="button"');
  });

  it("says in one sentence what an operator can do, with the link command's required flag, and tells no admin to run it", () => {
    for (const html of [signInPage(chrome, [HUBSPOT]), signInPage(chrome, [])]) {
      const sentence = /<p class="muted" id="operator-link">([\s\S]*?)<\/p>/.exec(html)?.[1] ?? '';
      expect(sentence).toContain(`<code>${CONSOLE_LINK_COMMANDS.installation}</code>`);
      expect(sentence).toContain(`<code>${CONSOLE_LINK_COMMANDS.operator}</code>`);
      expect(sentence).toContain('An operator can');
      expect(html).not.toMatch(/<code>npx enrichbridge console-link<\/code>/);
    }
  });

  it('names only flags the console-link command has', () => {
    const flags = consoleCommand().options.map((option) => option.long);
    for (const command of Object.values(CONSOLE_LINK_COMMANDS)) {
      const [, name, flag] = /^npx enrichbridge (\S+) (--[\w-]+)/.exec(command) ?? [];
      expect(name).toBe(consoleCommand().name());
      expect(flags).toContain(flag);
    }
  });
});
