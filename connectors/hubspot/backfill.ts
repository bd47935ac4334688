// The HubSpot side of a backfill: the portal's contacts page by page through the list endpoint (not
// search, which stops at 10,000 results), 100 at a time with the identity properties and ours, so a
// plan can count match keys and input hashes without a second read. The cursor is HubSpot's own `after`
// token, so an interrupted backfill resumes at the page it stopped on.
import { BackfillRecordIdError, type RecordSource } from '../../bridge/backfill.ts';
import type { CrmBackfill } from '../../bridge/crm-module.ts';
import type { HubSpotApi } from './api.ts';
import { CONTACT, HubSpotConnector, hubspotApiFor, readProperties } from './connector.ts';
import { isHubSpotId } from './ids.ts';

/** Docs: https://developers.hubspot.com/docs/api-reference/latest/crm/objects/contacts/basic/list-contacts */
export function hubspotRecordSource(options: { readonly api: Pick<HubSpotApi, 'listContacts'> }): RecordSource {
  const properties = readProperties();
  return async (cursor) => {
    const page = await options.api.listContacts(cursor, properties);
    // Only ids a webhook would take (digits): anything else is refused before a page of it is queued.
    const refused = page.contacts.find((contact) => !isHubSpotId(contact.id));
    if (refused !== undefined) throw new BackfillRecordIdError('HubSpot', 'contact', refused.id, 'digits only');
    return { records: page.contacts, next: page.after };
  };
}

/** `enrichbridge backfill hubspot`: the portal's contacts. */
export const hubspotBackfill: CrmBackfill = {
  description: 'page through the portal’s contacts (not the 10,000-capped search) and enqueue those that need enriching',
  nouns: { [CONTACT]: 'contacts' },
  open: async ({ installation, installations }) => {
    const api = await hubspotApiFor(installation, installations);
    return {
      connector: new HubSpotConnector(api),
      source: hubspotRecordSource({ api }),
      scanned: 'contacts',
      summary: () => ({ restarted: false, lines: [] }),
    };
  },
};
