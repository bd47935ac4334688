// The HubSpot CrmConnector: contacts read and written in batches of 100 through the paced API client,
// mapped to requests and to `wf_*` properties.
import type { CallOptions, CrmConnector, CrmRecord, FieldValue, RecordUpdate, WriteResult } from '../../bridge/connector.ts';
import type { Installations } from '../../bridge/installations.ts';
import type { CrmValue, Installation } from '../../bridge/model.ts';
import { HUBSPOT_BATCH_LIMIT, HubSpotApi } from './api.ts';
import { HubSpotTokenSource } from './auth.ts';
import { contactToRequest } from './mapping.ts';
import { formatHubSpotValue, hubspotProperties, hubspotPropertyFor } from './fields.ts';
import { HUBSPOT_IDENTITY_PROPERTIES } from './scopes.ts';

export const HUBSPOT_PROVIDER = 'hubspot';
/** The one object the HubSpot connector enriches. */
export const CONTACT = 'contact';

/** What a batch read asks for: the identity properties, and ours (the overwrite policy compares them). */
export function readProperties(): string[] {
  return [...HUBSPOT_IDENTITY_PROPERTIES, ...hubspotProperties().map((p) => p.name)];
}

export class HubSpotConnector implements CrmConnector {
  readonly maxBatch = HUBSPOT_BATCH_LIMIT;
  readonly defaultObjects = [CONTACT] as const;
  private readonly properties = readProperties();

  constructor(readonly api: HubSpotApi) {}

  private check(object: string): void {
    if (object !== CONTACT) throw new Error(`the HubSpot connector enriches contacts, not ${object}`);
  }

  async read(object: string, ids: readonly string[], options: CallOptions = {}): Promise<Map<string, CrmRecord>> {
    this.check(object);
    const found = await this.api.readContacts(ids, this.properties, options);
    return new Map([...found].map(([id, properties]) => [id, { id, properties }]));
  }

  async write(object: string, updates: readonly RecordUpdate[], options: CallOptions = {}): Promise<WriteResult[]> {
    this.check(object);
    return this.api.updateContacts(updates, options);
  }

  toRequest(_object: string, record: CrmRecord) {
    return contactToRequest(record.properties);
  }

  /** HubSpot clears a property set to the empty string (null is refused). */
  readonly emptyValue = '';

  propertyFor(_object: string, key: string): string | null {
    return hubspotPropertyFor(key);
  }

  formatValue(key: string, value: FieldValue): CrmValue {
    return formatHubSpotValue(key, value);
  }
}

/** The API client of an installation, with its token source. */
export async function hubspotApiFor(installation: Installation, installations: Installations, now?: () => Date): Promise<HubSpotApi> {
  const tokens = new HubSpotTokenSource(installation.id, installations, now);
  const credentials = await tokens.credentials();
  return new HubSpotApi({
    portalId: installation.externalAccountId,
    apiBaseUrl: credentials.apiBaseUrl,
    accessToken: () => tokens.accessToken(),
    refreshAccessToken: () => tokens.refreshAfterRefusal(),
    ...(now === undefined ? {} : { now }),
  });
}

export async function hubspotConnectorFor(installation: Installation, installations: Installations): Promise<HubSpotConnector> {
  return new HubSpotConnector(await hubspotApiFor(installation, installations));
}
