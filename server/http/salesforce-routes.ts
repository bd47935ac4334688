// Salesforce's routes: Outbound Messages (SOAP) from the record-triggered flows on Contact and Lead
// creation, and the signed JSON variant for Apex or Flow callouts. HTTP only: reading the body, the
// per-address limit on refusals, sending the answer. What to accept is decided by
// connectors/salesforce/intake.ts.
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { JobQueue } from '../../connectors/pipeline/job-queue.ts';
import { MemoryRateLimiter } from '../../core/limits/rate-limiter.ts';
import type { Bridge } from '../../connectors/pipeline/bridge.ts';
import { EVENTS_MAX_BODY_BYTES } from '../../connectors/salesforce/events.ts';
import { type IntakeAnswer, type SalesforceIntakeDeps, acceptEvents, acceptOutboundMessage } from '../../connectors/salesforce/intake.ts';
import { OUTBOUND_CONTENT_TYPE, OUTBOUND_MESSAGE_MAX_BYTES, SOAP_FAULT_HTTP_STATUS, soapFault } from '../../connectors/salesforce/outbound-xml.ts';
import { SALESFORCE_EVENTS_ROUTE, SALESFORCE_OUTBOUND_MESSAGE_ROUTE } from '../../connectors/salesforce/routes.ts';
import { readBody } from './body.ts';
import type { Logger } from '../logger.ts';

export interface SalesforceRouteDeps {
  readonly bridge: Bridge;
  readonly queue: JobQueue;
  readonly logger: Logger;
  readonly wake: () => void;
  /** Accept outbound messages at the bare path, without an installation's secret (default: refused). */
  readonly outboundLegacyPath?: boolean;
  /** Refused outbound messages per second from one source address before it is turned away unread (default 20). */
  readonly outboundRatePerAddress?: number;
}

function fault(res: Response, message: string, code: 'Client' | 'Server' = 'Client'): void {
  res.status(SOAP_FAULT_HTTP_STATUS).type(OUTBOUND_CONTENT_TYPE).send(soapFault(message, code));
}

/** What express.raw throws for a body it will not read (too large, unknown encoding), as opposed to a bug. */
function bodyParserErrorType(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'type' in error && typeof error.type === 'string' && 'status' in error ? error.type : undefined;
}

function send(res: Response, answer: IntakeAnswer): void {
  res.status(answer.status).type(answer.contentType).send(answer.body);
}

export function salesforceRouter(deps: SalesforceRouteDeps): Router {
  const { bridge, logger } = deps;
  const router = express.Router();
  const intake: SalesforceIntakeDeps = {
    installations: bridge.installations,
    store: bridge.pipelineStore,
    queue: deps.queue,
    deliveries: bridge.deliveries,
    wake: deps.wake,
    onError: (error, what) => logger.error({ err: error }, what),
  };

  // Outbound messages carry no signature and anyone can post one, so what a refusal costs is kept
  // small: an address refused too often is turned away unread, then the org id is read from the first
  // bytes and the URL's secret checked, and only then is the XML parsed.
  const limiter = new MemoryRateLimiter();
  // The socket's address, or the proxy's client address only where TRUST_PROXY says so (req.ip).
  const addressKey = (req: Request): string => `outbound-refusals:${req.ip ?? req.socket.remoteAddress ?? ''}`;
  // One warning a second at most, with the counts: a flood must not become a flood of log lines.
  const refusals = {
    unknownOrg: 0,
    wrongSecret: 0,
    timer: undefined as NodeJS.Timeout | undefined,
    note(knownOrg: boolean): void {
      if (knownOrg) this.wrongSecret += 1;
      else this.unknownOrg += 1;
      this.timer ??= setTimeout(() => {
        logger.warn({ route: SALESFORCE_OUTBOUND_MESSAGE_ROUTE, unknown_org: this.unknownOrg, wrong_secret: this.wrongSecret }, 'outbound messages refused before parsing in the last second');
        this.unknownOrg = 0;
        this.wrongSecret = 0;
        this.timer = undefined;
      }, 1000).unref();
    },
  };
  const ratePerAddress = deps.outboundRatePerAddress ?? 20;
  if (deps.outboundLegacyPath !== true) {
    router.post(SALESFORCE_OUTBOUND_MESSAGE_ROUTE, (_req: Request, res: Response) => {
      res.status(404).type(OUTBOUND_CONTENT_TYPE).send(soapFault("this endpoint needs the installation's secret in its URL: run `enrichbridge salesforce outbound-url <installation>` and update the outbound messages", 'Client'));
    });
  }
  // One route per path (the request log names a route by its one pattern): the secret's, and the bare
  // path only where an operator keeps it.
  const outboundHandlers = [
    (req: Request, res: Response, next: NextFunction) => {
      // An address whose messages were refused too often in the last second is turned away unread.
      // Only refusals count: a busy org's genuine messages (and Salesforce's addresses serve many
      // orgs) are never slowed.
      if (limiter.peekNow(addressKey(req), ratePerAddress).allowed) {
        next();
        return;
      }
      // Closed once answered: reading the rest of a large body only to throw it away is the cost a
      // flood is after.
      res.on('finish', () => req.socket.destroy());
      res.status(429).set('Connection', 'close').type(OUTBOUND_CONTENT_TYPE).send(soapFault('too many refused outbound messages from this address; Salesforce will retry', 'Server'));
    },
    // A little over the parser's own cap, so an oversized message gets its SOAP fault, not a 413.
    readBody({ limit: OUTBOUND_MESSAGE_MAX_BYTES + 1024, refuse: (res, f) => void res.status(f.status).type(OUTBOUND_CONTENT_TYPE).send(soapFault(f.message, 'Client')) }),
    async (req: Request, res: Response) => {
      const body: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const answer = await acceptOutboundMessage(body, typeof req.params.secret === 'string' ? req.params.secret : undefined, intake);
      if (answer.refused !== undefined) {
        limiter.takeNow(addressKey(req), ratePerAddress);
        if (answer.refused !== 'unreadable') refusals.note(answer.refused === 'wrong_secret');
      }
      send(res, answer);
    },
    // A body express.raw refuses (far over the cap, an encoding it cannot read) still gets a SOAP
    // fault, not the app's JSON 500.
    (error: unknown, _req: Request, res: Response, next: NextFunction) => {
      const type = bodyParserErrorType(error);
      if (type === undefined || type === 'request.aborted') {
        next(error);
        return;
      }
      fault(res, `not an outbound message this endpoint accepts (${type})`);
    },
  ] as const;
  router.post(`${SALESFORCE_OUTBOUND_MESSAGE_ROUTE}/:secret`, ...outboundHandlers);
  if (deps.outboundLegacyPath === true) router.post(SALESFORCE_OUTBOUND_MESSAGE_ROUTE, ...outboundHandlers);

  router.post(
    SALESFORCE_EVENTS_ROUTE,
    readBody({ limit: EVENTS_MAX_BODY_BYTES + 1024 }),
    async (req: Request, res: Response) => {
      const body: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      send(res, await acceptEvents(body, req.headers, intake));
    },
    (error: unknown, _req: Request, res: Response, next: NextFunction) => {
      const type = bodyParserErrorType(error);
      if (type === undefined || type === 'request.aborted') {
        next(error);
        return;
      }
      res.status(type === 'entity.too.large' ? 413 : 400).json({ message: `the body could not be read (${type})` });
    },
  );

  return router;
}
