// Where synthetic households live: real US cities with their state, real zip codes and area codes, real
// Canadian cities with province, postal-code areas (FSAs) and area codes, and state and province names.
import { mix32 } from './random.ts';

export interface Place {
  readonly city: string;
  /** Two-letter state or province abbreviation. */
  readonly state: string;
  readonly country: 'US' | 'CA';
  /** Relative population weight (thousands of residents, roughly). */
  readonly weight: number;
  /** US: 5-digit zips. Canada: full postal codes `A1A 1A1`. */
  readonly zips: readonly string[];
  readonly areaCodes: readonly string[];
}

type Row = readonly [city: string, state: string, weight: number, zips: string, areaCodes: string];

/** City, state, population in thousands, zips, area codes. */
const US_ROWS: readonly Row[] = [
  ['Birmingham', 'AL', 200, '35203 35205 35209', '205 659'], ['Montgomery', 'AL', 200, '36104 36106 36117', '334'],
  ['Huntsville', 'AL', 215, '35801 35806 35816', '256'], ['Mobile', 'AL', 187, '36602 36604 36695', '251'],
  ['Anchorage', 'AK', 291, '99501 99503 99508', '907'],
  ['Phoenix', 'AZ', 1600, '85004 85016 85018 85032', '602 480 623'], ['Tucson', 'AZ', 540, '85701 85705 85719', '520'],
  ['Mesa', 'AZ', 500, '85201 85203 85210', '480'], ['Scottsdale', 'AZ', 240, '85251 85254 85260', '480'],
  ['Chandler', 'AZ', 275, '85224 85225 85226', '480'], ['Tempe', 'AZ', 180, '85281 85282 85283', '480'],
  ['Little Rock', 'AR', 200, '72201 72205 72211', '501'], ['Fayetteville', 'AR', 95, '72701 72703 72704', '479'],
  ['Los Angeles', 'CA', 3900, '90012 90026 90036 90049 90064', '213 323 310'],
  ['San Diego', 'CA', 1380, '92101 92103 92109 92122', '619 858'], ['San Jose', 'CA', 1000, '95110 95112 95125 95129', '408 669'],
  ['San Francisco', 'CA', 810, '94102 94110 94115 94122', '415 628'], ['Fresno', 'CA', 540, '93701 93704 93720', '559'],
  ['Sacramento', 'CA', 520, '95814 95816 95822', '916 279'], ['Long Beach', 'CA', 460, '90802 90803 90815', '562'],
  ['Oakland', 'CA', 430, '94607 94610 94611', '510 341'], ['Bakersfield', 'CA', 400, '93301 93305 93309', '661'],
  ['Anaheim', 'CA', 345, '92801 92805 92806', '714 657'], ['Irvine', 'CA', 300, '92602 92612 92618', '949'],
  ['Santa Monica', 'CA', 90, '90401 90403 90405', '310 424'], ['Pasadena', 'CA', 135, '91101 91104 91106', '626'],
  ['Palo Alto', 'CA', 68, '94301 94303 94306', '650'], ['Riverside', 'CA', 315, '92501 92503 92507', '951'],
  ['Berkeley', 'CA', 120, '94702 94704 94709', '510 341'], ['Santa Barbara', 'CA', 88, '93101 93103 93105', '805'],
  ['Denver', 'CO', 715, '80202 80205 80206 80210', '303 720'], ['Colorado Springs', 'CO', 480, '80903 80907 80918', '719'],
  ['Aurora', 'CO', 385, '80010 80012 80015', '303 720'], ['Boulder', 'CO', 105, '80302 80303 80304', '303 720'],
  ['Fort Collins', 'CO', 170, '80521 80524 80525', '970'], ['Aspen', 'CO', 7, '81611', '970'],
  ['Hartford', 'CT', 120, '06103 06105 06106', '860 959'], ['New Haven', 'CT', 135, '06510 06511 06515', '203 475'],
  ['Stamford', 'CT', 135, '06901 06902 06905', '203 475'], ['Greenwich', 'CT', 63, '06830 06831', '203'],
  ['Wilmington', 'DE', 70, '19801 19803 19806', '302'], ['Washington', 'DC', 690, '20001 20002 20007 20016', '202'],
  ['Jacksonville', 'FL', 950, '32202 32207 32210 32256', '904'], ['Miami', 'FL', 440, '33130 33131 33133 33137', '305 786'],
  ['Tampa', 'FL', 385, '33602 33606 33611 33629', '813'], ['Orlando', 'FL', 310, '32801 32803 32806 32819', '407 321'],
  ['St. Petersburg', 'FL', 260, '33701 33704 33713', '727'], ['Tallahassee', 'FL', 195, '32301 32303 32308', '850'],
  ['Fort Lauderdale', 'FL', 180, '33301 33304 33308', '954 754'], ['Naples', 'FL', 20, '34102 34103 34108', '239'],
  ['Palm Beach', 'FL', 9, '33480', '561'], ['Boca Raton', 'FL', 98, '33431 33432 33433', '561'],
  ['Gainesville', 'FL', 140, '32601 32605 32608', '352'], ['Miami Beach', 'FL', 80, '33139 33140 33141', '305 786'],
  ['Atlanta', 'GA', 500, '30303 30305 30307 30309 30327', '404 470 678'], ['Savannah', 'GA', 147, '31401 31405 31406', '912'],
  ['Augusta', 'GA', 200, '30901 30904 30909', '706 762'], ['Athens', 'GA', 127, '30601 30605 30606', '706'],
  ['Alpharetta', 'GA', 65, '30004 30005 30009', '770 678'], ['Columbus', 'GA', 205, '31901 31904 31907', '706 762'],
  ['Honolulu', 'HI', 350, '96813 96815 96816 96822', '808'], ['Boise', 'ID', 235, '83702 83704 83706', '208'],
  ['Chicago', 'IL', 2700, '60601 60614 60618 60622 60657', '312 773 872'], ['Naperville', 'IL', 150, '60540 60563 60565', '630 331'],
  ['Evanston', 'IL', 75, '60201 60202', '847 224'], ['Springfield', 'IL', 114, '62701 62702 62704', '217'],
  ['Peoria', 'IL', 113, '61602 61604 61614', '309'], ['Rockford', 'IL', 148, '61101 61107 61108', '815 779'],
  ['Indianapolis', 'IN', 880, '46204 46205 46220 46240', '317 463'], ['Fort Wayne', 'IN', 265, '46802 46804 46825', '260'],
  ['Bloomington', 'IN', 80, '47401 47403 47408', '812 930'], ['Carmel', 'IN', 100, '46032 46033', '317 463'],
  ['Des Moines', 'IA', 215, '50309 50310 50312', '515'], ['Cedar Rapids', 'IA', 135, '52402 52403 52404', '319'],
  ['Iowa City', 'IA', 75, '52240 52245 52246', '319'], ['Wichita', 'KS', 395, '67202 67206 67212', '316'],
  ['Overland Park', 'KS', 195, '66204 66210 66213', '913'], ['Lawrence', 'KS', 95, '66044 66046 66049', '785'],
  ['Louisville', 'KY', 620, '40202 40205 40207 40222', '502'], ['Lexington', 'KY', 320, '40502 40503 40508', '859'],
  ['New Orleans', 'LA', 385, '70112 70115 70118 70130', '504'], ['Baton Rouge', 'LA', 225, '70802 70806 70808', '225'],
  ['Shreveport', 'LA', 187, '71101 71104 71106', '318'], ['Portland', 'ME', 68, '04101 04102 04103', '207'],
  ['Baltimore', 'MD', 585, '21201 21202 21218 21224', '410 443'], ['Bethesda', 'MD', 65, '20814 20816 20817', '301 240'],
  ['Annapolis', 'MD', 40, '21401 21403', '410 443'], ['Rockville', 'MD', 68, '20850 20852 20853', '301 240'],
  ['Boston', 'MA', 675, '02108 02116 02118 02130 02215', '617 857'], ['Cambridge', 'MA', 118, '02138 02139 02140', '617 857'],
  ['Worcester', 'MA', 205, '01602 01604 01609', '508 774'], ['Springfield', 'MA', 155, '01103 01104 01108', '413'],
  ['Wellesley', 'MA', 29, '02481 02482', '781 339'], ['Newton', 'MA', 88, '02458 02459 02460', '617 857'],
  ['Detroit', 'MI', 640, '48201 48202 48207 48226', '313'], ['Grand Rapids', 'MI', 198, '49503 49504 49506', '616'],
  ['Ann Arbor', 'MI', 123, '48103 48104 48105', '734'], ['Lansing', 'MI', 112, '48906 48910 48912', '517'],
  ['Troy', 'MI', 87, '48083 48084 48098', '248 947'], ['Minneapolis', 'MN', 430, '55401 55403 55408 55410', '612'],
  ['Saint Paul', 'MN', 310, '55101 55102 55105', '651'], ['Rochester', 'MN', 121, '55901 55902 55904', '507'],
  ['Duluth', 'MN', 87, '55802 55803 55805', '218'], ['Jackson', 'MS', 153, '39201 39202 39206', '601 769'],
  ['Kansas City', 'MO', 510, '64105 64106 64111 64113', '816'], ['St. Louis', 'MO', 300, '63101 63104 63108 63110', '314'],
  ['Springfield', 'MO', 169, '65802 65804 65806', '417'], ['Columbia', 'MO', 126, '65201 65202 65203', '573'],
  ['Billings', 'MT', 117, '59101 59102 59106', '406'], ['Bozeman', 'MT', 53, '59715 59718', '406'],
  ['Omaha', 'NE', 485, '68102 68114 68131 68154', '402 531'], ['Lincoln', 'NE', 290, '68502 68508 68510', '402 531'],
  ['Las Vegas', 'NV', 640, '89101 89109 89117 89135', '702 725'], ['Reno', 'NV', 265, '89501 89502 89509', '775'],
  ['Henderson', 'NV', 320, '89002 89012 89052', '702 725'], ['Manchester', 'NH', 115, '03101 03102 03104', '603'],
  ['Portsmouth', 'NH', 22, '03801', '603'], ['Newark', 'NJ', 310, '07102 07104 07105', '973 862'],
  ['Jersey City', 'NJ', 290, '07302 07304 07306', '201 551'], ['Princeton', 'NJ', 31, '08540 08542', '609 640'],
  ['Hoboken', 'NJ', 58, '07030', '201 551'], ['Morristown', 'NJ', 20, '07960', '973 862'],
  ['Albuquerque', 'NM', 560, '87102 87106 87110 87122', '505'], ['Santa Fe', 'NM', 88, '87501 87505 87507', '505'],
  ['New York', 'NY', 8300, '10001 10011 10016 10021 10024 10028 10065', '212 646 917'],
  ['Brooklyn', 'NY', 2600, '11201 11211 11215 11238', '718 347 929'], ['Buffalo', 'NY', 275, '14201 14209 14216', '716'],
  ['Rochester', 'NY', 210, '14604 14607 14618', '585'], ['Syracuse', 'NY', 145, '13202 13210 13224', '315 680'],
  ['Albany', 'NY', 99, '12203 12206 12208', '518'], ['Scarsdale', 'NY', 18, '10583', '914'],
  ['Yonkers', 'NY', 210, '10701 10704 10710', '914'], ['Ithaca', 'NY', 32, '14850', '607'],
  ['Charlotte', 'NC', 880, '28202 28203 28207 28277', '704 980'], ['Raleigh', 'NC', 470, '27601 27605 27608 27615', '919 984'],
  ['Durham', 'NC', 285, '27701 27705 27707', '919 984'], ['Greensboro', 'NC', 300, '27401 27403 27408', '336'],
  ['Asheville', 'NC', 95, '28801 28803 28804', '828'], ['Chapel Hill', 'NC', 62, '27514 27516 27517', '919 984'],
  ['Fargo', 'ND', 125, '58102 58103 58104', '701'], ['Columbus', 'OH', 905, '43205 43206 43215 43221', '614 380'],
  ['Cleveland', 'OH', 370, '44102 44106 44113 44114', '216'], ['Cincinnati', 'OH', 310, '45202 45206 45208 45220', '513'],
  ['Toledo', 'OH', 270, '43604 43606 43615', '419 567'], ['Akron', 'OH', 190, '44302 44303 44313', '330 234'],
  ['Dayton', 'OH', 137, '45402 45405 45419', '937'], ['Oklahoma City', 'OK', 680, '73102 73106 73116 73120', '405'],
  ['Tulsa', 'OK', 410, '74103 74105 74114', '918'], ['Portland', 'OR', 650, '97201 97205 97209 97214 97232', '503 971'],
  ['Eugene', 'OR', 175, '97401 97403 97405', '541 458'], ['Salem', 'OR', 175, '97301 97302 97304', '503 971'],
  ['Bend', 'OR', 100, '97701 97702 97703', '541 458'],
  ['Philadelphia', 'PA', 1600, '19103 19106 19118 19130 19147', '215 267'], ['Pittsburgh', 'PA', 300, '15213 15217 15222 15232', '412'],
  ['Allentown', 'PA', 125, '18101 18102 18104', '610 484'], ['Harrisburg', 'PA', 50, '17101 17102 17110', '717'],
  ['State College', 'PA', 40, '16801 16803', '814'], ['Erie', 'PA', 95, '16501 16505 16509', '814'],
  ['Providence', 'RI', 190, '02903 02906 02908', '401'], ['Newport', 'RI', 25, '02840', '401'],
  ['Charleston', 'SC', 150, '29401 29403 29407 29412', '843'], ['Columbia', 'SC', 137, '29201 29205 29209', '803'],
  ['Greenville', 'SC', 70, '29601 29605 29607', '864'], ['Hilton Head Island', 'SC', 37, '29926 29928', '843'],
  ['Sioux Falls', 'SD', 190, '57103 57104 57105', '605'], ['Nashville', 'TN', 690, '37203 37205 37206 37215', '615 629'],
  ['Memphis', 'TN', 630, '38103 38104 38117 38120', '901'], ['Knoxville', 'TN', 190, '37902 37916 37919', '865'],
  ['Chattanooga', 'TN', 180, '37402 37403 37405', '423'], ['Franklin', 'TN', 83, '37064 37067 37069', '615 629'],
  ['Houston', 'TX', 2300, '77002 77005 77019 77024 77056 77098', '713 281 832'],
  ['San Antonio', 'TX', 1450, '78205 78209 78212 78230', '210 726'], ['Dallas', 'TX', 1300, '75201 75204 75205 75225 75230', '214 469 972'],
  ['Austin', 'TX', 960, '78701 78703 78704 78731 78746', '512 737'], ['Fort Worth', 'TX', 930, '76102 76107 76109', '817 682'],
  ['El Paso', 'TX', 680, '79901 79902 79912', '915'], ['Arlington', 'TX', 395, '76010 76011 76013', '817 682'],
  ['Plano', 'TX', 285, '75023 75024 75093', '469 972'], ['Lubbock', 'TX', 260, '79401 79410 79424', '806'],
  ['Corpus Christi', 'TX', 317, '78401 78404 78411', '361'], ['The Woodlands', 'TX', 115, '77380 77381 77382', '281 832'],
  ['Frisco', 'TX', 200, '75033 75034 75035', '469 972'], ['Irving', 'TX', 255, '75038 75039 75062', '972 469'],
  ['Waco', 'TX', 140, '76701 76706 76710', '254'], ['Midland', 'TX', 132, '79701 79705 79707', '432'],
  ['Salt Lake City', 'UT', 200, '84101 84102 84105 84108', '801 385'], ['Provo', 'UT', 115, '84601 84604 84606', '801 385'],
  ['Park City', 'UT', 8, '84060 84098', '435'], ['Burlington', 'VT', 45, '05401 05403 05408', '802'],
  ['Virginia Beach', 'VA', 455, '23451 23452 23454 23456', '757'], ['Richmond', 'VA', 225, '23219 23220 23221 23226', '804'],
  ['Arlington', 'VA', 235, '22201 22203 22207', '703 571'], ['Alexandria', 'VA', 155, '22301 22304 22314', '703 571'],
  ['Norfolk', 'VA', 240, '23502 23503 23507 23510', '757'], ['McLean', 'VA', 50, '22101 22102', '703 571'],
  ['Charlottesville', 'VA', 46, '22901 22902 22903', '434'],
  ['Seattle', 'WA', 740, '98101 98103 98105 98109 98112 98122', '206'], ['Spokane', 'WA', 225, '99201 99203 99205', '509'],
  ['Tacoma', 'WA', 220, '98402 98403 98405 98406', '253'], ['Bellevue', 'WA', 150, '98004 98006 98008', '425'],
  ['Redmond', 'WA', 75, '98052 98053', '425'], ['Medina', 'WA', 3, '98039', '425'],
  ['Charleston', 'WV', 48, '25301 25302 25304', '304 681'], ['Morgantown', 'WV', 30, '26501 26505', '304 681'],
  ['Milwaukee', 'WI', 570, '53202 53204 53207 53211', '414'], ['Madison', 'WI', 270, '53703 53705 53711 53719', '608'],
  ['Green Bay', 'WI', 107, '54301 54303 54304', '920'], ['Cheyenne', 'WY', 65, '82001 82007 82009', '307'],
  ['Jackson', 'WY', 10, '83001', '307'],
];

/** City, province, population in thousands, forward sortation areas (first half of a postal code), area codes. */
const CA_ROWS: readonly Row[] = [
  ['Toronto', 'ON', 2800, 'M5V M4W M5R M6J M4Y M5S M4E', '416 647 437'], ['Montréal', 'QC', 1760, 'H2X H3A H2T H3H H4A', '514 438'],
  ['Vancouver', 'BC', 660, 'V6B V6E V6K V5L V6H', '604 778 236'], ['Calgary', 'AB', 1300, 'T2P T2R T3A T2E', '403 587 825'],
  ['Edmonton', 'AB', 1000, 'T5J T5K T6E T6G', '780 587 825'], ['Ottawa', 'ON', 1000, 'K1P K1N K2P K1S', '613 343'],
  ['Winnipeg', 'MB', 750, 'R3C R3M R2M', '204 431'], ['Québec', 'QC', 550, 'G1R G1S G1V', '418 581'],
  ['Hamilton', 'ON', 570, 'L8P L8N L9A', '905 289 365'], ['Halifax', 'NS', 440, 'B3H B3J B3L', '902 782'],
  ['Victoria', 'BC', 92, 'V8V V8W V8R', '250 778'], ['Saskatoon', 'SK', 270, 'S7K S7N S7H', '306 639'],
  ['Regina', 'SK', 230, 'S4P S4S S4T', '306 639'], ['Kitchener', 'ON', 260, 'N2G N2H N2M', '519 226 548'],
  ["St. John's", 'NL', 110, 'A1C A1B A1E', '709'], ['Mississauga', 'ON', 720, 'L5B L5M L4Z', '905 289 365'],
  ['Laval', 'QC', 440, 'H7N H7T H7W', '450 579'],
];

/** Letters Canada Post uses in a postal code's local delivery unit (never D, F, I, O, Q or U). */
const LDU_LETTERS = 'ABCEGHJKLMNPRSTVWXYZ';

/** Three deterministic, well-formed postal codes per FSA: `M5V` → `M5V 3L9`, …. */
function postalCodes(fsa: string): string[] {
  const codes: string[] = [];
  for (let i = 0; i < 3; i += 1) {
    const h = mix32((fsa.charCodeAt(0) << 16) ^ (fsa.charCodeAt(1) << 8) ^ fsa.charCodeAt(2) ^ (i << 24));
    const letter = LDU_LETTERS[(h >>> 4) % LDU_LETTERS.length] ?? 'A';
    codes.push(`${fsa} ${(h % 9) + 1}${letter}${(h >>> 20) % 10}`);
  }
  return codes;
}

const toPlace = (country: 'US' | 'CA') => ([city, state, weight, zips, areaCodes]: Row): Place => ({
  city,
  state,
  country,
  weight,
  zips: country === 'US' ? zips.split(' ') : zips.split(' ').flatMap(postalCodes),
  areaCodes: areaCodes.split(' '),
});

export const US_PLACES: readonly Place[] = US_ROWS.map(toPlace('US'));
export const CA_PLACES: readonly Place[] = CA_ROWS.map(toPlace('CA'));

export const STATE_NAMES: Readonly<Record<string, string>> = {
  AL: 'Alabama', AK: 'Alaska', AZ: 'Arizona', AR: 'Arkansas', CA: 'California', CO: 'Colorado', CT: 'Connecticut',
  DE: 'Delaware', DC: 'District of Columbia', FL: 'Florida', GA: 'Georgia', HI: 'Hawaii', ID: 'Idaho', IL: 'Illinois',
  IN: 'Indiana', IA: 'Iowa', KS: 'Kansas', KY: 'Kentucky', LA: 'Louisiana', ME: 'Maine', MD: 'Maryland',
  MA: 'Massachusetts', MI: 'Michigan', MN: 'Minnesota', MS: 'Mississippi', MO: 'Missouri', MT: 'Montana',
  NE: 'Nebraska', NV: 'Nevada', NH: 'New Hampshire', NJ: 'New Jersey', NM: 'New Mexico', NY: 'New York',
  NC: 'North Carolina', ND: 'North Dakota', OH: 'Ohio', OK: 'Oklahoma', OR: 'Oregon', PA: 'Pennsylvania',
  RI: 'Rhode Island', SC: 'South Carolina', SD: 'South Dakota', TN: 'Tennessee', TX: 'Texas', UT: 'Utah',
  VT: 'Vermont', VA: 'Virginia', WA: 'Washington', WV: 'West Virginia', WI: 'Wisconsin', WY: 'Wyoming',
  AB: 'Alberta', BC: 'British Columbia', MB: 'Manitoba', NL: 'Newfoundland and Labrador', NS: 'Nova Scotia',
  ON: 'Ontario', QC: 'Quebec', SK: 'Saskatchewan',
};

/** States whose households lean Democratic or Republican (shifts the party draw a little, nothing more). */
export const STATE_LEAN: Readonly<Record<string, -1 | 1>> = {
  CA: -1, NY: -1, MA: -1, IL: -1, WA: -1, OR: -1, NJ: -1, MD: -1, CT: -1, RI: -1, VT: -1, HI: -1, DC: -1, DE: -1,
  CO: -1, NM: -1, VA: -1, MN: -1, TX: 1, FL: 1, AL: 1, AR: 1, ID: 1, KS: 1, KY: 1, LA: 1, MS: 1, MO: 1, MT: 1,
  NE: 1, ND: 1, OK: 1, SC: 1, SD: 1, TN: 1, UT: 1, WV: 1, WY: 1, IN: 1, IA: 1, OH: 1, AK: 1,
};
