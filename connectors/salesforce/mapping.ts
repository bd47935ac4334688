// A Salesforce Contact or Lead → an enrichment request. Contacts carry a mailing address and their
// Account's name; Leads a plain address and a Company.
import { type EnrichmentRequest, STRING_LIMITS } from '../../core/contract/schemas.ts';
import type { CrmValue } from '../../bridge/model.ts';
import { requestText as text, uniqueValues as unique } from '../../bridge/request-fields.ts';

/** The address fields of each object, in request order: street, city, state, postal code. */
const ADDRESS: Record<'Contact' | 'Lead', readonly [string, string, string, string]> = {
  Contact: ['MailingStreet', 'MailingCity', 'MailingState', 'MailingPostalCode'],
  Lead: ['Street', 'City', 'State', 'PostalCode'],
};

/** `Account.Name` for a Contact, `Company` for a Lead. */
const COMPANY: Record<'Contact' | 'Lead', string> = { Contact: 'Account.Name', Lead: 'Company' };

export function salesforceRecordToRequest(object: 'Contact' | 'Lead', fields: Readonly<Record<string, CrmValue>>): EnrichmentRequest {
  const [street, city, state, postal] = ADDRESS[object];
  // A multi-line street (Salesforce keeps its line breaks) becomes one line, as the contract asks.
  const rawStreet = fields[street];
  const streetLine = typeof rawStreet === 'string' ? rawStreet.replace(/\s*[\r\n]+\s*/g, ' ') : rawStreet;
  const address = {
    address: text(streetLine, STRING_LIMITS.address),
    city: text(fields[city], STRING_LIMITS.city),
    state: text(fields[state], STRING_LIMITS.state),
    zipcode: text(fields[postal], STRING_LIMITS.zipcode),
  };
  const email = text(fields.Email, STRING_LIMITS.email);
  return {
    first_name: text(fields.FirstName, STRING_LIMITS.name),
    last_name: text(fields.LastName, STRING_LIMITS.name),
    emails: email === null ? [] : [email],
    phones: unique([text(fields.Phone, STRING_LIMITS.phone), text(fields.MobilePhone, STRING_LIMITS.phone)]),
    addresses: Object.values(address).some((v) => v !== null) ? [address] : [],
    company_name: text(fields[COMPANY[object]], STRING_LIMITS.company_name),
  };
}
