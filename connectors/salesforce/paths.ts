// The HTTP paths Salesforce (and the admin's browser) calls on us, in one place: routes.ts mounts its
// handlers here and the metadata in manifests/salesforce/ points at them (test/unit/salesforce-manifests.test.ts).

/** Where an admin starts the install: redirects to Salesforce's authorize URL (production or sandbox). */
export const SALESFORCE_OAUTH_INSTALL_ROUTE = '/oauth/salesforce/install';
/** The OAuth redirect URL; the External Client App's callback URL must be exactly this on the public host. */
export const SALESFORCE_OAUTH_CALLBACK_ROUTE = '/oauth/salesforce/callback';
/**
 * Outbound Messages (SOAP) from the record-triggered flows. The `endpointUrl` of the workflow outbound
 * messages is this followed by `/<the installation's outbound secret>` (salesforceOutboundMessagePath);
 * the bare path is accepted only where an operator enables it (SALESFORCE_OUTBOUND_LEGACY_PATH).
 */
export const SALESFORCE_OUTBOUND_MESSAGE_ROUTE = '/webhooks/salesforce/outbound-message';

/** The path an installation's outbound messages are posted to, its secret included. */
export const salesforceOutboundMessagePath = (secret: string): string => `${SALESFORCE_OUTBOUND_MESSAGE_ROUTE}/${secret}`;
/** The signed JSON variant (`{orgId, object, ids[]}`) for Apex or Flow HTTP callouts. */
export const SALESFORCE_EVENTS_ROUTE = '/webhooks/salesforce/events';
/**
 * The packaged Apex trigger's callout (EnrichbridgeRecordSender, after insert on Contact and Lead):
 * `{deliveryId, orgId, object, ids[]}` through the Named Credential Enrichbridge_Record, so the org's
 * record credential arrives in SALESFORCE_RECORD_SECRET_HEADER and no per-org secret sits in the URL.
 */
export const SALESFORCE_TRIGGER_ROUTE = '/webhooks/salesforce/trigger';

// Re-exported so a module that needs the routes and the version imports one file.
export { SALESFORCE_API_VERSION } from './version.ts';

/**
 * The record component's per-record API, which its Apex controller calls through the Named Credential
 * Enrichbridge_Record with the org's secret in a header: `GET <this>/:object/:recordId` (the record view)
 * and `POST <this>/:object/:recordId/:action` (enrich, undo, exclude, include).
 */
export const SALESFORCE_RECORD_ROUTE = '/salesforce/record';
/** The header the External Credential sends the org's secret in. */
export const SALESFORCE_RECORD_SECRET_HEADER = 'X-Enrichbridge-Org-Secret';
/** The path segments of the record actions, and the RecordDesk action each one runs. */
export const SALESFORCE_RECORD_ACTIONS = { enrich: 'enrich_now', undo: 'undo', exclude: 'exclude', include: 'include' } as const;
