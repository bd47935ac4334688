// What the pipeline asks of a mapped request before spending an enrichment: does it carry a match key
// (hasMatchKey), and is it the same normalized input as last time (inputHash).
import { describe, expect, it } from 'vitest';
import type { EnrichmentRequest } from '../../core/contract/schemas.ts';
import { hasMatchKey, inputHash } from '../../bridge/input.ts';

const NAME = { first_name: 'Amanda', last_name: 'Taylor' };
const AMANDA: EnrichmentRequest = {
  ...NAME,
  emails: ['amanda.taylor@sandbox.windfall.com'],
  phones: ['5553000001'],
  addresses: [{ address: '100 Demo St', city: 'Atlanta', state: 'GA', zipcode: '30301' }],
  company_name: 'Magnolia Crossing Logistics',
};

describe('hasMatchKey', () => {
  it('refuses a name alone, or nothing at all', () => {
    expect(hasMatchKey(NAME)).toBe(false);
    expect(hasMatchKey({})).toBe(false);
    expect(hasMatchKey({ ...NAME, emails: [], phones: [], addresses: [], company_name: null })).toBe(false);
  });

  it('accepts an e-mail or a phone on its own', () => {
    expect(hasMatchKey({ emails: ['amanda.taylor@sandbox.windfall.com'] })).toBe(true);
    expect(hasMatchKey({ phones: ['(555) 300-0001'] })).toBe(true);
  });

  it('does not count an e-mail or a phone that is not one', () => {
    expect(hasMatchKey({ ...NAME, emails: ['not-an-email', '  '] })).toBe(false);
    expect(hasMatchKey({ ...NAME, phones: ['12'] })).toBe(false);
  });

  it('accepts a street with a postal code or a city, not a street alone', () => {
    expect(hasMatchKey({ addresses: [{ address: '100 Demo St', zipcode: '30301' }] })).toBe(true);
    expect(hasMatchKey({ addresses: [{ address: '100 Demo St', city: 'Atlanta' }] })).toBe(true);
    expect(hasMatchKey({ addresses: [{ address: '100 Demo St' }] })).toBe(false);
    expect(hasMatchKey({ addresses: [{ city: 'Atlanta', state: 'GA' }] })).toBe(false);
  });

  it('accepts a full name with an employer or a place', () => {
    expect(hasMatchKey({ ...NAME, company_name: 'Magnolia Crossing Logistics' })).toBe(true);
    expect(hasMatchKey({ ...NAME, addresses: [{ zipcode: '30301' }] })).toBe(true);
    expect(hasMatchKey({ ...NAME, addresses: [{ city: 'Atlanta', state: 'GA' }] })).toBe(true);
    expect(hasMatchKey({ last_name: 'Mary Ann Taylor', company_name: 'Magnolia Crossing Logistics' })).toBe(true);
  });

  it('refuses a half name with an employer or a place, and a name with a city but no state', () => {
    expect(hasMatchKey({ last_name: 'Taylor', company_name: 'Magnolia Crossing Logistics' })).toBe(false);
    expect(hasMatchKey({ first_name: 'Amanda', addresses: [{ zipcode: '30301' }] })).toBe(false);
    expect(hasMatchKey({ ...NAME, addresses: [{ city: 'Atlanta' }] })).toBe(false);
  });
});

describe('inputHash', () => {
  const hash = (request: EnrichmentRequest) => inputHash(request, 'production');

  it('is the same for the same input re-formatted: case, spacing, phone format, order, duplicates', () => {
    const reformatted: EnrichmentRequest = {
      first_name: ' AMANDA ',
      last_name: 'taylor',
      emails: ['  Amanda.Taylor@SANDBOX.windfall.com', 'amanda.taylor@sandbox.windfall.com'],
      phones: ['(555) 300-0001'],
      addresses: [{ address: '100 demo st', city: 'ATLANTA', state: 'Georgia', zipcode: '30301-1234' }],
      company_name: 'magnolia crossing logistics',
    };
    expect(hash(reformatted)).toBe(hash(AMANDA));
    const twoEmails = { ...AMANDA, emails: ['a@example.com', 'b@example.com'] };
    expect(hash({ ...twoEmails, emails: ['b@example.com', 'a@example.com'] })).toBe(hash(twoEmails));
  });

  it('ignores the record id', () => {
    expect(hash({ ...AMANDA, id: 'crm-1' })).toBe(hash({ ...AMANDA, id: 'crm-2' }));
  });

  it('changes when a match key changes', () => {
    const base = hash(AMANDA);
    expect(hash({ ...AMANDA, emails: ['amanda@example.com'] })).not.toBe(base);
    expect(hash({ ...AMANDA, phones: ['5553000002'] })).not.toBe(base);
    expect(hash({ ...AMANDA, phones: [...(AMANDA.phones ?? []), '5553000002'] })).not.toBe(base);
    expect(hash({ ...AMANDA, addresses: [{ address: '101 Demo St', city: 'Atlanta', state: 'GA', zipcode: '30301' }] })).not.toBe(base);
    expect(hash({ ...AMANDA, last_name: 'Tailor' })).not.toBe(base);
    expect(hash({ ...AMANDA, company_name: 'Other Co' })).not.toBe(base);
  });

  it('differs between environments: the same question of another data set', () => {
    expect(inputHash(AMANDA, 'sandbox')).not.toBe(inputHash(AMANDA, 'production'));
  });
});
