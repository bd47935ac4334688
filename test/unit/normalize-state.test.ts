// Unit tests of region normalization: US state and Canadian province names and abbreviations as CRM
// records write them, the state a zip belongs to, and the region of a normalized postal code.
import { describe, expect, it } from 'vitest';
import { normalizeRegion, regionForPostalCode, stateForZip } from '../../core/normalize/state.ts';

const US_STATES_AND_DC = [
  'AL',
  'AK',
  'AZ',
  'AR',
  'CA',
  'CO',
  'CT',
  'DE',
  'DC',
  'FL',
  'GA',
  'HI',
  'ID',
  'IL',
  'IN',
  'IA',
  'KS',
  'KY',
  'LA',
  'ME',
  'MD',
  'MA',
  'MI',
  'MN',
  'MS',
  'MO',
  'MT',
  'NE',
  'NV',
  'NH',
  'NJ',
  'NM',
  'NY',
  'NC',
  'ND',
  'OH',
  'OK',
  'OR',
  'PA',
  'RI',
  'SC',
  'SD',
  'TN',
  'TX',
  'UT',
  'VT',
  'VA',
  'WA',
  'WV',
  'WI',
  'WY',
];
const US_TERRITORIES_AND_MILITARY = ['PR', 'VI', 'GU', 'AS', 'MP', 'AA', 'AE', 'AP'];
const CANADIAN_PROVINCES = ['AB', 'BC', 'MB', 'NB', 'NL', 'NS', 'NT', 'NU', 'ON', 'PE', 'QC', 'SK', 'YT'];

describe('normalizeRegion: two-letter codes', () => {
  it.each([...US_STATES_AND_DC, ...US_TERRITORIES_AND_MILITARY, ...CANADIAN_PROVINCES])('code %s is accepted in upper and lower case', (code) => {
    expect(normalizeRegion(code)).toBe(code);
    expect(normalizeRegion(code.toLowerCase())).toBe(code);
  });

  it.each([
    ['ga', 'GA'],
    [' GA ', 'GA'],
    ['Ga.', 'GA'],
    ['G.A.', 'GA'],
    ['g a', 'GA'],
    ['\tny\n', 'NY'],
    ['N.Y.', 'NY'],
    ['D.C.', 'DC'],
  ])('case, spacing and dots of a code (%j) do not matter', (raw, expected) => {
    expect(normalizeRegion(raw)).toBe(expected);
  });
});

describe('normalizeRegion: full names', () => {
  it.each([
    ['Georgia', 'GA'],
    [' GEORGIA ', 'GA'],
    ['georgia', 'GA'],
    ['New York', 'NY'],
    ['new-york', 'NY'],
    ['NEW  YORK', 'NY'],
    ['North Carolina', 'NC'],
    ['West Virginia', 'WV'],
    ['Virginia', 'VA'],
    ['Washington', 'WA'],
    ['Rhode Island', 'RI'],
    ['Massachusetts', 'MA'],
    ["Hawai'i", 'HI'],
    ['Hawaiʻi', 'HI'],
  ])('US state name %j gives %s', (raw, expected) => {
    expect(normalizeRegion(raw)).toBe(expected);
  });

  it.each([
    ['District of Columbia', 'DC'],
    ['Washington DC', 'DC'],
    ['Washington, D.C.', 'DC'],
    ['washington d.c.', 'DC'],
  ])('District of Columbia spelled %j gives DC, not Washington state', (raw, expected) => {
    expect(normalizeRegion(raw)).toBe(expected);
  });

  it.each([
    ['Puerto Rico', 'PR'],
    ['U.S. Virgin Islands', 'VI'],
    ['Guam', 'GU'],
    ['American Samoa', 'AS'],
    ['Northern Mariana Islands', 'MP'],
    ['Armed Forces Europe', 'AE'],
    ['Armed Forces Pacific', 'AP'],
    ['Armed Forces Americas', 'AA'],
  ])('territory or military name %j gives %s', (raw, expected) => {
    expect(normalizeRegion(raw)).toBe(expected);
  });
});

describe('normalizeRegion: traditional state abbreviations', () => {
  it.each([
    ['Calif.', 'CA'],
    ['Fla.', 'FL'],
    ['Mass.', 'MA'],
    ['Penn.', 'PA'],
    ['Penna.', 'PA'],
    ['Tenn.', 'TN'],
    ['Tex.', 'TX'],
    ['Wis.', 'WI'],
    ['Wisc.', 'WI'],
    ['W. Va.', 'WV'],
    ['N. Dak.', 'ND'],
    ['Okla.', 'OK'],
    ['Ore.', 'OR'],
    ['Ill.', 'IL'],
  ])('%j gives %s', (raw, expected) => {
    expect(normalizeRegion(raw)).toBe(expected);
  });
});

describe('normalizeRegion: Canadian provinces', () => {
  it.each([
    ['Québec', 'QC'],
    ['Quebec', 'QC'],
    ['QUÉBEC', 'QC'],
    ['Que.', 'QC'],
    ['PQ', 'QC'],
    ['Newfoundland and Labrador', 'NL'],
    ['Newfoundland & Labrador', 'NL'],
    ['Nfld.', 'NL'],
    ['PEI', 'PE'],
    ['P.E.I.', 'PE'],
    ['Prince Edward Island', 'PE'],
    ['British Columbia', 'BC'],
    ['Ontario', 'ON'],
    ['Ont.', 'ON'],
    ['Northwest Territories', 'NT'],
    ['Nunavut', 'NU'],
    ['Yukon', 'YT'],
    ['Nouvelle-Écosse', 'NS'],
  ])('%j gives %s', (raw, expected) => {
    expect(normalizeRegion(raw)).toBe(expected);
  });
});

describe('normalizeRegion: unknown regions', () => {
  it.each(['', '   ', 'XX', 'G', 'Atlantis', 'Georgia 30301', 'GA1', 'New', 'USA', 'Canada', 'x'.repeat(200)])('%j gives null', (raw) => {
    expect(normalizeRegion(raw)).toBeNull();
  });
});

describe('stateForZip: USPS 3-digit prefixes', () => {
  it.each([
    ['30301', 'GA'], // Atlanta
    ['39901', 'GA'], // Atlanta IRS, in the 398–399 run after Mississippi
    ['10001', 'NY'],
    ['00501', 'NY'], // Holtsville IRS
    ['00901', 'PR'],
    ['00802', 'VI'],
    ['02108', 'MA'],
    ['05501', 'MA'], // Andover IRS, inside Vermont's 05x
    ['05401', 'VT'],
    ['02903', 'RI'],
    ['03301', 'NH'],
    ['04101', 'ME'],
    ['06103', 'CT'],
    ['07102', 'NJ'],
    ['09001', 'AE'],
    ['19104', 'PA'],
    ['19801', 'DE'],
    ['20001', 'DC'],
    ['20166', 'VA'], // Dulles, inside DC's 20x
    ['20500', 'DC'],
    ['21201', 'MD'],
    ['22201', 'VA'],
    ['25301', 'WV'],
    ['27601', 'NC'],
    ['29201', 'SC'],
    ['33101', 'FL'],
    ['34001', 'AA'],
    ['34102', 'FL'],
    ['35203', 'AL'],
    ['37203', 'TN'],
    ['39201', 'MS'],
    ['40202', 'KY'],
    ['43215', 'OH'],
    ['46204', 'IN'],
    ['48226', 'MI'],
    ['50309', 'IA'],
    ['53202', 'WI'],
    ['55401', 'MN'],
    ['56901', 'DC'], // parcel return
    ['57101', 'SD'],
    ['58102', 'ND'],
    ['59601', 'MT'],
    ['60601', 'IL'],
    ['63101', 'MO'],
    ['66101', 'KS'],
    ['68102', 'NE'],
    ['70112', 'LA'],
    ['72201', 'AR'],
    ['73102', 'OK'],
    ['73301', 'TX'], // Austin IRS, inside Oklahoma's 73x
    ['74103', 'OK'],
    ['75201', 'TX'],
    ['80202', 'CO'],
    ['82001', 'WY'],
    ['83702', 'ID'],
    ['84101', 'UT'],
    ['85001', 'AZ'],
    ['87101', 'NM'],
    ['88510', 'TX'], // El Paso, inside New Mexico's 88x
    ['89101', 'NV'],
    ['90210', 'CA'],
    ['96201', 'AP'],
    ['96813', 'HI'],
    ['96910', 'GU'],
    ['97201', 'OR'],
    ['98101', 'WA'],
    ['99501', 'AK'],
  ])('%s is in %s', (zip, expected) => {
    expect(stateForZip(zip)).toBe(expected);
  });

  it.each([
    ['96799', 'AS'],
    ['96950', 'MP'],
    ['96939', 'PW'],
    ['96941', 'FM'],
    ['96960', 'MH'],
  ])('%s, which shares its prefix with Hawaii or Guam, is in %s', (zip, expected) => {
    expect(stateForZip(zip)).toBe(expected);
  });

  it.each(['00001', '00401', '09901', '26901', '69401', '71501', '81701', '88601', '89901', '98701'])('unassigned prefix %s gives null', (zip) => {
    expect(stateForZip(zip)).toBeNull();
  });

  it.each(['', '3030', '303011', '30301-1234', 'ABCDE', '3030A', ' 3030'])('%j is not a 5-digit zip and gives null', (zip) => {
    expect(stateForZip(zip)).toBeNull();
  });

  it('every region the zip table names is a region normalizeRegion knows', () => {
    const unknown: string[] = [];
    for (let prefix = 0; prefix < 1000; prefix += 1) {
      const zip = `${String(prefix).padStart(3, '0')}01`;
      const region = stateForZip(zip);
      if (region !== null && normalizeRegion(region) !== region) unknown.push(`${zip}: ${region}`);
    }
    expect(unknown).toEqual([]);
  });

  it('every state, DC and territory has at least one zip prefix', () => {
    const covered = new Set<string>();
    for (let prefix = 0; prefix < 1000; prefix += 1) {
      const region = stateForZip(`${String(prefix).padStart(3, '0')}01`);
      if (region !== null) covered.add(region);
    }
    const missing = [...US_STATES_AND_DC, 'PR', 'VI', 'GU', 'AA', 'AE', 'AP'].filter((code) => !covered.has(code));
    expect(missing).toEqual([]);
  });
});

describe('regionForPostalCode', () => {
  it.each([
    ['A1C5M2', 'NL'], // St. John's
    ['B3H4R2', 'NS'], // Halifax
    ['C1A4P3', 'PE'], // Charlottetown
    ['E1C4M3', 'NB'], // Moncton
    ['G1R4P5', 'QC'], // Quebec City
    ['H2X1Y4', 'QC'], // Montreal
    ['J8X3X7', 'QC'], // Gatineau
    ['K1A0B1', 'ON'], // Ottawa
    ['L5B3C2', 'ON'], // Mississauga
    ['M5V3L9', 'ON'], // Toronto
    ['N2L3G1', 'ON'], // Waterloo
    ['P3E2C6', 'ON'], // Sudbury
    ['R3C4T3', 'MB'], // Winnipeg
    ['S4P3Y2', 'SK'], // Regina
    ['T2P2M5', 'AB'], // Calgary
    ['V6B4Y8', 'BC'], // Vancouver
    ['X1A2L9', 'NT'], // Yellowknife
    ['X0E0N0', 'NT'], // Inuvik region
    ['X0A0H0', 'NU'], // Iqaluit
    ['X0C0G0', 'NU'], // Kivalliq
    ['Y1A2C6', 'YT'], // Whitehorse
  ])('Canadian postal code %s is in %s', (code, expected) => {
    expect(regionForPostalCode(code)).toBe(expected);
  });

  it('a 5-digit zip gives its state', () => {
    expect(regionForPostalCode('30301')).toBe('GA');
    expect(regionForPostalCode('96799')).toBe('AS');
  });

  it.each(['', 'M5V 3L9', 'm5v3l9', '30301-1234', 'D5V3L9', 'M5V3L', '00001', 'Z1A1A1'])(
    '%j is not a normalized, assigned postal code and gives null',
    (code) => {
      expect(regionForPostalCode(code)).toBeNull();
    },
  );
});
