// Connection URLs as a log line, a CLI message or a marker file may show them: the password masked,
// and nothing from the query string but the connection parameters known to hold no secret.
const MASK = '***';

/** libpq's URL parameters that name where and how to connect, never a credential. */
const SHOWN_POSTGRES_PARAMETERS = new Set(['host', 'port', 'dbname', 'user', 'options', 'sslmode', 'application_name']);

/**
 * A PostgreSQL URL without its password (masked when there was one) or any query parameter that could
 * carry one (`password`, `sslpassword`, …). An unparseable URL is not echoed at all.
 */
export function redactDatabaseUrl(raw: string): string {
  const url = parse(raw);
  if (url === null) return 'postgres://(a URL that does not parse)';
  // Kept as written (URLSearchParams would turn a %20 into a "+", which the driver reads as a plus).
  const kept = url.search
    .replace(/^\?/, '')
    .split('&')
    .filter((pair) => SHOWN_POSTGRES_PARAMETERS.has(decodeName(pair.split('=')[0] ?? '')));
  url.search = kept.length === 0 ? '' : `?${kept.join('&')}`;
  return withoutPassword(url);
}

/** A Redis URL without its password (masked when there was one) and without its query. */
export function redactRedisUrl(raw: string): string {
  const url = parse(raw);
  if (url === null) return 'redis://(a URL that does not parse)';
  url.search = '';
  return withoutPassword(url);
}

function parse(raw: string): URL | null {
  try {
    return new URL(raw);
  } catch {
    return null;
  }
}

function decodeName(name: string): string {
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

function withoutPassword(url: URL): string {
  if (url.password !== '') url.password = MASK;
  url.hash = '';
  return url.toString();
}
