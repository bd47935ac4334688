// The Salesforce record → request mapping: Contacts read their mailing address and Account name,
// Leads their address and Company; values outside the contract's limits are left out.
import { describe, expect, it } from 'vitest';
import { EnrichmentRequestSchema } from '../../core/contract/schemas.ts';
import { salesforceRecordToRequest } from '../../connectors/salesforce/mapping.ts';

describe('Salesforce mapping', () => {
  it('maps a Contact: mailing address, Account.Name as the company, both phones', () => {
    const request = salesforceRecordToRequest('Contact', {
      FirstName: 'Amanda',
      LastName: 'Taylor',
      Email: 'amanda.taylor@sandbox.windfall.com',
      Phone: '(555) 300-0001',
      MobilePhone: '555 300 0009',
      MailingStreet: '100 Peachtree St NE\nSuite 400',
      MailingCity: 'Atlanta',
      MailingState: 'GA',
      MailingPostalCode: '30303',
      'Account.Name': 'Taylor Ventures',
    });
    expect(request).toEqual({
      first_name: 'Amanda',
      last_name: 'Taylor',
      emails: ['amanda.taylor@sandbox.windfall.com'],
      phones: ['(555) 300-0001', '555 300 0009'],
      addresses: [{ address: '100 Peachtree St NE Suite 400', city: 'Atlanta', state: 'GA', zipcode: '30303' }],
      company_name: 'Taylor Ventures',
    });
    expect(EnrichmentRequestSchema.safeParse(request).success).toBe(true);
  });

  it('maps a Lead: Street/City/State/PostalCode and Company; the same phone twice counts once', () => {
    const request = salesforceRecordToRequest('Lead', {
      FirstName: 'Daniel',
      LastName: 'Garcia',
      Email: null,
      Phone: '5553000002',
      MobilePhone: '5553000002',
      Street: '1 Congress Ave',
      City: 'Austin',
      State: 'TX',
      PostalCode: '78701',
      Company: 'Garcia Labs',
      MailingCity: 'Not a Lead field',
    });
    expect(request).toMatchObject({
      emails: [],
      phones: ['5553000002'],
      addresses: [{ address: '1 Congress Ave', city: 'Austin', state: 'TX', zipcode: '78701' }],
      company_name: 'Garcia Labs',
    });
  });

  it('leaves out empty values and ones longer than the contract allows, and sends no empty address', () => {
    const request = salesforceRecordToRequest('Contact', { FirstName: '  ', LastName: 'Doe', MailingPostalCode: '9'.repeat(40), Email: ' ' });
    expect(request).toEqual({ first_name: null, last_name: 'Doe', emails: [], phones: [], addresses: [], company_name: null });
  });
});
