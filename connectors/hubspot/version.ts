// The HubSpot API version enrichbridge speaks, and every HubSpot path it calls, in one place: the API
// client, the OAuth client, the console sign-in and the install build their URLs from here.
//
// HubSpot's numbered APIs (`/crm/v3`, `/oauth/v1`, `/automation/v4`, `/settings/v3`) end on fixed dates
// in 2027; the date-based ones are named `/<area>/<YYYY-MM>/…`. Moving to the next version: change
// HUBSPOT_API_VERSION, read that version's changelog for each path below, and run the HubSpot suites
// (the fake answers only the version named here and 410 to any numbered path).

/** HubSpot's date-based API version: the latest that has every endpoint below. */
export const HUBSPOT_API_VERSION = '2026-09';

const V = HUBSPOT_API_VERSION;
const segment = (value: string) => encodeURIComponent(value);

export const HUBSPOT_PATHS = {
  /** OAuth: code exchange and refresh. */
  token: `/oauth/${V}/token`,
  /** OAuth: who a token belongs to (portal, user, scopes). */
  introspect: `/oauth/${V}/token/introspect`,
  contacts: `/crm/objects/${V}/contacts`,
  contactsBatchRead: `/crm/objects/${V}/contacts/batch/read`,
  contactsBatchUpdate: `/crm/objects/${V}/contacts/batch/update`,
  contactsSearch: `/crm/objects/${V}/contacts/search`,
  properties: `/crm/properties/${V}/contacts`,
  propertiesBatchCreate: `/crm/properties/${V}/contacts/batch/create`,
  property: (name: string) => `/crm/properties/${V}/contacts/${segment(name)}`,
  groups: `/crm/properties/${V}/contacts/groups`,
  group: (name: string) => `/crm/properties/${V}/contacts/groups/${segment(name)}`,
  /** Workflow actions: completes many BLOCKed enrollments in one call. */
  callbacksComplete: `/automation/actions/callbacks/${V}/complete`,
  user: (userId: string) => `/settings/users/${V}/${segment(userId)}`,
  accountDetails: `/account-info/${V}/details`,
  /** Webhooks Journal: the subscriptions that decide which events a portal's journal keeps. */
  journalSubscriptions: `/webhooks-journal/subscriptions/${V}`,
  /** Webhooks Journal: the oldest entries kept for one installed portal (`installPortalId`). */
  journalEarliest: (count: number) => `/webhooks-journal/journal-local/${V}/batch/earliest/${count}`,
  /** Webhooks Journal: the entries after an offset (404 once the offset has expired). */
  journalNext: (offset: string, count: number) => `/webhooks-journal/journal-local/${V}/batch/${segment(offset)}/next/${count}`,
} as const;

/** A numbered (legacy) HubSpot API path, such as `/crm/v3` or `/oauth/v1` and what follows them. */
export const NUMBERED_HUBSPOT_PATH = /^\/[a-z-]+(?:\/[a-z-]+)*?\/v\d+(?:\/|$)/;
