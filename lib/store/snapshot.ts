import type { Change } from './change';
import type { KubeObject } from '../base/object';

/** A query over a snapshot: both parts optional, both must match. */
export interface ListQuery {
  /** Only objects in this namespace (uses the namespace index when present). */
  readonly namespace?: string;
  /** A Kubernetes label selector (`app=web,tier in (a,b),!legacy`). */
  readonly labelSelector?: string;
}

/**
 * An immutable, indexed view of the cache at one resourceVersion. Every read from one snapshot
 * agrees with every other read from it, whatever the informer does meanwhile.
 */
export interface Snapshot<T extends KubeObject = KubeObject> {
  /** The object under a key (`namespace/name`, or `name` when cluster-scoped). */
  get(key: string): T | undefined;
  /** True when the cache holds an object under the key. */
  has(key: string): boolean;
  /** All objects, or those matching the query. O(n) for a full list or a label selector. */
  list(query?: ListQuery): T[];
  /** Every key, in no particular order. */
  keys(): IterableIterator<string>;
  /** Every object, in no particular order. */
  values(): IterableIterator<T>;
  readonly size: number;
  /** Objects whose index `indexName` yields `value`. */
  byIndex(indexName: string, value: string): T[];
  /** Keys of the objects whose index `indexName` yields `value`. */
  indexKeys(indexName: string, value: string): string[];
  /** Every value index `indexName` currently holds (empty postings are removed). */
  indexValues(indexName: string): string[];
  /** The resourceVersion the cache is complete at ('' before the first Replace). */
  readonly resourceVersion: string;
  /** True once the first Replace (the initial list) has been applied. */
  readonly synced: boolean;
  /** The changes that turned the previous snapshot into this one. */
  readonly changes: readonly Change<T>[];
}
