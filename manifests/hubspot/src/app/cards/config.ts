// Written by `npm run manifests:hubspot` (scripts/hubspot-manifest.ts): edit the script, not this file.
// enrichbridge's public URL (its PUBLIC_URL), which every hubspot.fetch call of the card goes to; the
// app's permittedUrls.fetch (app-hsmeta.json) lists the same URL.
export const ENRICHBRIDGE_PUBLIC_URL = 'https://YOUR_PUBLIC_HOST';
