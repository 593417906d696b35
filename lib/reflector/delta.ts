import type { KubeObject } from '../base/object';

/**
 * The delta stream: what the reflector emits and the indexer reduces. It follows client-go's
 * newest DeltaFIFO: one logical Replace per list (or streaming list), then one delta per watch
 * event. The reflector does not know old state; the indexer does, and turns a Replace into
 * deletes, updates and adds.
 */

/**
 * One page of a Replace. A Replace starts with a page whose `first` is true and ends with a page
 * whose `last` is true (one page may be both). Pages let a large list flow into the new store as
 * it arrives, so it is never held twice; the indexer swaps its snapshot atomically at `last`.
 * A Replace that starts while another is unfinished abandons the unfinished one.
 */
export interface ReplaceDelta<T extends KubeObject = KubeObject> {
  readonly type: 'Replace';
  readonly items: readonly T[];
  readonly first: boolean;
  readonly last: boolean;
  /** The list's resourceVersion. Always set on the `last` page; may be '' on earlier pages. */
  readonly resourceVersion: string;
  /**
   * Objects that an earlier page of this Replace may hold and that the server deleted before the
   * Replace ended (a streaming list's DELETED events between its initial ADDEDs and its closing
   * bookmark): the new store leaves them out. Applied before this page's `items`, so an object
   * deleted and created again stays. Absent on the pages of a list.
   */
  readonly deleted?: readonly T[];
  /**
   * Set by a sharded informer on the pages of the Replace that lists a new set of buckets: the
   * buckets acquired, released and served. The indexer reads it on the `last` page and marks the
   * adds and deletes it explains (`handover` on the changes). Absent everywhere else.
   */
  readonly handover?: BucketHandover;
}

/** An object was created, or entered the watched set (a selector now matches it). */
export interface AddedDelta<T extends KubeObject = KubeObject> {
  readonly type: 'Added';
  readonly object: T;
}

/** An object changed. The indexer supplies the old state. */
export interface UpdatedDelta<T extends KubeObject = KubeObject> {
  readonly type: 'Updated';
  readonly object: T;
}

/** An object was deleted, or left the watched set. `object` is its last known state. */
export interface DeletedDelta<T extends KubeObject = KubeObject> {
  readonly type: 'Deleted';
  readonly object: T;
}

/** The server vouches that everything up to `resourceVersion` has been delivered. */
export interface BookmarkDelta {
  readonly type: 'Bookmark';
  readonly resourceVersion: string;
}

/** Everything the reflector emits. */
export type Delta<T extends KubeObject = KubeObject> =
  | ReplaceDelta<T>
  | AddedDelta<T>
  | UpdatedDelta<T>
  | DeletedDelta<T>
  | BookmarkDelta;

/** The `type` of a delta. */
export type DeltaType = Delta['type'];

/**
 * Why a relist moved objects in or out of the cache: a sharded informer started serving another
 * set of buckets. The sharded informer puts it on the `Replace` that lists the new set; the
 * indexer marks that Replace's adds and deletes with it (see {@link HandoverMark}).
 */
export interface BucketHandover {
  /** Buckets served now and not by the cache before this Replace: their objects arrive. Sorted. */
  readonly acquired: readonly number[];
  /** Buckets the cache served before this Replace and no longer does: their objects leave. Sorted. */
  readonly released: readonly number[];
  /** Every bucket served from this Replace on. Sorted. */
  readonly served: readonly number[];
  /** The bucket an object falls in (the ring's hash of its key). */
  readonly bucketOf: (object: KubeObject) => number;
}
