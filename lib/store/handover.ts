import type { KubeObject } from '../base/object';
import type { BucketHandover } from '../reflector/delta';
import type { AddChange, Change, DeleteChange, HandoverMark } from './change';

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
