// What the console's route modules share: the context it is built from, a signed-in session, and the
// router's guards and answer helpers (routes.ts makes them; operator-routes.ts and backfill-routes.ts use them).
import express from 'express';
import type { Bridge } from '../../../bridge/bridge.ts';
import type { ConsoleSession } from '../../../bridge/console-sessions.ts';
import type { Installation } from '../../../bridge/model.ts';
import type { ConsoleGuards } from './guards.ts';
import type { CrmModule } from '../../../bridge/crm-module.ts';
import type { JobQueue } from '../../../bridge/job-queue.ts';
import type { EnrichService } from '../../../core/enrich/service.ts';
import type { SecretBox } from '../../../core/secrets/secret-box.ts';
import type { Store } from '../../../core/storage/port.ts';
import type { Logger } from '../../logger.ts';
import type { Chrome } from './format.ts';
import type { SuppressionList } from '../../../core/suppression/list.ts';

export interface ConsoleContext {
  /** PUBLIC_URL: links, cookies and the Origin check are made for it; null: the console is off. */
  readonly publicUrl: string | null;
  readonly box: SecretBox;
  readonly bridge: Bridge;
  readonly store: Store;
  /** The enrichment service: the playground's sandbox requests. */
  readonly service: EnrichService;
  /** The job queue: its counts and dead jobs for the operator. */
  readonly queue: JobQueue;
  /** The CRM modules: their objects and the property each field is written to. */
  readonly modules: readonly CrmModule[];
  readonly log: Logger;
  /** The service's copy of the suppression list (a change made here is in force at once); absent: the console reads its own. */
  readonly suppressions?: SuppressionList;
  readonly now?: () => Date;
  /** Wakes this process's idle workers (a record's Enrich now is worked on at once); absent: they look again on their own. */
  readonly wake?: () => void;
}

/**
 * A signed-in session with the page chrome it sees (who is signed in, the form token), and the person
 * the CRM signed in (an e-mail, or the CRM's name for them; null after a one-time link).
 */
export type Signed = ConsoleSession & { readonly chrome: Chrome; readonly person: string | null };

export interface ConsoleKit {
  readonly router: express.Router;
  readonly context: ConsoleContext & { readonly publicUrl: string };
  /** The console's path under PUBLIC_URL. */
  readonly base: string;
  readonly now: () => Date;
  /** The urlencoded form parser every post uses (bounded). */
  readonly form: ReturnType<typeof express.urlencoded>;
  readonly page: (res: express.Response, status: number, html: string) => void;
  /** The checks before a handler, as middleware (guards.ts): signed in, operator only, an installation's page. */
  readonly guards: ConsoleGuards;
  /** The installation's CRM module, if this server ships it. */
  readonly moduleOf: (installation: Installation) => CrmModule | undefined;
}
