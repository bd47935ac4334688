// What logs, CLI lines and the migration marker show of DATABASE_URL and REDIS_URL: where, never a password.
import { describe, expect, it } from 'vitest';
import { redactDatabaseUrl, redactRedisUrl } from '../../core/observe/connection-urls.ts';
import { backendsOf } from '../../server/config.ts';

describe('No silent split brain: connection URLs are named without their passwords', () => {
  it.each([
    ['postgres://postgres@127.0.0.1:5432/enrichbridge', 'postgres://postgres@127.0.0.1:5432/enrichbridge'],
    ['postgres://eb:s3cret@db.internal:5433/eb', 'postgres://eb:***@db.internal:5433/eb'],
    ['postgresql://eb:p%40ss@db/eb?sslmode=require&password=other', 'postgresql://eb:***@db/eb?sslmode=require'],
    // A search_path in `options` stays as written (%20, not "+"); a password parameter goes.
    ['postgres://u@h/db?options=-c%20search_path%3Dt_1&sslpassword=x', 'postgres://u@h/db?options=-c%20search_path%3Dt_1'],
    ['postgres:///eb?host=/var/run/postgresql', 'postgres:///eb?host=/var/run/postgresql'],
  ])('PostgreSQL %s is shown as %s', (url, shown) => {
    expect(redactDatabaseUrl(url)).toBe(shown);
  });

  it.each([
    ['redis://127.0.0.1:6379', 'redis://127.0.0.1:6379'],
    ['redis://:hunter2@cache:6379/0', 'redis://:***@cache:6379/0'],
    ['rediss://default:hunter2@cache:6380?password=again', 'rediss://default:***@cache:6380'],
  ])('Redis %s is shown as %s', (url, shown) => {
    expect(redactRedisUrl(url)).toBe(shown);
  });

  it('never echoes a URL that does not parse', () => {
    expect(redactDatabaseUrl('postgres://u:pw@[bad/db')).not.toContain('pw');
  });

  it('names the SQLite file and in-process limits when neither is configured', () => {
    expect(backendsOf({ dataDir: '/srv/eb/data', databaseUrl: null, redisUrl: null })).toEqual({
      database: 'SQLite /srv/eb/data/enrichbridge.db',
      redis: 'in-process',
    });
    expect(backendsOf({ dataDir: '/srv/eb/data', databaseUrl: 'postgres://eb:pw@db/eb', redisUrl: 'redis://:pw@cache:6379' })).toEqual({
      database: 'PostgreSQL postgres://eb:***@db/eb',
      redis: 'redis://:***@cache:6379',
    });
  });
});
