import { filter, type MonoTypeOperatorFunction } from 'rxjs';
import type { Change } from '../store/change';
import type { KubeObject } from '../base/object';
import { isRecreation } from './recreated';

/**
 * Passes the updates your predicate accepts, and every add, delete and recreation: a predicate
 * operator for any rule, on the same terms as the built-in ones (controller-runtime's
 * `predicate.Funcs{UpdateFunc}`, kube-rs's `predicate_filter`).
 *
 * 1. Adds and deletes pass; the predicate is not asked.
 * 2. An update whose uid changed (the object was deleted and created again while the informer
 *    did not watch, so a relist found it) passes: it is a new object, whatever its fields say
 *    (kube-rs #1830).
 * 3. Any other update passes when `changed(oldObject, object)` returns true.
 *
 * ```
 * changes$:                 --a--u(1→1)--u(1→4)--u(new uid)--d--|
 * changedWhen(replicas):    --a----------u(1→4)--u(new uid)--d--|
 * ```
 *
 * A predicate that throws fails the output with that error.
 *
 * ## Example
 * ```ts
 * import { changedWhen, type Deployment, type Informer } from 'rx-informer';
 *
 * declare const deploymentInformer: Informer<Deployment>;
 * const scaled = changedWhen<Deployment>((before, after) => before.spec?.replicas !== after.spec?.replicas);
 * deploymentInformer.changes$.pipe(scaled).subscribe((change) => console.log('scaled:', change.key));
 * ```
 *
 * @param changed decides, for an update of one object, whether it matters.
 * @returns an operator that passes adds, deletes, recreations and the updates `changed` accepts.
 */
export function changedWhen<T extends KubeObject = KubeObject>(changed: (oldObject: T, object: T) => boolean): MonoTypeOperatorFunction<Change<T>> {
  return filter((change: Change<T>) => change.type !== 'update' || isRecreation(change) || changed(change.oldObject, change.object));
}
