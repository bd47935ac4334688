// The HTTP paths HubSpot calls on us, in one place: routes.ts mounts its handlers here and the
// manifests in manifests/hubspot/ point at them (test/unit/hubspot-manifests.test.ts checks both).

/** Where an admin starts the install: redirects to HubSpot's authorize URL. */
export const HUBSPOT_OAUTH_INSTALL_ROUTE = '/oauth/hubspot/install';
/** The OAuth redirect URL registered in app-hsmeta.json (`redirectUrls`). */
export const HUBSPOT_OAUTH_CALLBACK_ROUTE = '/oauth/hubspot/callback';
/** Webhook batches (`contact.*` events), signed with v3; webhooks-hsmeta.json `targetUrl`. */
export const HUBSPOT_WEBHOOK_ROUTE = '/webhooks/hubspot';
/** The "Enrich contact" workflow action, signed with v2; enrich-contact-hsmeta.json `actionUrl`. */
export const HUBSPOT_ENRICH_ACTION_ROUTE = '/webhooks/hubspot/actions/enrich';
/** The record card's view of a contact (GET), signed with v3; the card's hubspot.fetch calls it. */
export const HUBSPOT_CARD_ROUTE = '/hubspot/card/contacts/:objectId';
/** The record card's actions (POST): `enrich`, `undo`, `exclude`, `include`; signed with v3. */
export const HUBSPOT_CARD_ACTION_ROUTE = '/hubspot/card/contacts/:objectId/:action';
