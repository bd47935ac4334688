// The OAuth install kit both CRMs use (connectors/kit/oauth-install.ts), and each CRM through it.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SecretBox } from '../../core/secrets/secret-box.ts';
import {
  HubSpotInstallError,
  beginOAuth as beginHubSpot,
  createInstallLink as hubspotLink,
  openInstallLink as openHubSpotLink,
  verifyOAuthState as verifyHubSpot,
} from '../../connectors/hubspot/install.ts';
import { SalesforceInstallError, openInstallLink as openSalesforceLink, createInstallLink as salesforceLink } from '../../connectors/salesforce/install.ts';
import { RESULT_PAGE_HEADERS, StateCookie, resultPage } from '../../connectors/kit/oauth-install.ts';

const box = new SecretBox(randomBytes(32));
const target = { kind: 'local', accountName: 'acme' } as const;
const at = new Date('2026-11-25T12:00:00Z');

describe('OAuth install kit', () => {
  it('a sealed state that is not JSON is refused with the CRM’s own error, never a crash (HubSpot’s JSON.parse was unguarded)', () => {
    const notJson = box.seal('{not json', 'hubspot-oauth');
    expect(() => openHubSpotLink(box, notJson, at)).toThrow(HubSpotInstallError);
    expect(() => openHubSpotLink(box, notJson, at)).toThrow('the install link is not valid');
    expect(() => verifyHubSpot(box, notJson, 'nonce', at)).toThrow('the OAuth state is not valid');
    expect(() => openSalesforceLink(box, box.seal('{not json', 'salesforce-oauth'), at)).toThrow(SalesforceInstallError);
  });

  it("one CRM's link does not open as the other's (each seals under its own context)", () => {
    expect(() => openSalesforceLink(box, hubspotLink(box, target, 'sandbox', at), at)).toThrow(
      'the install link is not valid (altered, or made by another server)',
    );
    expect(() => openHubSpotLink(box, salesforceLink(box, target, 'sandbox', { now: at }), at)).toThrow(
      'the install link is not valid (altered, or made by another server)',
    );
  });

  it('a link expires after 7 days and a state after 10 minutes; a state is bound to the browser that started it', () => {
    const link = hubspotLink(box, target, 'sandbox', at);
    expect(openHubSpotLink(box, link, new Date(at.getTime() + 7 * 24 * 3600_000)).environment).toBe('sandbox');
    expect(() => openHubSpotLink(box, link, new Date(at.getTime() + 7 * 24 * 3600_000 + 1))).toThrow('the install link has expired');
    const { state, nonce } = beginHubSpot(box, openHubSpotLink(box, link, at), at);
    expect(verifyHubSpot(box, state, nonce, at).nonce).toBe(nonce);
    expect(() => verifyHubSpot(box, state, `${nonce}x`, at)).toThrow('started in another browser');
    expect(() => verifyHubSpot(box, state, undefined, at)).toThrow('started in another browser');
    expect(() => verifyHubSpot(box, state, nonce, new Date(at.getTime() + 10 * 60_000 + 1))).toThrow('took too long');
  });

  it('the result page: no caching, no referrer, a CSP that allows nothing, every value escaped', () => {
    const page = resultPage(400, { title: '<b>t</b>', lines: ['a "quoted" <script>'], secret: { label: 'the secret', value: "s'&" } });
    expect(page.status).toBe(400);
    expect(page.headers).toEqual(RESULT_PAGE_HEADERS);
    expect(page.headers['Referrer-Policy']).toBe('no-referrer');
    expect(page.headers['Content-Security-Policy']).toBe("default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
    expect(page.body).not.toMatch(/<script>|<b>/);
    expect(page.body).toContain('&#60;b&#62;t&#60;/b&#62;');
    expect(page.body).toContain('<pre><code>s&#39;&#38;</code></pre>');
  });

  it('the state cookie: HttpOnly, SameSite=Lax, Secure only under HTTPS, scoped to the CRM’s OAuth routes under PUBLIC_URL’s path', () => {
    const cookie = new StateCookie('eb_x_oauth', 'x');
    expect(cookie.set('n1', 'https://enrich.example.com/enrich/')).toBe('eb_x_oauth=n1; Max-Age=600; Path=/enrich/oauth/x; HttpOnly; Secure; SameSite=Lax');
    expect(cookie.set('n1', 'http://127.0.0.1:8080')).toBe('eb_x_oauth=n1; Max-Age=600; Path=/oauth/x; HttpOnly; SameSite=Lax');
    expect(cookie.clear('https://enrich.example.com')).toBe('eb_x_oauth=; Max-Age=0; Path=/oauth/x');
    expect(cookie.read('a=1; eb_x_oauth=n1')).toBe('n1');
    expect(cookie.read(undefined)).toBeUndefined();
  });
});
