import type { ReconcileEvent } from '../workqueue/workers';

/** A write a reconcile made that the cache had not shown when the next reconcile of its key went ahead. */
export interface UnseenWrite {
  /** The informer that should have shown it (its name: `configmaps@shop`). */
  readonly informer: string;
  /** The written object's key. */
  readonly key: string;
  /** The resourceVersion the server answered with ('' after a delete that answered none). */
  readonly resourceVersion: string;
  /** True when the write deleted the object: the cache still held it. */
  readonly deleted?: true;
}

/**
 * A reconcile went ahead although the cache had not shown every write the reconciles of its key
 * made: it waited `waited` ms, up to `readAfterWriteTimeout` after the last of those writes, and
 * read the cache as it was. A watch that is down or far behind shows as these.
 */
export interface StaleCacheEvent {
  readonly type: 'staleCache';
  readonly key: string;
  readonly waited: number;
  readonly unseen: readonly UnseenWrite[];
}

/**
 * What a controller's `run()` emits: the work queue's events (`reconciled`, `failed`, `queue`: see
 * `reconcile`), and `staleCache` when a reconcile gave up waiting for the cache to show its own
 * writes.
 */
export type ControllerEvent = ReconcileEvent | StaleCacheEvent;

/**
 * One measurement of reads after writes, handed to the `readAfterWriteMetrics` option: how long a
 * reconcile that had to wait for the cache to show earlier writes of its key waited, and whether
 * the cache caught up (`caughtUp`) or the bound ran out first (`gaveUp`, with how many writes it
 * had not shown). A reconcile with nothing to wait for reports nothing.
 */
export type ReadAfterWriteMetricEvent =
  | { readonly type: 'caughtUp'; readonly key: string; readonly waitedSeconds: number }
  | { readonly type: 'gaveUp'; readonly key: string; readonly waitedSeconds: number; readonly unseen: number };
