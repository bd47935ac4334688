// A person's erasure across installations, on real parts (the pipeline, its store and queue on each
// test database, the in-process service, the MemoryCrm as the CRM): the records we enriched are found
// by the keyed hashes of their identifiers, erased in every installation with the properties we wrote
// blanked, and the person suppressed, so a re-created contact is skipped as suppressed; a CRM's privacy
// deletion suppresses the person for that installation only, a plain deletion not at all.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { erasePerson } from '../../bridge/person-erasure.ts';
import type { Installation } from '../../bridge/model.ts';
import type { Suppressor } from '../../core/suppression/operations.ts';
import { type PipelineHarness, startPipeline } from '../support/pipeline-harness.ts';
import { propertyName } from '../support/memory-crm.ts';
import { persona } from '../support/requests.ts';
import { TEST_DATABASES, type TestDatabase } from '../support/databases.ts';

let database: TestDatabase | undefined;
const OBJECT = 'contact';
const amanda = persona('Amanda Taylor');

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(): Promise<{ h: PipelineHarness; one: Installation; two: Installation; suppressor: Suppressor }> {
  const h = await startPipeline({ database });
  cleanups.push(() => h.close());
  const one = await h.install();
  const two = await h.install();
  return { h, one, two, suppressor: { store: h.opened.store.suppressions, list: h.bridge.suppressions, findSubjects: null } };
}

async function enrich(
  h: PipelineHarness,
  installation: Installation,
  id: string,
  properties = { first_name: amanda.first_name, last_name: amanda.last_name, email: amanda.email },
) {
  h.crm.create(OBJECT, id, properties);
  await h.enqueue(installation, { object: OBJECT, recordId: id });
  await h.drain();
  return (await h.bridge.pipelineStore.searchLog({ installationId: installation.id, recordId: id, limit: 1 }))[0]?.outcome;
}

/** Every row any table holds about the record, by table. */
async function rowsAbout(h: PipelineHarness, installation: Installation, id: string): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of ['record_states', 'record_controls', 'enrichment_log', 'reusable_answers', 'record_identifiers'] as const) {
    const rows = await h.opened.db.selectFrom(table).select('record_id').where('installation_id', '=', installation.id).where('record_id', '=', id).execute();
    counts[table] = rows.length;
  }
  return counts;
}

const NOTHING = { record_states: 0, record_controls: 0, enrichment_log: 0, reusable_answers: 0, record_identifiers: 0 };

describe.each(TEST_DATABASES)('on $name', (each) => {
  beforeAll(() => {
    database = each;
  });

  it('an enriched record is found by the keyed hashes of its identifiers, never by the identifiers in clear', async () => {
    const { h, one } = await setup();
    const identity = {
      first_name: amanda.first_name,
      last_name: amanda.last_name,
      email: amanda.email,
      phone: '(404) 555-0101',
      street: '1 Elm Street',
      zip: '30301',
    };
    expect(await enrich(h, one, 'c-1', identity)).toBe('enriched');
    const rows = await h.opened.db.selectFrom('record_identifiers').selectAll().where('installation_id', '=', one.id).execute();
    // The e-mail, the phone, and the name at the address (one a nickname key of the first name).
    expect(new Set(rows.map((row) => row.digest.split(':')[0]))).toEqual(new Set(['email', 'phone', 'name_address']));
    expect(JSON.stringify(rows).toLowerCase()).not.toContain(amanda.email.toLowerCase());
    expect(rows.every((row) => /^(email|phone|name_address):[0-9a-f]{64}$/.test(row.digest))).toBe(true);
  });

  it('erasing a person reaches every installation: our rows about them gone, the properties we wrote blanked, the person suppressed', async () => {
    const { h, one, two, suppressor } = await setup();
    await enrich(h, one, 'c-1');
    await enrich(h, two, 'c-2', { first_name: 'Amanda', last_name: 'Taylor', email: amanda.email.toUpperCase() });
    await enrich(h, one, 'c-other', { first_name: 'Someone', last_name: 'Else', email: 'someone.else@example.com' });
    const written = h.crm.get(OBJECT, 'c-1')?.[propertyName('household.net_worth')];
    expect(written).not.toBeNull();

    const done = await erasePerson(
      { store: h.bridge.pipelineStore, connectorFor: h.bridge.connectorFor, suppressor },
      { emails: [amanda.email] },
      { blankCrm: true, actor: 'test' },
    );

    expect(done.installations.map((i) => [i.installation.id, i.records, i.blanked, i.notBlanked]).sort()).toEqual(
      [
        [one.id, 1, 1, 0],
        [two.id, 1, 1, 0],
      ].sort(),
    );
    expect(await rowsAbout(h, one, 'c-1')).toEqual(NOTHING);
    expect(await rowsAbout(h, two, 'c-2')).toEqual(NOTHING);
    for (const id of ['c-1', 'c-2']) {
      const properties = h.crm.get(OBJECT, id) ?? {};
      expect(properties[propertyName('household.net_worth')] ?? null).toBeNull();
      expect(properties[propertyName('status.enrichment_status')] ?? null).toBeNull();
      // The CRM's own fields are the CRM's.
      expect(properties.email).toBeDefined();
    }
    // Someone else's record is untouched.
    expect((await rowsAbout(h, one, 'c-other')).record_states).toBe(1);
    expect(done.suppressed.added).toBeGreaterThan(0);
    expect((await h.opened.store.suppressions.counts()).byKind.email).toBe(1);
  });

  it('a contact re-created after the erasure is skipped as suppressed, in every installation, and nothing is written to it', async () => {
    const { h, one, two, suppressor } = await setup();
    await enrich(h, one, 'c-1');
    await erasePerson(
      { store: h.bridge.pipelineStore, connectorFor: h.bridge.connectorFor, suppressor },
      { emails: [amanda.email] },
      { blankCrm: true, actor: 'test' },
    );
    expect(await enrich(h, one, 'c-again')).toBe('skipped:suppressed');
    expect(await enrich(h, two, 'c-elsewhere')).toBe('skipped:suppressed');
    expect(h.crm.get(OBJECT, 'c-again')?.[propertyName('household.net_worth')] ?? null).toBeNull();
    expect((await rowsAbout(h, one, 'c-again')).record_identifiers).toBe(0);
  });

  it('with --keep-crm-values the properties we wrote stay in the CRM, and our side is erased all the same', async () => {
    const { h, one, suppressor } = await setup();
    await enrich(h, one, 'c-1');
    const before = h.crm.get(OBJECT, 'c-1')?.[propertyName('household.net_worth')];
    const done = await erasePerson(
      { store: h.bridge.pipelineStore, connectorFor: h.bridge.connectorFor, suppressor },
      { emails: [amanda.email] },
      { blankCrm: false, actor: 'test' },
    );
    expect(done.installations[0]).toMatchObject({ records: 1, blanked: 0, notBlanked: 0 });
    expect(h.crm.get(OBJECT, 'c-1')?.[propertyName('household.net_worth')]).toBe(before);
    expect(await rowsAbout(h, one, 'c-1')).toEqual(NOTHING);
  });

  it("a CRM's privacy deletion suppresses the person for that installation only; a plain deletion does not suppress", async () => {
    const { h, one, two } = await setup();
    await enrich(h, one, 'c-1');
    await h.bridge.pipelineStore.eraseRecord(one.id, OBJECT, 'c-1', { suppress: true });
    expect(await rowsAbout(h, one, 'c-1')).toEqual(NOTHING);
    expect(await enrich(h, one, 'c-recreated')).toBe('skipped:suppressed');
    expect(await enrich(h, two, 'c-in-two')).toBe('enriched');

    await h.bridge.pipelineStore.eraseRecord(two.id, OBJECT, 'c-in-two');
    expect(await enrich(h, two, 'c-in-two-again')).toBe('enriched');
  });
});
