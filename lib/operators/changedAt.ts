import type { MonoTypeOperatorFunction } from 'rxjs';
import type { Change } from '../store/change';
import type { KubeObject } from '../base/object';
import { changedWhen } from './changedWhen';

/**
 * Drops updates in which the part of the object that `select` picks did not change, in O(1) per
 * update: the informer shares every unchanged subtree of a new version with the old one
 * (`shareUnchanged`), so an unchanged part is the very same object and the test is
 * `Object.is(select(oldObject), select(object))`, with no deep comparison. Adds and deletes always
 * pass, and so does an object deleted and created again while the informer did not watch (a new
 * uid: kube-rs #1830). controller-runtime's LabelChangedPredicate and friends, for any part.
 *
 * ```
 * changes$:                             --a--u(status only)--u(labels)--u(new uid)--d--|
 * changedAt((o) => o.metadata.labels): --a------------------u(labels)--u(new uid)--d--|
 * ```
 *
 * Guarantees: a change of the selected part is never dropped (identical objects are equal). An
 * update may pass although its part is deep-equal when the two versions were not shared: with
 * `shareUnchanged: false`, below a `transform` that rebuilds the part, or when a handler's queue
 * merged updates in which the part changed and changed back. `select` may return primitives
 * (`(pod) => pod.status?.phase`); it must not throw and should not allocate (a new object each
 * call would make every update pass).
 *
 * ## Example
 * ```ts
 * import { changedAt, type Informer, type Pod } from 'rx-informer';
 *
 * declare const podInformer: Informer<Pod>;
 * podInformer.changes$
 *   .pipe(changedAt((pod) => pod.spec))
 *   .subscribe((change) => console.log('spec changed:', change.key));
 * ```
 *
 * @param select Picks the part to watch from an object (old and new version alike).
 * @returns An operator that passes adds, deletes, recreations and the updates whose selected part changed.
 */
export function changedAt<T extends KubeObject = KubeObject>(select: (object: T) => unknown): MonoTypeOperatorFunction<Change<T>> {
  return changedWhen<T>((oldObject, object) => !Object.is(select(oldObject), select(object)));
}
