// Who asks, for the record card's routes: read from the query hubspot.fetch appends (and signs), each
// of portalId, userId, userEmail and appId at most once and never empty, the ids digits.
import { describe, expect, it } from 'vitest';
import { askerOf } from '../../connectors/hubspot/card-routes.ts';

const PATH = '/hubspot/card/contacts/101';

describe('askerOf', () => {
  it('reads the portal, the user, the e-mail (decoded) and the app from the query', () => {
    expect(askerOf(`${PATH}?userId=42&userEmail=fundraiser%40example.org&appId=1160452&portalId=62515`)).toEqual({
      ok: true,
      asker: { portalId: '62515', userId: '42', userEmail: 'fundraiser@example.org', appId: '1160452' },
    });
  });

  it('takes a request without e-mail or app id, which are optional', () => {
    expect(askerOf(`${PATH}?userId=42&portalId=62515`)).toEqual({ ok: true, asker: { portalId: '62515', userId: '42', userEmail: null, appId: null } });
  });

  it.each([
    ['no portal', 'userId=42'],
    ['no user', 'portalId=62515'],
    ['a portal twice (one put in the URL by the caller)', 'portalId=1&userId=42&portalId=62515'],
    ['a user twice', 'userId=1&portalId=62515&userId=42'],
    ['an e-mail twice', 'userEmail=a%40x.org&userId=42&portalId=62515&userEmail=b%40x.org'],
    ['an app twice', 'appId=1&userId=42&portalId=62515&appId=2'],
    ['an empty portal', 'userId=42&portalId='],
    ['an empty e-mail', 'userEmail=&userId=42&portalId=62515'],
    ['a portal that is not a HubSpot id', 'userId=42&portalId=62515x'],
    ['an app that is not a HubSpot id', 'userId=42&portalId=62515&appId=abc'],
  ])('refuses %s', (_rule, query) => {
    expect(askerOf(`${PATH}?${query}`)).toEqual({ ok: false, reason: 'ambiguous_request_identity' });
  });
});
