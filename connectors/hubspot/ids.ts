// HubSpot ids: portals, apps and CRM records are numbered, sent as JSON numbers or strings of digits.
// Every path that takes an id from HubSpot (webhooks, the workflow action, the journal, a backfill's
// pages) reads it with this one schema, so none of them accepts what another refuses.
import { z } from 'zod';

/** What a HubSpot id looks like as text: digits only, at most 30 of them. */
const HUBSPOT_ID_TEXT = /^\d{1,30}$/;

/** A HubSpot id, as a number or a string of digits, given back as its string of digits. */
export const HubSpotIdSchema = z.union([z.number().int().nonnegative(), z.string().regex(HUBSPOT_ID_TEXT)]).transform(String);

/** Whether `id` is a HubSpot record id as text (what the API's own answers carry). */
export function isHubSpotId(id: string): boolean {
  return HUBSPOT_ID_TEXT.test(id);
}
