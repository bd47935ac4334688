// Production matching rules over a real loaded snapshot: each way a household or career is found,
// ambiguity, conflicting evidence, nicknames and typos, and the confidence rules. Every rule runs on a
// SQLite snapshot file and, when the run has PostgreSQL, on a snapshot schema read a round at a time.
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EnrichmentRequest } from '../../core/contract/schemas.ts';
import { loadSnapshot } from '../../core/snapshot/storage/loader.ts';
import Database from '../../core/storage/better-sqlite3.ts';
import { isPostgresUrl } from '../../core/storage/postgres.ts';
import { BASE_CONFIDENCE, CONFLICT_PENALTY, HOUSEHOLD_MEMBER_PENALTY, SnapshotMatcher } from '../../core/snapshot/matching/matcher.ts';
import { ERASURES_RECORDED } from '../../core/snapshot/matching/block-keys.ts';
import { type LinkageReader, blockedCandidates, exactCandidates, linkageQuery } from '../../core/snapshot/matching/linkage.ts';
import { TEST_DATABASES } from '../support/databases.ts';
import { type TestSnapshots, openTestSnapshots } from '../support/snapshot-storage.ts';
import { career, household, person, writeSnapshot } from '../support/snapshot-fixture.ts';

const smiths = household([{ address: '1200 North Main Street Apt 4', city: 'Atlanta', state: 'GA', zipcode: '30301' }], { net_worth: 1_200_000 });
const joneses = household([{ address: '1200 N Main St Apt 7', city: 'Atlanta', state: 'GA', zipcode: '30301' }], { net_worth: 300_000 });
const bostonSmith = household([{ address: '45 Beacon Street', city: 'Boston', state: 'MA', zipcode: '02108' }], { net_worth: 9_000_000 });
const browns = household([{ address: '100 King St W', city: 'Toronto', state: 'ON', zipcode: 'M5V 3L9' }]);
const quartermaines = household([{ address: '77 Larimer Street', city: 'Denver', state: 'CO', zipcode: '80202' }]);
const lees = household([{ address: '9 Elm Court', city: 'Austin', state: 'TX', zipcode: '78701' }]);
// Issue 15: a household for typo-tolerant linkage, and a neighbour on its street with another surname.
const stephensons = household([{ address: '310 Ridgewood Avenue', city: 'Springfield', state: 'IL', zipcode: '62704' }], { net_worth: 2_500_000 });
const okafors = household([{ address: '316 Ridgewood Avenue', city: 'Springfield', state: 'IL', zipcode: '62704' }]);
// A common name in the Stephensons' postal code: Maria Garcia on their street, and 40 more Garcia
// households around (a crowd past any fitted limit; BLOCK_LIMIT is 200).
const garcias = household([{ address: '330 Ridgewood Avenue', city: 'Springfield', state: 'IL', zipcode: '62704' }]);
const otherGarcias = Array.from({ length: 40 }, (_, i) =>
  household([{ address: `${100 + i * 4} Lakeview Drive`, city: 'Springfield', state: 'IL', zipcode: '62704' }]),
);
// Flatmates: one household of two surnames.
const flatmates = household([{ address: '42 Orchard Lane', city: 'Springfield', state: 'IL', zipcode: '62704' }]);
// Two apartments of one building, each with an Ana Lopez.
const lopezes2 = household([{ address: '500 Harbor Way Apt 2', city: 'Springfield', state: 'IL', zipcode: '62704' }]);
const lopezes5 = household([{ address: '500 Harbor Way Apt 5', city: 'Springfield', state: 'IL', zipcode: '62704' }]);
const LANDLINE = '(404) 555-0101';

const people = [
  person('john-atl', 'John', 'Smith', smiths, {
    emails: ['john.smith@example.com'],
    phones: [LANDLINE, '404-555-0199'],
    career: career({ company_name: 'Acme Corp', linkedin_url: 'linkedin.com/in/john-smith-atl', job_title: 'Controller' }),
  }),
  person('mary-atl', 'Mary', 'Smith', smiths, {
    emails: ['mary.smith@example.com'],
    phones: [LANDLINE],
    career: career({ company_name: 'Peachtree Health', linkedin_url: 'linkedin.com/in/mary-smith-atl', job_title: 'Nurse Manager' }),
  }),
  person('robert-atl', 'Robert', 'Jones', joneses, { phones: ['4045550177'], emails: ['rj@example.com'] }),
  person('john-bos', 'John', 'Smith', bostonSmith, {
    emails: ['jsmith@globex.example'],
    phones: ['6175550123'],
    career: career({ company_name: 'Globex, Inc.', linkedin_url: 'linkedin.com/in/john-smith-bos', job_title: 'VP Sales' }),
  }),
  person('liz-tor', 'Elizabeth', 'Brown', browns, { phones: ['+1 416 555 0150'] }),
  person('jane-roe', 'Jane', 'Roe', null, {
    emails: ['jane.roe@example.com'],
    career: career({ company_name: 'Initech', linkedin_url: 'linkedin.com/in/jane-roe' }),
  }),
  person('zeb-den', 'Zebulon', 'Quartermaine', quartermaines, { emails: ['zq@example.com'] }),
  person('chris-1', 'Christopher', 'Lee', lees, { career: career({ linkedin_url: 'linkedin.com/in/christopher-lee' }) }),
  person('chris-2', 'Christina', 'Lee', lees, { career: career({ linkedin_url: 'linkedin.com/in/christina-lee' }) }),
  person('pat-lee', 'Pat', 'Lee', lees, { emails: ['pat.lee@example.com'], career: career({ linkedin_url: 'linkedin.com/in/pat-lee' }) }),
  person('meredith-stephenson', 'Meredith', 'Stephenson', stephensons, { career: career({ linkedin_url: 'linkedin.com/in/meredith-stephenson' }) }),
  person('gordon-stephenson', 'Gordon', 'Stephenson', stephensons),
  person('adaeze-okafor', 'Adaeze', 'Okafor', okafors),
  person('maria-garcia', 'Maria', 'Garcia', garcias),
  person('priya-raman', 'Priya', 'Raman', flatmates),
  person('tom-becker', 'Tom', 'Becker', flatmates),
  person('ana-lopez-2', 'Ana', 'Lopez', lopezes2),
  person('ana-lopez-5', 'Ana', 'Lopez', lopezes5),
  ...otherGarcias.map((home, i) => person(`garcia-${i}`, ['Jose', 'Ana', 'Luis', 'Rosa'][i % 4] ?? 'Jose', 'Garcia', home)),
];

for (const database of TEST_DATABASES) {
  describe(`Matching on a snapshot in ${database.name}`, () => {
    let matcher: SnapshotMatcher;
    let snapshots: TestSnapshots;
    let location: string;
    let source: string;

    beforeAll(async () => {
      snapshots = await openTestSnapshots(database);
      source = writeSnapshot(path.join(snapshots.root, 'source'), {
        version: 'match-test',
        households: [smiths, joneses, bostonSmith, browns, quartermaines, lees, stephensons, okafors, garcias, flatmates, lopezes2, lopezes5, ...otherGarcias],
        people,
      });
      const result = await loadSnapshot(snapshots.store, snapshots.storage, source);
      location = snapshots.storage.locationFor(result.id);
      matcher = new SnapshotMatcher(await snapshots.storage.open(location), result.version);
    });
    afterAll(() => snapshots.close());

    const match = (request: EnrichmentRequest, careerIntelligence = true) => matcher.match(request, { career: careerIntelligence });

    /** Runs a statement on a loaded snapshot's own tables (`S.` names them), as an older load would have left them. */
    const onSnapshot = async (snapshotLocation: string, statement: string): Promise<void> => {
      if (isPostgresUrl(snapshots.location)) {
        const client = new pg.Client({ connectionString: snapshots.location });
        await client.connect();
        try {
          await client.query(statement.replace(/\bS\./g, `"${snapshotLocation}".`));
        } finally {
          await client.end();
        }
      } else {
        const db = new Database(path.join(snapshots.root, snapshotLocation));
        db.exec(statement.replace(/\bS\./g, ''));
        db.close();
      }
    };

    describe('Matching: household through the person found by e-mail', () => {
      it('finds the household and career of the e-mail owner', async () => {
        const result = await match({ emails: ['  John.Smith@EXAMPLE.com '] });
        expect(result.household?.windfall_id).toBe(smiths.windfall_id);
        expect(result.household?.confidence).toBe(BASE_CONFIDENCE.email);
        expect(result.career?.linkedin_url).toBe('linkedin.com/in/john-smith-atl');
      });

      it('returns career only for a person without a household', async () => {
        const result = await match({ emails: ['jane.roe@example.com'] });
        expect(result.household).toBeNull();
        expect(result.career?.company_name).toBe('Initech');
      });

      it('returns no career without Career Intelligence', async () => {
        expect((await match({ emails: ['john.smith@example.com'] }, false)).career).toBeNull();
      });
    });

    describe('Matching: phone and name', () => {
      it('tells apart household members who share a landline by the name (JOHN Q. SMITH, (404) 555-0101)', async () => {
        const result = await match({ first_name: 'JOHN Q.', last_name: 'SMITH', phones: ['404.555.0101'] });
        expect(result.career?.linkedin_url).toBe('linkedin.com/in/john-smith-atl');
        expect((await match({ first_name: 'mary', last_name: 'smith', phones: [LANDLINE] })).career?.linkedin_url).toBe('linkedin.com/in/mary-smith-atl');
      });

      it('takes a nickname for the given name (Bob for Robert)', async () => {
        expect((await match({ first_name: 'Bob', last_name: 'Jones', phones: ['+1 (404) 555-0177'] })).household?.windfall_id).toBe(joneses.windfall_id);
      });

      it('tolerates one typo in a name when the phone agrees (Jhon Smith)', async () => {
        expect((await match({ first_name: 'Jhon', last_name: 'Smith', phones: [LANDLINE] })).career?.linkedin_url).toBe('linkedin.com/in/john-smith-atl');
      });

      it('does not take one letter changed in a short given name for a typo (Mark is not Mary)', async () => {
        expect(await match({ first_name: 'Mark', last_name: 'Smith', phones: [LANDLINE] })).toEqual({ household: null, career: null });
      });

      it('reads a generational suffix in the surname field (Smith Jr.)', async () => {
        expect((await match({ first_name: 'John', last_name: 'Smith Jr.', phones: [LANDLINE] })).career?.linkedin_url).toBe('linkedin.com/in/john-smith-atl');
      });

      it('does not match a phone without a name, or with another name', async () => {
        expect((await match({ phones: ['6175550123'] })).household).toBeNull();
        expect((await match({ first_name: 'Wanda', last_name: 'Nobody', phones: ['6175550123'] })).household).toBeNull();
      });
    });

    describe('Matching: household through the address (number + street + zip)', () => {
      it('reads street suffix, directional, unit and zip+4 variants as one address', async () => {
        const result = await match({ first_name: 'John', last_name: 'Smith', addresses: [{ address: '1200 N. Main St., Apt 4', zipcode: '30301-1234' }] });
        expect(result.household?.windfall_id).toBe(smiths.windfall_id);
        expect(result.career?.linkedin_url).toBe('linkedin.com/in/john-smith-atl');
      });

      it('lets the unit decide between households in one building', async () => {
        expect((await match({ addresses: [{ address: '1200 North Main Street #7', zipcode: '30301' }] })).household?.windfall_id).toBe(joneses.windfall_id);
      });

      it('does not give an apartment we do not know the household of another apartment in the building', async () => {
        expect((await match({ addresses: [{ address: '1200 North Main Street Apt 9', zipcode: '30301' }] })).household).toBeNull();
      });

      it('does not guess between households in one building when neither unit nor name says which', async () => {
        expect((await match({ addresses: [{ address: '1200 North Main Street', zipcode: '30301' }] })).household).toBeNull();
      });

      it("does not guess between two households of one building that each have a person of the record's name, the unit left out", async () => {
        const at = (address: string) => [{ address, city: 'Springfield', state: 'IL', zipcode: '62704' }];
        expect((await match({ first_name: 'Ana', last_name: 'Lopez', addresses: at('500 Harbor Way') })).household).toBeNull();
        // The unit says which.
        expect((await match({ first_name: 'Ana', last_name: 'Lopez', addresses: at('500 Harbor Way Apt 5') })).household?.windfall_id).toBe(
          lopezes5.windfall_id,
        );
      });

      it('lets the name decide between households in one building', async () => {
        expect((await match({ last_name: 'Robert Jones', addresses: [{ address: '1200 North Main Street', zipcode: '30301' }] })).household?.windfall_id).toBe(
          joneses.windfall_id,
        );
      });

      it('does not give a new resident the household known at the address', async () => {
        expect((await match({ first_name: 'Wanda', last_name: 'Newcomer', addresses: [{ address: '45 Beacon St', zipcode: '02108' }] })).household).toBeNull();
      });

      it('matches a Canadian address by postal code, state inferred when omitted', async () => {
        expect((await match({ addresses: [{ address: '100 King Street West', zipcode: 'm5v3l9' }] })).household?.windfall_id).toBe(browns.windfall_id);
      });

      it('does not match a street without a zipcode', async () => {
        expect((await match({ addresses: [{ address: '45 Beacon Street', city: 'Boston', state: 'MA' }] })).household).toBeNull();
      });
    });

    describe('Matching: name alone matches only with unambiguous evidence', () => {
      it('never matches a bare name, even a unique one', async () => {
        expect((await match({ first_name: 'Zebulon', last_name: 'Quartermaine' })).household).toBeNull();
        expect((await match({ first_name: 'John', last_name: 'Smith' })).household).toBeNull();
      });

      it('matches a name with a place when exactly one person fits', async () => {
        const result = await match({ first_name: 'Zebulon', last_name: 'Quartermaine', addresses: [{ city: 'Denver', state: 'Colorado' }] });
        expect(result.household?.windfall_id).toBe(quartermaines.windfall_id);
        // The name and the place are the evidence itself: nothing further agrees, so the base stands.
        expect(result.household?.confidence).toBe(BASE_CONFIDENCE.name_and_place);
      });

      it('lets company_name decide between people who share a name', async () => {
        const result = await match({ first_name: 'John', last_name: 'Smith', company_name: 'GLOBEX INC' });
        expect(result.career?.linkedin_url).toBe('linkedin.com/in/john-smith-bos');
        expect(result.household?.windfall_id).toBe(bostonSmith.windfall_id);
      });
    });

    describe('Matching: conflicting evidence', () => {
      it("keeps the e-mail owner's household when the address is another household's, with lower confidence", async () => {
        const agreeing = await match({ emails: ['john.smith@example.com'], addresses: [{ address: '1200 North Main Street Apt 4', zipcode: '30301' }] });
        const conflicting = await match({ emails: ['john.smith@example.com'], addresses: [{ address: '45 Beacon Street', zipcode: '02108' }] });
        expect(conflicting.household?.windfall_id).toBe(smiths.windfall_id);
        expect(conflicting.household?.confidence).toBeCloseTo(BASE_CONFIDENCE.email - CONFLICT_PENALTY, 5);
        expect(agreeing.household?.confidence).toBeGreaterThan(conflicting.household?.confidence ?? 1);
      });

      it("gives the career of the household member who carries the name, not the e-mail owner's", async () => {
        const result = await match({ first_name: 'Mary', last_name: 'Smith', emails: ['john.smith@example.com'] });
        expect(result.household?.windfall_id).toBe(smiths.windfall_id);
        expect(result.household?.confidence).toBe(BASE_CONFIDENCE.email + 0.03); // the name agrees with a member
        expect(result.career?.linkedin_url).toBe('linkedin.com/in/mary-smith-atl');
        expect(result.career?.confidence).toBeCloseTo(BASE_CONFIDENCE.email + 0.03 - HOUSEHOLD_MEMBER_PENALTY, 5);
      });

      it("returns no career when the surname agrees but no member has the given name (Paul Smith on John's e-mail)", async () => {
        const result = await match({ first_name: 'Paul', last_name: 'Smith', emails: ['john.smith@example.com'] });
        expect(result.household?.windfall_id).toBe(smiths.windfall_id);
        expect(result.career).toBeNull();
      });

      it('returns the household but no career when several members carry the name (Chris Lee)', async () => {
        const result = await match({ first_name: 'Chris', last_name: 'Lee', emails: ['pat.lee@example.com'] });
        expect(result.household?.windfall_id).toBe(lees.windfall_id);
        expect(result.career).toBeNull();
      });

      it('prefers the address and name rules over an e-mail whose owner carries none of the name', async () => {
        const result = await match({
          first_name: 'Zebulon',
          last_name: 'Quartermaine',
          emails: ['jane.roe@example.com'],
          addresses: [{ address: '77 Larimer St', zipcode: '80202' }],
        });
        expect(result.household?.windfall_id).toBe(quartermaines.windfall_id);
      });

      it("returns no career, and a less sure household, when no one in the e-mail owner's household has the name", async () => {
        const result = await match({ first_name: 'Wanda', last_name: 'Other', emails: ['john.smith@example.com'] });
        expect(result.household?.windfall_id).toBe(smiths.windfall_id);
        expect(result.household?.confidence).toBeCloseTo(BASE_CONFIDENCE.email - CONFLICT_PENALTY, 5);
        expect(result.career).toBeNull();
      });
    });

    describe('Matching: records with a data-entry error (issue 15)', () => {
      const at = (address: string, zipcode = '62704', city = 'Springfield') => [{ address, city, state: 'IL', zipcode }];
      const expectStephensons = async (request: EnrichmentRequest) => {
        const result = await match(request);
        expect(result.household?.windfall_id).toBe(stephensons.windfall_id);
        return result;
      };

      it('finds the household through a one-letter typo in the street name (Ridgewod)', async () => {
        await expectStephensons({ first_name: 'Meredith', last_name: 'Stephenson', addresses: at('310 Ridgewod Avenue') });
      });

      it('finds the household through a misspelled street suffix (Avenu)', async () => {
        await expectStephensons({ first_name: 'Meredith', last_name: 'Stephenson', addresses: at('310 Ridgewood Avenu') });
      });

      it('finds the household through a wrong house number on the right street', async () => {
        await expectStephensons({ first_name: 'Meredith', last_name: 'Stephenson', addresses: at('312 Ridgewood Avenue') });
      });

      it('finds the household through a wrong postcode when street, number and city are right', async () => {
        await expectStephensons({ first_name: 'Meredith', last_name: 'Stephenson', addresses: at('310 Ridgewood Avenue', '62702') });
      });

      it('finds the household and the person with given name and surname swapped', async () => {
        const result = await expectStephensons({ first_name: 'Stephenson', last_name: 'Meredith', addresses: at('310 Ridgewood Avenue') });
        expect(result.career?.linkedin_url).toBe('linkedin.com/in/meredith-stephenson');
      });

      it('finds the household through a one-edit surname typo (Stepehnson) and a sound-alike (Stevenson)', async () => {
        await expectStephensons({ first_name: 'Meredith', last_name: 'Stepehnson', addresses: at('310 Ridgewood Avenue') });
        await expectStephensons({ first_name: 'Meredith', last_name: 'Stevenson', addresses: at('310 Ridgewood Avenue') });
      });

      it('finds the person through a misspelled given name (Merdith)', async () => {
        const result = await expectStephensons({ first_name: 'Merdith', last_name: 'Stephenson', addresses: at('310 Ridgewood Avenue') });
        expect(result.career?.linkedin_url).toBe('linkedin.com/in/meredith-stephenson');
      });

      it('answers a record with one error less surely than the same record without it, and an exact one at 0.99 or more', async () => {
        const exact = await expectStephensons({ first_name: 'Meredith', last_name: 'Stephenson', addresses: at('310 Ridgewood Avenue') });
        const typo = await expectStephensons({ first_name: 'Meredith', last_name: 'Stephenson', addresses: at('312 Ridgewood Avenue') });
        expect(exact.household?.confidence).toBeGreaterThanOrEqual(0.99);
        expect(typo.household?.confidence).toBeLessThanOrEqual(exact.household?.confidence ?? 0);
        expect(typo.household?.confidence).toBeGreaterThanOrEqual(0.5);
      });

      it('takes a house number one digit slipped for a mistyped one, whether a digit is changed, added, dropped or swapped', async () => {
        for (const number of ['311', '3100', '30', '301'])
          await expectStephensons({ first_name: 'Meredith', last_name: 'Stephenson', addresses: at(`${number} Ridgewood Avenue`) });
        // The same for a common name: one slipped digit is seldom a namesake.
        for (const number of ['331', '3300', '30', '303']) {
          expect((await match({ first_name: 'Maria', last_name: 'Garcia', addresses: at(`${number} Ridgewood Avenue`) })).household?.windfall_id).toBe(
            garcias.windfall_id,
          );
        }
      });

      it('takes a far-off house number on the street for a mistyped one for a rare name, not for a common one, whose namesake down the street is as likely', async () => {
        await expectStephensons({ first_name: 'Meredith', last_name: 'Stephenson', addresses: at('388 Ridgewood Avenue') });
        expect((await match({ first_name: 'Maria', last_name: 'Garcia', addresses: at('866 Ridgewood Avenue') })).household).toBeNull();
        // The exact address still answers, however common the name.
        expect((await match({ first_name: 'Maria', last_name: 'Garcia', addresses: at('330 Ridgewood Avenue') })).household?.windfall_id).toBe(
          garcias.windfall_id,
        );
      });

      it('refuses the household when the supplied surname contradicts every member, at the exact address', async () => {
        expect((await match({ first_name: 'Meredith', last_name: 'Okafor', addresses: at('310 Ridgewood Avenue') })).household).toBeNull();
      });

      it('refuses an address-only answer when a lone surname contradicts every member', async () => {
        expect((await match({ last_name: 'Quartermaine', addresses: at('310 Ridgewood Avenue') })).household).toBeNull();
        // The same lone surname that agrees is the household's.
        await expectStephensons({ last_name: 'Stephenson', addresses: at('310 Ridgewood Avenue') });
      });

      it('refuses an address-only answer when a lone given name contradicts every member', async () => {
        expect((await match({ first_name: 'Zebulon', addresses: at('310 Ridgewood Avenue') })).household).toBeNull();
        await expectStephensons({ first_name: 'Gordon', addresses: at('310 Ridgewood Avenue') });
      });

      it('tells neighbours on one street apart by the name when the house number is wrong', async () => {
        // 316 is the Okafors': a Stephenson there is not theirs, and the street's Stephensons are found instead.
        await expectStephensons({ first_name: 'Meredith', last_name: 'Stephenson', addresses: at('316 Ridgewood Avenue') });
        expect((await match({ first_name: 'Adaeze', last_name: 'Okafor', addresses: at('310 Ridgewood Avenue') })).household?.windfall_id).toBe(
          okafors.windfall_id,
        );
      });

      it('opens a snapshot loaded before blocking keys existed, and answers it through the exact address only', async () => {
        const older = await loadSnapshot(snapshots.store, snapshots.storage, source);
        const olderLocation = snapshots.storage.locationFor(older.id);
        // What a load of the previous version left: everything but the blocks table.
        await onSnapshot(olderLocation, 'DROP TABLE S.blocks');
        const olderMatcher = new SnapshotMatcher(await snapshots.storage.open(olderLocation), older.version);
        const exact = await olderMatcher.match({ first_name: 'Meredith', last_name: 'Stephenson', addresses: at('310 Ridgewood Avenue') }, { career: true });
        expect(exact.household?.windfall_id).toBe(stephensons.windfall_id);
        expect(
          (await olderMatcher.match({ first_name: 'Meredith', last_name: 'Stephenson', addresses: at('310 Ridgewod Avenue') }, { career: true })).household,
        ).toBeNull();
      });

      it('still never matches a name alone, however rare', async () => {
        expect((await match({ first_name: 'Meredith', last_name: 'Stephenson' })).household).toBeNull();
      });
    });

    describe('Matching: records with two data-entry errors', () => {
      // Each field of the Stephensons' record replaced so that every blocking key built from it changes
      // (a surname of another sound, a street of another core, another city and postal code).
      const RIGHT = { given: 'Meredith', surname: 'Stephenson', number: '310', street: 'Ridgewood Avenue', city: 'Springfield', postal: '62704' };
      const WRONG = { given: 'Gwendolyn', surname: 'Tephenson', number: '854', street: 'Lakeview Drive', city: 'Springdale', postal: '62711' };
      type Part = keyof typeof RIGHT;
      const at = (address: string) => [{ address, city: 'Springfield', state: 'IL', zipcode: '62704' }];
      const PARTS = Object.keys(RIGHT) as Part[];
      const recordWith = (wrong: readonly Part[]): EnrichmentRequest => {
        const value = (part: Part) => (wrong.includes(part) ? WRONG : RIGHT)[part];
        return {
          first_name: value('given'),
          last_name: value('surname'),
          addresses: [{ address: `${value('number')} ${value('street')}`, city: value('city'), state: 'IL', zipcode: value('postal') }],
        };
      };

      /** The windfall ids of the households linkage would compare the record with, read as the matcher reads (a round at a time on PostgreSQL). */
      const candidatesOf = async (request: EnrichmentRequest): Promise<Set<string>> => {
        const query = linkageQuery(request);
        if (query === null) throw new Error('the record has no name or no street address');
        const opened = await snapshots.storage.open(location);
        try {
          const source = opened.kind === 'immediate' ? opened.reader : opened.requestReader();
          const fetching = 'lacking' in source ? source : null;
          const reader: LinkageReader = Object.assign(source, { pending: () => false });
          for (let round = 0; round < 8; round += 1) {
            const hhs = [...exactCandidates(reader, query), ...blockedCandidates(reader, query)];
            const ids = hhs.map((hh) => reader.household(hh)?.windfall_id ?? '');
            if (fetching?.lacking() === true) {
              await fetching.fetchLacking();
              continue;
            }
            return new Set(ids);
          }
          throw new Error('the reader kept lacking rows');
        } finally {
          opened.close();
        }
      };

      it('answers the household, not the person, for a given name no member has at the address with the surname (another member of the household)', async () => {
        const result = await match({ first_name: 'Gwendolyn', last_name: 'Stephenson', addresses: at('310 Ridgewood Avenue') });
        expect(result.household?.windfall_id).toBe(stephensons.windfall_id);
        expect(result.career).toBeNull();
        // No person: the career stays unanswered, and the household's member's own record still finds her.
        const member = await match({ first_name: 'Meredith', last_name: 'Stephenson', addresses: at('310 Ridgewood Avenue') });
        expect(member.career?.linkedin_url).toBe('linkedin.com/in/meredith-stephenson');
        // A different surname at the address is still someone else.
        expect((await match({ first_name: 'Gwendolyn', last_name: 'Okafor', addresses: at('310 Ridgewood Avenue') })).household).toBeNull();
      });

      it('does not answer a household of several surnames for a given name no member has (flatmates: the surname points at one of them)', async () => {
        expect((await match({ first_name: 'Anita', last_name: 'Raman', addresses: at('42 Orchard Lane') })).household).toBeNull();
        expect((await match({ first_name: 'Anita', last_name: 'Ramen', addresses: at('42 Orchard Lane') })).household).toBeNull();
        // Its members themselves are answered.
        expect((await match({ first_name: 'Priya', last_name: 'Raman', addresses: at('42 Orchard Lane') })).household?.windfall_id).toBe(flatmates.windfall_id);
      });

      it('does not answer a given name no member has from a snapshot that does not record the households erased members left', async () => {
        // A snapshot loaded before the load recorded them (no ERASURES_RECORDED key): any household may
        // be one an erased member left, so her name there is never answered.
        const older = await loadSnapshot(snapshots.store, snapshots.storage, source);
        await onSnapshot(snapshots.storage.locationFor(older.id), `DELETE FROM S.blocks WHERE key = '${ERASURES_RECORDED}'`);
        const reader = await snapshots.storage.open(snapshots.storage.locationFor(older.id));
        try {
          const olderMatcher = new SnapshotMatcher(reader, older.version);
          const at310 = { last_name: 'Stephenson', addresses: at('310 Ridgewood Avenue') };
          expect((await olderMatcher.match({ first_name: 'Gwendolyn', ...at310 }, { career: true })).household).toBeNull();
          expect((await olderMatcher.match({ first_name: 'Meredith', ...at310 }, { career: true })).household?.windfall_id).toBe(stephensons.windfall_id);
        } finally {
          reader.close();
        }
      });

      it('answers a given name no member has at the household’s door with one slip on the surname or the street (the same door)', async () => {
        const surnameSlipped = await match({ first_name: 'Gwendolyn', last_name: 'Stepenson', addresses: at('310 Ridgewood Avenue') });
        expect(surnameSlipped.household?.windfall_id).toBe(stephensons.windfall_id);
        expect(surnameSlipped.career).toBeNull();
        const streetSlipped = await match({ first_name: 'Gwendolyn', last_name: 'Stephenson', addresses: at('310 Ridgewod Avenue') });
        expect(streetSlipped.household?.windfall_id).toBe(stephensons.windfall_id);
      });

      it('answers a given name no member has at the household’s door with two slips, on the surname and the street', async () => {
        const twoSlips = await match({ first_name: 'Gwendolyn', last_name: 'Stepenson', addresses: at('310 Ridgewod Avenue') });
        expect(twoSlips.household?.windfall_id).toBe(stephensons.windfall_id);
        expect(twoSlips.career).toBeNull();
      });

      it('does not answer a given name no member has off the household’s door, or with three slips at it', async () => {
        expect((await match({ first_name: 'Gwendolyn', last_name: 'Stephenson', addresses: at('311 Ridgewood Avenue') })).household).toBeNull();
        // The surname, the street and the place (a postal code not as written, the city misspelled) slipped.
        const threeSlips = [{ address: '310 Ridgewod Avenue', city: 'Springfeld', state: 'IL', zipcode: '62799' }];
        expect((await match({ first_name: 'Gwendolyn', last_name: 'Stepenson', addresses: threeSlips })).household).toBeNull();
        expect((await match({ first_name: 'Gwendolyn', last_name: 'Stevenson', addresses: at('310 Ridgewood Avenue') })).household).toBeNull();
      });

      it('finds the household from a street line missing its number or its street, when the part it gives is the household’s', async () => {
        const noNumber = await match({ first_name: 'Meredith', last_name: 'Stephenson', addresses: at('Ridgewood Avenue') });
        expect(noNumber.household?.windfall_id).toBe(stephensons.windfall_id);
        const noStreet = await match({ first_name: 'Meredith', last_name: 'Stephenson', addresses: at('310') });
        expect(noStreet.household?.windfall_id).toBe(stephensons.windfall_id);
        // A name ten households of the postal code carry (Jose Garcia), which the name alone never
        // answers: the number places the door.
        const joseAt100 = otherGarcias[0];
        expect((await match({ first_name: 'Jose', last_name: 'Garcia', addresses: at('100') })).household?.windfall_id).toBe(joseAt100?.windfall_id);
        // Ten Jose Garcias on one street, its number left out: no door, and none answered.
        expect((await match({ first_name: 'Jose', last_name: 'Garcia', addresses: at('Lakeview Drive') })).household).toBeNull();
        // A given name no member has is never answered without the whole door.
        expect((await match({ first_name: 'Gwendolyn', last_name: 'Stephenson', addresses: at('Ridgewood Avenue') })).household).toBeNull();
      });

      it('finds the household through a surname two slips off when the given name and the door are right (Akafur for Okafor)', async () => {
        const result = await match({ first_name: 'Adaeze', last_name: 'Akafur', addresses: at('316 Ridgewood Avenue') });
        expect(result.household?.windfall_id).toBe(okafors.windfall_id);
        // With the given name no member's as well, it is someone else.
        expect((await match({ first_name: 'Gwendolyn', last_name: 'Akafur', addresses: at('316 Ridgewood Avenue') })).household).toBeNull();
      });

      it('never answers a surname two slips off at a far-off number (its sound counts none of the household’s namesakes)', async () => {
        expect((await match({ first_name: 'Adaeze', last_name: 'Akafur', addresses: at('392 Ridgewood Avenue') })).household).toBeNull();
        // The surname as written, at the same far-off number, is a rare name's mistyped number.
        expect((await match({ first_name: 'Adaeze', last_name: 'Okafor', addresses: at('392 Ridgewood Avenue') })).household?.windfall_id).toBe(
          okafors.windfall_id,
        );
      });

      it('any two wrong fields of given name, surname, house number, street, city and postal code leave the household among the candidates', async () => {
        const missed: string[] = [];
        for (const [i, a] of PARTS.entries())
          for (const b of PARTS.slice(i + 1)) if (!(await candidatesOf(recordWith([a, b]))).has(stephensons.windfall_id)) missed.push(`${a}+${b}`);
        expect(missed).toEqual([]);
      });

      it('finds the household through a wrong postal code and house number (the surname\u2019s sound in the city)', async () => {
        await expect(candidatesOf(recordWith(['postal', 'number']))).resolves.toContain(stephensons.windfall_id);
        // Without the blocking key of the surname's sound in the city, neither the postal code's keys nor the city's number found it.
        await expect(candidatesOf(recordWith(['postal', 'number', 'surname']))).resolves.not.toContain(stephensons.windfall_id);
      });

      it('finds the household through a wrong postal code and city (another place of the state: the surname\u2019s sound and the number)', async () => {
        await expect(candidatesOf(recordWith(['postal', 'city']))).resolves.toContain(stephensons.windfall_id);
      });

      it('finds every household of the postal code\u2019s street, whatever the names (the surname, given name and house number all wrong)', async () => {
        await expect(candidatesOf(recordWith(['surname', 'number', 'given']))).resolves.toContain(stephensons.windfall_id);
      });

      it('finds every household at the postal code\u2019s house number, whatever the names (the surname, given name and street all wrong)', async () => {
        await expect(candidatesOf(recordWith(['surname', 'street', 'given']))).resolves.toContain(stephensons.windfall_id);
      });

      it('finds the household through its number and street in the state when the surname\u2019s sound, the city and the postal code are wrong', async () => {
        await expect(candidatesOf(recordWith(['surname', 'city', 'postal']))).resolves.toContain(stephensons.windfall_id);
      });

      it('finds the household through the given name\u2019s sound and the surname\u2019s first letter in the city when the surname slipped out of its sound and the number and street are wrong', async () => {
        // Stepkenson: one slip from Stephenson, another sound (STPK against STFN), the same first letter.
        const record = recordWith(['number', 'street']);
        await expect(candidatesOf({ ...record, last_name: 'Stepkenson' })).resolves.toContain(stephensons.windfall_id);
        // Its first letter slipped too (Ttepkenson), nothing finds it.
        await expect(candidatesOf({ ...record, last_name: 'Ttepkenson' })).resolves.not.toContain(stephensons.windfall_id);
      });
    });

    describe('Matching: confidence', () => {
      it('rises as more supplied fields agree, stays within [0.1, 1.0], and is the same every time', async () => {
        const some = await match({ emails: ['john.smith@example.com'] });
        const more = await match({
          first_name: 'John',
          last_name: 'Smith',
          emails: ['john.smith@example.com'],
          phones: [LANDLINE],
          addresses: [{ address: '1200 North Main Street Apt 4', city: 'Atlanta', state: 'GA', zipcode: '30301' }],
          company_name: 'Acme Corporation',
        });
        expect(more.household?.confidence).toBeGreaterThan(some.household?.confidence ?? 1);
        expect(more.career?.confidence).toBeGreaterThan(some.career?.confidence ?? 1);
        for (const value of [some.household?.confidence, more.household?.confidence, more.career?.confidence]) {
          expect(value).toBeGreaterThanOrEqual(0.1);
          expect(value).toBeLessThanOrEqual(1);
        }
        // The same request against the same snapshot, read through another connection, answers the same.
        const again = new SnapshotMatcher(await (await snapshots.another()).open(location), 'again');
        const request = { first_name: 'Bob', last_name: 'Jones', phones: ['4045550177'], addresses: [{ address: '1200 N Main St #7', zipcode: '30301' }] };
        expect(JSON.stringify(await again.match(request, { career: true }))).toBe(JSON.stringify(await match(request)));
      });

      it("lowers a career's confidence when the supplied company is not the employer", async () => {
        const right = await match({ emails: ['john.smith@example.com'], company_name: 'Acme' });
        const wrong = await match({ emails: ['john.smith@example.com'], company_name: 'Umbrella' });
        expect(wrong.career?.confidence).toBeLessThan(right.career?.confidence ?? 0);
      });

      it('carries every household and career field of the snapshot', async () => {
        const result = await match({ emails: ['john.smith@example.com'] });
        expect(Object.keys(result.household ?? {})).toHaveLength(32);
        expect(Object.keys(result.career ?? {})).toHaveLength(26);
        expect(result.household?.net_worth).toBe(1_200_000);
      });
    });
  });
}
