// contactToRequest: a HubSpot contact's identity properties (as a batch read returns them) → the
// enrichment request the contract accepts.
import { describe, expect, it } from 'vitest';
import { EnrichmentRequestSchema, MAX_LIST_ENTRIES, STRING_LIMITS } from '../../core/contract/schemas.ts';
import { contactToRequest } from '../../connectors/hubspot/mapping.ts';

const amanda = {
  firstname: 'Amanda',
  lastname: 'Taylor',
  email: 'amanda.taylor@sandbox.windfall.com',
  hs_additional_emails: 'ataylor@example.com;a.taylor@example.net',
  phone: '(404) 555-0142',
  mobilephone: '+1 404 555 0199',
  address: '100 Demo St',
  city: 'Atlanta',
  state: 'GA',
  zip: '30301',
  company: 'Example Holdings',
};

describe('contactToRequest', () => {
  it('puts every identity property in the request', () => {
    const request = contactToRequest(amanda);
    expect(request).toEqual({
      first_name: 'Amanda',
      last_name: 'Taylor',
      emails: ['amanda.taylor@sandbox.windfall.com', 'ataylor@example.com', 'a.taylor@example.net'],
      phones: ['(404) 555-0142', '+1 404 555 0199'],
      addresses: [{ address: '100 Demo St', city: 'Atlanta', state: 'GA', zipcode: '30301' }],
      company_name: 'Example Holdings',
    });
    expect(EnrichmentRequestSchema.safeParse(request).success).toBe(true);
  });

  it('ignores properties that are not identity properties', () => {
    const request = contactToRequest({ ...amanda, wf_hh_net_worth: '2500000', hs_object_id: '75310501', lifecyclestage: 'lead' });
    expect(request).toEqual(contactToRequest(amanda));
  });

  it('splits hs_additional_emails on ";", trims, and drops duplicates case-insensitively (the first spelling wins)', () => {
    const request = contactToRequest({
      email: 'Amanda.Taylor@Sandbox.Windfall.com',
      hs_additional_emails: ' amanda.taylor@sandbox.windfall.com ;ataylor@example.com;; ATAYLOR@example.com ; a.taylor@example.net;',
    });
    expect(request.emails).toEqual(['Amanda.Taylor@Sandbox.Windfall.com', 'ataylor@example.com', 'a.taylor@example.net']);
  });

  it('keeps additional e-mails when the primary e-mail is empty', () => {
    expect(contactToRequest({ email: null, hs_additional_emails: 'one@example.com;two@example.com' }).emails).toEqual(['one@example.com', 'two@example.com']);
  });

  it('drops a mobile phone equal to the phone', () => {
    expect(contactToRequest({ phone: '4045550142', mobilephone: ' 4045550142 ' }).phones).toEqual(['4045550142']);
  });

  it('turns empty and blank strings into null, and leaves out an address with no part', () => {
    const request = contactToRequest({
      firstname: '',
      lastname: '   ',
      email: '',
      hs_additional_emails: ' ; ',
      phone: null,
      mobilephone: '',
      address: '',
      city: ' ',
      state: null,
      zip: '',
      company: '',
    });
    expect(request).toEqual({ first_name: null, last_name: null, emails: [], phones: [], addresses: [], company_name: null });
    expect(EnrichmentRequestSchema.safeParse(request).success).toBe(true);
  });

  it('treats missing properties like empty ones', () => {
    expect(contactToRequest({})).toEqual({ first_name: null, last_name: null, emails: [], phones: [], addresses: [], company_name: null });
  });

  it('keeps an address that has only some parts, the others null', () => {
    expect(contactToRequest({ zip: '30301' }).addresses).toEqual([{ address: null, city: null, state: null, zipcode: '30301' }]);
  });

  it('stringifies numeric values (a zip stored as a number)', () => {
    expect(contactToRequest({ zip: 30301 }).addresses).toEqual([{ address: null, city: null, state: null, zipcode: '30301' }]);
  });

  it(`sends at most ${MAX_LIST_ENTRIES} e-mails`, () => {
    const additional = Array.from({ length: 15 }, (_, i) => `person${i}@example.com`).join(';');
    const request = contactToRequest({ email: 'first@example.com', hs_additional_emails: additional });
    expect(request.emails).toHaveLength(MAX_LIST_ENTRIES);
    expect(request.emails?.[0]).toBe('first@example.com');
    expect(request.emails?.[9]).toBe('person8@example.com');
    expect(EnrichmentRequestSchema.safeParse(request).success).toBe(true);
  });

  it('leaves out a value longer than the contract allows instead of sending a request it refuses', () => {
    const request = contactToRequest({
      ...amanda,
      firstname: 'A'.repeat(STRING_LIMITS.name + 1),
      hs_additional_emails: `${'x'.repeat(STRING_LIMITS.email)}@example.com;ok@example.com`,
      zip: '30301-1234 extra text',
      company: 'C'.repeat(STRING_LIMITS.company_name + 1),
    });
    expect(request.first_name).toBeNull();
    expect(request.company_name).toBeNull();
    expect(request.emails).toEqual(['amanda.taylor@sandbox.windfall.com', 'ok@example.com']);
    expect(request.addresses).toEqual([{ address: '100 Demo St', city: 'Atlanta', state: 'GA', zipcode: null }]);
    expect(EnrichmentRequestSchema.safeParse(request).success).toBe(true);
  });
});
