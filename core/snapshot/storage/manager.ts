// Keeps a server answering from the active snapshot: reads the registry when told it changed
// (PostgreSQL's NOTIFY) and on a poll besides, opens a newly activated snapshot beside the old one,
// swaps the matcher in one assignment, and closes the old one later.
import type { ProductionMatcher } from '../../enrich/production-matcher.ts';
import type { SnapshotRecord, Store } from '../../storage/port.ts';
import { SnapshotMatcher } from '../matching/matcher.ts';
import type { OpenedSnapshot, SnapshotStorage } from '../port.ts';

/**
 * How often the registry is read besides: a load or rollback reaches every server within this even
 * when no notification comes (SQLite has none; a PostgreSQL listener may be reconnecting).
 */
export const SNAPSHOT_POLL_MS = 1000;
/** How long an active snapshot that could not be opened waits before it is tried again. */
export const RETRY_UNOPENABLE_MS = 30_000;
/** How long a replaced snapshot stays open for requests that started on it. */
export const RETIRE_AFTER_MS = 30_000;

export type SnapshotEvent =
  { readonly kind: 'activated'; readonly snapshot: SnapshotRecord; readonly previous: string | null } | { readonly kind: 'error'; readonly error: unknown };

export class SnapshotManager {
  private current: { id: string; opened: OpenedSnapshot } | null = null;
  private unwatch: (() => void) | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly retiring = new Set<NodeJS.Timeout>();
  private refreshing: Promise<void> | null = null;
  private again = false;
  /**
   * An active snapshot that could not be opened, and when to try it again: a file that is not there
   * stays so, but a database that did not answer may answer a moment later.
   */
  private unopenable: { readonly id: string; readonly retryAt: number } | null = null;

  constructor(
    private readonly store: Store,
    private readonly snapshots: SnapshotStorage,
    /** Called with the matcher to use from now on; the caller swaps it in. */
    private readonly install: (matcher: ProductionMatcher | null) => void,
    private readonly onEvent: (event: SnapshotEvent) => void = () => undefined,
    private readonly retryUnopenableMs: number = RETRY_UNOPENABLE_MS,
  ) {}

  get activeId(): string | null {
    return this.current?.id ?? null;
  }

  /** Reads the registry once and switches to the active snapshot if it changed. */
  refresh(): Promise<void> {
    if (this.refreshing !== null) {
      // The one under way may have read the registry before this change: read it once more after.
      this.again = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      do {
        this.again = false;
        await this.refreshOnce();
      } while (this.again);
    })().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  private async refreshOnce(): Promise<void> {
    const active = await this.store.activeSnapshot();
    const wanted = active?.id ?? null;
    if (wanted === this.activeId) return;
    if (this.unopenable !== null && wanted === this.unopenable.id && Date.now() < this.unopenable.retryAt) return;
    const previous = this.current;
    if (active === undefined) {
      this.current = null;
      this.install(null);
    } else {
      let opened: OpenedSnapshot;
      try {
        // Opened fully before the swap: a request sees the old snapshot or the new one, never neither.
        opened = await this.snapshots.open(active.location);
      } catch (error) {
        // Keep answering from what is open (or 503 without one), say so, and try again when the
        // registry names another snapshot or after retryUnopenableMs.
        this.unopenable = { id: active.id, retryAt: Date.now() + this.retryUnopenableMs };
        this.onEvent({ kind: 'error', error: new Error(`cannot open snapshot ${active.id}`, { cause: error }) });
        return;
      }
      this.unopenable = null;
      this.current = { id: active.id, opened };
      this.install(new SnapshotMatcher(opened, active.version));
      this.onEvent({ kind: 'activated', snapshot: active, previous: previous?.id ?? null });
    }
    if (previous !== null) this.retire(previous.opened);
  }

  private retire(opened: OpenedSnapshot): void {
    const timer = setTimeout(() => {
      this.retiring.delete(timer);
      opened.close();
    }, RETIRE_AFTER_MS);
    timer.unref();
    this.retiring.add(timer);
  }

  /** Follows the registry: on every notification, and every `intervalMs` (null: notifications only, for tests). */
  start(intervalMs: number | null = SNAPSHOT_POLL_MS): void {
    const refresh = () => {
      this.refresh().catch((error: unknown) => this.onEvent({ kind: 'error', error }));
    };
    this.unwatch = this.snapshots.watch(refresh);
    if (intervalMs === null) return;
    this.timer = setInterval(refresh, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    this.unwatch?.();
    this.unwatch = null;
    if (this.timer !== null) clearInterval(this.timer);
    for (const timer of this.retiring) clearTimeout(timer);
    this.retiring.clear();
    this.current?.opened.close();
    this.current = null;
  }
}
