// The multi-error query set (`queries-multi.jsonl`, written beside the typo set by `data generate …
// --noise typos`): one corrupted duplicate per person sampled, name and address only, with several
// errors at once, drawn as the Febrl data set generator draws them (Christen, ANU, `dsgen/generate.py`
// of Febrl 0.4, a record-linkage benchmark generator):
//
// - a record gets a number of modifications (Febrl's `max_num_record_modifi`; Febrl fixes it per data
//   set, we draw it per record from MODIFICATIONS_PER_RECORD so that every count is measured), each on a
//   field chosen by Febrl's `select_prob` (FIELDS), at most MAX_PER_FIELD on one field (Febrl's
//   `max_num_field_modifi`, 2 in its data sets 2 and 4);
// - each modification is of a type drawn from that field's Febrl probabilities (`misspell_prob`,
//   `ins_prob`, `del_prob`, `sub_prob`, `trans_prob`, `val_swap_prob`, `wrd_swap_prob`, `spc_ins_prob`,
//   `spc_del_prob`, `miss_prob`), with two changes said where they are: a given name replaced by another
//   (`val_swap`) is drawn far more often than Febrl's 0.02, and a city's value swap takes its postcode
//   with it (another place of the same state: a duplicate written at another town's address pair), so
//   that both are met often enough to be measured.
//
// Each line's `noise` says how many fields were corrupted (`multi:fields=N`) and every modification
// (`multi:<field>:<type>`). queries.jsonl and the single-error typo set (corruption.ts) are unchanged by
// it: it draws from a stream of its own.
import { distance } from 'fastest-levenshtein';
import type { QueryLine } from '../../format.ts';
import { type CleanAddress, cleanAddress, phoneticMisspelling } from './corruption.ts';
import { type AddressBook, ZIPS } from './identifiers.ts';
import { NICKNAMES, femaleFirstNames, maleFirstNames, surnames } from './names.ts';
import type { Rng } from './random.ts';
import type { Subject } from './queries.ts';

export const MULTI_FIELDS = ['given_name', 'surname', 'street_number', 'street', 'city', 'postcode'] as const;
export type MultiField = (typeof MULTI_FIELDS)[number];

export const MODIFICATION_TYPES = ['misspell', 'insert', 'delete', 'substitute', 'transpose', 'value_swap', 'word_swap', 'space_insert', 'space_delete', 'missing'] as const;
export type ModificationType = (typeof MODIFICATION_TYPES)[number];

/**
 * Per field: Febrl's select probability (`select_prob`; its given_name, surname, street_number,
 * address_1, suburb and postcode dictionaries) and its modification probabilities, renormalized where a
 * type cannot apply to our field (no misspellings table for a house number or a postcode).
 */
export const FIELDS: Readonly<Record<MultiField, { readonly select: number; readonly types: Readonly<Partial<Record<ModificationType, number>>> }>> = {
  // Febrl: misspell 0.30, ins 0.05, del 0.15, sub 0.35, trans 0.05, val_swap 0.02, wrd_swap 0.02, spc_ins 0.01,
  // spc_del 0.01, miss 0.02. A value swap (a different given name: a spouse's, a middle name, a mistake)
  // here 0.15, taken from substitution (0.22): the case the real-world benchmark found refused most.
  given_name: {
    select: 0.1,
    types: { misspell: 0.3, insert: 0.05, delete: 0.15, substitute: 0.22, transpose: 0.05, value_swap: 0.15, space_insert: 0.01, missing: 0.07 },
  },
  // Febrl: misspell 0.30, ins 0.10, del 0.10, sub 0.35, trans 0.04, val_swap 0.02, wrd_swap 0.02, spc_ins 0.01,
  // spc_del 0.02, miss 0.02 (a word swap and a space deletion need two words: given to substitution).
  surname: {
    select: 0.15,
    types: { misspell: 0.3, insert: 0.1, delete: 0.1, substitute: 0.39, transpose: 0.04, value_swap: 0.02, space_insert: 0.03, missing: 0.02 },
  },
  // Febrl: ins 0.10, del 0.15, sub 0.60, trans 0.05, val_swap 0.05, wrd_swap 0.01, miss 0.02 (wrd_swap to sub).
  street_number: { select: 0.1, types: { insert: 0.1, delete: 0.15, substitute: 0.61, transpose: 0.05, value_swap: 0.05, missing: 0.04 } },
  // Febrl's address_1: ins 0.10, del 0.15, sub 0.55, trans 0.05, val_swap 0.02, wrd_swap 0.03, spc_ins 0.02,
  // spc_del 0.03, miss 0.04; a misspelling here is the street suffix's (Str, Avnue: corruption.ts's list).
  street: {
    select: 0.1,
    types: { misspell: 0.1, insert: 0.1, delete: 0.15, substitute: 0.45, transpose: 0.05, value_swap: 0.02, word_swap: 0.03, space_insert: 0.02, space_delete: 0.03, missing: 0.05 },
  },
  // Febrl's suburb: misspell 0.40, ins 0.10, del 0.15, sub 0.22, trans 0.04, val_swap 0.01, wrd_swap 0.02, spc_ins
  // 0.02, spc_del 0.02, miss 0.01. The value swap (another place of the state, its postcode with it) here 0.10,
  // from the misspellings (we have no table of city misspellings: those are substitutions and deletions).
  city: {
    select: 0.1,
    types: { misspell: 0.3, insert: 0.1, delete: 0.15, substitute: 0.22, transpose: 0.04, value_swap: 0.1, word_swap: 0.02, space_insert: 0.02, space_delete: 0.02, missing: 0.03 },
  },
  // Febrl: sub 0.35, trans 0.60, val_swap 0.03, miss 0.01 (its ins and del are 0).
  postcode: { select: 0.05, types: { substitute: 0.35, transpose: 0.6, value_swap: 0.03, missing: 0.02 } },
};

/** How many modifications a record gets, and how often (each count measured; Febrl fixes one per data set). */
export const MODIFICATIONS_PER_RECORD: Readonly<Record<number, number>> = { 1: 0.25, 2: 0.35, 3: 0.25, 4: 0.15 };

/** At most this many modifications on one field (Febrl's max_num_field_modifi in its data sets 2 and 4). */
export const MAX_PER_FIELD = 2;

/** Of the multi-error set's lines, the share that are negatives (as the typo set's). */
export const MULTI_NEGATIVE_SHARE = 0.2;

const LETTERS = 'abcdefghijklmnopqrstuvwxyz';
const DIGITS = '0123456789';

function draw<K extends string>(rng: Rng, weights: Readonly<Partial<Record<K, number>>>): K {
  const entries = Object.entries(weights) as [K, number][];
  const total = entries.reduce((sum, [, w]) => sum + w, 0);
  let r = rng.next() * total;
  for (const [key, w] of entries) {
    r -= w;
    if (r < 0) return key;
  }
  const last = entries.at(-1);
  if (last === undefined) throw new Error('nothing to draw from');
  return last[0];
}

/** A character of the same kind (a digit for a digit, a letter for a letter, in its case), never the same one. */
function otherChar(rng: Rng, c: string): string {
  const pool = /\d/.test(c) ? DIGITS : LETTERS;
  for (;;) {
    const out = pool[rng.int(pool.length)] ?? c;
    if (out.toLowerCase() !== c.toLowerCase()) return c === c.toUpperCase() && c !== c.toLowerCase() ? out.toUpperCase() : out;
  }
}

/** One character edit of a kind; `from` is the first position it may touch (1: never a word's first letter). */
function characterEdit(rng: Rng, value: string, kind: 'insert' | 'delete' | 'substitute' | 'transpose', from = 1): string {
  const start = Math.min(from, Math.max(0, value.length - 1));
  const positions = value.length - start;
  if (positions <= 0) return `${value}${LETTERS[rng.int(26)] ?? 'e'}`;
  const i = start + rng.int(positions);
  const c = value[i] ?? '';
  switch (kind) {
    case 'insert':
      return `${value.slice(0, i)}${c === ' ' ? 'e' : otherChar(rng, c)}${value.slice(i)}`;
    case 'delete':
      return value.length > 2 ? `${value.slice(0, i)}${value.slice(i + 1)}` : characterEdit(rng, value, 'substitute', from);
    case 'transpose': {
      const j = Math.min(i, value.length - 2);
      if (j < start || value[j] === value[j + 1]) return characterEdit(rng, value, 'substitute', from);
      return `${value.slice(0, j)}${value[j + 1] ?? ''}${value[j] ?? ''}${value.slice(j + 2)}`;
    }
    case 'substitute':
      return c === ' ' ? characterEdit(rng, value, 'substitute', i + 1) : `${value.slice(0, i)}${otherChar(rng, c)}${value.slice(i + 1)}`;
  }
}

/** A word split in two (a space typed inside it), never at its ends. */
function spaceInsert(rng: Rng, value: string): string {
  if (value.length < 4) return characterEdit(rng, value, 'insert');
  const i = 2 + rng.int(value.length - 3);
  return value[i - 1] === ' ' || value[i] === ' ' ? characterEdit(rng, value, 'insert') : `${value.slice(0, i)} ${value.slice(i)}`;
}

/** Two words run together, or a character edit when there is one word. */
function spaceDelete(rng: Rng, value: string): string {
  const spaces = [...value].flatMap((c, i) => (c === ' ' ? [i] : []));
  if (spaces.length === 0) return characterEdit(rng, value, 'delete');
  const i = rng.pick(spaces);
  return `${value.slice(0, i)}${value.slice(i + 1)}`;
}

function wordSwap(rng: Rng, value: string): string {
  const words = value.split(' ');
  if (words.length < 2) return characterEdit(rng, value, 'transpose');
  const i = rng.int(words.length - 1);
  [words[i], words[i + 1]] = [words[i + 1] ?? '', words[i] ?? ''];
  return words.join(' ');
}

/** The duplicate as it is being corrupted: the request's name and address parts. */
interface Draft {
  /** The household address as the data has it (what a value swap must not come back to). */
  readonly original: Readonly<CleanAddress>;
  first: string | null;
  last: string | null;
  address: CleanAddress;
  /** The street's words as the request writes them (name and suffix), or null when dropped. */
  streetLine: string | null;
}

const SUFFIX_MISSPELLINGS: Readonly<Record<string, readonly string[]>> = {
  Street: ['Str', 'Stret'],
  Avenue: ['Av', 'Avnue'],
  Road: ['Raod'],
  Drive: ['Drv', 'Drvie'],
  Lane: ['Lnae'],
  Court: ['Crt'],
  Boulevard: ['Boulvard'],
  Place: ['Plc'],
  Way: ['Wya'],
};

function streetWords(a: CleanAddress): string {
  return [a.prefix, a.street, a.suffix, a.postfix].filter((w) => w !== '').join(' ');
}

/** One modification of one field; the type applied (it may fall back to a character edit where the drawn one cannot apply). */
function modify(rng: Rng, draft: Draft, field: MultiField, type: ModificationType, subject: Subject): ModificationType {
  const edit = (value: string, kind: ModificationType, from = 1): string => {
    switch (kind) {
      case 'insert':
      case 'delete':
      case 'substitute':
      case 'transpose':
        return characterEdit(rng, value, kind, from);
      case 'space_insert':
        return spaceInsert(rng, value);
      case 'space_delete':
        return spaceDelete(rng, value);
      case 'word_swap':
        return wordSwap(rng, value);
      default:
        return characterEdit(rng, value, 'substitute', from);
    }
  };
  switch (field) {
    case 'given_name': {
      if (draft.first === null) return 'missing';
      if (type === 'missing') draft.first = null;
      else if (type === 'value_swap') {
        const names = rng.chance(0.5) ? femaleFirstNames : maleFirstNames;
        let other = names.draw(rng);
        for (let tries = 0; tries < 20 && (other.toLowerCase() === subject.first.toLowerCase() || distance(other.toLowerCase(), subject.first.toLowerCase()) < 3); tries += 1)
          other = names.draw(rng);
        draft.first = other;
      } else if (type === 'misspell') {
        const nickname = NICKNAMES[draft.first];
        const spelled = phoneticMisspelling(rng, draft.first);
        if (spelled !== null) draft.first = spelled;
        else if (nickname !== undefined && nickname.length > 0) draft.first = rng.pick(nickname);
        else {
          draft.first = edit(draft.first, 'substitute');
          return 'substitute';
        }
      } else draft.first = edit(draft.first, type);
      return type;
    }
    case 'surname': {
      if (draft.last === null) return 'missing';
      if (type === 'missing') draft.last = null;
      else if (type === 'value_swap') {
        let other = surnames.draw(rng);
        while (other.toLowerCase() === subject.last.toLowerCase()) other = surnames.draw(rng);
        draft.last = other;
      } else if (type === 'misspell') {
        const spelled = phoneticMisspelling(rng, draft.last);
        if (spelled === null) {
          draft.last = edit(draft.last, 'substitute');
          return 'substitute';
        }
        draft.last = spelled;
      } else draft.last = edit(draft.last, type);
      return type;
    }
    case 'street_number': {
      const a = draft.address;
      if (a.number === '') return 'missing';
      if (type === 'missing') a.number = '';
      else if (type === 'value_swap') a.number = String((Number.parseInt(a.number, 10) + 1 + rng.int(400)) % 10_000 || 1);
      else {
        let out = edit(a.number, type, 0);
        for (let tries = 0; tries < 10 && (!/^[1-9]\d*$/.test(out) || out === a.number); tries += 1) out = edit(a.number, type === 'delete' && a.number.length < 2 ? 'substitute' : type, 0);
        a.number = /^[1-9]\d*$/.test(out) && out !== a.number ? out : String(Number.parseInt(a.number, 10) + 1);
      }
      return type;
    }
    case 'street': {
      if (draft.streetLine === null) return 'missing';
      const a = draft.address;
      if (type === 'missing') draft.streetLine = null;
      else if (type === 'misspell') {
        const variants = SUFFIX_MISSPELLINGS[a.suffixFull] ?? [];
        if (variants.length === 0 || a.suffix === '') {
          a.street = edit(a.street, 'substitute');
          draft.streetLine = streetWords(a);
          return 'substitute';
        }
        a.suffix = rng.pick(variants);
        draft.streetLine = streetWords(a);
      } else if (type === 'value_swap') {
        // Another street of the same postcode (a neighbour's, an old address's).
        draft.streetLine = draft.streetLine.replace(a.street, `${a.street.slice(0, 1)}${characterEdit(rng, characterEdit(rng, a.street.slice(1), 'substitute', 0), 'substitute', 0)}`);
      } else if (type === 'word_swap' || type === 'space_delete') draft.streetLine = edit(draft.streetLine, type);
      else {
        a.street = edit(a.street, type);
        draft.streetLine = streetWords(a);
      }
      return type;
    }
    case 'city': {
      const a = draft.address;
      if (a.city === '') return 'missing';
      if (type === 'missing') a.city = '';
      else if (type === 'value_swap') {
        // Another place of the state, its postcode with it.
        const places = ZIPS.filter((z) => z.place.state === a.state && z.place.city !== a.city && z.place.city !== draft.original.city);
        const other = places.length > 0 ? rng.pick(places) : undefined;
        if (other === undefined) {
          a.city = edit(a.city, 'substitute');
          return 'substitute';
        }
        a.city = other.place.city;
        a.zip = other.zip;
      } else a.city = edit(a.city, type === 'misspell' ? rng.pick(['substitute', 'delete'] as const) : type);
      return type;
    }
    case 'postcode': {
      const a = draft.address;
      if (a.zip === '') return 'missing';
      if (type === 'missing') a.zip = '';
      else if (type === 'value_swap') {
        let other = a.zip;
        while (other === a.zip || other === draft.original.zip) other = ZIPS[rng.int(ZIPS.length)]?.zip ?? a.zip;
        a.zip = other;
      } else {
        const out = edit(a.zip, type, 0);
        a.zip = out === a.zip ? edit(a.zip, 'substitute', 0) : out;
      }
      return type;
    }
  }
}

/** A duplicate of `s` (a person of the data with a household address) with several errors (see the header). */
export function multiCorruptedDuplicate(rng: Rng, id: string, s: Subject, book: AddressBook): QueryLine {
  const parts = s.addresses[0];
  if (parts === undefined || s.personId === null) throw new Error('a duplicate needs a person of the data with an address');
  const address = cleanAddress(book, parts);
  const draft: Draft = { original: { ...address }, first: s.first, last: s.last, address, streetLine: streetWords(address) };
  const count = Number(draw(rng, Object.fromEntries(Object.entries(MODIFICATIONS_PER_RECORD).map(([k, v]) => [String(k), v]))));
  const perField = new Map<MultiField, number>();
  const applied: string[] = [];
  const select = Object.fromEntries(MULTI_FIELDS.map((f) => [f, FIELDS[f].select])) as Record<MultiField, number>;
  for (let made = 0, tries = 0; made < count && tries < 50; tries += 1) {
    const field = draw(rng, select);
    if ((perField.get(field) ?? 0) >= MAX_PER_FIELD) continue;
    // A value already modified is not then dropped (that would undo the first modification): any other type.
    const types = perField.has(field) ? Object.fromEntries(Object.entries(FIELDS[field].types).filter(([t]) => t !== 'missing')) : FIELDS[field].types;
    const type = modify(rng, draft, field, draw(rng, types as Partial<Record<ModificationType, number>>), s);
    perField.set(field, (perField.get(field) ?? 0) + 1);
    applied.push(`multi:${field}:${type}`);
    made += 1;
    // A missing value takes no second modification.
    if (type === 'missing') perField.set(field, MAX_PER_FIELD);
  }
  const a = draft.address;
  const line = [a.number, draft.streetLine ?? '', a.unit].filter((w) => w !== '').join(' ');
  return {
    request: {
      id,
      first_name: draft.first,
      last_name: draft.last,
      addresses: [{ address: line === '' ? null : line, city: a.city === '' ? null : a.city, state: a.state, zipcode: a.zip === '' ? null : a.zip }],
    },
    expected: { windfall_id: s.windfallId, person_id: s.personId, linkedin_url: s.linkedinUrl },
    noise: [`multi:fields=${perField.size}`, ...applied],
  };
}
