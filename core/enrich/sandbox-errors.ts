// The sandbox's error simulator: a request header asks for one of four failures by status code.
import { EnrichError, type ErrorCode } from '../contract/errors.ts';

/** Both names are honoured: the spec's neutral one and the maker's, so a QA suite runs unchanged. */
export const SANDBOX_ERROR_HEADERS = ['x-service-sandbox-error', 'x-windfall-sandbox-error'] as const;

const SIMULATED: Readonly<Record<string, { code: ErrorCode; message: string }>> = {
  '400': { code: 'invalid_request', message: 'Simulated invalid input.' },
  '429': { code: 'rate_limit', message: 'Simulated rate limit exceeded.' },
  '500': { code: 'internal_error', message: 'Simulated unhandled error.' },
  '503': { code: 'service_unavailable', message: 'Simulated downstream service unavailable.' },
};

/** The simulated failure a header value asks for; a value outside 400, 429, 500 and 503 is itself a 400. */
export function simulatedError(value: string): EnrichError {
  const simulated = SIMULATED[value.trim()];
  if (simulated === undefined) {
    return new EnrichError('invalid_request', `The sandbox error header accepts 400, 429, 500 or 503; got "${value.slice(0, 16)}".`);
  }
  return new EnrichError(simulated.code, simulated.message);
}
