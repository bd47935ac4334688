// The one way a POST route reads its body: the raw bytes (signatures are computed over them), inflated
// if the client compressed them, capped, and checked to be UTF-8. A body that cannot be read is the
// client's fault, answered with a 4xx in the route's own error format before anything else runs
// (before authentication, so it must be cheap and quiet): never a 500, never an error-level log line.
import { isUtf8 } from 'node:buffer';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { BodyFault } from '../../bridge/http.ts';
import { bodyFaultOf } from './faults.ts';

/** Answers a fault in the route's format; `next` for a route that defers the answer (the enrichment endpoints). */
export type RefuseBody = (res: Response, fault: BodyFault, req: Request, next: NextFunction) => void;

const NOT_UTF8: BodyFault = { status: 400, type: 'utf8.invalid', message: 'the body is not valid UTF-8' };

/**
 * Middleware that leaves the body in `req.body` as a Buffer (empty when there was none), or answers
 * with `refuse`. `limit` is express's: bytes, or a string such as '1mb'; it counts inflated bytes.
 */
export function readBody(options: { readonly limit: number | string; readonly refuse: RefuseBody }): RequestHandler {
  const raw = express.raw({ type: () => true, limit: options.limit });
  const { refuse } = options;
  return (req, res, next) => {
    const afterRaw = (error?: unknown): void => {
      if (error !== undefined && error !== null) {
        const fault = bodyFaultOf(error);
        if (fault === undefined) next(error);
        else refuse(res, fault, req, next);
        return;
      }
      // isUtf8 is what a fatal TextDecoder checks, without making the string: the routes still
      // need the bytes themselves (signatures), and decode later.
      if (Buffer.isBuffer(req.body) && !isUtf8(req.body)) {
        refuse(res, NOT_UTF8, req, next);
        return;
      }
      next();
    };
    void raw(req, res, afterRaw as NextFunction);
  };
}
