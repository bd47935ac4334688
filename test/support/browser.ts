// The admin's browser in OAuth tests: a GET that does not follow redirects, with what a page carries.

export interface Page {
  readonly status: number;
  readonly text: string;
  readonly contentType: string;
  readonly cacheControl: string;
  readonly location: URL | null;
  readonly setCookies: readonly string[];
}

/** A GET as the admin's browser makes it, without following redirects. */
export async function browserGet(url: string, cookie?: string): Promise<Page> {
  const response = await fetch(url, { redirect: 'manual', headers: cookie === undefined ? {} : { cookie } });
  const location = response.headers.get('location');
  return {
    status: response.status,
    text: await response.text(),
    contentType: response.headers.get('content-type') ?? '',
    cacheControl: response.headers.get('cache-control') ?? '',
    location: location === null ? null : new URL(location),
    setCookies: response.headers.getSetCookie(),
  };
}
