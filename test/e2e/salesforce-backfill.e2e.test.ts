// `enrichbridge backfill salesforce …` as an operator runs it: the CLI as a child process on a temporary data
// folder (stdin a pipe, as under cron or CI), Salesforce as a small local fake of the endpoints a backfill calls
// (Bulk API 2.0 query job, its CSV results by locator, sObject Collections retrieve) on loopback.
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createAccount } from '../../core/accounts/admin.ts';
import { SALESFORCE_API_VERSION } from '../../connectors/salesforce/api.ts';
import type { SalesforceCredentials } from '../../connectors/salesforce/auth.ts';
import { SALESFORCE_PROVIDER } from '../../connectors/salesforce/connector.ts';
import { toSalesforceId18 } from '../../connectors/salesforce/ids.ts';
import { withRuntime } from '../../server/runtime.ts';
import { tempDir } from '../support/harness.ts';
import { REPO, withoutBackendsLine } from '../support/processes.ts';

const execFileAsync = promisify(execFile);
const V = `/services/data/v${SALESFORCE_API_VERSION}`;
const ORG = '00D5g000004fAkEEAU';
const JOB = '750R0000000zlh9IAA';
const TOKEN = 'tok-e2e';

interface FakeSalesforce {
  readonly url: string;
  /** Method and path (query string included) of every request, in order. */
  readonly requests: string[];
  /** The SOQL of every query job created. */
  readonly queries: string[];
  close(): Promise<void>;
}

const CreateJobSchema = z.object({ operation: z.literal('query'), query: z.string() });
const RetrieveSchema = z.object({ ids: z.array(z.string()), fields: z.array(z.string()) });

async function body(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(Buffer.from(z.instanceof(Uint8Array).parse(chunk)));
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/**
 * Leads by id, answered as Salesforce does: one query job that is complete at once, its ids as CSV paged by
 * maxRecords with a locator (the next row, base64) or the string null, and a retrieve of the asked fields.
 */
async function startFakeSalesforce(leads: ReadonlyMap<string, Record<string, string>>): Promise<FakeSalesforce> {
  const requests: string[] = [];
  const queries: string[] = [];
  const ids = [...leads.keys()];
  const json = (res: ServerResponse, status: number, value: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json;charset=UTF-8', 'sforce-limit-info': 'api-usage=40/15000' });
    res.end(JSON.stringify(value));
  };
  const jobInfo = { id: JOB, operation: 'query', object: 'Lead', state: 'JobComplete', apiVersion: Number(SALESFORCE_API_VERSION) };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    requests.push(`${req.method ?? ''} ${url.pathname}${url.search}`);
    if (req.headers.authorization !== `Bearer ${TOKEN}`) return json(res, 401, [{ errorCode: 'INVALID_SESSION_ID', message: 'Session expired or invalid' }]);
    if (req.method === 'POST' && url.pathname === `${V}/jobs/query`) {
      queries.push(CreateJobSchema.parse(await body(req)).query);
      return json(res, 200, { ...jobInfo, state: 'UploadComplete' });
    }
    if (req.method === 'GET' && url.pathname === `${V}/jobs/query/${JOB}`) return json(res, 200, jobInfo);
    if (req.method === 'GET' && url.pathname === `${V}/jobs/query/${JOB}/results`) {
      const start = Number(Buffer.from(url.searchParams.get('locator') ?? 'MA==', 'base64').toString());
      const end = Math.min(start + Number(url.searchParams.get('maxRecords') ?? '50000'), ids.length);
      res.writeHead(200, { 'content-type': 'text/csv', 'sforce-locator': end < ids.length ? Buffer.from(String(end)).toString('base64') : 'null' });
      return res.end(
        `"Id"\n${ids
          .slice(start, end)
          .map((id) => `"${id}"\n`)
          .join('')}`,
      );
    }
    if (req.method === 'POST' && url.pathname === `${V}/composite/sobjects/Lead`) {
      const asked = RetrieveSchema.parse(await body(req));
      return json(
        res,
        200,
        asked.ids.map((id) => {
          const lead = leads.get(id);
          if (lead === undefined) return null;
          return { attributes: { type: 'Lead' }, ...Object.fromEntries(asked.fields.map((f) => [f, f === 'IsConverted' ? false : (lead[f] ?? null)])) };
        }),
      );
    }
    return json(res, 404, [{ errorCode: 'NOT_FOUND', message: 'The requested resource does not exist' }]);
  };
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => json(res, 500, [{ errorCode: 'UNKNOWN_EXCEPTION', message: String(error) }]));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = z.custom<AddressInfo>((a) => typeof a === 'object' && a !== null).parse(server.address());
  return { url: `http://127.0.0.1:${port}`, requests, queries, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const FailureSchema = z.object({ code: z.number(), stdout: z.string(), stderr: z.string() });
const JobsSchema = z.array(
  z.object({ installationId: z.string(), kind: z.string(), payload: z.object({ object: z.string(), recordId: z.string(), trigger: z.string() }) }).loose(),
);

/** Five Leads (the third without a match key), a data folder with a Salesforce installation of the fake org. */
async function setUp(environment: 'sandbox' | 'production') {
  const leads = new Map<string, Record<string, string>>();
  for (let i = 1; i <= 5; i += 1) {
    const id = toSalesforceId18(`00Q5g00000Ld${String(i).padStart(3, '0')}`) ?? '';
    leads.set(
      id,
      i === 3 ? { FirstName: 'Solo', LastName: 'Only' } : { FirstName: 'Pat', LastName: `Doe${i}`, Email: `pat.doe${i}@example.com`, Company: 'Doe Ventures' },
    );
  }
  const fake = await startFakeSalesforce(leads);
  cleanups.push(() => fake.close());
  const dataDir = tempDir('enrichbridge-sf-backfill-cli-');
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const env = { DATA_DIR: dataDir, ENRICHBRIDGE_SECRET_KEY: 'cd'.repeat(32), LOG_LEVEL: 'warn', SALESFORCE_ALLOW_ANY_HOST: 'true' };
  // The installation is made in-process (the commands under test run as processes).
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
  cleanups.push(() => {
    vi.unstubAllEnvs();
  });
  const credentials: SalesforceCredentials = {
    kind: 'static',
    instanceUrl: fake.url,
    accessToken: TOKEN,
    refreshToken: null,
    issuedAt: null,
    expiresAt: null,
    clientId: null,
    clientSecret: null,
    loginUrl: 'https://login.salesforce.com',
    orgId: ORG,
    userId: null,
    jwt: null,
  };
  const id = await withRuntime(async ({ installations }, { store }) => {
    await createAccount(store, 'owner', { careerIntelligence: true });
    const created = await installations.create({
      provider: SALESFORCE_PROVIDER,
      externalAccountId: ORG,
      environment,
      target: { kind: 'local', accountName: 'owner' },
      crmCredentials: credentials,
    });
    return created.id;
  });
  const inherited = Object.entries(process.env).filter(([name]) => !name.startsWith('SALESFORCE_'));
  const childEnv = { ...Object.fromEntries(inherited.filter((e): e is [string, string] => e[1] !== undefined)), ...env };
  const run = (args: readonly string[]) =>
    execFileAsync(process.execPath, [path.join(REPO, 'bin/enrichbridge.js'), ...args], { cwd: REPO, env: childEnv, timeout: 15_000 });
  const fail = async (args: readonly string[]) => {
    try {
      const { stdout, stderr } = await run(args);
      throw new Error(`expected enrichbridge ${args.join(' ')} to fail; it printed:\n${stdout}${stderr}`);
    } catch (error) {
      const parsed = FailureSchema.safeParse(error);
      if (!parsed.success) throw error;
      return parsed.data;
    }
  };
  // Read in-process: one CLI start less.
  const jobs = () => withRuntime(async (_bridge, { queue }) => JobsSchema.parse(await queue.list()));
  return { id, fake, leads, run, fail, jobs };
}

describe('enrichbridge backfill salesforce', () => {
  it('--dry-run prints the plan with its quota units and enqueues nothing; without --yes off a terminal it refuses; --yes enqueues', async () => {
    const { id, fake, leads, run, fail, jobs } = await setUp('production');

    const dry = await run(['backfill', 'salesforce', id, '--object', 'Lead', '--where-not-enriched', '--dry-run']);
    expect(dry.stdout.split('\n').filter((l) => l !== '')).toEqual([
      'scanned 5 leads with an empty WF_Enriched_At__c',
      '  with a match key:       4',
      '  already up to date:     0',
      '  to enrich:              4',
      '  quota units at most:    4',
      '  Salesforce API calls:   4 (the org has used 40 of 15000 in 24 h)',
      'dry run: nothing enqueued',
    ]);
    expect(fake.queries).toEqual(['SELECT Id FROM Lead WHERE WF_Enriched_At__c = null AND IsConverted = false']);

    const refused = await fail(['backfill', 'salesforce', id, '--object', 'Lead']);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('  to enrich:              4\n');
    expect(withoutBackendsLine(refused.stderr)).toBe('enrichbridge: not a terminal: pass --yes to enqueue without confirmation\n');

    const done = await run(['backfill', 'salesforce', id, '--object', 'Lead', '--yes']);
    expect(done.stdout).toMatch(/^enqueued 4 leads; /m);
    expect(done.stderr).toContain('enqueue: 100% (4 of 4)');
    const queued = await jobs();
    const expected = [...leads.entries()].filter(([, lead]) => lead.Email !== undefined).map(([leadId]) => leadId);
    expect(queued.map((j) => j.payload.recordId).sort()).toEqual(expected.sort());
    expect(queued.every((j) => j.installationId === id && j.kind === 'enrich' && j.payload.object === 'Lead' && j.payload.trigger === 'backfill')).toBe(true);
    // Ids only from the bulk job; no REST query paging.
    expect(fake.requests.filter((r) => r.includes('/query?'))).toEqual([]);
  });

  it('refuses an object it does not enrich, before any call', async () => {
    const { id, fake, fail } = await setUp('sandbox');
    const refused = await fail(['backfill', 'salesforce', id, '--object', 'Opportunity', '--dry-run']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("option '--object <object>' argument 'Opportunity' is invalid. Allowed choices are Contact, Lead, Account.");
    expect(fake.requests).toEqual([]);
  });
});
