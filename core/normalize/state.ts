// US state and Canadian province normalization: names and abbreviations to two-letter codes, and the
// region a postal code belongs to (USPS 3-digit zip prefixes, Canada Post forward sortation areas).

/**
 * Two-letter code → every spelling of the region we accept, written as people write them. Lookup
 * keys are these spellings folded by `regionKey` (letters only, lowercase, accents removed), so
 * `N.Y.`, `n y` and `NY` need only one entry. The code itself is always accepted.
 */
const REGION_SPELLINGS: Readonly<Record<string, readonly string[]>> = {
  // States; the second-row spellings are the traditional (AP/GPO) abbreviations still seen in CRM data.
  AL: ['Alabama', 'Ala.'],
  AK: ['Alaska', 'Alas.'],
  AZ: ['Arizona', 'Ariz.'],
  AR: ['Arkansas', 'Ark.'],
  CA: ['California', 'Calif.', 'Cal.', 'Cali'],
  CO: ['Colorado', 'Colo.', 'Col.'],
  CT: ['Connecticut', 'Conn.'],
  DE: ['Delaware', 'Del.'],
  DC: ['District of Columbia', 'Washington DC', 'Washington D.C.', 'Wash. D.C.', 'D.C.'],
  FL: ['Florida', 'Fla.', 'Flor.'],
  GA: ['Georgia', 'Ga.'],
  HI: ['Hawaii', 'Hawaiʻi', "Hawai'i"],
  ID: ['Idaho', 'Ida.'],
  IL: ['Illinois', 'Ill.', 'Ills.'],
  IN: ['Indiana', 'Ind.'],
  IA: ['Iowa', 'Ia.'],
  KS: ['Kansas', 'Kan.', 'Kans.', 'Ks.'],
  KY: ['Kentucky', 'Ky.', 'Ken.', 'Kent.'],
  LA: ['Louisiana', 'La.'],
  ME: ['Maine', 'Me.'],
  MD: ['Maryland', 'Md.'],
  MA: ['Massachusetts', 'Mass.'],
  MI: ['Michigan', 'Mich.'],
  MN: ['Minnesota', 'Minn.'],
  MS: ['Mississippi', 'Miss.'],
  MO: ['Missouri', 'Mo.'],
  MT: ['Montana', 'Mont.'],
  NE: ['Nebraska', 'Neb.', 'Nebr.'],
  NV: ['Nevada', 'Nev.'],
  NH: ['New Hampshire', 'N.H.'],
  NJ: ['New Jersey', 'N.J.'],
  NM: ['New Mexico', 'N.M.', 'N. Mex.'],
  NY: ['New York', 'N.Y.', 'N. York', 'New York State'],
  NC: ['North Carolina', 'N.C.', 'N. Car.', 'N. Carolina'],
  ND: ['North Dakota', 'N.D.', 'N. Dak.', 'N. Dakota'],
  OH: ['Ohio'],
  OK: ['Oklahoma', 'Okla.'],
  OR: ['Oregon', 'Ore.', 'Oreg.'],
  PA: ['Pennsylvania', 'Pa.', 'Penn.', 'Penna.'],
  RI: ['Rhode Island', 'R.I.'],
  SC: ['South Carolina', 'S.C.', 'S. Car.', 'S. Carolina'],
  SD: ['South Dakota', 'S.D.', 'S. Dak.', 'S. Dakota'],
  TN: ['Tennessee', 'Tenn.'],
  TX: ['Texas', 'Tex.', 'Tx.'],
  UT: ['Utah'],
  VT: ['Vermont', 'Vt.'],
  VA: ['Virginia', 'Va.', 'Virg.'],
  WA: ['Washington', 'Wash.', 'Washington State', 'Wn.'],
  WV: ['West Virginia', 'W. Va.', 'W. Virginia', 'W. Virg.'],
  WI: ['Wisconsin', 'Wis.', 'Wisc.'],
  WY: ['Wyoming', 'Wyo.'],
  // Territories, freely associated states and military "states" (USPS Publication 28, appendix B).
  PR: ['Puerto Rico', 'P.R.'],
  VI: ['U.S. Virgin Islands', 'US Virgin Islands', 'Virgin Islands', 'United States Virgin Islands', 'USVI'],
  GU: ['Guam'],
  AS: ['American Samoa', 'Amer. Samoa'],
  MP: ['Northern Mariana Islands', 'Commonwealth of the Northern Mariana Islands', 'Northern Marianas', 'CNMI'],
  FM: ['Federated States of Micronesia', 'Micronesia'],
  MH: ['Marshall Islands', 'Republic of the Marshall Islands'],
  PW: ['Palau', 'Republic of Palau'],
  AA: ['Armed Forces Americas', 'Armed Forces America'],
  AE: ['Armed Forces Europe', 'Armed Forces Africa', 'Armed Forces Canada', 'Armed Forces Middle East'],
  AP: ['Armed Forces Pacific'],
  // Canadian provinces and territories (Canada Post symbols), in English and French, plus the
  // pre-1990s abbreviations (PQ, NF, LB) and the everyday ones (PEI, BC).
  AB: ['Alberta', 'Alta.'],
  BC: ['British Columbia', 'B.C.', 'Colombie-Britannique'],
  MB: ['Manitoba', 'Man.'],
  NB: ['New Brunswick', 'N.B.', 'Nouveau-Brunswick'],
  NL: ['Newfoundland and Labrador', 'Newfoundland & Labrador', 'Newfoundland', 'Labrador', 'Nfld.', 'NF', 'LB', 'N.L.', 'Terre-Neuve-et-Labrador'],
  NS: ['Nova Scotia', 'N.S.', 'Nouvelle-Écosse'],
  NT: ['Northwest Territories', 'N.W.T.', 'NWT', 'Territoires du Nord-Ouest'],
  NU: ['Nunavut', 'Nvt.'],
  ON: ['Ontario', 'Ont.'],
  PE: ['Prince Edward Island', 'P.E.I.', 'Île-du-Prince-Édouard'],
  QC: ['Quebec', 'Québec', 'Que.', 'Qué.', 'P.Q.', 'Province of Quebec', 'Province de Québec'],
  SK: ['Saskatchewan', 'Sask.'],
  YT: ['Yukon', 'Yukon Territory', 'Y.T.', 'Yuk.'],
};

/**
 * Letters and digits only, lowercase, accents folded: `N. Mex.` → `nmex`, `Québec` → `quebec`,
 * `D.C.` → `dc`. Digits are kept so that `GA 30301` is not read as `GA`.
 */
function regionKey(raw: string): string {
  let key = '';
  for (let i = 0; i < raw.length; i += 1) {
    const code = raw.charCodeAt(i);
    if ((code >= 97 && code <= 122) || (code >= 48 && code <= 57)) key += raw[i];
    else if (code >= 65 && code <= 90) key += String.fromCharCode(code + 32);
    else if (code > 127) return regionKey(raw.normalize('NFKD').replace(/[^\x20-\x7e]/g, ''));
  }
  return key;
}

function buildRegionIndex(): ReadonlyMap<string, string> {
  const index = new Map<string, string>();
  for (const [code, spellings] of Object.entries(REGION_SPELLINGS)) {
    for (const spelling of [code, ...spellings]) {
      const key = regionKey(spelling);
      const existing = index.get(key);
      if (existing !== undefined && existing !== code) {
        throw new Error(`region spelling ${spelling} is claimed by both ${existing} and ${code}`);
      }
      index.set(key, code);
    }
  }
  return index;
}

const REGION_BY_KEY = buildRegionIndex();

/** Longest spelling in the table (`Commonwealth of the Northern Mariana Islands`) with room for noise. */
const MAX_REGION_INPUT = 80;

/**
 * Two-letter uppercase code of a US state, DC, territory or military "state", or a Canadian
 * province or territory, from its code or name in any case, spacing or punctuation:
 * `ga`, ` GEORGIA `, `Ga.`, `Washington DC`, `Québec`, `PEI` all resolve. Null when unknown.
 */
export function normalizeRegion(raw: string): string | null {
  if (raw.length > MAX_REGION_INPUT) return null;
  return REGION_BY_KEY.get(regionKey(raw)) ?? null;
}

/**
 * USPS 3-digit zip prefix ranges, inclusive, from the National Five-Digit ZIP Code and Post Office
 * Directory. Unassigned prefixes inside a state's run (213, 343, 517–519, …) keep that state: a
 * zip with one is more likely a typo near the state than anything else. Prefixes outside every
 * run (000–004, 099, 269, 428–429, 529, 568, 578–579, 589, 694–699, 715, 817–819, 839, 848–849,
 * 886–888, 899, 987) stay unknown.
 */
const ZIP_PREFIX_RANGES: readonly (readonly [number, number, string])[] = [
  [5, 5, 'NY'], // Holtsville IRS
  [6, 7, 'PR'],
  [8, 8, 'VI'],
  [9, 9, 'PR'],
  [10, 27, 'MA'],
  [28, 29, 'RI'],
  [30, 38, 'NH'],
  [39, 49, 'ME'],
  [50, 54, 'VT'],
  [55, 55, 'MA'] /* Andover IRS */,
  [56, 59, 'VT'],
  [60, 69, 'CT'],
  [70, 89, 'NJ'],
  [90, 98, 'AE'],
  [100, 149, 'NY'],
  [150, 196, 'PA'],
  [197, 199, 'DE'],
  [200, 200, 'DC'],
  [201, 201, 'VA'] /* Dulles */,
  [202, 205, 'DC'],
  [206, 219, 'MD'],
  [220, 246, 'VA'],
  [247, 268, 'WV'],
  [270, 289, 'NC'],
  [290, 299, 'SC'],
  [300, 319, 'GA'],
  [320, 339, 'FL'],
  [340, 340, 'AA'],
  [341, 349, 'FL'],
  [350, 369, 'AL'],
  [370, 385, 'TN'],
  [386, 397, 'MS'],
  [398, 399, 'GA'],
  [400, 427, 'KY'],
  [430, 459, 'OH'],
  [460, 479, 'IN'],
  [480, 499, 'MI'],
  [500, 528, 'IA'],
  [530, 549, 'WI'],
  [550, 567, 'MN'],
  [569, 569, 'DC'] /* parcel return */,
  [570, 577, 'SD'],
  [580, 588, 'ND'],
  [590, 599, 'MT'],
  [600, 629, 'IL'],
  [630, 658, 'MO'],
  [660, 679, 'KS'],
  [680, 693, 'NE'],
  [700, 714, 'LA'],
  [716, 729, 'AR'],
  [730, 732, 'OK'],
  [733, 733, 'TX'] /* Austin IRS */,
  [734, 749, 'OK'],
  [750, 799, 'TX'],
  [800, 816, 'CO'],
  [820, 831, 'WY'],
  [832, 838, 'ID'],
  [840, 847, 'UT'],
  [850, 865, 'AZ'],
  [870, 884, 'NM'],
  [885, 885, 'TX'] /* El Paso */,
  [889, 898, 'NV'],
  [900, 961, 'CA'],
  [962, 966, 'AP'],
  [967, 968, 'HI'],
  [969, 969, 'GU'],
  [970, 979, 'OR'],
  [980, 986, 'WA'],
  [988, 994, 'WA'],
  [995, 999, 'AK'],
];

/**
 * Five-digit zips whose prefix is shared with another region: American Samoa sits inside Hawaii's
 * 967, and 969 holds the Northern Marianas, Palau, Micronesia and the Marshall Islands beside Guam.
 */
const ZIP_EXCEPTIONS: ReadonlyMap<string, string> = new Map([
  ['96799', 'AS'],
  ['96950', 'MP'],
  ['96951', 'MP'],
  ['96952', 'MP'],
  ['96939', 'PW'],
  ['96940', 'PW'],
  ['96941', 'FM'],
  ['96942', 'FM'],
  ['96943', 'FM'],
  ['96944', 'FM'],
  ['96960', 'MH'],
  ['96970', 'MH'],
]);

function buildZipPrefixTable(): readonly (string | null)[] {
  const table = new Array<string | null>(1000).fill(null);
  for (const [from, to, region] of ZIP_PREFIX_RANGES) {
    for (let prefix = from; prefix <= to; prefix += 1) {
      if (table[prefix] !== null) throw new Error(`zip prefix ${prefix} is in two ranges`);
      table[prefix] = region;
    }
  }
  return table;
}

const REGION_BY_ZIP_PREFIX = buildZipPrefixTable();

function digitValue(text: string, i: number): number {
  const value = text.charCodeAt(i) - 48;
  return value >= 0 && value <= 9 ? value : -1;
}

/** US state (or territory, DC, military code) of a 5-digit zip, by its USPS 3-digit prefix. Null when unassigned or not 5 digits. */
export function stateForZip(zip5: string): string | null {
  if (zip5.length !== 5) return null;
  const a = digitValue(zip5, 0);
  const b = digitValue(zip5, 1);
  const c = digitValue(zip5, 2);
  if (a < 0 || b < 0 || c < 0 || digitValue(zip5, 3) < 0 || digitValue(zip5, 4) < 0) return null;
  if (a === 9 && b === 6) {
    const exception = ZIP_EXCEPTIONS.get(zip5);
    if (exception !== undefined) return exception;
  }
  return REGION_BY_ZIP_PREFIX[a * 100 + b * 10 + c] ?? null;
}

/**
 * Province by the first letter of a Canadian postal code (Canada Post forward sortation areas).
 * X is split on the FSA: X0A, X0B and X0C are Nunavut, the rest of X the Northwest Territories.
 */
const PROVINCE_BY_FIRST_LETTER: Readonly<Record<string, string>> = {
  A: 'NL',
  B: 'NS',
  C: 'PE',
  E: 'NB',
  G: 'QC',
  H: 'QC',
  J: 'QC',
  K: 'ON',
  L: 'ON',
  M: 'ON',
  N: 'ON',
  P: 'ON',
  R: 'MB',
  S: 'SK',
  T: 'AB',
  V: 'BC',
  X: 'NT',
  Y: 'YT',
};

const NUNAVUT_FSAS = new Set(['X0A', 'X0B', 'X0C']);

/**
 * Region of a postal code as `normalizePostalCode` gives it: a Canadian `A1A1A1` code gives its
 * province, a 5-digit US zip its state (`stateForZip`). Null for any other shape or an unassigned code.
 */
export function regionForPostalCode(normalized: string): string | null {
  if (normalized.length === 5) return stateForZip(normalized);
  if (normalized.length !== 6 || !/^[A-Z]\d[A-Z]\d[A-Z]\d$/.test(normalized)) return null;
  const province = PROVINCE_BY_FIRST_LETTER[normalized.charAt(0)];
  if (province === undefined) return null;
  return province === 'NT' && NUNAVUT_FSAS.has(normalized.slice(0, 3)) ? 'NU' : province;
}
