// Unit tests of company-name normalization over the variants CRM records carry: case, accents, `&`,
// punctuation, legal-form suffixes and a leading "the".
import { describe, expect, it } from 'vitest';
import { normalizeCompany } from '../../core/normalize/company.ts';

describe('normalizeCompany', () => {
  it('lowercases and collapses whitespace', () => {
    expect(normalizeCompany('  ACME   Widgets  ')).toBe('acme widgets');
  });

  it('folds accents to ASCII', () => {
    expect(normalizeCompany('Société Générale')).toBe('societe generale');
    expect(normalizeCompany('Nestlé')).toBe('nestle');
  });

  it('spells & as and', () => {
    expect(normalizeCompany('AT&T')).toBe('at and t');
    expect(normalizeCompany('Barnes & Noble')).toBe('barnes and noble');
    expect(normalizeCompany('Barnes & Noble')).toBe(normalizeCompany('Barnes and Noble'));
  });

  it('removes punctuation, apostrophes without splitting the word', () => {
    expect(normalizeCompany("McDonald's")).toBe('mcdonalds');
    expect(normalizeCompany('McDonald’s')).toBe('mcdonalds');
    expect(normalizeCompany('Coca-Cola')).toBe('coca cola');
    expect(normalizeCompany('Yahoo!')).toBe('yahoo');
  });

  it('joins dotted initials into one word', () => {
    expect(normalizeCompany('J.P. Morgan')).toBe('jp morgan');
    expect(normalizeCompany('J.P. Morgan')).toBe(normalizeCompany('JP Morgan'));
  });

  it.each([
    ['The Acme Co., Inc.', 'acme'],
    ['Acme Corporation', 'acme'],
    ['Acme Corp.', 'acme'],
    ['Acme, Inc.', 'acme'],
    ['ACME INCORPORATED', 'acme'],
    ['Acme LLC', 'acme'],
    ['Acme L.L.C.', 'acme'],
    ['Acme L L C', 'acme'],
    ['Acme, Ltd.', 'acme'],
    ['Acme Limited', 'acme'],
    ['Acme Company', 'acme'],
    ['Acme PLC', 'acme'],
    ['Acme L.P.', 'acme'],
    ['Acme LLP', 'acme'],
    ['Acme GmbH', 'acme'],
    ['Acme S.A.', 'acme'],
    ['Acme AG', 'acme'],
    ['Acme Pty Ltd', 'acme'],
  ])('legal suffix: %j gives %j', (raw, expected) => {
    expect(normalizeCompany(raw)).toBe(expected);
  });

  it('keeps & words before a suffix: Smith & Sons LLC', () => {
    expect(normalizeCompany('Smith & Sons LLC')).toBe('smith and sons');
  });

  it('drops the and that joined a dropped suffix: Smith & Co.', () => {
    expect(normalizeCompany('Smith & Co.')).toBe('smith');
    expect(normalizeCompany('Procter & Gamble Co.')).toBe('procter and gamble');
  });

  it('drops suffix words only at the end', () => {
    expect(normalizeCompany('Corporate Company Holdings')).toBe('corporate company holdings');
    expect(normalizeCompany('Inc Magazine')).toBe('inc magazine');
  });

  it('drops a leading the, but not a the inside the name', () => {
    expect(normalizeCompany('The Home Depot')).toBe('home depot');
    expect(normalizeCompany('Theranos')).toBe('theranos');
    expect(normalizeCompany('Bank of the West')).toBe('bank of the west');
  });

  it('a name made only of dropped words keeps its last word', () => {
    expect(normalizeCompany('The Company')).toBe('company');
    expect(normalizeCompany('Inc.')).toBe('inc');
    expect(normalizeCompany('The')).toBe('the');
  });

  it('an empty or punctuation-only name gives the empty string', () => {
    expect(normalizeCompany('')).toBe('');
    expect(normalizeCompany(' ., ')).toBe('');
  });

  it('variants of one company compare equal', () => {
    const variants = ['The Acme Co., Inc.', 'ACME CO', 'Acme Company', 'acme, inc', 'The Acme Corporation'];
    expect(new Set(variants.map(normalizeCompany))).toEqual(new Set(['acme']));
  });
});
