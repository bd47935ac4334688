// The suppression list in the enrichment service, on SQLite and PostgreSQL: a suppressed person is
// answered by none of their identifiers (a normal no-match that costs no quota unit), a household
// suppression covers every member, it holds across a new load and reaches another instance by itself,
// it keeps no identifier in clear, and the sandbox is left alone.
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccount, issueToken } from '../../core/accounts/admin.ts';
import { EnrichService } from '../../core/enrich/service.ts';
import { MemoryRateLimiter } from '../../core/limits/rate-limiter.ts';
import { SecretBox } from '../../core/secrets/secret-box.ts';
import { SnapshotMatcher } from '../../core/snapshot/matching/matcher.ts';
import { loadSnapshot } from '../../core/snapshot/storage/loader.ts';
import { currentPeriod } from '../../core/limits/quota-period.ts';
import { platformHash } from '../../core/suppression/identifiers.ts';
import { importList } from '../../core/suppression/import.ts';
import { resolveInSnapshot } from '../../core/suppression/resolve.ts';
import { SuppressionList } from '../../core/suppression/list.ts';
import { type Suppressor, check, suppress, unsuppress } from '../../core/suppression/operations.ts';
import type { KyselyStore } from '../../core/storage/kysely-store.ts';
import { TEST_DATABASES } from '../support/databases.ts';
import { type TestSnapshots, openTestSnapshots } from '../support/snapshot-storage.ts';
import { household, person, writeSnapshot } from '../support/snapshot-fixture.ts';
import { tempDir } from '../support/harness.ts';
import { until } from '../support/processes.ts';

const ANN = { email: 'ann.lee@example.com', phone: '(404) 555-0101', first: 'Ann', last: 'Lee', address: '1 Elm Street', zipcode: '30301' };

/** Ann and Bob Lee in one household, Cy Park in another. */
function world() {
  const lees = household([{ address: ANN.address, zipcode: ANN.zipcode, city: 'Atlanta', state: 'GA' }]);
  const parks = household([{ address: '9 Oak Avenue', zipcode: '30302', city: 'Atlanta', state: 'GA' }]);
  return {
    lees,
    parks,
    households: [lees, parks],
    people: [
      person('p-ann', ANN.first, ANN.last, lees, { emails: [ANN.email], phones: ['+14045550101'] }),
      person('p-bob', 'Bob', 'Lee', lees, { emails: ['bob.lee@example.com'] }),
      person('p-cy', 'Cy', 'Park', parks, { emails: ['cy.park@example.com'] }),
    ],
  };
}

const opened: { close(): Promise<void> | void }[] = [];
afterEach(async () => {
  for (const item of opened.splice(0).reverse()) await item.close();
});

interface Setup {
  readonly snapshots: TestSnapshots;
  readonly store: KyselyStore;
  readonly box: SecretBox;
  readonly list: SuppressionList;
  readonly service: EnrichService;
  readonly suppressor: Suppressor;
  readonly token: string;
  readonly sandboxToken: string;
  readonly tokenId: string;
  readonly world: ReturnType<typeof world>;
  /** Where the snapshot loaded last lives. */
  location(): string;
  /** Loads a snapshot of `people` and points the service at it. */
  load(version: string, data?: ReturnType<typeof world>): Promise<Awaited<ReturnType<typeof loadSnapshot>>>;
}

async function setup(database: (typeof TEST_DATABASES)[number]): Promise<Setup> {
  const snapshots = await openTestSnapshots(database);
  opened.push(snapshots);
  const { store } = snapshots;
  const box = new SecretBox(randomBytes(32));
  const list = new SuppressionList(store.suppressions, (input) => box.keyedDigest('suppression', input));
  const service = new EnrichService({
    store,
    rateLimiter: new MemoryRateLimiter(),
    productionMatcher: { dataVersion: null, match: () => Promise.reject(new Error('no snapshot')) },
    suppressions: list,
  });
  await createAccount(store, 'acme', { careerIntelligence: true, quotaLimit: 100, rateLimit: 100 });
  const { token, record } = await issueToken(store, 'acme', 'production');
  const { token: sandboxToken } = await issueToken(store, 'acme', 'sandbox');
  let matcher: SnapshotMatcher | null = null;
  let location = '';
  const suppressor: Suppressor = {
    store: store.suppressions,
    list,
    findSubjects: (request) => (matcher === null ? Promise.resolve([]) : matcher.subjectsOf(request)),
  };
  const data = world();
  const load = async (version: string, files = data) => {
    const result = await loadSnapshot(store, snapshots.storage, writeSnapshot(path.join(snapshots.root, `source-${version}`), { version, ...files }), {
      suppressions: list,
    });
    location = snapshots.storage.locationFor(result.id);
    const reader = await snapshots.storage.open(location);
    opened.push(reader);
    matcher = new SnapshotMatcher(reader, version);
    service.productionMatcher = matcher;
    return result;
  };
  return { snapshots, store, box, list, service, suppressor, token, sandboxToken, tokenId: record.id, world: data, load, location: () => location };
}

async function ask(s: Setup, body: Record<string, unknown>, environment: 'production' | 'sandbox' = 'production') {
  const result = await s.service.enrichRecord({ environment, token: environment === 'production' ? s.token : s.sandboxToken, readBody: () => body });
  if (!result.ok) throw new Error(`refused: ${result.error.message}`);
  return result;
}

const byEmail = { emails: [ANN.email] };
const byPhoneAndName = { first_name: ANN.first, last_name: ANN.last, phones: ['404-555-0101'] };
const byNameAndAddress = { first_name: ANN.first, last_name: ANN.last, addresses: [{ address: ANN.address, zipcode: ANN.zipcode }] };
const NO_MATCH = { household_matched: false, career_matched: false, household: null, career: null };

async function quotaUsed(s: Setup): Promise<number> {
  return s.store.quotaUsed(s.tokenId, currentPeriod('month', new Date()).key);
}

describe.each(TEST_DATABASES)('the suppression list on $name', (database) => {
  it('a person suppressed by e-mail is answered by none of their identifiers: not the e-mail, the phone with the name, nor the name at the address', async () => {
    const s = await setup(database);
    await s.load('one');
    for (const body of [byEmail, byPhoneAndName, byNameAndAddress]) expect((await ask(s, body)).response).toMatchObject({ household_matched: true });
    const outcome = await suppress(s.suppressor, { emails: [ANN.email] }, { household: false, actor: 'test' });
    expect(outcome).toEqual({ added: 2, people: 1, households: 1 });
    for (const body of [byEmail, byPhoneAndName, byNameAndAddress]) expect((await ask(s, body)).response).toEqual(NO_MATCH);
    // Bob, in the same household, is still answered: a person's suppression is theirs alone.
    expect((await ask(s, { emails: ['bob.lee@example.com'] })).response).toMatchObject({ household_matched: true });
  });

  it('a suppressed answer costs the customer no quota unit', async () => {
    const s = await setup(database);
    await s.load('one');
    await suppress(s.suppressor, { phones: [ANN.phone] }, { household: false, actor: 'test' });
    const before = await quotaUsed(s);
    // Named by the listed phone (refused before the quota), and by the name at the address (matched, then given back).
    for (const body of [byPhoneAndName, byNameAndAddress, byEmail]) {
      const result = await ask(s, body);
      expect(result.response).toEqual(NO_MATCH);
      expect(result.quota?.remaining).toBe(100 - before);
    }
    expect(await quotaUsed(s)).toBe(before);
    await ask(s, { emails: ['cy.park@example.com'] });
    expect(await quotaUsed(s)).toBe(before + 1);
  });

  it('a household suppression stops answers about every member of it', async () => {
    const s = await setup(database);
    await s.load('one');
    await suppress(
      s.suppressor,
      { nameAddress: { firstName: ANN.first, lastName: ANN.last, address: { address: ANN.address, zipcode: ANN.zipcode } } },
      { household: true, actor: 'test' },
    );
    for (const body of [
      byEmail,
      byNameAndAddress,
      { emails: ['bob.lee@example.com'] },
      { first_name: 'Bob', last_name: 'Lee', addresses: [{ address: ANN.address, zipcode: ANN.zipcode }] },
    ]) {
      expect((await ask(s, body)).response).toEqual(NO_MATCH);
    }
    expect((await ask(s, { emails: ['cy.park@example.com'] })).response).toMatchObject({ household_matched: true });
  });

  it('survives a new load: the person is left out of the new snapshot and still never answered', async () => {
    const s = await setup(database);
    // Listed before any snapshot named them: only the identifier is known.
    await suppress(s.suppressor, { emails: [ANN.email] }, { household: false, actor: 'test' });
    const result = await s.load('two');
    expect(result.suppressed).toEqual({ people: 1, households: 0 });
    expect(result.people).toBe(2);
    // The load found her id: answers found through her other identifiers are refused as well.
    expect(await s.store.suppressions.find([{ kind: 'person', value: 'p-ann' }])).toHaveLength(1);
    for (const body of [byEmail, byPhoneAndName, byNameAndAddress]) expect((await ask(s, body)).response).toEqual(NO_MATCH);
    const three = await s.load('three');
    expect(three.suppressed.people).toBe(1);
    expect((await ask(s, byNameAndAddress)).response).toEqual(NO_MATCH);
  });

  it('a household an erased member left is not answered for a given name no member has; another household still is', async () => {
    const s = await setup(database);
    await suppress(s.suppressor, { emails: [ANN.email] }, { household: false, actor: 'test' });
    await s.load('two');
    // Ann's own name at her home reads as a member the data does not know: refused, as is any such name there.
    expect((await ask(s, byNameAndAddress)).response).toEqual(NO_MATCH);
    expect((await ask(s, { first_name: 'Dana', last_name: 'Lee', addresses: [{ address: ANN.address, zipcode: ANN.zipcode }] })).response).toEqual(NO_MATCH);
    // Bob, who stays, is answered; and at a household no erased member left, an unknown given name
    // with its surname at its address is answered as the household (never as a person).
    expect((await ask(s, { first_name: 'Bob', last_name: 'Lee', addresses: [{ address: ANN.address, zipcode: ANN.zipcode }] })).response).toMatchObject({
      household_matched: true,
    });
    const stranger = await ask(s, { first_name: 'Dee', last_name: 'Park', addresses: [{ address: '9 Oak Avenue', zipcode: '30302' }] });
    expect(stranger.response).toMatchObject({ household_matched: true, career_matched: false, career: null });
  });

  it('reaches another instance by itself within its poll', async () => {
    const s = await setup(database);
    await s.load('one');
    // Another instance's copy of the list, on its own connection to the same database.
    const other = new SuppressionList(s.store.suppressions, (input) => s.box.keyedDigest('suppression', input));
    await other.refresh();
    other.start(100);
    opened.push({ close: () => other.stop() });
    expect(other.requestSuppressed(byEmail)).toBe(false);
    await suppress(s.suppressor, { emails: [ANN.email] }, { household: false, actor: 'test' });
    await until('the other instance to see the entry', () => (other.requestSuppressed(byEmail) ? true : undefined), { timeoutMs: 10_000 });
    expect(other.subjectSuppressed({ person: 'p-ann', household: null })).toBe(true);
  });

  it('stores no identifier in clear: keyed hashes and snapshot ids only, and an audit trail without values', async () => {
    const s = await setup(database);
    await s.load('one');
    await suppress(
      s.suppressor,
      {
        emails: [ANN.email],
        phones: [ANN.phone],
        nameAddress: { firstName: ANN.first, lastName: ANN.last, address: { address: ANN.address, zipcode: ANN.zipcode } },
      },
      { household: true, actor: 'ops@example.org' },
    );
    const rows = JSON.stringify(await s.store.suppressions.all()) + JSON.stringify(await s.store.suppressions.audit());
    for (const clear of [ANN.email, 'ann.lee', '4045550101', 'elm', 'Lee|', platformHash(ANN.email)])
      expect(rows.toLowerCase()).not.toContain(clear.toLowerCase());
    // The same e-mail under another server key is another entry: a list copied elsewhere is no dictionary.
    const elsewhere = new SecretBox(randomBytes(32)).keyedDigest('suppression', `email:${platformHash(ANN.email)}`);
    expect(rows).not.toContain(elsewhere);
    expect(await s.store.suppressions.audit()).toEqual([
      expect.objectContaining({ actor: 'ops@example.org', action: 'add', entries: expect.any(Number), note: null }),
    ]);
    if (database.name === 'SQLite') {
      const folder = path.dirname(s.snapshots.location);
      const bytes = readdirSync(folder)
        .filter((name) => name.startsWith('eb.db'))
        .map((name) => readFileSync(path.join(folder, name)).toString('latin1'))
        .join('');
      expect(bytes).not.toContain(ANN.email);
    }
  });

  it('an imported list of hashed e-mails, as a deletion platform sends it, is refused by that e-mail, and found by the next load', async () => {
    const s = await setup(database);
    await s.load('one');
    const file = path.join(tempDir(), 'drop-email.csv');
    writeFileSync(
      file,
      `ID,Hash\nwi-1,${platformHash(ANN.email)}\nwi-2,not-a-hash\nwi-3,${Buffer.from(platformHash('nobody@example.com'), 'base64').toString('hex')}\n`,
    );
    const progress: number[] = [];
    const result = await importList(s.suppressor, file, { hashed: 'email', household: false, actor: 'test', onProgress: (p) => progress.push(p.lines) });
    expect(result).toMatchObject({ lines: 3, added: 2, bad: 1, badLines: ['line 3: no SHA-256 hash (44 characters of Base64, or 64 hex digits)'] });
    expect(progress.at(-1)).toBe(3);
    expect((await ask(s, byEmail)).response).toEqual(NO_MATCH);
    // Her other identifiers lead to her from the next load on, which finds her by the hash.
    const next = await s.load('two');
    expect(next.suppressed.people).toBe(1);
    expect((await ask(s, byPhoneAndName)).response).toEqual(NO_MATCH);
  });

  it("a hashed list's people are found in the active snapshot by reading it through: their other identifiers stop leading to them at once", async () => {
    const s = await setup(database);
    await s.load('one');
    const file = path.join(tempDir(), 'drop-phone.csv');
    // Ann's phone, as DROP sends it (its last ten digits, hashed), with her whole household asked for.
    writeFileSync(file, `ID,Hash,household\nwi-1,${platformHash('4045550101')},yes\n`);
    await importList(s.suppressor, file, { hashed: 'phone', household: false, actor: 'test' });
    expect((await ask(s, byEmail)).response).toMatchObject({ household_matched: true });
    const progress: number[] = [];
    const resolved = await resolveInSnapshot(
      s.store.suppressions,
      s.list,
      { storage: s.snapshots.storage, location: s.location(), version: 'one' },
      {
        actor: 'test',
        onProgress: (p) => progress.push(p.people),
      },
    );
    expect(resolved).toEqual({ people: 1, added: 2 });
    expect(progress.at(-1)).toBe(3);
    // Her e-mail, and Bob's (the household was asked for), no longer lead anywhere.
    for (const body of [byEmail, byNameAndAddress, { emails: ['bob.lee@example.com'] }]) expect((await ask(s, body)).response).toEqual(NO_MATCH);
    expect((await ask(s, { emails: ['cy.park@example.com'] })).response).toMatchObject({ household_matched: true });
    // A second scan finds her again and adds nothing.
    expect(
      await resolveInSnapshot(s.store.suppressions, s.list, { storage: s.snapshots.storage, location: s.location(), version: 'one' }, { actor: 'test' }),
    ).toEqual({
      people: 1,
      added: 0,
    });
  });

  it('an imported list in clear (CSV and JSON Lines) suppresses each line, naming bad lines by number only', async () => {
    const s = await setup(database);
    await s.load('one');
    const csv = path.join(tempDir(), 'people.csv');
    writeFileSync(csv, `email,phone,first_name,last_name,address,zipcode,household\n,,Cy,Park,9 Oak Avenue,30302,yes\n,,,,secret@nowhere,,\n`);
    const fromCsv = await importList(s.suppressor, csv, { household: false, actor: 'test' });
    expect(fromCsv).toMatchObject({ lines: 2, people: 1, bad: 1, badLines: ['line 3: no e-mail, phone, or last name with street address and ZIP code'] });
    expect((await ask(s, { emails: ['cy.park@example.com'] })).response).toEqual(NO_MATCH);
    const jsonl = path.join(tempDir(), 'people.jsonl');
    writeFileSync(jsonl, `${JSON.stringify({ email: ANN.email })}\n{broken\n`);
    const fromJsonl = await importList(s.suppressor, jsonl, { household: false, actor: 'test' });
    expect(fromJsonl).toMatchObject({ lines: 2, people: 1, bad: 1, badLines: ['line 2: not JSON'] });
    expect((await ask(s, byNameAndAddress)).response).toEqual(NO_MATCH);
    expect((await s.store.suppressions.audit()).map((a) => a.action)).toEqual(['import', 'import']);
  });

  it("an operator's removal answers about the person again, and is in the audit trail", async () => {
    const s = await setup(database);
    await s.load('one');
    await suppress(s.suppressor, { emails: [ANN.email] }, { household: false, actor: 'test' });
    expect(await check(s.suppressor, { phones: [ANN.phone] })).toMatchObject({ byIdentifier: false, bySubject: true });
    expect(await unsuppress(s.suppressor, { emails: [ANN.email] }, { household: false, actor: 'ops' })).toEqual({ removed: 2 });
    expect((await ask(s, byEmail)).response).toMatchObject({ household_matched: true });
    expect(await check(s.suppressor, { emails: [ANN.email] })).toMatchObject({ byIdentifier: false, bySubject: false });
    expect((await s.store.suppressions.audit()).map((a) => [a.action, a.actor, a.entries])).toEqual([
      ['remove', 'ops', 2],
      ['add', 'test', 2],
    ]);
  });

  it('leaves the sandbox alone: its personas are fictitious', async () => {
    const s = await setup(database);
    await s.load('one');
    const persona = { emails: ['john.smith@example.com'] };
    const before = (await ask(s, persona, 'sandbox')).response;
    await suppress(s.suppressor, { emails: ['john.smith@example.com'] }, { household: true, actor: 'test' });
    expect((await ask(s, persona, 'sandbox')).response).toEqual(before);
  });
});
