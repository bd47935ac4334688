// Unit tests of the matching normalizers: phone (E.164), e-mail and its log redaction, person names,
// street lines and postal codes, over the formatting variants real CRM records carry.
import { describe, expect, it } from 'vitest';
import { normalizePostalCode, parseStreetLine, parseStreetParts, postalCodeFromFullAddress } from '../../core/normalize/address.ts';
import { normalizeEmail } from '../../core/normalize/email.ts';
import { normalizeName, personName, withinOneEdit } from '../../core/normalize/name.ts';
import { normalizePhone } from '../../core/normalize/phone.ts';
import { editsWithin } from '../../core/normalize/similarity.ts';
import damerauLevenshtein from 'talisman/metrics/damerau-levenshtein.js';

describe('normalizePhone', () => {
  it.each(['(555) 300-0001', '+1 555 300 0001', '555.300.0001', '1-555-300-0001', '5553000001', '555-300-0001', '+1 (555) 300-0001', '  5553000001  '])(
    'US formatting variant %j normalizes to +15553000001',
    (raw) => {
      expect(normalizePhone(raw)).toBe('+15553000001');
    },
  );

  it('fictitious 555 numbers of different personas stay distinct', () => {
    expect(normalizePhone('5553000002')).toBe('+15553000002');
    expect(normalizePhone('5553000001')).not.toBe(normalizePhone('5553000002'));
  });

  it.each(['', 'abc', 'not a phone', '555', '12345', '555300000', '555300000123456'])('garbage or wrong-length input %j gives null', (raw) => {
    expect(normalizePhone(raw)).toBeNull();
  });

  it('an international number keeps its own country code instead of +1', () => {
    expect(normalizePhone('+44 20 7946 0958')).toBe('+442079460958');
    expect(normalizePhone('+33 1 23 45 67 89')).toBe('+33123456789');
  });
});

describe('normalizeEmail', () => {
  it('trims whitespace and lowercases the whole address', () => {
    expect(normalizeEmail('  Amanda.Taylor@Sandbox.Windfall.COM \t')).toBe('amanda.taylor@sandbox.windfall.com');
  });

  it('case and whitespace variants of one address compare equal', () => {
    expect(normalizeEmail('JANE.DOE@sandbox.windfall.com')).toBe(normalizeEmail(' jane.doe@SANDBOX.windfall.com'));
  });

  it.each(['', 'plain', '@example.com', 'user@', 'a b@example.com', '   '])('a value without local@domain shape (%j) gives null', (raw) => {
    expect(normalizeEmail(raw)).toBeNull();
  });
});

describe('normalizeName', () => {
  it('lowercases', () => {
    expect(normalizeName('AMANDA')).toBe('amanda');
  });

  it('folds accents to ASCII', () => {
    expect(normalizeName('José')).toBe('jose');
    expect(normalizeName('Zoë Ångström')).toBe('zoe angstrom');
  });

  it('drops apostrophes (straight, curly, backtick) without splitting the name', () => {
    expect(normalizeName("O'Brien")).toBe('obrien');
    expect(normalizeName('O’Brien')).toBe('obrien');
    expect(normalizeName('D`Arcy')).toBe('darcy');
  });

  it('turns other punctuation and runs of spaces into single spaces and trims', () => {
    expect(normalizeName('  Mary-Jane   Watson. ')).toBe('mary jane watson');
    expect(normalizeName('JOHN Q. SMITH')).toBe('john q smith');
  });
});

describe('personName', () => {
  it('a middle initial carried in first_name is dropped', () => {
    expect(personName('JOHN Q.', 'SMITH')).toEqual({ first: 'john', last: 'smith' });
  });

  it('first and last given separately are normalized', () => {
    expect(personName('José', "O'Brien")).toEqual({ first: 'jose', last: 'obrien' });
  });

  it('a full name in last_name with an empty first_name is split on its first and last words', () => {
    expect(personName('', 'Amanda Taylor')).toEqual({ first: 'amanda', last: 'taylor' });
    expect(personName(null, 'JOHN Q. SMITH')).toEqual({ first: 'john', last: 'smith' });
    expect(personName(undefined, '  Amanda   Taylor ')).toEqual({ first: 'amanda', last: 'taylor' });
  });

  it('a whitespace-only first_name counts as empty for the full-name split', () => {
    expect(personName('   ', 'Amanda Taylor')).toEqual({ first: 'amanda', last: 'taylor' });
  });

  it.each([
    ['', 'Taylor'],
    ['Amanda', ''],
    ['Amanda', null],
    [null, null],
    [undefined, undefined],
    ['...', 'Taylor'],
  ])('a name missing a part (%j, %j) gives null', (first, last) => {
    expect(personName(first, last)).toBeNull();
  });
});

describe('parseStreetParts', () => {
  it('keeps a street line missing its number or its street, which parseStreetLine refuses', () => {
    expect(parseStreetParts('1603')).toEqual({ number: '1603', street: '', unit: null });
    expect(parseStreetParts('1953 Apt 104')).toEqual({ number: '1953', street: '', unit: '104' });
    expect(parseStreetParts('Vista Court Apt 1207')).toEqual({ number: '', street: 'vista ct', unit: '1207' });
    expect(parseStreetLine('1603')).toBeNull();
    expect(parseStreetLine('Vista Court Apt 1207')).toBeNull();
  });

  it('reads a whole street line as parseStreetLine does, and nothing from a line with neither part', () => {
    expect(parseStreetParts('1200 North Main Street Apt 4')).toEqual(parseStreetLine('1200 North Main Street Apt 4'));
    expect(parseStreetParts('Apt 5')).toBeNull();
    // A post office box is no street.
    expect(parseStreetParts('PO Box 12')).toBeNull();
    expect(parseStreetParts('P.O. Box 12')).toBeNull();
    expect(parseStreetParts('  ')).toBeNull();
  });
});

describe('parseStreetLine', () => {
  it('spelling, case, spacing and a trailing period of one street line compare equal', () => {
    const expected = { number: '100', street: 'demo st', unit: null };
    expect(parseStreetLine('100 Demo St')).toEqual(expected);
    expect(parseStreetLine('100 demo street')).toEqual(expected);
    expect(parseStreetLine('  100   DEMO   ST. ')).toEqual(expected);
  });

  it('directionals and suffix are abbreviated and the unit is split off', () => {
    expect(parseStreetLine('1200 North Main Street Apt 4')).toEqual({ number: '1200', street: 'n main st', unit: '4' });
  });

  it('a # unit is read as a unit, attached or spaced', () => {
    expect(parseStreetLine('100 Demo St #5')).toEqual({ number: '100', street: 'demo st', unit: '5' });
    expect(parseStreetLine('100 Demo St # 5')).toEqual({ number: '100', street: 'demo st', unit: '5' });
  });

  it('a suite designator is a unit too', () => {
    expect(parseStreetLine('100 Demo Street Suite 200')).toEqual({ number: '100', street: 'demo st', unit: '200' });
  });

  it('a full one-line address is cut at its first comma', () => {
    expect(parseStreetLine('100 Demo St, Atlanta, GA 30301')).toEqual({ number: '100', street: 'demo st', unit: null });
  });

  it('leading zeros of the house number are dropped and a letter suffix kept', () => {
    expect(parseStreetLine('0100 Demo St')?.number).toBe('100');
    expect(parseStreetLine('12B Demo St')?.number).toBe('12b');
  });

  it('a street named after a suffix word keeps that word as its name', () => {
    expect(parseStreetLine('100 Street')?.street).toBe('street');
  });

  it.each(['Demo St', '100', '', '   ', 'Apt 4', '100 Apt 4', ', Atlanta, GA 30301'])(
    'a partial address %j (no house number or no street) gives null',
    (raw) => {
      expect(parseStreetLine(raw)).toBeNull();
    },
  );
});

describe('normalizePostalCode', () => {
  it.each([
    ['30301', '30301'],
    ['30301-1234', '30301'],
    ['303011234', '30301'],
    [' 30301 ', '30301'],
    ['02108', '02108'],
    ['M5V 3L9', 'M5V3L9'],
    ['m5v3l9', 'M5V3L9'],
    ['M5V-3L9', 'M5V3L9'],
  ])('%j normalizes to %j', (raw, expected) => {
    expect(normalizePostalCode(raw)).toBe(expected);
  });

  it.each(['', 'junk', '3030', '303012', '30301-12', 'D5V 3L9', 'ABCDE'])('junk %j gives null', (raw) => {
    expect(normalizePostalCode(raw)).toBeNull();
  });
});

describe('postalCodeFromFullAddress', () => {
  it('reads the zip at the end of a comma-separated full address', () => {
    expect(postalCodeFromFullAddress('100 Demo St, Atlanta, GA 30301')).toBe('30301');
  });

  it('reads a zip+4 at the end as its 5-digit zip', () => {
    expect(postalCodeFromFullAddress('100 Demo St, Atlanta, GA 30301-1234')).toBe('30301');
  });

  it('reads a Canadian postal code at the end', () => {
    expect(postalCodeFromFullAddress('100 Demo St, Toronto, ON M5V 3L9')).toBe('M5V3L9');
  });

  it('without a comma the line is a street line, not a full address', () => {
    expect(postalCodeFromFullAddress('100 Demo St 30301')).toBeNull();
  });

  it('a full address that does not end with a zip gives null', () => {
    expect(postalCodeFromFullAddress('100 Demo St, Atlanta, GA')).toBeNull();
    expect(postalCodeFromFullAddress('100 Demo St, Atlanta, GA 30301 USA')).toBeNull();
  });
});

describe('full-address postal codes and trailing directionals', () => {
  it('reads a 9-digit zip at the end of a full address as its 5-digit zip', () => {
    expect(postalCodeFromFullAddress('100 Demo St, Atlanta, GA 303011234')).toBe('30301');
  });

  it('does not read the tail of a longer number as a zip', () => {
    expect(postalCodeFromFullAddress('100 Demo St, Atlanta, GA 130301')).toBeNull();
  });

  it('abbreviates a suffix followed by a directional: Main Street South = Main St S', () => {
    expect(parseStreetLine('100 Main Street South')).toEqual(parseStreetLine('100 Main St S'));
    expect(parseStreetLine('100 Main Street South')?.street).toBe('main st s');
  });
});

describe('withinOneEdit: one typo in a name', () => {
  it.each([
    ['thompson', 'tompson'],
    ['john', 'jhon'],
    ['smith', 'smiht'],
    ['garcia', 'garcai'],
    ['roberts', 'robert'],
    ['martinez', 'martinex'],
  ])('accepts %s ~ %s', (a, b) => {
    expect(withinOneEdit(a, b)).toBe(true);
    expect(withinOneEdit(b, a)).toBe(true);
  });

  it.each([
    ['mark', 'mary'],
    ['ann', 'anne'],
    ['smith', 'smyth2'],
    ['thompson', 'thomsen'],
    ['lee', 'les'],
  ])('refuses %s ~ %s', (a, b) => {
    expect(withinOneEdit(a, b)).toBe(false);
  });
});

describe('editsWithin', () => {
  it.each([
    ['ruiz', 'riu', 2, 2],
    ['nelson', 'ntlsor', 2, 2],
    ['okafor', 'akafur', 2, 2],
    ['587', '597', 1, 1],
    ['587', '578', 1, 1],
    ['587', '5987', 1, 1],
    ['587', '612', 1, Infinity],
    ['stephenson', 'tephenson', 2, 1],
    ['garcia', 'cruz', 2, Infinity],
  ])('counts the edits from %s to %s up to %i (%s), and no further', (a, b, max, edits) => {
    expect(editsWithin(max, a, b)).toBe(edits);
  });

  it('agrees with the full Damerau-Levenshtein count wherever that is within the limit', () => {
    const words = ['', 'a', 'ab', 'ba', 'abc', 'acb', 'bca', 'abcd', 'abdc', 'xbcd', 'abcde', 'aecdb', 'dcba'];
    for (const a of words) {
      for (const b of words) {
        for (const max of [1, 2]) {
          const full = damerauLevenshtein(a, b);
          expect(editsWithin(max, a, b), `${a} ${b} ${max}`).toBe(full <= max ? full : Infinity);
        }
      }
    }
  });
});
