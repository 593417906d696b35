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
  /**
   * Set by an informer over a set of namespaces on every page of the Replace that lists one of
   * them: that Replace replaces the cached objects of `scope.namespace` only (see
   * {@link NamespaceScope}). Absent on a Replace of the whole watched set, which replaces
   * everything.
   */
  readonly scope?: NamespaceScope;
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

/**
 * The namespace a Replace lists, for an informer over a set of namespaces: one watch per
 * namespace (the API server has no selector for a set of them) feeding one cache.
 *
 * A Replace with a scope replaces the cached objects of its namespace only, so a relist of one
 * namespace costs O(objects in that namespace), whatever the size of the cache. The Replaces of
 * different namespaces may interleave page by page with each other and with the watch deltas of
 * other namespaces; a `first` page abandons only its own namespace's unfinished Replace.
 */
export interface NamespaceScope {
  /** The namespace listed: only its objects are replaced. */
  readonly namespace: string;
  /**
   * Why it is listed:
   * - `listed`: a list or relist of a namespace of the set (its first one when it was in the set
   *   from the start);
   * - `added`: the first list of a namespace added to the set later: its adds are marked
   *   `namespaceSet: { type: 'added' }`;
   * - `removed`: the namespace left the set. One page with no items and no resourceVersion: the
   *   namespace's cached objects leave as deletes marked `namespaceSet: { type: 'removed' }`.
   */
  readonly cause: 'listed' | 'added' | 'removed';
  /**
   * How many namespaces of the set have not yet ended their first list once this Replace ends.
   * The cache is synced at the `last` page of a scoped Replace that leaves none (and stays
   * synced when a namespace joins later).
   */
  readonly unsyncedNamespaces: number;
}
