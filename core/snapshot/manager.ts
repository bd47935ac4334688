// Keeps a server answering from the active snapshot: polls the registry, opens a newly activated
// snapshot beside the old one, swaps the matcher in one assignment, and closes the old one later.
import path from 'node:path';
import type { ProductionMatcher } from '../enrich/production-matcher.ts';
import type { SnapshotRecord, Store } from '../storage/port.ts';
import { SnapshotMatcher } from './matcher.ts';
import { SqliteSnapshotReader } from './sqlite-snapshot.ts';

/** How often the registry is read; a load or rollback reaches every server within this. */
export const SNAPSHOT_POLL_MS = 1000;
/** How long a replaced snapshot stays open for requests that started on it. */
export const RETIRE_AFTER_MS = 30_000;

export type SnapshotEvent =
  | { readonly kind: 'activated'; readonly snapshot: SnapshotRecord; readonly previous: string | null }
  | { readonly kind: 'error'; readonly error: unknown };

export class SnapshotManager {
  private current: { id: string; reader: SqliteSnapshotReader } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly retiring = new Set<NodeJS.Timeout>();
  private refreshing: Promise<void> | null = null;
  /** An active snapshot whose file could not be opened; not retried until the registry changes. */
  private unopenable: string | null = null;

  constructor(
    private readonly store: Store,
    private readonly snapshotsDir: string,
    /** Called with the matcher to use from now on; the caller swaps it in. */
    private readonly install: (matcher: ProductionMatcher | null) => void,
    private readonly onEvent: (event: SnapshotEvent) => void = () => undefined,
  ) {}

  get activeId(): string | null {
    return this.current?.id ?? null;
  }

  /** Reads the registry once and switches to the active snapshot if it changed. */
  refresh(): Promise<void> {
    this.refreshing ??= this.refreshOnce().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  private async refreshOnce(): Promise<void> {
    const active = await this.store.activeSnapshot();
    const wanted = active?.id ?? null;
    if (wanted === this.activeId || wanted === this.unopenable) return;
    const previous = this.current;
    if (active === undefined) {
      this.current = null;
      this.install(null);
    } else {
      let reader: SqliteSnapshotReader;
      try {
        // Opened fully before the swap: a request sees the old snapshot or the new one, never neither.
        reader = new SqliteSnapshotReader(path.join(this.snapshotsDir, active.location));
      } catch (error) {
        // Keep answering from what is open (or 503 without one), say so once, and try again only
        // when the registry names another snapshot.
        this.unopenable = active.id;
        this.onEvent({ kind: 'error', error: new Error(`cannot open snapshot ${active.id}`, { cause: error }) });
        return;
      }
      this.unopenable = null;
      this.current = { id: active.id, reader };
      this.install(new SnapshotMatcher(reader, active.version));
      this.onEvent({ kind: 'activated', snapshot: active, previous: previous?.id ?? null });
    }
    if (previous !== null) this.retire(previous.reader);
  }

  private retire(reader: SqliteSnapshotReader): void {
    const timer = setTimeout(() => {
      this.retiring.delete(timer);
      reader.close();
    }, RETIRE_AFTER_MS);
    timer.unref();
    this.retiring.add(timer);
  }

  start(intervalMs: number = SNAPSHOT_POLL_MS): void {
    this.timer = setInterval(() => {
      this.refresh().catch((error: unknown) => this.onEvent({ kind: 'error', error }));
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    for (const timer of this.retiring) clearTimeout(timer);
    this.retiring.clear();
    this.current?.reader.close();
    this.current = null;
  }
}
