import type { Change } from '../store/change';
import type { KubeObject } from '../base/object';

/**
 * True for an update whose two versions are different objects: the object was deleted and
 * created again under the same name while the informer did not watch (a relist found a new uid
 * where another was cached). Such an update is a change of everything, so every predicate passes
 * it: one that compared the versions (the same generation 1, the same labels) would drop the new
 * object's first appearance (kube-rs #1830, a predicate cache keyed by name). Updates of objects
 * without a uid are never recreations.
 */
export function isRecreation(change: Change<KubeObject>): boolean {
  if (change.type !== 'update') return false;
  const before = change.oldObject.metadata.uid;
  const after = change.object.metadata.uid;
  return before !== undefined && after !== undefined && before !== after;
}
