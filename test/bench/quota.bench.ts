// `npm run bench:quota [-- --people N]`: what a realistic HubSpot webhook stream costs in quota units,
// against what it deserves (issue 14). A production installation over a generated snapshot: the real
// server (`server/main.ts`, in-server workers) with the fake HubSpot of test/support sending it
// v3-signed webhooks, subscribed to the identity properties and to one of ours (so our own writes
// come back as echoes). The stream, in the order a portal lives it:
//   1. creations: N people (each once), plus name-only records (no match key);
//   2. exact CRM duplicates (30 % of the people again, in other case and spacing), redeliveries of
//      20 % of the deliveries so far, and edits that change nothing once normalized (an e-mail's case,
//      a phone's format);
//   3. real identity changes: 10 % of the records get another person's e-mail (people kept apart for it).
// Deserved: one unit per distinct person looked up (the generator's own person ids, not our hash) plus
// one per real change. Spent: the units the enrichment log records (checked against the token's quota
// count). Waste = spent − deserved; the duplicates' own cost is reported apart. Targets: waste 0,
// duplicates 0. Exit 1 when a target is missed.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { QueryLineSchema, type QueryLine } from '../../core/snapshot/format.ts';
import { currentPeriod } from '../../core/limits/quota-period.ts';
import { openStorage } from '../../bridge/storage.ts';
import { KyselyPipelineStore } from '../../bridge/store/kysely-pipeline-store.ts';
import { hubspotPropertyFor } from '../../connectors/hubspot/fields.ts';
import { HUBSPOT_IDENTITY_PROPERTIES } from '../../connectors/hubspot/scopes.ts';
import { type FakeHubSpot, startFakeHubSpot } from '../support/fake-hubspot.ts';
import { cli, freePort, machine, startChild, stopChild, verdict, waitHealthy } from './bench-support.ts';

const APP_ID = '1160452';
const PORTAL_ID = '62515';
// --reuse off: the same stream with the installation's answer reuse turned off (what duplicates cost without it).
const { values } = parseArgs({ options: { people: { type: 'string', default: '300' }, reuse: { type: 'string', default: 'on' } } });
const REUSE = z.enum(['on', 'off']).parse(values.reuse);
const PEOPLE = z.coerce.number().int().min(20).max(5000).parse(values.people);
const DUPLICATE_SHARE = 0.3;
const REDELIVERY_SHARE = 0.2;
const CHANGE_SHARE = 0.1;
const NAME_ONLY = Math.round(PEOPLE * 0.1);
const OUR_PROPERTY = hubspotPropertyFor('household.net_worth') ?? 'wf_household_net_worth';

type Props = Record<string, string | null>;

/** A generated query as a HubSpot contact would hold it. */
function contactOf(line: QueryLine): Props {
  const r = z
    .object({
      first_name: z.string().nullish(),
      last_name: z.string().nullish(),
      emails: z.array(z.string()).nullish(),
      phones: z.array(z.string()).nullish(),
      addresses: z
        .array(z.object({ address: z.string().nullish(), city: z.string().nullish(), state: z.string().nullish(), zipcode: z.string().nullish() }))
        .nullish(),
      company_name: z.string().nullish(),
    })
    .parse(line.request);
  const address = r.addresses?.[0];
  return {
    firstname: r.first_name ?? null,
    lastname: r.last_name ?? null,
    email: r.emails?.[0] ?? null,
    phone: r.phones?.[0] ?? null,
    address: address?.address ?? null,
    city: address?.city ?? null,
    state: address?.state ?? null,
    zip: address?.zipcode ?? null,
    company: r.company_name ?? null,
  };
}

/** The same person as a second CRM record would hold them: other case and spacing. */
function duplicateOf(p: Props): Props {
  const shout = (v: string | null) => (v === null ? null : `  ${v.toUpperCase()} `);
  const lower = (v: string | null) => (v === null ? null : v.toLowerCase());
  return { ...p, firstname: lower(p.firstname ?? null), lastname: shout(p.lastname ?? null), email: shout(p.email ?? null), city: lower(p.city ?? null) };
}

async function main(): Promise<void> {
  const work = mkdtempSync(path.join(os.tmpdir(), 'enrichbridge-bench-quota-'));
  const source = path.join(work, 'snapshot');
  const env = { DATA_DIR: path.join(work, 'data'), ENRICHBRIDGE_SECRET_KEY: randomBytes(32).toString('hex') };
  let fake: FakeHubSpot | undefined;
  let child: ReturnType<typeof startChild> | undefined;
  try {
    // People the generator knows, each with an e-mail (a match key of their own).
    const queries = PEOPLE * 3;
    await cli(['data', 'generate', source, '--people', String(Math.max(2000, PEOPLE * 4)), '--queries', String(queries), '--seed', '7'], env);
    const byPerson = new Map<string, QueryLine>();
    for (const text of readFileSync(path.join(source, 'queries.jsonl'), 'utf8').split('\n')) {
      if (text.trim() === '') continue;
      const line = QueryLineSchema.parse(JSON.parse(text));
      const props = contactOf(line);
      if (line.expected.person_id === null || props.email === null || byPerson.has(line.expected.person_id)) continue;
      byPerson.set(line.expected.person_id, line);
    }
    const people = [...byPerson.entries()];
    const changes = Math.round(PEOPLE * CHANGE_SHARE);
    if (people.length < PEOPLE + changes) throw new Error(`the generator gave ${people.length} people with an e-mail; ${PEOPLE + changes} needed`);
    const stream = people.slice(0, PEOPLE);
    const reserve = people.slice(PEOPLE, PEOPLE + changes);

    await cli(['data', 'load', source], env);
    await cli(['accounts', 'create', 'bench', '--career-intelligence', '--rate-limit', '50', '--quota', '1000000'], env);
    fake = await startFakeHubSpot({
      webhookUrl: null,
      appId: APP_ID,
      portalId: PORTAL_ID,
      subscribedProperties: [...HUBSPOT_IDENTITY_PROPERTIES, OUR_PROPERTY],
    });
    await cli(
      [
        ...['hubspot', 'connect', '--portal-id', PORTAL_ID, '--access-token', fake.tokens.staticToken, '--client-secret', fake.clientSecret],
        ...['--app-id', APP_ID, '--account', 'bench', '--env', 'production', '--api-base-url', fake.url],
      ],
      env,
    );
    if (REUSE === 'off') {
      const id =
        (await cli(['installations', 'list'], env))
          .split('\n')
          .find((line) => line.startsWith('inst_'))
          ?.split(/\s+/)[0] ?? '';
      await cli(['installations', 'settings', id, '--no-reuse-answers'], env);
    }
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    child = startChild('server', 'server/main.ts', {
      ...env,
      PORT: String(port),
      PUBLIC_URL: url,
      HUBSPOT_API_BASE_URL: fake.url,
      HUBSPOT_CLIENT_SECRET: fake.clientSecret,
      HUBSPOT_APP_ID: APP_ID,
      LOG_LEVEL: 'warn',
    });
    await waitHealthy('server', child, `${url}/healthz`);
    fake.setWebhookUrl(`${url}/webhooks/hubspot`);
    const hubspot = fake;

    const opened = await openStorage(path.join(env.DATA_DIR, 'enrichbridge.db'));
    const store = new KyselyPipelineStore(opened.db);
    /** Until the queue is empty and no write or webhook is in flight, twice in a row a second apart. */
    const settled = async (label: string) => {
      const started = Date.now();
      let quiet = 0;
      while (quiet < 2) {
        await hubspot.webhooksIdle();
        await new Promise((resolve) => setTimeout(resolve, 500));
        const counts = await opened.queue.countByState();
        quiet = (counts.queued ?? 0) + (counts.running ?? 0) === 0 ? quiet + 1 : 0;
        if (Date.now() - started > 300_000) throw new Error(`${label}: the queue did not drain in 5 minutes`);
      }
      console.error(`${label}: settled in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    };

    // 1. Creations, and records with a name only.
    const recordOf = new Map<string, string>();
    for (const [personId, line] of stream) recordOf.set(personId, (await hubspot.createContact(contactOf(line))).id);
    const nameOnly: string[] = [];
    for (let i = 0; i < NAME_ONLY; i += 1) nameOnly.push((await hubspot.createContact({ firstname: 'Name', lastname: `Only${i}` })).id);
    await settled('creations');

    // 2. Duplicates, redeliveries, edits that normalize to the same request.
    const duplicates: string[] = [];
    for (const [, line] of stream.slice(0, Math.round(PEOPLE * DUPLICATE_SHARE)))
      duplicates.push((await hubspot.createContact(duplicateOf(contactOf(line)))).id);
    const earlier = [...hubspot.deliveries];
    for (const delivery of earlier.slice(0, Math.round(earlier.length * REDELIVERY_SHARE))) await hubspot.redeliver(delivery);
    let unchangedEdits = 0;
    for (const [personId, line] of stream.slice(-Math.round(PEOPLE * 0.2))) {
      const id = recordOf.get(personId);
      const email = contactOf(line).email ?? null;
      if (id === undefined || email === null) continue;
      await hubspot.updateContact(id, { email: ` ${email.toUpperCase()}` });
      unchangedEdits += 1;
    }
    await settled('duplicates, redeliveries and unchanged edits');

    // 3. Real identity changes: another person's e-mail (one nobody else in the stream has).
    for (const [i, [personId]] of stream.slice(0, changes).entries()) {
      const id = recordOf.get(personId);
      const other = reserve[i]?.[1];
      if (id === undefined || other === undefined) continue;
      await hubspot.updateContact(id, { email: contactOf(other).email ?? null });
    }
    await settled('identity changes');

    // What it cost.
    const log = (await store.searchLog({ installationId: (await store.listInstallations())[0]?.id ?? '', limit: 1_000_000 })).reverse();
    const spent = log.reduce((sum, entry) => sum + entry.quotaConsumed, 0);
    const duplicateSet = new Set(duplicates);
    const duplicateUnits = log.filter((entry) => duplicateSet.has(entry.recordId)).reduce((sum, entry) => sum + entry.quotaConsumed, 0);
    const reused = log.filter((entry) => entry.reusedFrom !== undefined).length;
    const installation = (await store.listInstallations())[0];
    const tokenUnits =
      installation?.target.kind === 'local' ? await opened.store.quotaUsed(installation.target.tokenId, currentPeriod('month', new Date()).key) : Number.NaN;
    const deserved = stream.length + changes;
    const waste = spent - deserved;
    const outcomes = new Map<string, number>();
    for (const entry of log) outcomes.set(entry.outcome, (outcomes.get(entry.outcome) ?? 0) + 1);
    await opened.store.close();

    console.log(`# bench:quota (${machine()}), answer reuse ${REUSE}`);
    console.log(
      `stream: ${stream.length} people created, ${NAME_ONLY} name-only records, ${duplicates.length} exact duplicates, ${Math.round(earlier.length * REDELIVERY_SHARE)} redelivered webhook batches, ${unchangedEdits} edits that normalize to the same request, ${changes} real identity changes; our own writes echo back (${OUR_PROPERTY} subscribed); ${hubspot.deliveries.length} webhook deliveries in all`,
    );
    console.log(`log: ${[...outcomes].map(([outcome, n]) => `${outcome} ${n}`).join(', ')}; ${reused} answers reused`);
    console.log(`units spent ${spent} (the token's quota count: ${tokenUnits}); units deserved ${deserved} (${stream.length} people + ${changes} changes)`);
    console.log(`waste ${waste} ${verdict(waste === 0)} (target 0); duplicates cost ${duplicateUnits} ${verdict(duplicateUnits === 0)} (target 0)`);
    if (waste !== 0 || duplicateUnits !== 0 || tokenUnits !== spent) process.exitCode = 1;
  } finally {
    if (child !== undefined) await stopChild(child);
    await fake?.close();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
