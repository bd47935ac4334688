// What a caller can get wrong before any handler runs, named once: a body that cannot be read (too
// large, too many form fields, a charset or Content-Encoding we do not read, bytes that do not decode)
// and a path whose percent-encoding does not decode. Each is the caller's fault with its own 4xx,
// answered in the route's own format where it has one, never a 500 and never an error-level log line.
import type { BodyFault } from '../../bridge/http.ts';

/** A body that cannot be read, or a path that cannot be decoded: a status, a type to tell them apart, and words. */
export type RequestFault = BodyFault;

/** What express's body parsers (express.raw, express.urlencoded) raise for a body they will not read; undefined for anything else. */
export function bodyFaultOf(error: unknown): BodyFault | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const type = 'type' in error && typeof error.type === 'string' ? error.type : undefined;
  const status = 'status' in error && typeof error.status === 'number' ? error.status : undefined;
  switch (type) {
    case 'entity.too.large':
      return { status: 413, type, message: 'the body is larger than this endpoint accepts' };
    case 'parameters.too.many':
      return { status: 413, type, message: 'the form has more fields than this endpoint accepts' };
    case 'encoding.unsupported':
      return { status: 415, type, message: 'the body has a Content-Encoding this endpoint does not read' };
    case 'charset.unsupported':
      return { status: 415, type, message: 'the body must be UTF-8' };
    case 'request.size.invalid':
      return { status: 400, type, message: 'the body length does not match Content-Length' };
    case 'querystring.parse.rangeError':
    case 'entity.parse.failed':
      return { status: 400, type, message: 'the form does not parse' };
    case undefined:
      // The inflater's own error (a gzip or deflate stream that is corrupt), which body-parser hands
      // on with a 400 status but no type.
      return status !== undefined && status >= 400 && status < 500 && !(error instanceof URIError)
        ? { status: 400, type: 'encoding.invalid', message: 'the body does not decode with its Content-Encoding' }
        : undefined;
    default:
      // request.aborted (nobody to answer) and body-parser's own bugs go to the app's last handler.
      return undefined;
  }
}

const UNDECODABLE_PATH: RequestFault = { status: 400, type: 'path.undecodable', message: 'the address has percent-encoding that does not decode' };

/**
 * The router's refusal of a path value that does not percent-decode (`/console/accounts/%C0%AF`): it
 * raises a URIError with status 400 while matching, before any handler of the route runs.
 */
export function pathFaultOf(error: unknown): RequestFault | undefined {
  return error instanceof URIError && 'status' in error && error.status === 400 ? UNDECODABLE_PATH : undefined;
}

/** Either fault, or undefined for an error that is ours. */
export function requestFaultOf(error: unknown): RequestFault | undefined {
  return pathFaultOf(error) ?? bodyFaultOf(error);
}
