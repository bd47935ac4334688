// The console's stylesheet and script (assets/console.css, assets/console.js), served from
// /console/assets: no CDN, nothing inline (the Content-Security-Policy allows only 'self'). Pages link
// each under a name carrying a hash of its content, cached for good; the plain name stays for links
// that cannot know the hash (the home page), with a short cache.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Where an asset file is: beside this module, in assets/ (server/http/console/assets/ in the sources,
 * dist/assets/ beside the bundle, where `npm run build` copies it).
 */
function assetPath(name: string): string {
  const file = path.join(import.meta.dirname, 'assets', name);
  if (!existsSync(file)) throw new Error(`the console asset ${name} is missing: looked for ${file}`);
  return file;
}

export interface ConsoleAsset {
  /** The plain name (`console.css`). */
  readonly name: string;
  /** The name with a hash of the content (`console.<hash>.css`): a new content is a new address. */
  readonly hashed: string;
  readonly type: string;
  readonly body: Buffer;
}

function load(name: string, type: string): ConsoleAsset {
  const body = readFileSync(assetPath(name));
  const hash = createHash('sha256').update(body).digest('base64url').slice(0, 16);
  return { name, hashed: name.replace(/\.(\w+)$/, `.${hash}.$1`), type, body };
}

export const CONSOLE_ASSETS = {
  css: load('console.css', 'text/css; charset=utf-8'),
  js: load('console.js', 'text/javascript; charset=utf-8'),
} as const;

/** The script's text (what it does is tested: times are left as the server wrote them). */
export const CONSOLE_JS = CONSOLE_ASSETS.js.body.toString('utf8');

/** A hashed name never changes content: cached for a year, never asked again. */
export const HASHED_ASSET_CACHE = 'public, max-age=31536000, immutable';
/** A plain name may change content with a new release. */
export const PLAIN_ASSET_CACHE = 'public, max-age=300';
