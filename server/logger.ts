// Structured JSON logs (pino). Tokens and personal data never reach a line: request headers are not
// logged at all, every error is reduced to what may be logged (loggableError: a database error to its
// code and names, a CRM error to its status and codes, other messages masked), and the redaction below
// is a second fence for anything that slips through.
import { type DestinationStream, type Logger, type LoggerOptions, destination, pino, stdTimeFunctions, symbols } from 'pino';
import { loggableError, loggableMessage } from '../core/observe/loggable-errors.ts';

export type { Logger };

const BASE = { service: 'enrichbridge' };

const options = (level: string): LoggerOptions => ({
  level,
  base: BASE,
  timestamp: stdTimeFunctions.isoTime,
  // No code path can log a raw error object: a pg error's detail, a CRM error's body never pass.
  serializers: { err: loggableError, error: loggableError },
  hooks: {
    // `logger.error(error)` would make the error's own message the line's message: the loggable one instead.
    logMethod(args, method) {
      const [first, ...rest] = args;
      if (first instanceof Error && typeof rest[0] !== 'string') return method.apply(this, [{ err: first }, loggableMessage(first)]);
      return method.apply(this, args);
    },
  },
  redact: {
    paths: [
      'token',
      '*.token',
      'headers["x-wf-auth-token"]',
      '*.headers["x-wf-auth-token"]',
      'email',
      '*.email',
      'emails',
      '*.emails',
      // A PostgreSQL error's detail and where quote the row's values ("Key (email)=(…) already exists").
      'err.detail',
      'err.where',
      'err.cause.detail',
      'err.cause.where',
    ],
    censor: '[redacted]',
  },
});

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return destination === undefined ? pino(options(level)) : pino(options(level), destination);
}

/**
 * The server's logger: stdout written asynchronously, so a slow log consumer never blocks a request
 * (a synchronous write per request cost about 15% of sandbox throughput). Call `flush` before exit.
 */
export function createServerLogger(level: string): Logger {
  return pino(options(level), destination({ dest: 1, sync: false }));
}

/**
 * The one-line-per-request log's own logger, writing to `logger`'s destination at its level. That line's
 * fields are fixed and never personal (method, route pattern, status, duration, the token's public id,
 * the account's name), so it skips the redaction, hooks and serializers every other line passes through:
 * about a third of what logging cost a sandbox request.
 */
export function requestLogger(logger: Logger): Logger {
  const stream = (logger as unknown as Record<symbol, DestinationStream>)[symbols.streamSym];
  return pino({ level: logger.level, base: BASE, timestamp: stdTimeFunctions.isoTime }, stream);
}
