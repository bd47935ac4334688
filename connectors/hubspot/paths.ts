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
