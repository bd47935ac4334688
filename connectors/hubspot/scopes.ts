// What the HubSpot app asks a portal for: the OAuth scopes, and the contact properties whose change
// means "enrich again". The OAuth code, the webhook intake and the manifests all read them from here.

/**
 * Scopes every install must grant (app-hsmeta.json `requiredScopes`, the `scope` parameter):
 * - `oauth`: added to every OAuth app by HubSpot;
 * - `crm.objects.contacts.read` / `.write`: batch read and batch update of contacts, and the
 *   `contact.*` webhook subscriptions;
 * - `crm.schemas.contacts.read` / `.write`: provisioning the `enrichbridge` group and `wf_*` properties.
 */
export const HUBSPOT_REQUIRED_SCOPES = [
  'oauth',
  'crm.objects.contacts.read',
  'crm.objects.contacts.write',
  'crm.schemas.contacts.read',
  'crm.schemas.contacts.write',
] as const;

/**
 * Scopes granted when the portal has them (app-hsmeta.json `optionalScopes`, the `optional_scope`
 * parameter); HubSpot drops one the portal's subscription lacks instead of refusing the install.
 * - `automation`: `POST /automation/actions/callbacks/{version}/complete`, which finishes a
 *   workflow action that answered BLOCK. Workflows (and so custom workflow actions) exist only on
 *   Professional and Enterprise hubs; as a required scope it would keep Free and Starter portals
 *   from installing the app at all, though contact enrichment needs nothing from it.
 */
export const HUBSPOT_OPTIONAL_SCOPES = ['automation'] as const;

/**
 * Scopes asked for (as optional, `optional_scope`) only when an admin signs in to the console, never
 * at install: the installation's own tokens do not need them. Declared in app-hsmeta.json's
 * `optionalScopes` beside HUBSPOT_OPTIONAL_SCOPES, since HubSpot grants only scopes the app declares.
 * - `settings.users.read`: `GET /settings/users/{version}/{userId}`, whose `superAdmin` says whether the user
 *   who signed in is a Super Admin of the portal (connectors/hubspot/console-signin.ts).
 */
export const HUBSPOT_SIGN_IN_SCOPES = ['settings.users.read'] as const;

export type HubSpotScope = (typeof HUBSPOT_REQUIRED_SCOPES)[number] | (typeof HUBSPOT_OPTIONAL_SCOPES)[number] | (typeof HUBSPOT_SIGN_IN_SCOPES)[number];

/**
 * The contact properties the mapping turns into an enrichment request. A `contact.propertyChange`
 * on one of them enqueues re-enrichment; webhooks-hsmeta.json subscribes to exactly these.
 */
export const HUBSPOT_IDENTITY_PROPERTIES = [
  'firstname',
  'lastname',
  'email',
  'hs_additional_emails',
  'phone',
  'mobilephone',
  'address',
  'city',
  'state',
  'zip',
  'company',
] as const;

export type HubSpotIdentityProperty = (typeof HUBSPOT_IDENTITY_PROPERTIES)[number];
