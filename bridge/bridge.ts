// Assembles the pipeline from the service's parts: the pipeline store on the service database, the
// installations with their sealed secrets, the connectors by provider, and an enricher per
// installation (in-process against the local service, or HTTP against a remote endpoint).
import type { LeaseClock } from '../core/storage/database-clock.ts';
import { ConsoleSessions } from './console-sessions.ts';
import type { Kysely } from 'kysely';
import type { Enricher } from '../core/client/enricher.ts';
import { HttpEnricher } from '../core/client/http-enricher.ts';
import { InProcessEnricher } from '../core/client/in-process-enricher.ts';
import type { EnrichService } from '../core/enrich/service.ts';
import type { Job, JobQueue } from './job-queue.ts';
import type { SecretBox } from '../core/secrets/secret-box.ts';
import type { Store } from '../core/storage/port.ts';
import type { PipelineDatabase as Database } from './schema.ts';
import type { CrmConnector, CrmRecord } from './connector.ts';
import { InstallationError, Installations } from './installations.ts';
import type { Installation } from './model.ts';
import { BackfillProgress } from './backfill.ts';
import { BACKFILL_ESTIMATE_JOB, BACKFILL_RUN_JOB, BackfillRuns, runControlJobs } from './backfill-runs.ts';
import type { CrmBackfill } from './crm-module.ts';
import { InboundDeliveries } from './deliveries.ts';
import { RequestAnswers } from './request-answers.ts';
import { JobKinds, settledBy } from './job-kinds.ts';
import { Pipeline, type SettledCallback } from './pipeline.ts';
import { RecordDesk } from './record-actions.ts';
import { type ForgottenRecords, forgetRecords } from './person-erasure.ts';
import { DEFAULT_LOG_VALUES_RETENTION_DAYS } from './retention.ts';
import { ENRICH_JOB } from './enrich-job.ts';
import type { PipelineStore } from './store.ts';
import { KyselyPipelineStore } from './store/kysely-pipeline-store.ts';
import { type SuppressionList, keyedSuppressionList } from '../core/suppression/list.ts';

/** Builds the connector of one installation; it may read and update the installation's credentials. */
export type ConnectorFactory = (installation: Installation, installations: Installations) => Promise<CrmConnector>;

/** Runs a connector's own jobs (a webhook batch to expand into enrichment jobs, …). */
export type ConnectorJobHandler = (
  installation: Installation,
  jobs: readonly Job[],
  context: {
    installations: Installations;
    store: PipelineStore;
    queue: JobQueue;
    deliveries: InboundDeliveries;
    /** A line for the operator's log (counts and ids only). */
    log: (fields: Readonly<Record<string, unknown>>, message: string) => void;
    /** Forgets records whose person the CRM asks us to forget (person-erasure.ts forgetRecords, with the installation's connector). */
    forget: (object: string, records: readonly CrmRecord[]) => Promise<ForgottenRecords>;
  },
) => Promise<void>;

/** Answers a CRM's waiting workflows once their records are settled. */
export type CallbackHandler = (
  installation: Installation,
  installations: Installations,
  settled: readonly SettledCallback[],
  context: { queue: JobQueue },
) => Promise<void>;

export class ConnectorRegistry {
  private readonly factories = new Map<string, ConnectorFactory>();
  private readonly callbackHandlers = new Map<string, CallbackHandler>();
  readonly jobHandlers = new Map<string, ConnectorJobHandler>();
  private readonly backfills = new Map<string, CrmBackfill>();

  /** How a provider's records are read for a backfill (a console run's jobs use it). */
  registerBackfill(provider: string, backfill: CrmBackfill): this {
    this.backfills.set(provider, backfill);
    return this;
  }

  backfillFor(provider: string): CrmBackfill | undefined {
    return this.backfills.get(provider);
  }

  /** A job kind of a connector's, with what runs it. */
  registerJob(kind: string, handler: ConnectorJobHandler): this {
    this.jobHandlers.set(kind, handler);
    return this;
  }

  register(provider: string, factory: ConnectorFactory, callbacks?: CallbackHandler): this {
    this.factories.set(provider, factory);
    if (callbacks !== undefined) this.callbackHandlers.set(provider, callbacks);
    return this;
  }

  async answerCallbacks(
    installation: Installation,
    installations: Installations,
    settled: readonly SettledCallback[],
    context: { queue: JobQueue },
  ): Promise<void> {
    await this.callbackHandlers.get(installation.provider)?.(installation, installations, settled, context);
  }

  providers(): string[] {
    return [...this.factories.keys()];
  }

  async connectorFor(installation: Installation, installations: Installations): Promise<CrmConnector> {
    const factory = this.factories.get(installation.provider);
    if (factory === undefined) throw new InstallationError(`no connector for provider "${installation.provider}"`);
    return factory(installation, installations);
  }
}

export interface BridgeDeps {
  readonly db: Kysely<Database>;
  readonly store: Store;
  readonly queue: JobQueue;
  readonly box: SecretBox;
  /** The local enrichment service, for installations whose target is a local account. */
  readonly service: EnrichService;
  readonly connectors: ConnectorRegistry;
  readonly now?: () => Date;
  /** The clock leases are taken on (OpenedStorage's): the database's on PostgreSQL. */
  readonly leaseClock?: LeaseClock;
  /** Requests per second to a remote endpoint, per token (the contract's default is 5). */
  readonly remoteRatePerSecond?: number;
  /** Where connector jobs report what they did (the server's logger); default: nowhere. */
  readonly log?: (fields: Readonly<Record<string, unknown>>, message: string) => void;
  /** Where what the operator should look into is reported (the server's logger at warn); default: nowhere. */
  readonly warn?: (fields: Readonly<Record<string, unknown>>, message: string) => void;
  /** How long the enrichment log keeps the values written and replaced (default 90 days; retention.ts). */
  readonly logValuesRetentionDays?: number;
  /** Who is never enriched, as the runtime keeps it current; absent: a copy of its own over the store (read when refreshed). */
  readonly suppressions?: SuppressionList;
}

export interface Bridge {
  readonly pipelineStore: PipelineStore;
  readonly installations: Installations;
  readonly pipeline: Pipeline;
  /** What the worker runs: `enrich` by the pipeline, each connector's own kinds by their handlers. */
  readonly jobs: JobKinds;
  /** Webhook and outbound-message deliveries seen lately, so a redelivery queues nothing. */
  readonly deliveries: InboundDeliveries;
  /** Request ids answered once and then the same way (HubSpot's workflow-action callbackId). */
  readonly requestAnswers: RequestAnswers;
  /** Where each backfill stands, so an interrupted one resumes. */
  readonly backfills: BackfillProgress;
  /** Backfills started from the console: estimate, run, progress, cancel. */
  readonly backfillRuns: BackfillRuns;
  readonly enricherFor: (installation: Installation) => Promise<Enricher>;
  /** Who is never enriched (the suppression list, as this bridge reads it) and how records' identifiers are hashed. */
  readonly suppressions: SuppressionList;
  /** The connector for an installation (its CRM client and credentials): an erasure's blanking. */
  readonly connectorFor: (installation: Installation) => Promise<CrmConnector>;
  /** Who is signed in to the admin console. */
  readonly consoleSessions: ConsoleSessions;
  /** One record as a CRM user sees it, and the record actions (Enrich now, Undo, Exclude, Include again). */
  readonly records: RecordDesk;
  /** How long the enrichment log keeps the values written and replaced: Undo's reach, and the purge's. */
  readonly logValuesRetentionDays: number;
}

export function createBridge(deps: BridgeDeps): Bridge {
  const logValuesRetentionDays = deps.logValuesRetentionDays ?? DEFAULT_LOG_VALUES_RETENTION_DAYS;
  const pipelineStore = new KyselyPipelineStore(deps.db, deps.leaseClock, deps.warn);
  const installations = new Installations(pipelineStore, deps.store, deps.box, deps.queue);
  const enricherFor = async (installation: Installation): Promise<Enricher> => {
    const { enrichmentToken } = await installations.secrets(installation.id);
    if (installation.target.kind === 'remote') {
      return new HttpEnricher({ url: installation.target.url, token: enrichmentToken, ratePerSecond: deps.remoteRatePerSecond });
    }
    // The account's own rate: the service would refuse anything faster.
    const account = await deps.store.findAccountById(installation.target.accountId);
    return new InProcessEnricher({
      service: deps.service,
      token: enrichmentToken,
      environment: installation.environment,
      ratePerSecond: account?.rateLimit,
      ...(deps.now === undefined ? {} : { now: deps.now }),
    });
  };
  const suppressions = deps.suppressions ?? keyedSuppressionList(deps.store.suppressions, deps.box);
  const pipeline = new Pipeline({
    store: pipelineStore,
    queue: deps.queue,
    connectorFor: (installation) => deps.connectors.connectorFor(installation, installations),
    enricherFor,
    onCallbacks: (installation, settled) => deps.connectors.answerCallbacks(installation, installations, settled, { queue: deps.queue }),
    answerBox: deps.box,
    suppressions,
    ...(deps.now === undefined ? {} : { now: deps.now }),
  });
  const jobs = new JobKinds(deps.queue).work(ENRICH_JOB, (batch, { workerId, signals }) => pipeline.processBatch(batch, workerId, signals));
  const backfills = new BackfillProgress(deps.db);
  const backfillRuns = new BackfillRuns(deps.db, deps.queue, deps.now);
  const control = settledBy('backfill', { store: pipelineStore, queue: deps.queue }, (installation, batch) =>
    runControlJobs(installation, batch, {
      runs: backfillRuns,
      progress: backfills,
      store: pipelineStore,
      installations,
      queue: deps.queue,
      backfillFor: (provider) => deps.connectors.backfillFor(provider),
    }),
  );
  jobs.work(BACKFILL_ESTIMATE_JOB, control).work(BACKFILL_RUN_JOB, control);
  const deliveries = new InboundDeliveries(deps.db);
  for (const [kind, handler] of deps.connectors.jobHandlers) {
    jobs.work(
      kind,
      settledBy(kind, { store: pipelineStore, queue: deps.queue }, (installation, batch) =>
        handler(installation, batch, {
          installations,
          store: pipelineStore,
          queue: deps.queue,
          deliveries,
          log: deps.log ?? (() => undefined),
          forget: async (object, records) =>
            forgetRecords(
              { store: pipelineStore, connector: await deps.connectors.connectorFor(installation, installations), suppressions },
              installation,
              object,
              records,
            ),
        }),
      ),
    );
  }
  return {
    pipelineStore,
    installations,
    pipeline,
    jobs,
    deliveries,
    requestAnswers: new RequestAnswers(deps.db),
    backfills,
    backfillRuns,
    enricherFor,
    suppressions,
    connectorFor: (installation) => deps.connectors.connectorFor(installation, installations),
    consoleSessions: new ConsoleSessions(deps.db, deps.now),
    records: new RecordDesk({
      store: pipelineStore,
      queue: deps.queue,
      connectorFor: (installation) => deps.connectors.connectorFor(installation, installations),
      ...(deps.now === undefined ? {} : { now: deps.now }),
      logValuesRetentionDays,
    }),
    logValuesRetentionDays,
  };
}
