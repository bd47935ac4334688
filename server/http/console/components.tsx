// The console's view components, rendered to strings on the server: every interpolated value is text
// (preact escapes it) unless a component says otherwise, and props are typed. The layout, a form field
// with its error, the CSRF field, a data table and a pager are written once here.
import type { ComponentChildren, VNode } from 'preact';
import { render } from 'preact-render-to-string';
import { CONSOLE_ASSETS } from './assets.ts';
import { type Chrome, siteRoot, utcText, visibleRecordId } from './format.ts';

/** A page as the console sends it: the doctype, then the rendered document. */
export function renderPage(page: VNode): string {
  return `<!doctype html>\n${render(page)}`;
}

/** The hidden field every console post carries: the session's form token. */
export function CsrfField({ token }: { readonly token: string }): VNode {
  return <input type="hidden" name="csrf" value={token} />;
}

export function Layout({ chrome, title, children }: { readonly chrome: Chrome; readonly title: string; readonly children?: ComponentChildren }): VNode {
  const session = chrome.session;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title} · enrichbridge console`}</title>
        <link rel="icon" href={`${siteRoot(chrome)}/favicon.ico`} sizes="16x16 32x32" />
        <link rel="stylesheet" href={`${chrome.base}/assets/${CONSOLE_ASSETS.css.hashed}`} />
        <script src={`${chrome.base}/assets/${CONSOLE_ASSETS.js.hashed}`} defer></script>
      </head>
      <body>
        <header>
          <a href={chrome.base}>enrichbridge console</a>
          {session === null ? null : (
            <>
              <span class="who" id="who">
                <span class="visually-hidden">Signed in: </span>
                {session.who}
              </span>
              <form method="post" action={`${chrome.base}/signout`}>
                <CsrfField token={session.csrf} />
                <button type="submit">Sign out</button>
              </form>
            </>
          )}
        </header>
        <main>
          <h1>{title}</h1>
          {children}
        </main>
      </body>
    </html>
  );
}

/** A notice: a refusal (`bad`, an alert) or where to go next (a status). */
export function Notice({ tone = 'info', id, children }: { readonly tone?: 'info' | 'bad'; readonly id?: string; readonly children: ComponentChildren }): VNode {
  return (
    <div class={tone === 'bad' ? 'notice bad' : 'notice'} role={tone === 'bad' ? 'alert' : 'status'} {...(id === undefined ? {} : { id })}>
      {children}
    </div>
  );
}

/** A page with one message: a refusal, or where to go next. */
export function messagePage(chrome: Chrome, title: string, lines: readonly string[], tone: 'info' | 'bad' = 'info'): string {
  return renderPage(
    <Layout chrome={chrome} title={title}>
      <Notice tone={tone}>
        {lines.map((line) => (
          <p>{line}</p>
        ))}
      </Notice>
    </Layout>,
  );
}

/** What a field hands its input: the id its label names, and the error it is described by. */
export interface FieldInput {
  readonly id: string;
  readonly name: string;
  readonly 'aria-invalid'?: 'true';
  readonly 'aria-describedby'?: string;
}

/**
 * A form field with its label and, when the value was refused, its error: the input is marked invalid
 * and described by the error (`#<id>-error`).
 */
export function Field(props: {
  readonly name: string;
  readonly label: string;
  readonly error: string | undefined;
  /** The input's id; `f-<name>` unless given. */
  readonly id?: string;
  readonly input: (field: FieldInput) => ComponentChildren;
}): VNode {
  const id = props.id ?? `f-${props.name}`;
  const input: FieldInput =
    props.error === undefined ? { id, name: props.name } : { id, name: props.name, 'aria-invalid': 'true', 'aria-describedby': `${id}-error` };
  return (
    <p>
      <label for={id}>{props.label}</label>
      <br />
      {props.input(input)}
      {props.error === undefined ? null : (
        <span class="error" id={`${id}-error`}>
          {props.error}
        </span>
      )}
    </p>
  );
}

export interface Column<Row> {
  readonly header: string;
  /** A class on the column's cells and header (`opt`: hidden on narrow screens). */
  readonly class?: string;
  /** The cell is the row's header (`<th scope="row">`). */
  readonly rowHeader?: boolean;
  readonly cell: (row: Row) => ComponentChildren;
  /** A class for one cell from its row. */
  readonly cellClass?: (row: Row) => string;
}

/** A table of rows, one column per field, scrolling sideways on a narrow screen. */
export function DataTable<Row>(props: {
  readonly id: string;
  readonly caption?: string;
  readonly columns: readonly Column<Row>[];
  readonly rows: readonly Row[];
  readonly rowAttributes?: (row: Row) => Record<string, string>;
}): VNode {
  return (
    <div class="scroll">
      <table id={props.id}>
        {props.caption === undefined ? null : <caption class="muted">{props.caption}</caption>}
        <thead>
          <tr>
            {props.columns.map((column) => (
              <th scope="col" {...(column.class === undefined ? {} : { class: column.class })}>
                {column.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row) => (
            <tr {...(props.rowAttributes?.(row) ?? {})}>
              {props.columns.map((column) => {
                const classes = [column.class, column.cellClass?.(row)].filter((c) => c !== undefined && c !== '').join(' ');
                const attributes = classes === '' ? {} : { class: classes };
                return column.rowHeader === true ? (
                  <th scope="row" {...attributes}>
                    {column.cell(row)}
                  </th>
                ) : (
                  <td {...attributes}>{column.cell(row)}</td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** Links to the newest page and to the next older one, each only where there is one. */
export function Pager(props: {
  readonly newest: string | null;
  readonly older: string | null;
  readonly newestLabel?: string;
  readonly olderLabel?: string;
}): VNode {
  return (
    <div class="actions">
      {props.newest === null ? null : <a href={props.newest}>{props.newestLabel ?? 'Newest entries'}</a>}
      {props.older === null ? null : (
        <a id="older" href={props.older}>
          {props.olderLabel ?? 'Older entries'}
        </a>
      )}
    </div>
  );
}

/**
 * A CRM record id: in a bidi isolate, its own bidi controls written as their codes, so an id of
 * right-to-left characters, or one crafted to reorder text, cannot move the words around it.
 */
export function RecordId({ id }: { readonly id: string }): VNode {
  return <bdi>{visibleRecordId(id)}</bdi>;
}

/** A time in UTC (utcText), marked up for machines too. */
export function Time({ iso }: { readonly iso: string }): VNode {
  return <time dateTime={iso}>{utcText(iso)}</time>;
}

/** An installation's pages, in the one order every one of them lists them. */
export const INSTALLATION_PAGES = [
  ['overview', '', 'Overview'],
  ['log', '/log', 'Enrichment log'],
  ['settings', '/settings', 'Settings'],
  ['backfill', '/backfill', 'Backfill'],
  ['playground', '/playground', 'Sandbox playground'],
] as const;
export type InstallationPage = (typeof INSTALLATION_PAGES)[number][0];

/**
 * The same navigation on every page of an installation (`base`: the installation's address), the page
 * one is on marked for screen readers (`aria-current`); `current` null on pages below one of them.
 */
export function InstallationNav({ base, current }: { readonly base: string; readonly current: InstallationPage | null }): VNode {
  return (
    <nav aria-label="This installation">
      {INSTALLATION_PAGES.map(([page, path, label], i) => (
        <>
          {i === 0 ? null : ' '}
          <a href={`${base}${path}`} aria-current={page === current ? 'page' : undefined}>
            {label}
          </a>
        </>
      ))}
    </nav>
  );
}
