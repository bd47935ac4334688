// What a browser finds at the server's root: a small page pointing to the admin console and the API
// document (an API client asking for JSON still gets the JSON 404 there), and the favicon every page
// a browser opens asks for (the file in assets/, served with a long cache).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import express from 'express';

const FAVICON_FILE = 'favicon.ico';

/**
 * Where the icon file is: beside this module, in assets/ (server/http/assets/ in the sources,
 * dist/assets/ beside the bundle, where `npm run build` copies it).
 */
function faviconPath(): string {
  const file = path.join(import.meta.dirname, 'assets', FAVICON_FILE);
  if (!existsSync(file)) throw new Error(`the favicon is missing: looked for ${file}`);
  return file;
}

/** A week: browsers ask rarely, and a new icon is seen within days (its address never changes, so it cannot be cached for good). */
const FAVICON_CACHE = 'public, max-age=604800';

/** The home page's own headers: nothing inline, nothing framed, no referrer; the answer depends on Accept. */
const HOME_HEADERS = {
  'Content-Security-Policy': "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Cache-Control': 'public, max-age=300',
  Vary: 'Accept',
} as const;

// Relative links: behind a proxy that serves this server under a path, they stay under it.
const HOME_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>enrichbridge</title>
<link rel="icon" href="favicon.ico" sizes="16x16 32x32">
<link rel="stylesheet" href="console/assets/console.css">
</head>
<body>
<header><span>enrichbridge</span></header>
<main>
<h1>enrichbridge</h1>
<p>This server enriches records with household and career data, over its API and inside HubSpot and Salesforce.</p>
<ul id="home-links">
<li><a id="to-console" href="console">Admin console</a>: sign in to see an installation's settings, enrichment log, backfills and sandbox playground.</li>
<li><a id="to-docs" href="openapi.json">API reference</a>: the OpenAPI 3.1 document of <code>POST /v1</code> and <code>POST /sandbox/v1</code>.</li>
</ul>
</main>
</body>
</html>
`;

/** GET / and GET /favicon.ico, mounted before the app's 404. */
export function homeRouter(): express.Router {
  const router = express.Router();
  const favicon = readFileSync(faviconPath());

  router.get('/favicon.ico', (_req, res) => {
    res.set({ 'Content-Type': 'image/x-icon', 'Cache-Control': FAVICON_CACHE, 'X-Content-Type-Options': 'nosniff' }).send(favicon);
  });

  // A browser (it prefers HTML) gets the page; an API client (JSON, */*, no Accept at all) the 404 it had.
  router.get('/', (req, res, next) => {
    res.vary('Accept');
    if (req.accepts(['json', 'html']) !== 'html') {
      next();
      return;
    }
    res.set(HOME_HEADERS).type('html').send(HOME_HTML);
  });

  return router;
}
