// Structured JSON logs (pino). Tokens and e-mail addresses never reach a line: request headers are
// not logged at all, and the redaction below is a second fence for anything that slips through.
import { type DestinationStream, type Logger, type LoggerOptions, pino } from 'pino';

export type { Logger };

export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options: LoggerOptions = {
    level,
    base: { service: 'enrichbridge' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ['token', '*.token', 'headers["x-wf-auth-token"]', '*.headers["x-wf-auth-token"]', 'email', '*.email', 'emails', '*.emails'],
      censor: '[redacted]',
    },
  };
  return destination === undefined ? pino(options) : pino(options, destination);
}
