// Configuration from the environment: defaults, production mode, and refusals that name the variable.
import { describe, expect, it } from 'vitest';
import { isLoopbackHost, loadConfig, withDefaultPublicUrl } from '../../server/config.ts';

describe('configuration', () => {
  it('defaults to port 3000, ./data, loopback, plain HTTP allowed', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ port: 3000, host: '127.0.0.1', production: false, requireHttps: false, trustProxy: false, tls: null });
    expect(config.dataDir.endsWith('/data')).toBe(true);
  });

  it('requires HTTPS and listens on all interfaces in production mode, unless told otherwise', () => {
    expect(loadConfig({ NODE_ENV: 'production' })).toMatchObject({ production: true, requireHttps: true, host: '0.0.0.0' });
    expect(loadConfig({ NODE_ENV: 'production', REQUIRE_HTTPS: 'false' }).requireHttps).toBe(false);
  });

  it('accepts proxy addresses, subnets and named ranges for TRUST_PROXY', () => {
    expect(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8,::1' }).trustProxy).toBe('loopback,10.0.0.0/8,::1');
  });

  it.each(['true', '2', '10.0.0.0/33', 'proxy.internal', '1.2.3.4/8/9'])('refuses TRUST_PROXY=%s, naming the variable', (value) => {
    expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(/TRUST_PROXY/);
  });

  it('refuses a certificate without its key, and a port that is not a number', () => {
    expect(() => loadConfig({ TLS_CERT_FILE: 'cert.pem' })).toThrow(/TLS_CERT_FILE and TLS_KEY_FILE/);
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT/);
  });

  it("every outbound call has a timeout, and a killed worker's lease lasts 30 s, by default; each can be set", () => {
    expect(loadConfig({})).toMatchObject({ workerLeaseMs: 30_000, timeouts: { hubspotMs: 30_000, salesforceMs: 120_000, tokenMs: 15_000, enrichMs: 10_000 } });
    const set = loadConfig({ HUBSPOT_TIMEOUT_MS: '5000', SALESFORCE_TIMEOUT_MS: '6000', TOKEN_TIMEOUT_MS: '7000', ENRICH_TIMEOUT_MS: '8000' });
    expect(set.timeouts).toEqual({ hubspotMs: 5000, salesforceMs: 6000, tokenMs: 7000, enrichMs: 8000 });
    expect(() => loadConfig({ HUBSPOT_TIMEOUT_MS: '0' })).toThrow(/HUBSPOT_TIMEOUT_MS/);
  });

  it('the enrichment log keeps values 90 days by default, LOG_VALUES_RETENTION_DAYS days when set, and refuses a period that is not whole days from 1', () => {
    expect(loadConfig({}).logValuesRetentionDays).toBe(90);
    expect(loadConfig({ LOG_VALUES_RETENTION_DAYS: '30' }).logValuesRetentionDays).toBe(30);
    for (const value of ['0', '-1', '1.5', 'ninety', '3651'])
      expect(() => loadConfig({ LOG_VALUES_RETENTION_DAYS: value })).toThrow(/LOG_VALUES_RETENTION_DAYS/);
  });

  it('bounds every connection by default: headers within 10 s, the whole request within 30 s, idle keep-alive 5 s, at most 1,000 connections', () => {
    expect(loadConfig({}).http).toEqual({ headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 5_000, maxConnections: 1_000 });
  });

  it('takes the connection limits from HTTP_HEADERS_TIMEOUT_MS, HTTP_REQUEST_TIMEOUT_MS, HTTP_KEEP_ALIVE_TIMEOUT_MS and MAX_CONNECTIONS', () => {
    const config = loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '2000', HTTP_REQUEST_TIMEOUT_MS: '4000', HTTP_KEEP_ALIVE_TIMEOUT_MS: '1000', MAX_CONNECTIONS: '50' });
    expect(config.http).toEqual({ headersTimeoutMs: 2_000, requestTimeoutMs: 4_000, keepAliveTimeoutMs: 1_000, maxConnections: 50 });
  });

  it.each([
    ['HTTP_HEADERS_TIMEOUT_MS', '0'],
    ['HTTP_REQUEST_TIMEOUT_MS', '0'],
    ['HTTP_KEEP_ALIVE_TIMEOUT_MS', '-1'],
    ['MAX_CONNECTIONS', '0'],
    ['MAX_CONNECTIONS', 'many'],
  ])('refuses a connection limit that would leave connections unbounded: %s=%s, naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(name));
  });

  it('refuses a headers timeout longer than the request timeout, which would never apply', () => {
    expect(() => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '20000', HTTP_REQUEST_TIMEOUT_MS: '10000' })).toThrow(
      /HTTP_HEADERS_TIMEOUT_MS.*HTTP_REQUEST_TIMEOUT_MS/,
    );
  });
});

describe('PUBLIC_URL as the server uses it', () => {
  it('outside production mode, defaults to the address the server listens on', () => {
    expect(withDefaultPublicUrl(loadConfig({})).publicUrl).toBe('http://127.0.0.1:3000');
    expect(withDefaultPublicUrl(loadConfig({ PORT: '8080', HOST: '0.0.0.0' })).publicUrl).toBe('http://localhost:8080');
    expect(withDefaultPublicUrl(loadConfig({ PORT: '8080', HOST: '::1' })).publicUrl).toBe('http://[::1]:8080');
    expect(withDefaultPublicUrl(loadConfig({ TLS_CERT_FILE: 'cert.pem', TLS_KEY_FILE: 'key.pem' })).publicUrl).toBe('https://127.0.0.1:3000');
  });

  it('is kept as set, is not guessed in production mode, and has no default while the system picks the port', () => {
    expect(withDefaultPublicUrl(loadConfig({ PUBLIC_URL: 'https://enrich.example.com/' })).publicUrl).toBe('https://enrich.example.com');
    expect(withDefaultPublicUrl(loadConfig({ NODE_ENV: 'production' })).publicUrl).toBeNull();
    expect(withDefaultPublicUrl(loadConfig({ PORT: '0' })).publicUrl).toBeNull();
    // loadConfig itself reports only what was set: the CRM commands still say when PUBLIC_URL is missing.
    expect(loadConfig({}).publicUrl).toBeNull();
  });

  it.each([
    ['127.0.0.1', true],
    ['127.8.9.10', true],
    ['localhost', true],
    ['::1', true],
    ['[::1]', true],
    ['0.0.0.0', false],
    ['::', false],
    ['10.0.0.5', false],
    ['enrich.example.com', false],
  ])('knows %s for loopback: %s', (host, loopback) => {
    expect(isLoopbackHost(host)).toBe(loopback);
  });
});
