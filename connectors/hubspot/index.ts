// The HubSpot module: what the composition root registers (bridge/crm-module.ts).
import type { CrmModule } from '../../bridge/crm-module.ts';
import { HUBSPOT_CALLBACK_JOB, completeHubSpotCallbacks, retryHubSpotCallbacks } from './action.ts';
import { HubSpotAuthError, HubSpotCredentialsCache } from './auth.ts';
import { CrmError } from '../../bridge/connector.ts';
import { hubspotBackfill } from './backfill.ts';
import { hubspotCommands } from './cli.ts';
import { hubspotConsoleSignIn } from './console-signin.ts';
import { CONTACT, HUBSPOT_PROVIDER, hubspotConnectorFor } from './connector.ts';
import { type HubSpotAppSettings, HubSpotInstallError, NO_HUBSPOT_APP } from './install.ts';
import { HUBSPOT_EVENTS_JOB, expandHubSpotEventJobs } from './intake.ts';
import { HUBSPOT_JOURNAL_JOB, JOURNAL_PULL_EVERY_MS, journalJob, pullHubSpotJournal } from './journal.ts';
import { hubspotRoutes } from './routes.ts';
import { hubspotPropertyFor } from './fields.ts';

export type { HubSpotAppSettings } from './install.ts';

/** The module, for the public app the server is configured with (none: static-token portals only). */
export function hubspotModule(app: HubSpotAppSettings = NO_HUBSPOT_APP): CrmModule {
  return {
    provider: HUBSPOT_PROVIDER,
    name: 'HubSpot',
    objects: [CONTACT],
    connector: hubspotConnectorFor,
    callbacks: completeHubSpotCallbacks,
    jobs: {
      // A workflow callback HubSpot refused at that moment, tried again until the enrollment's deadline.
      [HUBSPOT_CALLBACK_JOB]: (installation, jobs, { installations, queue }) => retryHubSpotCallbacks(installation, installations, jobs, queue),
      // A verified webhook batch, expanded into enrichment jobs by a worker (the route stores it whole).
      [HUBSPOT_EVENTS_JOB]: async (_installation, jobs, { installations, store, queue, deliveries }) => {
        const credentials = new HubSpotCredentialsCache(installations);
        await expandHubSpotEventJobs(jobs, { store, queue, deliveries, appIdOf: async (installation) => (await credentials.get(installation))?.appId ?? null });
      },
      // Missed events recovered from the portal's Webhooks Journal (3 days kept by HubSpot).
      [HUBSPOT_JOURNAL_JOB]: async (installation, _jobs, { installations, queue, deliveries, log }) => {
        try {
          const pull = await pullHubSpotJournal(installation, { installations, queue, deliveries });
          if (pull.skipped === null)
            log({ installation: installation.id, read: pull.read, recovered: pull.recovered, unreadable: pull.unreadable ?? 0 }, 'hubspot journal pulled');
        } catch (error) {
          // An app without the client-credentials grant or the journal scopes: said once an hour, no dead job.
          if (!(error instanceof CrmError && error.kind === 'auth')) throw error;
          log({ installation: installation.id, reason: error.message }, 'hubspot journal unavailable');
        }
      },
    },
    recurring: [{ everyMs: JOURNAL_PULL_EVERY_MS, job: (installation) => journalJob(installation.id) }],
    routes: (context) => hubspotRoutes(app, context),
    commands: (context) => hubspotCommands(app, context),
    backfill: hubspotBackfill,
    isUserError: (error) => error instanceof HubSpotInstallError || error instanceof HubSpotAuthError,
    propertyFor: hubspotPropertyFor,
    // A portal's Super Admin signs in to the console through the same public app.
    consoleSignIn: hubspotConsoleSignIn(app),
    // HubSpot's app sends a portal on another data centre (app-eu1, …) on from app.hubspot.com.
    recordUrl: (installation, _crm, object, recordId) =>
      object === CONTACT
        ? `https://app.hubspot.com/contacts/${encodeURIComponent(installation.externalAccountId)}/record/0-1/${encodeURIComponent(recordId)}`
        : null,
  };
}
