// Requests for the sandbox personas, built from the persona table so tests never hard-code identifiers.
import type { EnrichmentRequest } from '../../core/contract/schemas.ts';
import { PERSONAS, type Persona } from '../../core/sandbox/personas.ts';

export function persona(fullName: string): Persona {
  const found = PERSONAS.find((p) => `${p.first_name} ${p.last_name}` === fullName);
  if (found === undefined) throw new Error(`no sandbox persona named ${fullName}`);
  return found;
}

export function byEmail(p: Persona, extra: EnrichmentRequest = {}): EnrichmentRequest {
  return { emails: [p.email], ...extra };
}

export function byAddress(p: Persona, extra: EnrichmentRequest = {}): EnrichmentRequest {
  return { addresses: [{ address: p.address, zipcode: p.zipcode }], ...extra };
}

export function byPhoneAndName(p: Persona, extra: EnrichmentRequest = {}): EnrichmentRequest {
  return { first_name: p.first_name, last_name: p.last_name, phones: [p.phone], ...extra };
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Account settings for suites that send many requests and are not about the rate limit. */
export const UNTHROTTLED = { rateLimit: 100_000 } as const;
