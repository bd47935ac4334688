// What of an error may be logged or kept (core/observe/loggable-errors.ts): no personal data. A database
// error by its code and names, a CRM error by its status, codes and correlation id, any other message
// with its e-mail addresses and phone numbers masked; nothing else an error object carries.
import Database from '../../core/storage/better-sqlite3.ts';
import { describe, expect, it } from 'vitest';
import { HubSpotApiError } from '../../connectors/hubspot/api.ts';
import { hubspotErrorBody } from '../../connectors/hubspot/refusals.ts';
import { loggableError, loggableErrorText, loggableMessage, maskPersonalText } from '../../core/observe/loggable-errors.ts';

const MARKER = 'jane.marker@example.org';

describe('what of an error may be logged', () => {
  it('masks e-mail addresses and phone numbers, and leaves dates, times, host addresses, counts and ids alone', () => {
    expect(maskPersonalText(`Email address ${MARKER} is invalid`)).toBe('Email address [email] is invalid');
    expect(maskPersonalText('Email address jane@example..org is invalid')).toBe('Email address [email] is invalid');
    for (const phone of ['+1 (404) 555-0100', '404-555-0100', '4045550100', '+44 20 7946 0958']) {
      expect(maskPersonalText(`call ${phone} now`), phone).toBe('call [number] now');
    }
    const kept = [
      'waits until 2026-11-28T10:00:00.000Z',
      'on 2026-11-28',
      'connect ECONNREFUSED 127.0.0.1:5432',
      'correlation id 5d1f3a9e-0b7c-4e2a-9f61-2c8d4b7e0a13',
      'no answer within 30000 ms',
      'api-usage=18/15000',
      'record 0035g00000CtA01AAF',
    ];
    for (const text of kept) expect(maskPersonalText(text), text).toBe(text);
  });

  it('a CRM error is logged by its status, category and correlation id: its body, which quotes the values, is left out', () => {
    const said = `Email address ${MARKER} is invalid`;
    const body = hubspotErrorBody(
      JSON.stringify({
        status: 'error',
        message: `Property values were not valid: ${JSON.stringify([{ isValid: false, message: said, error: 'INVALID_EMAIL', name: 'email' }])}`,
        correlationId: '5d1f3a9e-0b7c-4e2a-9f61-2c8d4b7e0a13',
        category: 'VALIDATION_ERROR',
      }),
    );
    const logged = loggableError(new HubSpotApiError('batch update contacts', 400, body));
    expect(JSON.stringify(logged)).not.toContain('jane.marker');
    expect(logged).toMatchObject({ type: 'HubSpotApiError', status: 400, category: 'VALIDATION_ERROR', correlationId: '5d1f3a9e-0b7c-4e2a-9f61-2c8d4b7e0a13' });
    expect(logged.message).toContain('INVALID_EMAIL (email)');
    expect(logged).not.toHaveProperty('body');
  });

  it('a SQLite constraint violation is logged by its code; the values bound to the statement are not', () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE people (email TEXT UNIQUE)');
    db.prepare('INSERT INTO people (email) VALUES (?)').run(MARKER);
    let violation: unknown;
    try {
      db.prepare('INSERT INTO people (email) VALUES (?)').run(MARKER);
    } catch (error) {
      violation = error;
    }
    db.close();
    const logged = loggableError(violation);
    expect(logged).toMatchObject({
      code: 'SQLITE_CONSTRAINT_UNIQUE',
      table: 'people',
      column: 'email',
      message: 'database error SQLITE_CONSTRAINT_UNIQUE (table people, column email)',
    });
    expect(JSON.stringify(logged)).not.toContain('jane.marker');
  });

  it("a command's unexpected error is printed as its stack, without what a database error's detail holds", () => {
    // As pg raises a unique violation: the message names the constraint, the detail quotes the row.
    const violation = Object.assign(new Error('duplicate key value violates unique constraint "people_email_key"'), {
      code: '23505',
      constraint: 'people_email_key',
      table: 'people',
      detail: `Key (email)=(${MARKER}) already exists.`,
    });
    const printed = loggableErrorText(violation);
    expect(printed).toMatch(/^Error: database error 23505 \(constraint people_email_key, table people\)\n\s+at /);
    expect(printed).not.toContain('jane.marker');
  });

  it('a JSON parser error does not quote the text it could not read, and a thrown string is masked', () => {
    let refused: unknown;
    try {
      JSON.parse(`${MARKER} is not JSON`);
    } catch (error) {
      refused = error;
    }
    // Node's message quotes the first characters of the text.
    expect(refused instanceof Error ? refused.message : '').toContain('jane.marke');
    expect(JSON.stringify(loggableError(refused))).not.toContain('jane.marke');
    expect(loggableMessage(`refused ${MARKER}`)).toBe('refused [email]');
  });

  it('keeps the stack frames and a masked cause, and nothing an error object carries beyond the named fields', () => {
    const inner = Object.assign(new Error(`lookup of ${MARKER} failed`), { request: { body: { email: MARKER } }, code: 'ECONNRESET' });
    const logged = loggableError(new Error('the batch failed', { cause: inner }));
    expect(logged.stack).toMatch(/^Error: the batch failed\n\s+at /);
    expect(logged['cause']).toMatchObject({ type: 'Error', message: 'lookup of [email] failed', code: 'ECONNRESET' });
    expect(JSON.stringify(logged)).not.toContain('jane.marker');
  });
});
