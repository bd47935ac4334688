// Unit tests of the blocking keys: a record asked as it was loaded shares a key of every kind with its
// household, one or two wrong fields leave a key that agrees, and the PostgreSQL statement tells the kinds
// apart by the same prefixes the builders write.
import { describe, expect, it } from 'vitest';
import type { Address, EnrichmentRequest } from '../../core/contract/schemas.ts';
import { BLOCK, BLOCK_KINDS, type BlockKind, blockKindOf, blockPrefix, nameSoundBlock } from '../../core/snapshot/matching/block-keys.ts';
import { linkageQuery, queryBlockKeys } from '../../core/snapshot/matching/linkage.ts';
import { householdToWrite, personToWrite } from '../../core/snapshot/storage/loader.ts';
import { fetchStatement } from '../../core/snapshot/storage/postgres-snapshot-reader.ts';
import { household, person } from '../support/snapshot-fixture.ts';

const HOME: Address = { address: '310 N Ridgewood Avenue Apt 4B', city: 'Atlanta', state: 'GA', zipcode: '30301' };

/** Every blocking key a load files the record's household under: the household's own and the person's. */
function loadedKeys(home: Address, first: string, last: string): Set<string> {
  const record = household([home, { address: '12 Peachtree St NE', city: 'Atlanta', state: 'GA', zipcode: '30303' }]);
  const { household: row, place } = householdToWrite(record);
  const { keys } = personToWrite(person('p-1', first, last, record), 1, place);
  return new Set([...row.blocks, ...keys.blocks]);
}

function askedKeys(request: EnrichmentRequest): string[] {
  const query = linkageQuery(request);
  if (query === null) throw new Error('the request has no name or no street address');
  return queryBlockKeys(query);
}

function kindsOf(keys: Iterable<string>): Set<BlockKind | null> {
  return new Set([...keys].map(blockKindOf));
}

function sharedKinds(loaded: Set<string>, asked: readonly string[]): Set<BlockKind | null> {
  return kindsOf(asked.filter((key) => loaded.has(key)));
}

describe('blocking keys', () => {
  it('a record asked as it was loaded shares a key of every kind with its household (load and query build the same formats)', () => {
    const loaded = loadedKeys(HOME, 'Meredith', 'Stephenson');
    const asked = askedKeys({ first_name: 'Meredith', last_name: 'Stephenson', addresses: [HOME] });
    expect(kindsOf(loaded)).toEqual(new Set(BLOCK_KINDS));
    expect(kindsOf(asked)).toEqual(new Set(BLOCK_KINDS));
    expect(sharedKinds(loaded, asked)).toEqual(new Set(BLOCK_KINDS));
    // Every key asked is one the load wrote, but the given name's sound (asked for swapped names).
    expect(asked.filter((key) => !loaded.has(key))).toEqual([nameSoundBlock('30301', 'meredith')]);
  });

  it('a record with given name and surname swapped shares the name sound key', () => {
    const loaded = loadedKeys(HOME, 'Meredith', 'Stephenson');
    const asked = askedKeys({ first_name: 'Stephenson', last_name: 'Meredith', addresses: [HOME] });
    expect(sharedKinds(loaded, asked)).toContain(BLOCK.nameSound);
  });

  it('one wrong field leaves a key that agrees', () => {
    const loaded = loadedKeys(HOME, 'Meredith', 'Stephenson');
    const wrong: Record<string, Address> = {
      number: { ...HOME, address: '301 N Ridgewood Avenue Apt 4B' },
      street: { ...HOME, address: '310 N Ridgewod Avenue Apt 4B' },
      postal: { ...HOME, zipcode: '30310' },
      city: { ...HOME, city: 'Atlante' },
    };
    for (const [field, address] of Object.entries(wrong)) {
      const shared = sharedKinds(loaded, askedKeys({ first_name: 'Meredith', last_name: 'Stephenson', addresses: [address] }));
      expect(shared.size, field).toBeGreaterThan(0);
    }
    // A surname misspelled as it sounds keeps its sound's key besides the address's.
    const misspelledName = askedKeys({ first_name: 'Meredith', last_name: 'Stevenson', addresses: [HOME] });
    expect(sharedKinds(loaded, misspelledName)).toEqual(new Set(BLOCK_KINDS));
  });

  it('every key built is of a known kind, told by its prefix', () => {
    for (const key of [...loadedKeys(HOME, 'Meredith', 'Stephenson'), ...askedKeys({ first_name: 'Ann', last_name: 'Lee', addresses: [HOME] })]) {
      const kind = blockKindOf(key);
      expect(kind, key).not.toBeNull();
      expect(key.startsWith(blockPrefix(kind ?? BLOCK.postalNumber))).toBe(true);
    }
    expect(blockKindOf('1|oak st|30301')).toBeNull();
  });

  it('the PostgreSQL statement reads rows up front for the households of every kind of key', () => {
    const statement = fetchStatement(true);
    for (const kind of BLOCK_KINDS) expect(statement.includes(`key LIKE '${blockPrefix(kind)}%'`), kind).toBe(true);
  });

  it('a household’s members sharing a surname file it once under each of their common keys, and each member’s given name apart', () => {
    const record = household([HOME]);
    const { place } = householdToWrite(record);
    const meredith = personToWrite(person('p-1', 'Meredith', 'Stephenson', record), 1, place).keys.blocks;
    const gordon = personToWrite(person('p-2', 'Gordon', 'Stephenson', record), 1, place).keys.blocks;
    expect(
      meredith
        .filter((key) => gordon.includes(key))
        .map(blockKindOf)
        .sort(),
    ).toEqual([BLOCK.nameSound, BLOCK.regionSurnameNumber, BLOCK.regionSurnameStreet].sort());
    expect(kindsOf(meredith)).toEqual(new Set([BLOCK.nameSound, BLOCK.citySurname, BLOCK.cityGiven, BLOCK.regionSurnameNumber, BLOCK.regionSurnameStreet]));
  });

  it('another place of the state (postal code and city) and a wrong house number leave the surname’s sound on the street in the state', () => {
    const loaded = loadedKeys(HOME, 'Meredith', 'Stephenson');
    const asked = askedKeys({
      first_name: 'Meredith',
      last_name: 'Stephenson',
      addresses: [{ address: '854 N Ridgewood Avenue Apt 4B', city: 'Marietta', state: 'GA', zipcode: '30060' }],
    });
    expect(sharedKinds(loaded, asked)).toEqual(new Set([BLOCK.regionSurnameStreet]));
    // The street's type or directions wrong besides: its core still agrees.
    const typed = askedKeys({
      first_name: 'Meredith',
      last_name: 'Stevenson',
      addresses: [{ address: '854 Ridgewood Rd', city: 'Marietta', state: 'GA', zipcode: '30060' }],
    });
    expect(sharedKinds(loaded, typed)).toEqual(new Set([BLOCK.regionSurnameStreet]));
  });

  it('two wrong fields of the six leave a key that agrees', () => {
    const loaded = loadedKeys(HOME, 'Meredith', 'Stephenson');
    const right = { first_name: 'Meredith', last_name: 'Stephenson', number: '310', street: 'N Ridgewood Avenue', city: 'Atlanta', zipcode: '30301' };
    const wrong = { first_name: 'Gwendolyn', last_name: 'Tephenson', number: '854', street: 'Lakeview Drive', city: 'Marietta', zipcode: '30310' };
    const fields = Object.keys(right) as (keyof typeof right)[];
    for (const [i, a] of fields.entries())
      for (const b of fields.slice(i + 1)) {
        const value = (field: keyof typeof right) => (field === a || field === b ? wrong : right)[field];
        const asked = askedKeys({
          first_name: value('first_name'),
          last_name: value('last_name'),
          addresses: [{ address: `${value('number')} ${value('street')} Apt 4B`, city: value('city'), state: 'GA', zipcode: value('zipcode') }],
        });
        const shared = sharedKinds(loaded, asked);
        expect({ wrong: `${a}+${b}`, found: shared.size > 0 }).toEqual({ wrong: `${a}+${b}`, found: true });
      }
  });

  it('the PostgreSQL statement for a snapshot without blocking keys asks for none', () => {
    expect(fetchStatement(true)).toMatch(/FROM S\.blocks WHERE key = bk\.key/);
    expect(fetchStatement(false)).not.toMatch(/S\.blocks/);
  });
});
