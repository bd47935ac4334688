// The enrichment endpoints' hot path without its general-purpose helpers: the Content-Type test that
// replaces type-is, and an answer's JSON written with its shared parts once. Each must say exactly what
// the helper it replaces says.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { answerJson } from '../../core/enrich/answer-json.ts';
import { isJsonType } from '../../server/http/app.ts';

/** type-is, which express's req.is uses (it ships no types). */
const typeis = createRequire(import.meta.url)('type-is') as { is(mediaType: string, types: string[]): string | false };

describe('the Content-Type test of the enrichment endpoints', () => {
  it('says what type-is says of application/json and application/*+json, parameters and case aside', () => {
    const headers = [
      'application/json',
      'application/json; charset=utf-8',
      'Application/JSON;charset=UTF-8',
      '  application/json  ; charset=utf-8',
      'application/vnd.api+json',
      'application/ld+json; profile="x"',
      'application/+json',
      'application/json5',
      'application/jsonx',
      'text/json',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'json',
      '',
    ];
    for (const header of headers) {
      expect({ header, json: isJsonType(header) }).toEqual({ header, json: typeis.is(header, ['application/json', 'application/*+json']) !== false });
    }
    expect(isJsonType(undefined)).toBe(false);
  });
});

describe('an answer as JSON', () => {
  it('is exactly what JSON.stringify writes, frozen shared parts and all, however often it is written', () => {
    const household = Object.freeze({ windfall_id: 'h1', net_worth: 1_500_000, tags: ['a', 'b'], note: null });
    const career = Object.freeze({ linkedin_url: 'linkedin.com/in/x', title: 'Chair "of" the board', started: new Date(0) });
    const answers: object[] = [
      { id: 'r-1', household_matched: true, career_matched: true, household, career },
      { household_matched: true, career_matched: false, household },
      { id: null, household_matched: false, career_matched: false },
      { id: undefined, skipped: () => 1, household_matched: false },
      { error: { code: 'invalid_request', message: 'Bad \u2028 line' } },
      {},
    ];
    for (const answer of answers) {
      expect(answerJson(answer)).toBe(JSON.stringify(answer));
      // A second time comes from the frozen parts' first writing: the same text.
      expect(answerJson(answer)).toBe(JSON.stringify(answer));
    }
  });
});
