import type { AddChange, Change, DeleteChange } from './change';
import type { KubeObject } from './object';

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
 * On an add or a delete that a bucket handover caused: an add of an object in a bucket acquired
 * (`acquired`), a delete of one in a bucket released (`released`). A delete in a bucket still
 * served carries none: the object was deleted while the informer relisted.
 */
export interface HandoverMark {
  readonly type: 'acquired' | 'released';
  /** The object's bucket. */
  readonly bucket: number;
  /** The whole handover this object moved in. */
  readonly handover: BucketHandover;
}

/**
 * The changes of a relist, with the adds and deletes that `handover` explains marked. One hash
 * and one lookup per add or delete; the marks are shared per bucket. Internal: the indexer's.
 */
export function markHandover<T extends KubeObject>(changes: readonly Change<T>[], handover: BucketHandover): Change<T>[] {
  const marks = new Map<number, HandoverMark>();
  for (const bucket of handover.acquired) marks.set(bucket, { type: 'acquired', bucket, handover });
  for (const bucket of handover.released) marks.set(bucket, { type: 'released', bucket, handover });
  return changes.map((change) => {
    if (change.type === 'update') return change;
    const mark = marks.get(handover.bucketOf(change.object));
    if (mark === undefined || mark.type !== (change.type === 'add' ? 'acquired' : 'released')) return change;
    return { ...change, handover: mark } satisfies AddChange<T> | DeleteChange<T>;
  });
}
