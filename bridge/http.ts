// What a CRM module's HTTP routes are made of, free of any web framework: a route is a method, a path,
// how its body is read and a handler that takes the request as data and returns the answer as data
// (Nango's webhook handlers: `{status, headers, body}`, never a thrown error for a caller's fault).
// server/http mounts every module's routes the same way (crm-routes.ts); nothing there knows a CRM.
import type { IncomingHttpHeaders } from 'node:http';

/** Where a module logs: the server's logger, by structural type (pino's fits). */
export interface RouteLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

/** An answer as data: what a handler returns and the server turns into HTTP. */
export interface HttpResult {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** Close the connection once answered, without reading the rest of the body (a flood's refusal). */
  readonly close?: boolean;
}

/** What the server could not read of a body, before the handler runs (read by the server, answered by the route). */
export interface BodyFault {
  /** 413 over the cap, 415 an encoding we do not read, 400 bytes that do not decode. */
  readonly status: 400 | 413 | 415;
  /** body-parser's error type where it has one, else ours (`encoding.invalid`, `utf8.invalid`). */
  readonly type: string;
  readonly message: string;
}

/** A request as a handler sees it. */
export interface CrmRequest {
  /** The path and query string as received: signatures cover the URL the CRM called. */
  readonly url: string;
  /** The path's named parts (`:secret`). */
  readonly params: Readonly<Record<string, string>>;
  /** The query's parameters that have one string value each (a repeated or nested one is left out). */
  readonly query: Readonly<Record<string, string>>;
  readonly headers: IncomingHttpHeaders;
  /** The raw body, UTF-8 and within the route's cap (empty for a GET). */
  readonly body: Buffer;
  /** The caller's address: the socket's, or the proxy's client address where TRUST_PROXY says so. */
  readonly address: string;
}

export interface CrmRoute {
  readonly method: 'GET' | 'POST';
  /** An express-style pattern: `/webhooks/salesforce/outbound-message/:secret`. */
  readonly path: string;
  /** POST routes: the body's cap in bytes (after inflating), and the answer to a body that cannot be read. */
  readonly body?: { readonly limit: number; readonly refuse: (fault: BodyFault) => HttpResult };
  /** Runs before the body is read; an answer turns the request away unread (what a flood costs stays small). */
  readonly admit?: (request: Pick<CrmRequest, 'address' | 'headers'>) => HttpResult | undefined;
  readonly handle: (request: CrmRequest) => Promise<HttpResult> | HttpResult;
}

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** A JSON answer. */
export function jsonResult(status: number, value: unknown, headers: Readonly<Record<string, string>> = {}): HttpResult {
  return { status, headers: { ...headers, 'Content-Type': JSON_CONTENT_TYPE }, body: JSON.stringify(value) };
}

/** The webhook routes' answer to a body they cannot read: JSON `{ message }`. */
export function refuseAsJson(fault: BodyFault): HttpResult {
  return jsonResult(fault.status, { message: fault.message });
}

/** A redirect the browser follows (the OAuth install's first step), with the headers it carries (a cookie). */
export function redirectResult(location: string, headers: Readonly<Record<string, string>> = {}): HttpResult {
  return { status: 302, headers: { ...headers, Location: location, 'Content-Type': 'text/plain; charset=utf-8' }, body: `Found. Redirecting to ${location}` };
}
