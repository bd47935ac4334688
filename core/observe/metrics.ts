// What an operator of several instances scrapes from each (GET /metrics, Prometheus text format):
// requests by route and status, enrichment latency, quota units, the queue by state, jobs by kind and
// result, CRM calls by provider and status, and 429s given and received. One registry per process;
// the layers count where the thing happens, the server only serves the text.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export const registry = new Registry();

let processMetrics = false;
/**
 * Node's own process metrics (CPU, memory, event-loop lag, handles) in the registry: started by the
 * server, whose /metrics serves them, and not by every one-shot command that imports this module.
 */
export function collectProcessMetrics(): void {
  if (processMetrics) return;
  processMetrics = true;
  collectDefaultMetrics({ register: registry, prefix: 'enrichbridge_' });
}

export const httpRequests = new Counter({
  name: 'enrichbridge_http_requests_total',
  help: 'HTTP requests answered, by route pattern and status code.',
  labelNames: ['route', 'status'] as const,
  registers: [registry],
});

export const enrichDuration = new Histogram({
  name: 'enrichbridge_enrichment_duration_seconds',
  help: 'Time to answer an enrichment request (/v1/, /sandbox/v1), from its arrival, by environment and status code.',
  labelNames: ['environment', 'status'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
  registers: [registry],
});

export const quotaUnits = new Counter({
  name: 'enrichbridge_quota_units_used_total',
  help: 'Usage units taken from production tokens by this instance.',
  registers: [registry],
});

export const jobsFinished = new Counter({
  name: 'enrichbridge_jobs_total',
  help: 'Jobs this instance worked on, by kind and result (completed, failed, released).',
  labelNames: ['kind', 'result'] as const,
  registers: [registry],
});

export const crmCalls = new Counter({
  name: 'enrichbridge_crm_calls_total',
  help: 'Calls to a CRM API, by provider and HTTP status (2xx when the SDK does not say which; timeout, error without one).',
  labelNames: ['provider', 'status'] as const,
  registers: [registry],
});

export const eventsRecovered = new Counter({
  name: 'enrichbridge_crm_events_recovered_total',
  help: "CRM events recovered from the CRM's own journal (HubSpot's Webhooks Journal) that no webhook had brought, by provider.",
  labelNames: ['provider'] as const,
  registers: [registry],
});

export const rateLimited = new Counter({
  name: 'enrichbridge_rate_limited_total',
  help: '429s: given to callers of this instance (direction=given), or received from an enrichment endpoint or a CRM (direction=received).',
  labelNames: ['direction', 'peer'] as const,
  registers: [registry],
});

/** The queue by state, read when scraped (the queue is shared: every instance reports the same numbers). */
export const queueJobs = new Gauge({
  name: 'enrichbridge_queue_jobs',
  help: 'Jobs in the queue by state, read at scrape time.',
  labelNames: ['state'] as const,
  registers: [registry],
});

let queueDepthSource: (() => Promise<Readonly<Record<string, number>>>) | null = null;

/** Where the queue's depth is read at scrape time (set by the composition root). */
export function readQueueDepthFrom(source: (() => Promise<Readonly<Record<string, number>>>) | null): void {
  queueDepthSource = source;
}

/** Each installation with a monthly budget: the share spent this month, read when scraped (from 0.8 on, a warning). */
export const budgetUsed = new Gauge({
  name: 'enrichbridge_budget_used_ratio',
  help: "Share of an installation's monthly unit budget spent this month (1 = spent; enrichment waits), read at scrape time.",
  labelNames: ['installation'] as const,
  registers: [registry],
});

let budgetSource: (() => Promise<Readonly<Record<string, number>>>) | null = null;

/** Where the installations' budget shares are read at scrape time (set by the composition root). */
export function readBudgetsFrom(source: (() => Promise<Readonly<Record<string, number>>>) | null): void {
  budgetSource = source;
}

/** The text a scrape gets. */
export async function metricsText(): Promise<string> {
  if (queueDepthSource !== null) {
    queueJobs.reset();
    for (const [state, count] of Object.entries(await queueDepthSource())) queueJobs.set({ state }, count);
  }
  if (budgetSource !== null) {
    budgetUsed.reset();
    for (const [installation, ratio] of Object.entries(await budgetSource())) budgetUsed.set({ installation }, ratio);
  }
  return registry.metrics();
}

export const METRICS_CONTENT_TYPE = registry.contentType;
