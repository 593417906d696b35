import type { SchedulerLike, Subscription } from 'rxjs';
import { longDelays } from '../base/longDelays';

/** Told of each key entering the queue and each key a worker takes (for metrics). */
export interface KeyQueueObserver {
  added(key: string): void;
  taken(key: string, waitedMs: number): void;
}

/**
 * The bookkeeping of {@link reconcile}'s work queue: client-go's `util/workqueue` queue
 * (queue.go) and its delayed adds (delaying_queue.go), for string keys, on an RxJS scheduler.
 *
 * A key is in at most one of three places, which is what makes the queue safe:
 *
 * | where | meaning | a new `add(key)` |
 * |---|---|---|
 * | `ready` (and `dirty`) | waiting for a worker | does nothing: one entry per key however many changes |
 * | `processing` | a worker has it | marks it `dirty`: it is queued again when the worker is `done`, never handed to a second worker |
 * | `processing` and `dirty` | changed while being processed | does nothing |
 *
 * The depth is the `dirty` keys (added, not yet taken), including one changed while being
 * processed, and a key's wait counts from the add that made it dirty: client-go's `depth` and
 * `queue_duration` metrics (metrics.go's `add` and `get`, checked by its `TestMetrics`).
 *
 * `addAfter(key, ms)` keeps one timer per key; a second call keeps whichever fires first
 * (delaying_queue.go's `insert`). A delayed key that is added meanwhile is processed at once and
 * its timer still fires later, adding it again, as in client-go.
 */
export class KeyQueue {
  /** FIFO of keys waiting for a worker, with when each entered it; `head` avoids O(n) shifts. */
  private ready: { readonly key: string; readonly since: number }[] = [];
  private head = 0;
  /** Keys added and not yet taken, with when the add that made each dirty came. */
  private readonly dirty = new Map<string, number>();
  private readonly processing = new Set<string>();
  private readonly delayed = new Map<string, { readonly readyAt: number; readonly timer: Subscription }>();
  /** Delayed adds: a requeue or a retry may ask for longer than one Node timer holds. */
  private readonly timers: SchedulerLike;

  constructor(
    private readonly scheduler: SchedulerLike,
    /** Called after every change of the counts (a key added, taken, done or delayed). */
    private readonly changed: () => void,
    /** Called when a delayed key has been added: a worker may take it. */
    private readonly due: () => void,
    private readonly observer?: KeyQueueObserver,
  ) {
    this.timers = longDelays(scheduler);
  }

  /** Keys waiting for a worker: those queued, and those changed while a worker has them. */
  get depth(): number {
    return this.dirty.size;
  }

  /** Keys a worker holds. */
  get inFlight(): number {
    return this.processing.size;
  }

  /** Keys waiting for a timer (a retry or a requeue). */
  get waiting(): number {
    return this.delayed.size;
  }

  /** True when nothing waits, runs or is scheduled. */
  get idle(): boolean {
    return this.depth === 0 && this.processing.size === 0 && this.delayed.size === 0;
  }

  /** How long the key at the head of the queue has waited for a worker, ms (0 when none waits). */
  longestWait(now: number): number {
    const oldest = this.ready[this.head];
    return oldest === undefined ? 0 : Math.max(0, now - oldest.since);
  }

  /** Marks `key` as needing a reconcile (client-go's `Add`). */
  add(key: string): void {
    if (this.dirty.has(key)) return;
    const now = this.scheduler.now();
    this.dirty.set(key, now);
    if (!this.processing.has(key)) this.push(key, now);
    this.observer?.added(key);
    this.changed();
  }

  /** Adds `key` after `delay` ms, or at once when `delay` <= 0 (client-go's `AddAfter`). */
  addAfter(key: string, delay: number): void {
    if (delay <= 0) return this.add(key);
    const readyAt = this.scheduler.now() + delay;
    const existing = this.delayed.get(key);
    if (existing !== undefined) {
      if (existing.readyAt <= readyAt) return;
      existing.timer.unsubscribe();
    }
    const timer = this.timers.schedule(() => {
      this.delayed.delete(key);
      this.add(key);
      this.due();
    }, delay);
    this.delayed.set(key, { readyAt, timer });
    this.changed();
  }

  /** Hands the next waiting key to a worker (client-go's `Get`), or undefined when none waits. */
  take(): string | undefined {
    if (this.head === this.ready.length) return undefined;
    const { key, since } = this.ready[this.head]!;
    this.head += 1;
    // Compact once the consumed prefix dominates: amortized O(1) per key.
    if (this.head > 1024 && this.head * 2 > this.ready.length) {
      this.ready = this.ready.slice(this.head);
      this.head = 0;
    }
    this.processing.add(key);
    this.dirty.delete(key);
    this.observer?.taken(key, this.scheduler.now() - since);
    this.changed();
    return key;
  }

  /** The worker is finished with `key`: queue it again if it changed meanwhile (client-go's `Done`). */
  done(key: string): void {
    this.processing.delete(key);
    const since = this.dirty.get(key);
    if (since !== undefined) this.push(key, since);
    this.changed();
  }

  /** Drops every waiting key, delayed timer and pending re-queue; keys being processed stay until `done`. */
  clear(): void {
    for (const { timer } of this.delayed.values()) timer.unsubscribe();
    this.delayed.clear();
    this.dirty.clear();
    this.ready = [];
    this.head = 0;
    this.changed();
  }

  private push(key: string, since: number): void {
    this.ready.push({ key, since });
  }
}
