// One closed error union and one status map for the enrichRecord contract (docs/reference/contract.md's identifiers),
// and the error value the core returns instead of throwing strings around.
import type { ERROR_CODES } from './schemas.ts';

export type ErrorCode = (typeof ERROR_CODES)[number];

export const ERROR_STATUS: Record<ErrorCode, number> = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden_environment: 403,
  https_required: 403,
  quota_exhausted: 402,
  rate_limit: 429,
  internal_error: 500,
  service_unavailable: 503,
  not_found: 404,
  method_not_allowed: 405,
};

/** An expected failure of the enrichRecord pipeline, carrying the contract's identifier. */
export class EnrichError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string) {
    super(message);
    this.name = 'EnrichError';
    this.code = code;
  }
  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

/** The error body the contract prescribes: `{error, message}` in production, `{message}` in the sandbox. */
export function errorBody(environment: 'sandbox' | 'production', error: EnrichError): { error?: ErrorCode; message: string } {
  return environment === 'production' ? { error: error.code, message: error.message } : { message: error.message };
}
