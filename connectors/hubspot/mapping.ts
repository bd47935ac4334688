// A HubSpot contact's identity properties → an enrichment request.
import type { EnrichmentRequest } from '../../core/contract/schemas.ts';
import { STRING_LIMITS } from '../../core/contract/schemas.ts';
import type { CrmValue } from '../../bridge/model.ts';
import { requestText as text, uniqueValues as unique } from '../../bridge/request-fields.ts';

/**
 * `firstname`, `lastname`, `email` and `hs_additional_emails` (semicolon-separated), `phone` and
 * `mobilephone`, `address` (the street line), `city`, `state`, `zip`, `company`.
 */
export function contactToRequest(p: Readonly<Record<string, CrmValue>>): EnrichmentRequest {
  const additional = (text(p.hs_additional_emails, Infinity) ?? '').split(';').map((e) => text(e, STRING_LIMITS.email));
  const address = {
    address: text(p.address, STRING_LIMITS.address),
    city: text(p.city, STRING_LIMITS.city),
    state: text(p.state, STRING_LIMITS.state),
    zipcode: text(p.zip, STRING_LIMITS.zipcode),
  };
  return {
    first_name: text(p.firstname, STRING_LIMITS.name),
    last_name: text(p.lastname, STRING_LIMITS.name),
    emails: unique([text(p.email, STRING_LIMITS.email), ...additional]),
    phones: unique([text(p.phone, STRING_LIMITS.phone), text(p.mobilephone, STRING_LIMITS.phone)]),
    addresses: Object.values(address).some((v) => v !== null) ? [address] : [],
    company_name: text(p.company, STRING_LIMITS.company_name),
  };
}
