// Salesforce's routes: Outbound Messages (SOAP) from the record-triggered flows on Contact and Lead
// creation, and the signed JSON variant for Apex or Flow callouts. HTTP only: parsing, signatures and
// the pipeline are in connectors/.
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { JobQueue, NewJob } from '../../core/queue/job-queue.ts';
import type { Bridge } from '../../connectors/pipeline/bridge.ts';
import { InboundDeliveries } from '../../connectors/pipeline/deliveries.ts';
import type { Installation } from '../../connectors/pipeline/model.ts';
import { enrichJob } from '../../connectors/pipeline/enrich-job.ts';
import { SALESFORCE_PROVIDER, isSalesforceObject } from '../../connectors/salesforce/connector.ts';
import { EVENTS_MAX_BODY_BYTES, parseEvents, verifyEvents } from '../../connectors/salesforce/events.ts';
import { OUTBOUND_ACK_XML, OUTBOUND_CONTENT_TYPE, OUTBOUND_MESSAGE_MAX_BYTES, OutboundMessageError, SOAP_FAULT_HTTP_STATUS, outboundMessageDedupeKey, parseOutboundMessage, scanOrganizationId, soapFault } from '../../connectors/salesforce/outbound.ts';
import { constantTimeEqual } from '../../core/secrets/constant-time.ts';
import { MemoryRateLimiter } from '../../core/limits/rate-limiter.ts';
import { toSalesforceId18 } from '../../connectors/salesforce/ids.ts';
import { SALESFORCE_EVENTS_ROUTE, SALESFORCE_OUTBOUND_MESSAGE_ROUTE } from '../../connectors/salesforce/routes.ts';
import { readBody } from './body.ts';
import type { Logger } from '../logger.ts';
import type { Kysely } from 'kysely';
import type { Database } from '../../core/storage/schema.ts';

export interface SalesforceRouteDeps {
  readonly bridge: Bridge;
  readonly queue: JobQueue;
  readonly db: Kysely<Database>;
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

/** The org a body that failed validation names, if it names one: its secret decides between 400 and 401. */
function claimedOrgId(body: Buffer): string | undefined {
  try {
    const json: unknown = JSON.parse(body.toString('utf8'));
    return typeof json === 'object' && json !== null && 'orgId' in json && typeof json.orgId === 'string' ? json.orgId : undefined;
  } catch {
    return undefined;
  }
}

export function salesforceRouter(deps: SalesforceRouteDeps): Router {
  const { bridge, logger } = deps;
  const router = express.Router();
  const deliveries = new InboundDeliveries(deps.db);
  const installationOf = async (orgId: string): Promise<Installation | undefined> => {
    const canonical = toSalesforceId18(orgId);
    return canonical === null ? undefined : bridge.pipelineStore.findInstallationByAccount(SALESFORCE_PROVIDER, canonical);
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
      const claimedOrg = scanOrganizationId(body);
      if (claimedOrg === null) {
        limiter.takeNow(addressKey(req), ratePerAddress);
        fault(res, 'not an outbound message this endpoint accepts (no OrganizationId)');
        return;
      }
      const secret = typeof req.params.secret === 'string' ? req.params.secret : undefined;
      let installation: Installation | undefined;
      try {
        // Looked up inside the try: a database that fails here must still answer a Server fault.
        installation = await installationOf(claimedOrg);
        const expected = installation === undefined || secret === undefined ? undefined : (await bridge.installations.secrets(installation.id)).outboundSecret;
        if (installation === undefined || (secret !== undefined && (expected === undefined || !constantTimeEqual(expected, secret)))) {
          refusals.note(installation !== undefined);
          limiter.takeNow(addressKey(req), ratePerAddress);
          fault(res, 'this organization is not connected to enrichbridge at this address');
          return;
        }
      } catch (error) {
        logger.error({ err: error }, 'salesforce outbound message: the installation could not be read');
        fault(res, 'could not read the installation; Salesforce will retry', 'Server');
        return;
      }
      let message;
      try {
        message = parseOutboundMessage(body);
      } catch (error) {
        if (!(error instanceof OutboundMessageError)) throw error;
        limiter.takeNow(addressKey(req), ratePerAddress);
        fault(res, `not an outbound message this endpoint accepts (${error.code})`);
        return;
      }
      if (toSalesforceId18(message.organizationId) !== installation.externalAccountId) {
        fault(res, 'the envelope names two organizations');
        return;
      }
      try {
        if (installation.status !== 'disabled' && installation.settings.enrichOnCreate) {
          const keys = message.notifications.map((n) => outboundMessageDedupeKey(message.organizationId, n.id));
          const fresh = await deliveries.unseen(SALESFORCE_PROVIDER, keys);
          const jobs: NewJob[] = [];
          for (const notification of message.notifications) {
            if (!fresh.has(outboundMessageDedupeKey(message.organizationId, notification.id))) continue;
            if (!isSalesforceObject(notification.object)) continue;
            jobs.push(enrichJob(installation.id, { object: notification.object, recordId: notification.recordId, trigger: 'create' }));
          }
          // Queued before remembered: a crash between the two means a redelivery queues again (harmless).
          const queued = await deps.queue.enqueueMany(jobs);
          await deliveries.remember(SALESFORCE_PROVIDER, keys);
          if (queued.created > 0) deps.wake();
        }
        // Acknowledges every notification of the message, as Salesforce requires.
        res.status(200).type(OUTBOUND_CONTENT_TYPE).send(OUTBOUND_ACK_XML);
      } catch (error) {
        logger.error({ err: error }, 'salesforce outbound message could not be queued');
        fault(res, 'could not queue the notifications; Salesforce will retry', 'Server');
      }
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
      const parsed = parseEvents(body);
      // The org named in the body picks the secret; nothing in it is acted on before the signature
      // holds. A body that fails validation but names an org is verified with that org's secret, so a
      // signed caller hears 400 for its mistake and everyone else 401.
      const orgId = parsed.ok ? parsed.events.orgId : claimedOrgId(body);
      let installation: Installation | undefined;
      let secret: string | undefined;
      try {
        installation = orgId === undefined ? undefined : await installationOf(orgId);
        secret = installation === undefined ? undefined : (await bridge.installations.secrets(installation.id)).webhookSecret;
      } catch (error) {
        logger.error({ err: error }, 'salesforce events: the installation could not be read');
        res.status(503).json({ message: 'could not read the installation; retry' });
        return;
      }
      if (installation === undefined || secret === undefined || !verifyEvents({ secret, rawBody: body, headers: req.headers }).ok) {
        res.status(401).json({ message: 'invalid or missing signature, or an organization that is not connected' });
        return;
      }
      if (!parsed.ok) {
        res.status(400).json({ message: parsed.message });
        return;
      }
      if (installation.status === 'disabled') {
        res.status(200).json({ queued: 0, duplicates: 0 });
        return;
      }
      try {
        const { object, ids } = parsed.events;
        const target = installation.id;
        const queued = await deps.queue.enqueueMany(ids.map((recordId) => enrichJob(target, { object, recordId, trigger: 'create' })));
        if (queued.created > 0) deps.wake();
        res.status(200).json({ queued: queued.created, duplicates: queued.duplicates });
      } catch (error) {
        logger.error({ err: error }, 'salesforce events could not be queued');
        res.status(503).json({ message: 'could not queue the records; retry' });
      }
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
