// The Salesforce API version enrichbridge speaks, in one place: the REST client, the OAuth client and
// the metadata in manifests/salesforce/ (sourceApiVersion, package.xml, flows, outbound messages).

/**
 * Winter '25. Set explicitly because jsforce defaults to 50.0; sObject Collections need ≥ 42.0, and
 * External Client Apps (the OAuth app in the manifests) exist from 59.0 on.
 */
export const SALESFORCE_API_VERSION = '62.0';
