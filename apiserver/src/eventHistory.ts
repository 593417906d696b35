import type { StoreEvent } from './history';

/**
 * One resource's change history, as two windows over one ring of events:
 *
 * - **etcd's**: every revision back to its last compaction. The loopback server rebuilds the state
 *   at a past resourceVersion (an Exact list, a continue token) by undoing the events after it, so
 *   it keeps them, up to `capacity` events per resource: a memory bound the real etcd does not
 *   have. The compaction point itself is the store's (`ClusterStoreImpl`), as etcd's is global.
 * - **the watch cache's**: the recent events a watch can start from. It keeps at most
 *   `watchCache.capacity` events and, when `watchCache.windowMs` is set, drops the events older
 *   than that as new ones arrive (the API server's cache holds 100 to 102 400 events and keeps
 *   about 75 s of them under churn: `cacher/watch_cache.go`). It starts empty at the current
 *   revision when the API server restarts, and etcd's compaction does not touch it.
 *
 * A watch from a resourceVersion before the watch cache's window gets 410 "too old resource
 * version: X (Y)", where Y is `watchCacheOldestRv` (`getAllEventsSinceLocked`: the cache's list
 * revision while it has dropped nothing since, else its oldest event's revision minus one).
 */

/** How much the watch cache keeps. */
export interface WatchCacheLimits {
  /** Most events per resource; never more than the history's own capacity. */
  readonly capacity: number;
  /** Events older than this leave the cache as new events arrive; undefined: no time bound. */
  readonly windowMs: number | undefined;
  /** The clock the window is measured on (ms). */
  readonly now: () => number;
}

/** A ring of the last `capacity` events of one resource, with the watch cache as a suffix of it. */
export class EventHistory {
  private readonly ring: (StoreEvent | undefined)[];
  /** When each event was recorded, by ring slot; kept only when the cache has a time window. */
  private readonly recordedAt: number[] | undefined;
  private head = 0;
  private size = 0;
  /** Every event with rv > completeAfter is still in the ring. */
  private completeAfter: number;
  /** Offset (0..size) of the watch cache's first event in the ring. */
  private cacheFrom = 0;
  /** The revision the watch cache (re)started at. */
  private cacheStartRv: number;
  /** Whether the watch cache has dropped an event since it (re)started. */
  private cacheDropped = false;
  private lastRv: number;

  constructor(
    private readonly capacity: number,
    private readonly watchCache: WatchCacheLimits,
    /** The revision the watch cache starts at (the store's, for a resource first touched later). */
    cacheStartRv: number,
  ) {
    this.ring = new Array<StoreEvent | undefined>(Math.max(1, capacity));
    this.recordedAt = watchCache.windowMs === undefined ? undefined : new Array<number>(Math.max(1, capacity));
    this.completeAfter = 0;
    this.cacheStartRv = cacheStartRv;
    this.lastRv = cacheStartRv;
  }

  /** The rv after which the ring holds every event: the oldest state it can rebuild. */
  get completeAfterRv(): number {
    return this.completeAfter;
  }

  /** The `(Y)` of "too old resource version: X (Y)": a watch can start from Y or later. */
  get watchCacheOldestRv(): number {
    if (!this.cacheDropped) return this.cacheStartRv;
    return this.cacheFrom < this.size ? this.at(this.cacheFrom).rv - 1 : this.lastRv;
  }

  push(event: StoreEvent): void {
    this.lastRv = event.rv;
    if (this.capacity <= 0) {
      this.completeAfter = event.rv;
      this.cacheDropped = true;
      return;
    }
    if (this.size === this.capacity) {
      this.completeAfter = this.at(0).rv;
      this.head = (this.head + 1) % this.capacity;
      this.size--;
      if (this.cacheFrom > 0) this.cacheFrom--;
      else this.cacheDropped = true;
    }
    const slot = (this.head + this.size) % this.capacity;
    this.ring[slot] = event;
    if (this.recordedAt !== undefined) this.recordedAt[slot] = this.watchCache.now();
    this.size++;
    this.trimWatchCache();
  }

  /** Drops the watch cache's oldest events beyond its capacity and, with a window, its stale ones. */
  private trimWatchCache(): void {
    const excess = this.size - this.cacheFrom - Math.max(0, this.watchCache.capacity);
    if (excess > 0) {
      this.cacheFrom += excess;
      this.cacheDropped = true;
    }
    if (this.recordedAt === undefined) return;
    const oldestKept = this.watchCache.now() - this.watchCache.windowMs!;
    // The event just recorded always stays.
    while (this.cacheFrom < this.size - 1 && this.recordedAt[(this.head + this.cacheFrom) % this.capacity]! < oldestKept) {
      this.cacheFrom++;
      this.cacheDropped = true;
    }
  }

  /** The watch cache starts empty at `rv` (an API server restart); etcd's events stay. */
  resetWatchCache(rv: number): void {
    this.cacheFrom = this.size;
    this.cacheStartRv = rv;
    this.cacheDropped = false;
  }

  /** Forgets everything up to `rv`, etcd's events and the watch cache's alike. */
  forgetAll(rv: number): void {
    this.ring.fill(undefined);
    this.head = 0;
    this.size = 0;
    this.completeAfter = Math.max(this.completeAfter, rv);
    this.resetWatchCache(rv);
  }

  private at(i: number): StoreEvent {
    return this.ring[(this.head + i) % this.capacity]!;
  }

  /** Events after `rv` among ring offsets [from, size), oldest first. */
  private after(rv: number, from: number): StoreEvent[] {
    let low = from;
    let high = this.size;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.at(mid).rv <= rv) low = mid + 1;
      else high = mid;
    }
    const out: StoreEvent[] = [];
    for (let i = low; i < this.size; i++) out.push(this.at(i));
    return out;
  }

  /** Events after `rv`, oldest first, or undefined when the ring no longer reaches back that far. */
  since(rv: number): StoreEvent[] | undefined {
    return rv < this.completeAfter ? undefined : this.after(rv, 0);
  }

  /** The watch cache's events after `rv`, or undefined when `rv` is before its window (410). */
  watchCacheSince(rv: number): StoreEvent[] | undefined {
    return rv < this.watchCacheOldestRv ? undefined : this.after(rv, this.cacheFrom);
  }
}
