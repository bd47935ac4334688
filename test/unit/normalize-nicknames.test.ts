// Unit tests of given-name equivalence: common US nicknames share a key with the formal names they
// stand for, formal names key to themselves, and unrelated names do not match.
import { describe, expect, it } from 'vitest';
import { firstNameKeys, givenNameForms, sameFirstName } from '../../core/normalize/nicknames.ts';

describe('firstNameKeys: nicknames key to their formal names', () => {
  it.each([
    [['bob', 'bobby', 'rob', 'robbie', 'robert'], 'robert'],
    [['bill', 'billy', 'will', 'liam', 'william'], 'william'],
    [['liz', 'lizzie', 'beth', 'betty', 'eliza', 'elizabeth'], 'elizabeth'],
    [['jim', 'jimmy', 'jamie', 'james'], 'james'],
    [['mike', 'michael'], 'michael'],
    [['jen', 'jenny', 'jennifer'], 'jennifer'],
    [['pat', 'patty', 'trish', 'patricia'], 'patricia'],
    [['dan', 'danny', 'daniel'], 'daniel'],
    [['dave', 'david'], 'david'],
    [['tom', 'tommy', 'thomas'], 'thomas'],
    [['tony', 'anthony'], 'anthony'],
    [['joe', 'joey', 'joseph'], 'joseph'],
    [['nick', 'nicholas'], 'nicholas'],
    [['matt', 'matthew'], 'matthew'],
    [['andy', 'drew', 'andrew'], 'andrew'],
    [['ben', 'benjamin'], 'benjamin'],
    [['ed', 'eddie', 'ted', 'edward'], 'edward'],
    [['rick', 'rich', 'dick', 'richard'], 'richard'],
    [['chuck', 'charlie', 'charles'], 'charles'],
    [['peggy', 'maggie', 'margaret'], 'margaret'],
    [['sue', 'suzy', 'susan'], 'susan'],
    [['debbie', 'deb', 'deborah'], 'deborah'],
    [['becky', 'rebecca'], 'rebecca'],
    [['abby', 'abigail'], 'abigail'],
    [['vicky', 'victoria'], 'victoria'],
    [['greg', 'gregory'], 'gregory'],
    [['jeff', 'jeffrey'], 'jeffrey'],
    [['larry', 'lawrence'], 'lawrence'],
    [['tim', 'timothy'], 'timothy'],
    [['ken', 'kenneth'], 'kenneth'],
    [['ron', 'ronald'], 'ronald'],
    [['don', 'donald'], 'donald'],
    [['hank', 'henry'], 'henry'],
    [['jack', 'johnny', 'john'], 'john'],
    [['kim', 'kimberly'], 'kimberly'],
    [['mandy', 'amanda'], 'amanda'],
    [['manny', 'manuel'], 'manuel'],
    [['lupe', 'guadalupe'], 'guadalupe'],
    [['pepe', 'jose'], 'jose'],
    [['paco', 'francisco'], 'francisco'],
  ])('%j all have the key %s', (names, key) => {
    for (const name of names) expect(firstNameKeys(name)).toContain(key);
  });

  it.each([
    ['kate', ['catherine', 'katherine']],
    ['katie', ['catherine', 'katherine']],
    ['cathy', ['catherine', 'katherine']],
    ['kathy', ['catherine', 'katherine']],
    ['cat', ['catherine', 'katherine']],
    ['chris', ['christopher', 'christine', 'christina']],
    ['pat', ['patricia', 'patrick']],
    ['sam', ['samuel', 'samantha']],
    ['alex', ['alexander', 'alexandra']],
    ['steve', ['steven', 'stephen']],
    ['jerry', ['gerald', 'jerome']],
    ['frank', ['francis', 'franklin']],
  ])('ambiguous nickname %s keys to each of %j', (name, keys) => {
    expect(firstNameKeys(name)).toEqual(expect.arrayContaining(keys));
  });

  it('there are at least 80 nicknames with an entry', () => {
    const nicknames = [
      'bob',
      'bobby',
      'rob',
      'robbie',
      'bill',
      'billy',
      'will',
      'liam',
      'liz',
      'beth',
      'betty',
      'eliza',
      'lizzie',
      'kate',
      'katie',
      'cathy',
      'kathy',
      'cat',
      'jim',
      'jimmy',
      'jamie',
      'mike',
      'jen',
      'jenny',
      'chris',
      'pat',
      'patty',
      'trish',
      'dan',
      'danny',
      'dave',
      'tom',
      'tommy',
      'sam',
      'alex',
      'tony',
      'joe',
      'joey',
      'nick',
      'steve',
      'matt',
      'andy',
      'drew',
      'ben',
      'ed',
      'eddie',
      'ted',
      'rick',
      'rich',
      'dick',
      'chuck',
      'charlie',
      'peggy',
      'maggie',
      'sue',
      'suzy',
      'debbie',
      'deb',
      'becky',
      'abby',
      'vicky',
      'greg',
      'jeff',
      'larry',
      'jerry',
      'tim',
      'ken',
      'ron',
      'don',
      'frank',
      'hank',
      'jack',
      'johnny',
      'kim',
      'mandy',
      'manny',
      'lupe',
      'pepe',
      'paco',
      'josh',
      'jake',
      'zach',
      'nate',
      'walt',
    ];
    const withoutEntry = nicknames.filter((name) => firstNameKeys(name).includes(name));
    expect(withoutEntry).toEqual([]);
    expect(nicknames.length).toBeGreaterThanOrEqual(80);
  });
});

describe('firstNameKeys: formal and unknown names', () => {
  it.each(['robert', 'william', 'elizabeth', 'catherine', 'katherine', 'patrick', 'john'])('formal name %s is its own only key', (name) => {
    expect(firstNameKeys(name)).toEqual([name]);
  });

  it.each(['zelda', 'amanda', 'xochitl', 'oluwaseun'])('a name without an entry (%s) keys to itself', (name) => {
    expect(firstNameKeys(name)).toContain(name);
  });

  it('a formal name that is also a nickname keeps itself among its keys', () => {
    expect(firstNameKeys('sandra')).toEqual(expect.arrayContaining(['sandra', 'alexandra']));
  });

  it('an empty name has no keys', () => {
    expect(firstNameKeys('')).toEqual([]);
  });
});

describe('sameFirstName', () => {
  it.each([
    ['bob', 'robert'],
    ['robert', 'bobby'],
    ['bob', 'rob'],
    ['robbie', 'bobby'],
    ['bill', 'liam'],
    ['kate', 'catherine'],
    ['kate', 'katherine'],
    ['cathy', 'katie'],
    ['chris', 'christina'],
    ['chris', 'christopher'],
    ['pat', 'patrick'],
    ['trish', 'pat'],
    ['jack', 'john'],
    ['peggy', 'maggie'],
    ['zelda', 'zelda'],
    ['robert', 'robert'],
  ])('%s and %s may be the same person', (a, b) => {
    expect(sameFirstName(a, b)).toBe(true);
    expect(sameFirstName(b, a)).toBe(true);
  });

  it.each([
    ['robert', 'william'],
    ['bob', 'bill'],
    ['patrick', 'patricia'],
    ['trish', 'patrick'],
    ['christopher', 'christina'],
    ['samuel', 'samantha'],
    ['catherine', 'katherine'],
    ['zelda', 'robert'],
    ['zelda', 'bob'],
    ['zelda', 'amanda'],
    ['', ''],
    ['', 'robert'],
  ])('%j and %j are different names', (a, b) => {
    expect(sameFirstName(a, b)).toBe(false);
    expect(sameFirstName(b, a)).toBe(false);
  });
});

describe('givenNameForms: every spelling a given name may appear as', () => {
  it('gives a name, the formal names it stands for and their nicknames, the same on every ask', () => {
    const first = givenNameForms('chuck');
    expect(first).toEqual(expect.arrayContaining(['chuck', 'charles', 'charlie']));
    expect(givenNameForms('chuck')).toEqual(first);
    expect(givenNameForms('zelda')).toEqual(['zelda']);
  });

  it('hands out forms no caller can change for the next (the lists are kept and shared)', () => {
    const forms = givenNameForms('bob') as string[];
    expect(() => forms.push('someone else')).toThrow(TypeError);
    expect(givenNameForms('bob')).not.toContain('someone else');
  });
});
