// The sandbox playground (QA): a persona picked or a request written, sent to this server's sandbox
// with the installation's own token (so the account's entitlements apply; a production installation's
// token asks its account's sandbox, which only this in-process call may do), the error simulator if
// asked; the page shows the request as sent and the answer as the endpoint gives it.
import { z } from 'zod';
import type { Installation } from '../../../bridge/model.ts';
import { PERSONAS } from '../../../core/sandbox/personas.ts';
import { CsrfField, InstallationNav, Layout, Notice, renderPage } from './components.tsx';
import { type Chrome, accountName } from './format.ts';

export const SIMULATED_ERRORS = ['', '400', '429', '500', '503'] as const;

export const PlaygroundFormSchema = z.object({
  csrf: z.string(),
  persona: z
    .string()
    .regex(/^(|\d{1,2})$/)
    .default(''),
  request: z
    .string()
    .max(64 * 1024, 'at most 64 KiB')
    .default(''),
  simulate: z.enum(SIMULATED_ERRORS).default(''),
});
export type PlaygroundForm = z.infer<typeof PlaygroundFormSchema>;

/** The request a persona stands for: the identifiers the sandbox matches on. */
export function personaRequest(n: number): Record<string, unknown> | undefined {
  const persona = PERSONAS.find((p) => p.n === n);
  if (persona === undefined) return undefined;
  return { first_name: persona.first_name, last_name: persona.last_name, emails: [persona.email] };
}

export interface Exchange {
  readonly requestHeaders: Readonly<Record<string, string>>;
  readonly requestBody: string;
  readonly status: number;
  readonly responseHeaders: Readonly<Record<string, string>>;
  readonly responseBody: unknown;
}

const headerLines = (headers: Readonly<Record<string, string>>) =>
  Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}`)
    .join('\n');

export function playgroundPage(
  chrome: Chrome,
  installation: Installation,
  form: Partial<PlaygroundForm>,
  exchange: Exchange | null,
  notice: string | null,
): string {
  const base = `${chrome.base}/installations/${encodeURIComponent(installation.id)}`;
  return renderPage(
    <Layout chrome={chrome} title={`Sandbox playground: ${accountName(installation)}`}>
      <InstallationNav base={base} current="playground" />
      {notice === null ? null : (
        <Notice>
          <p>{notice}</p>
        </Notice>
      )}
      <p>
        Requests go to this server's sandbox (<code>POST /sandbox/v1</code>) with this installation's own token, so the account's entitlements decide what comes
        back. The sandbox spends no quota; each request counts against the token's rate.
      </p>
      {installation.environment === 'production' ? (
        <p id="production-sandbox">
          This installation is in production: the playground asks its account's sandbox with its production token (the personas, never production data), which
          only the console may do; a production token sent to <code>/sandbox/v1</code> from elsewhere is refused.
        </p>
      ) : null}
      <form method="post" action={`${base}/playground`}>
        <CsrfField token={chrome.session?.csrf ?? ''} />
        <p>
          <label for="persona">Persona</label>
          <br />
          <select name="persona" id="persona">
            <option value="">write my own below</option>
            {PERSONAS.map((p) => (
              <option value={String(p.n)} selected={form.persona === String(p.n)}>
                {`${p.first_name} ${p.last_name} (${p.category.replace(/_/g, ' ')})`}
              </option>
            ))}
          </select>
        </p>
        <p>
          <label for="request">Or a request of your own (JSON; used when not empty)</label>
          <br />
          <textarea name="request" id="request" rows={6} cols={60}>
            {form.request ?? ''}
          </textarea>
        </p>
        <p>
          <label for="simulate">Error simulator</label>
          <br />
          <select name="simulate" id="simulate">
            {SIMULATED_ERRORS.map((code) => (
              <option value={code} selected={(form.simulate ?? '') === code}>
                {code === '' ? 'no error' : `simulate ${code}`}
              </option>
            ))}
          </select>
        </p>
        <p>
          <button type="submit">Send</button>
        </p>
      </form>
      {exchange === null ? null : (
        <>
          <h2>Request</h2>
          <pre id="sent">
            <code>{`POST /sandbox/v1\n${headerLines(exchange.requestHeaders)}\n\n${exchange.requestBody}`}</code>
          </pre>
          <h2>Response</h2>
          <pre id="answer">
            <code>{`HTTP ${exchange.status}\n${headerLines(exchange.responseHeaders)}\n\n${JSON.stringify(exchange.responseBody, null, 2)}`}</code>
          </pre>
        </>
      )}
    </Layout>,
  );
}
