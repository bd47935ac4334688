// Salesforce's routes: Outbound Messages (SOAP) from the record-triggered flows on Contact and Lead
// creation, and the signed JSON variant for Apex or Flow callouts. HTTP only: parsing, signatures and
// the pipeline are in connectors/.
import express, { type Request, type Response, type Router } from 'express';
import type { JobQueue, NewJob } from '../core/queue/job-queue.ts';
import type { Bridge } from '../connectors/pipeline/bridge.ts';
import { InboundDeliveries } from '../connectors/pipeline/deliveries.ts';
import type { Installation } from '../connectors/pipeline/model.ts';
import { enrichJob } from '../connectors/pipeline/pipeline.ts';
import { SALESFORCE_PROVIDER, isSalesforceObject } from '../connectors/salesforce/connector.ts';
import { EVENTS_MAX_BODY_BYTES, parseEvents, verifyEvents } from '../connectors/salesforce/events.ts';
import {
  OUTBOUND_ACK_XML,
  OUTBOUND_CONTENT_TYPE,
  OUTBOUND_MESSAGE_MAX_BYTES,
  OutboundMessageError,
  SOAP_FAULT_HTTP_STATUS,
  outboundMessageDedupeKey,
  parseOutboundMessage,
  soapFault,
  toSalesforceId18,
} from '../connectors/salesforce/outbound.ts';
import { SALESFORCE_EVENTS_ROUTE, SALESFORCE_OUTBOUND_MESSAGE_ROUTE } from '../connectors/salesforce/routes.ts';
import type { Logger } from './logger.ts';
import type { Kysely } from 'kysely';
import type { Database } from '../core/storage/schema.ts';

export interface SalesforceRouteDeps {
  readonly bridge: Bridge;
  readonly queue: JobQueue;
  readonly db: Kysely<Database>;
  readonly logger: Logger;
  readonly wake: () => void;
}

function fault(res: Response, message: string, code: 'Client' | 'Server' = 'Client'): void {
  res.status(SOAP_FAULT_HTTP_STATUS).type(OUTBOUND_CONTENT_TYPE).send(soapFault(message, code));
}

export function salesforceRouter(deps: SalesforceRouteDeps): Router {
  const { bridge, logger } = deps;
  const router = express.Router();
  const deliveries = new InboundDeliveries(deps.db);
  const installationOf = async (orgId: string): Promise<Installation | undefined> => {
    const canonical = toSalesforceId18(orgId);
    return canonical === null ? undefined : bridge.pipelineStore.findInstallationByAccount(SALESFORCE_PROVIDER, canonical);
  };

  router.post(
    SALESFORCE_OUTBOUND_MESSAGE_ROUTE,
    // A little over the parser's own cap, so an oversized message gets its SOAP fault, not a 413.
    express.raw({ type: () => true, limit: OUTBOUND_MESSAGE_MAX_BYTES + 1024 }),
    async (req: Request, res: Response) => {
      const body: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      let message;
      try {
        message = parseOutboundMessage(body);
      } catch (error) {
        if (!(error instanceof OutboundMessageError)) throw error;
        fault(res, `not an outbound message this endpoint accepts (${error.code})`);
        return;
      }
      // Outbound messages carry no signature: the organization must be one we are connected to.
      const installation = await installationOf(message.organizationId);
      if (installation === undefined) {
        logger.warn({ route: SALESFORCE_OUTBOUND_MESSAGE_ROUTE }, 'outbound message from an organization that is not connected');
        fault(res, 'this organization is not connected to enrichbridge');
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
  );

  router.post(SALESFORCE_EVENTS_ROUTE, express.raw({ type: () => true, limit: EVENTS_MAX_BODY_BYTES + 1024 }), async (req: Request, res: Response) => {
    const body: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const parsed = parseEvents(body);
    // The org named in the body picks the secret; nothing in it is acted on before the signature holds.
    const installation = parsed.ok ? await installationOf(parsed.events.orgId) : undefined;
    const secret = installation === undefined ? undefined : (await bridge.installations.secrets(installation.id)).webhookSecret;
    if (installation === undefined || secret === undefined || !verifyEvents({ secret, rawBody: body, headers: req.headers }).ok) {
      res.status(401).json({ message: 'invalid or missing signature, or an organization that is not connected' });
      return;
    }
    if (!parsed.ok) {
      res.status(400).json({ message: parsed.message });
      return;
    }
    if (installation.status === 'disabled') {
      res.status(200).json({ queued: 0 });
      return;
    }
    try {
      const { object, ids } = parsed.events;
      const queued = await deps.queue.enqueueMany(ids.map((recordId) => enrichJob(installation.id, { object, recordId, trigger: 'create' })));
      if (queued.created > 0) deps.wake();
      res.status(200).json({ queued: queued.created, duplicates: queued.duplicates });
    } catch (error) {
      logger.error({ err: error }, 'salesforce events could not be queued');
      res.status(503).json({ message: 'could not queue the records; retry' });
    }
  });

  return router;
}
