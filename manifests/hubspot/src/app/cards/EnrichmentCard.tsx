/** @jsxImportSource react */
// The card's entry point (enrichment-card-hsmeta.json `entrypoint`): HubSpot renders it in the contact
// record's sidebar.
import { hubspot } from '@hubspot/ui-extensions';
import { EnrichmentPanel } from './EnrichmentPanel.tsx';

hubspot.extend<'crm.record.sidebar'>(() => <EnrichmentPanel />);
