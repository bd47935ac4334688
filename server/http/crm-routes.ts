// Mounts every CRM module's routes the same way: reads the body as the route asks (raw bytes, capped,
// UTF-8; a fault answered by the route), hands the handler the request as data and sends the answer
// it returns. Nothing here knows which CRMs exist (bridge/crm-module.ts).
import express, { type NextFunction, type Request, type RequestHandler, type Response, type Router } from 'express';
import type { CrmRequest, CrmRoute, HttpResult } from '../../bridge/http.ts';
import type { CrmModule, CrmRouteContext } from '../../bridge/crm-module.ts';
import { readBody } from './body.ts';

/** One router with the routes of every module, in the modules' order. */
export function crmRouter(modules: readonly CrmModule[], context: CrmRouteContext): Router {
  const router = express.Router();
  for (const module of modules) {
    for (const route of module.routes?.(context) ?? []) mount(router, route);
  }
  return router;
}

/** Sends an answer given as data; one that asks for it closes the connection once sent, unread. */
export function sendResult(req: Request, res: Response, result: HttpResult): void {
  if (result.close === true) res.on('finish', () => req.socket.destroy());
  res.status(result.status).set(result.headers).send(result.body);
}

/** The socket's address, or the proxy's client address only where TRUST_PROXY says so (req.ip). */
function addressOf(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? '';
}

/** The parameters with one string value each: a repeated or nested query parameter is no value at all. */
function stringValues(parameters: Readonly<Record<string, unknown>>): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(parameters)) if (typeof value === 'string') values[name] = value;
  return values;
}

/** What express.raw throws for a body it will not read, as opposed to a bug. */
function bodyParserErrorType(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'type' in error && typeof error.type === 'string' && 'status' in error ? error.type : undefined;
}

const EMPTY = Buffer.alloc(0);

function mount(router: Router, route: CrmRoute): void {
  const handlers: RequestHandler[] = [];
  const { admit, body } = route;
  if (admit !== undefined) {
    handlers.push((req, res, next) => {
      const refusal = admit({ address: addressOf(req), headers: req.headers });
      if (refusal === undefined) next();
      else sendResult(req, res, refusal);
    });
  }
  if (body !== undefined) handlers.push(readBody({ limit: body.limit, refuse: (res, fault, req) => sendResult(req, res, body.refuse(fault)) }));
  handlers.push((req, res, next) => {
    const request: CrmRequest = {
      url: req.originalUrl,
      params: stringValues(req.params),
      query: stringValues(req.query),
      headers: req.headers,
      body: Buffer.isBuffer(req.body) ? req.body : EMPTY,
      address: addressOf(req),
    };
    // A handler answers every fault of the caller's as data; what it throws is ours (the app's 500).
    Promise.resolve()
      .then(() => route.handle(request))
      .then((result) => sendResult(req, res, result))
      .catch(next);
  });
  const register = route.method === 'GET' ? router.get.bind(router) : router.post.bind(router);
  register(route.path, ...handlers, (error: unknown, req: Request, res: Response, next: NextFunction) => {
    // A body express.raw refuses in a way readBody does not name still gets the route's own refusal.
    const type = bodyParserErrorType(error);
    if (body === undefined || type === undefined || type === 'request.aborted') {
      next(error);
      return;
    }
    sendResult(req, res, body.refuse({ status: type === 'entity.too.large' ? 413 : 400, type, message: `the body could not be read (${type})` }));
  });
}
