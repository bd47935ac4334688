// What PostgreSQL quotes of a row in an error never reaches a line: the logger's error serializer keeps
// the SQLSTATE and names, and the redaction is a second fence.
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../server/logger.ts';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return { lines, logger: createLogger('info', stream) };
}

describe('log redaction', () => {
  it("keeps a PostgreSQL error's code and leaves out its detail and where, which quote the row's values", () => {
    const { lines, logger } = capture();
    const error = Object.assign(new Error('duplicate key value violates unique constraint "accounts_name"'), {
      code: '23505',
      detail: 'Key (email)=(ann.lee@example.com) already exists.',
      where: 'SQL statement "INSERT … ann.lee@example.com"',
    });
    logger.error({ err: error }, 'save failed');
    logger.error({ err: new Error('wrapped', { cause: error }) }, 'save failed');
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line).not.toContain('ann.lee@example.com');
    const line = JSON.parse(lines[0] ?? '{}') as { err: Record<string, unknown> };
    expect(line.err).toMatchObject({ code: '23505', message: 'database error 23505' });
    expect(line.err).not.toHaveProperty('detail');
    expect(line.err).not.toHaveProperty('where');
  });
});
