// The suppression list as stored: entries (keyed hashes of identifiers, or snapshot ids) and an audit
// trail of every change (who, when, what, how many; never a value). Both dialects, plain statements.
import type { Kysely } from 'kysely';
import { timeOrderedIds } from '../storage/time-ordered-ids.ts';
import type { Database } from '../storage/schema.ts';

export const SUPPRESSION_KINDS = ['email', 'phone', 'name_address', 'person', 'household'] as const;
export type SuppressionKind = (typeof SUPPRESSION_KINDS)[number];
export type SuppressionScope = 'person' | 'household';

export interface SuppressionEntry {
  readonly kind: SuppressionKind;
  /** The keyed hash (hex) of an identifier, or a snapshot's person or household id. */
  readonly value: string;
  readonly scope: SuppressionScope;
}

export type AuditAction = 'add' | 'import' | 'remove' | 'resolve';

export interface AuditEntry {
  readonly id: string;
  readonly at: string;
  readonly actor: string;
  readonly action: AuditAction;
  readonly entries: number;
  readonly note: string | null;
}

export interface SuppressionCounts {
  readonly entries: number;
  readonly byKind: Readonly<Record<SuppressionKind, number>>;
  readonly households: number;
}

/** Rows a statement inserts or deletes at most: well under SQLite's 32,766 bound parameters (5 a row). */
const CHUNK = 500;
const nextId = timeOrderedIds();

export class SuppressionStore {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Adds entries (those already present keep their row, widened to the household scope when asked) and
   * writes one audit entry (none with `audit` null: an import's parts, audited once at its end by
   * recordAudit); returns how many were new. One transaction.
   */
  async add(
    entries: readonly SuppressionEntry[],
    audit: { actor: string; action: 'add' | 'import' | 'resolve'; note?: string | null } | null,
  ): Promise<number> {
    const at = new Date().toISOString();
    const id = nextId();
    return this.db.transaction().execute(async (trx) => {
      let added = 0;
      for (let i = 0; i < entries.length; i += CHUNK) {
        const rows = unique(entries.slice(i, i + CHUNK)).map((e) => ({ kind: e.kind, value: e.value, scope: e.scope, added_by: id, created_at: at }));
        if (rows.length === 0) continue;
        const inserted = await trx
          .insertInto('suppressions')
          .values(rows)
          .onConflict((oc) => oc.columns(['kind', 'value']).doNothing())
          .executeTakeFirst();
        added += Number(inserted.numInsertedOrUpdatedRows ?? 0);
        const widened = rows.filter((r) => r.scope === 'household');
        for (const row of widened) {
          await trx.updateTable('suppressions').set({ scope: 'household' }).where('kind', '=', row.kind).where('value', '=', row.value).execute();
        }
      }
      // A load that found nothing new leaves no trace (and no new generation for the instances to read).
      if (audit === null || (added === 0 && audit.action === 'resolve')) return added;
      await trx
        .insertInto('suppression_audit')
        .values({ id, at, actor: audit.actor, action: audit.action, entries: added, note: audit.note ?? null })
        .execute();
      return added;
    });
  }

  /** An audit entry of its own: an import's, once its parts are in. It moves the list's generation. */
  async recordAudit(audit: { actor: string; action: AuditAction; entries: number; note?: string | null }): Promise<void> {
    await this.db
      .insertInto('suppression_audit')
      .values({ id: nextId(), at: new Date().toISOString(), actor: audit.actor, action: audit.action, entries: audit.entries, note: audit.note ?? null })
      .execute();
  }

  /** Removes entries (an operator's correction) and writes one audit entry; returns how many were there. */
  async remove(entries: readonly Pick<SuppressionEntry, 'kind' | 'value'>[], audit: { actor: string; note?: string | null }): Promise<number> {
    const at = new Date().toISOString();
    return this.db.transaction().execute(async (trx) => {
      let removed = 0;
      for (const entry of entries) {
        const result = await trx.deleteFrom('suppressions').where('kind', '=', entry.kind).where('value', '=', entry.value).executeTakeFirst();
        removed += Number(result.numDeletedRows);
      }
      await trx
        .insertInto('suppression_audit')
        .values({ id: nextId(), at, actor: audit.actor, action: 'remove', entries: removed, note: audit.note ?? null })
        .execute();
      return removed;
    });
  }

  /** Which of these entries are on the list (kind and value), with their scope. */
  async find(entries: readonly Pick<SuppressionEntry, 'kind' | 'value'>[]): Promise<SuppressionEntry[]> {
    const found: SuppressionEntry[] = [];
    for (const entry of entries) {
      const row = await this.db
        .selectFrom('suppressions')
        .select(['kind', 'value', 'scope'])
        .where('kind', '=', entry.kind)
        .where('value', '=', entry.value)
        .executeTakeFirst();
      if (row !== undefined) found.push(toEntry(row));
    }
    return found;
  }

  /** Every entry, for an instance's copy in memory (a few megabytes at 100,000 people). */
  async all(): Promise<SuppressionEntry[]> {
    const rows = await this.db.selectFrom('suppressions').select(['kind', 'value', 'scope']).execute();
    return rows.map(toEntry);
  }

  /** The list's generation: the newest audit entry's id, or '' for a list never changed. Cheap to poll. */
  async generation(): Promise<string> {
    const row = await this.db
      .selectFrom('suppression_audit')
      .select((eb) => eb.fn.max('id').as('id'))
      .executeTakeFirst();
    return row?.id ?? '';
  }

  async counts(): Promise<SuppressionCounts> {
    const rows = await this.db
      .selectFrom('suppressions')
      .select(['kind', (eb) => eb.fn.countAll<number | string>().as('n')])
      .groupBy('kind')
      .execute();
    const byKind = Object.fromEntries(SUPPRESSION_KINDS.map((kind) => [kind, 0])) as Record<SuppressionKind, number>;
    let entries = 0;
    for (const row of rows) {
      const kind = SUPPRESSION_KINDS.find((k) => k === row.kind);
      if (kind === undefined) continue;
      byKind[kind] = Number(row.n);
      entries += Number(row.n);
    }
    const households = await this.db
      .selectFrom('suppressions')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('scope', '=', 'household')
      .executeTakeFirst();
    return { entries, byKind, households: Number(households?.n ?? 0) };
  }

  /** The newest audit entries first. */
  async audit(limit = 50): Promise<AuditEntry[]> {
    const rows = await this.db.selectFrom('suppression_audit').selectAll().orderBy('id', 'desc').limit(limit).execute();
    return rows.map((row) => ({
      id: row.id,
      at: row.at,
      actor: row.actor,
      action: toAction(row.action),
      entries: Number(row.entries),
      note: row.note,
    }));
  }
}

function unique(entries: readonly SuppressionEntry[]): SuppressionEntry[] {
  const seen = new Map<string, SuppressionEntry>();
  for (const entry of entries) {
    const key = `${entry.kind}:${entry.value}`;
    const known = seen.get(key);
    if (known === undefined || (known.scope === 'person' && entry.scope === 'household')) seen.set(key, entry);
  }
  return [...seen.values()];
}

function toEntry(row: { kind: string; value: string; scope: string }): SuppressionEntry {
  const kind = SUPPRESSION_KINDS.find((k) => k === row.kind);
  if (kind === undefined) throw new Error(`unknown suppression kind ${row.kind}`);
  return { kind, value: row.value, scope: row.scope === 'household' ? 'household' : 'person' };
}

function toAction(action: string): AuditAction {
  return action === 'add' || action === 'import' || action === 'remove' ? action : 'resolve';
}
