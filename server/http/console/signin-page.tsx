// The console's sign-in page: a CRM admin signs in with their CRM (a button for each CRM whose OAuth
// app this server has configured, each a link to its sign-in route); what an operator can do instead
// is one sentence, with the one-time link command as `enrichbridge console-link` really takes it.
import type { VNode } from 'preact';
import type { ConsoleSignIn } from '../../../bridge/crm-module.ts';
import { Layout, renderPage } from './components.tsx';
import type { Chrome } from './format.ts';

/** A CRM module the console can sign in with. */
export interface SignInWith {
  readonly provider: string;
  readonly name: string;
  readonly signIn: ConsoleSignIn;
}

/** The one-time link commands, with the flag `console-link` requires (exactly one of the two). */
export const CONSOLE_LINK_COMMANDS = {
  installation: 'npx enrichbridge console-link --installation ID',
  operator: 'npx enrichbridge console-link --operator',
} as const;

function OperatorSentence({ hasCrm }: { readonly hasCrm: boolean }): VNode {
  return (
    <p class="muted" id="operator-link">
      {hasCrm ? 'Not an admin of the CRM, or not signed in by it? ' : 'This server has no CRM sign-in configured. '}
      An operator can let anyone in with a one-time sign-in link (good for 15 minutes and one sign-in), made on the server with{' '}
      <code>{CONSOLE_LINK_COMMANDS.installation}</code> for one installation's admin or <code>{CONSOLE_LINK_COMMANDS.operator}</code> for the operator.
    </p>
  );
}

/** The sign-in page: a button for each way in with a CRM, and what an operator can do beside them. */
export function signInPage(chrome: Chrome, signIns: readonly SignInWith[]): string {
  const who = signIns.map(({ name, signIn }) => `${name}: ${signIn.adminPermission}`).join('; ');
  return renderPage(
    <Layout chrome={chrome} title="Sign in">
      <p>You are not signed in, or your session has ended.</p>
      {signIns.length === 0 ? null : (
        <>
          <p>{`Sign in with the CRM your installation is in. Only its admins may (${who}); you then see that portal's or org's installation and nothing else.`}</p>
          <ul class="signin" id="signin-with">
            {signIns.flatMap(({ provider, signIn }) =>
              signIn.choices.map((choice) => {
                const query = new URLSearchParams(choice.query).toString();
                return (
                  <li>
                    <a class="button" href={`${chrome.base}/signin/${encodeURIComponent(provider)}${query === '' ? '' : `?${query}`}`}>
                      {choice.label}
                    </a>
                  </li>
                );
              }),
            )}
          </ul>
        </>
      )}
      <OperatorSentence hasCrm={signIns.length > 0} />
    </Layout>,
  );
}
