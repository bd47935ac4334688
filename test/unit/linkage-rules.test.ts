// Unit tests of linkage's answer rules that read a comparison alone: the household answered for a given
// name the data does not know only at its door with one slip at most, a far-off address, and the recalibration
// of the logistic's probability through the fitted knots.
import { describe, expect, it } from 'vitest';
import { type Comparison, compareSurname, farOffAddress, recalibrated, strangerNearHousehold } from '../../core/snapshot/matching/linkage.ts';

const EXACT: Comparison = { surname: 'exact', given: 'exact', number: 'exact', street: 'exact', postal: 'exact', city: 'exact', unit: 'none' };

describe('linkage answer rules', () => {
  it('a given name no member has, at the household’s address as written with its surname, is answerable (another member of the household)', () => {
    expect(strangerNearHousehold({ ...EXACT, given: 'different' })).toBe(false);
    expect(strangerNearHousehold({ ...EXACT, given: 'different', postal: 'missing', city: 'missing' })).toBe(false);
    // A member's given name is never a stranger, whatever else is off.
    expect(strangerNearHousehold({ ...EXACT, number: 'near', street: 'close' })).toBe(false);
  });

  it('a given name no member has at the same door, the postal code or the city wrong beside it, is answerable (the other one places it)', () => {
    for (const place of [
      { postal: 'different' },
      { postal: 'missing' },
      { city: 'close' },
      { city: 'different' },
      { city: 'missing' },
      { postal: 'missing', city: 'missing' },
      { postal: 'different', city: 'close' },
    ] as const)
      expect({ place, stranger: strangerNearHousehold({ ...EXACT, given: 'different', ...place }) }).toEqual({ place, stranger: false });
  });

  it('a given name no member has at the door with one or two slips, on the surname, the street, the number behind the unit or the place, is answerable (the same door)', () => {
    for (const slip of [
      { surname: 'edit1' },
      { street: 'close' },
      { surname: 'edit1', city: 'close' },
      { surname: 'edit1', street: 'close' },
      { surname: 'edit1', postal: 'different', city: 'close' },
      { street: 'close', postal: 'missing', city: 'missing' },
      { street: 'close', postal: 'different', city: 'close' },
      { number: 'near', unit: 'exact', surname: 'edit1' },
      { number: 'near', unit: 'exact', street: 'close' },
      // The city as written places the door: a postal code not as written beside it is no slip.
      { surname: 'edit1', postal: 'different' },
      { street: 'close', postal: 'missing' },
      // A unit as written places the door whatever one digit of the number says.
      { number: 'near', unit: 'exact' },
    ] as const)
      expect({ slip, stranger: strangerNearHousehold({ ...EXACT, given: 'different', ...slip }) }).toEqual({ slip, stranger: false });
  });

  it('a given name no member has, off the door, with a further-off surname, or with three slips at the door, is a stranger near the household', () => {
    for (const slip of [
      { surname: 'phonetic' },
      { surname: 'similar' },
      { surname: 'edit2' },
      { number: 'near' },
      { number: 'missing' },
      { street: 'missing' },
      { street: 'core' },
      { postal: 'different', city: 'different' },
      { postal: 'different', city: 'missing' },
      { postal: 'missing', city: 'different' },
      { unit: 'different' },
      { surname: 'edit1', street: 'close', postal: 'different', city: 'close' },
      { surname: 'edit1', street: 'close', postal: 'missing', city: 'missing' },
      { number: 'near', unit: 'exact', surname: 'edit1', street: 'close' },
      { number: 'near', unit: 'exact', surname: 'edit1', postal: 'different', city: 'close' },
      { number: 'near', unit: 'household_only' },
      { number: 'different', unit: 'exact' },
    ] as const)
      expect({ slip, stranger: strangerNearHousehold({ ...EXACT, given: 'different', ...slip }) }).toEqual({ slip, stranger: true });
  });

  it('a surname two slips off is its own level (Riu for Ruiz, Ntlsor for Nelson), never for a name of two letters (Lo for Li)', () => {
    expect(compareSurname('riu', 'ruiz')).toBe('edit2');
    expect(compareSurname('ntlsor', 'nelson')).toBe('edit2');
    expect(compareSurname('lo', 'li')).toBe('different');
    // Nearer levels keep their own: one slip, a sound-alike that looks alike, a close spelling.
    expect(compareSurname('okafro', 'okafor')).toBe('edit1');
    expect(compareSurname('ocafur', 'okafor')).toBe('phonetic');
    expect(compareSurname('ofakor', 'okafor')).toBe('similar');
    // Three slips are another surname.
    expect(compareSurname('ukxfir', 'okafor')).toBe('different');
  });

  it('a far-off address: a number neither the household’s nor one digit slipped, or one digit slipped on another street', () => {
    expect(farOffAddress({ ...EXACT, number: 'different' })).toBe(true);
    expect(farOffAddress({ ...EXACT, number: 'near', street: 'different' })).toBe(true);
    expect(farOffAddress({ ...EXACT, number: 'near' })).toBe(false);
    expect(farOffAddress({ ...EXACT, number: 'near', street: 'close' })).toBe(false);
    expect(farOffAddress({ ...EXACT, street: 'different' })).toBe(false);
  });

  it('a street line missing its number or its street is far off unless the part it gives is the household’s', () => {
    expect(farOffAddress({ ...EXACT, number: 'missing' })).toBe(false);
    expect(farOffAddress({ ...EXACT, number: 'missing', street: 'close' })).toBe(false);
    expect(farOffAddress({ ...EXACT, number: 'missing', street: 'core' })).toBe(true);
    expect(farOffAddress({ ...EXACT, street: 'missing' })).toBe(false);
    expect(farOffAddress({ ...EXACT, street: 'missing', number: 'near' })).toBe(true);
  });

  it('an address whose unit agrees as written, on the street as written or misspelled, is never far off (a namesake down the street seldom lives behind the same unit number)', () => {
    expect(farOffAddress({ ...EXACT, number: 'different', unit: 'exact' })).toBe(false);
    expect(farOffAddress({ ...EXACT, number: 'different', unit: 'household_only' })).toBe(true);
    expect(farOffAddress({ ...EXACT, number: 'missing', street: 'core', unit: 'exact' })).toBe(false);
    // On another street, the same unit number is no door.
    expect(farOffAddress({ ...EXACT, number: 'near', street: 'different', unit: 'exact' })).toBe(true);
  });

  it('the recalibration reads the logistic’s probability through its knots: linear between them, the end knots’ values beyond', () => {
    const knots = { raw: [0.2, 0.5, 0.9], right: [0.1, 0.8, 0.98] };
    expect(recalibrated(0.05, knots)).toBe(0.1);
    expect(recalibrated(0.2, knots)).toBe(0.1);
    expect(recalibrated(0.35, knots)).toBeCloseTo(0.45, 10);
    expect(recalibrated(0.7, knots)).toBeCloseTo(0.89, 10);
    expect(recalibrated(0.99, knots)).toBe(0.98);
    // Without knots (weights fitted before the recalibration), the probability as it is.
    expect(recalibrated(0.42, { raw: [], right: [] })).toBe(0.42);
  });
});
