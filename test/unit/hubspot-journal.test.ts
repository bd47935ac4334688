// A Webhooks Journal file read into the webhook events it stands for: contact creations, identity
// changes (either layout of `propertyChanges`), deletions and privacy deletions; other portals, other
// object types, merges and what cannot be read are left out.
import { describe, expect, it } from 'vitest';
import { journalEvents } from '../../connectors/hubspot/journal.ts';

const at = 1_764_000_000_000;
const file = {
  offset: 'f-1',
  publishedAt: '2026-11-27T03:00:00.000Z',
  journalEvents: [
    { type: 'OBJECT', portalId: 62515, objectTypeId: '0-1', objectId: 101, action: 'CREATE', occurredAt: at },
    {
      type: 'OBJECT',
      portalId: '62515',
      objectTypeId: '0-1',
      objectId: '102',
      action: 'UPDATE',
      occurredAt: '2026-11-27T03:00:01.000Z',
      propertyChanges: [{ propertyName: 'email', newValue: 'x@example.com' }],
    },
    {
      type: 'OBJECT',
      portalId: 62515,
      objectTypeId: '0-1',
      objectId: 103,
      action: 'UPDATE',
      occurredAt: at,
      propertyChanges: { firstname: 'Ada', city: 'Paris' },
    },
    { type: 'OBJECT', portalId: 62515, objectTypeId: '0-1', objectId: 104, action: 'DELETE', occurredAt: at },
    { type: 'OBJECT', portalId: 62515, objectTypeId: '0-1', objectId: 105, action: 'GDPR_DELETE', occurredAt: at },
    { type: 'OBJECT', portalId: 62515, objectTypeId: '0-1', objectId: 106, action: 'MERGE', occurredAt: at },
    { type: 'OBJECT', portalId: 99999, objectTypeId: '0-1', objectId: 107, action: 'CREATE', occurredAt: at },
    { type: 'OBJECT', portalId: 62515, objectTypeId: '0-2', objectId: 108, action: 'CREATE', occurredAt: at },
    { portalId: 62515, action: 'CREATE' },
    'not an event',
  ],
};

describe('journalEvents', () => {
  it("reads a portal's contact events as webhook events and leaves out the rest", () => {
    const events = journalEvents(file, '62515', 'f-1');
    expect(events.map((e) => [e.subscriptionType, e.objectId, e.propertyName ?? null])).toEqual([
      ['contact.creation', '101', null],
      ['contact.propertyChange', '102', 'email'],
      ['contact.propertyChange', '103', 'firstname'],
      ['contact.propertyChange', '103', 'city'],
      ['contact.deletion', '104', null],
      ['contact.privacyDeletion', '105', null],
    ]);
    expect(events[1]?.occurredAt).toBe(Date.parse('2026-11-27T03:00:01.000Z'));
    expect(new Set(events.map((e) => e.eventId)).size).toBe(events.length);
    expect(events.every((e) => e.portalId === '62515')).toBe(true);
  });

  it('reads nothing from a file that is not a journal file', () => {
    expect(journalEvents(null, '62515', 'f')).toEqual([]);
    expect(journalEvents({ journalEvents: 'x' }, '62515', 'f')).toEqual([]);
    expect(journalEvents({}, '62515', 'f')).toEqual([]);
  });
});
