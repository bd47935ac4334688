// Given-name equivalence for matching: common US nicknames (and a few Spanish hypocorisms) mapped to
// the formal names they stand for, so `Bob Smith` and `Robert Smith` can be the same person.

/**
 * Formal given name → nicknames that stand for it. A nickname may stand for several formal names
 * (`pat` is Patricia or Patrick, `kate` is Catherine or Katherine): it is listed under each. All
 * entries are in `normalizeName` form (lowercase ASCII letters).
 */
const NICKNAMES_BY_NAME: Readonly<Record<string, readonly string[]>> = {
  beverly: ['bev'],
  danielle: ['dani'],
  allison: ['ally', 'allie'],
  alexis: ['lexi', 'alex'],
  natalie: ['nat'],
  isabella: ['bella', 'izzy'],
  teresa: ['terry', 'tess', 'tessa'],
  kathryn: ['kate', 'katie', 'kathy', 'kat'],
  madison: ['maddie', 'maddy'],
  isaac: ['ike'],
  victor: ['vic'],
  peter: ['pete'],
  abigail: ['abby', 'abbie', 'abbey'],
  albert: ['al', 'bert', 'bertie'],
  alan: ['al'],
  alexander: ['alex', 'al', 'xander', 'sasha', 'lex'],
  alexandra: ['alex', 'sandra', 'sandy', 'sasha', 'lexi', 'alexa'],
  alfred: ['al', 'alf', 'fred', 'freddie'],
  amanda: ['mandy', 'manda'],
  andrew: ['andy', 'drew'],
  angela: ['angie'],
  anthony: ['tony'],
  arthur: ['art', 'artie'],
  barbara: ['barb', 'barbie', 'babs'],
  benjamin: ['ben', 'benny', 'benji'],
  bradley: ['brad'],
  cassandra: ['cassie', 'cass'],
  catherine: ['kate', 'katie', 'katy', 'cathy', 'kathy', 'cat', 'kat', 'kitty', 'cate'],
  charles: ['chuck', 'charlie', 'chas', 'chip'],
  charlotte: ['charlie', 'lottie'],
  christina: ['chris', 'chrissy', 'tina', 'christy'],
  christine: ['chris', 'chrissy', 'tina', 'christy'],
  christopher: ['chris', 'topher', 'kit'],
  clifford: ['cliff'],
  cynthia: ['cindy'],
  daniel: ['dan', 'danny'],
  david: ['dave', 'davey', 'davy'],
  deborah: ['debbie', 'deb', 'debby'],
  debra: ['debbie', 'deb', 'debby'],
  donald: ['don', 'donnie', 'donny'],
  dorothy: ['dot', 'dottie', 'dolly'],
  douglas: ['doug'],
  edward: ['ed', 'eddie', 'eddy', 'ted', 'teddy', 'ned'],
  edwin: ['ed', 'eddie'],
  eleanor: ['ellie', 'nell', 'nellie'],
  elizabeth: ['liz', 'lizzie', 'lizzy', 'beth', 'betty', 'bette', 'betsy', 'eliza', 'libby', 'ellie', 'liza'],
  eugene: ['gene'],
  francis: ['frank', 'frankie', 'fran'],
  frances: ['fran', 'frannie', 'frankie'],
  francisco: ['paco', 'pancho'],
  franklin: ['frank', 'frankie'],
  frederick: ['fred', 'freddie', 'freddy'],
  gabriel: ['gabe'],
  gabriella: ['gabby', 'gabbie'],
  gerald: ['jerry', 'gerry'],
  gregory: ['greg'],
  guadalupe: ['lupe', 'lupita'],
  guillermo: ['memo'],
  harold: ['harry', 'hal'],
  henry: ['hank', 'harry', 'hal'],
  ignacio: ['nacho'],
  jacob: ['jake'],
  jacqueline: ['jackie', 'jacky'],
  james: ['jim', 'jimmy', 'jamie', 'jimbo'],
  jeffrey: ['jeff'],
  jennifer: ['jen', 'jenn', 'jenny', 'jenni'],
  jerome: ['jerry'],
  jessica: ['jess', 'jessie'],
  jesus: ['chuy'],
  john: ['jack', 'johnny', 'jon'],
  jonathan: ['jon', 'jonny'],
  jose: ['pepe', 'chepe'],
  joseph: ['joe', 'joey'],
  josephine: ['josie', 'jo'],
  joshua: ['josh'],
  judith: ['judy'],
  katherine: ['kate', 'katie', 'katy', 'cathy', 'kathy', 'cat', 'kat', 'kitty'],
  kathleen: ['kathy', 'kate', 'katie'],
  kenneth: ['ken', 'kenny'],
  kimberly: ['kim', 'kimmy'],
  lawrence: ['larry', 'lars'],
  leonard: ['leo', 'len', 'lenny'],
  louis: ['lou', 'louie'],
  manuel: ['manny', 'manolo'],
  margaret: ['peggy', 'maggie', 'meg', 'marge', 'margie', 'greta', 'peg'],
  mary: ['molly', 'polly', 'mamie'],
  matthew: ['matt', 'matty'],
  melissa: ['missy', 'mel'],
  michael: ['mike', 'mikey', 'mick', 'mickey'],
  mitchell: ['mitch'],
  nathan: ['nate'],
  nathaniel: ['nate', 'nat'],
  nicholas: ['nick', 'nicky', 'nico'],
  nicole: ['nikki', 'nicky'],
  pamela: ['pam'],
  patricia: ['pat', 'patty', 'patti', 'trish', 'tricia', 'trisha'],
  patrick: ['pat', 'paddy'],
  penelope: ['penny'],
  philip: ['phil'],
  phillip: ['phil'],
  randall: ['randy'],
  raymond: ['ray'],
  rebecca: ['becky', 'becca'],
  richard: ['rick', 'ricky', 'rich', 'richie', 'dick'],
  robert: ['bob', 'bobby', 'bobbie', 'rob', 'robbie', 'robby', 'bert'],
  roberto: ['beto'],
  ronald: ['ron', 'ronnie'],
  russell: ['russ'],
  samantha: ['sam', 'sammy'],
  samuel: ['sam', 'sammy'],
  sandra: ['sandy'],
  sarah: ['sally', 'sadie'],
  stanley: ['stan'],
  stephanie: ['steph', 'stephie'],
  stephen: ['steve', 'stevie'],
  steven: ['steve', 'stevie'],
  susan: ['sue', 'suzy', 'susie', 'suzie'],
  terrence: ['terry'],
  theodore: ['ted', 'teddy', 'theo'],
  theresa: ['terry', 'terri', 'tess', 'tessa'],
  thomas: ['tom', 'tommy'],
  timothy: ['tim', 'timmy'],
  valerie: ['val'],
  victoria: ['vicky', 'vicki', 'tori'],
  vincent: ['vince', 'vinny'],
  virginia: ['ginny', 'ginger'],
  walter: ['walt', 'wally'],
  wesley: ['wes'],
  william: ['bill', 'billy', 'will', 'willie', 'willy', 'liam'],
  zachary: ['zach', 'zack'],
};

/**
 * Name → its keys. A nickname's keys are the formal names it stands for; a formal name that is also
 * someone's nickname (`sandra` for Alexandra) keeps itself among its keys as well.
 */
function buildKeyIndex(): ReadonlyMap<string, readonly string[]> {
  const keys = new Map<string, string[]>();
  const add = (name: string, key: string): void => {
    const list = keys.get(name);
    if (list === undefined) keys.set(name, [key]);
    else if (!list.includes(key)) list.push(key);
  };
  for (const [formal, nicknames] of Object.entries(NICKNAMES_BY_NAME)) {
    for (const nickname of nicknames) add(nickname, formal);
  }
  for (const formal of Object.keys(NICKNAMES_BY_NAME)) {
    if (keys.has(formal)) add(formal, formal);
  }
  const frozen = new Map<string, readonly string[]>();
  for (const [name, list] of keys) frozen.set(name, Object.freeze(list.sort()));
  return frozen;
}

const KEYS_BY_NAME = buildKeyIndex();

/**
 * The formal given names a normalized first name may stand for: `bobby` → `['robert']`, `pat` →
 * `['patricia', 'patrick']`. A formal name, or any name without an entry, is its own only key
 * (`robert` → `['robert']`, `zelda` → `['zelda']`). An empty name has no keys.
 */
export function firstNameKeys(normalizedFirst: string): readonly string[] {
  if (normalizedFirst === '') return [];
  return KEYS_BY_NAME.get(normalizedFirst) ?? [normalizedFirst];
}

/**
 * Whether two normalized first names may be the same person's: their keys intersect. Not
 * transitive: `chris` matches both `christopher` and `christina`, which do not match each other.
 */
export function sameFirstName(a: string, b: string): boolean {
  if (a === '' || b === '') return false;
  if (a === b) return true;
  const keysA = KEYS_BY_NAME.get(a);
  const keysB = KEYS_BY_NAME.get(b);
  if (keysA === undefined) return keysB !== undefined && keysB.includes(a);
  if (keysB === undefined) return keysA.includes(b);
  for (const key of keysA) if (keysB.includes(key)) return true;
  return false;
}

/**
 * The forms of the names asked so far: linkage asks them of every member it compares with a given name
 * it does not already match (1.5 % of a production request at 1M), and members' names repeat.
 */
const FORMS = new Map<string, readonly string[]>();
const FORMS_KEPT = 50_000;

/**
 * Every spelling a normalized first name may appear as: the formal names it stands for and all their
 * nicknames (`charles` → charles, chuck, charlie, …). What a misspelled nickname is compared with.
 */
export function givenNameForms(normalizedFirst: string): readonly string[] {
  const known = FORMS.get(normalizedFirst);
  if (known !== undefined) return known;
  const forms = new Set<string>([normalizedFirst]);
  for (const key of firstNameKeys(normalizedFirst)) {
    forms.add(key);
    for (const nickname of NICKNAMES_BY_NAME[key] ?? []) forms.add(nickname);
  }
  const list = Object.freeze([...forms]);
  if (FORMS.size >= FORMS_KEPT) FORMS.clear();
  FORMS.set(normalizedFirst, list);
  return list;
}
