// No personal data in logs or errors: a database error's row values and the values a CRM's error body
// quotes reach no log line (the real logger, into a captured stream), no enrichment log entry, no job's
// last error and no console page; what stays is the code (SQLSTATE, the CRM's category and codes).
import { rmSync } from 'node:fs';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccount } from '../../core/accounts/admin.ts';
import type { HubSpotCredentials } from '../../connectors/hubspot/auth.ts';
import { CONTACT } from '../../connectors/hubspot/connector.ts';
import { connectPortal } from '../../connectors/hubspot/install.ts';
import { HUBSPOT_PATHS } from '../../connectors/hubspot/version.ts';
import { enrichJob } from '../../bridge/enrich-job.ts';
import { loadConfig } from '../../server/config.ts';
import { type Logger, createLogger } from '../../server/logger.ts';
import { openRuntime, startWorker } from '../../server/runtime.ts';
import { TEST_DATABASE_URL, freshPostgresSchema } from '../support/databases.ts';
import { startFakeHubSpot, staticCredentials } from '../support/fake-hubspot.ts';
import { tempDir } from '../support/harness.ts';
import { until } from '../support/processes.ts';
import { persona } from '../support/requests.ts';
import { runtimeConsole } from '../support/console-app.ts';

/** The personal data each test plants; it must appear nowhere in what is captured. */
const MARKER = 'jane.marker@example.org';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The real logger, writing each line into `lines`. */
function capturedLogger(): { readonly logger: Logger; readonly lines: string[] } {
  const lines: string[] = [];
  return { logger: createLogger('debug', { write: (line: string) => void lines.push(line) }), lines };
}

describe.runIf(TEST_DATABASE_URL !== undefined && TEST_DATABASE_URL !== '')('a database error on PostgreSQL', () => {
  async function client(): Promise<pg.Client> {
    const connected = new pg.Client({ connectionString: await freshPostgresSchema(TEST_DATABASE_URL ?? ''), connectionTimeoutMillis: 5_000 });
    await connected.connect();
    cleanups.push(() => connected.end());
    return connected;
  }

  async function caught(work: Promise<unknown>): Promise<unknown> {
    try {
      await work;
    } catch (error) {
      return error;
    }
    throw new Error('expected the statement to fail');
  }

  it("a constraint violation's row values reach no log line, whichever way the error is logged; its SQLSTATE and constraint do", async () => {
    const db = await client();
    await db.query('CREATE TABLE people (id serial PRIMARY KEY, email text CONSTRAINT people_email_key UNIQUE)');
    await db.query('INSERT INTO people (email) VALUES ($1)', [MARKER]);
    const violation = await caught(db.query('INSERT INTO people (email) VALUES ($1)', [MARKER]));
    // The driver's error does carry the values: that is what must not pass.
    expect(JSON.stringify({ ...(violation as object) })).toContain(MARKER);

    const { logger, lines } = capturedLogger();
    logger.error({ err: violation }, 'saving failed');
    logger.error(violation);
    logger.error(
      { err: new Error('the batch could not be saved', { cause: new Error('transaction rolled back', { cause: violation }) }) },
      'pipeline worker error',
    );
    logger.error({ error: violation }, 'unhandled error');
    logger.warn({ err: new AggregateError([violation], 'both attempts failed') }, 'retry gave up');

    const output = lines.join('');
    expect(output).not.toContain(MARKER);
    expect(output).not.toContain('jane.marker');
    expect(lines).toHaveLength(5);
    for (const line of lines) expect(line).toContain('23505');
    expect(lines[0]).toContain('people_email_key');
  });

  it('a database error whose message quotes an input reaches no log line, as a field or as the message', async () => {
    const db = await client();
    await db.query('CREATE TABLE people (id uuid PRIMARY KEY)');
    const refused = await caught(db.query('SELECT id FROM people WHERE id = $1', [MARKER]));
    expect(refused instanceof Error ? refused.message : '').toContain(MARKER);

    const { logger, lines } = capturedLogger();
    logger.error({ err: refused }, 'lookup failed');
    logger.error(refused);
    const output = lines.join('');
    expect(output).not.toContain(MARKER);
    expect(output).toContain('22P02');
  });
});

describe('a CRM error body', () => {
  const CLIENT_SECRET = '0b1c2d3e-4f5a-4b6c-8d7e-9f0a1b2c3d4e';
  const APP_ID = '1160452';
  const PUBLIC_URL = 'http://console.test';

  it('a CRM 400 that echoes an e-mail reaches neither the log nor the enrichment log nor the console', async () => {
    const { logger, lines } = capturedLogger();
    const dataDir = tempDir('enrichbridge-no-personal-data-');
    const runtime = await openRuntime(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'debug', WORKER_CONCURRENCY: '0', PUBLIC_URL }), logger);
    const fake = await startFakeHubSpot({ appId: APP_ID, clientSecret: CLIENT_SECRET, webhookUrl: null });
    cleanups.push(async () => {
      await fake.close();
      await runtime.close();
      rmSync(dataDir, { recursive: true, force: true });
    });
    await createAccount(runtime.opened.store, 'privacy', { careerIntelligence: true });
    const credentials: HubSpotCredentials = staticCredentials(fake, CLIENT_SECRET, APP_ID);
    const { installation } = await connectPortal({
      installations: runtime.bridge.installations,
      portalId: fake.portalId,
      credentials,
      target: { kind: 'local', accountName: 'privacy' },
      environment: 'sandbox',
    });
    const amanda = persona('Amanda Taylor');
    const contact = await fake.createContact({ firstname: amanda.first_name, lastname: amanda.last_name, email: amanda.email }, { notify: false });
    // HubSpot's property-value validation refuses the write, quoting an address in its message.
    fake.failNext(1, 'INVALID_EMAIL', { path: HUBSPOT_PATHS.contactsBatchUpdate, value: MARKER });

    await runtime.opened.queue.enqueue(enrichJob(installation.id, { object: CONTACT, recordId: contact.id, trigger: 'create' }));
    const worker = startWorker(runtime, logger, 1);
    worker.wake();
    await until(
      'the job settled',
      async () => {
        const open = await runtime.opened.db.selectFrom('jobs').select('id').where('state', 'in', ['queued', 'running']).execute();
        return open.length === 0 ? true : undefined;
      },
      { timeoutMs: 20_000 },
    );
    await worker.stop();
    // HubSpot did answer with the address: the refusal went through the connector.
    expect(fake.requests.some((r) => r.path === HUBSPOT_PATHS.contactsBatchUpdate && r.status === 400)).toBe(true);

    const entries = await runtime.bridge.pipelineStore.searchLog({ installationId: installation.id, limit: 10 });
    expect(entries.map((e) => e.outcome)).toEqual(['failed:crm_validation']);
    const entry = entries[0];
    if (entry === undefined) throw new Error('no log entry');
    expect(entry.detail).toContain('INVALID_EMAIL');
    expect(entry.detail).not.toContain(MARKER);
    const jobs = await runtime.opened.db.selectFrom('jobs').select(['last_error']).execute();
    for (const job of jobs) expect(job.last_error ?? '').not.toContain(MARKER);

    // The console's overview, log and entry pages, as an operator sees them.
    const app = await runtimeConsole(runtime, PUBLIC_URL, { log: logger });
    cleanups.push(() => app.close());
    const url = app.url;
    const { cookie } = await app.signIn({ kind: 'operator' });
    const base = `/console/installations/${encodeURIComponent(installation.id)}`;
    const pages: string[] = [];
    for (const path of [base, `${base}/log`, `${base}/log?outcome=failed`, `${base}/log/${encodeURIComponent(entry.id)}`]) {
      const response = await fetch(`${url}${path}`, { headers: { cookie } });
      expect(response.status, path).toBe(200);
      pages.push(await response.text());
    }
    expect(pages[3]).toContain('INVALID_EMAIL');
    for (const page of pages) expect(page).not.toContain(MARKER);

    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join('')).not.toContain(MARKER);
  });
});
